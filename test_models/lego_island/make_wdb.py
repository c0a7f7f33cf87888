#!/usr/bin/env python3
"""Write the LEGO Island WORLD.WDB test fixtures (and the .ani bound to them),
byte by byte, from the format description, and their expectations.

Source of truth: docs/formats/lego_island.md, "WORLD.WDB" (layouts, packed
corners, materials and colour aliases, LOD order, the static placement rule,
node -> ROI binding, the coordinate frame).  This script shares no code with
retroanim: every field is an explicit little-endian struct.pack, and every
expected value is computed here with the engine's own conventions (row
vectors, v' = v . M; a key's local matrix S.R + T; world = local . parent),
then taken to the converted frame (z -> -z, triangles (a, b, c) -> (a, c, b)).

Usage:  python3 make_wdb.py      (writes the files into this folder)

Fixtures:
  car.wdb            a model "car" with a root ROI of its own (two LODs: the
                     second, with reuse corners, one pointing forward, is the
                     one exported) and two child ROIs sharing the LOD list of
                     the global part "wheel" (a skipped LOD, then a textured
                     mesh and an inh mesh); wheel02 is recoloured "lego red";
                     the embedded animation moves the root by (5, 0, 0),
                     which the placement cancels.
  car_drive.ani      an animation of actor "car" (type 0), bound to car.wdb
                     with the option wdb=car.wdb.
  minifig.wdb        the global parts and textures a character needs.
  pepper_wave.ani    an animation of actor "pepper" (type 2): the character
                     assembled from the tables, bound to minifig.wdb.
  bad_version.wdb, bad_reuse.wdb, bad_offset.wdb: broken variants (a bad
                     version or offset is refused; a bad mesh is left out
                     with a warning, the rest of the model loads).
  lookup.wdb         the engine's lookup orders: a part name in the global
                     parts and in a world (the global one wins), a shared LOD
                     list only a model ROI provides, a ROI name at two depths
                     (FindChildROI: direct children before grandchildren),
                     a model by root ROI name in the preferred world before
                     another world's directory name; meshes the reader
                     tolerates (bad texture index, bad vertex count), equal
                     wireframe materials shared, a textured mesh without UVs.
  lookup_bind.ani    two actors on lookup.wdb: one broken model (a warning)
                     and one bound.
  minifig_notex.wdb, pepper_notex.ani: pepper without her chest texture.
"""

import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def u8(v): return struct.pack('<B', v)
def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)
def s32(v): return struct.pack('<i', v)
def f32(v): return struct.pack('<f', v)
def f32r(v): return struct.unpack('<f', struct.pack('<f', v))[0]   # the float the file holds


def dir_str(s):
    """A directory string: u32 length with the trailing NUL counted."""
    raw = s.encode('ascii') + b'\0'
    return u32(len(raw)) + raw


def blob_str(s):
    """A string inside a blob: u32 length, no NUL."""
    raw = s.encode('ascii')
    return u32(len(raw)) + raw


# --- images and texture lists ----------------------------------------------------------------------------
def image(w, h, palette, pixels):
    out = u32(w) + u32(h) + u32(len(palette))
    for r, g, b in palette:
        out += u8(r) + u8(g) + u8(b)
    return out + bytes(pixels)


WHEEL_PAL = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
WHEEL_PIX = [0, 1, 2, 3]   # 2 x 2, row 0 the top; index 3 is past the palette: black


def texture_list(entries, model=False):
    """entries: (name, image bytes); a model blob's list has skipTextures (0)."""
    out = u32(len(entries))
    if model:
        out += u32(0)
    for name, img in entries:
        out += blob_str(name) + img
    return out


# --- LODs and meshes ------------------------------------------------------------------------------------
CREATE = 0x80000000


def create(pos, nrm):
    return CREATE | (nrm << 16) | pos


def mesh(polys, nverts, tex_idx=None, color=(0, 0, 0), alpha=0.0, shading=1, shiny=0, use_alias=0,
         texture='', material=''):
    """polys: list of 3-tuples of packed corners."""
    out = u16(len(polys)) + u16(nverts)
    for p in polys:
        out += b''.join(u32(c) for c in p)
    if tex_idx is None:
        out += u32(0)
    else:
        out += u32(len(tex_idx))
        out += b''.join(u32(t) for t in tex_idx)
    out += u8(color[0]) + u8(color[1]) + u8(color[2]) + f32(alpha)
    out += u8(shading) + u8(shiny) + u8(0) + u8(use_alias)
    return out + blob_str(texture) + blob_str(material)


def lod(positions, normals, uvs, meshes, flags=0):
    out = u32(flags) + u32(len(meshes))
    counts = (len(positions) & 0x7FFF) | ((len(normals) & 0x7FFF) << 17)
    out += u32(counts) + s32(len(uvs))
    for v in positions + normals:
        out += f32(v[0]) + f32(v[1]) + f32(v[2])
    for uv in uvs:
        out += f32(uv[0]) + f32(uv[1])
    return out + b''.join(meshes)


SKIP_LOD = u32(0x04)


# --- the .ani body and nodes ---------------------------------------------------------------------------
def node(name, T=(), R=(), S=(), children=()):
    raw = name.encode('ascii')
    out = u32(len(raw)) + raw
    out += u16(len(T)) + b''.join(s32(ms | (fl << 24)) + f32(x) + f32(y) + f32(z) for ms, fl, x, y, z in T)
    out += u16(len(R)) + b''.join(s32(ms | (fl << 24)) + f32(w) + f32(x) + f32(y) + f32(z) for ms, fl, w, x, y, z in R)
    out += u16(len(S)) + b''.join(s32(ms | (fl << 24)) + f32(x) + f32(y) + f32(z) for ms, fl, x, y, z in S)
    out += u16(0)
    return out + u32(len(children)) + b''.join(children)


