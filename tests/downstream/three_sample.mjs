// Plays exported files in three.js (GLTFLoader / FBXLoader + AnimationMixer,
// plain Node, no browser) and prints the world matrix of every named node at
// the requested times, and every mesh with its texture.
//
//   node three_sample.mjs JOBS.json > OUT.json
//   JOBS: [{"file": "a.glb", "anims": [{"index": 0, "times": [0, 0.5, ...]}]}]
//   OUT:  [{"file", "error"?, "anims": [{"index", "clip", "duration",
//           "meshes": [{"name", "vertices", "triangles", "indexed", "skinned",
//                       "texture": null | {"width", "height", "texel": [r, g, b, a]}}],
//           "image_errors": ["..."],
//           "samples": [{"t", "nodes": {"name": [16 numbers, row-major]},
//                        "meshes": {"mesh name": [[x, y, z] * 3]
//                                   | {"skinned": true, "corners": [[x, y, z] * 3],
//                                      "triangles": [[x, y, z] * 3 * triangles]}}}]}]}]
// Matrices are row-major with column vectors (translation in elements 3, 7,
// 11), as `retroanim pose` prints them.  Node names are the file's own (the
// glTF node name, the FBX model name), not three.js's sanitised ones.
// A mesh is named after the scene mesh it holds: the glTF primitive's
// extras.name (GLTFLoader's geometry.userData.name), the FBX Mesh model's name
// (userData.originalName).  Its three "corners" are the world positions of
// its first triangle's corners (index ? index.getX(k) : k, the position
// attribute times the mesh's matrixWorld).  A SkinnedMesh ("skinned") is
// skinned on the CPU as three's shader does it (worldVertex), and reports
// every triangle's corners too.  "texel" is the top-left texel
// (x 0, y 0, the PNG's first row) of its material's map, as decoded.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { resolveObjectURL } from 'node:buffer';
import { inflateSync } from 'node:zlib';
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

// ---------------------------------------------------------------------------
// Images in Node: a TEST-HARNESS SHIM, not part of what users run.  In a
// browser three.js decodes textures with the browser's own image decoder
// (createImageBitmap for GLTFLoader, an <img> element for FBXLoader's
// ImageLoader); plain Node has neither (GLTFLoader stops at "self is not
// defined", ImageLoader at "document is not defined").  This stands in for
// just enough of them to decode the PNGs retroanim writes (8-bit RGBA, colour
// type 6, not interlaced, filters 0-4); any other PNG, and anything that is
// not a PNG, is refused with a clear error, which is reported in the job's
// "image_errors" (the loaders themselves swallow texture errors).
// ---------------------------------------------------------------------------

// GLTFLoader reads self.URL (URL.createObjectURL for images in bufferViews)
if (typeof globalThis.self === 'undefined') globalThis.self = globalThis;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(bytes, start, end) {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// {width, height, data: RGBA bytes, rows from the top} of a PNG, or throws.
export function decodePNG(input) {
  const b = input instanceof Uint8Array ? input : new Uint8Array(input);
  const sig = [137, 80, 78, 71, 13, 10, 26, 10];
  if (b.length < 8 || sig.some((v, i) => b[i] !== v)) throw new Error('PNG shim: not a PNG (bad signature)');
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let off = 8, ihdr = null, ended = false;
  const idat = [];
  while (off < b.length) {
    if (off + 12 > b.length) throw new Error('PNG shim: truncated chunk at byte ' + off);
    const len = dv.getUint32(off);
    const type = String.fromCharCode(b[off + 4], b[off + 5], b[off + 6], b[off + 7]);
    if (off + 12 + len > b.length) throw new Error(`PNG shim: chunk ${type} runs past the end`);
    if (crc32(b, off + 4, off + 8 + len) !== dv.getUint32(off + 8 + len)) throw new Error(`PNG shim: bad CRC in chunk ${type}`);
    const body = b.subarray(off + 8, off + 8 + len);
    if (ihdr === null && type !== 'IHDR') throw new Error(`PNG shim: first chunk is ${type}, not IHDR`);
    if (type === 'IHDR') {
      if (ihdr !== null || len !== 13) throw new Error('PNG shim: bad or repeated IHDR');
      const h = new DataView(body.buffer, body.byteOffset, 13);
      ihdr = { width: h.getUint32(0), height: h.getUint32(4), depth: body[8], colour: body[9],
               compression: body[10], filter: body[11], interlace: body[12] };
      if (ihdr.depth !== 8 || ihdr.colour !== 6 || ihdr.compression !== 0 || ihdr.filter !== 0 || ihdr.interlace !== 0)
        throw new Error(`PNG shim: only 8-bit RGBA (colour type 6), non-interlaced PNGs are supported; this one has bit depth ${ihdr.depth}, colour type ${ihdr.colour}, compression ${ihdr.compression}, filter method ${ihdr.filter}, interlace ${ihdr.interlace}`);
      if (ihdr.width === 0 || ihdr.height === 0) throw new Error('PNG shim: empty image');
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      ended = true;
      break;
    } else if ((b[off + 4] & 0x20) === 0) {
      throw new Error(`PNG shim: unsupported critical chunk ${type}`);
    } // ancillary chunks are skipped
    off += 12 + len;
  }
  if (!ended) throw new Error('PNG shim: no IEND');
  if (idat.length === 0) throw new Error('PNG shim: no IDAT');
  const { width, height } = ihdr;
  const stride = width * 4;
  const raw = inflateSync(Buffer.concat(idat));
  if (raw.length !== height * (stride + 1))
    throw new Error(`PNG shim: ${raw.length} bytes of image data, ${height * (stride + 1)} expected for ${width}x${height}`);
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1, dst = y * stride, up = dst - stride;
    for (let i = 0; i < stride; i++) {
      const x = raw[src + i];
      const a = i >= 4 ? out[dst + i - 4] : 0;
      const bb = y > 0 ? out[up + i] : 0;
      const c = y > 0 && i >= 4 ? out[up + i - 4] : 0;
      let p;
      switch (f) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = bb; break;
        case 3: p = (a + bb) >> 1; break;
        case 4: {
          const q = a + bb - c, pa = Math.abs(q - a), pb = Math.abs(q - bb), pc = Math.abs(q - c);
          p = pa <= pb && pa <= pc ? a : pb <= pc ? bb : c;
          break;
        }
        default: throw new Error(`PNG shim: row ${y} has filter type ${f} (0-4 exist)`);
      }
      out[dst + i] = (x + p) & 0xff;
    }
  }
  return { width, height, data: out };
}

