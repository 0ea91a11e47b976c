// flame.js - section 8 of the report page, the flame graph: an SVG icicle of D.flame (report_flame.c), zoom
// on click, tooltips. Inserted inside report.js's function before its last line, only on pages with samples
// (report_html.c), so that it shares D, tip, esc, pc and place.
var F=D.flame,fs=document.getElementById('flame-svg');
if(F&&fs){(function(){
 var N=F.nodes,n=N.length,kids=[],dep=[0],W=1000,RH=17,NS=fs.namespaceURI,focus=0,i;
 for(i=0;i<n;i++)kids.push([]);
 for(i=1;i<n;i++){kids[N[i][0]].push(i);dep[i]=dep[N[i][0]]+1;}
 var g=document.createElementNS(NS,'g');fs.appendChild(g);
 function hue(s){var m=s.split('+')[0],h=0;for(var k=0;k<m.length;k++)h=(h*31+m.charCodeAt(k))|0;h=Math.abs(h);return 'hsl('+(8+h%44)+','+(62+(h>>6)%28)+'%,'+(56+(h>>11)%14)+'%)';}
 function col(i){var s=N[i][2];if(s==='other')return'var(--c7)';if(dep[i]===0)return'var(--c7)';if(dep[i]<3)return dep[i]===1?'var(--c0)':'var(--c4)';return hue(s);}
 function box(i,x,w){var r=document.createElementNS(NS,'rect'),y=dep[i]*RH;
  r.setAttribute('x',x.toFixed(2));r.setAttribute('y',y);r.setAttribute('width',Math.max(w-0.6,0.3).toFixed(2));r.setAttribute('height',RH-1);
  r.setAttribute('fill',col(i));r.setAttribute('data-i',i);g.appendChild(r);
  if(w>36){var t=document.createElementNS(NS,'text'),c=Math.floor((w-6)/6.4),s=N[i][2];
   t.setAttribute('x',(x+3).toFixed(2));t.setAttribute('y',y+12);t.setAttribute('data-i',i);
   t.textContent=s.length>c?s.slice(0,Math.max(c-1,1))+'\u2026':s;g.appendChild(t);}
  return y+RH;}
 function draw(){
  while(g.firstChild)g.removeChild(g.firstChild);
  var h=RH,a=focus;
  while(true){h=Math.max(h,box(a,0,W));if(a===0)break;a=N[a][0];}
  (function rec(i,x,w){kids[i].forEach(function(c){var cw=w*N[c][1]/N[i][1];if(cw>=0.4){h=Math.max(h,box(c,x,cw));rec(c,x,cw);}x+=cw;});})(focus,0,W);
  fs.setAttribute('viewBox','0 0 '+W+' '+h);fs.setAttribute('data-focus',focus);}
 function at(e){var t=e.target;return t&&t.getAttribute?t.getAttribute('data-i'):null;}
 fs.addEventListener('mousemove',function(e){var i=at(e);if(i===null){tip.hidden=true;return;}i=+i;
  var path=[],a=i;while(a>0&&path.length<3){path.unshift(N[a][2]);a=N[a][0];}
  tip.innerHTML='<b>'+esc(N[i][2])+'</b><br>'+N[i][1]+' samples, '+pc(N[i][1],F.samples)+' of all'+(focus?', '+pc(N[i][1],N[focus][1])+' of the zoomed frame':'')+(dep[i]>1?'<br><small>'+esc(path.join(' \u203a '))+'</small>':'')+'<br><small>click to '+(i===focus?(i?'zoom out':'reset'):'zoom in')+'</small>';place(e);});
 fs.addEventListener('mouseleave',function(){tip.hidden=true;});
 fs.addEventListener('click',function(e){var i=at(e);if(i===null)return;i=+i;focus=(i===focus&&i)?N[i][0]:i;draw();});
 draw();})();}
