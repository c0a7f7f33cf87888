#!/usr/bin/env python3
"""Write the NIFF (N64 Intermediate File Format) animation test fixtures, byte
by byte, from the format's page and the project's playback rules.

Sources of truth:
  docs/formats/niff.md         the binary layout: section 1 (big-endian, file
                               header, physical list order, generic list
                               header, SceneList, NameList), section 2
                               (AnimList, AnimGroup, the STATIC/CONST/FULL/
                               KEY/BILLBOARD Anim areas, rotation orders),
                               section 3 (Obj, Cam), section 4 (extension
                               blocks, the NIFF2 channel block), section 7
                               (pitfalls: Anim(0) at group+48, names without
                               NUL, last next_key 0xFFFFFFFF, .nif clash).
  test_models/niff/RULES.md    the project's playback rules (nodes, names,
                               time, FULL/KEY/loops and their seam, billboard,
                               channels, camera, IK chains: the NIFF2 Obj
                               extension's chain root links and the ChainRoot
                               / Joint / Effector lists).

This script uses nothing from the project. Every area is written with explicit
struct.pack('>...') calls by its own layout code (pack_file, pack_scene_list,
pack_list, pack_obj, pack_cam, pack_name, pack_group, pack_anim,
pack_channel_block, pack_chain_item); every size field is computed from the
bytes written. make_geometry.py adds the geometry lists (pack_file's extra
lists) and their own reader; main() below runs it too.

Before anything is written to disk the script
  * re-reads its own bytes with a separate small Parser that only walks the
    lists by their size fields and follows index links (it never uses the
    writer's offsets) and requires the parsed model to equal the description
    (with every float rounded to float32);
  * requires the writer's marks of important fields (child links, next_key
    fields, channel counts, ...) to sit at the offsets the Parser found;
  * computes the expect-* lines with the reference evaluator (RULES.md, world
    4x4 matrices, column vectors) from the parsed model, and again from the
    description; both must agree;
  * cross-checks every Euler rotation against a quaternion product derived
    from the order encoding, every billboard/camera frame for
    orthonormality, and the hand-worked numbers quoted in the .txt files;
  * refuses to put a pose on a discontinuity (steps, loop wraps) unless the
    pose is listed as deliberately sitting on one (AT_STEP); such a pose's
    expect-pose line ends with " at_step=1" (the game's value there is exact,
    consumer playback of baked keys may take either side of the jump);
  * requires every broken file to make the Parser fail at the documented
    offset, and netimmerse.nif to be not detected.

Usage:  python3 make_fixtures.py      (writes the files into this folder,
                                       then runs make_geometry.py)
        python3 expect.py --check     (re-reads the files, compares the .txt)

The output is deterministic: no clocks, no randomness.
"""

import math
import os
import struct
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
FPS = 30.0                       # RULES: frame f plays at t = f / 30 s


def f32(v):
    """The value a float becomes after a round trip through float32."""
    return struct.unpack('>f', struct.pack('>f', v))[0]


def f32t(vals):
    return tuple(f32(v) for v in vals)


# --- tags and constants (docs/formats/niff.md sections 1-4) -------------------

TAG_HEADER = 0x00000000
LIST_TAG = {
    'scene': 0x00010000, 'env': 0x00100000, 'cam': 0x000e0000,
    'light': 0x000f0000, 'obj': 0x00020000, 'shape': 0x00030000,
    'vtx': 0x00040000, 'tri': 0x00080000, 'color': 0x00050000,
    'vector': 0x00060000, 'st': 0x00070000, 'part': 0x00090000,
    'mat': 0x000a0000, 'tex': 0x000b0000, 'tex_img': 0x00120000,
    'anim': 0x000c0000, 'coll': 0x000d0000, 'switch': 0x00130000,
    'name': 0x00110000,
    # NIFF2 lists
    'ci_img': 0x00200000, 'color_palette': 0x00210000,
    'envelope': 0x00220000, 'cluster': 0x00280000, 'weight': 0x00230000,
    'chain_root': 0x00240000, 'joint': 0x00250000, 'effector': 0x00260000,
    'external_name': 0x00270000,
}
# order of the 19 *_list_num_byte fields in the file header (offsets 16..88)
HEADER_ORDER = ['scene', 'env', 'cam', 'light', 'obj', 'shape', 'vtx',
                'color', 'vector', 'st', 'tri', 'part', 'mat', 'tex',
                'tex_img', 'anim', 'coll', 'switch', 'name']
# physical order of the lists in the file (Tri before Color/Vector/St)
PHYS_ORDER = ['scene', 'env', 'cam', 'light', 'obj', 'shape', 'vtx', 'tri',
              'color', 'vector', 'st', 'part', 'mat', 'tex', 'tex_img',
              'anim', 'coll', 'switch', 'name']
# NIFF2 lists after the NameList, same order as the header extension fields
NIFF2_ORDER = ['ci_img', 'color_palette', 'envelope', 'cluster', 'weight',
               'chain_root', 'joint', 'effector', 'external_name']
TWO_COUNT_LISTS = ('color', 'vector')   # list header 28 + 4*(n1+n2) (nis.h)

TAG_OBJ = 0x00020100
TAG_CAM = 0x000e0100
TAG_NAME = 0x00110100
TAG_GROUP = 0x000c0100
TAG_STATIC = 0x000c0101
TAG_CONST = 0x000c0102
TAG_FULL = 0x000c0103
TAG_KEY = 0x000c0104
TAG_BILL = 0x000c0105
ANIM_SIZE = {TAG_STATIC: 52, TAG_CONST: 52, TAG_FULL: 52, TAG_KEY: 64,
             TAG_BILL: 20}
ANIM_TAG_NAME = {TAG_STATIC: 'STATIC', TAG_CONST: 'CONST', TAG_FULL: 'FULL',
                 TAG_KEY: 'KEY', TAG_BILL: 'BILLBOARD_OBJ'}

# NIFF2 IK chain items (RULES "IK chains")
TAG_CHAIN_ROOT = 0x00240100
TAG_JOINT = 0x00250100
TAG_EFFECTOR = 0x00260100
CHAIN_KINDS = ('chain_root', 'joint', 'effector')
CHAIN_ITEM_TAG = {'chain_root': TAG_CHAIN_ROOT, 'joint': TAG_JOINT,
                  'effector': TAG_EFFECTOR}
CHAIN_FIXED = {'chain_root': 44, 'joint': 64, 'effector': 40}

ANIM_STATIC, ANIM_FULL, ANIM_KEY, ANIM_BILL = 0, 2, 3, 4
ANIM_TYPE_NAME = {0: 'STATIC', 2: 'FULL', 3: 'KEY', 4: 'BILLBOARD_OBJ'}
NOLINK = 0xFFFFFFFF
STATE_CLEAR, STATE_ACTIVE = 0, 1
OBJ_NULL, OBJ_3D, OBJ_BILLBOARD = 0, 1, 2
CAM_PERSP = 0

# KEY interpolation_type (NIFF1)
I_STATIC, I_LINEAR, I_SLOWIN, I_SLOWOUT, I_SLOW = 0, 1, 2, 4, 6
INTERP_NAME = {0: 'STATIC', 1: 'LINEAR', 2: 'SLOWIN', 4: 'SLOWOUT',
               6: 'SLOW'}
# NIFF2 channel interpolation
C_CONST, C_FULL, C_LINEAR, C_HERMITE = 0, 1, 2, 3
CINTERP_NAME = {0: 'CONST', 1: 'FULL', 2: 'LINEAR', 3: 'HERMITE'}

ORDER_VALUE = {'XYZ': 0x00010203, 'XZY': 0x00010302, 'YXZ': 0x00020103,
               'YZX': 0x00030102, 'ZXY': 0x00020301, 'ZYX': 0x00030201}
ORDER_NAME = {v: k for k, v in ORDER_VALUE.items()}
XYZ = ORDER_VALUE['XYZ']

# NIFF2 AnimGroup Nintendo extension: channel kinds in array order
# (name, use_animation_channel bit, number of values per key)
CHANNELS = [('rotate_axis', 0x01, 4), ('rotate_x', 0x02, 1),
            ('rotate_y', 0x04, 1), ('rotate_z', 0x08, 1),
            ('orientation_xy', 0x10, 6), ('translation', 0x20, 3),
            ('unique_scale', 0x40, 3), ('classical_scale', 0x80, 3)]
CHANNEL_NAMES = [c[0] for c in CHANNELS]
CHANNEL_HEAD = 148                       # 1 + 8 + 28 u32 words
NO_CONSTRAINTS = (NOLINK,) * 28

VERSION_NIFF1 = 0x05000100               # N-World, NIFF 1.0
VERSION_NIFF2 = 0x02010200               # SoftImage, NIFF 2.0


# --- the model (shared by the writer's description and the Parser's result) ---

class M:
    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, ', '.join(
            '%s=%r' % kv for kv in sorted(vars(self).items())))


class TRS(M):
    """STATIC / CONST / FULL Anim area (52 bytes)."""

    def __init__(self, t=(0, 0, 0), r=(0, 0, 0), s=(1, 1, 1), tag=TAG_STATIC,
                 flag=0):
        self.tag, self.t, self.r, self.s, self.flag = \
            tag, f32t(t), f32t(r), f32t(s), flag


class Key(M):
    """KEY Anim area (64 bytes)."""

    def __init__(self, key, next_key, interp, t=(0, 0, 0), r=(0, 0, 0),
                 s=(1, 1, 1), flag=0):
        self.key, self.next_key, self.interp = key, next_key, interp
        self.t, self.r, self.s, self.flag = f32t(t), f32t(r), f32t(s), flag


class Bill(M):
    """BILLBOARD_OBJ Anim area (20 bytes)."""

    def __init__(self, lookat, upper):
        self.lookat, self.upper = lookat, upper


class ChanKey(M):
    def __init__(self, interp, frame, values, diffs):
        self.interp, self.frame = interp, frame
        self.values, self.diffs = f32t(values), f32t(diffs)


class ChanBlock(M):
    """NIFF2 AnimGroup Nintendo extension (148-byte head + key arrays)."""

    def __init__(self, chans=None, use=None, constraints=NO_CONSTRAINTS):
        self.chans = {k: list(v) for k, v in (chans or {}).items() if v}
        if use is None:
            use = 0
            for name, bit, n in CHANNELS:
                if self.chans.get(name):
                    use |= bit
        self.use = use
        self.constraints = tuple(constraints)


class Group(M):
    def __init__(self, anim_type, anims, frame_rate=0, loop=0, order=XYZ,
                 name_index=NOLINK, header_size=48, ext=None, ux=b''):
        self.anim_type, self.anims = anim_type, list(anims)
        self.frame_rate, self.loop, self.order = frame_rate, loop, order
        self.name_index, self.header_size = name_index, header_size
        self.ext, self.ux = ext, bytes(ux)


class Obj(M):
    def __init__(self, name_index, anim_link=NOLINK, children=(), lods=(),
                 state=STATE_ACTIVE, type=OBJ_3D, parent=NOLINK,
                 have_bb=0, ext=None, shape=NOLINK, mat=NOLINK, coll=NOLINK,
                 group=0, pri=0, rcycle=0, rpri=0, rtype0=0, rtype1=0):
        self.name_index, self.anim_link = name_index, anim_link
        self.children = tuple(children)
        self.lods = tuple((f32(d), l) for d, l in lods)
        self.state, self.type, self.parent, self.have_bb = \
            state, type, parent, have_bb
        self.ext = None if ext is None else tuple(ext)
        self.shape, self.mat, self.coll = shape, mat, coll
        self.group, self.pri, self.rcycle, self.rpri = group, pri, rcycle, rpri
        self.rtype0, self.rtype1 = rtype0, rtype1


class Cam(M):
    def __init__(self, name_index, lookat, eye, up, near, far, fovy, aspect,
                 type=CAM_PERSP, right=160.0, left=-160.0, top=120.0,
                 bottom=-120.0, scale=1.0, ext=None):
        self.name_index, self.lookat, self.eye, self.up = \
            name_index, lookat, eye, up
        self.type = type
        (self.near, self.far, self.right, self.left, self.top, self.bottom,
         self.fovy, self.aspect, self.scale) = f32t(
            (near, far, right, left, top, bottom, fovy, aspect, scale))
        self.ext = None if ext is None else tuple(ext)


class ChainRoot(M):
    """NIFF2 ChainRoot item (list 0x00240000): 44 bytes + arrays."""

    def __init__(self, name_index, anim, joint, objs=(), ext_objs=(), type=0):
        self.name_index, self.anim, self.joint = name_index, anim, joint
        self.objs, self.ext_objs = tuple(objs), tuple(tuple(e) for e in ext_objs)
        self.type = type


class Joint(M):
    """NIFF2 Joint item (list 0x00250000): 64 bytes + arrays."""

    def __init__(self, name_index, anim, joint, effector, objs=(), ext_objs=(),
                 type=0, length=1.0, resplane=(0, 0, 1)):
        self.name_index, self.anim = name_index, anim
        self.joint, self.effector = joint, effector
        self.objs, self.ext_objs = tuple(objs), tuple(tuple(e) for e in ext_objs)
        self.type, self.length, self.resplane = type, f32(length), f32t(resplane)


class Effector(M):
    """NIFF2 Effector item (list 0x00260000): 40 bytes + arrays."""

    def __init__(self, name_index, anim, objs=(), ext_objs=(), type=0):
        self.name_index, self.anim = name_index, anim
        self.objs, self.ext_objs = tuple(objs), tuple(tuple(e) for e in ext_objs)
        self.type = type


def obj2_ext(chain_links=()):
    """NIFF2 Obj Nintendo extension: 4 *_for_fog words, obj_chain_root_link_num,
    external_lod_obj_num, external_obj_num, obj_chain_root_link[num]."""
    return (0, 0, 0, 0, len(chain_links), 0, 0) + tuple(chain_links)


def obj_chain_links(o):
    """The chain root links of an Obj's NIFF2 extension (RULES: an extension
    shorter than 28 bytes links no chain)."""
    if o.ext is None or len(o.ext) < 7:
        return ()
    return tuple(o.ext[7:7 + o.ext[4]])


class Scene(M):
    def __init__(self, version, objs, groups, names, roots, cams=(),
                 cam_links=None, scene_name=NOLINK, cfg=0, scene_ext=None,
                 name_ux=b'', chain_roots=(), joints=(), effectors=()):
        self.version = version
        self.objs, self.groups, self.names = list(objs), list(groups), \
            list(names)
        self.cams = list(cams)
        self.roots = tuple(roots)
        self.cam_links = tuple(range(len(self.cams))) if cam_links is None \
            else tuple(cam_links)
        self.scene_name, self.cfg = scene_name, cfg
        self.scene_ext = None if scene_ext is None else tuple(scene_ext)
        self.name_ux = bytes(name_ux)
        self.chain_roots, self.joints, self.effectors = \
            list(chain_roots), list(joints), list(effectors)

    def chain_items(self, kind):
        return {'chain_root': self.chain_roots, 'joint': self.joints,
                'effector': self.effectors}[kind]

    @property
    def niff2(self):
        return is_niff2(self.version)


def is_niff2(version):
    return (version >> 8) & 0xFF == 0x02


# --- the writer ----------------------------------------------------------------

class Blob:
    """Bytes plus marks: named offsets of fields (for patches and checks)."""

    def __init__(self):
        self.b = bytearray()
        self.marks = {}

    def mark(self, key, rel=0):
        self.marks[key] = len(self.b) + rel

    def put(self, data):
        self.b += data

    def add(self, other):
        base = len(self.b)
        for k, v in other.marks.items():
            self.marks[k] = base + v
        self.b += other.b


def pack_anim(a, idx, gi, ai):
    """One Anim area. gi, ai: group and anim index (for the marks)."""
    bl = Blob()
    bl.mark(('group', gi, 'anim', ai))
    if isinstance(a, TRS):
        bl.put(struct.pack('>3I', a.tag, idx, 52))
        bl.put(struct.pack('>3f', *a.t))            # translate_x/y/z
        bl.put(struct.pack('>3f', *a.r))            # rotate_axis_x/y/z
        bl.put(struct.pack('>I', a.flag))           # rotate_expand_flag
        bl.put(struct.pack('>3f', *a.s))            # scale_x/y/z
    elif isinstance(a, Key):
        bl.mark(('group', gi, 'anim', ai, 'next'), 16)
        bl.put(struct.pack('>3I', TAG_KEY, idx, 64))
        bl.put(struct.pack('>3I', a.key, a.next_key, a.interp))
        bl.put(struct.pack('>3f', *a.t))
        bl.put(struct.pack('>3f', *a.r))
        bl.put(struct.pack('>I', a.flag))
        bl.put(struct.pack('>3f', *a.s))
    elif isinstance(a, Bill):
        bl.put(struct.pack('>3I', TAG_BILL, idx, 20))
        bl.put(struct.pack('>2I', a.lookat, a.upper))
    else:
        raise TypeError(a)
    return bl


def pack_channel_block(ext, gi):
    """NIFF2 AnimGroup Nintendo extension block."""
    bl = Blob()
    bl.put(struct.pack('>I', ext.use))              # use_animation_channel
    for j, name in enumerate(CHANNEL_NAMES):        # the 8 counts
        bl.mark(('group', gi, 'count', j))
        bl.put(struct.pack('>I', len(ext.chans.get(name, ()))))
    bl.put(struct.pack('>28I', *ext.constraints))   # constraint words
    assert len(bl.b) == CHANNEL_HEAD
    for name, bit, n in CHANNELS:                   # key arrays, in order
        for j, k in enumerate(ext.chans.get(name, ())):
            bl.mark(('group', gi, 'chan', name, j))
            bl.put(struct.pack('>2I', k.interp, k.frame))
            bl.put(struct.pack('>%df' % n, *k.values))
            bl.put(struct.pack('>%df' % n, *k.diffs))
    return bl


def pack_group(g, gi):
    anims = Blob()
    for ai, a in enumerate(g.anims):
        anims.add(pack_anim(a, ai, gi, ai))
    nx = pack_channel_block(g.ext, gi) if g.ext is not None else Blob()
    size = 48 + len(anims.b) + len(nx.b) + len(g.ux)
    bl = Blob()
    bl.mark(('group', gi))
    bl.put(struct.pack('>4I', TAG_GROUP, gi, g.header_size, size))
    bl.put(struct.pack('>6I', g.name_index, g.anim_type, g.frame_rate,
                       len(g.anims), g.loop, g.order))
    bl.put(struct.pack('>2I', len(nx.b), len(g.ux)))
    assert len(bl.b) == 48
    bl.add(anims)                                   # Anim(0) at +48, always
    bl.mark(('group', gi, 'ext'))
    bl.add(nx)
    bl.put(g.ux)
    assert len(bl.b) == size
    return bl


def pack_obj(o, i):
    ext = b'' if o.ext is None else struct.pack('>%dI' % len(o.ext), *o.ext)
    nl, nc = len(o.lods), len(o.children)
    size = 88 + 8 * nl + 4 * nc + len(ext)
    bl = Blob()
    bl.mark(('obj', i))
    bl.mark(('obj', i, 'name'), 12)
    bl.mark(('obj', i, 'anim'), 72)
    bl.put(struct.pack('>3I', TAG_OBJ, i, size))
    bl.put(struct.pack('>3I', o.name_index, o.state, o.type))
    bl.put(struct.pack('>6I', o.group, o.pri, o.rcycle, o.rpri, o.rtype0,
                       o.rtype1))
    bl.put(struct.pack('>4I', o.have_bb, nl, nc, o.parent))
    bl.put(struct.pack('>4I', o.shape, o.mat, o.anim_link, o.coll))
    bl.put(struct.pack('>2I', len(ext), 0))
    assert len(bl.b) == 88
    bl.put(struct.pack('>%df' % nl, *[d for d, l in o.lods]))
    for j, (d, l) in enumerate(o.lods):
        bl.mark(('obj', i, 'lod', j))
        bl.put(struct.pack('>I', l))
    for j, c in enumerate(o.children):
        bl.mark(('obj', i, 'child', j))
        bl.put(struct.pack('>I', c))
    if o.ext is not None and len(o.ext) >= 7:       # NIFF2 chain root links
        bl.mark(('obj', i, 'chain_num'), 16)
        for j in range(len(o.ext) - 7):
            bl.mark(('obj', i, 'chain', j), 28 + 4 * j)
    bl.put(ext)
    assert len(bl.b) == size
    return bl


def pack_chain_item(kind, c, i):
    """ChainRoot / Joint / Effector item (RULES "IK chains")."""
    ne = len(c.ext_objs)
    size = CHAIN_FIXED[kind] + 4 * len(c.objs) + 8 * ne
    bl = Blob()
    bl.mark((kind, i))
    bl.put(struct.pack('>3I', CHAIN_ITEM_TAG[kind], i, size))
    bl.put(struct.pack('>2I', c.name_index, c.type))
    if kind == 'chain_root':
        bl.put(struct.pack('>2I', len(c.objs), ne))
        bl.mark((kind, i, 'anim'))
        bl.put(struct.pack('>I', c.anim))
        bl.mark((kind, i, 'joint'))
        bl.put(struct.pack('>I', c.joint))
    elif kind == 'joint':
        bl.put(struct.pack('>f', c.length))
        bl.put(struct.pack('>3f', *c.resplane))
        bl.put(struct.pack('>2I', len(c.objs), ne))
        bl.mark((kind, i, 'joint'))
        bl.put(struct.pack('>I', c.joint))
        bl.mark((kind, i, 'effector'))
        bl.put(struct.pack('>I', c.effector))
        bl.mark((kind, i, 'anim'))
        bl.put(struct.pack('>I', c.anim))
    else:
        bl.put(struct.pack('>2I', len(c.objs), ne))
        bl.mark((kind, i, 'anim'))
        bl.put(struct.pack('>I', c.anim))
    bl.put(struct.pack('>2I', 0, 0))                # extension block sizes
    assert len(bl.b) == CHAIN_FIXED[kind]
    for j, o in enumerate(c.objs):
        bl.mark((kind, i, 'obj', j))
        bl.put(struct.pack('>I', o))
    # external objects: (file name index, name index) into the ExternalNameList
    for f, n in c.ext_objs:
        bl.put(struct.pack('>2I', f, n))
    assert len(bl.b) == size
    return bl