const imageErrors = [];   // every refusal, for the current job
const pendingImages = []; // decodes the fake <img> elements started (FBXLoader does not wait for them)

async function imageBytes(what) {
  if (what instanceof Blob) {
    if (what.type && what.type !== 'image/png') throw new Error(`PNG shim: ${what.type} images are not supported`);
    return new Uint8Array(await what.arrayBuffer());
  }
  const url = String(what);
  if (url.startsWith('blob:')) {
    const blob = resolveObjectURL(url);
    if (!blob) throw new Error('PNG shim: unknown or revoked blob URL ' + url);
    return imageBytes(blob);
  }
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const head = url.slice(5, comma);
    if (comma < 0 || !/;base64$/.test(head)) throw new Error('PNG shim: only base64 data: URLs are supported');
    const mime = head.slice(0, -7);
    if (mime && mime !== 'image/png') throw new Error(`PNG shim: ${mime} images are not supported`);
    return new Uint8Array(Buffer.from(url.slice(comma + 1), 'base64'));
  }
  throw new Error('PNG shim: cannot fetch ' + url.slice(0, 80) + ' (only blob: and data: URLs)');
}

// GLTFLoader: ImageBitmapLoader fetches the blob: URL (Node's fetch reads
// those) and hands the Blob to createImageBitmap.
class NodeImageBitmap {
  constructor(img) { this.width = img.width; this.height = img.height; this.data = img.data; }
  close() {}
}
if (typeof globalThis.createImageBitmap === 'undefined') {
  globalThis.createImageBitmap = async (source) => {
    try {
      return new NodeImageBitmap(decodePNG(await imageBytes(source)));
    } catch (e) {
      imageErrors.push(String(e.message || e));
      throw e;
    }
  };
}

// FBXLoader: ImageLoader makes an <img>, listens for load/error, sets src.
class NodeImageElement extends EventTarget {
  constructor() {
    super();
    this.width = this.height = this.naturalWidth = this.naturalHeight = 0;
    this.complete = false;
    this.data = null;
    this._src = '';
  }
  get src() { return this._src; }
  set src(url) {
    this._src = url;
    this.complete = false;
    pendingImages.push(imageBytes(url).then((bytes) => {
      const img = decodePNG(bytes);
      this.width = this.naturalWidth = img.width;
      this.height = this.naturalHeight = img.height;
      this.data = img.data;
      this.complete = true;
      this.dispatchEvent(new Event('load'));
    }).catch((e) => {
      imageErrors.push(String(e.message || e));
      this.complete = true;
      this.dispatchEvent(new Event('error'));
    }));
  }
}
if (typeof globalThis.document === 'undefined') {
  globalThis.document = {
    createElementNS(ns, name) {
      if (name === 'img') return new NodeImageElement();
      throw new Error(`document shim: cannot create <${name}> (only <img>)`);
    },
  };
}

async function imagesSettled() {
  while (pendingImages.length) await Promise.all(pendingImages.splice(0));
}

