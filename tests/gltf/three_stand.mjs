// three.js side of the corpus stand test (issue 26, label threejs): loads each glb with three.js's
// own GLTFLoader in Node, plays its first animation with an AnimationMixer, and writes one JSON
// line per file: where the head stands over the feet along three.js's +Y (world up) on 16 frames,
// the mean feet-to-head direction and the standing height (head over the lowest foot point, 95th
// percentile), measured the same way as tests/data/blender_probe.py measures files in Blender.
//   node three_stand.mjs NODE_MODULES OUT.jsonl FILE.glb...
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, outPath, ...files] = process.argv.slice(2);
const THREE = await import(pathToFileURL(join(modules, 'three/build/three.module.js')).href);
const { GLTFLoader } = await import(
  pathToFileURL(join(modules, 'three/examples/jsm/loaders/GLTFLoader.js')).href);

function tokens(name) {
  name = name.split(':').pop().replace(/([a-z])([A-Z])/g, '$1 $2');
  return name.toLowerCase().split(/[^a-z]+/).filter((t) => t);
}
const isHead = (n) => tokens(n).includes('head') &&
  !tokens(n).some((t) => ['end', 'top', 'nub', 'site', 'marker'].includes(t));
const isFoot = (n) => tokens(n).some((t) => ['foot', 'ankle', 'toe', 'toes', 'toebase'].includes(t)) &&
  !tokens(n).some((t) => ['ik', 'marker'].includes(t));

function parse(path) {
  const bytes = readFileSync(path);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return new Promise((resolve, reject) => new GLTFLoader().parse(buffer, '', resolve, reject));
}

const lines = [];
for (const file of files) {
  const rec = { file };
  try {
    const gltf = await parse(file);
    const root = gltf.scene;
    // Names as the file spells them (three.js sanitises node names: 'BVH:Head' becomes 'BVHHead').
    const nodes = [];
    root.traverse((o) => nodes.push(o));
    const nameOf = (o) => o.userData.name ?? o.name;
    const head = nodes.filter((o) => isHead(nameOf(o)));
    const feet = nodes.filter((o) => isFoot(nameOf(o)));
    rec.head = head.length ? nameOf(head[0]) : null;
    rec.feet = feet.slice(0, 4).map(nameOf);
    const clip = gltf.animations[0];
    const mixer = new THREE.AnimationMixer(root);
    if (clip) mixer.clipAction(clip).play();
    const duration = clip ? clip.duration : 0;
    const dir = new THREE.Vector3();
    const heights = [];
    const h = new THREE.Vector3(), p = new THREE.Vector3(), mid = new THREE.Vector3();
    for (let i = 0; i < 16 && head.length && feet.length; ++i) {
      mixer.setTime((duration * i) / 15);
      root.updateMatrixWorld(true);
      head[0].getWorldPosition(h);
      mid.set(0, 0, 0);
      let lowest = Infinity;
      for (const f of feet) {
        f.getWorldPosition(p);
        mid.add(p);
        lowest = Math.min(lowest, p.y);
      }
      mid.divideScalar(feet.length);
      dir.add(h.clone().sub(mid).normalize());
      heights.push(h.y - lowest);
    }
    if (heights.length) {
      dir.divideScalar(heights.length);
      rec.dir = [dir.x, dir.y, dir.z];
      heights.sort((a, b) => a - b);
      rec.height = heights[Math.round(0.95 * (heights.length - 1))];
      rec.frames = heights.length;
    }
  } catch (e) {
    rec.error = String(e && e.message ? e.message : e).slice(0, 200);
  }
  lines.push(JSON.stringify(rec));
}
writeFileSync(outPath, lines.join('\n') + '\n');