def pack_cam(c, i):
    ext = b'' if c.ext is None else struct.pack('>6I', *c.ext)
    bl = Blob()
    bl.mark(('cam', i))
    bl.put(struct.pack('>3I', TAG_CAM, i, 76 + len(ext)))
    bl.put(struct.pack('>2I', c.name_index, c.type))
    bl.put(struct.pack('>9f', c.near, c.far, c.right, c.left, c.top,
                       c.bottom, c.fovy, c.aspect, c.scale))
    bl.put(struct.pack('>3I', c.lookat, c.eye, c.up))
    bl.put(struct.pack('>2I', len(ext), 0))
    assert len(bl.b) == 76
    bl.put(ext)
    return bl


def pack_name(s, i):
    raw = s.encode('ascii')
    raw += b'\0' * (-len(raw) % 4)       # NUL-padded; no NUL if len % 4 == 0
    bl = Blob()
    bl.mark(('name', i))
    bl.put(struct.pack('>4I', TAG_NAME, i, 16, 16 + len(raw)))
    bl.put(raw)
    return bl


def pack_list(name, items, ux=b''):
    """Generic list: 24-byte header + item sizes + items + ext blocks."""
    n = len(items)
    hsize = 24 + 4 * n
    total = hsize + sum(len(it.b) for it in items) + len(ux)
    bl = Blob()
    bl.mark(('list', name))
    bl.put(struct.pack('>6I', LIST_TAG[name], hsize, total, n, 0, len(ux)))
    bl.put(struct.pack('>%dI' % n, *[len(it.b) for it in items]))
    for it in items:
        bl.add(it)
    bl.put(ux)
    assert len(bl.b) == total
    return bl


def pack_two_count_list(name):
    """Empty Color/Vector list: two counts, header 28 bytes."""
    bl = Blob()
    bl.mark(('list', name))
    bl.put(struct.pack('>7I', LIST_TAG[name], 28, 28, 0, 0, 0, 0))
    return bl


def pack_scene_list(sc):
    ext = b'' if sc.scene_ext is None else struct.pack(
        '>%dI' % len(sc.scene_ext), *sc.scene_ext)
    nlinks = len(sc.roots) + len(sc.cam_links)
    size = 44 + 4 * nlinks + len(ext)
    bl = Blob()
    bl.mark(('list', 'scene'))
    bl.put(struct.pack('>3I', LIST_TAG['scene'], 44, size))
    bl.put(struct.pack('>2I', sc.cfg, sc.scene_name))
    bl.put(struct.pack('>4I', len(sc.roots), 0, len(sc.cam_links), 0))
    bl.put(struct.pack('>2I', len(ext), 0))
    for j, r in enumerate(sc.roots):                # obj links
        bl.mark(('scene', 'root', j))
        bl.put(struct.pack('>I', r))
    # (no env links)
    bl.put(struct.pack('>%dI' % len(sc.cam_links), *sc.cam_links))
    # (no light links)
    bl.put(ext)
    assert len(bl.b) == size
    return bl


def pack_file(sc, extra=None):
    """The whole file. Returns (bytes, marks). extra: {list name: Blob} of
    lists packed elsewhere (make_geometry.py's geometry lists)."""
    lists = dict(extra or {})
    lists['scene'] = pack_scene_list(sc)
    lists['cam'] = pack_list('cam', [pack_cam(c, i)
                                     for i, c in enumerate(sc.cams)])
    lists['obj'] = pack_list('obj', [pack_obj(o, i)
                                     for i, o in enumerate(sc.objs)])
    lists['anim'] = pack_list('anim', [pack_group(g, i)
                                       for i, g in enumerate(sc.groups)])
    lists['name'] = pack_list('name', [pack_name(s, i)
                                       for i, s in enumerate(sc.names)],
                              ux=sc.name_ux)
    for kind in CHAIN_KINDS:
        items = sc.chain_items(kind)
        if items:
            assert sc.niff2
            lists[kind] = pack_list(kind, [pack_chain_item(kind, c, i)
                                           for i, c in enumerate(items)])
    for name in PHYS_ORDER + (NIFF2_ORDER if sc.niff2 else []):
        if name not in lists:
            lists[name] = pack_two_count_list(name) \
                if name in TWO_COUNT_LISTS else pack_list(name, [])
    hsize = 136 if sc.niff2 else 100
    body = Blob()
    for name in PHYS_ORDER + (NIFF2_ORDER if sc.niff2 else []):
        body.add(lists[name])
    out = Blob()
    out.put(struct.pack('>4I', sc.version, hsize + len(body.b), TAG_HEADER,
                        hsize))
    out.put(struct.pack('>19I', *[len(lists[n].b) for n in HEADER_ORDER]))
    out.put(struct.pack('>2I', 36 if sc.niff2 else 0, 0))
    if sc.niff2:                                    # Nintendo ext: 9 sizes
        out.put(struct.pack('>9I', *[len(lists[n].b) for n in NIFF2_ORDER]))
    assert len(out.b) == hsize
    out.add(body)
    return bytes(out.b), out.marks


def patch_u32(data, off, value):
    return data[:off] + struct.pack('>I', value) + data[off + 4:]


# --- the Parser ------------------------------------------------------------------
# Walks the lists by their size fields and follows index links. It shares only
# the model classes and the tag constants with the writer.

class Fail(Exception):
    def __init__(self, offset, msg):
        Exception.__init__(self, '%s at offset %d' % (msg, offset))
        self.offset = offset
        self.msg = msg


class NotDetected(Exception):
    pass


def detect(data):
    """NIFF has no magic: TAG_HEADER at 8, a header size >= 100 at 12 and the
    SceneList tag right after the header (docs/formats/niff.md section 1).
    file_size is checked afterwards, so a truncated NIFF file is detected and
    then refused."""
    if len(data) < 16:
        return False
    tag, hsize = struct.unpack_from('>2I', data, 8)
    if tag != TAG_HEADER or hsize < 100 or hsize % 4 or hsize + 4 > len(data):
        return False
    return struct.unpack_from('>I', data, hsize)[0] == LIST_TAG['scene']


class Parser:
    def __init__(self, data, foreign_items=False):
        """foreign_items: lists this Parser does not read (geometry, ...) may
        hold items (make_geometry.py reads them); else they must be empty."""
        self.d = data
        self.foreign_items = foreign_items
        self.lists = {}       # list name -> (offset, size)
        self.where = {}       # same keys as the writer's marks
        self.fields = []      # (offset, text) for the .txt

    # -- primitive reads (bounds-checked) --
    def u32(self, off):
        if off < 0 or off + 4 > len(self.d):
            raise Fail(off, 'read past the end of the file')
        return struct.unpack_from('>I', self.d, off)[0]

    def f32(self, off):
        if off < 0 or off + 4 > len(self.d):
            raise Fail(off, 'read past the end of the file')
        return struct.unpack_from('>f', self.d, off)[0]

    def note(self, off, text):
        self.fields.append((off, text))

    def parse(self):
        d = self.d
        if not detect(d):
            raise NotDetected()
        version, file_size, _tag, hsize = (self.u32(0), self.u32(4),
                                           self.u32(8), self.u32(12))
        self.note(0, 'version            0x%08X' % version)
        self.note(4, 'file_size          %d' % file_size)
        if file_size != len(d):
            raise Fail(4, 'file_size %d but the file has %d bytes'
                       % (file_size, len(d)))
        self.note(8, 'header_tag         0x%08X' % _tag)
        self.note(12, 'file_header_num_byte %d' % hsize)
        niff2 = is_niff2(version)
        sizes = {}
        for k, name in enumerate(HEADER_ORDER):
            sizes[name] = (16 + 4 * k, self.u32(16 + 4 * k))
        nx, ux = self.u32(92), self.u32(96)
        self.note(16, '19 list sizes (header order scene..name): %s' % ' '.join(
            str(sizes[n][1]) for n in HEADER_ORDER))
        self.note(92, 'nintendo_extension_block_size %d, user %d' % (nx, ux))
        if 100 + nx + ux != hsize:
            raise Fail(12, 'header size %d != 100 + %d + %d' % (hsize, nx, ux))
        order = list(PHYS_ORDER)
        if niff2:
            if nx < 36:
                raise Fail(92, 'NIFF2 header without its 36-byte extension')
            for k, name in enumerate(NIFF2_ORDER):
                sizes[name] = (100 + 4 * k, self.u32(100 + 4 * k))
            self.note(100, 'NIFF2 ext: 9 list sizes (ci_img..external_name): %s'
                      % ' '.join(str(sizes[n][1]) for n in NIFF2_ORDER))
            order += NIFF2_ORDER
        # walk the lists by their size words
        lists = {}
        off = hsize
        for name in order:
            tag = self.u32(off)
            if tag != LIST_TAG[name]:
                raise Fail(off, 'expected the %s list tag 0x%08X, got 0x%08X'
                           % (name, LIST_TAG[name], tag))
            size = self.u32(off + 8)
            if size < 24 or size % 4 or off + size > len(d):
                raise Fail(off + 8, '%s list size %d does not fit' % (name, size))
            if size != sizes[name][1]:
                raise Fail(sizes[name][0], 'header size of the %s list %d != %d'
                           % (name, sizes[name][1], size))
            self.where[('list', name)] = off
            lists[name] = (off, size)
            off += size
        if off != len(d):
            raise Fail(off, 'bytes after the last list')
        self.lists = lists
        sc = self.scene_list(lists['scene'], version)
        self.generic_list_notes(lists, order)
        sc.cams = [self.cam(o, s, i, niff2) for i, (o, s) in
                   enumerate(self.items(lists['cam'], 'cam'))]
        sc.objs = [self.obj(o, s, i) for i, (o, s) in
                   enumerate(self.items(lists['obj'], 'obj'))]
        sc.groups = [self.group(o, s, i, niff2) for i, (o, s) in
                     enumerate(self.items(lists['anim'], 'anim'))]
        sc.names = [self.name(o, s, i) for i, (o, s) in
                    enumerate(self.items(lists['name'], 'name'))]
        lo, ls = lists['name']
        nux = self.u32(lo + 20)
        sc.name_ux = bytes(d[lo + ls - nux:lo + ls])
        if niff2:
            for kind in CHAIN_KINDS:
                items = [self.chain_item(kind, o, s, i) for i, (o, s) in
                         enumerate(self.items(lists[kind], kind))]
                sc.chain_items(kind)[:] = items
        self.validate(sc)
        return sc

    def scene_list(self, ls, version):
        off, size = ls
        hs, cfg, nidx = self.u32(off + 4), self.u32(off + 12), self.u32(off + 16)
        no, ne, nc, nl = [self.u32(off + 20 + 4 * k) for k in range(4)]
        nx, ux = self.u32(off + 36), self.u32(off + 40)
        if hs != 44:
            raise Fail(off + 4, 'scene_header_size %d' % hs)
        if 44 + 4 * (no + ne + nc + nl) + nx + ux != size:
            raise Fail(off + 8, 'scene_size %d does not add up' % size)
        p = off + 44
        roots = []
        for j in range(no):
            self.where[('scene', 'root', j)] = p
            roots.append(self.u32(p))
            p += 4
        p += 4 * ne
        cam_links = [self.u32(p + 4 * j) for j in range(nc)]
        p += 4 * nc + 4 * nl
        ext = None
        if nx:
            ext = [self.u32(p + 4 * j) for j in range(nx // 4)]
        self.scene_cam_off = p - 4 * nl - 4 * nc
        self.note(off, 'SceneList tag 0x%08X header_size %d scene_size %d '
                  'cfg %d name_index %s' % (LIST_TAG['scene'], hs, size, cfg,
                                            idx_str(nidx)))
        self.note(off + 20, '  obj_link_num %d env %d cam %d light %d, ext %d/%d'
                  % (no, ne, nc, nl, nx, ux))
        if no:
            self.note(off + 44, '  scene_obj_link_index %s' % list(roots))
        if nc:
            self.note(self.scene_cam_off, '  scene_cam_link_index %s'
                      % cam_links)
        if nx:
            self.note(p, '  Nintendo ext (%d bytes): %s' % (nx, words_str(ext)))
        sc = Scene(version, [], [], [], roots, [], cam_links, nidx, cfg, ext)
        return sc

    def generic_list_notes(self, lists, order):
        for name in order:
            if name == 'scene':
                continue
            off, size = lists[name]
            if name in TWO_COUNT_LISTS:
                n1, n2 = self.u32(off + 12), self.u32(off + 16)
                self.note(off, '%s list tag 0x%08X header %d size %d counts %d,%d'
                          % (name.capitalize(), LIST_TAG[name], self.u32(off + 4),
                             size, n1, n2))
                if (n1 or n2) and not self.foreign_items:
                    raise Fail(off + 12, 'unexpected items in the %s list' % name)
            else:
                n = self.u32(off + 12)
                self.note(off, '%s list tag 0x%08X header %d size %d count %d '
                          'ext %d/%d' % (name.capitalize(), LIST_TAG[name],
                                         self.u32(off + 4), size, n,
                                         self.u32(off + 16), self.u32(off + 20)))
                if n and name not in ('cam', 'obj', 'anim', 'name') + \
                        CHAIN_KINDS and not self.foreign_items:
                    raise Fail(off + 12, 'unexpected items in the %s list' % name)

    def items(self, ls, name):
        """(offset, size) of each item of a generic list, from its size array."""
        off, size = ls
        hs, n = self.u32(off + 4), self.u32(off + 12)
        nx, ux = self.u32(off + 16), self.u32(off + 20)
        if hs != 24 + 4 * n:
            raise Fail(off + 4, '%s list header size %d, count %d' % (name, hs, n))
        nb = [self.u32(off + 24 + 4 * i) for i in range(n)]
        if hs + sum(nb) + nx + ux != size:
            raise Fail(off + 8, '%s list size %d does not add up' % (name, size))
        out, p = [], off + hs
        for i in range(n):
            out.append((p, nb[i]))
            p += nb[i]
        return out

    def obj(self, off, nb, i):
        w = [self.u32(off + 4 * k) for k in range(22)]
        (tag, idx, size, nidx, state, typ, group, pri, rcycle, rpri, rt0, rt1,
         hbb, nl, nc, parent, shape, mat, anim, coll, nx, ux) = w
        if tag != TAG_OBJ:
            raise Fail(off, 'Obj tag 0x%08X' % tag)
        if idx != i:
            raise Fail(off + 4, 'this_obj_index %d at position %d' % (idx, i))
        if size != nb or 88 + 8 * nl + 4 * nc + nx + ux != size:
            raise Fail(off + 8, 'obj_size %d does not add up' % size)
        p = off + 88
        dists = [self.f32(p + 4 * j) for j in range(nl)]
        p += 4 * nl
        lod_links = []
        for j in range(nl):
            self.where[('obj', i, 'lod', j)] = p
            lod_links.append(self.u32(p))
            p += 4
        children = []
        for j in range(nc):
            self.where[('obj', i, 'child', j)] = p
            children.append(self.u32(p))
            p += 4
        ext = None
        if nx:
            ext = [self.u32(p + 4 * j) for j in range(nx // 4)]
            if nx >= 28:                  # NIFF2: obj_chain_root_link_num at +16
                self.where[('obj', i, 'chain_num')] = p + 16
                for j in range(len(ext) - 7):
                    self.where[('obj', i, 'chain', j)] = p + 28 + 4 * j
        self.where[('obj', i)] = off
        self.where[('obj', i, 'name')] = off + 12
        self.where[('obj', i, 'anim')] = off + 72
        self.note(off, 'Obj %d: tag 0x%08X index %d obj_size %d' % (i, tag, idx, size))
        self.note(off + 12, '  obj_name_index %s' % idx_str(nidx))
        self.note(off + 16, '  obj_state %d (%s), obj_type %d (%s)' % (
            state, {0: 'CLEAR', 1: 'ACTIVE'}.get(state, '?'), typ,
            {0: 'NULL', 1: '3D', 2: 'BILLBOARD'}.get(typ, '?')))
        if hbb:
            self.note(off + 48, '  have_link_billboard %d' % hbb)
        self.note(off + 52, '  obj_lod_num %d, obj_child_num %d, obj_parent_link %s'
                  % (nl, nc, idx_str(parent)))
        self.note(off + 72, '  obj_anim_link %s' % idx_str(anim))
        if shape != NOLINK or mat != NOLINK:
            self.note(off + 64, '  obj_shape_link %s obj_mat_link %s'
                      % (idx_str(shape), idx_str(mat)))
        if nl:
            self.note(off + 88, '  obj_lod_dist %s, obj_lod_link %s'
                      % (fmt_list(dists), lod_links))
        if nc:
            self.note(off + 88 + 8 * nl, '  obj_child_link %s' % children)
        if nx:
            self.note(off + 88 + 8 * nl + 4 * nc, '  Nintendo ext (%d bytes): %s'
                      % (nx, words_str(ext)))
            if nx >= 28 and ext[4]:
                self.note(p + 16, '    obj_chain_root_link_num %d, '
                          'obj_chain_root_link %s' % (ext[4], ext[7:7 + ext[4]]))
        return Obj(nidx, anim, children, list(zip(dists, lod_links)), state,
                   typ, parent, hbb, ext, shape, mat, coll, group, pri, rcycle,
                   rpri, rt0, rt1)

    def cam(self, off, nb, i, niff2):
        tag, idx, size, nidx, typ = [self.u32(off + 4 * k) for k in range(5)]
        fl = [self.f32(off + 20 + 4 * k) for k in range(9)]
        lookat, eye, up, nx, ux = [self.u32(off + 56 + 4 * k) for k in range(5)]
        if tag != TAG_CAM:
            raise Fail(off, 'Cam tag 0x%08X' % tag)
        if size != nb or 76 + nx + ux != size:
            raise Fail(off + 8, 'cam_size %d does not add up' % size)
        ext = None
        if nx:
            ext = [self.u32(off + 76 + 4 * j) for j in range(nx // 4)]
        self.where[('cam', i)] = off
        self.note(off, 'Cam %d: tag 0x%08X index %d cam_size %d name_index %s '
                  'type %d' % (i, tag, idx, size, idx_str(nidx), typ))
        self.note(off + 20, '  near %s far %s right %s left %s top %s bottom %s'
                  % tuple(g9(v) for v in fl[:6]))
        self.note(off + 44, '  cam_fovy %s (degrees) cam_aspect %s cam_scale %s'
                  % tuple(g9(v) for v in fl[6:]))
        self.note(off + 56, '  cam_lookat_obj %s cam_eye_obj %s cam_up_obj %s'
                  % (idx_str(lookat), idx_str(eye), idx_str(up)))
        if nx:
            self.note(off + 76, '  Nintendo ext (%d bytes): %s' % (nx, words_str(ext)))
        return _cam(nidx, typ, fl, lookat, eye, up, ext)

    def name(self, off, nb, i):
        tag, idx, hs, size = [self.u32(off + 4 * k) for k in range(4)]
        if tag != TAG_NAME:
            raise Fail(off, 'Name tag 0x%08X' % tag)
        if size != nb or hs != 16 or size < 16:
            raise Fail(off + 12, 'name_size %d does not add up' % size)
        raw = bytes(self.d[off + 16:off + size])
        s = raw.split(b'\0', 1)[0].decode('ascii')
        self.where[('name', i)] = off
        self.note(off, 'Name %d: tag 0x%08X index %d header %d name_size %d '
                  '-> "%s" (%d bytes%s)' % (i, tag, idx, hs, size, s, size - 16,
                                            ', no NUL' if b'\0' not in raw
                                            else ''))
        return s

    def anim(self, off, gi, ai):
        tag, idx, size = self.u32(off), self.u32(off + 4), self.u32(off + 8)
        self.where[('group', gi, 'anim', ai)] = off
        tname = ANIM_TAG_NAME.get(tag, '?')
        if tag in (TAG_STATIC, TAG_CONST, TAG_FULL):
            if size != 52:
                raise Fail(off + 8, 'anim_size %d' % size)
            v = [self.f32(off + 12 + 4 * k) for k in range(10)]
            flag = self.u32(off + 36)
            a = TRS(v[0:3], v[3:6], [self.f32(off + 40 + 4 * k)
                                     for k in range(3)], tag, flag)
            self.note(off, '    Anim %d %s: T %s R %s S %s' % (
                ai, tname, fmt_list(a.t), fmt_list(a.r), fmt_list(a.s)))
            return a, size
        if tag == TAG_KEY:
            if size != 64:
                raise Fail(off + 8, 'anim_size %d' % size)
            key, nk, it = self.u32(off + 12), self.u32(off + 16), self.u32(off + 20)
            v = [self.f32(off + 24 + 4 * k) for k in range(6)]
            flag = self.u32(off + 48)
            s = [self.f32(off + 52 + 4 * k) for k in range(3)]
            self.where[('group', gi, 'anim', ai, 'next')] = off + 16
            a = Key(key, nk, it, v[0:3], v[3:6], s, flag)
            self.note(off, '    Anim %d KEY: key %d next_key %s interp %d (%s) '
                      'T %s R %s S %s' % (ai, key, idx_str(nk), it,
                                          INTERP_NAME.get(it, '?'),
                                          fmt_list(a.t), fmt_list(a.r),
                                          fmt_list(a.s)))
            return a, size
        if tag == TAG_BILL:
            if size != 20:
                raise Fail(off + 8, 'anim_size %d' % size)
            a = Bill(self.u32(off + 12), self.u32(off + 16))
            self.note(off, '    Anim %d BILLBOARD_OBJ: lookat_obj_index %d '
                      'upper_obj_index %d' % (ai, a.lookat, a.upper))
            return a, size
        raise Fail(off, 'unknown Anim tag 0x%08X' % tag)

    def group(self, off, nb, gi, niff2):
        w = [self.u32(off + 4 * k) for k in range(12)]
        (tag, idx, hs, size, nidx, typ, rate, n, loop, order, nx, ux) = w
        if tag != TAG_GROUP:
            raise Fail(off, 'AnimGroup tag 0x%08X' % tag)
        if size != nb:
            raise Fail(off + 12, 'anim_group_size %d != %d' % (size, nb))
        self.where[('group', gi)] = off
        self.note(off, 'AnimGroup %d: tag 0x%08X index %d header_size %d '
                  'group_size %d' % (gi, tag, idx, hs, size))
        self.note(off + 16, '  name_index %s anim_type %d (%s) frame_rate %d '
                  'anim_num %d anim_loop %d rot_order 0x%08X (%s) ext %d/%d'
                  % (idx_str(nidx), typ, ANIM_TYPE_NAME.get(typ, '?'), rate, n,
                     loop, order, ORDER_NAME.get(order, '?'), nx, ux))
        p = off + 48                       # Anim(0) at +48 (docs/formats/niff.md pitfall 3)
        anims = []
        for ai in range(n):
            if p + 12 > off + size:
                raise Fail(off + 28, 'anim_num %d does not fit' % n)
            a, asz = self.anim(p, gi, ai)
            anims.append(a)
            p += asz
        if p - off + nx + ux != size:
            raise Fail(off + 12, 'anim_group_size %d does not add up' % size)
        ext = None
        self.where[('group', gi, 'ext')] = p
        if niff2 and nx >= CHANNEL_HEAD:
            ext = self.channel_block(p, nx, gi)
        elif nx:
            raise Fail(off + 40, 'Nintendo ext of %d bytes in a NIFF1 group' % nx)
        g = Group(typ, anims, rate, loop, order, nidx, hs, ext,
                  self.d[p + nx:p + nx + ux])
        return g

    def channel_block(self, p, nx, gi):
        use = self.u32(p)
        counts = []
        need = CHANNEL_HEAD
        for j, (name, bit, n) in enumerate(CHANNELS):
            self.where[('group', gi, 'count', j)] = p + 4 + 4 * j
            c = self.u32(p + 4 + 4 * j)
            need += c * (8 + 8 * n)
            if need > nx:
                raise Fail(p + 4 + 4 * j, '%s count %d does not fit in the '
                           '%d-byte channel block' % (name, c, nx))
            counts.append(c)
        constraints = [self.u32(p + 36 + 4 * k) for k in range(28)]
        self.note(p, '  channel block (%d bytes): use_animation_channel 0x%X, '
                  'counts %s' % (nx, use, ' '.join(
                      '%s=%d' % (CHANNELS[j][0], c) for j, c in enumerate(counts)
                      if c) or 'all 0'))
        q = p + CHANNEL_HEAD
        chans = {}
        for j, (name, bit, n) in enumerate(CHANNELS):
            keys = []
            last = None
            for k in range(counts[j]):
                self.where[('group', gi, 'chan', name, k)] = q
                interp, frame = self.u32(q), self.u32(q + 4)
                vals = [self.f32(q + 8 + 4 * m) for m in range(n)]
                diffs = [self.f32(q + 8 + 4 * n + 4 * m) for m in range(n)]
                if last is not None and frame < last:
                    raise Fail(q + 4, '%s key frame %d < %d' % (name, frame, last))
                last = frame
                keys.append(ChanKey(interp, frame, vals, diffs))
                self.note(q, '    %s[%d]: interp %d (%s) key %d values %s d %s'
                          % (name, k, interp, CINTERP_NAME.get(interp, '?'),
                             frame, fmt_list(keys[-1].values),
                             fmt_list(keys[-1].diffs)))
                q += 8 + 8 * n
            if keys:
                chans[name] = keys
        if q != p + nx:
            raise Fail(p, 'channel block is %d bytes, its arrays end at %d'
                       % (nx, q - p))
        return ChanBlock(chans, use, constraints)

    def chain_item(self, kind, off, nb, i):
        """ChainRoot / Joint / Effector (RULES "IK chains")."""
        tag, idx, size, nidx, typ = [self.u32(off + 4 * k) for k in range(5)]
        if tag != CHAIN_ITEM_TAG[kind]:
            raise Fail(off, '%s tag 0x%08X' % (kind, tag))
        if idx != i:
            raise Fail(off + 4, '%s index %d at position %d' % (kind, idx, i))
        fixed = CHAIN_FIXED[kind]
        if size != nb or size < fixed:
            raise Fail(off + 8, '%s size %d' % (kind, size))
        self.where[(kind, i)] = off
        length = resplane = None
        if kind == 'chain_root':
            nobj, next_, anim, joint = [self.u32(off + 20 + 4 * k)
                                        for k in range(4)]
            self.where[(kind, i, 'anim')] = off + 28
            self.where[(kind, i, 'joint')] = off + 32
        elif kind == 'joint':
            length = self.f32(off + 20)
            resplane = [self.f32(off + 24 + 4 * k) for k in range(3)]
            nobj, next_, joint, eff, anim = [self.u32(off + 36 + 4 * k)
                                             for k in range(5)]
            self.where[(kind, i, 'joint')] = off + 44
            self.where[(kind, i, 'effector')] = off + 48
            self.where[(kind, i, 'anim')] = off + 52
        else:
            nobj, next_, anim = [self.u32(off + 20 + 4 * k) for k in range(3)]
            self.where[(kind, i, 'anim')] = off + 28
        nx, ux = self.u32(off + fixed - 8), self.u32(off + fixed - 4)
        if fixed + 4 * nobj + 8 * next_ + nx + ux != size:
            raise Fail(off + 8, '%s size %d does not add up' % (kind, size))
        p = off + fixed
        objs = []
        for j in range(nobj):
            self.where[(kind, i, 'obj', j)] = p
            objs.append(self.u32(p))
            p += 4
        ext_objs = [(self.u32(p + 8 * j), self.u32(p + 8 * j + 4))
                    for j in range(next_)]
        label = {'chain_root': 'ChainRoot', 'joint': 'Joint',
                 'effector': 'Effector'}[kind]
        self.note(off, '%s %d: tag 0x%08X index %d size %d name_index %s '
                  'type %d' % (label, i, tag, idx, size, idx_str(nidx), typ))
        if kind == 'joint':
            self.note(off + 20, '  joint_length %s resplane_axis %s'
                      % (g9(length), fmt_list(resplane)))
            self.note(off + 36, '  obj_num %d external_obj_num %d joint_index %s '
                      'effector_index %s anim_index %s, ext %d/%d'
                      % (nobj, next_, idx_str(joint), idx_str(eff),
                         idx_str(anim), nx, ux))
        elif kind == 'chain_root':
            self.note(off + 20, '  obj_num %d external_obj_num %d anim_index %s '
                      'joint_index %s, ext %d/%d' % (nobj, next_, idx_str(anim),
                                                    idx_str(joint), nx, ux))
        else:
            self.note(off + 20, '  obj_num %d external_obj_num %d anim_index %s, '
                      'ext %d/%d' % (nobj, next_, idx_str(anim), nx, ux))
        if nobj:
            self.note(off + fixed, '  obj_index %s' % objs)
        if next_:
            self.note(off + fixed + 4 * nobj, '  external objects (file name, '
                      'name) %s' % [(idx_str(a), idx_str(b)) for a, b in ext_objs])
        if kind == 'chain_root':
            return ChainRoot(nidx, anim, joint, objs, ext_objs, typ)
        if kind == 'joint':
            return Joint(nidx, anim, joint, eff, objs, ext_objs, typ, length,
                         resplane)
        return Effector(nidx, anim, objs, ext_objs, typ)

    def validate(self, sc):
        nobj, ng, nn, ncam = (len(sc.objs), len(sc.groups), len(sc.names),
                              len(sc.cams))
        nchain = {k: len(sc.chain_items(k)) for k in CHAIN_KINDS}
        for i, o in enumerate(sc.objs):            # NIFF2 chain root links
            if o.ext is None or len(o.ext) < 7:
                continue                            # < 28 bytes: no chain
            if 7 + o.ext[4] > len(o.ext):
                raise Fail(self.where[('obj', i, 'chain_num')],
                           'obj_chain_root_link_num %d does not fit' % o.ext[4])
            if o.state == STATE_CLEAR:
                continue
            for j, c in enumerate(obj_chain_links(o)):
                if c != NOLINK and c >= nchain['chain_root']:
                    raise Fail(self.where[('obj', i, 'chain', j)],
                               'obj_chain_root_link %d >= %d chain roots'
                               % (c, nchain['chain_root']))
        for kind in CHAIN_KINDS:
            for i, c in enumerate(sc.chain_items(kind)):
                if c.name_index != NOLINK and c.name_index >= nn:
                    raise Fail(self.where[(kind, i)] + 12, 'name_index')
                checks = [('anim', c.anim, ng)]
                if kind in ('chain_root', 'joint'):
                    checks.append(('joint', c.joint, nchain['joint']))
                if kind == 'joint':
                    checks.append(('effector', c.effector, nchain['effector']))
                for field, v, n in checks:
                    if v != NOLINK and v >= n:
                        raise Fail(self.where[(kind, i, field)],
                                   '%s %s_index %d >= %d' % (kind, field, v, n))
                for j, o in enumerate(c.objs):
                    if o != NOLINK and o >= nobj:
                        raise Fail(self.where[(kind, i, 'obj', j)],
                                   '%s obj_index %d >= %d objects' % (kind, o,
                                                                    nobj))
        for j, r in enumerate(sc.roots):
            if r >= nobj:
                raise Fail(self.where[('scene', 'root', j)], 'root link %d' % r)
        for j, c in enumerate(sc.cam_links):
            if c >= ncam:
                raise Fail(self.scene_cam_off + 4 * j, 'cam link %d' % c)
        for i, o in enumerate(sc.objs):
            if o.name_index != NOLINK and o.name_index >= nn:
                raise Fail(self.where[('obj', i, 'name')],
                           'obj_name_index %d >= %d names' % (o.name_index, nn))
            if o.state == STATE_CLEAR:
                continue                 # CLEAR: all its links are ignored
            if o.anim_link != NOLINK and o.anim_link >= ng:
                raise Fail(self.where[('obj', i, 'anim')],
                           'obj_anim_link %d >= %d groups' % (o.anim_link, ng))
            for j, c in enumerate(o.children):
                if c >= nobj:
                    raise Fail(self.where[('obj', i, 'child', j)],
                               'obj_child_link %d >= %d objects' % (c, nobj))
            for j, (dd, l) in enumerate(o.lods):
                if l >= nobj:
                    raise Fail(self.where[('obj', i, 'lod', j)],
                               'obj_lod_link %d >= %d objects' % (l, nobj))
        for i, c in enumerate(sc.cams):
            if c.name_index != NOLINK and c.name_index >= nn:
                raise Fail(self.where[('cam', i)] + 12, 'cam_name_index')
            for k, v in ((56, c.lookat), (60, c.eye), (64, c.up)):
                if v != NOLINK and v >= nobj:
                    raise Fail(self.where[('cam', i)] + k, 'cam obj link %d' % v)
        for gi, g in enumerate(sc.groups):
            if g.anim_type == ANIM_KEY and g.anims:
                key_chain(g, gi, self.where)
            if g.anim_type == ANIM_BILL:
                a = g.anims[0] if g.anims else None
                if not isinstance(a, Bill):
                    raise Fail(self.where[('group', gi)] + 28,
                               'BILLBOARD_OBJ group without its Anim')
                for k, v in ((12, a.lookat), (16, a.upper)):
                    if v >= nobj:
                        raise Fail(self.where[('group', gi, 'anim', 0)] + k,
                                   'billboard obj index %d' % v)
        # the hierarchy (cycle -> refused at the link)
        build_nodes(sc, 'x', self.where)


def _cam(nidx, typ, fl, lookat, eye, up, ext):
    return Cam(nidx, lookat, eye, up, fl[0], fl[1], fl[6], fl[7], type=typ,
               right=fl[2], left=fl[3], top=fl[4], bottom=fl[5], scale=fl[8],
               ext=ext)


def key_chain(g, gi=None, where=None):
    """The playback chain of a KEY group (list of Anim indices), RULES KEY."""
    anims = g.anims
    last = len(anims) - 1
    chain, cur, seen = [0], 0, {0}
    while True:
        a = anims[cur]
        if not isinstance(a, Key):
            raise Fail(where[('group', gi, 'anim', cur)] if where else 0,
                       'non-KEY Anim in a KEY group')
        nk = a.next_key
        if nk == NOLINK:
            break
        j = next((k for k, b in enumerate(anims)
                  if isinstance(b, Key) and b.key == nk), None)
        if j is None and cur == last:
            break                        # unmatched on the physically last: ends
        if nk <= a.key or j is None or j in seen:
            raise Fail(where[('group', gi, 'anim', cur, 'next')] if where else 0,
                       'next_key %d after key %d' % (nk, a.key))
        chain.append(j)
        seen.add(j)
        cur = j
    return chain


def words_str(ws):
    return '[' + ', '.join(idx_str(w) for w in ws) + ']'


def idx_str(v):
    return '0xFFFFFFFF' if v == NOLINK else str(v)


def g9(v):
    """%.9g, with -0 and tiny round-off written as 0."""
    if abs(v) < 5e-10:
        v = 0.0
    return '%.9g' % v


def fmt_list(vals):
    return '(' + ', '.join(g9(v) for v in vals) + ')'


def parse_bytes(data):
    p = Parser(data)
    sc = p.parse()
    return sc, p


def stem_of(fname):
    return fname.rsplit('.', 1)[0]


# --- the reference evaluator (RULES.md) --------------------------------------------
# Matrices are 4x4 row-major lists, column-vector convention: translation in
# elements [0][3], [1][3], [2][3]; World = parent World * Local; Local = T*R*S.

def ident():
    return [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]


def mul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(4)) for j in range(4)]
            for i in range(4)]


def m_translate(t):
    M = ident()
    M[0][3], M[1][3], M[2][3] = t
    return M


def m_scale(s):
    M = ident()
    M[0][0], M[1][1], M[2][2] = s
    return M


def m_rx(a):
    c, s = math.cos(a), math.sin(a)
    return [[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]]


def m_ry(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1.0]]


def m_rz(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]


def order_name(order):
    return ORDER_NAME.get(order, 'XYZ')          # unknown -> XYZ (warning)


def m_euler(order, r):
    """Order "ABC" = A applied first: R = M_C * M_B * M_A."""
    per = {'X': m_rx(r[0]), 'Y': m_ry(r[1]), 'Z': m_rz(r[2])}
    R = ident()
    for axis in order_name(order):
        R = mul(per[axis], R)
    return R


def q_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def q_matrix(q):
    w, x, y, z = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 0],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 0],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), 0],
            [0, 0, 0, 1.0]]