function toArrayBuffer(buf) {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

// Node's fetch cannot read file: URLs, so a .gltf's external buffers (and
// images, should a file have them outside its buffers) are inlined as data:
// URIs before parsing.
function gltfText(file) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  const inline = (list, mime) => {
    for (const b of list ?? []) {
      if (b.uri && !b.uri.startsWith('data:')) {
        const bytes = readFileSync(resolve(dirname(file), decodeURIComponent(b.uri)));
        b.uri = `data:${b.mimeType ?? mime};base64,` + bytes.toString('base64');
      }
    }
  };
  inline(json.buffers, 'application/octet-stream');
  inline(json.images, 'image/png');
  return JSON.stringify(json);
}

async function load(file) {
  if (/\.fbx$/i.test(file)) {
    const group = new FBXLoader().parse(toArrayBuffer(readFileSync(file)), '');
    const named = [];
    // (FBXLoader returns a file's only top-level model itself as the group)
    group.traverse((o) => { if (o.userData.originalName !== undefined) named.push([o.userData.originalName, o]); });
    await imagesSettled(); // the textures' <img> elements load after parse() returns
    return { root: group, clips: group.animations, named, meshes: meshList(group, (o) => o.userData.originalName) };
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
  return { root: gltf.scene, clips: gltf.animations, named, cameras,
           meshes: meshList(gltf.scene, (o) => o.geometry.userData.name) };
}

function meshList(root, nameOf) {
  const out = [];
  root.traverse((o) => { if (o.isMesh) out.push([nameOf(o) ?? null, o]); });
  return out;
}

function meshInfo(name, o) {
  const g = o.geometry, pos = g.attributes.position, index = g.index;
  const material = Array.isArray(o.material) ? o.material[0] : o.material;
  const map = material ? material.map : null;
  let texture = null;
  if (map) {
    const img = map.image;
    texture = { width: img ? img.width : null, height: img ? img.height : null,
                texel: img && img.data ? Array.from(img.data.subarray(0, 4)) : null };
  }
  return { name, vertices: pos ? pos.count : 0, triangles: (index ? index.count : pos ? pos.count : 0) / 3,
           indexed: !!index, materials: Array.isArray(o.material) ? o.material.length : 1, texture,
           skinned: !!o.isSkinnedMesh };
}

// The world position of vertex i as three.js draws it.  A plain mesh: the
// position attribute times matrixWorld.  A SkinnedMesh is skinned on the GPU
// (skinning_vertex.glsl); applyBoneTransform is three's CPU copy of that
// shader: bindMatrixInverse x sum(weight x bone.matrixWorld x boneInverse) x
// bindMatrix x position, which (bindMode 'attached': bindMatrixInverse is
// matrixWorld's inverse, set by updateMatrixWorld) is in the mesh's local
// space, and the vertex shader then applies modelMatrix = matrixWorld.
// (Morph targets are not applied: retroanim writes none.)
function worldVertex(o, i) {
  const v = new THREE.Vector3().fromBufferAttribute(o.geometry.attributes.position, i);
  if (o.isSkinnedMesh) o.applyBoneTransform(i, v);
  return v.applyMatrix4(o.matrixWorld);
}

// the world positions of the first triangle's corners (limit 3) or of every
// triangle's corners (limit Infinity)
function corners(o, limit = 3) {
  const g = o.geometry, pos = g.attributes.position, index = g.index;
  const out = [];
  const n = index ? index.count : pos ? pos.count : 0;
  for (let k = 0; k < limit && k < n; k++) {
    const v = worldVertex(o, index ? index.getX(k) : k);
    out.push([v.x, v.y, v.z]);
  }
  return out;
}

// a mesh's report at one time: a plain mesh's first triangle's corners; a
// skinned mesh's also every triangle's corners (3 per triangle, in order),
// skinned as above
function meshSample(o) {
  if (!o.isSkinnedMesh) return corners(o);
  return { skinned: true, corners: corners(o), triangles: corners(o, Infinity) };
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
      imageErrors.length = 0;
      const { root, clips, named, cameras, meshes } = await load(job.file); // fresh scene per animation
      const clip = clips[want.index];
      const out = { index: want.index, clip: clip ? clip.name : null, clips: clips.length,
                    duration: clip ? clip.duration : null, meshes: meshes.map(([name, o]) => meshInfo(name, o)),
                    image_errors: imageErrors.slice(), samples: [] };
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
        const meshCorners = {};
        for (const [name, o] of meshes) if (name !== null && !(name in meshCorners)) meshCorners[name] = meshSample(o);
        out.samples.push({ t, nodes, meshes: meshCorners });
      }
      res.anims.push(out);
    }
  } catch (e) {
    res.error = String(e && e.stack ? e.stack : e);
  }
  results.push(res);
}
process.stdout.write(JSON.stringify(results));
