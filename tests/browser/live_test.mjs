// Browser test of the live preview (`rigel preview --watch RIG.lua CLIP`, ctest label `browser`):
//   node live_test.mjs --rigel BIN --source DIR --work DIR
// With the page open in headless Chromium:
//   - editing the rig script (the right hand's lift) makes the page show the new bake within 2 s,
//     keeping the frame, the camera and the selected joint;
//   - breaking the script (a misspelt joint) shows the error with the script's line in the page,
//     over the last good result, within 2 s; fixing it brings a new bake;
//   - the server answers only under its token (404 otherwise) and listens on 127.0.0.1.
// Then the re-bake + page update time of a 1,000-frame clip (humanoid template rig) is measured:
// from the script's save to the page showing the new bake.
// Exits 77 (ctest: skipped) when chromium is not installed.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Browser, CHROMIUM } from './cdp.mjs';

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!fs.existsSync(CHROMIUM)) {
  console.log(`SKIP: ${CHROMIUM} not installed (apt-get install chromium)`);
  process.exit(77);
}
const { rigel, source, work } = opts;
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { ++passed; console.log(`ok: ${what}`); } else { ++failed; console.log(`FAIL: ${what}`); }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The rig: the humanoid template with the right hand lifted by LIFT units above its animation.
// `broken` misspells the hand on line 6 (the error must name rig.lua:6).
function rigText(lift, broken = false) {
  return [
    'local rigel = require("rigel")',
    'local humanoid = require("rigs.humanoid")',
    `local LIFT = ${lift}`,
    'return humanoid.rig({ feet = false, twist = false, props = false, hands = { right = {',
    '  target = function(frame, pose)',
    `    return pose:world_position("${broken ? 'RightHnad' : 'RightHand'}") + rigel.vec3(0, LIFT, 0)`,
    '  end } } })',
    '',
  ].join('\n');
}
// Saves through a rename, as editors do.
function save(file, text) {
  fs.writeFileSync(file + '.tmp', text);
  fs.renameSync(file + '.tmp', file);
}

// Starts the watcher; resolves with { child, url } once it prints its address.
function watch(rig, clip) {
  const child = spawn(rigel, ['preview', '--watch', rig, clip], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  child.log = () => log;
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/(http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/)/);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`watcher exited ${code}: ${log}`)));
  });
}

const ready = 'window.rigelLive && window.rigelPreview && window.rigelPreview.ready';
// Waits until `expr` is truthy in the page (reloads allowed); returns the milliseconds taken.
async function until(browser, expr, timeoutMs) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    try { if (await browser.eval(expr)) return Date.now() - start; } catch (e) { /* reloading */ }
    await sleep(20);
  }
  return Infinity;
}

const walk = path.join(source, 'samples/cmu_walk/walk.bvh');
const clip = path.join(work, 'walk.bvh');
fs.copyFileSync(walk, clip);
const rig = path.join(work, 'rig.lua');
save(rig, rigText(2));