def euler_by_quaternion(order, r):
    """Independent check of m_euler: the sequence comes from the encoding
    (byte 2/1/0 = position 1..3 of X/Y/Z), q = q_last * ... * q_first."""
    if order not in ORDER_NAME:
        order = XYZ
    pos = {'X': (order >> 16) & 0xFF, 'Y': (order >> 8) & 0xFF, 'Z': order & 0xFF}
    seq = sorted('XYZ', key=lambda a: pos[a])
    ang = {'X': r[0], 'Y': r[1], 'Z': r[2]}
    q = (1.0, 0.0, 0.0, 0.0)
    for axis in seq:
        h = ang[axis] / 2
        qa = (math.cos(h), math.sin(h) if axis == 'X' else 0.0,
              math.sin(h) if axis == 'Y' else 0.0,
              math.sin(h) if axis == 'Z' else 0.0)
        q = q_mul(qa, q)
    return q_matrix(q)


EULER_CHECKS = [0]


def m_rot(order, r):
    R = m_euler(order, r)
    Q = euler_by_quaternion(order, r)
    assert max_diff(R, Q) < 1e-12, (order, r)
    EULER_CHECKS[0] += 1
    return R


def compose(t, R, s):
    return mul(mul(m_translate(t), R), m_scale(s))


def max_diff(A, B):
    return max(abs(A[i][j] - B[i][j]) for i in range(4) for j in range(4))


def inverse_affine(A):
    a = [row[:3] for row in A[:3]]
    det = (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
           - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
           + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    inv = [[0.0] * 3 for _ in range(3)]
    for i in range(3):
        for j in range(3):
            r = [k for k in range(3) if k != j]
            c = [k for k in range(3) if k != i]
            minor = a[r[0]][c[0]] * a[r[1]][c[1]] - a[r[0]][c[1]] * a[r[1]][c[0]]
            inv[i][j] = (-1) ** (i + j) * minor / det
    t = [A[0][3], A[1][3], A[2][3]]
    out = ident()
    for i in range(3):
        for j in range(3):
            out[i][j] = inv[i][j]
        out[i][3] = -sum(inv[i][k] * t[k] for k in range(3))
    return out


def v_sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def v_add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def v_cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0])


def v_dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def v_len(a):
    return math.sqrt(v_dot(a, a))


def v_norm(a):
    n = v_len(a)
    return tuple(x / n for x in a)


def v_scale(a, k):
    return tuple(x * k for x in a)


def m_columns(X, Y, Z, t):
    return [[X[0], Y[0], Z[0], t[0]], [X[1], Y[1], Z[1], t[1]],
            [X[2], Y[2], Z[2], t[2]], [0, 0, 0, 1.0]]


def origin(M):
    return (M[0][3], M[1][3], M[2][3])


# -- sampling --

def s_curve(interp, u):
    """RULES KEY: s(u) per NIFF1 interpolation_type."""
    if interp == I_STATIC:
        return 0.0
    if interp == I_LINEAR:
        return u
    if interp == I_SLOWIN:
        return u + u * u - u ** 3
    if interp == I_SLOWOUT:
        return 2 * u * u - u ** 3
    if interp == I_SLOW:
        return 3 * u * u - 2 * u ** 3
    return u                                      # other: linear (warning)


def lerp3(a, b, s):
    return tuple(x + (y - x) * s for x, y in zip(a, b))


def lerp_trs(a, b, s):
    return (lerp3(a[0], b[0], s), lerp3(a[1], b[1], s), lerp3(a[2], b[2], s))


def trs_of(a):
    return (a.t, a.r, a.s)


def uses_channels(g):
    return g.ext is not None and g.ext.use != 0


def period(g):
    """P in frames (RULES): FULL anim_num - 1, KEY last chain key, channels
    the largest key frame, everything else 0."""
    if uses_channels(g):
        return max([k.frame for ks in g.ext.chans.values() for k in ks] or [0])
    if g.anim_type == ANIM_FULL:
        return max(len(g.anims) - 1, 0)
    if g.anim_type == ANIM_KEY and g.anims:
        return g.anims[key_chain(g)[-1]].key
    return 0


def loop_frame(g, f):
    P = period(g)
    if P <= 0:
        return f
    if f <= 0:
        return 0.0
    if g.loop != 0 and not f < g.loop * P:        # N plays, then hold
        return float(P)
    r = math.fmod(f, P)                           # at f = k*P the final value shows
    return r if r > 0 else float(P)


def full_sample(g, fl):
    P = len(g.anims) - 1
    i = int(math.floor(fl))
    if P <= 0 or i >= P:
        return trs_of(g.anims[min(max(P, 0), len(g.anims) - 1)])
    return lerp_trs(trs_of(g.anims[i]), trs_of(g.anims[i + 1]), fl - i)


def key_sample(g, fl):
    ks = [g.anims[j] for j in key_chain(g)]
    if fl <= ks[0].key:
        return trs_of(ks[0])
    if fl >= ks[-1].key:
        return trs_of(ks[-1])
    i = max(k for k in range(len(ks)) if ks[k].key <= fl)
    a, b = ks[i], ks[i + 1]
    u = (fl - a.key) / float(b.key - a.key)
    return lerp_trs(trs_of(a), trs_of(b), s_curve(a.interp, u))


def chan_sample(keys, fl):
    j = -1
    for k, key in enumerate(keys):
        if key.frame <= fl:
            j = k                                 # the later key wins on ties
    if j < 0:
        return keys[0].values
    if j == len(keys) - 1:
        return keys[-1].values
    a, b = keys[j], keys[j + 1]
    D = float(b.frame - a.frame)
    u = (fl - a.frame) / D
    if a.interp == C_CONST:
        return a.values
    if a.interp == C_HERMITE:
        h00 = 2 * u ** 3 - 3 * u * u + 1
        h10 = u ** 3 - 2 * u * u + u
        h01 = -2 * u ** 3 + 3 * u * u
        h11 = u ** 3 - u * u
        return tuple(h00 * va + h10 * D * da + h01 * vb + h11 * D * db
                     for va, da, vb, db in zip(a.values, a.diffs, b.values,
                                               b.diffs))
    return lerp3(a.values, b.values, u)           # FULL, LINEAR


def m_axis_angle(axis, angle):
    x, y, z = v_norm(axis)
    c, s = math.cos(angle), math.sin(angle)
    C = 1 - c
    return [[c + x * x * C, x * y * C - z * s, x * z * C + y * s, 0],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s, 0],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C, 0],
            [0, 0, 0, 1.0]]


def m_orientation_xy(xa, ya):
    X = v_norm(xa)
    Y = v_norm(v_sub(ya, v_scale(X, v_dot(ya, X))))
    Z = v_cross(X, Y)
    return m_columns(X, Y, Z, (0, 0, 0))


