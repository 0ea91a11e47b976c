(function(){'use strict';
var D=JSON.parse(document.getElementById('etlkit-data').textContent);
var tip=document.getElementById('tip');
function dur(ns){var a=Math.abs(ns);if(a>=1e9)return(ns/1e9).toFixed(3)+' s';if(a>=1e6)return(ns/1e6).toFixed(3)+' ms';if(a>=1e3)return(ns/1e3).toFixed(3)+' \u00b5s';return ns+' ns';}
function sec(ns){return(ns/1e9).toFixed(6)+' s';}
function pc(v,w){return w>0?(100*v/w).toFixed(1)+'%':'-';}
function esc(s){return String(s).replace(/[&<>"']/g,function(c){return'&#'+c.charCodeAt(0)+';';});}
function place(e){var x=e.clientX+14,y=e.clientY+14;tip.hidden=false;if(x+tip.offsetWidth>innerWidth)x=e.clientX-tip.offsetWidth-10;if(y+tip.offsetHeight>innerHeight)y=e.clientY-tip.offsetHeight-10;tip.style.left=Math.max(0,x)+'px';tip.style.top=Math.max(0,y)+'px';}
var U=D.utilisation;
if(U){Array.prototype.forEach.call(document.querySelectorAll('svg[data-util]'),function(svg){
 var x0=+svg.getAttribute('data-x0'),cw=+svg.getAttribute('data-cw'),rh=+(svg.getAttribute('data-rh')||0),rows=+(svg.getAttribute('data-rows')||0);
 svg.addEventListener('mousemove',function(e){
  var pt=svg.createSVGPoint();pt.x=e.clientX;pt.y=e.clientY;var p=pt.matrixTransform(svg.getScreenCTM().inverse());
  var b=Math.floor((p.x-x0)/cw);if(b<0||b>=U.intervals){tip.hidden=true;return;}
  var s=U.start_ns+b*U.interval_ns,en=Math.min(s+U.interval_ns,D.window.end_ns),len=en-s,n=U.cpus.length,tot=0;
  for(var c=0;c<n;c++)tot+=U.cpus[c][b]||0;
  var h='<b>'+sec(s)+' to '+sec(en)+'</b><br>all CPUs: '+pc(tot,len*n)+' busy';
  if(rh>0){var r=Math.floor(p.y/rh);if(r>=0&&r<rows)h+='<br>CPU '+r+': '+pc(U.cpus[r][b]||0,len)+' busy ('+dur(U.cpus[r][b]||0)+')';}
  h+='<ul>';U.processes.forEach(function(q){var v=q.busy_ns[b]||0;if(v>0)h+='<li>'+esc(q.name)+(q.pid===null?'':' ('+q.pid+')')+': '+dur(v)+' ('+pc(v,len*n)+')</li>';});
  tip.innerHTML=h+'</ul>';place(e);});
 svg.addEventListener('mouseleave',function(){tip.hidden=true;});});}
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
Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){
 var ths=t.tHead.rows[0].cells;
 Array.prototype.forEach.call(ths,function(th,i){var b=document.createElement('button');b.type='button';b.textContent=th.textContent;th.textContent='';th.appendChild(b);
  b.addEventListener('click',function(){var asc=th.getAttribute('aria-sort')==='descending';
   Array.prototype.forEach.call(ths,function(x){x.removeAttribute('aria-sort');});
   th.setAttribute('aria-sort',asc?'ascending':'descending');
   var tb=t.tBodies[0],rs=Array.prototype.slice.call(tb.rows);
   rs.sort(function(x,y){var a=x.cells[i],c=y.cells[i],va=a.getAttribute('data-v'),vc=c.getAttribute('data-v'),r=(va!==null&&vc!==null)?(+va)-(+vc):a.textContent.localeCompare(c.textContent);return asc?r:-r;});
   rs.forEach(function(r){tb.appendChild(r);});});});});
document.documentElement.setAttribute('data-js','ok');
})();
