// rigel preview page: draws the clips and plots the frames reports embedded by `rigel preview`
// (cli/preview/preview_page.cc) in <script id="rigel-data">. World positions are rigel's FK,
// embedded as float64; this script does no kinematics. Bundled with three.js, OrbitControls and
// uPlot by esbuild at build time. Test hook: window.rigelPreview (docs/preview.md).
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './page.css';

const data = JSON.parse(document.getElementById('rigel-data').textContent);
const COLOURS = ['#9aa4b8', '#ff8a3d', '#42c86a', '#d35ce0', '#3db8ff', '#f2d13a', '#ff5c7a'];
const STATUS = ['converged', 'not_converged', 'unreachable', 'invalid'];

function bytesOf(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; ++i) bytes[i] = bin.charCodeAt(i);
  return bytes.buffer;
}

// ---- clips ----
const clips = data.clips.map((c, index) => {
  const clip = Object.assign({}, c);
  clip.index = index;
  clip.colour = COLOURS[index % COLOURS.length];
  clip.pos = new Float64Array(bytesOf(c.positions));
  clip.ends = new Float32Array(bytesOf(c.end_positions));
  clip.values = new Float32Array(bytesOf(c.channel_values));
  clip.J = c.joints.length;
  clip.E = c.end_parents.length;
  clip.C = c.channel_names.length;
  clip.visible = true;
  // Joint j's position is stored at column col[j] (joints aliased to an earlier one share it);
  // channel k is constant (channel_constant[k]) or stored at column chCol[k].
  clip.col = [];
  let stored = 0;
  for (let j = 0; j < clip.J; ++j) clip.col.push(c.position_alias[j] >= 0 ? -1 : stored++);
  for (let j = 0; j < clip.J; ++j) if (c.position_alias[j] >= 0) clip.col[j] = clip.col[c.position_alias[j]];
  clip.S = stored;
  clip.chCol = [];
  let animated = 0;
  for (let k = 0; k < clip.C; ++k) clip.chCol.push(c.channel_constant[k] === null ? animated++ : -1);
  clip.A = animated;
  return clip;
});
const frameCount = Math.max(...clips.map((c) => c.frames));
const frameTime = clips[0].frame_time;
// Lengths are drawn in metres when every clip states its unit, else in file units.
const allUnits = clips.every((c) => c.unit_metres > 0);
for (const c of clips) c.scale = allUnits ? c.unit_metres : 1;
// Without stated units, clips of very different heights (a retarget between files in different
// units) are drawn at the first clip's height, so they can be compared; the HUD says so.
const heightsMatched = !allUnits && clips.some((c) => Math.abs(Math.log(c.height / clips[0].height)) > Math.log(1.25));
if (heightsMatched) for (const c of clips) c.scale = clips[0].height / c.height;
const displayUnit = allUnits ? 'm' : clips[0].unit === 'unknown' ? 'file units' : clips[0].unit;
const clipFrame = (c, f) => Math.min(Math.max(f, 0), c.frames - 1);