def channel_local(g, fl):
    ch = g.ext.chans
    a0 = g.anims[0] if g.anims and isinstance(g.anims[0], (TRS, Key)) else None
    if 'translation' in ch:
        t = chan_sample(ch['translation'], fl)
    else:
        t = a0.t if a0 else (0.0, 0.0, 0.0)
    if 'classical_scale' in ch:
        s = chan_sample(ch['classical_scale'], fl)
    elif 'unique_scale' in ch:
        s = chan_sample(ch['unique_scale'], fl)
    else:
        s = a0.s if a0 else (1.0, 1.0, 1.0)
    if 'rotate_axis' in ch:
        v = chan_sample(ch['rotate_axis'], fl)
        R = m_axis_angle(v[:3], v[3])
    elif 'orientation_xy' in ch:
        v = chan_sample(ch['orientation_xy'], fl)
        R = m_orientation_xy(v[:3], v[3:])
    elif any(k in ch for k in ('rotate_x', 'rotate_y', 'rotate_z')):
        r = tuple(chan_sample(ch[k], fl)[0] if k in ch else 0.0
                  for k in ('rotate_x', 'rotate_y', 'rotate_z'))
        R = m_rot(g.order, r)
    elif a0:
        R = m_rot(g.order, a0.r)
    else:
        R = ident()
    return compose(t, R, s)


BILLBOARD = 'billboard'


def group_local(g, f):
    """Local matrix of a group at scene frame f (or BILLBOARD)."""
    fl = loop_frame(g, f)
    if uses_channels(g):
        return channel_local(g, fl)
    if g.anim_type == ANIM_BILL:
        return BILLBOARD
    if g.anim_type == ANIM_FULL:
        t, r, s = full_sample(g, fl)
    elif g.anim_type == ANIM_KEY:
        t, r, s = key_sample(g, fl)
    else:                                         # STATIC and unknown types
        a0 = g.anims[0] if g.anims else None
        if not isinstance(a0, (TRS, Key)):
            return ident()
        t, r, s = trs_of(a0)
    return compose(t, m_rot(g.order, r), s)


# -- nodes and names (RULES "Scene nodes") --

class Node:
    def __init__(self, name, parent, obj=None, cam=None, chain=None):
        self.name, self.parent, self.obj, self.cam = name, parent, obj, cam
        self.chain = chain                        # (kind, list index)


def obj_names(sc):
    out, count = [], {}
    for i, o in enumerate(sc.objs):
        base = sc.names[o.name_index] if o.name_index != NOLINK \
            else 'obj%d' % i
        count[base] = count.get(base, 0) + 1
        out.append(base if count[base] == 1 else '%s#%d' % (base, count[base]))
    return out


def cam_names(sc, used):
    out = []
    used = set(used)
    for i, c in enumerate(sc.cams):
        base = sc.names[c.name_index] if c.name_index != NOLINK \
            else 'cam%d' % i
        name, k = base, 2
        while name in used:
            name = '%s#%d' % (base, k)
            k += 1
        used.add(name)
        out.append(name)
    return out


def chain_names(sc, used):
    """RULES "IK chains": the NameList name, else chain_root<i> / joint<i> /
    effector<i>, made unique after the objects' names, chain roots, joints,
    effectors in list order ("#2", "#3", ...)."""
    out = {}
    used = set(used)
    for kind in CHAIN_KINDS:
        for i, c in enumerate(sc.chain_items(kind)):
            base = sc.names[c.name_index] if c.name_index != NOLINK \
                else '%s%d' % (kind, i)
            name, k = base, 2
            while name in used:
                name = '%s#%d' % (base, k)
                k += 1
            used.add(name)
            out[(kind, i)] = name
    return out


def build_nodes(sc, stem, where=None):
    names = obj_names(sc)
    cnames = chain_names(sc, names)
    nodes = [Node("RootNode", None)]
    placed = {}
    chain_placed = set()

    def place(o, parent, path, link):
        if o in path:
            raise Fail(where[link] if where else 0, 'cycle through object %d' % o)
        if o in placed:
            return                                # already placed (warning)
        ni = len(nodes)
        nodes.append(Node(names[o], parent, obj=o))
        placed[o] = ni
        ob = sc.objs[o]
        if ob.state == STATE_CLEAR:
            return                                # CLEAR ignores its links
        for j, c in enumerate(ob.children):
            place(c, ni, path + [o], ('obj', o, 'child', j))
        for j, (dist, l) in enumerate(ob.lods):
            place(l, ni, path + [o], ('obj', o, 'lod', j))
        for c in obj_chain_links(ob):             # then its IK chain roots
            if c != NOLINK:
                place_chain('chain_root', c, ni, path + [o])

    def place_chain(kind, i, parent, path):
        if (kind, i) in chain_placed:
            return                                # reached again (warning)
        chain_placed.add((kind, i))
        ni = len(nodes)
        nodes.append(Node(cnames[(kind, i)], parent, chain=(kind, i)))
        c = sc.chain_items(kind)[i]
        for j, o in enumerate(c.objs):            # its objects first
            if o != NOLINK:
                place(o, ni, path, (kind, i, 'obj', j))
        if kind in ('chain_root', 'joint') and c.joint != NOLINK:
            place_chain('joint', c.joint, ni, path)
        if kind == 'joint' and c.effector != NOLINK:
            place_chain('effector', c.effector, ni, path)

    for j, r in enumerate(sc.roots):
        place(r, 0, [], ('scene', 'root', j))
    for o in range(len(sc.objs)):
        if o not in placed:                       # not reached (warning)
            place(o, 0, [], None)
    for i, cn in enumerate(cam_names(sc, [n.name for n in nodes])):
        nodes.append(Node(cn, 0, cam=i))
    return nodes


def chain_group(sc, kind, i):
    c = sc.chain_items(kind)[i]
    return None if c.anim == NOLINK else sc.groups[c.anim]


def node_group(sc, n):
    """The AnimGroup a node plays (object or chain element), or None."""
    if n.obj is not None:
        return live_group(sc, n.obj)
    if n.chain is not None:
        return chain_group(sc, *n.chain)
    return None


def live_group(sc, o):
    ob = sc.objs[o]
    if ob.state == STATE_CLEAR or ob.anim_link == NOLINK:
        return None
    return sc.groups[ob.anim_link]


def duration_frames(sc):
    """Over the groups that placed nodes play: live objects' groups and (an
    assumption: RULES names only objects) the placed chain elements'."""
    best = 0
    for n in build_nodes(sc, ''):
        g = node_group(sc, n)
        if g is None:
            continue
        P = period(g)
        if P > 0:
            best = max(best, P if g.loop == 0 else g.loop * P)
    return best


class Evaluator:
    def __init__(self, sc, stem):
        self.sc = sc
        self.nodes = build_nodes(sc, stem)
        self.by_name = {n.name: i for i, n in enumerate(self.nodes)}
        assert len(self.by_name) == len(self.nodes), 'node names not unique'
        self.obj_node = {n.obj: i for i, n in enumerate(self.nodes)
                         if n.obj is not None}
        self.conv = {}
        for i, c in enumerate(sc.cams):
            E, L, U = self.cam_points(c, self.worlds(0.0))
            self.conv[i] = up_convention(E, L, U)

    def cam_points(self, c, W):
        E = origin(W[self.obj_node[c.eye]]) if c.eye != NOLINK else (0.0, 0.0, 0.0)
        L = origin(W[self.obj_node[c.lookat]]) if c.lookat != NOLINK \
            else v_add(E, (0.0, 0.0, -1.0))
        U = origin(W[self.obj_node[c.up]]) if c.up != NOLINK else None
        return E, L, U

    def worlds(self, f, with_cams=False):
        sc, nodes = self.sc, self.nodes
        W = [None] * len(nodes)
        busy = set()

        def get(i):
            if W[i] is not None:
                return W[i]
            assert i not in busy, 'billboard dependency cycle'
            busy.add(i)
            n = nodes[i]
            if n.parent is None:
                W[i] = ident()
            elif n.obj is not None or n.chain is not None:
                P = get(n.parent)
                g = node_group(sc, n)
                loc = ident() if g is None else group_local(g, f)
                if loc is BILLBOARD:
                    assert n.obj is not None, 'a billboard group on a chain element' 
                    b = g.anims[0]
                    W[i] = billboard_world(P, origin(get(self.obj_node[b.lookat])),
                                           origin(get(self.obj_node[b.upper])))
                else:
                    W[i] = mul(P, loc)
            else:
                W[i] = ident()                    # cameras: filled below
            busy.discard(i)
            return W[i]

        for i, n in enumerate(nodes):
            if n.cam is None:
                get(i)
        if with_cams:
            for i, n in enumerate(nodes):
                if n.cam is not None:
                    c = sc.cams[n.cam]
                    E, L, U = self.cam_points(c, W)
                    W[i] = camera_world(E, L, U, self.conv[n.cam])
        return W

    def pose(self, f, name):
        W = self.worlds(f, with_cams=True)
        return W[self.by_name[name]]


def billboard_world(P, L, U):
    """RULES BILLBOARD_OBJ: W = [x y z | S], S = parent's world origin."""
    S = origin(P)
    d = v_sub(L, S)
    if v_len(d) < 1e-9 or v_len(v_sub(U, S)) < 1e-12:
        return P                                  # local = identity
    z = v_norm(d)
    y0 = v_norm(v_sub(U, S))
    xc = v_cross(y0, z)
    if v_len(xc) < 1e-9:
        return P
    x = v_norm(xc)
    y = v_cross(z, x)
    W = m_columns(x, y, z, S)
    local = mul(inverse_affine(P), W)             # what the importer stores
    assert max_diff(mul(P, local), W) < 1e-9
    check_orthonormal(W)
    return W


def up_convention(E, L, U):
    """Chosen once, at t = 0 (RULES Cameras)."""
    f = v_sub(L, E)
    if U is not None and v_len(f) > 1e-9:
        ue = v_sub(U, E)
        if v_len(ue) > 1e-6 and v_len(v_cross(v_norm(ue), v_norm(f))) >= 0.1:
            return 'relative'
        if v_len(U) > 1e-6 and v_len(v_cross(v_norm(U), v_norm(f))) >= 0.1:
            return 'direction'
    return 'fixed'


def camera_world(E, L, U, conv):
    f = v_sub(L, E)
    u = {'relative': lambda: v_sub(U, E), 'direction': lambda: U,
         'fixed': lambda: (0.0, 1.0, 0.0)}[conv]()
    if v_len(f) < 1e-9:
        return m_translate(E)
    Z = v_scale(v_norm(f), -1.0)
    xc = v_cross(u, Z)
    if v_len(xc) < 1e-9:
        return m_translate(E)
    X = v_norm(xc)
    Y = v_cross(Z, X)
    W = m_columns(X, Y, Z, E)
    check_orthonormal(W)
    return W


def check_orthonormal(W):
    cols = [tuple(W[r][c] for r in range(3)) for c in range(3)]
    for a in range(3):
        for b in range(3):
            assert abs(v_dot(cols[a], cols[b]) - (1.0 if a == b else 0.0)) < 1e-9
    assert abs(v_dot(v_cross(cols[0], cols[1]), cols[2]) - 1.0) < 1e-9


def cam_hfov(c):
    aspect = c.aspect if (c.aspect > 0 and math.isfinite(c.aspect)) else 4.0 / 3
    return math.atan(math.tan(c.fovy * math.pi / 360.0) * aspect), aspect


def t_string(frame):
    return g9(frame / FPS)


def fmt_matrix(M):
    return ','.join(g9(M[i][j]) for i in range(4) for j in range(4))


def step_poses(fname):
    """The pose requests of fname that sit on a jump (AT_STEP)."""
    return frozenset((f, n) for fn, f, n in AT_STEP if fn == fname)


def expect_lines(sc, stem, poses, at_step=frozenset()):
    """poses: list of (frame, node name); at_step: those of them that sit on
    a jump: their expect-pose line ends with " at_step=1" (the game's value
    there is exact, playback of baked keys may take either side)."""
    ev = Evaluator(sc, stem)
    out = ['expect-format niff', 'expect-version 0x%08x' % sc.version,
           'expect-nodes %d' % len(ev.nodes)]
    D = duration_frames(sc)
    if D > 0:
        out.append('expect-duration %s' % g9(D / FPS))
    for n in ev.nodes:
        if n.cam is not None:
            c = sc.cams[n.cam]
            hfov, aspect = cam_hfov(c)
            out.append('expect-camera node=%s hfov=%s aspect=%s near=%s far=%s'
                       % (n.name, g9(hfov), g9(aspect), g9(c.near), g9(c.far)))
    for frame, name in poses:
        t = t_string(frame)
        M = ev.pose(float(t) * FPS, name)
        out.append('expect-pose t=%s node=%s world=%s%s' % (
            t, name, fmt_matrix(M),
            ' at_step=1' if (frame, name) in at_step else ''))
    return out


# --- the fixtures ------------------------------------------------------------------

def full_group(frames, order=XYZ, loop=0, frame_rate=2):
    return Group(ANIM_FULL, [TRS(t, r, s, TAG_FULL) for t, r, s in frames],
                 frame_rate=frame_rate, loop=loop, order=order)


def key_group(frames, interps, T, R, S, loop=0, last_next=NOLINK, order=XYZ,
              frame_rate=0):
    anims = []
    for k, fr in enumerate(frames):
        nk = frames[k + 1] if k + 1 < len(frames) else last_next
        anims.append(Key(fr, nk, interps[k], T[k], R[k], S[k]))
    return Group(ANIM_KEY, anims, frame_rate=frame_rate, loop=loop,
                 order=order)


def static_group(t=(0, 0, 0), r=(0, 0, 0), s=(1, 1, 1), tag=TAG_STATIC,
                 order=XYZ, ext=None, header_size=48):
    return Group(ANIM_STATIC, [TRS(t, r, s, tag)], order=order, ext=ext,
                 header_size=header_size)


def full3():
    base = list(zip(
        [(0, 0, 0), (1, 0, 0.5), (2, 0.5, 0), (3, 1, -0.5), (2, 0.5, -1),
         (1, 0.25, -0.5), (0, 0, 0)],
        [(0, 0, 0), (0, 0.2, 0), (0, 0.4, 0), (0, 0.6, 0), (0, 0.4, 0),
         (0, 0.2, 0), (0, 0, 0)],
        [(1, 1, 1)] * 7))
    mid = list(zip(
        [(0, 2, 0), (0, 2.1, 0), (0, 2.2, 0.1), (0, 2.3, 0.2), (0, 2.2, 0.1),
         (0, 2.1, 0), (0.2, 2, 0)],
        [(0, 0, 0), (0.3, 0.5, 0.1), (0.6, 1.0, 0.2), (0.9, 1.5, 0.3),
         (1.2, 1.0, 0.4), (1.5, 0.5, 0.5), (1.8, 0.1, 0.6)],
        [(1, 2, 0.5), (1.1, 1.8, 0.6), (1.2, 1.6, 0.7), (1.3, 1.4, 0.8),
         (1.2, 1.6, 0.7), (1.1, 1.8, 0.6), (1.0, 2.0, 0.5)]))
    tip = list(zip(
        [(0, 1.5, 0)] * 7,
        [(0, 0, 0), (1.0, -0.8, 0.6), (2.0, -1.6, 1.2), (1.2, 0.4, -0.5),
         (0.3, 1.0, 0.9), (-0.5, 0.6, 0.3), (0, 0, 0)],
        [(1, 1, 1)] * 7))
    side = list(zip(
        [(-1.5, 0.5, 0), (-1.5, 0.6, 0.1), (-1.5, 0.7, 0.2), (-1.5, 0.8, 0.3),
         (-1.5, 0.7, 0.2), (-1.5, 0.6, 0.1), (-1.5, 0.5, 0)],
        [(0, 0, 0), (0.25, 0, 0.5), (0.5, 0, 1.0), (0.75, 0, 1.5),
         (0.5, 0, 1.0), (0.25, 0, 0.5), (0, 0, 0)],
        [(0.5, 0.5, 0.5)] * 7))
    names = ['base', 'mid', 'tip', 'side', 'Scene_full3']
    objs = [Obj(0, 0, children=(1, 3)), Obj(1, 1, children=(2,), parent=0),
            Obj(2, 2, parent=1), Obj(3, 3, parent=0)]
    groups = [full_group(base), full_group(mid), full_group(tip),
              full_group(side)]
    return Scene(VERSION_NIFF1, objs, groups, names, roots=(0,), scene_name=4)


KEYS_TX = [0, 1, 3, -2, 0]
KEYS_RY = [0, 0.5, -0.5, 1.0, 0]
KEYS_SY = [1, 1.5, 0.5, 2, 1]


def interp_group(frames, interp, y):
    n = len(frames)
    return key_group(frames, [interp] * n,
                     [(KEYS_TX[k], y, 0) for k in range(n)],
                     [(0, KEYS_RY[k], 0) for k in range(n)],
                     [(1, KEYS_SY[k], 1) for k in range(n)])


def keys():
    names = ['k_static', 'k_linear', 'k_slowin', 'k_slowout', 'k_slow',
             'k_mixed', 'k_wrap', 'k_endless', 'k_twice']
    groups = [
        interp_group([0, 4, 9, 15, 24], I_STATIC, 0),
        interp_group([0, 3, 10, 12, 24], I_LINEAR, 2),
        interp_group([0, 5, 8, 16, 24], I_SLOWIN, 4),
        interp_group([0, 2, 11, 17, 24], I_SLOWOUT, 6),
        interp_group([0, 7, 9, 20, 24], I_SLOW, 8),
    ]
    # k_mixed: six keys on the chain, types LINEAR, STATIC, SLOWIN, SLOW,
    # SLOWOUT, plus one Anim (key 7) that is not on the chain.
    mixed = [
        Key(0, 4, I_LINEAR, (0, -2, 0), (0, 0, 0), (1, 1, 1)),
        Key(4, 10, I_STATIC, (2, -2, 0), (0, 0, 0.4), (1.2, 1, 1)),
        Key(7, NOLINK, I_SLOW, (9, 9, 9), (0, 0, 2.0), (5, 5, 5)),
        Key(10, 13, I_SLOWIN, (1, -2, 0), (0, 0, -0.3), (0.8, 1, 1)),
        Key(13, 18, I_SLOW, (3, -2, 0), (0, 0, 0.8), (1.5, 1, 1)),
        Key(18, 21, I_SLOWOUT, (-1, -2, 0), (0, 0, 0.1), (1, 1, 1)),
        Key(21, NOLINK, I_LINEAR, (0, -2, 0), (0, 0, 0), (1, 1, 1)),
    ]
    groups.append(Group(ANIM_KEY, mixed))
    # k_wrap: rz 3.03 -> -3.03 between keys 10 and 11 (Euler lerp: through 0)
    groups.append(key_group([0, 10, 11, 14], [I_LINEAR] * 4,
                            [(0, 1, 0)] * 4,
                            [(0, 0, 0), (0.2, 0, 3.03), (0.2, 0, -3.03),
                             (0, 0, -2.5)],
                            [(1, 1, 1)] * 4))
    # k_endless: period 8 (clean loop), shorter than the scene (24)
    groups.append(key_group([0, 3, 8], [I_LINEAR] * 3,
                            [(0, 1, 0), (0.5, 1, 0), (0, 1, 0)],
                            [(0, 0, 0), (0, 0.7, 0), (0, 0, 0)],
                            [(1, 1, 1)] * 3))
    # k_twice: anim_loop 2, P 9 -> plays until 18 then holds the last value;
    # its physically last Anim has an unmatched next_key (12): ends the chain.
    groups.append(key_group([0, 4, 9], [I_LINEAR] * 3,
                            [(0, -4, 0), (2, -4, 0), (5, -4, 0)],
                            [(0, 0, 0), (0, 0, 0.5), (0, 0, 1.0)],
                            [(1, 1, 1)] * 3, loop=2, last_next=12))
    objs = [Obj(i, i) for i in range(5)]
    objs.append(Obj(5, 5, children=(6,)))
    objs.append(Obj(6, 6, children=(7,), parent=5))
    objs.append(Obj(7, 7, parent=6))
    objs.append(Obj(8, 8))
    return Scene(VERSION_NIFF1, objs, groups, names,
                 roots=(0, 1, 2, 3, 4, 5, 8))


def static():
    names = ['house', 'orphan', 'door', 'lamp', 'cleared', 'under_clear',
             'post', 'marker', 'house_lod']
    groups = [
        static_group((1, 0, -2), (0, 0.5, 0), (1, 1.5, 1)),          # 0 house
        static_group((-4, 0, 0), (0.1, 0, 0)),                       # 1 orphan
        static_group((0.5, 0, 1), (0, -0.3, 0), tag=TAG_CONST),      # 2 door
        key_group([0, 10], [I_LINEAR] * 2, [(0, 0, 0), (5, 0, 0)],   # 3 (CLEAR)
                  [(0, 0, 0)] * 2, [(1, 1, 1)] * 2),
        static_group((0, 3, 0), (0, 0, 0.25)),                       # 4
        static_group((3, 0, 3)),                                     # 5 post
        static_group((-3, 0, 3)),                                    # 6 post#2
        static_group((0, 0, -5), (0, 1.0, 0)),                       # 7 obj8
        static_group((0, 1, 0), (0.2, 0.3, 0.4),                     # 8 marker
                     order=ORDER_VALUE['ZYX']),
        static_group((0, 0, 0.1)),                                   # 9 lod
    ]
    objs = [
        Obj(0, 0, children=(2, 3), lods=((50.0, 10),)),   # 0 house
        Obj(1, 1, parent=0),                              # 1 orphan (bogus parent)
        Obj(2, 2, parent=0),                              # 2 door (CONST)
        Obj(3, NOLINK, parent=0),                         # 3 lamp (unlinked)
        Obj(4, 3, children=(5,), state=STATE_CLEAR),      # 4 cleared
        Obj(5, 4, parent=4),                              # 5 under_clear
        Obj(6, 5),                                        # 6 post
        Obj(6, 6),                                        # 7 post -> post#2
        Obj(NOLINK, 7),                                   # 8 unnamed -> obj8
        Obj(7, 8, type=OBJ_NULL),                         # 9 marker (NULL type)
        Obj(8, 9, parent=0),                              # 10 house_lod
    ]
    return Scene(VERSION_NIFF1, objs, groups, names,
                 roots=(0, 4, 6, 7, 8, 9, 2))