def ani_body(actors, duration_ms, root):
    out = u32(len(actors))
    for name, typ in actors:
        out += blob_str(name) + (u32(typ) if name else b'')
    return out + s32(duration_ms) + root


def ani_file(actors, duration_ms, root):
    return s32(0x11) + f32(1) + f32(0) + f32(0) + f32(0) + s32(0) + s32(0) + ani_body(actors, duration_ms, root)


# --- engine math (row vectors) -----------------------------------------------------------------------------
def mat_mul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(4)) for j in range(4)] for i in range(4)]


def ident():
    return [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]


def rot_row(w, x, y, z):
    """The engine's row-vector matrix of a quaternion: the usual rotation matrix of q, used as v . R."""
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 0],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 0],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), 0],
            [0, 0, 0, 1]]


def local(t=(0, 0, 0), q=(1, 0, 0, 0), s=(1, 1, 1)):
    """S.R + T (row vectors)."""
    r = rot_row(*q)
    m = [[r[i][j] * s[i] for j in range(4)] for i in range(3)] + [[t[0], t[1], t[2], 1]]
    return m


def inverse_rigid(m):
    r = [[m[j][i] for j in range(3)] for i in range(3)]   # transpose of the rotation
    t = [-sum(m[3][k] * r[k][j] for k in range(3)) for j in range(3)]
    return [r[0] + [0], r[1] + [0], r[2] + [0], t + [1]]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a):
    n = math.sqrt(sum(c * c for c in a))
    return tuple(c / n for c in a)


def calc_local_transform(pos, d, up):
    """Rows: right = normalize(up x dir), up' = dir x right, dir, position."""
    d = norm(d)
    right = norm(cross(up, d))
    up2 = cross(d, right)
    return [list(right) + [0], list(up2) + [0], list(d) + [0], list(pos) + [1]]


def apply(v, m):
    return tuple(sum(v[k] * m[k][j] for k in range(3)) + m[3][j] for j in range(3))


def conv(p):
    return (p[0], p[1], -p[2])


def fmt(v):
    s = '%.6f' % v
    s = s.rstrip('0').rstrip('.') if '.' in s else s
    return '0' if s in ('-0', '') else s


def pts(ps):
    return ';'.join(','.join(fmt(c) for c in p) for p in ps)


def slerp(q0, q1, f):
    d = sum(a * b for a, b in zip(q0, q1))
    th = math.acos(max(-1.0, min(1.0, d)))
    if th < 1e-9:
        return q0
    a, b = math.sin((1 - f) * th) / math.sin(th), math.sin(f * th) / math.sin(th)
    return tuple(a * x + b * y for x, y in zip(q0, q1))


# --- car.wdb --------------------------------------------------------------------------------------------
# The global part "wheel": LOD 0 skipped (no body), LOD 1 with a textured
# triangle and an inh triangle.
WHEEL_POS = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
WHEEL_NRM = [(0.0, 0.0, -1.0)]
WHEEL_UV = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]


def wheel_lod():
    textured = mesh([(create(0, 0), create(1, 0), create(2, 0))], 3, tex_idx=[0, 1, 2], texture='WHEEL.GIF')
    inh = mesh([(create(0, 0), create(2, 0), create(1, 0))], 3, color=(10, 20, 30), material='inhcolor')
    return lod(WHEEL_POS, WHEEL_NRM, WHEEL_UV, [textured, inh])


def part_blob(parts, textures):
    """parts: (name, [lod bytes]).  textureInfoOffset at 0, numROIs, the parts, then the texture list."""
    body = b''
    head = 8
    for name, lods in parts:
        start = head + len(body)
        rec_head = blob_str(name) + u32(len(lods))
        after = start + len(rec_head) + 4 + sum(len(x) for x in lods)
        body += rec_head + u32(after) + b''.join(lods)
    tex_at = head + len(body)
    return u32(tex_at) + u32(len(parts)) + body + texture_list(textures)


# The root ROI's own LODs: LOD 0 one triangle (coarse), LOD 1 a quad whose
# second triangle reuses vertices 2 and 0 and whose first triangle reuses
# vertex 3 before it is created (a forward reference).
CAR_POS = [(-1.0, 0.0, -2.0), (1.0, 0.0, -2.0), (1.0, 0.0, 2.0), (-1.0, 0.0, 2.0)]
CAR_NRM = [(0.0, 1.0, 0.0)]


def car_lods():
    coarse = lod(CAR_POS[:3], CAR_NRM, [], [mesh([(create(0, 0), create(1, 0), create(2, 0))], 3, color=(200, 200, 200))])
    # corners: t0 = (create 0, create 1, reuse 3) ; t1 = (create 2, create 3, reuse 0)
    # vertices are numbered by creation: v0 = pos0, v1 = pos1, v2 = pos2, v3 = pos3
    fine = lod(CAR_POS, CAR_NRM, [], [mesh([(create(0, 0), create(1, 0), 3), (create(2, 0), create(3, 0), 0)], 4,
                                          color=(0, 84, 140), alpha=0.5)])
    return [coarse, fine]


def roi(name, material='', lods=None, shared=False, children=(), blob_at=0, bad_end=False):
    """A ROI record; lods (list of bytes) unless shared.  blob_at: where this record starts in its blob (for lodEndOffset);
    bad_end: a lodEndOffset far outside the blob."""
    out = blob_str(name) + b''.join(f32(v) for v in (0, 0, 0, 1)) + b''.join(f32(v) for v in (-1, -1, -1, 1, 1, 1))
    out += blob_str(material) + u8(1 if shared else 0)
    if not shared:
        out += u32(len(lods or []))
        if lods:
            end = blob_at + len(out) + 4 + sum(len(x) for x in lods)
            out += u32(0x7FFFFFF0 if bad_end else end) + b''.join(lods)
    out += u32(len(children))
    at = blob_at + len(out)
    for c in children:
        out += c(at)
        at = blob_at + len(out)
    return out


