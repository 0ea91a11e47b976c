// report_browser.js CHROMIUM URL OUTDIR - loads an etlkit report in headless Chromium over the
// DevTools protocol (--remote-debugging-pipe: no port, no WebSocket), with the network off, and checks:
// no console error or exception, no request but the page itself, every section present, the script
// ran (data-js="ok"), hover on the heat strip shows the interval's numbers, a table sorts, the page
// prints to PDF. Screenshots (light and dark, full page) go to OUTDIR. With FLAME_URL (a page of a
// trace with samples): its flame graph section has an SVG with frames, hover names a frame, a click
// on a narrow frame zooms it to the full width and a click on the root zooms out. Exit 0 pass, 1 fail.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [chrome, url, outdir, flameUrl] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'etlkit-chromium-'));
const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-extensions',
  '--disable-default-apps', '--mute-audio', '--hide-scrollbars', `--user-data-dir=${profile}`,
  '--remote-debugging-pipe', 'about:blank'];
const proc = spawn(chrome, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
proc.stderr.on('data', (d) => { stderr += d; });
const toBrowser = proc.stdio[3], fromBrowser = proc.stdio[4];

let nextId = 1;
const pending = new Map();
const errors = [];
const requests = [];
let loaded = null;
let buf = Buffer.alloc(0);
fromBrowser.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  let i;
  while ((i = buf.indexOf(0)) >= 0) {
    const msg = JSON.parse(buf.subarray(0, i).toString('utf8'));
    buf = buf.subarray(i + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error)));
      else resolve(msg.result);
    } else if (msg.method === 'Runtime.exceptionThrown') {
      errors.push('exception: ' + JSON.stringify(msg.params.exceptionDetails).slice(0, 400));
    } else if (msg.method === 'Runtime.consoleAPICalled' && (msg.params.type === 'error' || msg.params.type === 'assert')) {
      errors.push('console.' + msg.params.type + ': ' + JSON.stringify(msg.params.args).slice(0, 400));
    } else if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error') {
      errors.push('log: ' + msg.params.entry.text);
    } else if (msg.method === 'Network.requestWillBeSent') {
      requests.push(msg.params.request.url);
    } else if (msg.method === 'Page.loadEventFired' && loaded) {
      loaded();
    }
  }
});

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const m = { id, method, params };
  if (sessionId) m.sessionId = sessionId;
  toBrowser.write(JSON.stringify(m) + '\0');
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    setTimeout(() => { if (pending.has(id)) { pending.delete(id); reject(new Error('timeout: ' + method)); } }, 30000);
  });
}