def camera():
    names = ['eye', 'eye_up', 'target', 'SideCam', 'side_target', 'side_up',
             'MainCam', 'SideCam']
    groups = [
        key_group([0, 10, 20], [I_LINEAR] * 3,
                  [(0, 2, 10), (6, 3, 8), (0, 2, 10)], [(0, 0, 0)] * 3,
                  [(1, 1, 1)] * 3),
        static_group((0, 1, 0)),
        full_group(list(zip([(-1, 0.5, 0), (-0.5, 0.7, 0), (0, 1, 0.2),
                             (0.5, 0.7, 0.4), (0, 0.5, 0.2), (-1, 0.5, 0)],
                            [(0, 0, 0)] * 6, [(1, 1, 1)] * 6)), frame_rate=1),
        static_group((30, 8, 52)),
        static_group((0, 0.5, 0)),
        static_group((0, 1, 0)),
    ]
    objs = [Obj(0, 0, children=(1,), type=OBJ_NULL),
            Obj(1, 1, parent=0, type=OBJ_NULL),
            Obj(2, 2, type=OBJ_NULL),
            Obj(3, 3, type=OBJ_NULL),
            Obj(4, 4, type=OBJ_NULL),
            Obj(5, 5, type=OBJ_NULL)]
    cams = [Cam(6, lookat=2, eye=0, up=1, near=1, far=1000, fovy=45,
                aspect=1.3333),
            Cam(7, lookat=4, eye=3, up=5, near=0.5, far=500, fovy=60,
                aspect=1.5)]
    return Scene(VERSION_NIFF1, objs, groups, names, roots=(0, 2, 3, 4, 5),
                 cams=cams)


def CK(interp, frame, values, diffs=None):
    return ChanKey(interp, frame, values, diffs or (0.0,) * len(values))


OBJ2_EXT = (0, 0, 0, 0, 0, 0, 0)      # 4 *_for_fog, chain_root/ext lod/ext obj = 0
CAM2_EXT = (NOLINK,) * 6              # 3 external (file, name) pairs


def channels():
    names = ['chan_euler', 'chan_axis', 'chan_orient', 'chan_b2n',
             'chan_keyanim', 'cam_eye', 'cam_up']
    g0 = ChanBlock({
        'rotate_x': [CK(C_LINEAR, 0, (0.0,)), CK(C_HERMITE, 10, (1.2,), (0.05,)),
                     CK(C_CONST, 20, (-0.4,))],
        'rotate_y': [CK(C_HERMITE, 0, (0.0,), (0.1,)),
                     CK(C_HERMITE, 12, (0.9,), (-0.05,)),
                     CK(C_LINEAR, 24, (0.2,))],
        'rotate_z': [CK(C_CONST, 0, (0.3,)), CK(C_CONST, 8, (-0.6,)),
                     CK(C_CONST, 16, (0.1,))],
        'translation': [CK(C_HERMITE, 0, (0, 0, 0), (0.5, 0, 0.2)),
                        CK(C_HERMITE, 12, (4, 1, -2), (0, 0.3, 0)),
                        CK(C_LINEAR, 24, (0, 0, 0))],
        'classical_scale': [CK(C_LINEAR, 0, (1, 1, 1)),
                            CK(C_LINEAR, 12, (2, 0.5, 1.5)),
                            CK(C_LINEAR, 24, (1, 1, 1))],
    })
    g1 = ChanBlock({
        'rotate_axis': [CK(C_LINEAR, 0, (0, 1, 0, 0)),
                        CK(C_HERMITE, 10, (1, 1, 0, 1.5), (0, 0, 0, 0.1)),
                        CK(C_LINEAR, 20, (0, 0, 2, -1.0), (0, 0.05, 0, 0))],
        'translation': [CK(C_CONST, 0, (0, 2, 0))],
    })
    g2 = ChanBlock({
        'orientation_xy': [CK(C_LINEAR, 0, (1, 0, 0, 0, 1, 0)),
                           CK(C_LINEAR, 15, (0, 0, -1, 0, 1, 0.2))],
        'translation': [CK(C_CONST, 0, (0, 1.5, 0))],
    })
    g3 = ChanBlock({'rotate_y': [CK(C_LINEAR, 0, (0.0,)),
                                 CK(C_LINEAR, 30, (3.0,))]})
    groups = [
        Group(ANIM_STATIC, [], order=ORDER_VALUE['YXZ'], ext=g0),
        Group(ANIM_STATIC, [], ext=g1),
        Group(ANIM_STATIC, [], ext=g2),
        # blend2niff style: header_size 48 + 148 = 196, Anim(0) still at +48
        static_group((3, 0, -1), (0, 0, 0), (1, 2, 1), ext=g3, header_size=196),
        Group(ANIM_KEY, [Key(0, 6, I_LINEAR, (0, 0, 0), (0, 0, 0)),
                         Key(6, 12, I_LINEAR, (1, 1, 0), (0, 0, 1.0)),
                         Key(12, NOLINK, I_LINEAR, (0, 0, 0), (0, 0, 0))],
              ext=ChanBlock({})),
        static_group((0, 3, 12), ext=ChanBlock({})),
        static_group((0, 1, 0), ext=ChanBlock({})),
    ]
    objs = [Obj(0, 0, children=(1,), ext=OBJ2_EXT),
            Obj(1, 1, children=(2,), ext=OBJ2_EXT),
            Obj(2, 2, ext=OBJ2_EXT),
            Obj(3, 3, ext=OBJ2_EXT),
            Obj(4, 4, ext=OBJ2_EXT),
            Obj(5, 5, children=(6,), type=OBJ_NULL, ext=OBJ2_EXT),
            Obj(6, 6, type=OBJ_NULL, ext=OBJ2_EXT)]
    cams = [Cam(NOLINK, lookat=0, eye=5, up=6, near=0.1, far=100, fovy=50,
                aspect=16 / 9.0, ext=CAM2_EXT)]
    return Scene(VERSION_NIFF2, objs, groups, names, roots=(0, 3, 4, 5),
                 cams=cams, scene_ext=(0, 0, 0, 0, 0))


def billboard():
    names = ['stand', 'sign', 'viewer', 'sky', 'sign_child']
    groups = [
        static_group((2, 1, -3), (0, 0.4, 0)),
        Group(ANIM_BILL, [Bill(2, 3)]),
        key_group([0, 10, 20, 30], [I_LINEAR] * 4,
                  [(4, 1, 5), (8, 2, -3), (-4, 0, -6), (4, 1, 5)],
                  [(0, 0, 0)] * 4, [(1, 1, 1)] * 4),
        static_group((2, 10, -3)),
        static_group((0, 0, 1), (0, 0, 0), (0.5, 0.5, 0.5)),
    ]
    objs = [Obj(0, 0, children=(1,), have_bb=1),
            Obj(1, 1, children=(4,), type=OBJ_BILLBOARD, parent=0),
            Obj(2, 2, type=OBJ_NULL),
            Obj(3, 3, type=OBJ_NULL),
            Obj(4, 4, parent=1)]
    return Scene(VERSION_NIFF1, objs, groups, names, roots=(0, 2, 3))


def names_nif():
    # "abcd" is the last Name item and is followed by a 4-byte user extension
    # block "XTRA": reading past its 4 bytes would give "abcdXTRA".
    names = ['hello', 'wxyz1234', 'abcd']
    groups = [key_group([0, 15], [I_LINEAR] * 2, [(0, 0, 0), (3, 0, 0)],
                        [(0, 0, 0), (0, 1.0, 0)], [(1, 1, 1)] * 2),
              static_group((0, 2, 0)),
              static_group((0, 0, 1.5), (0.5, 0, 0))]
    objs = [Obj(2, 0, children=(1,)), Obj(1, 1, children=(2,), parent=0),
            Obj(0, 2, parent=1)]
    return Scene(VERSION_NIFF1, objs, groups, names, roots=(0,),
                 name_ux=b'XTRA')


ORDER_OBJS = ['XYZ', 'XZY', 'YXZ', 'YZX', 'ZXY', 'ZYX']
ORDER_ANGLES = (0.3, -0.7, 1.1)
UNKNOWN_ORDER = 0x00010101


def orders():
    names = ['ord_' + o for o in ORDER_OBJS] + ['ord_unknown']
    values = [ORDER_VALUE[o] for o in ORDER_OBJS] + [UNKNOWN_ORDER]
    groups = [static_group((2 * i, 0, 0), ORDER_ANGLES, order=v)
              for i, v in enumerate(values)]
    objs = [Obj(i, i) for i in range(len(values))]
    return Scene(VERSION_NIFF1, objs, groups, names,
                 roots=tuple(range(len(values))))


def small():
    """Base of the broken files: A -> B -> C -> D, A animated by KEY."""
    names = ['A', 'B', 'C', 'D', 'Scene_small']
    groups = [key_group([0, 5, 12, 20], [I_LINEAR] * 4,
                        [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 0, 0)],
                        [(0, 0, 0), (0, 0.5, 0), (0, 1.0, 0), (0, 0, 0)],
                        [(1, 1, 1)] * 4),
              static_group((0, 1, 0)), static_group((0, 1, 0), (0.3, 0, 0)),
              static_group((0, 0.5, 0))]
    objs = [Obj(0, 0, children=(1,)), Obj(1, 1, children=(2,), parent=0),
            Obj(2, 2, children=(3,), parent=1), Obj(3, 3, parent=2)]
    return Scene(VERSION_NIFF1, objs, groups, names, roots=(0,), scene_name=4)


def small2():
    """NIFF2 base of bad_channel: one object with a channel group."""
    names = ['chan']
    ext = ChanBlock({
        'rotate_x': [CK(C_LINEAR, 0, (0.0,)), CK(C_LINEAR, 10, (1.0,))],
        'translation': [CK(C_LINEAR, 0, (0, 0, 0)), CK(C_LINEAR, 10, (1, 2, 3))],
        'classical_scale': [CK(C_CONST, 0, (1, 1, 1))],
    })
    groups = [Group(ANIM_STATIC, [], ext=ext)]
    objs = [Obj(0, 0, ext=OBJ2_EXT)]
    return Scene(VERSION_NIFF2, objs, groups, names, roots=(0,),
                 scene_ext=(0, 0, 0, 0, 0))


def seam():
    """NIFF 1: the loop seam (RULES "Looping"): at f = k*P the final value
    shows, just after it the first one."""
    names = ['seam_full', 'seam_key', 'seam_twice', 'seam_child', 'Scene_seam']
    full = [((0.5 * i, 0, 0), (0, 0, 0.2 * i), (1, 1, 1)) for i in range(7)]
    groups = [
        full_group(full),                                        # P 6
        key_group([0, 4, 9], [I_LINEAR] * 3,                     # P 9
                  [(0, 2, 0), (2, 2, 0), (4, 2, 1)],
                  [(0, 0, 0), (0.6, 0, 0), (1.2, 0, 0)], [(1, 1, 1)] * 3),
        key_group([0, 12], [I_LINEAR] * 2,                       # P 12, twice
                  [(0, -2, 0), (6, -2, 0)], [(0, 0, 0), (0, 0, 1.5)],
                  [(1, 1, 1)] * 2, loop=2),
        static_group((0, 1, 0)),
    ]
    objs = [Obj(0, 0, children=(3,)), Obj(1, 1), Obj(2, 2),
            Obj(3, 3, parent=0)]
    return Scene(VERSION_NIFF1, objs, groups, names, roots=(0, 1, 2),
                 scene_name=4)


IK_NAMES = ['body', 'stray', 'foot', 'ear_l', 'ear_r', 'thigh', 'shin', 'tail',
            'leg_root', 'hip', 'Scene_ik']


def ik_chain():
    """NIFF 2, an IK chain laid out like the SDK's env_animal.niff (RULES
    "IK chains"): body -> ChainRoot -> Joint 0 -> Joint 1 -> Effector."""
    leg = [((-0.5, -0.2 + 0.05 * i, 0.3), (0, 0, 0.15 * min(i, 6 - i)),
            (1, 1, 1)) for i in range(7)]                        # clean, P 6
    groups = [
        Group(ANIM_KEY, [Key(0, 10, I_LINEAR, (0, 1, 0), (0, 0, 0)),      # 0 body
                         Key(10, 24, I_LINEAR, (2, 1.5, 0), (0, 0.8, 0)),
                         Key(24, NOLINK, I_LINEAR, (0, 1, 0), (0, 0, 0))],
              ext=ChanBlock({})),
        full_group(leg),                                         # 1 leg_root
        static_group((0.2, 0.5, 0), (0, 0, 0.3)),                # 2 ear_l
        static_group((-0.2, 0.5, 0), (0, 0, -0.3)),              # 3 ear_r
        static_group((0, -0.4, 0)),                              # 4 thigh
        static_group((0, -0.8, 0), (0.4, 0, 0)),                 # 5 joint 1
        static_group((0, -0.4, 0)),                              # 6 shin
        key_group([0, 4, 8], [I_LINEAR] * 3,                     # 7 effector
                  [(0, -0.8, 0), (0, -0.7, 0.2), (0, -0.8, 0)],
                  [(0, 0, 0), (-0.5, 0, 0), (0, 0, 0)], [(1, 1, 1)] * 3),
        static_group((0, -0.1, 0.15)),                           # 8 foot
        static_group((0, 0, -0.6), (0.5, 0, 0)),                 # 9 tail
        static_group((5, 0, 0)),                                 # 10 stray
    ]
    objs = [Obj(0, 0, children=(7,), ext=obj2_ext([0])),         # 0 body
            Obj(1, 10, ext=obj2_ext()),                          # 1 stray
            Obj(2, 8, ext=obj2_ext()),                           # 2 foot
            Obj(3, 2, ext=obj2_ext()),                           # 3 ear_l
            Obj(4, 3, ext=obj2_ext()),                           # 4 ear_r
            Obj(5, 4, ext=obj2_ext()),                           # 5 thigh
            Obj(6, 6, ext=obj2_ext()),                           # 6 shin
            Obj(7, 9, ext=obj2_ext(), parent=0)]                 # 7 tail
    roots = [ChainRoot(8, 1, 0, objs=(3, 4), ext_objs=((NOLINK, NOLINK),),
                       type=1)]
    joints = [Joint(9, NOLINK, 1, NOLINK, objs=(5,), type=1, length=0.8),
              Joint(6, 5, NOLINK, 0, objs=(6,), type=1, length=0.8)]
    effectors = [Effector(NOLINK, 7, objs=(2,), type=1)]
    return Scene(VERSION_NIFF2, objs, groups, IK_NAMES, roots=(0,),
                 scene_name=10, scene_ext=(0, 0, 0, 0, 0), chain_roots=roots,
                 joints=joints, effectors=effectors)


NETIMMERSE = (b'NetImmerse File Format, Version 4.0.0.2\n'
              + struct.pack('<I', 0x04000002)        # version word (LE)
              + struct.pack('<I', 1)                 # number of blocks
              + struct.pack('<I', 6) + b'NiNode'     # block type string
              + struct.pack('<I', 0) * 3)


# --- pose requests -------------------------------------------------------------------
# POSES[file] = [(frame, node), ...]; t = frame / 30 written with %.9g.
# AT_STEP: poses deliberately placed exactly on a discontinuity (RULES gives
# the value there explicitly); every other pose must be continuous in time.

def _grid(spec):
    out = []
    for node, frames in spec:
        out += [(f, node) for f in frames]
    return out


POSES = {
    'full3.niff': [(0, 'RootNode')] + _grid([
        ('base', [0, 0.5, 1, 3.5, 6, 6.5, 9.25]),
        ('mid', [0, 0.5, 1, 3.5, 5.99, 6, 6.5, 9.25]),
        ('tip', [0, 0.5, 1, 3.5, 5.99, 6, 6.5, 9.25]),
        ('side', [0, 0.5, 1, 3.5, 6, 6.5, 9.25])]),
    'keys.niff': _grid([
        ('k_static', [0, 2, 3.99, 4.01, 8.99, 9.01, 12, 14.99, 15.01, 23.99,
                      24.01, 30, 33.5]),
        ('k_linear', [0, 1.5, 3, 6.5, 10, 11, 12, 18, 23.99, 30]),
        ('k_slowin', [0, 2.5, 5, 6.5, 8, 12, 16, 20, 30]),
        ('k_slowout', [0, 1, 2, 6.5, 11, 14, 17, 20.5, 30]),
        ('k_slow', [0, 3.5, 7, 8, 9, 14.5, 20, 22, 30]),
        ('k_mixed', [0, 2, 4, 7, 9.99, 10.01, 11.5, 13, 15.5, 18, 19.5, 21,
                     25]),
        ('k_wrap', [0, 5, 9.99, 10.01, 10.25, 10.5, 10.75, 11, 12.5, 13.99,
                    20]),
        ('k_endless', [0, 1.5, 3, 5.5, 8, 9.5, 17, 30]),
        ('k_twice', [0, 2, 4, 8.99, 9.01, 13, 17.99, 18, 25, 40])]),
    'static.niff': [(0, n) for n in
                    ['RootNode', 'house', 'orphan', 'door', 'lamp', 'cleared',
                     'under_clear', 'post', 'post#2', 'obj8', 'marker',
                     'house_lod']],
    'camera.niff': _grid([
        ('MainCam', [0, 2.5, 5, 7.5, 10, 15, 25]),
        ('SideCam#2', [0, 10]),
        ('eye', [0, 5]), ('eye_up', [5]), ('target', [2.5]),
        ('SideCam', [0])]),
    'channels.niff': _grid([
        ('chan_euler', [0, 2.5, 5, 7.99, 8.01, 10, 12, 15, 18, 23.99, 30]),
        ('chan_axis', [0, 5, 7.5, 10, 15, 19.99]),
        ('chan_orient', [0, 5, 7.5, 14.99]),
        ('chan_b2n', [0, 7.5, 15, 29.99, 37.5]),
        ('chan_keyanim', [0, 3, 6, 9, 15]),
        ('cam0', [0, 5, 12, 20])]),
    'billboard.niff': _grid([
        ('sign', [0, 5, 10, 15, 20, 25, 35]),
        ('sign_child', [0, 5, 10, 25]),
        ('viewer', [5]), ('stand', [0])]),
    'names.nif': _grid([
        ('abcd', [0, 7.5]), ('wxyz1234', [7.5]), ('hello', [0, 7.5, 20])]),
    'orders.niff': [(0, 'ord_' + o) for o in ORDER_OBJS] + [(0, 'ord_unknown')],
    'seam.niff': [(0, 'RootNode')] + _grid([
        ('seam_full', [0, 5.5, 6, 6.01, 12, 24, 27.5, 36]),
        ('seam_child', [5.5, 6, 6.01]),
        ('seam_key', [0, 8.5, 9, 9.01, 18, 24, 27.5, 36]),
        ('seam_twice', [0, 11.5, 12, 12.01, 24, 27.5, 36])]),
    'ik_chain.niff': [(0, 'RootNode')] + _grid([
        (n, [0, 2.5, 10, 17.25, 31]) for n in
        ['body', 'tail', 'leg_root', 'ear_l', 'ear_r', 'hip', 'thigh',
         'shin#2', 'shin', 'effector0', 'foot', 'stray']]),
}
# (file, frame, node): poses placed on a jump on purpose. The seam poses sit
# at f = k*P of a loop whose first and last values differ: RULES shows the
# final value there (frame P), the first one just after.
AT_STEP = {('full3.niff', 6, 'mid'), ('full3.niff', 6, 'tip'),
           ('seam.niff', 6, 'seam_full'), ('seam.niff', 12, 'seam_full'),
           ('seam.niff', 24, 'seam_full'), ('seam.niff', 36, 'seam_full'),
           ('seam.niff', 6, 'seam_child'),
           ('seam.niff', 9, 'seam_key'), ('seam.niff', 18, 'seam_key'),
           ('seam.niff', 36, 'seam_key'),
           ('seam.niff', 12, 'seam_twice')}

GOOD = [('full3.niff', full3), ('keys.niff', keys), ('static.niff', static),
        ('camera.niff', camera), ('channels.niff', channels),
        ('billboard.niff', billboard), ('names.nif', names_nif),
        ('orders.niff', orders), ('seam.niff', seam),
        ('ik_chain.niff', ik_chain)]

# broken files: (file, base, what, mark of the damaged field, new value)
BROKEN = [
    ('bad_listsize.niff', small, 'the ObjList list_size (list word 2)',
     ('list', 'obj'), 8, 0x00010000),
    ('bad_child.niff', small, "obj_child_link[0] of Obj 1 (B)",
     ('obj', 1, 'child', 0), 0, 9),
    ('cycle.niff', small, "obj_child_link[0] of Obj 2 (C), pointing back to "
     "Obj 0 (A), its grandparent", ('obj', 2, 'child', 0), 0, 0),
    ('bad_nextkey.niff', small, "next_key of KEY Anim 1 (key 5) of AnimGroup 0",
     ('group', 0, 'anim', 1, 'next'), 0, 5),
    ('bad_name.niff', small, 'obj_name_index of Obj 2 (C)',
     ('obj', 2, 'name'), 0, 7),
    ('bad_anim_link.niff', small, 'obj_anim_link of Obj 1 (B)',
     ('obj', 1, 'anim'), 0, 6),
    ('bad_channel.niff', small2, 'the translation count of AnimGroup 0\'s '
     'channel block', ('group', 0, 'count', 5), 0, 5),
    ('bad_chain_joint.niff', ik_chain, 'joint_index of Joint 0 ("hip"; it '
     'names Joint 1)', ('joint', 0, 'joint'), 0, 2),
    ('bad_chain_link.niff', ik_chain, 'obj_chain_root_link[0] of Obj 0 '
     '("body"), in its NIFF2 extension', ('obj', 0, 'chain', 0), 0, 1),
]


