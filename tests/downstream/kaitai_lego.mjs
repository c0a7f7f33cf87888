// An independent parser for LEGO Island animations: the Kaitai description
// (lego_animation.ksy) compiled to JavaScript by the official compiler at run time, then the
// parsed tree written out with the field names `retroanim dump --source` uses.
//
//   node kaitai_lego.mjs WORKDIR FILE[:body] ...
//
// Prints one JSON object per file: {file, parsed} or {file, error}.  ":body" parses a body-only
// animation (the form embedded in WDB models: no header, no camera), which the .ksy has no
// top-level type for, from its own actor_entry and tree_node types, the way LegoAnim::Read reads it.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const yaml = require("js-yaml");
const compiler = require("kaitai-struct-compiler");
const { KaitaiStream } = require("kaitai-struct");

const [work, ...files] = process.argv.slice(2);
const ksy = yaml.load(fs.readFileSync(path.join(here, "lego_animation.ksy"), "utf8"));
const generated = await compiler.compile("javascript", ksy, null, false);
fs.mkdirSync(work, { recursive: true });
let mainFile = null;
for (const [name, code] of Object.entries(generated)) {
  // the generated modules are CommonJS (UMD) and require("kaitai-struct/KaitaiStream")
  const out = path.join(work, name.replace(/\.js$/, ".cjs"));
  fs.writeFileSync(out, code.replace(/(require\()'kaitai-struct\/KaitaiStream'\)/g,
    (_, call) => call + JSON.stringify(require.resolve("kaitai-struct/KaitaiStream")) + ")"));
  mainFile = out;
}
const { Animation } = require(mainFile);

const key = (k) => ({ time: k.key.time, flags: k.key.flags });
const vec = (k) => ({ ...key(k), x: k.x, y: k.y, z: k.z });
const actor = (a) => ({ name: a.nameLength > 0 ? a.name : "", type: a.nameLength > 0 ? a.actorType : 0 });

function node(n) {
  const d = n.data;
  return {
    name: d.nameLength > 0 ? d.name : "",
    translation_keys: d.translationKeys.map(vec),
    rotation_keys: d.rotationKeys.map((k) => ({ ...key(k), w: k.angle, x: k.x, y: k.y, z: k.z })),
    scale_keys: d.scaleKeys.map(vec),
    morph_keys: d.morphKeys.map((k) => ({ ...key(k), visible: k.visible })),
    children: n.children.map(node),
  };
}

function parseWhole(io) {
  const a = new Animation(io);
  const out = {
    magic: a.magic, bounding_radius: a.boundingRadius,
    center_x: a.centerX, center_y: a.centerY, center_z: a.centerZ,
    has_camera_anim: a.hasCameraAnim, unused: a.unused,
    num_actors: a.numActors, actors: a.actors.map(actor), duration: a.duration,
  };
  if (a.hasCameraAnim !== 0) {
    const c = a.cameraAnim;
    out.camera_anim = {
      translation_keys: c.translationKeys.map(vec),
      target_keys: c.targetKeys.map(vec),
      rotation_keys: c.rotationKeys.map((k) => ({ ...key(k), z: k.z })),
    };
  }
  out.root_node = node(a.rootNode);
  return out;
}

function parseBody(io) {
  const numActors = io.readU4le();
  const actors = [];
  for (let i = 0; i < numActors; i++) actors.push(actor(new Animation.ActorEntry(io, null, null)));
  const duration = io.readS4le();
  return { num_actors: numActors, actors, duration, root_node: node(new Animation.TreeNode(io, null, null)) };
}

for (const arg of files) {
  const body = arg.endsWith(":body");
  const file = body ? arg.slice(0, -5) : arg;
  try {
    const bytes = fs.readFileSync(file);
    const io = new KaitaiStream(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    const parsed = body ? parseBody(io) : parseWhole(io);
    parsed.trailing_bytes = io.size - io.pos;
    console.log(JSON.stringify({ file, parsed }));
  } catch (e) {
    console.log(JSON.stringify({ file, error: String(e && e.message ? e.message : e) }));
  }
}