async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId: s } = await send('Target.attachToTarget', { targetId, flatten: true });
  const S = (m, p) => send(m, p, s);
  await S('Runtime.enable');
  await S('Log.enable');
  await S('Page.enable');
  await S('Network.enable');
  await S('Network.emulateNetworkConditions', { offline: true, latency: 0, downloadThroughput: 0, uploadThroughput: 0 });
  await S('Emulation.setDeviceMetricsOverride', { width: 1200, height: 900, deviceScaleFactor: 1, mobile: false });
  const load = new Promise((r) => { loaded = r; });
  await S('Page.navigate', { url });
  await load;
  const ev = async (expr) => (await S('Runtime.evaluate', { expression: expr, returnByValue: true })).result.value;
  const fails = [];
  const info = await ev(`JSON.stringify({
    js: document.documentElement.getAttribute('data-js'),
    sections: Array.from(document.querySelectorAll('main > section')).map(e => e.id),
    charts: document.querySelectorAll('svg[role=img]').length,
    untitled: Array.from(document.querySelectorAll('svg[role=img]')).filter(e => !e.querySelector('title') || !e.querySelector('desc')).length,
    data: !!JSON.parse(document.getElementById('etlkit-data').textContent),
    height: document.documentElement.scrollHeight})`);
  const r = JSON.parse(info);
  const want = ['trace', 'utilisation', 'top', 'ready', 'waits', 'locks-pmc', 'wakeups-chain'];
  for (const id of want) if (!r.sections.includes(id)) fails.push('section missing: ' + id);
  if (r.js !== 'ok') fails.push('the inline script did not finish (data-js=' + r.js + ')');
  if (r.untitled) fails.push(r.untitled + ' charts without a title and a text alternative');
  // Hover: the middle of the heat strip shows the interval's numbers.
  const box = await ev(`(function(){var e=document.getElementById('heat');if(!e)return null;e.scrollIntoView();
    var b=e.getBoundingClientRect();return {x:b.left+b.width*0.5,y:b.top+5};})()`);
  if (box) {
    await S('Input.dispatchMouseEvent', { type: 'mouseMoved', x: box.x, y: box.y });
    const tip = await ev(`(function(){var t=document.getElementById('tip');return t.hidden?'':t.textContent;})()`);
    if (!/all CPUs/.test(tip)) fails.push('hover on the heat strip shows no numbers: ' + JSON.stringify(tip));
    await S('Input.dispatchMouseEvent', { type: 'mouseMoved', x: 2, y: 2 });
  }
  // Sorting: a click on a heading of a sortable table orders its rows.
  const sorted = await ev(`(function(){var t=document.querySelector('table.sortable');if(!t)return 'none';
    var b=t.tHead.rows[0].cells[t.tHead.rows[0].cells.length-1].querySelector('button');if(!b)return 'no button';
    b.click();return t.tHead.rows[0].cells[t.tHead.rows[0].cells.length-1].getAttribute('aria-sort');})()`);
  if (sorted !== 'descending' && sorted !== 'none') fails.push('sorting did not happen: ' + sorted);
  await ev('window.scrollTo(0,0)');
  const shot = async (name) => {
    const h = await ev('document.documentElement.scrollHeight');
    const { data } = await S('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
      clip: { x: 0, y: 0, width: 1200, height: Math.min(h, 16000), scale: 1 } });
    fs.writeFileSync(path.join(outdir, name), Buffer.from(data, 'base64'));
  };
  await shot('report-light.png');
  { // the first screen (the README's picture): the trace and the utilisation charts
    const { data } = await S('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
      clip: { x: 0, y: await ev(`document.getElementById('utilisation').getBoundingClientRect().top+scrollY-10`),
              width: 1200, height: 760, scale: 1 } });
    fs.writeFileSync(path.join(outdir, 'report-top.png'), Buffer.from(data, 'base64'));
  }
  if (process.env.ETLKIT_SHOT_SECTIONS) { // one picture a section, for people checking the layout
    for (const id of want) {
      const b = await ev(`(function(){var r=document.getElementById('${id}').getBoundingClientRect();
        return {y:r.top+scrollY,h:r.height};})()`);
      const { data } = await S('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
        clip: { x: 0, y: b.y, width: 1200, height: Math.min(b.h, 2400), scale: 1 } });
      fs.writeFileSync(path.join(outdir, 'section-' + id + '.png'), Buffer.from(data, 'base64'));
    }
  }
  await S('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'dark' }] });
  const bg = await ev('getComputedStyle(document.body).backgroundColor');
  if (bg === 'rgb(255, 255, 255)') fails.push('dark mode did not change the background');
  await shot('report-dark.png');
  await S('Emulation.setEmulatedMedia', { features: [] });
  const pdf = await S('Page.printToPDF', { printBackground: true });
  fs.writeFileSync(path.join(outdir, 'report.pdf'), Buffer.from(pdf.data, 'base64'));
  if (flameUrl) await checkFlame(S, ev, fails);
  const other = requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:') && u !== 'about:blank');
  if (other.length) fails.push('network requests: ' + other.join(' '));
  for (const e of errors) fails.push(e);
  console.log(`report_browser: ${r.sections.length} sections, ${r.charts} charts, page ${r.height} px, ` +
              `${requests.length} requests, ${errors.length} console errors`);
  return fails;
}