CAR_ANIM_ROOT_T = (5.0, 0.0, 0.0)
H = math.sqrt(0.5)


def model_blob(anim, root_fn, textures=()):
    """version 19, textureInfoOffset, numROIs 1, the animation body, the ROI tree, the texture list."""
    head = 12 + len(anim)
    rois = root_fn(head)
    tex_at = head + len(rois)
    return u32(19) + u32(tex_at) + u32(1) + anim + rois + texture_list(list(textures), model=True)


def car_model():
    anim = ani_body([], 0, node('car', T=[(0, 1, *CAR_ANIM_ROOT_T)], children=[
        node('wheel01', T=[(0, 1, 1.0, 0.0, 0.0)]),
        node('wheel02', T=[(0, 1, -1.0, 0.0, 0.0)], R=[(0, 1, H, 0.0, H, 0.0)]),
    ]))

    def root(at):
        return roi('car', lods=car_lods(), blob_at=at, children=[
            lambda a: roi('wheel01', shared=True, blob_at=a),
            lambda a: roi('wheel02', material='lego red', shared=True, blob_at=a),
        ])
    return model_blob(anim, root)


CAR_LOC, CAR_DIR, CAR_UP = (10.0, 0.0, 20.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)


def wdb(worlds, global_textures, global_parts, blobs):
    """worlds: (name, [(part name, blob key)], [(model name, blob key, presenter, loc, dir, up, visible)]);
    blobs: key -> bytes, placed after the global blocks in order."""
    def directory(offsets):
        out = s32(len(worlds))
        for name, parts, models in worlds:
            out += dir_str(name) + s32(len(parts))
            for pname, key in parts:
                out += dir_str(pname) + u32(len(blobs[key])) + u32(offsets[key])
            out += s32(len(models))
            for mname, key, pres, loc, d, up, vis in models:
                out += dir_str(mname) + u32(len(blobs[key])) + u32(offsets[key]) + dir_str(pres)
                out += b''.join(f32(v) for v in loc + d + up) + u8(vis)
        return out
    gt = texture_list(global_textures)
    first = len(directory({k: 0 for k in blobs})) + 4 + len(gt) + 4 + len(global_parts)
    offsets, at = {}, first
    for k, b in blobs.items():
        offsets[k] = at
        at += len(b)
    out = directory(offsets) + u32(len(gt)) + gt + u32(len(global_parts)) + global_parts
    for b in blobs.values():
        out += b
    return out, offsets


def write(name, data):
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)


def write_txt(name, text):
    with open(os.path.join(HERE, name), 'w') as f:
        f.write(text)


def car_expectations():
    """World positions of every mesh of car.wdb's model in its static placement."""
    P = calc_local_transform(CAR_LOC, CAR_DIR, CAR_UP)
    a_root = local(t=CAR_ANIM_ROOT_T)
    a_w1 = mat_mul(local(t=(1, 0, 0)), a_root)
    a_w2 = mat_mul(local(t=(-1, 0, 0), q=(H, 0, H, 0)), a_root)
    m = mat_mul(inverse_rigid(a_root), P)
    W = {'car': mat_mul(a_root, m), 'wheel01': mat_mul(a_w1, m), 'wheel02': mat_mul(a_w2, m)}
    return W


