// Plays exported files in three.js (GLTFLoader / FBXLoader + AnimationMixer,
// plain Node, no browser) and prints the world matrix of every named node at
// the requested times.
//
//   node three_sample.mjs JOBS.json > OUT.json
//   JOBS: [{"file": "a.glb", "anims": [{"index": 0, "times": [0, 0.5, ...]}]}]
//   OUT:  [{"file", "error"?, "anims": [{"index", "clip", "duration",
//           "samples": [{"t", "nodes": {"name": [16 numbers, row-major]}}]}]}]
// Matrices are row-major with column vectors (translation in elements 3, 7,
// 11), as `retroanim pose` prints them.  Node names are the file's own (the
// glTF node name, the FBX model name), not three.js's sanitised ones.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { FBXLoader } from 'three/examples/jsm/loaders/FBXLoader.js';

// FileLoader (which reads the data: URIs) reports progress with the browser's
// ProgressEvent, which Node 20 lacks.
if (typeof globalThis.ProgressEvent === 'undefined') {
  globalThis.ProgressEvent = class ProgressEvent extends Event {
    constructor(type, init = {}) { super(type); Object.assign(this, init); }
  };
}

// FBXLoader sizes a camera without AspectWidth/AspectHeight from the browser
// window; every camera retroanim writes has them, but the default is read first.
if (typeof globalThis.window === 'undefined') globalThis.window = { innerWidth: 1, innerHeight: 1 };

function toArrayBuffer(buf) {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

// Node's fetch cannot read file: URLs, so a .gltf's external buffers are
// inlined as data: URIs before parsing.
function gltfText(file) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  for (const b of json.buffers ?? []) {
    if (b.uri && !b.uri.startsWith('data:')) {
      const bytes = readFileSync(resolve(dirname(file), decodeURIComponent(b.uri)));
      b.uri = 'data:application/octet-stream;base64,' + bytes.toString('base64');
    }
  }
  return JSON.stringify(json);
}

async function load(file) {
  if (/\.fbx$/i.test(file)) {
    const group = new FBXLoader().parse(toArrayBuffer(readFileSync(file)), '');
    const named = [];
    // (FBXLoader returns a file's only top-level model itself as the group)
    group.traverse((o) => { if (o.userData.originalName !== undefined) named.push([o.userData.originalName, o]); });
    return { root: group, clips: group.animations, named };
  }
  const data = /\.glb$/i.test(file) ? toArrayBuffer(readFileSync(file)) : gltfText(file);
  const gltf = await new Promise((ok, fail) => new GLTFLoader().parse(data, '', ok, fail));
  const json = gltf.parser.json;
  const named = [];
  const cameras = [];
  gltf.scene.traverse((o) => {
    const a = gltf.parser.associations.get(o);
    if (a && a.nodes !== undefined && json.nodes[a.nodes].name !== undefined) named.push([json.nodes[a.nodes].name, o]);
    // a camera by the glTF camera's own name (its node's camera index)
    const cdef = a && a.nodes !== undefined && json.nodes[a.nodes].camera !== undefined ? json.cameras[json.nodes[a.nodes].camera] : null;
    const name = cdef ? cdef.name : o.name;
    if (o.isPerspectiveCamera) cameras.push({ name, yfov: o.fov * Math.PI / 180, aspect: o.aspect, near: o.near, far: o.far });
    if (o.isOrthographicCamera) cameras.push({ name, near: o.near, far: o.far, xmag: o.right, ymag: o.top });
  });
  return { root: gltf.scene, clips: gltf.animations, named, cameras };
}

function rowMajor(m) {
  const e = m.elements; // column-major
  const out = new Array(16);
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) out[r * 4 + c] = e[c * 4 + r];
  return out;
}

const jobs = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const results = [];
for (const job of jobs) {
  const res = { file: job.file, anims: [] };
  try {
    for (const want of job.anims) {
      const { root, clips, named, cameras } = await load(job.file); // fresh scene per animation
      const clip = clips[want.index];
      const out = { index: want.index, clip: clip ? clip.name : null, clips: clips.length,
                    duration: clip ? clip.duration : null, samples: [] };
      if (cameras) out.cameras = cameras;
      const mixer = new THREE.AnimationMixer(root);
      const action = clip ? mixer.clipAction(clip) : null;
      if (action) {
        action.setLoop(THREE.LoopOnce, 1);
        action.clampWhenFinished = true; // hold the last key after the end
      }
      for (const t of want.times) {
        // reaching the end pauses a LoopOnce action; start it afresh for every time
        if (action) action.reset().play();
        mixer.setTime(t);
        root.updateMatrixWorld(true);
        const nodes = {};
        for (const [name, o] of named) if (!(name in nodes)) nodes[name] = rowMajor(o.matrixWorld);
        out.samples.push({ t, nodes });
      }
      res.anims.push(out);
    }
  } catch (e) {
    res.error = String(e && e.stack ? e.stack : e);
  }
  results.push(res);
}
process.stdout.write(JSON.stringify(results));