def build():
    """All files: name -> dict(data, kind, ...)."""
    F = {}
    for fname, fn in GOOD:
        sc = fn()
        data, marks = pack_file(sc)
        F[fname] = dict(data=data, kind='ok', desc=sc, marks=marks)
    base_data, base_marks = pack_file(small())
    cut = (len(base_data) // 2) & ~3
    F['truncated.niff'] = dict(data=base_data[:cut], kind='bad', offset=4,
                               base='small', base_len=len(base_data), cut=cut)
    for fname, fn, what, mark, rel, value in BROKEN:
        data, marks = pack_file(fn())
        off = marks[mark] + rel
        old = struct.unpack_from('>I', data, off)[0]
        F[fname] = dict(data=patch_u32(data, off, value), kind='bad',
                        offset=off, base=fn.__name__, what=what, old=old,
                        new=value, base_len=len(data))
    F['netimmerse.nif'] = dict(data=NETIMMERSE, kind='notdetected')
    return F


# --- hand work: small explicit computations quoted in the .txt files -------------
# They use closed-form rotation matrices and explicit products, not the
# evaluator's group/loop/Euler-order code; self_check() compares their numbers
# with the expect lines (HAND entries: file, frame, node, {element: value}).

def rx3(a):
    c, s = math.cos(a), math.sin(a)
    return [[1, 0, 0], [0, c, -s], [0, s, c]]


def ry3(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, 0, s], [0, 1, 0], [-s, 0, c]]


def rz3(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def mm3(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)]
            for i in range(3)]


def mv3(A, v):
    return [sum(A[i][k] * v[k] for k in range(3)) for i in range(3)]


def xyz_closed(x, y, z):
    """R = Rz(z) Ry(y) Rx(x) written out element by element."""
    cx, sx, cy, sy, cz, sz = (math.cos(x), math.sin(x), math.cos(y),
                              math.sin(y), math.cos(z), math.sin(z))
    return [[cy * cz, sx * sy * cz - cx * sz, cx * sy * cz + sx * sz],
            [cy * sz, sx * sy * sz + cx * cz, cx * sy * sz - sx * cz],
            [-sy, sx * cy, cx * cy]]


def affine(R, t, s=(1, 1, 1)):
    """(A, t) with A = R * diag(s)."""
    return ([[R[i][j] * s[j] for j in range(3)] for i in range(3)], list(t))


def amul(P, C):
    A, t = P
    B, u = C
    return (mm3(A, B), [a + b for a, b in zip(mv3(A, u), t)])


def elems(X):
    """{row-major index: value} of the 3x4 part of an affine (A, t)."""
    A, t = X
    out = {}
    for i in range(3):
        for j in range(3):
            out[4 * i + j] = A[i][j]
        out[4 * i + 3] = t[i]
    return out


def n7(v):
    v = 0.0 if abs(v) < 5e-8 else v
    return '%.7f' % v if abs(v) >= 1e-3 or v == 0 else '%.3e' % v


def rows(X):
    A, t = X
    return ['    (%s | %s)' % (', '.join(n7(A[i][j]) for j in range(3)), n7(t[i]))
            for i in range(3)]


def hermite(u, D, v0, d0, v1, d1):
    h00 = 2 * u ** 3 - 3 * u * u + 1
    h10 = u ** 3 - 2 * u * u + u
    h01 = -2 * u ** 3 + 3 * u * u
    h11 = u ** 3 - u * u
    return h00 * v0 + h10 * D * d0 + h01 * v1 + h11 * D * d1


def slerp_matrix(R, k):
    """Rotation by the fraction k of R's angle about R's axis (= slerp from
    the identity), for the Euler-lerp vs slerp comparison."""
    ang = math.acos(max(-1.0, min(1.0, (R[0][0] + R[1][1] + R[2][2] - 1) / 2)))
    ax = v_norm((R[2][1] - R[1][2], R[0][2] - R[2][0], R[1][0] - R[0][1]))
    M = m_axis_angle(ax, ang * k)
    return [row[:3] for row in M[:3]]


HAND = []


def hand_full3():
    L = ['Hand evaluation (FULL: every scalar lerped between frames i and i+1, '
         'then T*R*S, R = Rz*Ry*Rx):',
         '  frame 0.5 (t = 0.5/30 = 0.0166666667), u = 0.5 between Anim(0) and '
         'Anim(1):',
         '    base: T (0.5, 0, 0.25), R (0, 0.1, 0), S 1',
         '    mid:  T (0, 2.05, 0), R (0.15, 0.25, 0.05), S (1.05, 1.9, 0.55)',
         '    tip:  T (0, 1.5, 0), R (0.5, -0.4, 0.3), S 1']
    base = affine(xyz_closed(0, 0.1, 0), (0.5, 0, 0.25))
    mid = affine(xyz_closed(0.15, 0.25, 0.05), (0, 2.05, 0), (1.05, 1.9, 0.55))
    Rtip = xyz_closed(0.5, -0.4, 0.3)
    tip = affine(Rtip, (0, 1.5, 0))
    W = amul(amul(base, mid), tip)
    L.append('    R_tip = Rz(0.3) Ry(-0.4) Rx(0.5) = rows (%s), (%s), (%s)' % tuple(
        ', '.join(n7(v) for v in r) for r in Rtip))
    L.append('    world(tip) = base * mid * tip =')
    L += rows(W)
    Rs = slerp_matrix(xyz_closed(1.0, -0.8, 0.6), 0.5)
    L.append('    (a quaternion slerp halfway from Anim(0) to Anim(1) would give '
             'R_tip[0][0] = %s instead of %s:' % (n7(Rs[0][0]), n7(Rtip[0][0])))
    L.append('    Euler lerp and slerp differ, the expect lines use Euler lerp.)')
    HAND.append(('full3.niff', 0.5, 'tip', elems(W)))
    # frame 6 = P: at a whole number of periods the final value shows
    Wm = affine(xyz_closed(1.8, 0.1, 0.6), (0.2, 2, 0), (1.0, 2.0, 0.5))
    Wt = amul(Wm, affine(xyz_closed(0, 0, 0), (0, 1.5, 0)))
    L += ['  frame 6 = P (t = 0.2; 0.2 * 30 = 6 exactly in double and float): '
          'endless loop at a whole',
          '    number of periods -> the final value, Anim(6) (RULES "Looping"; '
          'f mod 6 = 0 would be',
          '    Anim(0), the value just after the seam). base and tip are clean '
          'loops (Anim(6) = Anim(0)),',
          '    mid is not: at 5.99 it is almost Anim(6), at 6 it is Anim(6): '
          'T (0.2, 2, 0),',
          '    R (1.8, 0.1, 0.6), S (1, 2, 0.5); base is identity at frame 6, '
          'so world(mid) =']
    L += rows(Wm)
    L += ['    and world(tip) = world(mid) * T(0, 1.5, 0) (tip\'s Anim(6) has R 0):']
    L += rows(Wt)
    L += ['    Just after 6 (6.5 -> 0.5) mid jumps back towards Anim(0): '
          'T (0, 2, 0), R 0, S (1, 2, 0.5).',
          '  frame 9.25 plays as 3.25.']
    HAND.append(('full3.niff', 6, 'mid', elems(Wm)))
    HAND.append(('full3.niff', 6, 'tip', elems(Wt)))
    return L


def hand_keys():
    L = ['Hand evaluation (v = v_i + (v_i+1 - v_i) * s(u), u = (f - k_i) / '
         '(k_i+1 - k_i)):']
    # k_slowin at 6.5: keys 5 -> 8, u = 0.5
    u = 0.5
    s = u + u * u - u ** 3
    tx, ry, sy = 1 + 2 * s, 0.5 - s, 1.5 - s
    X = affine(ry3(ry), (tx, 4, 0), (1, sy, 1))
    L += ['  k_slowin, frame 6.5: segment 5 -> 8, u = 0.5, SLOWIN s = u + u^2 - '
          'u^3 = %s:' % n7(s),
          '    tx = 1 + (3 - 1) s = %s, ry = 0.5 + (-0.5 - 0.5) s = %s, '
          'sy = 1.5 + (0.5 - 1.5) s = %s' % (n7(tx), n7(ry), n7(sy))]
    L += rows(X)
    HAND.append(('keys.niff', 6.5, 'k_slowin', elems(X)))
    s = 2 * u * u - u ** 3
    X = affine(ry3(0.5 - s), (1 + 2 * s, 6, 0), (1, 1.5 - s, 1))
    L += ['  k_slowout, frame 6.5: segment 2 -> 11, u = 0.5, SLOWOUT s = 2u^2 - '
          'u^3 = %s: tx %s, ry %s, sy %s' % (n7(s), n7(1 + 2 * s), n7(0.5 - s),
                                            n7(1.5 - s))]
    HAND.append(('keys.niff', 6.5, 'k_slowout', elems(X)))
    X = affine(ry3(0.0), (2, 8, 0), (1, 1.0, 1))
    L += ['  k_slow, frame 8: segment 7 -> 9, u = 0.5, SLOW s = 3u^2 - 2u^3 = 0.5: '
          'tx 2, ry 0, sy 1 (identity rotation, T (2, 8, 0))']
    HAND.append(('keys.niff', 8, 'k_slow', elems(X)))
    L += ['  k_static, frames 8.99 / 9.01: STATIC holds key 4\'s value until 9: '
          'tx 1, ry 0.5, sy 1.5; from 9 on key 9\'s: tx 3, ry -0.5, sy 0.5.']
    HAND.append(('keys.niff', 8.99, 'k_static', elems(affine(ry3(0.5), (1, 0, 0),
                                                             (1, 1.5, 1)))))
    HAND.append(('keys.niff', 9.01, 'k_static', elems(affine(ry3(-0.5), (3, 0, 0),
                                                             (1, 0.5, 1)))))
    # k_wrap at 10.5 under k_mixed
    u = 0.5 / 3
    s = u + u * u - u ** 3
    mtx, mrz, msx = 1 + 2 * s, -0.3 + 1.1 * s, 0.8 + 0.7 * s
    mixed = affine(rz3(mrz), (mtx, -2, 0), (msx, 1, 1))
    wrap = affine(xyz_closed(0.2, 0, 0.0), (0, 1, 0))
    W = amul(mixed, wrap)
    L += ['  k_wrap, frame 10.5: LINEAR from rz 3.03 (key 10) to -3.03 (key 11): '
          'Euler lerp gives',
          '    rz = 0 (the long way, through 0); a shortest-path slerp would give '
          'rz = pi. Its parent',
          '    k_mixed is in its SLOWIN segment 10 -> 13: u = 1/6, s = %s, tx %s, '
          'rz %s, sx %s.' % (n7(s), n7(mtx), n7(mrz), n7(msx)),
          '    world(k_wrap) = world(k_mixed) * T(0,1,0) Rx(0.2) =']
    L += rows(W)
    HAND.append(('keys.niff', 10.5, 'k_wrap', elems(W)))
    L += ['  k_twice (anim_loop 2, P 9): frame 13 plays as 4; from frame 18 = 2P '
          'on it holds key 9:',
          '    frame 25 -> T (5, -4, 0), rz 1.0. Its last Anim has next_key 12 '
          '(no Anim has key 12,',
          '    it is the physically last one): the chain just ends there.',
          '  k_mixed: Anim 2 (key 7) is not on the chain 0 -> 4 -> 10 -> 13 -> 18 '
          '-> 21 and is ignored.',
          '  Duration: the five interpolation objects end at 24 (endless) -> 24 / '
          '30 = 0.8 s;',
          '    k_mixed 21, k_wrap 14, k_endless 8, k_twice 2 * 9 = 18.']
    HAND.append(('keys.niff', 25, 'k_twice', elems(affine(rz3(1.0), (5, -4, 0)))))
    return L


def hand_static():
    c, s = math.cos(0.5), math.sin(0.5)
    house = affine(ry3(0.5), (1, 0, -2), (1, 1.5, 1))
    door = amul(house, affine(ry3(-0.3), (0.5, 0, 1)))
    L = ['Hand evaluation (t = 0, every transform constant):',
         '  house = T(1,0,-2) Ry(0.5) S(1,1.5,1): cos 0.5 = %s, sin 0.5 = %s'
         % (n7(c), n7(s))]
    L += rows(house)
    L += ['  door (CONST Anim, tag 0x000c0102) = house * T(0.5,0,1) Ry(-0.3): '
          'rotation Ry(0.2), y scaled 1.5,',
          '    origin (1 + 0.5 cos 0.5 + sin 0.5, 0, -2 - 0.5 sin 0.5 + cos 0.5):']
    L += rows(door)
    L += ['  lamp (obj_anim_link 0xFFFFFFFF) = house; house_lod (LOD link) = '
          'house * T(0,0,0.1).',
          '  cleared (obj_state CLEAR): identity, its KEY group (0 -> 10, T x 0 -> '
          '5) is ignored, so',
          '    nothing is animated and there is no expect-duration; its child '
          'link is not followed:',
          '    under_clear is not reached and sits under the root: T(0,3,0) '
          'Rz(0.25).',
          '  orphan: no link reaches it (its obj_parent_link 0 is ignored): under '
          'the root, T(-4,0,0) Rx(0.1).',
          '  Scene root link 6 (door) is already placed under house: ignored.',
          '  Names: Obj 6 and 7 are both "post" -> "post", "post#2"; Obj 8 has '
          'name index 0xFFFFFFFF -> "obj8".',
          '  Nodes: root "static" + 11 objects = 12.']
    HAND.append(('static.niff', 0, 'house', elems(house)))
    HAND.append(('static.niff', 0, 'door', elems(door)))
    HAND.append(('static.niff', 0, 'under_clear', elems(affine(rz3(0.25),
                                                               (0, 3, 0)))))
    HAND.append(('static.niff', 0, 'cleared', elems(affine(rz3(0), (0, 0, 0)))))
    return L


def cam_frame(E, L, u):
    f = v_sub(L, E)
    Z = v_scale(v_norm(f), -1)
    X = v_norm(v_cross(u, Z))
    Y = v_cross(Z, X)
    return ([[X[i], Y[i], Z[i]] for i in range(3)], list(E))


def hand_camera():
    E, Lk, U = (0, 2, 10), (-1, 0.5, 0), (0, 3, 10)
    X = cam_frame(E, Lk, v_sub(U, E))
    L = ['Hand evaluation:',
         '  MainCam, t = 0: E = eye (0,2,10), L = target (-1,0.5,0), U = eye_up '
         '= eye + (0,1,0) = (0,3,10).',
         '    f = L - E = (-1,-1.5,-10); U - E = (0,1,0) is far from parallel to '
         'f -> "relative".',
         '    Z = -f/|f| = (1,1.5,10)/%s, X = normalize(u x Z) = (10,0,-1)/sqrt(101), '
         'Y = Z x X:' % n7(math.sqrt(103.25))]
    L += rows(X)
    HAND.append(('camera.niff', 0, 'MainCam', elems(X)))
    L += ['  MainCam, frame 2.5: eye (KEY, 0 -> 10 LINEAR) = (1.5, 2.25, 9.5); '
          'target (FULL) halfway',
          '    between Anim(2) and Anim(3) = (0.25, 0.85, 0.3); eye_up = eye + '
          '(0,1,0).']
    E5, L5 = (1.5, 2.25, 9.5), (0.25, 0.85, 0.3)
    X5 = cam_frame(E5, L5, (0, 1, 0))
    L += rows(X5)
    HAND.append(('camera.niff', 2.5, 'MainCam', elems(X5)))
    E, Lk, U = (30, 8, 52), (0, 0.5, 0), (0, 1, 0)
    f = v_sub(Lk, E)
    rel = v_len(v_cross(v_norm(v_sub(U, E)), v_norm(f)))
    dr = v_len(v_cross(v_norm(U), v_norm(f)))
    X = cam_frame(E, Lk, U)
    L += ['  Cam 1 "SideCam" (node "SideCam#2": Obj 3 is already called '
          '"SideCam"): E (30,8,52),',
          '    L (0,0.5,0), U (0,1,0). |normalize(U - E) x normalize(f)| = %s < '
          '0.1 -> not "relative";' % n7(rel),
          '    |normalize(U) x normalize(f)| = %s >= 0.1 -> "direction", u = U = '
          '(0,1,0):' % n7(dr)]
    L += rows(X)
    HAND.append(('camera.niff', 0, 'SideCam#2', elems(X)))
    h0 = math.atan(math.tan(f32(45.0) * math.pi / 360) * f32(1.3333))
    h1 = math.atan(math.tan(60.0 * math.pi / 360) * 1.5)
    L += ['  hfov = atan(tan(fovy * pi / 360) * aspect): MainCam atan(tan(22.5 deg) '
          '* 1.3333) = %s,' % n7(h0),
          '    SideCam atan(tan(30 deg) * 1.5) = %s.' % n7(h1),
          '  Nodes: root + 6 objects + 2 cameras = 9. Duration: eye KEY P = 20 '
          '(target FULL P = 5) -> 0.666666667 s.']
    return L


def hand_channels():
    f = 5.0
    rx = 1.2 * f / 10
    u = f / 12
    ry = hermite(u, 12, 0.0, 0.1, 0.9, -0.05)
    rz = 0.3
    t = [hermite(u, 12, a, da, b, db) for a, da, b, db in
         ((0, 0.5, 4, 0), (0, 0, 1, 0.3), (0, 0.2, -2, 0))]
    s = (1 + u, 1 - 0.5 * u, 1 + 0.5 * u)
    R = mm3(rz3(rz), mm3(rx3(rx), ry3(ry)))        # YXZ: Y first, then X, Z
    X = affine(R, t, s)
    L = ['Hand evaluation:',
         '  chan_euler, frame 5 (group order YXZ: R = Rz Rx Ry):',
         '    RotateX LINEAR 0 -> 1.2 over 0..10: rx = %s' % n7(rx),
         '    RotateY HERMITE 0 -> 0.9 over 0..12, d 0.1 / -0.05, u = 5/12: ry = '
         'h00*0 + h10*12*0.1 + h01*0.9 + h11*12*(-0.05) = %s' % n7(ry),
         '    RotateZ CONST 0.3 (until frame 8, then -0.6)',
         '    Translation HERMITE (0,0,0) d (0.5,0,0.2) -> (4,1,-2) d (0,0.3,0): '
         'T = (%s, %s, %s)' % tuple(n7(v) for v in t),
         '    ClassicalScale LINEAR (1,1,1) -> (2,0.5,1.5): S = (%s, %s, %s)'
         % tuple(n7(v) for v in s)]
    L += rows(X)
    HAND.append(('channels.niff', 5, 'chan_euler', elems(X)))
    X = affine(ry3(1.5), (3, 0, -1), (1, 2, 1))
    L += ['  chan_b2n, frame 15: anim_group_header_size is 196 (48 + 148, as '
          'blend2niff writes) but',
          '    Anim(0) is at +48: T (3,0,-1) and S (1,2,1) come from it; R from '
          'the RotateY channel',
          '    0 -> 3 over 0..30 LINEAR: ry = 1.5 (RotateX/Z absent -> 0):']
    L += rows(X)
    HAND.append(('channels.niff', 15, 'chan_b2n', elems(X)))
    L += ['  chan_axis, frame 5: RotateAxis LINEAR (0,1,0) angle 0 -> (1,1,0) '
          'angle 1.5, u = 0.5:',
          '    axis (0.5,1,0) normalized, angle 0.75; T (0,2,0) from a single '
          'CONST key; world = world(chan_euler) * local.',
          '  chan_orient, frame 7.5: OrientationXY x (0.5,0,-0.5), y (0,1,0.1) -> '
          'X = normalize(x),',
          '    Y = normalize(y - (y.X) X), Z = X x Y (columns of R).',
          '  chan_keyanim: use_animation_channel 0 (148-byte block, all counts 0) '
          '-> its KEY Anims play.',
          '  Duration: the largest P is chan_b2n\'s 30 -> 1 s.']
    return L


def hand_billboard():
    S = (2, 1, -3)
    Lp = (6, 1.5, 1)
    z = v_norm(v_sub(Lp, S))
    x = v_norm(v_cross((0, 1, 0), z))
    y = v_cross(z, x)
    W = ([[x[i], y[i], z[i]] for i in range(3)], list(S))
    L = ['Hand evaluation (sign, frame 5):',
         '  S = world origin of stand = (2,1,-3) (the billboard has no '
         'translation of its own).',
         '  L = viewer, KEY LINEAR (4,1,5) -> (8,2,-3) over 0..10, u = 0.5: '
         '(6,1.5,1). U = sky = (2,10,-3).',
         '  z = normalize(L - S) = (4,0.5,4)/%s, y0 = normalize(U - S) = (0,1,0),'
         % n7(math.sqrt(32.25)),
         '  x = normalize(y0 x z) = (0.7071068, 0, -0.7071068), y = z x x; '
         'W = [x y z | S]:']
    L += rows(W)
    HAND.append(('billboard.niff', 5, 'sign', elems(W)))
    C = amul(W, affine(rz3(0), (0, 0, 1), (0.5, 0.5, 0.5)))
    L += ['  sign_child = W * T(0,0,1) S(0.5): origin S + z = (%s, %s, %s).'
          % tuple(n7(v) for v in C[1]),
          '  The stand\'s own rotation Ry(0.4) does not turn the sign (local = '
          'inverse(parent) * W).']
    HAND.append(('billboard.niff', 5, 'sign_child', elems(C)))
    return L


def hand_names():
    X = affine(ry3(0.5), (1.5, 0, 0))
    L = ['Hand evaluation:',
         '  abcd, frame 7.5: KEY LINEAR 0 -> 15, u = 0.5: T (1.5,0,0), ry 0.5:']
    L += rows(X)
    HAND.append(('names.nif', 7.5, 'abcd', elems(X)))
    H = amul(amul(X, affine(ry3(0), (0, 2, 0))), affine(rx3(0.5), (0, 0, 1.5)))
    L += ['  hello = abcd * T(0,2,0) * T(0,0,1.5) Rx(0.5) (two levels down):']
    L += rows(H)
    HAND.append(('names.nif', 7.5, 'hello', elems(H)))
    L += ['  Name bytes: "hello" = 68 65 6C 6C 6F 00 00 00 (5 + 3 NUL), '
          '"wxyz1234" = 8 bytes, no NUL,',
          '  "abcd" = 61 62 63 64, no NUL, and right after it the NameList\'s '
          '4-byte user extension',
          '  block "XTRA": a reader that looks for a NUL instead of stopping at '
          'name_size - 16 reads "abcdXTRA".']
    return L


