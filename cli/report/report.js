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
  var e0=U.start_ns-U.start_ns%U.interval_ns+b*U.interval_ns,s=Math.max(e0,U.start_ns),en=Math.min(e0+U.interval_ns,D.window.end_ns),len=en-s,n=U.cpus.length,tot=0;
  for(var c=0;c<n;c++)tot+=U.cpus[c][b]||0;
  var h='<b>'+sec(s)+' to '+sec(en)+'</b><br>all CPUs: '+pc(tot,len*n)+' busy';
  if(rh>0){var r=Math.floor(p.y/rh);if(r>=0&&r<rows)h+='<br>CPU '+r+': '+pc(U.cpus[r][b]||0,len)+' busy ('+dur(U.cpus[r][b]||0)+')';}
  h+='<ul>';U.processes.forEach(function(q){var v=q.busy_ns[b]||0;if(v>0)h+='<li>'+esc(q.name)+(q.pid===null?'':' ('+q.pid+')')+': '+dur(v)+' ('+pc(v,len*n)+')</li>';});
  tip.innerHTML=h+'</ul>';place(e);});
 svg.addEventListener('mouseleave',function(){tip.hidden=true;});});}
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