def main():
    wheel_tex = image(2, 2, WHEEL_PAL, WHEEL_PIX)
    gparts = part_blob([('wheel', [SKIP_LOD, wheel_lod()])], [])
    car = car_model()
    data, offsets = wdb([('ACT1', [], [('car', 'car', 'LegoActorPresenter', CAR_LOC, CAR_DIR, CAR_UP, 1)])],
                        [('wheel.gif', wheel_tex)], gparts, {'car': car})
    write('car.wdb', data)
    W = car_expectations()
    car_mesh = [apply(p, W['car']) for p in CAR_POS]            # v0..v3 in creation order
    w_tex = [apply(p, W['wheel01']) for p in WHEEL_POS]        # textured: created 0, 1, 2
    w_inh = [apply(WHEEL_POS[i], W['wheel01']) for i in (0, 2, 1)]
    w2_tex = [apply(p, W['wheel02']) for p in WHEEL_POS]
    w2_inh = [apply(WHEEL_POS[i], W['wheel02']) for i in (0, 2, 1)]
    red = [((c / 255 + 0.055) / 1.055) ** 2.4 for c in (0xcb, 0x12, 0x20)]
    file_col = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in (10, 20, 30)]
    blue = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in (0, 84, 140)]
    txt = f"""car.wdb -- a model with two ROIs sharing a global part's LOD list (make_wdb.py)

World ACT1 holds one model, "car" (LegoActorPresenter), placed at
location {CAR_LOC}, direction {CAR_DIR}, up {CAR_UP}.  The global textures
hold wheel.gif (2 x 2, palette red, green, blue; the fourth pixel indexes
past the palette: black).  The global parts hold "wheel": LOD 0 flagged
0x04 (no body), LOD 1 a textured triangle (WHEEL.GIF, lower-cased when
read) and an untextured triangle whose material name starts "inh".

The model's ROI tree: car (two LODs of its own: a coarse triangle, then a
quad whose corners reuse vertex 3 before it is created and vertex 0 after;
colour (0, 84, 140) with alpha 0.5), wheel01 and wheel02 (sharedLods: the
list "wheel", the name without its digits); wheel02's colourOrTexture is
"lego red", which recolours its inh mesh only.

The embedded animation poses car at T(5, 0, 0), wheel01 at T(1, 0, 0) and
wheel02 at T(-1, 0, 0) with a quarter turn about Y under it.  The placement
W(r) = A(r) . A_root^-1 . P cancels the root's (5, 0, 0): car sits at P.
Vertex v of ROI r is drawn at v . W(r); the converted frame negates z and
turns (a, b, c) into (a, c, b).

expect-format lego_wdb
expect-nodes 4
expect-meshes 5
expect-mesh name=car_mesh node=car vertices=4 triangles=2 material=color_00548c uv=0 normals=1 colors=0
expect-world mesh=car_mesh p={pts([conv(p) for p in car_mesh])}
expect-indices mesh=car_mesh i=0,3,1;2,0,3
expect-world mesh=wheel01_mesh p={pts([conv(p) for p in w_tex])}
expect-world mesh=wheel01_mesh#2 p={pts([conv(p) for p in w_inh])}
expect-world mesh=wheel02_mesh p={pts([conv(p) for p in w2_tex])}
expect-world mesh=wheel02_mesh#2 p={pts([conv(p) for p in w2_inh])}
expect-mesh-material mesh=wheel01_mesh name=wheel.gif
expect-mesh-material mesh=wheel02_mesh name=wheel.gif
expect-mesh-uv mesh=wheel01_mesh uv=0,0;1,0;0,1
expect-material name=wheel.gif color=1,1,1,1 texture=wheel.gif alpha=OPAQUE double_sided=0 unlit=0
expect-mesh-color mesh=wheel01_mesh#2 color={','.join(fmt(c) for c in file_col)},1
expect-mesh-color mesh=wheel02_mesh#2 color={','.join(fmt(c) for c in red)},1
expect-mesh-color mesh=car_mesh color={','.join(fmt(c) for c in blue)},0.5
expect-texture name=wheel.gif size=2x2 format=P8 wrap=REPEAT,REPEAT nearest=1
expect-texel texture=wheel.gif x=0 y=0 rgba=255,0,0,255
expect-texel texture=wheel.gif x=1 y=0 rgba=0,255,0,255
expect-texel texture=wheel.gif x=0 y=1 rgba=0,0,255,255
expect-texel texture=wheel.gif x=1 y=1 rgba=0,0,0,255
"""
    write_txt('car.txt', txt)

    # --- the part alone: model=wheel, at identity ---
    # (checked by test_wdb with the option; no fixture of its own)

    # --- broken variants ---
    car_at = offsets['car']
    bad = bytearray(data)
    struct.pack_into('<I', bad, car_at, 18)
    write('bad_version.wdb', bytes(bad))
    write_txt('bad_version.txt', f"""bad_version.wdb -- car.wdb with the model's version 18 (make_wdb.py)

The model blob must start with version 19; the reader refuses the blob at
its first byte ({car_at}).

expect-error-offset {car_at}
""")
    # the fine LOD's first triangle's third corner: reuse 3 -> reuse 4 (>= numMeshVerts 4)
    anim_len = len(ani_body([], 0, node('car', T=[(0, 1, *CAR_ANIM_ROOT_T)], children=[
        node('wheel01', T=[(0, 1, 1.0, 0.0, 0.0)]), node('wheel02', T=[(0, 1, -1.0, 0.0, 0.0)], R=[(0, 1, H, 0.0, H, 0.0)])])))
    roi_at = car_at + 12 + anim_len
    roi_head = len(blob_str('car')) + 40 + len(blob_str('')) + 1 + 4 + 4
    coarse, fine = car_lods()
    fine_at = roi_at + roi_head + len(coarse)
    mesh_at = fine_at + 16 + 12 * 4 + 12 * 1
    corner_at = mesh_at + 4 + 8
    bad = bytearray(data)
    assert struct.unpack_from('<I', bad, corner_at)[0] == 3
    struct.pack_into('<I', bad, corner_at, 4)
    write('bad_reuse.wdb', bytes(bad))
    write_txt('bad_reuse.txt', f"""bad_reuse.wdb -- car.wdb with a reuse corner naming vertex 4 of 4 (make_wdb.py)

The fine LOD of ROI car: its first triangle's third corner (bit 31 clear,
a reuse) names vertex 4, but the mesh has numMeshVerts 4.  The engine would
read past its vertex buffer; the reader refuses that mesh (not the load):
the corner at byte {corner_at} is named in a warning, car has no mesh, the
wheels load as in car.wdb.

expect-format lego_wdb
expect-nodes 4
expect-meshes 4
expect-warning mesh.poly_indices at byte {corner_at}
""")
    # the model's data offset past the end of the file
    bad = bytearray(data)
    off_at = data.index(dir_str('car')) + len(dir_str('car')) + 4
    assert struct.unpack_from('<I', bad, off_at)[0] == car_at
    struct.pack_into('<I', bad, off_at, len(data) - 4)
    write('bad_offset.wdb', bytes(bad))
    write_txt('bad_offset.txt', f"""bad_offset.wdb -- car.wdb with the model's data offset near the end (make_wdb.py)

The directory entry of model car says its {len(car)} bytes start at
{len(data) - 4}, 4 bytes before the end of the file: the reader refuses the
offset field at byte {off_at}.

expect-error-offset {off_at}
""")

    # --- car_drive.ani: actor car (type 0), bound with wdb=car.wdb ---
    drive = ani_file([('car', 0)], 1000, node('', children=[
        node('CAR', T=[(0, 1, 0.0, 0.0, 0.0), (1000, 1, 10.0, 0.0, 0.0)], children=[
            node('-mover', T=[(0, 1, 0.0, 1.0, 0.0)], children=[
                node('WHEEL01', R=[(0, 1, 1.0, 0.0, 0.0, 0.0), (1000, 1, H, H, 0.0, 0.0)]),
            ]),
        ]),
    ]))
    write('car_drive.ani', drive)
    lines = []
    for t in (0.0, 0.5, 1.0):
        car_l = local(t=(10 * t, 0, 0))
        mover = mat_mul(local(t=(0, 1, 0)), car_l)
        q = slerp((1, 0, 0, 0), (H, H, 0, 0), t)
        w1 = mat_mul(local(q=q), mover)
        lines.append(f"expect-world mesh=car_mesh t={fmt(t)} p={pts([conv(apply(p, car_l)) for p in CAR_POS])}")
        lines.append(f"expect-world mesh=wheel01_mesh t={fmt(t)} p={pts([conv(apply(p, w1)) for p in WHEEL_POS])}")
    # wheel02: no node binds it: it stays where the WDB placement put it
    W = car_expectations()
    lines.append(f"expect-world mesh=wheel02_mesh t=0.5 p={pts([conv(apply(p, W['wheel02'])) for p in WHEEL_POS])}")
    write_txt('car_drive.txt', """car_drive.ani -- actor car (type 0) bound to car.wdb's model (make_wdb.py)

An unnamed root, CAR (translation (0,0,0) at 0 ms to (10,0,0) at 1000 ms),
-mover under it (a name starting '-' binds nothing; its transform still
composes), WHEEL01 under that (rotation from identity to a quarter turn
about X).  Loaded with --option wdb=car.wdb:

- CAR binds the scene ROI car (the model whose name is the actor's);
- WHEEL01 binds car's child wheel01 (FindChildROI searches the subtree of
  the context ROI; -mover leaves the context unchanged);
- wheel02 is bound by no node: it keeps its static world matrix (the WDB
  placement), hung on RootNode with that matrix in its vertices.

A bound ROI's mesh is drawn at v . M(node, t), M(node) = L(node) . M(parent);
the WDB placement is not composed in.  Without the option the scene is the
plain animation (no meshes).

expect-duration 1.0
expect-pose t=0.5 node=CAR world=1,0,0,5,0,1,0,0,0,0,1,0,0,0,0,1
expect-pose t=1 node=-mover world=1,0,0,10,0,1,0,1,0,0,1,0,0,0,0,1
expect-option wdb=car.wdb
expect-meshes 5
""" + '\n'.join(lines) + '\n')

    # --- minifig.wdb and pepper_wave.ani: a character from the tables ---
    tri_pos = [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0)]
    tri_nrm = [(0.0, 0.0, -1.0)]
    uv = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]

    def part_lod(textured_inh):
        """Each part: a plain mesh (file colour), and an inh mesh, textured when textured_inh."""
        plain = mesh([(create(0, 0), create(1, 0), create(2, 0))], 3, color=(1, 2, 3))
        if textured_inh:
            inh = mesh([(create(0, 0), create(2, 0), create(1, 0))], 3, tex_idx=[0, 2, 1], texture='inhtex.gif')
        else:
            inh = mesh([(create(0, 0), create(2, 0), create(1, 0))], 3, color=(9, 9, 9), material='inh')
        return lod(tri_pos, tri_nrm, uv, [plain, inh])
    names = ['bodyred', 'phat', 'infogron', 'head', 'arm-lft', 'arm-rt', 'claw-lft', 'leg']
    textured = {'bodyred', 'head'}
    mparts = part_blob([(n, [part_lod(n in textured)]) for n in names], [])
    grey = image(1, 1, [(128, 128, 128)], [0])
    chest = image(1, 1, [(1, 100, 200)], [0])
    face = image(1, 1, [(250, 200, 10)], [0])
    stand_anim = ani_body([], 0, node('stand'))

    def stand(at):
        return roi('stand', blob_at=at, children=[lambda a: roi('head01', material='t_peprface.gif', shared=True, blob_at=a)])
    mdata, _ = wdb([('ACT1', [], [('stand_m', 'stand', 'LegoEntityPresenter', (0.0, 0.0, 0.0), (0.0, 0.0, 1.0),
                                   (0.0, 1.0, 0.0), 1)])],
                   [('inhtex.gif', grey), ('peprchst.gif', chest), ('peprface.gif', face)], mparts,
                   {'stand': model_blob(stand_anim, stand)})
    write('minifig.wdb', mdata)
    write_txt('minifig.txt', """minifig.wdb -- the global parts and textures of a character (make_wdb.py)

One world (ACT1) with one model, "stand_m" (at the origin, identity
placement; its root ROI is named "stand", which finds it too): a root ROI without LODs and a child head01 sharing the LOD list
"head" (its name without the digits), coloured "t_peprface.gif" (a texture
for its textured inh mesh).  The global parts bodyred, phat, infogron,
head, arm-lft, arm-rt, claw-lft and leg, each one LOD of two triangles: a
plain mesh with the file colour (1, 2, 3) and an inh mesh (textured with
inhtex.gif for bodyred and head, else coloured (9, 9, 9) with the material
name "inh"); the global textures inhtex.gif, peprchst.gif, peprface.gif
(1 x 1 each).

expect-format lego_wdb
expect-nodes 3
expect-meshes 2
expect-mesh name=head01_mesh node=head01 vertices=3 triangles=1 material=color_010203 uv=0 normals=1 colors=0
expect-mesh name=head01_mesh#2 node=head01 vertices=3 triangles=1 material=peprface.gif uv=1 normals=1 colors=0
expect-world mesh=head01_mesh#2 p=0,0,0;0,0.1,0;0.1,0,0
expect-indices mesh=head01_mesh#2 i=0,2,1
expect-texel texture=peprface.gif x=0 y=0 rgba=250,200,10,255
""")
    wave = ani_file([('pepper', 2)], 1000, node('', children=[
        node('PEPPER', T=[(0, 1, 1.0, 0.0, 0.0)], children=[
            node('BODY', T=[(0, 1, 0.0, 0.5, 0.0)], children=[
                node('ARM-LFT', R=[(0, 1, 1.0, 0.0, 0.0, 0.0), (1000, 1, H, 0.0, 0.0, H)]),
                node('HEAD', T=[(0, 1, 0.0, 1.0, 0.0)]),
            ]),
        ]),
    ]))
    write('pepper_wave.ani', wave)
    plines = []
    for t in (0.0, 0.5, 1.0):
        root_l = local(t=(1, 0, 0))
        body = mat_mul(local(t=(0, 0.5, 0)), root_l)
        arm = mat_mul(local(q=slerp((1, 0, 0, 0), (H, 0, 0, H), t)), body)
        head = mat_mul(local(t=(0, 1, 0)), body)
        plines.append(f"expect-world mesh=arm-lft_mesh t={fmt(t)} p={pts([conv(apply(p, arm)) for p in tri_pos])}")
        plines.append(f"expect-world mesh=head_mesh t={fmt(t)} p={pts([conv(apply(p, head)) for p in tri_pos])}")
        plines.append(f"expect-world mesh=body_mesh t={fmt(t)} p={pts([conv(apply(p, body)) for p in tri_pos])}")
    # claw-rt: no node binds it: its rest transform (g_actorLODs) in the character's frame, the root at identity
    claw_rt = calc_local_transform((f32r(0.343317), f32r(0.69924), f32r(0.096123)),
                                   (f32r(0.00606), f32r(-0.034369), f32r(0.999391)),
                                   (f32r(-0.190704), f32r(0.981027), f32r(0.034894)))
    plines.append(f"expect-world mesh=claw-rt_mesh t=0.5 p={pts([conv(apply(p, claw_rt)) for p in tri_pos])}")
    lin = lambda c: c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
    col = lambda rgb: ','.join(fmt(lin(c)) for c in rgb) + ',1'
    write_txt('pepper_wave.txt', """pepper_wave.ani -- actor pepper (type 2): the character from the tables (make_wdb.py)

Loaded with --option wdb=minifig.wdb.  Pepper (the first row of the
character table) wears bodyred with the chest texture peprchst.gif, the hat
phat in lego white, a lego blue groin, the face peprface.gif, lego red arms,
lego yellow claws and lego blue legs.  The root ROI pepper binds PEPPER;
BODY, ARM-LFT and HEAD bind its parts (FindChildROI in the character's
subtree).  The other parts (infohat, infogron, arm-rt, claws, legs) are
bound by no node: they keep their rest transform from g_actorLODs with the
character root at identity, hung on RootNode.

Recolouring touches the inh meshes only: body's textured inh mesh takes
peprchst.gif, head's peprface.gif; arm-lft's untextured inh mesh takes
lego red (0xcb, 0x12, 0x20); every plain mesh keeps the file colour (1, 2, 3).
Colours are linearised from the game's 8-bit display values.

expect-duration 1.0
expect-pose t=0.5 node=BODY world=1,0,0,1,0,1,0,0.5,0,0,1,0,0,0,0,1
expect-pose t=0 node=HEAD world=1,0,0,1,0,1,0,1.5,0,0,1,0,0,0,0,1
expect-option wdb=minifig.wdb
expect-meshes 20
expect-mesh-material mesh=body_mesh#2 name=peprchst.gif
expect-mesh-material mesh=head_mesh#2 name=peprface.gif
expect-mesh-color mesh=arm-lft_mesh#2 color=""" + col((0xcb, 0x12, 0x20)) + """
expect-mesh-color mesh=leg-lft_mesh#2 color=""" + col((0x00, 0x54, 0x8c)) + """
expect-mesh-color mesh=arm-lft_mesh color=""" + col((1, 2, 3)) + """
expect-mesh-color mesh=infohat_mesh#2 color=""" + col((0xfa, 0xfa, 0xfa)) + """
""" + '\n'.join(plines) + '\n')

    lookup_fixtures()
    notex_fixtures(tri_pos, tri_nrm, uv, part_lod, names, grey, face, stand_anim, stand, wave, plines)