// ---- three.js scene ----
const view = document.getElementById('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
view.prepend(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color('#15171c');
scene.add(new THREE.HemisphereLight(0xffffff, 0x404050, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(1, 3, 2);
scene.add(sun);

// A clip's group maps its file space (its up axis) to the view's Y-up metres.
function upRotation(up) {
  const q = new THREE.Quaternion();
  if (up === 2) q.setFromAxisAngle(new THREE.Vector3(1, 0, 0), -Math.PI / 2);
  if (up === 0) q.setFromAxisAngle(new THREE.Vector3(0, 0, 1), Math.PI / 2);
  return q;
}
const maxHeight = Math.max(...clips.map((c) => c.height * c.scale));
const sphere = new THREE.SphereGeometry(1, 14, 10);
const cylinder = new THREE.CylinderGeometry(1, 1, 1, 8, 1);
cylinder.translate(0, 0.5, 0);
const Y = new THREE.Vector3(0, 1, 0);
const tmpM = new THREE.Matrix4(), tmpQ = new THREE.Quaternion(), tmpS = new THREE.Vector3();
const tmpA = new THREE.Vector3(), tmpB = new THREE.Vector3(), tmpD = new THREE.Vector3();

for (const c of clips) {
  c.group = new THREE.Group();
  c.group.quaternion.copy(upRotation(c.up));
  c.group.scale.setScalar(c.scale);
  scene.add(c.group);
  const r = c.height * 0.014;
  c.jointRadius = r;
  const colour = new THREE.Color(c.colour);
  c.jointMesh = new THREE.InstancedMesh(sphere, new THREE.MeshLambertMaterial(), c.J);
  c.jointMesh.userData.clip = c.index;
  for (let j = 0; j < c.J; ++j) c.jointMesh.setColorAt(j, colour);
  c.bones = [];
  for (let j = 0; j < c.J; ++j) if (c.parents[j] >= 0) c.bones.push([c.parents[j], j, false]);
  for (let e = 0; e < c.E; ++e) c.bones.push([c.end_parents[e], e, true]);
  c.boneMesh = new THREE.InstancedMesh(cylinder, new THREE.MeshLambertMaterial({ color: colour }),
                                       Math.max(c.bones.length, 1));
  c.boneMesh.count = c.bones.length;
  c.group.add(c.jointMesh, c.boneMesh);
  c.targets = [];
}
// The file axes of the first clip (red X, green Y, blue Z): its up axis points up.
const axes = new THREE.AxesHelper(clips[0].height * 0.25);
clips[0].group.add(axes);

function jointAt(c, f, j, out) {
  const k = (clipFrame(c, f) * c.S + c.col[j]) * 3;
  return out.set(c.pos[k], c.pos[k + 1], c.pos[k + 2]);
}
function endAt(c, f, e, out) {
  const k = (clipFrame(c, f) * c.E + e) * 3;
  return out.set(c.ends[k], c.ends[k + 1], c.ends[k + 2]);
}
function placeBone(mesh, i, a, b, radius) {
  tmpD.subVectors(b, a);
  const len = tmpD.length();
  if (len > 1e-12) tmpQ.setFromUnitVectors(Y, tmpD.divideScalar(len));
  else tmpQ.identity();
  tmpS.set(radius, len, radius);
  tmpM.compose(a, tmpQ, tmpS);
  mesh.setMatrixAt(i, tmpM);
}

// ---- effector targets from the reports ----
const reports = data.reports.map((r) => Object.assign({}, r));
for (const r of reports) {
  const c = clips[r.clip];
  r.effectorJoint = r.effector_joints.map((name) => c.joints.indexOf(name));
  r.markers = r.effectors.map((name, k) => {
    const marker = new THREE.Mesh(new THREE.OctahedronGeometry(c.jointRadius * 1.8),
                                  new THREE.MeshBasicMaterial({ color: c.colour, wireframe: true }));
    const geometry = new THREE.BufferGeometry().setAttribute(
        'position', new THREE.BufferAttribute(new Float32Array(6), 3));
    const line = new THREE.Line(geometry, new THREE.LineBasicMaterial({ color: '#ffffff' }));
    c.group.add(marker, line);
    return { marker, line, k };
  });
}

// Ground: the lowest joint of frame 0 over all clips, in view space.
let ground = Infinity;
for (const c of clips) {
  c.group.updateMatrixWorld();
  for (let j = 0; j < c.J; ++j) {
    jointAt(c, 0, j, tmpA).applyMatrix4(c.group.matrixWorld);
    ground = Math.min(ground, tmpA.y);
  }
}
// Grid cell: the 1-2-5 step nearest a fifth of the tallest skeleton.
const cell = (() => {
  const want = maxHeight / 5, decade = Math.pow(10, Math.floor(Math.log10(want)));
  return [1, 2, 5, 10].map((m) => m * decade)
      .reduce((a, b) => (Math.abs(Math.log(b / want)) < Math.abs(Math.log(a / want)) ? b : a));
})();
// Grid lines are cut into one segment per cell: some WebGL implementations (SwiftShader) drop a
// whole line when one end is behind the camera.
const grid = (() => {
  const n = 40, half = n / 2, v = [], col = [];
  const minor = new THREE.Color(0x4a5568), major = new THREE.Color(0x5f6b80);
  for (let i = -half; i <= half; ++i) {
    const c = i === 0 ? major : minor;
    for (let k = -half; k < half; ++k) {
      v.push(i * cell, 0, k * cell, i * cell, 0, (k + 1) * cell, k * cell, 0, i * cell, (k + 1) * cell, 0, i * cell);
      for (let m = 0; m < 4; ++m) col.push(c.r, c.g, c.b);
    }
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(v, 3));
  g.setAttribute('color', new THREE.Float32BufferAttribute(col, 3));
  return new THREE.LineSegments(g, new THREE.LineBasicMaterial({ vertexColors: true }));
})();
grid.position.y = ground;
scene.add(grid);

// ---- layout (overlay / side by side) and camera ----
const camera = new THREE.PerspectiveCamera(40, 1, maxHeight * 0.01, maxHeight * 2000);
const controls = new OrbitControls(camera, renderer.domElement);
controls.enableDamping = false;
let sideBySide = false;
function layout() {
  clips.forEach((c, i) => c.group.position.set(sideBySide ? i * maxHeight * 0.9 : 0, 0, 0));
  for (const c of clips) c.group.updateMatrixWorld();
}
layout();
// Centroid of the joints of the last visible clip (the result under review): what the camera
// follows.
function rootCentre(f) {
  const sum = new THREE.Vector3();
  let n = 0;
  const shown = clips.filter((c) => c.visible);
  for (const c of shown.slice(-1)) {
    for (let j = 0; j < c.J; ++j, ++n) sum.add(jointAt(c, f, j, tmpA).applyMatrix4(c.group.matrixWorld));
  }
  return n ? sum.divideScalar(n) : sum;
}
function frameCamera() {
  const box = new THREE.Box3();
  for (const c of clips) {
    for (let j = 0; j < c.J; ++j) box.expandByPoint(jointAt(c, frame, j, tmpA).applyMatrix4(c.group.matrixWorld));
  }
  const centre = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  const extent = Math.max(size.x, size.y, size.z, maxHeight);
  controls.target.copy(centre);
  camera.position.set(centre.x + extent * 0.7, centre.y + extent * 0.3, centre.z + extent * 1.7);
  camera.updateProjectionMatrix();
  controls.update();
  lastFollow = rootCentre(frame);
}
let frame = 0;
let lastFollow = null;

// ---- UI ----
const $ = (id) => document.getElementById(id);
const scrub = $('scrub');
scrub.max = String(frameCount - 1);
const legend = $('legend');
for (const c of clips) {
  const label = document.createElement('label');
  label.innerHTML = `<input type="checkbox" checked><span class="sw" style="background:${c.colour}"></span>`;
  label.append(`${c.role}: ${c.name}`);
  label.querySelector('input').addEventListener('change', (e) => {
    c.visible = e.target.checked;
    c.group.visible = c.visible;
    requestRender();
  });
  legend.append(label);
}
const hudLines = clips.map((c) => `${c.role} ${c.name}: ${c.joints.length} joints, ${c.frames} frames, ` +
    `up ${'XYZ'[c.up]}, unit ${c.unit}`);
hudLines.push(`view: ${heightsMatched ? `heights matched to ${clips[0].name} (units not stated)` : displayUnit}, ` +
    `grid cell ${+cell.toPrecision(3)} ${displayUnit}; ${data.libraries}`);
$('hud').textContent = hudLines.join('\n');

let selected = null;  // {clip, joint}
function showInfo() {
  const info = $('info');
  if (!selected) { info.hidden = true; return; }
  const c = clips[selected.clip];
  const j = selected.joint;
  const f = clipFrame(c, frame);
  const p = jointAt(c, frame, j, new THREE.Vector3());
  const lines = [`${c.role}: ${c.name}`, `joint ${j}: ${c.joints[j]}`,
                 `parent: ${c.parents[j] >= 0 ? c.joints[c.parents[j]] : '(root)'}`, `frame ${f}`,
                 `world: ${p.x.toFixed(6)} ${p.y.toFixed(6)} ${p.z.toFixed(6)} (${c.unit})`];
  for (let k = 0; k < c.C; ++k) {
    if (c.channel_joints[k] !== j) continue;
    const v = c.chCol[k] >= 0 ? c.values[f * c.A + c.chCol[k]] : c.channel_constant[k];
    const rot = c.channel_names[k].endsWith('rotation');
    lines.push(`${c.channel_names[k].padEnd(10)} ${v.toFixed(4)}${rot ? '°' : ''}`);
  }
  if (lines.length === 5) lines.push('(no channels)');
  info.textContent = lines.join('\n');
  info.hidden = false;
}

function updateScene() {
  for (const c of clips) {
    const f = frame;
    for (let j = 0; j < c.J; ++j) {
      jointAt(c, f, j, tmpA);
      const r = selected && selected.clip === c.index && selected.joint === j ? c.jointRadius * 1.8
                                                                              : c.jointRadius;
      tmpM.compose(tmpA, tmpQ.identity(), tmpS.setScalar(r));
      c.jointMesh.setMatrixAt(j, tmpM);
    }
    c.jointMesh.instanceMatrix.needsUpdate = true;
    c.jointMesh.computeBoundingSphere();
    c.bones.forEach(([p, k, isEnd], i) => {
      jointAt(c, f, p, tmpA);
      if (isEnd) endAt(c, f, k, tmpB); else jointAt(c, f, k, tmpB);
      placeBone(c.boneMesh, i, tmpA, tmpB, c.jointRadius * 0.45);
    });
    c.boneMesh.instanceMatrix.needsUpdate = true;
    c.boneMesh.computeBoundingSphere();
  }
  for (const r of reports) {
    const c = clips[r.clip];
    const f = Math.min(frame, r.frames - 1);
    for (const m of r.markers) {
      const t = r.targets[m.k];
      const has = t[3 * f] !== null && t[3 * f + 1] !== null && t[3 * f + 2] !== null;
      m.marker.visible = has;
      m.line.visible = has && r.effectorJoint[m.k] >= 0;
      if (!has) continue;
      m.marker.position.set(t[3 * f], t[3 * f + 1], t[3 * f + 2]);
      if (m.line.visible) {
        jointAt(c, frame, r.effectorJoint[m.k], tmpA);
        const a = m.line.geometry.attributes.position;
        a.setXYZ(0, tmpA.x, tmpA.y, tmpA.z);
        a.setXYZ(1, t[3 * f], t[3 * f + 1], t[3 * f + 2]);
        a.needsUpdate = true;
        m.line.geometry.computeBoundingSphere();
      }
    }
  }
  if ($('follow').checked && lastFollow) {
    const now = rootCentre(frame);
    const d = now.clone().sub(lastFollow);
    d.y = 0;
    camera.position.add(d);
    controls.target.add(d);
    grid.position.x = Math.round(controls.target.x / cell) * cell;
    grid.position.z = Math.round(controls.target.z / cell) * cell;
    controls.update();
    lastFollow = now;
  }
}

let renderPending = false;
function requestRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => { renderPending = false; renderer.render(scene, camera); });
}
function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
  for (const p of plots) p.u.setSize({ width: plotWidth(), height: p.u.height });
  updateNowLines();
  requestRender();
}

function setFrame(i) {
  frame = Math.min(Math.max(Math.round(Number(i)) || 0, 0), frameCount - 1);
  scrub.value = String(frame);
  $('framelabel').textContent =
      `frame ${frame} / ${frameCount - 1}  ·  ${(frame * frameTime).toFixed(3)} s`;
  updateScene();
  showInfo();
  updateNowLines();
  renderer.render(scene, camera);
}

// ---- plots ----
const plots = [];
const plotsEl = $('plots');
const plotWidth = () => Math.max(plotsEl.clientWidth - 2, 200);
function markFrames(r) {
  // Frames to mark: unreachable/invalid (red), on a limit (orange), not converged (amber).
  const marks = [];
  for (let f = 0; f < r.frames; ++f) {
    const s = r.status[f];
    if (s === 2 || s === 3) marks.push([f, 'rgba(230,40,40,0.45)']);
    else if (r.limits[String(f)]) marks.push([f, 'rgba(255,140,0,0.35)']);
    else if (s === 1) marks.push([f, 'rgba(220,180,0,0.35)']);
  }
  return marks;
}
const finite = (v) => typeof v === 'number' && Number.isFinite(v);
function addPlot(r, title, series, labels, unit) {
  if (!series.some((s) => s.some(finite))) return;
  const xs = Array.from({ length: r.frames }, (_, i) => i);
  const c = clips[r.clip];
  const row = document.createElement('div');
  row.className = 'row';
  plotsEl.append(row);
  const marks = markFrames(r);
  const palette = ['#1d6fe0', '#e0561d', '#2aa84a', '#a43ad0', '#c9a400', '#0fa3b1', '#d0346a'];
  const opts = {
    title: `${c.name} · ${title}${unit ? ` (${unit})` : ''}`,
    width: plotWidth(),
    height: 120,
    scales: { x: { time: false } },
    cursor: { drag: { x: false, y: false }, sync: { key: 'rigel' } },
    legend: { live: true },
    series: [{ label: 'frame', value: (u, v) => (v == null ? '–' : String(v)) }].concat(
        labels.map((label, i) => ({ label, stroke: palette[i % palette.length], width: 1,
                                     spanGaps: false, points: { show: false } }))),
    axes: [{}, { size: 60 }],
    hooks: {
      drawClear: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        const top = u.bbox.top, h = u.bbox.height;
        for (const [f, colour] of marks) {
          const x = Math.round(u.valToPos(f, 'x', true));
          ctx.fillStyle = colour;
          ctx.fillRect(x - 1, top, 2, h);
        }
        ctx.restore();
      }],
    },
  };
  const u = new uPlot(opts, [xs].concat(series), row);
  const now = document.createElement('div');
  now.className = 'now';
  u.over.append(now);
  u.over.addEventListener('click', (e) => {
    const rect = u.over.getBoundingClientRect();
    const f = Math.round(u.posToVal(e.clientX - rect.left, 'x'));
    setFrame(f);
  });
  plots.push({ u, now, report: r, title });
}
for (const r of reports) {
  const unit = r.unit && r.unit !== 'unknown' ? r.unit : '';
  addPlot(r, 'residual per effector', r.residual, r.effectors, unit);
  addPlot(r, 'iterations', [r.iterations], ['iterations'], '');
  addPlot(r, 'foot slide', [r.foot_slide], ['foot slide'], unit);
  addPlot(r, 'swivel jump', [r.swivel_jump], ['swivel jump'], 'deg');
  addPlot(r, 'pop score', [r.pop], ['pop'], '');
}
if (!plots.length) plotsEl.hidden = true;
else {
  const key = document.createElement('div');
  key.className = 'key';
  key.innerHTML = 'Marked frames: <b style="color:#e62828">unreachable / invalid</b> · ' +
      '<b style="color:#ff8c00">on a limit</b> · <b style="color:#c9a400">not converged</b>. ' +
      'Hover for values, click to go to a frame.';
  plotsEl.prepend(key);
}
function updateNowLines() {
  for (const p of plots) {
    const f = Math.min(frame, p.report.frames - 1);
    p.now.style.left = `${p.u.valToPos(f, 'x')}px`;
  }
}