// The flame graph: rects drawn, a hover names the frame, a click zooms a frame to the full width
// (1000 units), a click on the root ("all") zooms out again.
async function checkFlame(S, ev, fails) {
  const load = new Promise((r) => { loaded = r; });
  await S('Page.navigate', { url: flameUrl });
  await load;
  const r = JSON.parse(await ev(`JSON.stringify({
    sections: Array.from(document.querySelectorAll('main > section')).map(e => e.id),
    rects: document.querySelectorAll('#flame-svg rect').length,
    nav: !!document.querySelector('nav a[href="#flame"]')})`));
  if (!r.sections.includes('flame')) { fails.push('flame: no section'); return; }
  if (!r.nav) fails.push('flame: not in the navigation');
  if (r.rects < 5) fails.push('flame: ' + r.rects + ' frames drawn');
  // A narrow frame below the thread level: its middle, in page coordinates.
  const pick = await ev(`(function(){var s=document.getElementById('flame-svg');s.scrollIntoView();
    var best=null;Array.prototype.forEach.call(s.querySelectorAll('rect'),function(e){var w=+e.getAttribute('width'),
    y=+e.getAttribute('y');if(y>=3*17&&w>8&&w<500&&(!best||w>+best.getAttribute('width')))best=e;});
    if(!best)return null;var b=best.getBoundingClientRect();
    return {i:best.getAttribute('data-i'),x:b.left+b.width/2,y:b.top+b.height/2};})()`);
  if (!pick) { fails.push('flame: no narrow frame to click'); return; }
  await S('Input.dispatchMouseEvent', { type: 'mouseMoved', x: pick.x, y: pick.y });
  const tip = await ev(`(function(){var t=document.getElementById('tip');return t.hidden?'':t.textContent;})()`);
  if (!/samples/.test(tip)) fails.push('flame: hover shows no samples: ' + JSON.stringify(tip));
  for (const type of ['mousePressed', 'mouseReleased'])
    await S('Input.dispatchMouseEvent', { type, x: pick.x, y: pick.y, button: 'left', clickCount: 1 });
  const z = JSON.parse(await ev(`JSON.stringify((function(){var s=document.getElementById('flame-svg'),
    e=s.querySelector('rect[data-i="${pick.i}"]');return {focus:s.getAttribute('data-focus'),
    w:e?+e.getAttribute('width'):0,rects:s.querySelectorAll('rect').length};})())`));
  if (z.focus !== pick.i || z.w < 999) fails.push('flame: a click did not zoom: ' + JSON.stringify(z));
  const root = await ev(`(function(){var e=document.querySelector('#flame-svg rect[data-i="0"]');
    var b=e.getBoundingClientRect();return {x:b.left+5,y:b.top+b.height/2};})()`);
  for (const type of ['mousePressed', 'mouseReleased'])
    await S('Input.dispatchMouseEvent', { type, x: root.x, y: root.y, button: 'left', clickCount: 1 });
  const back = await ev(`document.getElementById('flame-svg').getAttribute('data-focus')`);
  if (back !== '0') fails.push('flame: a click on the root did not zoom out (focus ' + back + ')');
  const { data } = await S('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
    clip: { x: 0, y: await ev(`document.getElementById('flame').getBoundingClientRect().top+scrollY-10`),
            width: 1200, height: 700, scale: 1 } });
  fs.writeFileSync(path.join(outdir, 'report-flame.png'), Buffer.from(data, 'base64'));
}

const killer = setTimeout(() => { console.log('report_browser: FAIL: timed out'); proc.kill('SIGKILL'); process.exit(1); }, 90000);
async function close() {
  const gone = new Promise((r) => proc.once('exit', r));
  send('Browser.close').catch(() => {});
  const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(t);
  try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* a leftover temp dir is no failure */ }
}

main().then(async (fails) => {
  clearTimeout(killer);
  await close();
  if (fails.length) {
    for (const f of fails) console.log('report_browser: FAIL: ' + f);
    process.exit(1);
  }
  console.log('report_browser: ok');
  process.exit(0);
}).catch((e) => {
  console.log('report_browser: FAIL: ' + e.message);
  console.log(stderr.split('\n').filter((l) => !/dbus/.test(l)).slice(-10).join('\n'));
  proc.kill('SIGKILL');
  process.exit(1);
});