def hand_orders():
    a, b, c = ORDER_ANGLES
    L = ['Hand evaluation (angles rx 0.3, ry -0.7, rz 1.1; the name gives the '
         'order of application,',
         '  the first axis is applied first, i.e. is the rightmost factor):']
    forms = {'XYZ': ('Rz Ry Rx', mm3(rz3(c), mm3(ry3(b), rx3(a)))),
             'XZY': ('Ry Rz Rx', mm3(ry3(b), mm3(rz3(c), rx3(a)))),
             'YXZ': ('Rz Rx Ry', mm3(rz3(c), mm3(rx3(a), ry3(b)))),
             'YZX': ('Rx Rz Ry', mm3(rx3(a), mm3(rz3(c), ry3(b)))),
             'ZXY': ('Ry Rx Rz', mm3(ry3(b), mm3(rx3(a), rz3(c)))),
             'ZYX': ('Rx Ry Rz', mm3(rx3(a), mm3(ry3(b), rz3(c))))}
    for i, o in enumerate(ORDER_OBJS):
        form, R = forms[o]
        L.append('  ord_%s 0x%08X R = %s, first row (%s)' % (
            o, ORDER_VALUE[o], form, ', '.join(n7(v) for v in R[0])))
        HAND.append(('orders.niff', 0, 'ord_' + o, elems(affine(R, (2 * i, 0, 0)))))
    L += ['  ord_unknown: anim_rot_mtx_order 0x00010101 is no valid order -> '
          'XYZ (with a warning).',
          '  Note YZX (0x00030102) and ZXY (0x00020301): the N64 previewer\'s '
          'nd.h names these two',
          '  values the other way round (docs/formats/niff.md section 2); '
          'these fixtures follow',
          '  the spec names, as RULES does.']
    HAND.append(('orders.niff', 0, 'ord_unknown',
                  elems(affine(forms['XYZ'][1], (12, 0, 0)))))
    return L


def hand_seam():
    L = ['Hand evaluation (RULES "Looping": endless, f > 0 plays as f mod P, '
         'but at f = k*P, k >= 1,',
         '  the final value shows (frame P); anim_loop N: the same while '
         'f <= N*P, then frame P held):']
    rows_ = [
        ('seam_full', 5.5, 'FULL P 6, 5.5 mod 6 = 5.5: T (2.75, 0, 0), rz 1.1',
         affine(rz3(1.1), (2.75, 0, 0))),
        ('seam_full', 6, '6 = 1 * P: Anim(6), T (3, 0, 0), rz 1.2 (frame 0 would '
         'be identity)', affine(rz3(1.2), (3, 0, 0))),
        ('seam_full', 6.01, '6.01 mod 6 = 0.01: T (0.005, 0, 0), rz 0.002',
         affine(rz3(0.002), (0.005, 0, 0))),
        ('seam_full', 12, '12 = 2P: Anim(6) again', affine(rz3(1.2), (3, 0, 0))),
        ('seam_full', 24, '24 = 4P (the end of the scene): Anim(6)',
         affine(rz3(1.2), (3, 0, 0))),
        ('seam_full', 27.5, 'past the end, 27.5 mod 6 = 3.5: T (1.75, 0, 0), '
         'rz 0.7', affine(rz3(0.7), (1.75, 0, 0))),
        ('seam_full', 36, 'past the end, 36 = 6P: Anim(6)',
         affine(rz3(1.2), (3, 0, 0))),
        ('seam_child', 6, 'seam_full(6) * T(0, 1, 0): origin (3 - sin 1.2, '
         'cos 1.2, 0)', amul(affine(rz3(1.2), (3, 0, 0)),
                            affine(rz3(0), (0, 1, 0)))),
        ('seam_key', 8.5, 'KEY P 9, segment 4 -> 9, u = 0.9: T (3.8, 2, 0.9), '
         'rx 1.14', affine(rx3(1.14), (3.8, 2, 0.9))),
        ('seam_key', 9, '9 = P: the last key, T (4, 2, 1), rx 1.2',
         affine(rx3(1.2), (4, 2, 1))),
        ('seam_key', 9.01, '9.01 mod 9 = 0.01, segment 0 -> 4, u = 0.0025: '
         'T (0.005, 2, 0), rx 0.0015', affine(rx3(0.0015), (0.005, 2, 0))),
        ('seam_key', 18, '18 = 2P: the last key', affine(rx3(1.2), (4, 2, 1))),
        ('seam_key', 24, '24 mod 9 = 6, u = 0.4: T (2.8, 2, 0.4), rx 0.84',
         affine(rx3(0.84), (2.8, 2, 0.4))),
        ('seam_key', 27.5, 'past the end, 27.5 mod 9 = 0.5, u = 0.125: '
         'T (0.25, 2, 0), rx 0.075', affine(rx3(0.075), (0.25, 2, 0))),
        ('seam_key', 36, 'past the end, 36 = 4P: the last key',
         affine(rx3(1.2), (4, 2, 1))),
        ('seam_twice', 11.5, 'anim_loop 2, P 12, u = 11.5/12: T (5.75, -2, 0), '
         'rz 1.4375', affine(rz3(1.4375), (5.75, -2, 0))),
        ('seam_twice', 12, '12 = P <= 2P: the last key, T (6, -2, 0), rz 1.5',
         affine(rz3(1.5), (6, -2, 0))),
        ('seam_twice', 12.01, 'second play, 12.01 mod 12 = 0.01: '
         'T (0.005, -2, 0), rz 0.00125', affine(rz3(0.00125), (0.005, -2, 0))),
        ('seam_twice', 24, '24 = N*P: still "f <= N*P", 24 mod 12 = 0 -> P: '
         'the last key', affine(rz3(1.5), (6, -2, 0))),
        ('seam_twice', 27.5, 'f > N*P: frame P held', affine(rz3(1.5),
                                                           (6, -2, 0))),
        ('seam_twice', 36, 'f > N*P: frame P held', affine(rz3(1.5),
                                                         (6, -2, 0))),
    ]
    for node, frame, text, X in rows_:
        L.append('  %s, frame %s (t = %s): %s' % (node, g9(frame),
                                                 t_string(frame), text))
        HAND.append(('seam.niff', frame, node, elems(X)))
    L += ['  world(seam_full) at frame 6 =']
    L += rows(affine(rz3(1.2), (3, 0, 0)))
    L += ['  Every seam time is exact: 0.2, 0.3, 0.4, 0.6, 0.8 and 1.2 times 30 '
          'give 6, 9, 12, 18, 24',
          '  and 36 exactly in double precision (and within 1e-6 in float32).',
          '  Duration: max(6, 9, 2 * 12) = 24 frames = 0.8 s.']
    return L


def hand_ik():
    body10 = affine(ry3(0.8), (2, 1.5, 0))
    leg10 = affine(rz3(0.3), (-0.5, 0, 0.3))
    knee = affine(rx3(0.4), (0, -0.8, 0))
    eff10 = affine(rx3(-0.25), (0, -0.75, 0.1))
    foot = affine(rz3(0), (0, -0.1, 0.15))
    W = amul(amul(amul(amul(body10, leg10), knee), eff10), foot)
    L = ['Hand evaluation (world = product of the locals along the path; hip '
         'has no group: identity):',
         '  foot, frame 10: body KEY at key 10: T (2, 1.5, 0), Ry 0.8; leg_root '
         'FULL P 6, 10 mod 6 = 4:',
         '    Anim(4) T (-0.5, 0, 0.3), Rz 0.3; hip identity; shin#2 (Joint 1) '
         'STATIC T (0, -0.8, 0) Rx 0.4;',
         '    effector0 KEY P 8, 10 mod 8 = 2, u = 0.5 between keys 0 and 4: '
         'T (0, -0.75, 0.1), Rx -0.25;',
         '    foot STATIC T (0, -0.1, 0.15). world(foot) = body * leg_root * '
         'hip * shin#2 * effector0 * foot =']
    L += rows(W)
    HAND.append(('ik_chain.niff', 10, 'foot', elems(W)))
    el = affine(rz3(0.3), (-0.3, 1.3, 0.3))
    er = affine(rz3(-0.3), (-0.7, 1.3, 0.3))
    L += ['  ear_l, frame 0: body T (0, 1, 0) * leg_root Anim(0) T (-0.5, -0.2, '
          '0.3) * ear_l T (0.2, 0.5, 0) Rz 0.3',
          '    = T (-0.3, 1.3, 0.3) Rz 0.3; ear_r likewise T (-0.7, 1.3, 0.3) '
          'Rz -0.3.']
    HAND.append(('ik_chain.niff', 0, 'ear_l', elems(el)))
    HAND.append(('ik_chain.niff', 0, 'ear_r', elems(er)))
    u = 7.25 / 14
    body = affine(ry3(0.8 - 0.8 * u), (2 - 2 * u, 1.5 - 0.5 * u, 0))
    leg = affine(rz3(0.1125), (-0.5, 0.0625, 0.3))
    E = amul(amul(body, leg), affine(rz3(0.3), (0.2, 0.5, 0)))
    L += ['  ear_l, frame 17.25: body segment 10 -> 24, u = 7.25/14: T (%s, %s, '
          '0), Ry %s;' % (n7(2 - 2 * u), n7(1.5 - 0.5 * u), n7(0.8 - 0.8 * u)),
          '    leg_root 17.25 mod 6 = 5.25, between Anim(5) and Anim(6): '
          'T (-0.5, 0.0625, 0.3), Rz 0.1125:']
    L += rows(E)
    HAND.append(('ik_chain.niff', 17.25, 'ear_l', elems(E)))
    L += ['  stray: no link reaches it: under RootNode, T (5, 0, 0) (a '
          'warning).',
          '  Nodes: RootNode, body, tail, leg_root, ear_l, ear_r, hip, thigh, '
          'shin#2, shin, effector0,',
          '    foot, stray = 13. Joint 1 is named "shin" like Obj 6: objects '
          'keep their names, the joint',
          '    becomes "shin#2". The Effector has name index 0xFFFFFFFF: '
          '"effector0".',
          '  Duration: body P 24 (leg_root 6, effector0 8, both endless) -> '
          '0.8 s.']
    HAND.append(('ik_chain.niff', 0, 'stray', elems(affine(rz3(0), (5, 0, 0)))))
    return L


HANDWORK = {'full3.niff': hand_full3, 'keys.niff': hand_keys,
            'static.niff': hand_static, 'camera.niff': hand_camera,
            'channels.niff': hand_channels, 'billboard.niff': hand_billboard,
            'names.nif': hand_names, 'orders.niff': hand_orders,
            'seam.niff': hand_seam, 'ik_chain.niff': hand_ik}


# --- checks ----------------------------------------------------------------------------

def continuity(fname, sc):
    ev = Evaluator(sc, stem_of(fname))
    eps = 1e-5
    for frame, node in POSES[fname]:
        t = t_string(frame)
        f = float(t) * FPS
        M = ev.pose(f, node)
        near = [ev.pose(f + eps, node)]
        if f > eps:
            near.append(ev.pose(f - eps, node))
        jump = max(max_diff(M, X) for X in near)
        if (fname, frame, node) in AT_STEP:
            assert jump > 1e-2, (fname, frame, node)
            # the value there is one side's limit (a seam: the one before it,
            # RULES "Looping"; a STATIC step: the one after it)
            assert min(max_diff(M, X) for X in near) < 1e-3, (fname, frame, node)
            # t lands exactly on the frame for this evaluator, and within
            # 1e-6 of it for every other plausible way of turning t back into
            # frames (docs/formats/niff.md section 6, Time: a time within 1e-6
            # of a whole frame counts as that frame)
            assert float(t) * 30 == frame, (fname, frame, t)
            assert abs(float(t) / (1 / 30.0) - frame) < 1e-6
            x = f32(float(t))
            assert abs(f32(x * f32(30.0)) - frame) < 1e-6
        else:
            assert jump < 1e-3, ('pose on a discontinuity', fname, frame, node,
                                 jump)


def check_hand(lines):
    poses = {}
    for fname, L in lines.items():
        for l in L:
            if l.startswith('expect-pose '):
                parts = dict(p.split('=', 1) for p in l.split()[1:])
                poses[(fname, parts['t'], parts['node'])] = [
                    float(v) for v in parts['world'].split(',')]
    for fname, frame, node, want in HAND:
        key = (fname, t_string(frame), node)
        assert key in poses, ('hand pose not among the expect lines', key)
        have = poses[key]
        for idx, v in want.items():
            assert abs(have[idx] - v) < 2e-6, (key, idx, have[idx], v)


def self_check(F):
    lines = {}
    for fname, e in F.items():
        data = e['data']
        if e['kind'] == 'ok':
            sc, p = parse_bytes(data)
            assert sc == e['desc'], fname + ': parsed model != description'
            for k, v in e['marks'].items():
                assert p.where.get(k) == v, (fname, k, v, p.where.get(k))
            stem = stem_of(fname)
            L = expect_lines(sc, stem, POSES[fname], step_poses(fname))
            assert L == expect_lines(e['desc'], stem, POSES[fname],
                                     step_poses(fname)), fname
            assert len(data) < 10240
            continuity(fname, sc)
            e['parser'] = p
            lines[fname] = L
        elif e['kind'] == 'bad':
            try:
                parse_bytes(data)
            except Fail as x:
                assert x.offset == e['offset'], (fname, x.offset, e['offset'], x.msg)
                e['reason'] = x.msg
            else:
                raise AssertionError(fname + ' parsed but should fail')
            lines[fname] = ['expect-error-offset %d' % e['offset']]
        else:
            try:
                parse_bytes(data)
            except NotDetected:
                pass
            else:
                raise AssertionError(fname + ' detected')
            lines[fname] = ['expect-not-detected']
    # the broken files differ from their base in exactly one u32 (or are a prefix)
    bases = {'small': pack_file(small())[0], 'small2': pack_file(small2())[0],
             'ik_chain': pack_file(ik_chain())[0]}
    for fname, e in F.items():
        if e['kind'] != 'bad':
            continue
        base = bases[e['base']]
        if fname == 'truncated.niff':
            assert base.startswith(e['data']) and len(e['data']) < len(base)
            continue
        diff = [i for i in range(len(base)) if base[i] != e['data'][i]]
        assert len(base) == len(e['data']) and diff and \
            diff[0] >= e['offset'] and diff[-1] < e['offset'] + 4, fname
    for fname, fn in HANDWORK.items():
        F[fname]['hand'] = fn()
    check_hand(lines)
    assert EULER_CHECKS[0] > 100
    return lines


# --- the prose of each .txt -------------------------------------------------------------
# PROSE[file] = (title, text): how the file was made and what it covers.

PROSE = {}

COMMON = '''
Every file is NIFF big-endian, all fields u32 or float32, 4-byte aligned.
The lists follow the physical order of docs/formats/niff.md section 1
(Scene, Env, Cam, Light, Obj, Shape, Vtx, Tri, Color, Vector, St, Part, Mat,
Tex, TexImg, Anim, Coll, Switch, Name); empty lists are 24-byte headers with
count 0 (Color and Vector carry two counts: 28 bytes). Every list_size =
header + items + extension blocks; the 19 header size fields (in header
order, Tri after St) equal the list sizes; file_size is the file length.'''

PROSE['full3.niff'] = ('NIFF 1, FULL groups on a 3-level hierarchy (Euler lerp, loops)', '''
How it was made: make_fixtures.py, full3() packed by pack_file(). NIFF 1
(version 0x05000100, header 100 bytes, all 19 lists). ObjList: 0 "base"
(children 1, 3), 1 "mid" (child 2), 2 "tip", 3 "side"; SceneList root [0],
scene_name_index 4 ("Scene_full3"). Each object links its own FULL AnimGroup
(anim_type 2, anim_num 7 = frames 0..6, anim_loop 0 = endless, frame_rate 2,
order XYZ), seven 52-byte Anims with tag 0x000c0103.
''' + COMMON + '''

What it covers: FULL playback (Anim(i) = frame i, linear per scalar in
between, Euler lerp, not slerp: tip turns about 2-3 axes at once, e.g. frame 1
is R (1.0, -0.8, 0.6)); a hierarchy three levels deep (base -> mid -> tip)
plus a sibling (side); non-uniform scale on mid (S (1,2,0.5) ... so tip's
world matrix is sheared); the endless loop with P = anim_num - 1 = 6: base,
tip and side are clean loops (Anim(6) == Anim(0)), mid is not (Anim(6) !=
Anim(0)), so mid and its child jump just after frame 6 (pose at 5.99 and
exactly at 6, where RULES shows the final value, Anim(6), as Nintendo's
previewer does; frame 0's value only from just after 6 on); times after the
end (6.5, 9.25 -> 0.5, 3.25). frame_rate 2 is metadata only: time is
frame / 30. Duration 6 / 30.''')

PROSE['keys.niff'] = ('NIFF 1, KEY groups: all interpolation types, chains, loops, a +-3.03 rad wrap', '''
How it was made: make_fixtures.py, keys() packed by pack_file(). NIFF 1. Nine
objects, each with its own KEY AnimGroup (anim_type 3, 64-byte Anims tag
0x000c0104, key/next_key chained, the last next_key 0xFFFFFFFF unless said):
  0 k_static   keys 0, 4, 9, 15, 24, all interpolation_type 0 STATIC (step)
  1 k_linear   keys 0, 3, 10, 12, 24, all 1 LINEAR
  2 k_slowin   keys 0, 5, 8, 16, 24, all 2 SLOWIN
  3 k_slowout  keys 0, 2, 11, 17, 24, all 4 SLOWOUT
  4 k_slow     keys 0, 7, 9, 20, 24, all 6 SLOW
     (objects 0-4: tx 0, 1, 3, -2, 0; ry 0, 0.5, -0.5, 1, 0; sy 1, 1.5, 0.5,
     2, 1; ty = 0, 2, 4, 6, 8 to keep them apart; all endless)
  5 k_mixed    chain 0 -> 4 -> 10 -> 13 -> 18 -> 21 with types LINEAR, STATIC,
               SLOWIN, SLOW, SLOWOUT, LINEAR; physically Anim 2 is an extra
               key 7 (next_key 0xFFFFFFFF) that is not on the chain
  6 k_wrap     child of k_mixed: keys 0, 10, 11, 14 LINEAR, rz 0, 3.03, -3.03,
               -2.5 (rx 0, 0.2, 0.2, 0), T (0,1,0)
  7 k_endless  child of k_wrap: keys 0, 3, 8 LINEAR, endless, P = 8 (clean)
  8 k_twice    anim_loop 2: keys 0, 4, 9 LINEAR (tx 0, 2, 5; rz 0, 0.5, 1),
               the last Anim's next_key is 12 (no Anim has key 12)
SceneList roots [0, 1, 2, 3, 4, 5, 8].
''' + COMMON + '''

What it covers: the five NIFF1 interpolation curves of RULES (STATIC hold,
LINEAR, SLOWIN s = u + u^2 - u^3, SLOWOUT s = 2u^2 - u^3, SLOW s = 3u^2 - 2u^3)
on unevenly spaced keys; poses at keys, mid-segment, just before and after
every STATIC step (k - 0.01, k + 0.01); a chain that mixes types; an Anim off
the chain (ignored); a rotation from 3.03 to -3.03 rad in one frame, which
Euler lerp takes the long way (through 0); anim_loop 2 (plays 0..18 then holds
the last key, e.g. at 25 and 40); an endless group with a period (8) shorter
than the scene (24) under two animated ancestors; an unmatched next_key on
the physically last Anim (just ends the chain); times past the end (30, 33.5,
37.5, 40: the endless groups wrap). Duration 24 / 30 = 0.8 s.''')

PROSE['static.niff'] = ('NIFF 1, STATIC/CONST groups, unlinked, unreached, CLEAR, duplicate and missing names', '''
How it was made: make_fixtures.py, static() packed by pack_file(). NIFF 1.
ObjList:
  0 house       STATIC T(1,0,-2) R(0,0.5,0) S(1,1.5,1); children [2, 3],
                LOD link [10] (obj_lod_dist 50)
  1 orphan      STATIC T(-4,0,0) Rx 0.1; no link reaches it (its
                obj_parent_link says 0, which RULES ignores)
  2 door        group anim_type 0 with one CONST Anim (tag 0x000c0102,
                52-byte TRS layout): T(0.5,0,1) Ry -0.3
  3 lamp        obj_anim_link 0xFFFFFFFF
  4 cleared     obj_state CLEAR; links a KEY group (T x 0 -> 5 over 0..10)
                and has the child link [5]: both ignored
  5 under_clear STATIC T(0,3,0) Rz 0.25; only linked from the CLEAR object
  6 post        STATIC T(3,0,3)
  7 post        (same name as 6) STATIC T(-3,0,3)
  8 (unnamed)   obj_name_index 0xFFFFFFFF; STATIC T(0,0,-5) Ry 1
  9 marker      obj_type NULL (0); STATIC T(0,1,0) R(0.2,0.3,0.4), order ZYX
  10 house_lod  STATIC T(0,0,0.1), reached through house's LOD link
SceneList roots [0, 4, 6, 7, 8, 9, 2] (the last one, door, is already placed
under house). STATIC groups: anim_num 1, frame_rate 0, anim_loop 0.
''' + COMMON + '''

What it covers: STATIC and CONST Anims as the constant local transform; a
NOLINK object (identity local); node order and placement (roots, children,
then LOD links, then unreached objects under the root); a scene root link to
an already placed object (ignored); obj_state CLEAR (identity, links not
followed, its animated group does not count: the scene has no duration, so
there is no expect-duration line); duplicate names ("post", "post#2"); an
unnamed object ("obj8"); a NULL-type object; a non-default order (ZYX).''')