// ---- interaction ----
let playing = false, playTime = 0, lastTick = 0;
function tick(t) {
  if (!playing) return;
  const dt = lastTick ? (t - lastTick) / 1000 : 0;
  lastTick = t;
  playTime += dt * Number($('speed').value);
  let f = Math.floor(playTime / frameTime);
  if (f >= frameCount) { playTime = 0; f = 0; }
  if (f !== frame) setFrame(f);
  requestAnimationFrame(tick);
}
function setPlaying(on) {
  playing = on;
  $('play').textContent = on ? '❚❚' : '▶';
  if (on) { playTime = frame * frameTime; lastTick = 0; requestAnimationFrame(tick); }
}
$('play').addEventListener('click', () => setPlaying(!playing));
scrub.addEventListener('input', () => { setPlaying(false); setFrame(scrub.value); });
$('sidebyside').addEventListener('change', (e) => {
  sideBySide = e.target.checked;
  layout();
  frameCamera();
  setFrame(frame);
});
window.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'INPUT' && e.target.type !== 'checkbox') return;
  if (e.code === 'Space') { e.preventDefault(); setPlaying(!playing); }
  if (e.code === 'ArrowRight') setFrame(frame + 1);
  if (e.code === 'ArrowLeft') setFrame(frame - 1);
});
controls.addEventListener('change', requestRender);
const raycaster = new THREE.Raycaster();
let downAt = null;
renderer.domElement.addEventListener('pointerdown', (e) => { downAt = [e.clientX, e.clientY]; });
renderer.domElement.addEventListener('pointerup', (e) => {
  if (!downAt || Math.hypot(e.clientX - downAt[0], e.clientY - downAt[1]) > 4) return;
  const rect = renderer.domElement.getBoundingClientRect();
  const ndc = new THREE.Vector2(((e.clientX - rect.left) / rect.width) * 2 - 1,
                                -((e.clientY - rect.top) / rect.height) * 2 + 1);
  raycaster.setFromCamera(ndc, camera);
  const hits = raycaster.intersectObjects(clips.filter((c) => c.visible).map((c) => c.jointMesh));
  selected = hits.length ? { clip: hits[0].object.userData.clip, joint: hits[0].instanceId } : null;
  setFrame(frame);
});
window.addEventListener('resize', resize);