def lin(c):
    c = c / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def col(rgb):
    return ','.join(fmt(lin(c)) for c in rgb) + ',1'


def colmajor(m):
    """A row-vector engine matrix M as expect-pose wants it: the column-vector matrix S.M^T.S (S the z mirror), row by row."""
    S = [1, 1, -1, 1]
    return ','.join(fmt(S[i] * m[j][i] * S[j]) for i in range(4) for j in range(4))


TRI = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
TRI_UV = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]


def tri_lod(color, **kw):
    return lod(TRI, [(0.0, 0.0, -1.0)], [], [mesh([(create(0, 0), create(1, 0), create(2, 0))], 3, color=color, **kw)])


TIP_T = (0.0, 0.0, 3.0)          # the embedded animation's translation of "tip" under "user"
BIND_USER_T = (1.0, 0.0, 0.0)    # lookup_bind.ani: USER
BIND_TIP_T = (0.0, 2.0, 0.0)     # lookup_bind.ani: TIP under USER


def lookup_fixtures():
    """lookup.wdb, lookup.txt, lookup_bind.ani, lookup_bind.txt."""
    def one(_):
        return [(create(0, 0), create(1, 0), create(2, 0))]
    user_meshes = [
        mesh(one(0), 3, color=(44, 44, 44), shading=2),                      # m1: wireframe
        mesh(one(0), 3, color=(44, 44, 44), shading=2),                      # m2: the same colour: one material
        mesh(one(0), 3, texture='dot.gif'),                                  # m3: textured, no texIdx: UV (0, 0)
        mesh(one(0), 3, tex_idx=[0, 7, 1], texture='dot.gif'),               # m4: texIdx 7 of 3: UV (0, 0)
        mesh(one(0), 4, color=(99, 99, 99)),                                 # m5: 4 declared, 3 created: left out
    ]
    user_lod = lod(TRI, [(0.0, 0.0, -1.0)], TRI_UV, user_meshes)
    # the bad fields' bytes: m4's texIdx[1] (after numPolys, numMeshVerts, one triangle, numTexIdx), m5's numMeshVerts
    head = 16 + 12 * 3 + 12 * 1 + 8 * 3   # flags, numMeshes, counts, numUVs; positions, normals, uvs
    m4_at = head + sum(len(m) for m in user_meshes[:3])
    m5_at = head + sum(len(m) for m in user_meshes[:4])
    anim = ani_body([], 0, node('user', children=[node('tip', T=[(0, 1, *TIP_T)])]))

    def user_root(at):
        return roi('user', lods=[user_lod], blob_at=at, children=[
            lambda a: roi('arm', blob_at=a, children=[lambda b: roi('tip', lods=[tri_lod((66, 66, 66))], blob_at=b)]),
            lambda a: roi('tip', lods=[tri_lod((77, 77, 77))], blob_at=a),
            lambda a: roi('gear01', shared=True, blob_at=a),
            lambda a: roi('dup01', shared=True, blob_at=a),
            lambda a: roi('bikex', lods=[tri_lod((88, 88, 88))], blob_at=a),
            lambda a: roi('blank', lods=[tri_lod((0, 0, 0), texture='empty.gif')], blob_at=a, bad_end=True),
        ])
    user = model_blob(anim, user_root)
    roi_at = 12 + len(anim)
    user_roi_head = len(blob_str('user')) + 40 + len(blob_str('')) + 1 + 4 + 4
    donor = model_blob(ani_body([], 0, node('donor')), lambda at: roi('donor', blob_at=at, children=[
        lambda a: roi('gear', lods=[tri_lod((33, 33, 33))], blob_at=a)]))
    broken = bytearray(user)
    struct.pack_into('<I', broken, 0, 18)
    thing1 = model_blob(ani_body([], 0, node('thing')), lambda at: roi('thing', lods=[tri_lod((55, 55, 55))], blob_at=at))
    thing2 = model_blob(ani_body([], 0, node('other')), lambda at: roi('other', lods=[tri_lod((56, 56, 56))], blob_at=at))
    gparts = part_blob([('dup', [tri_lod((11, 11, 11))])], [])
    wparts = part_blob([('dup', [tri_lod((22, 22, 22))])], [])
    O, Z, U = (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)
    models1 = [('user', 'user', 'LegoActorPresenter', O, Z, U, 1), ('donor', 'donor', 'LegoActorPresenter', O, Z, U, 1),
               ('broken', 'broken', 'LegoActorPresenter', O, Z, U, 1),
               ('thing_ref', 'thing1', 'LegoActorPresenter', O, Z, U, 1)]
    models2 = [('thing', 'thing2', 'LegoActorPresenter', O, Z, U, 1)]
    data, offsets = wdb([('ACT1', [('dup', 'wparts')], models1), ('ACT2', [], models2)],
                        [('dot.gif', image(1, 1, [(7, 8, 9)], [0])), ('empty.gif', image(0, 0, [(1, 2, 3)], []))],
                        gparts,
                        {'wparts': wparts, 'user': user, 'donor': donor, 'broken': bytes(broken), 'thing1': thing1,
                         'thing2': thing2})
    write('lookup.wdb', data)
    lod_at = offsets['user'] + roi_at + user_roi_head   # where the user ROI's LOD starts
    # the model indexes in directory order: ACT1's four, then ACT2's
    idx = {name: i for i, name in enumerate([m[0] for m in models1 + models2])}
    tip_w = local(t=TIP_T)                       # P = identity, A_root = identity
    tri = lambda m: pts([conv(apply(p, m)) for p in TRI])
    write_txt('lookup.txt', f"""lookup.wdb -- the engine's lookup orders and the meshes a reader tolerates (make_wdb.py)

Worlds ACT1 (a part blob "dup", models user, donor, broken, thing_ref) and
ACT2 (model thing); the global parts hold "dup" too, the global textures
dot.gif (1 x 1).  Every placement is the identity.

Model user: its root ROI has one LOD of five meshes over the positions
(0,0,0) (1,0,0) (0,1,0) and UVs (0,0) (1,0) (0,1):
  two wireframe (shading 2) meshes of colour (44, 44, 44): one material;
  a mesh textured dot.gif without texture indices: UV (0, 0) everywhere;
  a mesh textured dot.gif whose second corner's texture index is 7 of 3:
    UV (0, 0) there, and a warning;
  a mesh declaring 4 vertices whose corners create 3: left out, a warning.
Children: arm (no LODs) with a child tip (colour 66); tip (colour 77);
gear01 (sharedLods "gear": no part has it, model donor's child ROI gear
has LODs of its own, colour 33: LegoROI::Read registers them under its
name); dup01 (sharedLods "dup": the global part (11) wins over ACT1's (22),
LoadWorld registers the global parts first and Store skips a taken name);
bikex (LODs of its own, a name starting "bike": the engine may share its
list with other bike* ROIs; noted, not modelled); blank (a mesh textured
empty.gif, a global texture of 0 x 0 pixels: magenta and a warning; its
lodEndOffset lies far outside the blob: a warning, and the reader goes on
after its LODs, the last child).
The embedded animation: user, with tip translated by {TIP_T} under it.
FindChildROI checks the direct children before the grandchildren, so the
direct tip (scene node tip#2) moves; arm's tip stays at the identity.

Model lookup (preferred world ACT1): "thing" is no directory name in ACT1
but thing_ref's root ROI name there: model {idx['thing_ref']}; preferring ACT2 (or
no world) it is ACT2's directory name: model {idx['thing']}.

expect-option model=user
expect-format lego_wdb
expect-nodes 9
expect-meshes 10
expect-mesh name=blank_mesh node=blank vertices=3 triangles=1 material=missing_empty.gif uv=0 normals=1 colors=0
expect-mesh-color mesh=blank_mesh color=1,0,1,1
expect-warning image.width: 0 x 0
expect-warning roi.lod_end_offset
expect-mesh name=user_mesh node=user vertices=3 triangles=1 material=color_2c2c2c uv=0 normals=1 colors=0
expect-mesh name=user_mesh#2 node=user vertices=3 triangles=1 material=color_2c2c2c uv=0 normals=1 colors=0
expect-mesh name=user_mesh#3 node=user vertices=3 triangles=1 material=dot.gif uv=1 normals=1 colors=0
expect-mesh-uv mesh=user_mesh#3 uv=0,0;0,0;0,0
expect-mesh-uv mesh=user_mesh#4 uv={TRI_UV[0][0]:g},{TRI_UV[0][1]:g};0,0;{TRI_UV[1][0]:g},{TRI_UV[1][1]:g}
expect-warning mesh.tex_indices at byte {lod_at + m4_at + 4 + 12 + 4 + 4}
expect-warning mesh.num_mesh_verts at byte {lod_at + m5_at + 2}
expect-world mesh=tip_mesh#2 p={tri(tip_w)}
expect-world mesh=tip_mesh p={tri(ident())}
expect-mesh name=tip_mesh#2 node=tip#2 vertices=3 triangles=1 material=color_4d4d4d uv=0 normals=1 colors=0
expect-mesh-color mesh=gear01_mesh color={col((33, 33, 33))}
expect-mesh-color mesh=dup01_mesh color={col((11, 11, 11))}
expect-node-meta node=bikex key=lego.lod_note
expect-warning bikex
expect-find-model prefer=ACT1 name=THING index={idx['thing_ref']}
expect-find-model prefer=ACT2 name=thing index={idx['thing']}
expect-find-model prefer=- name=thing index={idx['thing']}
""")
    bind = ani_file([('user', 0), ('broken', 0)], 1000, node('', children=[
        node('USER', T=[(0, 1, *BIND_USER_T)], children=[node('TIP', T=[(0, 1, *BIND_TIP_T)])]),
        node('BROKEN'),
    ]))
    write('lookup_bind.ani', bind)
    tip_bound = mat_mul(local(t=BIND_TIP_T), local(t=BIND_USER_T))
    write_txt('lookup_bind.txt', f"""lookup_bind.ani -- two actors on lookup.wdb, one of them broken (make_wdb.py)

Actor user (type 0) binds model user; actor broken (type 0) names a model
whose version is 18: that actor gets no ROI and a warning, the others bind
as usual.  USER is translated by {BIND_USER_T}, TIP under it by {BIND_TIP_T}:
TIP binds user's direct child tip (FindChildROI: direct children first),
not arm's tip, which no node binds and stays at its static pose.

expect-option wdb=lookup.wdb
expect-duration 1.0
expect-pose t=0 node=USER world={colmajor(local(t=BIND_USER_T))}
expect-pose t=0.5 node=TIP world={colmajor(tip_bound)}
expect-meshes 10
expect-warning actor broken
expect-mesh name=tip_mesh#2 node=TIP vertices=3 triangles=1 material=color_4d4d4d uv=0 normals=1 colors=0
expect-world mesh=tip_mesh#2 t=0 p={tri(tip_bound)}
expect-world mesh=tip_mesh t=0 p={tri(ident())}
expect-mesh-color mesh=dup01_mesh color={col((11, 11, 11))}
""")