PROSE['camera.niff'] = ('NIFF 1, two cameras: "relative" and "direction" up conventions, animated eye and target', '''
How it was made: make_fixtures.py, camera() packed by pack_file(). NIFF 1.
ObjList (all obj_type NULL):
  0 eye          KEY LINEAR keys 0, 10, 20: T (0,2,10), (6,3,8), (0,2,10)
  1 eye_up       child of eye, STATIC T(0,1,0) -> always eye + (0,1,0)
  2 target       FULL, anim_num 6 (P 5, frame_rate 1): T (-1,0.5,0),
                 (-0.5,0.7,0), (0,1,0.2), (0.5,0.7,0.4), (0,0.5,0.2),
                 (-1,0.5,0)
  3 SideCam      STATIC T(30,8,52)
  4 side_target  STATIC T(0,0.5,0)
  5 side_up      STATIC T(0,1,0) (an up direction stored as a position)
CamList (76-byte Cams, PERSP, right/left/top/bottom 160/-160/120/-120,
cam_scale 1):
  Cam 0 name "MainCam": eye 0, lookat 2, up 1, fovy 45, aspect 1.3333,
        near 1, far 1000
  Cam 1 name "SideCam": eye 3, lookat 4, up 5, fovy 60, aspect 1.5,
        near 0.5, far 500
SceneList roots [0, 2, 3, 4, 5], cam links [0, 1].
''' + COMMON + '''

What it covers: camera nodes (one per Cam, under the root, after the
objects), their names (Cam 1's name equals Obj 3's, so the camera node is
"SideCam#2"), the up convention chosen at t = 0 ("relative" for MainCam,
"direction" for SideCam, where U - E is almost parallel to the view
direction, as in SoftImage files: docs/formats/niff.md section 3), the
camera world matrix (-Z looks at the target, +Y up) while eye (KEY) and
target (FULL, different period) move, the horizontal half angle hfov =
atan(tan(fovy/2) * aspect), and near/far/aspect as float32 values (1.3333
reads back as 1.33329999).''')

PROSE['channels.niff'] = ('NIFF 2, animation channels (RotateX/Y/Z, Translation, ClassicalScale, RotateAxis, OrientationXY)', '''
How it was made: make_fixtures.py, channels() packed by pack_file(). NIFF 2:
version 0x02010200, header 136 = 100 + the 36-byte Nintendo extension (the 9
NIFF2 list sizes), the 9 NIFF2 lists (CiImg, ColorPalette, Envelope, Cluster,
Weight, ChainRoot, Joint, Effector, ExternalName; empty) after the NameList.
SceneList with a 20-byte NIFF2 extension (5 zero counts). Every Obj has the
28-byte NIFF2 extension (7 zero words, obj_size 116 + arrays), obj_parent_link
0xFFFFFFFF everywhere (SoftImage style). The Cam is 100 bytes (76 + 6
external-name words 0xFFFFFFFF). Every AnimGroup has a Nintendo extension:
the 148-byte channel head (use_animation_channel, 8 counts, 28 constraint
words 0xFFFFFFFF) and the key arrays; records are {u32 interp, u32 key,
values, differentials}, interp CONST 0 / LINEAR 2 / HERMITE 3.
  0 chan_euler   anim_type STATIC, anim_num 0, order YXZ; RotateX (LINEAR,
                 HERMITE, CONST keys at 0, 10, 20), RotateY (HERMITE with
                 d 0.1 / -0.05, at 0, 12, 24), RotateZ (CONST at 0, 8, 16),
                 Translation (HERMITE, d (0.5,0,0.2) and (0,0.3,0)),
                 ClassicalScale (LINEAR); children [1]
  1 chan_axis    anim_num 0; RotateAxis (axis (0,1,0) angle 0 -> (1,1,0) 1.5
                 -> (0,0,2) -1, LINEAR then HERMITE), Translation one CONST key
                 (0,2,0); children [2]
  2 chan_orient  anim_num 0; OrientationXY x (1,0,0) y (0,1,0) -> x (0,0,-1)
                 y (0,1,0.2) LINEAR over 0..15, Translation CONST (0,1.5,0)
  3 chan_b2n     anim_group_header_size 196 (= 48 + 148, as blend2niff writes)
                 with Anim(0) still at +48: one STATIC Anim T(3,0,-1) R 0
                 S(1,2,1); channel RotateY LINEAR 0 -> 3 over 0..30
  4 chan_keyanim use_animation_channel 0 (148-byte head, counts 0): its three
                 ordinary KEY Anims play (0 -> 6 -> 12)
  5 cam_eye      STATIC T(0,3,12) (NIFF2 group with an all-zero channel head);
                 children [6]
  6 cam_up       STATIC T(0,1,0)
Cam 0: cam_name_index 0xFFFFFFFF -> node "cam0"; eye 5, lookat 0 (the
animated chan_euler), up 6; fovy 50, aspect 16/9, near 0.1, far 100.
SceneList roots [0, 3, 4, 5].
''' + COMMON + '''

What it covers: NIFF2 detection and list walking, extension blocks skipped
by size (header, Scene, Obj, Cam, AnimGroup), channel blocks with CONST,
LINEAR and HERMITE keys (non-zero differentials), separate RotateX/Y/Z in a
non-XYZ order, RotateAxis, OrientationXY, components without a channel
(from Anim(0) when present, else identity), pitfall 3 of docs/formats/niff.md
section 7 (Anim(0) at +48 although anim_group_header_size says 196), a NIFF2
group that does not use channels, the channel period P = the largest key
frame and its loop, an unnamed NIFF2 camera. Duration 30 / 30 = 1 s.''')

PROSE['billboard.niff'] = ('NIFF 1, BILLBOARD_OBJ group under a translated, rotated parent, moving look-at', '''
How it was made: make_fixtures.py, billboard() packed by pack_file(). NIFF 1.
  0 stand       STATIC T(2,1,-3) Ry 0.4; have_link_billboard 1; children [1]
  1 sign        obj_type BILLBOARD (2); AnimGroup anim_type 4 with one 20-byte
                Anim (tag 0x000c0105): lookat_obj_index 2, upper_obj_index 3;
                children [4]
  2 viewer      KEY LINEAR keys 0, 10, 20, 30: T (4,1,5), (8,2,-3), (-4,0,-6),
                (4,1,5) (endless, P 30)
  3 sky         STATIC T(2,10,-3) (straight above the sign)
  4 sign_child  STATIC T(0,0,1) S 0.5: two levels below stand
SceneList roots [0, 2, 3].
''' + COMMON + '''

What it covers: the billboard rule of RULES: world = [x y z | S] with S the
parent's world origin, z towards the look-at object, y towards the upper
object; the parent's rotation does not turn the sign; the look-at object
moves, so the pose changes with time (baked channel); a child of the
billboard follows its world matrix. The viewer never passes through the
sign's origin. Duration 30 / 30 = 1 s.''')

PROSE['names.nif'] = ('NIFF 1 with the .nif extension; names of 4, 8 and 5 bytes', '''
How it was made: make_fixtures.py, names_nif() packed by pack_file(). NIFF 1,
written with the .nif extension (NetImmerse's extension too: a reader must
detect NIFF by content). NameList: 0 "hello" (5 bytes + 3 NUL, name item
16 + 8), 1 "wxyz1234" (8 bytes, no NUL, 16 + 8), 2 "abcd" (4 bytes, no NUL,
16 + 4), then a 4-byte NameList user extension block "XTRA" (counted in the
list size). ObjList: 0 "abcd" (KEY LINEAR 0 -> 15: T (0,0,0) -> (3,0,0),
ry 0 -> 1; children [1]), 1 "wxyz1234" (STATIC T(0,2,0); children [2]),
2 "hello" (STATIC T(0,0,1.5) Rx 0.5).
''' + COMMON + '''

What it covers: detection by content for .nif, names without a NUL (length
4 and 8: read name_size - 16 bytes), a NUL-padded name, an animated object
with such a name and a child two levels down. Duration 15 / 30 = 0.5 s.''')

PROSE['orders.niff'] = ('NIFF 1, the six anim_rot_mtx_order values (and an unknown one)', '''
How it was made: make_fixtures.py, orders() packed by pack_file(). NIFF 1.
Seven root objects ord_XYZ, ord_XZY, ord_YXZ, ord_YZX, ord_ZXY, ord_ZYX,
ord_unknown, each with a STATIC group: T (2i, 0, 0), R (0.3, -0.7, 1.1),
S 1, anim_rot_mtx_order 0x00010203, 0x00010302, 0x00020103, 0x00030102,
0x00020301, 0x00030201 and 0x00010101 (not a valid order).
''' + COMMON + '''

What it covers: every Euler order of RULES with the same three angles (so
every order gives a different matrix), including the two whose previewer
reading differs (YZX, ZXY), and the fallback of an unknown value to XYZ. No
animation: no expect-duration.''')

PROSE['seam.niff'] = ('NIFF 1, the loop seam: at f = k*P the final value shows', '''
How it was made: make_fixtures.py, seam() packed by pack_file(). NIFF 1.
ObjList (SceneList roots [0, 1, 2], scene_name_index 4 "Scene_seam"):
  0 seam_full   FULL, anim_num 7 (P 6), endless: Anim(i) T (0.5 i, 0, 0),
                rz 0.2 i: Anim(6) (T 3, rz 1.2) != Anim(0) (identity);
                children [3]
  1 seam_key    KEY LINEAR keys 0, 4, 9 (P 9), endless: T (0,2,0), (2,2,0),
                (4,2,1); rx 0, 0.6, 1.2 (last != first)
  2 seam_twice  KEY LINEAR keys 0, 12 (P 12), anim_loop 2: T (0,-2,0) ->
                (6,-2,0), rz 0 -> 1.5
  3 seam_child  STATIC T (0,1,0) under seam_full
''' + COMMON + '''

What it covers: RULES "Looping" at the seam of loops whose first and last
values differ. An endless group at f = k*P (k >= 1) shows its final value
(frame P), as Nintendo's previewer plays it (it restarts a loop only once time
is past its end); just after the seam (k*P + 0.01) it is back at the start.
Poses at P - 0.5, P, P + 0.01, 2P and past the end (27.5, 36; 36 = 6P and
4P of the two endless groups), for a FULL group, a KEY group, a child of the
FULL one, and an anim_loop 2 group (P, the seam between its two plays, and
2P = N*P, where it stops and holds its last key). The expect-pose lines of
poses placed exactly on a seam end with " at_step=1": the game's value there
is exact, while consumer playback of baked keys may take either side of the
jump. Duration max(6, 9, 2 * 12) / 30 = 0.8 s.''')

PROSE['ik_chain.niff'] = ('NIFF 2, an IK chain (ChainRoot, two Joints, Effector) as in env_animal.niff', '''
How it was made: make_fixtures.py, ik_chain() packed by pack_file(). NIFF 2
(version 0x02010200, 136-byte header with the 9 NIFF2 list sizes); the
ChainRoot, Joint and Effector lists sit after the NameList in the order of
docs/formats/niff.md section 1 (CiImg, ColorPalette, Envelope, Cluster,
Weight, ChainRoot, Joint, Effector, ExternalName), each a generic list with
item sizes. Every Obj has the NIFF2 Nintendo extension: 4 *_for_fog words,
obj_chain_root_link_num (+16), external_lod_obj_num (+20), external_obj_num
(+24), then obj_chain_root_link[] (+28) (RULES "IK chains").
ObjList:
  0 body      KEY LINEAR keys 0, 10, 24 (P 24, endless, clean): T (0,1,0),
              (2,1.5,0), (0,1,0), ry 0, 0.8, 0; children [7]; Obj extension
              obj_chain_root_link_num 1, obj_chain_root_link [0] (32 bytes)
  1 stray     STATIC T (5,0,0); reached by nothing
  2 foot      STATIC T (0,-0.1,0.15) (linked from Effector 0)
  3 ear_l     STATIC T (0.2,0.5,0) Rz 0.3 (linked from ChainRoot 0)
  4 ear_r     STATIC T (-0.2,0.5,0) Rz -0.3 (linked from ChainRoot 0)
  5 thigh     STATIC T (0,-0.4,0) (linked from Joint 0)
  6 shin      STATIC T (0,-0.4,0) (linked from Joint 1)
  7 tail      STATIC T (0,0,-0.6) Rx 0.5, body's ordinary child
ChainRootList: 0 "leg_root" (type 1): anim_index 1 (FULL, 7 frames, P 6,
  clean: T (-0.5, -0.2 + 0.05 i, 0.3), rz 0, 0.15, 0.3, 0.45, 0.3, 0.15, 0),
  joint_index 0, obj_index [3, 4], external_obj_num 1 (file name and name
  index 0xFFFFFFFF, not followed): 44 + 8 + 8 = 60 bytes.
JointList: 0 "hip" (type 1, length 0.8, resplane_axis (0,0,1)): anim_index
  0xFFFFFFFF (identity), obj_index [5], joint_index 1, effector_index
  0xFFFFFFFF; 1 named "shin" like Obj 6: anim_index 5 (STATIC T (0,-0.8,0)
  Rx 0.4), obj_index [6], joint_index 0xFFFFFFFF, effector_index 0. 68 bytes
  each.
EffectorList: 0 (name index 0xFFFFFFFF, type 1): anim_index 7 (KEY LINEAR
  keys 0, 4, 8, P 8: T (0,-0.8,0), (0,-0.7,0.2), (0,-0.8,0); rx 0, -0.5, 0),
  obj_index [2]: 44 bytes.
SceneList root [0], a 20-byte NIFF2 extension (5 zero words), name index 10
("Scene_ik"). AnimGroup 0 carries a 148-byte channel head with
use_animation_channel 0.
''' + COMMON + '''

What it covers: RULES "IK chains": the Obj extension's chain root links,
the ChainRoot/Joint/Effector lists and their sizes, chain elements as nodes
(their own AnimGroups: animated ChainRoot and Effector, a Joint without a
group, a Joint with a STATIC one), placement depth first (body's child tail
first, then its chain root; under leg_root its objects ear_l and ear_r, then
Joint 0; under hip its object thigh, then Joint 1; under shin#2 the object
shin, then the Effector; under effector0 foot), the names (a Joint named like
an object gets "#2", an unnamed Effector "effector0"), an object reached by
nothing (stray, under RootNode with a warning), loops of different periods
along the chain (24, 6, 8). Node order: RootNode, body, tail, leg_root,
ear_l, ear_r, hip, thigh, shin#2, shin, effector0, foot, stray.''')

BASE_SMALL = '''The base file, small() (not written itself): NIFF 1, 1716 bytes; ObjList
0 "A" (KEY group 0: keys 0, 5, 12, 20 LINEAR; children [1]), 1 "B" (STATIC;
children [2]), 2 "C" (STATIC; children [3]), 3 "D" (STATIC); SceneList root
[0]; NameList A, B, C, D, Scene_small; AnimGroups 0 (KEY), 1-3 (STATIC).'''

BASE_IK = '''The base file is ik_chain.niff (its .txt describes it): NIFF 2; ObjList 0
"body" ... 7 "tail"; body's NIFF2 extension links ChainRoot 0; ChainRoot 0
"leg_root" -> Joint 0 "hip" -> Joint 1 ("shin#2") -> Effector 0; one
ChainRoot, two Joints, one Effector.'''

BASE_SMALL2 = '''The base file, small2() (not written itself): NIFF 2, 1332 bytes; one object
"chan" with a channel group (anim_type STATIC, anim_num 0): RotateX 2 keys
(16 bytes each), Translation 2 keys (32 bytes each), ClassicalScale 1 key
(32 bytes); Nintendo extension 148 + 32 + 64 + 32 = 276 bytes.'''

BROKEN_PROSE = {
    'truncated.niff': 'a valid file cut in the middle: file_size says more than '
                      'the bytes',
    'bad_listsize.niff': 'the ObjList list_size runs past the end of the file',
    'bad_child.niff': 'an obj_child_link index >= the object count',
    'cycle.niff': 'a child link back to an ancestor (cycle)',
    'bad_nextkey.niff': 'a KEY Anim (not the last) whose next_key is not > its '
                        'key',
    'bad_name.niff': 'an obj_name_index >= the NameList count',
    'bad_anim_link.niff': 'an obj_anim_link >= the AnimGroup count',
    'bad_channel.niff': 'NIFF2 channel counts whose arrays exceed the channel '
                        'block',
    'bad_chain_joint.niff': 'a Joint whose joint_index is past the JointList',
    'bad_chain_link.niff': 'an Obj chain root link past the ChainRootList',
}

BROKEN_WHY = {
    'truncated.niff': 'The header, the SceneList tag and the first lists are '
                      'there, so the file is detected as NIFF; file_size at 4 '
                      'does not match the length.',
    'bad_listsize.niff': 'Walking the lists by their size words, the ObjList\'s '
                         'list_size (its word 2) reaches past the end of the '
                         'file. The header\'s obj_list_num_byte is unchanged.',
    'bad_child.niff': 'B\'s child link names object 9; the ObjList has 4 '
                      'objects.',
    'cycle.niff': 'A -> B -> C and C\'s child link names A, an ancestor on the '
                  'current path: RULES refuses the file at that link. (D is no '
                  'longer linked, which alone would only be a warning.)',
    'bad_nextkey.niff': 'AnimGroup 0\'s chain is 0 -> 5 -> 12 -> 20; Anim 1 '
                        '(key 5, not the physically last) now has next_key 5, '
                        'not > its key (it would name itself).',
    'bad_name.niff': 'C\'s obj_name_index is 7; the NameList has 5 names (and '
                     '7 is not 0xFFFFFFFF).',
    'bad_anim_link.niff': 'B\'s obj_anim_link is 6; the AnimList has 4 groups '
                          '(and 6 is not 0xFFFFFFFF).',
    'bad_channel.niff': 'The counts are read in order: RotateX 2 (148 + 32 = '
                        '180 <= 276) fits; Translation now says 5 keys: 180 + '
                        '5 * 32 = 340 > 276. The first count that does not fit '
                        'is the Translation count.',
    'bad_chain_joint.niff': 'Joint 0 names Joint 2 as the next joint; the '
                            'JointList has 2 joints (and 2 is not 0xFFFFFFFF). '
                            'RULES "IK chains" refuses the file at that '
                            'joint_index field (Joint +44).',
    'bad_chain_link.niff': 'body\'s NIFF2 Obj extension says '
                           'obj_chain_root_link_num 1 and obj_chain_root_link[0] '
                           '= 1; the ChainRootList has 1 chain root. RULES "IK '
                           'chains" refuses the file at that link (extension '
                           '+28).',
}


def decoded(p):
    return ['%6d 0x%04X  %s' % (off, off, text) for off, text in
            sorted(p.fields, key=lambda x: x[0])]


def txt_body(fname, e, lines):
    data = e['data']
    if e['kind'] == 'ok':
        title, prose = PROSE[fname]
        body = ['%s -- %s (%d bytes)' % (fname, title, len(data)), '']
        body += prose.strip('\n').split('\n')
        body += ['', 'Decoded fields (offset decimal, hex; read back from the '
                 'written bytes by the Parser):']
        body += decoded(e['parser'])
        body += [''] + e['hand']
    elif e['kind'] == 'bad':
        body = ['%s -- broken: %s (%d bytes)' % (fname, BROKEN_PROSE[fname],
                                                 len(data)), '']
        base = {'small': BASE_SMALL, 'small2': BASE_SMALL2,
                'ik_chain': BASE_IK}[e['base']]
        if fname == 'truncated.niff':
            body += ['How it was made: make_fixtures.py writes the base file '
                     'below and keeps its first',
                     '%d of %d bytes (half, rounded down to 4). file_size (the '
                     'u32 at 4) still says %d.' % (e['cut'], e['base_len'],
                     e['base_len'])]
        else:
            body += textwrap.wrap(
                'How it was made: make_fixtures.py writes the base file below '
                'and changes one u32: %s, at offset %d (0x%X), from %d to %d.'
                % (e['what'], e['offset'], e['offset'], e['old'], e['new']), 78)
        body += [''] + base.split('\n') + ['']
        body += ['What it must decode to: nothing; the file is refused at '
                 'offset %d.' % e['offset']]
        body += textwrap.wrap(BROKEN_WHY[fname], 78)
        v = struct.unpack_from('>I', data, e['offset'])[0]
        body += [''] + textwrap.wrap(
            'Read back: u32 at %d (0x%X) = %d (0x%08X); file length %d. '
            'Parser: %s.' % (e['offset'], e['offset'], v, v, len(data),
                             e['reason']), 78)
    else:
        body = ['%s -- not NIFF: a NetImmerse/Gamebryo .nif header (%d bytes)'
                % (fname, len(data)), '',
                'How it was made: make_fixtures.py writes the text line',
                '"NetImmerse File Format, Version 4.0.0.2\\n" (40 bytes), then '
                'u32 LE 0x04000002,',
                'u32 LE 1, a length-prefixed "NiNode" and 12 zero bytes.', '',
                'What it covers: the .nif extension clash (docs/formats/niff.md '
                'section 1 and',
                'pitfall 12 in section 7). NIFF has no magic;',
                'it is detected by the u32 at 8 being TAG_HEADER 0, a header '
                'size >= 100 at 12 and the',
                'SceneList tag 0x00010000 right after the header. Here the u32 '
                'at 8 is "%s"' % data[8:12].decode('ascii'),
                '(0x%08X): not NIFF, and not an error either.'
                % struct.unpack_from('>I', data, 8)[0]]
    body += [''] + lines[fname]
    return '\n'.join(body) + '\n'


def main():
    F = build()
    lines = self_check(F)
    for fname, e in F.items():
        with open(os.path.join(HERE, fname), 'wb') as fh:
            fh.write(e['data'])
        with open(os.path.join(HERE, stem_of(fname) + '.txt'), 'w') as fh:
            fh.write(txt_body(fname, e, lines))
        print('%-20s %5d bytes   %-18s %3d expect lines'
              % (fname, len(e['data']), stem_of(fname) + '.txt',
                 len(lines[fname])))
    sys.dont_write_bytecode = True
    import make_geometry                          # the geometry fixtures
    return make_geometry.main()


if __name__ == '__main__':
    sys.exit(main())