// ---- start ----
updateScene();
frameCamera();
resize();
setFrame(0);

// Test hook (docs/preview.md): positions are the embedded float64 values, in each clip's file
// space and unit, exactly as rigel's FK computed them.
window.rigelPreview = {
  ready: true,
  frameCount,
  clipCount: clips.length,
  setFrame,
  frame: () => frame,
  clipNames: () => clips.map((c) => c.name),
  jointNames: (ci) => clips[ci].joints.slice(),
  jointWorldPositions: (ci, f) => {
    const c = clips[ci];
    const out = [];
    for (let j = 0; j < c.J; ++j) {
      const k = (clipFrame(c, f) * c.S + c.col[j]) * 3;
      out.push([c.pos[k], c.pos[k + 1], c.pos[k + 2]]);
    }
    return out;
  },
  plotPointCounts: () => plots.map((p) => ({
    name: p.u.root.querySelector('.u-title').textContent,
    points: p.u.data[0].length,
    series: p.u.data.slice(1).map((s) => s.length),
    frames: clips[p.report.clip].frames,
  })),
  selectJoint: (ci, j) => { selected = ci == null ? null : { clip: ci, joint: j }; setFrame(frame); },
  selected: () => (selected ? { clip: selected.clip, joint: selected.joint } : null),
  // Live preview: takes a new bake's data (the JSON of <script id="rigel-data">) in place when
  // its layout is this page's (same clips, joints, frames, channels and which are constant):
  // positions, end sites and channel values are swapped and the frame redrawn. Returns false
  // (nothing changed) when the layout differs; the page must then reload.
  updateData: (next) => {
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    const layout = (c) => [c.name, c.joints, c.parents, c.frames, c.end_parents, c.channel_names];
    if (!next || !next.clips || next.clips.length !== clips.length) return false;
    if (!next.clips.every((c, i) => same(layout(c), layout(data.clips[i])))) return false;
    next.clips.forEach((n, i) => {
      const c = clips[i];
      c.pos = new Float64Array(bytesOf(n.positions));
      c.ends = new Float32Array(bytesOf(n.end_positions));
      c.values = new Float32Array(bytesOf(n.channel_values));
      c.channel_constant = n.channel_constant;
      c.col = [];
      let stored = 0;
      for (let j = 0; j < c.J; ++j) c.col.push(n.position_alias[j] >= 0 ? -1 : stored++);
      for (let j = 0; j < c.J; ++j) if (n.position_alias[j] >= 0) c.col[j] = c.col[n.position_alias[j]];
      c.S = stored;
      c.chCol = [];
      let animated = 0;
      for (let k = 0; k < c.C; ++k) c.chCol.push(n.channel_constant[k] === null ? animated++ : -1);
      c.A = animated;
      data.clips[i] = n;
    });
    // The view stays where it is: the camera follows motion from here on, not the new bake.
    lastFollow = rootCentre(frame);
    setFrame(frame);
    requestRender();
    return true;
  },
  // The view (live preview keeps it across reloads): camera position and orbit target.
  camera: () => ({ position: camera.position.toArray(), target: controls.target.toArray() }),
  setCamera: (position, target) => {
    camera.position.fromArray(position);
    controls.target.fromArray(target);
    controls.update();
    lastFollow = rootCentre(frame);
    requestRender();
  },
  info: () => ($('info').hidden ? '' : $('info').textContent),
  status: (ri, f) => STATUS[reports[ri].status[f]] || null,
  // Where joint j of clip ci is drawn at the current frame, in CSS pixels of the page.
  jointScreenPosition: (ci, j) => {
    const c = clips[ci];
    const p = jointAt(c, frame, j, new THREE.Vector3()).applyMatrix4(c.group.matrixWorld);
    p.project(camera);
    const rect = renderer.domElement.getBoundingClientRect();
    return [rect.left + (p.x + 1) / 2 * rect.width, rect.top + (1 - p.y) / 2 * rect.height];
  },
  // Milliseconds from navigation start to the page being drawn.
  loadMs: performance.now(),
};