def notex_fixtures(tri_pos, tri_nrm, uv, part_lod, names, grey, face, stand_anim, stand, wave, plines):
    """minifig_notex.wdb: minifig.wdb without peprchst.gif, its bodyred's inh mesh untextured."""
    def lod_for(n):
        return part_lod(n == 'head')
    mparts = part_blob([(n, [lod_for(n)]) for n in names], [])
    mdata, _ = wdb([('ACT1', [], [('stand_m', 'stand', 'LegoEntityPresenter', (0.0, 0.0, 0.0), (0.0, 0.0, 1.0),
                                   (0.0, 1.0, 0.0), 1)])],
                   [('inhtex.gif', grey), ('peprface.gif', face)], mparts, {'stand': model_blob(stand_anim, stand)})
    write('minifig_notex.wdb', mdata)
    write_txt('minifig_notex.txt', """minifig_notex.wdb -- minifig.wdb without the chest texture (make_wdb.py)

As minifig.wdb, but the global textures lack peprchst.gif and the part
bodyred's inh mesh is untextured (colour (9, 9, 9), material "inh").

expect-format lego_wdb
expect-nodes 3
expect-meshes 2
""")
    write('pepper_notex.ani', wave)
    write_txt('pepper_notex.txt', """pepper_notex.ani -- pepper_wave.ani on minifig_notex.wdb (make_wdb.py)

Pepper's chest texture peprchst.gif is not in the WDB.  CreateActorROI
whitens the untextured inh meshes (SetLodColor(1, 1, 1)) only when the
texture was found: body's inh mesh keeps its file colour (9, 9, 9).  The
face texture is there: head's textured inh mesh takes it.

expect-option wdb=minifig_notex.wdb
expect-duration 1.0
expect-pose t=0.5 node=BODY world=1,0,0,1,0,1,0,0.5,0,0,1,0,0,0,0,1
expect-pose t=0 node=HEAD world=1,0,0,1,0,1,0,1.5,0,0,1,0,0,0,0,1
expect-meshes 20
expect-warning peprchst.gif
expect-mesh-color mesh=body_mesh#2 color=""" + col((9, 9, 9)) + """
expect-mesh-material mesh=head_mesh#2 name=peprface.gif
""")


if __name__ == '__main__':
    main()
