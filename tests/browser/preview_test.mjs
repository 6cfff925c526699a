// Browser test of `rigel preview` pages in headless Chromium (ctest label `browser`).
//   node preview_test.mjs --rigel BIN --source DIR --work DIR [--shared DATA] [--screenshot PNG]
// For a BVH case (a bake of samples/cmu_walk/walk.bvh with generated frames records) and, when
// the shared corpus is there, an FBX case (CMU 01_01 as BVH and as FBX, 2,752 frames):
//   - the page loads with no console error or exception;
//   - the joint world positions the page exposes equal rigel's FK (computed independently by
//     `rigel run fk_dump.lua`) within 1e-6 of the height;
//   - every plot has one point per frame; clicking a plot moves the frame there;
//   - clicking a joint shows its name;
//   - a screenshot is not blank and has skeleton pixels around the centre of the view.
// Then `rigel bake --preview DIR` writes a page per clip and an index that links them.
// Exits 77 (ctest: skipped) when chromium is not installed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Browser, CHROMIUM, decodePng } from './cdp.mjs';

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!fs.existsSync(CHROMIUM)) {
  console.log(`SKIP: ${CHROMIUM} not installed (apt-get install chromium)`);
  process.exit(77);
}
const rigel = opts.rigel;
const src = opts.source;
const work = opts.work;
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const here = path.dirname(new URL(import.meta.url).pathname);

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { ++passed; console.log(`ok: ${what}`); } else { ++failed; console.log(`FAIL: ${what}`); }
}
function run(args) {
  return execFileSync(rigel, args, { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
}
function fk(file, frames) {
  return JSON.parse(run(['run', path.join(here, 'fk_dump.lua'), file, ...frames.map(String)]));
}
function heightOf(positions) {
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const p of positions) for (let a = 0; a < 3; ++a) { lo[a] = Math.min(lo[a], p[a]); hi[a] = Math.max(hi[a], p[a]); }
  return Math.max(...hi.map((h, a) => h - lo[a]));
}

// Synthetic frames records for `file` (schema in docs/preview.md): effector targets near the FK
// positions, some unreachable / not converged frames, limits, and the other series.
function writeRecords(file, out, effectorJoints) {
  const all = fk(file, [...Array(fk(file, []).frames).keys()]);
  const names = all.names;
  const lines = [JSON.stringify({ rigel_frames_report: 1, clip: path.basename(file), source: 'src',
                                  output: file, unit: 'unknown', frame_time: 1 / 24, frames: all.frames,
                                  effectors: effectorJoints.map((j) => ({ name: `${j}_fx`, joint: j })) })];
  const marked = { unreachable: [], limits: [] };
  for (let f = 0; f < all.frames; ++f) {
    const status = f % 13 === 5 ? 'unreachable' : f % 7 === 3 ? 'not_converged' : 'converged';
    if (status === 'unreachable') marked.unreachable.push(f);
    const limits = f % 11 === 2 ? ['LeftLeg.Xrotation'] : [];
    if (limits.length) marked.limits.push(f);
    const effectors = effectorJoints.map((j, k) => {
      const p = all.positions[String(f)][names.indexOf(j)];
      const d = 0.5 * Math.sin(f * 0.3 + k);
      return { name: `${j}_fx`, position_error: Math.abs(d), angle_error: 0.01 * k,
               target: [p[0] + d, p[1], p[2]] };
    });
    const record = { frame: f, status, iterations: 1 + (f % 5), effectors, limits,
                     swivel_jump: f === 20 ? 120 : 2 * Math.abs(Math.sin(f)), foot_slide: 0.1 * (f % 4),
                     pop: f === 30 ? 1.5 : 0.2 };
    if (f === 9) delete record.pop;  // absent fields are allowed
    lines.push(JSON.stringify(record));
  }
  fs.writeFileSync(out, lines.join('\n') + '\n');
  return { frames: all.frames, marked };
}

async function checkPage(browser, page, clipFiles, { records = null, label, screenshot = null }) {
  const url = `file://${path.resolve(page)}`;
  const ms = await browser.open(url, 'window.rigelPreview && window.rigelPreview.ready');
  const loadMs = await browser.eval('window.rigelPreview.loadMs');
  const bytes = fs.statSync(page).size;
  console.log(`${label}: ${(bytes / 1e6).toFixed(2)} MB, ready after ${ms} ms (page's own clock ${loadMs.toFixed(0)} ms)`);
  const frameCount = await browser.eval('rigelPreview.frameCount');
  // FK equality, per clip, at the first, a middle and the last frame.
  for (let ci = 0; ci < clipFiles.length; ++ci) {
    const n = fk(clipFiles[ci], []).frames;
    const frames = [0, Math.floor(n / 2), n - 1];
    const ref = fk(clipFiles[ci], frames);
    const names = await browser.eval(`rigelPreview.jointNames(${ci})`);
    check(JSON.stringify(names) === JSON.stringify(ref.names), `${label}: clip ${ci} joint names match rigel's`);
    const height = heightOf(ref.positions['0']);
    let worst = 0;
    for (const f of frames) {
      const got = await browser.eval(`rigelPreview.jointWorldPositions(${ci}, ${f})`);
      const want = ref.positions[String(f)];
      if (got.length !== want.length) { worst = Infinity; break; }
      for (let j = 0; j < want.length; ++j) for (let a = 0; a < 3; ++a) worst = Math.max(worst, Math.abs(got[j][a] - want[j][a]));
    }
    check(worst <= 1e-6 * height,
          `${label}: clip ${ci} (${path.basename(clipFiles[ci])}) joint world positions = rigel FK at frames ${frames} (max difference ${worst}, tolerance ${1e-6 * height})`);
  }
  if (records) {
    const counts = await browser.eval('rigelPreview.plotPointCounts()');
    check(counts.length === 5, `${label}: 5 plots (residual, iterations, foot slide, swivel, pop), got ${counts.length}`);
    check(counts.every((c) => c.points === records.frames && c.series.every((s) => s === records.frames)),
          `${label}: every plot has one point per frame (${records.frames}): ${JSON.stringify(counts.map((c) => c.points))}`);
    for (const fraction of [0.7, 0.25]) {
      const rect = await browser.eval(`(() => { const r = document.querySelectorAll('#plots .u-over')[1].getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`);
      await browser.eval(`document.querySelectorAll('#plots .u-over')[1].scrollIntoView()`);
      const r2 = await browser.eval(`(() => { const r = document.querySelectorAll('#plots .u-over')[1].getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`);
      const x = r2[0] + fraction * r2[2], y = r2[1] + r2[3] / 2;
      await browser.click(x, y);
      const want = Math.round(fraction * (records.frames - 1));
      const got = await browser.eval('rigelPreview.frame()');
      check(Math.abs(got - want) <= 1 && rect[2] > 100,
            `${label}: clicking the iterations plot at ${fraction * 100}% moves to frame ${got} (expected ${want} ± 1)`);
    }
    // Side by side sets the clips apart; overlay puts them back.
    const rootGap = async () => browser.eval(`(() => { const a = rigelPreview.jointScreenPosition(0, 0), b = rigelPreview.jointScreenPosition(1, 0); return Math.hypot(a[0] - b[0], a[1] - b[1]); })()`);
    const overlaid = await rootGap();
    await browser.eval(`document.getElementById('sidebyside').click()`);
    const apart = await rootGap();
    await browser.eval(`document.getElementById('sidebyside').click()`);
    check(apart > overlaid + 50 && Math.abs(await rootGap() - overlaid) < 30,
          `${label}: side by side moves the result's root ${apart.toFixed(0)} px from the source's (overlaid: ${overlaid.toFixed(0)} px)`);
    const status = await browser.eval('rigelPreview.status(0, 5)');
    check(status === 'unreachable', `${label}: frame 5 read as unreachable (${status})`);
  }
  // Click on a joint: the info panel names it.
  await browser.eval('rigelPreview.setFrame(0)');
  const target = await browser.eval(`(() => { const n = rigelPreview.jointNames(0).length; let best = null;
      for (let j = 0; j < n; ++j) { const p = rigelPreview.jointScreenPosition(0, j); if (!best || p[1] < best[1][1]) best = [j, p]; }
      return best; })()`);
  await browser.click(target[1][0], target[1][1]);
  const info = await browser.eval('rigelPreview.info()');
  const near = await browser.eval(`(() => { const out = []; const n = rigelPreview.jointNames(0).length;
      for (let j = 0; j < n; ++j) { const p = rigelPreview.jointScreenPosition(0, j);
        if (Math.hypot(p[0] - ${target[1][0]}, p[1] - ${target[1][1]}) < 8) out.push(rigelPreview.jointNames(0)[j]); }
      return out; })()`);
  check(near.some((name) => info.includes(`: ${name}\n`)), `${label}: clicking joint ${near.join('/')} shows it: ${JSON.stringify(info.split('\n').slice(0, 2))}`);
  await browser.eval('rigelPreview.selectJoint(null)');
  // Screenshot: not blank, skeleton pixels around the centre of the view.
  await browser.eval(`rigelPreview.setFrame(${Math.floor(frameCount / 3)}); window.scrollTo(0, 0); document.getElementById('plots').scrollTop = 0`);
  await new Promise((r) => setTimeout(r, 200));
  const png = await browser.screenshot();
  const image = decodePng(png);
  const view = await browser.eval(`(() => { const r = document.getElementById('view').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`);
  const dpr = image.width / (await browser.eval('window.innerWidth'));
  const hud = await browser.eval(`(() => { const r = document.getElementById('hud').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()`);
  let bright = 0, centre = 0;
  const colours = new Set();
  for (let y = 0; y < image.height; ++y) {
    for (let x = 0; x < image.width; ++x) {
      const k = (y * image.width + x) * image.channels;
      const [r, g, b] = [image.pixels[k], image.pixels[k + 1], image.pixels[k + 2]];
      colours.add((r << 16) | (g << 8) | b);
      const cx = x / dpr - view[0], cy = y / dpr - view[1];
      if (x / dpr >= hud[0] && x / dpr <= hud[2] && y / dpr >= hud[1] && y / dpr <= hud[3]) continue;  // text
      const inCentre = cx > view[2] * 0.3 && cx < view[2] * 0.7 && cy > view[3] * 0.15 && cy < view[3] * 0.85;
      // Lit skeleton colours are brighter than the background (#15171c) and the grid (<= 0x70).
      if (Math.max(r, g, b) >= 130 && cy > 0 && cy < view[3] && cx > 0 && cx < view[2]) {
        ++bright;
        if (inCentre) ++centre;
      }
    }
  }
  check(colours.size > 50, `${label}: screenshot is not blank (${colours.size} colours)`);
  check(centre >= 200 && centre >= 0.5 * bright,
        `${label}: skeleton drawn around the centre of the view (${centre} of ${bright} bright pixels in the central box)`);
  if (screenshot) fs.writeFileSync(screenshot, png);
  fs.writeFileSync(path.join(work, `${label}.png`), png);
  check(browser.errors.length === 0, `${label}: no console errors${browser.errors.length ? ': ' + browser.errors.join(' | ') : ''}`);
  return { bytes, ms };
}

const browser = await Browser.launch();
try {
  // BVH: the walk sample baked by its rig, with generated records on the result.
  const walk = path.join(src, 'samples/cmu_walk/walk.bvh');
  run(['bake', '--no-progress', '--rig', path.join(src, 'samples/cmu_walk/bake_rig.lua'), '--out', path.join(work, 'baked'), walk]);
  const baked = path.join(work, 'baked/walk.bvh');
  const recordsFile = path.join(work, 'baked/walk.frames.jsonl');
  const records = writeRecords(baked, recordsFile, ['LeftFoot', 'RightFoot', 'LeftHand']);
  const page = path.join(work, 'walk.html');
  run(['preview', walk, baked, '--frames-report', recordsFile, '--out', page]);
  await checkPage(browser, page, [walk, baked], { records, label: 'bvh', screenshot: opts.screenshot || null });

  // FBX (and the 2,752-frame CMU 01_01 as BVH next to it), when the shared corpus is there.
  const shared = opts.shared || '';
  const fbx = path.join(shared, 'fbx/cmu_isaacgym/01_01_cmu.fbx');
  const bvh = path.join(shared, 'cmu_cgspeed/01_01.bvh');
  if (shared && fs.existsSync(fbx) && fs.existsSync(bvh)) {
    const single = path.join(work, 'cmu_01_01.html');
    run(['preview', bvh, '--out', single]);
    await checkPage(browser, single, [bvh], { label: 'cmu_01_01_bvh' });
    const fbxPage = path.join(work, 'cmu_01_01_fbx.html');
    run(['preview', fbx, '--out', fbxPage]);
    await checkPage(browser, fbxPage, [fbx], { label: 'cmu_01_01_fbx' });
    // rigel retarget --preview: CMU 01_01 onto the Motion Analysis skeleton of samples/retarget.
    const boxing = path.join(shared, 'assimp_misc/Boxing_Toes.bvh');
    if (fs.existsSync(boxing)) {
      const rtDir = path.join(work, 'retarget_preview');
      run(['retarget', '--no-progress', '--target', boxing, '--map', path.join(src, 'samples/retarget/cmu_to_motion_analysis.xml'),
           '--pin-feet', '--out', path.join(work, 'retarget'), '--preview', rtDir, bvh]);
      check(/<a href="01_01.html">/.test(fs.readFileSync(path.join(rtDir, 'index.html'), 'utf8')), 'retarget: index links 01_01.html');
      await checkPage(browser, path.join(rtDir, '01_01.html'), [bvh, path.join(work, 'retarget/01_01.bvh')], { label: 'retarget' });
    }
  } else {
    console.log(`SKIP (FBX case): ${fbx} not found`);
  }

  // Batch pages: rigel bake --preview DIR.
  const previewDir = path.join(work, 'batch_preview');
  const walk2 = path.join(work, 'walk_copy.bvh');
  fs.copyFileSync(walk, walk2);
  run(['bake', '--no-progress', '--rig', path.join(src, 'samples/cmu_walk/bake_rig.lua'), '--out', path.join(work, 'batch'),
       '--preview', previewDir, walk, walk2]);
  const index = fs.readFileSync(path.join(previewDir, 'index.html'), 'utf8');
  const links = [...index.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
  check(links.length >= 1, `batch: index links ${links.length} page(s): ${links.join(', ')}`);
  for (const link of links) {
    await browser.open(`file://${path.resolve(previewDir, link)}`, 'window.rigelPreview && window.rigelPreview.ready');
    check(browser.errors.length === 0, `batch: ${link} loads with no console errors ${browser.errors.join(' | ')}`);
  }
  await browser.open(`file://${path.resolve(previewDir, 'index.html')}`, `document.querySelectorAll('#clips tbody tr').length > 0`);
  const rows = await browser.eval(`document.querySelectorAll('#clips tbody tr').length`);
  check(rows === 2, `batch: index lists the 2 clips (${rows})`);
  // With records beside one output (a rerun with --resume), that clip's worst frames sort it first
  // and the index counts its unreachable frames.
  const copyRecords = writeRecords(path.join(work, 'batch/walk_copy.bvh'), path.join(work, 'batch/walk_copy.frames.jsonl'), ['LeftFoot']);
  run(['bake', '--no-progress', '--resume', '--rig', path.join(src, 'samples/cmu_walk/bake_rig.lua'), '--out', path.join(work, 'batch'),
       '--preview', previewDir, walk, walk2]);
  await browser.open(`file://${path.resolve(previewDir, 'index.html')}?2`, `document.querySelectorAll('#clips tbody tr').length > 0`);
  const table = await browser.eval(`[...document.querySelectorAll('#clips tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))`);
  check(table[0][0] === 'walk_copy' && Number(table[0][5]) === copyRecords.marked.unreachable.length &&
        Number(table[0][7]) === copyRecords.marked.limits.length && table[1][5] === '–',
        `batch: the clip with records comes first with ${copyRecords.marked.unreachable.length} unreachable and ${copyRecords.marked.limits.length} limit frames: ${JSON.stringify(table.map((r) => r.slice(0, 8)))}`);
} catch (e) {
  ++failed;
  console.log(`FAIL: ${e.stack || e}`);
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