const browser = await Browser.launch();
const { child, url } = await watch(rig, clip);
try {
  check(/^http:\/\/127\.0\.0\.1:/.test(url), `serves on 127.0.0.1 only: ${url}`);
  const bad = await fetch(url.replace(/[0-9a-f]{32}/, '0'.repeat(32)));
  check(bad.status === 404, `a wrong token gets 404 (got ${bad.status})`);
  const root = await fetch(url.replace(/\/[0-9a-f]{32}\/$/, '/'));
  check(root.status === 404, `no token gets 404 (got ${root.status})`);

  await browser.open(url, ready);
  const hand = await browser.eval(`window.rigelPreview.jointNames(1).indexOf('RightHand')`);
  check(hand >= 0, 'the result clip has RightHand');
  await browser.eval('window.rigelPreview.setFrame(12)');
  await browser.eval(`window.rigelPreview.selectJoint(1, ${hand})`);
  const camera = { position: [31.5, 22.25, 80.125], target: [1.5, 14.0, 3.25] };
  await browser.eval(`window.rigelPreview.setCamera(${JSON.stringify(camera.position)}, ${JSON.stringify(camera.target)})`);
  const v1 = await browser.eval('window.rigelLive.version');
  const before = await browser.eval(`window.rigelPreview.jointWorldPositions(1, 12)[${hand}]`);

  // 1. Edit: the page shows the new bake within 2 s, where it was.
  save(rig, rigText(6));
  const changed = await until(browser, `${ready} && window.rigelLive.version > ${v1}`, 10000);
  const inPlace = await browser.eval('window.rigelLive.updates.inPlace');
  check(changed < 2000, `the page updates within 2 s of the save (${changed} ms, ${inPlace ? 'in place' : 'reloaded'})`);
  const after = await browser.eval(`window.rigelPreview.jointWorldPositions(1, 12)[${hand}]`);
  check(Math.abs(after[1] - before[1] - 4) < 0.5, `the hand moved up by the new lift (${before[1].toFixed(3)} -> ${after[1].toFixed(3)})`);
  check(await browser.eval('window.rigelPreview.frame()') === 12, 'the frame is kept');
  const sel = await browser.eval('window.rigelPreview.selected()');
  check(sel && sel.clip === 1 && sel.joint === hand, `the selected joint is kept (${JSON.stringify(sel)})`);
  check((await browser.eval('window.rigelPreview.info()')).includes('RightHand'), 'the joint panel shows it');
  const cam = await browser.eval('window.rigelPreview.camera()');
  const camErr = Math.max(...cam.position.map((v, i) => Math.abs(v - camera.position[i])),
                          ...cam.target.map((v, i) => Math.abs(v - camera.target[i])));
  check(camErr < 1e-9, `the camera is kept (${camErr})`);

  // 2. Break the script: the error, with its line, shows over the last good result.
  const v2 = await browser.eval('window.rigelLive.version');
  save(rig, rigText(9, true));
  const shown = await until(browser, `window.rigelLive.error().includes('rig.lua:6:')`, 10000);
  check(shown < 2000, `the script error shows in the page within 2 s (${shown} ms)`);
  const text = await browser.eval('window.rigelLive.error()');
  console.log(`  error shown: ${text.split('\n').slice(0, 2).join(' | ')}`);
  check(text.includes("RightHnad"), 'the error names the misspelt joint');
  check(await browser.eval('window.rigelLive.version') === v2, 'the last good bake stays on the page');
  const kept = await browser.eval(`window.rigelPreview.jointWorldPositions(1, 12)[${hand}]`);
  check(Math.abs(kept[1] - after[1]) < 1e-12, 'the last good result is still drawn');
  const banner = await browser.eval(`getComputedStyle(document.getElementById('live-error')).display`);
  check(banner !== 'none', 'the error banner is visible');

  // 3. Fix it: a new bake, the banner goes.
  save(rig, rigText(3));
  const fixed = await until(browser, `${ready} && window.rigelLive.version > ${v2} && !window.rigelLive.error()`, 10000);
  check(fixed < 2000, `fixed: the page updates within 2 s (${fixed} ms)`);

  // 4. A module beside the rig (required from its folder) is watched too.
  const base = after[1] - 6;  // the hand without lift, at frame 12
  const handY = `window.rigelPreview.jointWorldPositions(1, 12)[${hand}][1]`;
  const mod = path.join(work, 'lift_mod.lua');
  save(mod, 'return 5\n');
  save(rig, rigText('require("lift_mod")'));
  const at5 = await until(browser, `${ready} && Math.abs(${handY} - ${base + 5}) < 0.5`, 10000);
  check(at5 < 10000, `the rig requiring the module bakes (lift 5 shown after ${at5} ms)`);
  save(mod, 'return 8\n');
  const modMs = await until(browser, `${ready} && Math.abs(${handY} - ${base + 8}) < 0.5`, 10000);
  check(modMs < 2000, `editing a required module shows its new lift within 2 s (${modMs} ms)`);
} finally {
  child.kill('SIGTERM');
}

// 4. The re-bake + update time of a 1,000-frame clip (the walk looped).
const long = path.join(work, 'long.bvh');
const maker = path.join(work, 'make_long.lua');
fs.writeFileSync(maker, [
  'local rigel = require("rigel")',
  `local c = rigel.load(arg[1]):clip()`,
  'local long = rigel.clip(c.skeleton, 1000, c.frame_time)',
  'for f = 1, 1000 do long:set_pose(f, c:pose((f - 1) % #c + 1)) end',
  'long:save(arg.out .. "/long.bvh")',
].join('\n'));
execFileSync(rigel, ['run', '--out', work, maker, walk], { stdio: 'inherit' });
const rig2 = path.join(work, 'rig_long.lua');
save(rig2, rigText(2).replace('feet = false, twist = false, props = false', 'feet = true'));
const w2 = await watch(rig2, long);
try {
  await browser.open(w2.url, ready, 120000);
  const times = [];
  for (let k = 0; k < 5; ++k) {
    const v = await browser.eval('window.rigelLive.version');
    save(rig2, rigText(3 + k).replace('feet = false, twist = false, props = false', 'feet = true'));
    const ms = await until(browser, `${ready} && window.rigelLive.version > ${v}`, 30000);
    const s = await (await fetch(w2.url + 'status')).json();
    const inPlace = await browser.eval('window.rigelLive.updates.inPlace');
    const tm = await browser.eval('window.rigelLive.timing') || {};
    console.log(`  1000 frames: save -> page updated ${ms} ms (bake ${s.bake_ms.toFixed(0)} ms, page ${s.page_ms.toFixed(0)} ms; ` +
                `in the page: fetch ${(tm.fetch || 0).toFixed(0)} ms, parse ${(tm.parse || 0).toFixed(0)} ms, update ${(tm.update || 0).toFixed(0)} ms, ` +
                `${((tm.bytes || 0) / 1e6).toFixed(2)} MB; ${inPlace} in place so far)`);
    times.push(ms);
  }
  const frames = await browser.eval('window.rigelPreview.frameCount');
  check(frames === 1000, `the long clip has 1000 frames (${frames})`);
  times.sort((a, b) => a - b);
  console.log(`MEASURE live re-bake + update, 1000 frames, humanoid template (feet, right hand): median ${times[2]} ms (of 5: ${times.join(', ')})`);
  check(times[2] < 5000, `the 1,000-frame update completes (median ${times[2]} ms; target < 1 s)`);
} finally {
  w2.child.kill('SIGTERM');
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
