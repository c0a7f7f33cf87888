#!/usr/bin/env python3
"""Write the LEGO Island .ani test fixtures, byte by byte, from the format spec.

Source of truth: docs/formats/lego_island.md §1 (binary layout).
This script uses no writer from the project. Every field is written with an
explicit little-endian struct.pack call, so the output can be checked against
the spec field by field. Each fixture has a hand-written <name>.txt beside it
that gives the decoded values and the expected evaluation results.

Usage:  python3 make_fixtures.py      (writes the files into this folder)

Layout recap (full file):
  s32 magic (0x11), f32 radius, f32 center x,y,z, s32 parseScene, s32 val3,
  u32 numActors, actors (u32 len, len ASCII bytes, u32 type only if len>0),
  s32 duration ms,
  camera block only if parseScene != 0:
      u16 nPos + TransKey*, u16 nTarget + TransKey*, u16 nRoll + RotZKey*,
  node tree in pre-order:
      u32 nameLen, name bytes,
      u16 nT + TransKey(16 B)*, u16 nR + RotKey(20 B, w first)*,
      u16 nS + ScaleKey(16 B)*, u16 nM + MorphKey(5 B)*,
      u32 numChildren, children...
  Key header: s32 v, time ms = v & 0xFFFFFF, flags = v >> 24.
A body-only animation (as embedded in WDB models) starts at numActors and
never has the camera block.
"""

import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# sqrt(1/2): the quaternion components of a 90 degree rotation.
H = math.sqrt(0.5)

# Key flags (docs/formats/lego_island.md §3.3).
ACTIVE = 0x01
NEGATE = 0x02
HOLD = 0x04


# --- primitive fields -------------------------------------------------------

def s32(v):
    return struct.pack('<i', v)


def u32(v):
    return struct.pack('<I', v)


def u16(v):
    return struct.pack('<H', v)


def f32(v):
    return struct.pack('<f', v)


def u8(v):
    return struct.pack('<B', v)


def timeflags(ms, flags):
    """Key header: 24-bit time in ms, flags in the top byte, stored as s32."""
    assert 0 <= ms <= 0xFFFFFF and 0 <= flags <= 0x7F
    return s32(ms | (flags << 24))


# --- keys -------------------------------------------------------------------

def trans_key(ms, flags, x, y, z):          # 16 bytes
    return timeflags(ms, flags) + f32(x) + f32(y) + f32(z)


def rot_key(ms, flags, w, x, y, z):         # 20 bytes, w FIRST
    return timeflags(ms, flags) + f32(w) + f32(x) + f32(y) + f32(z)


def scale_key(ms, flags, x, y, z):          # 16 bytes
    return timeflags(ms, flags) + f32(x) + f32(y) + f32(z)


def morph_key(ms, flags, visible):          # 5 bytes
    return timeflags(ms, flags) + u8(visible)


def rotz_key(ms, flags, roll):              # 8 bytes, roll in radians
    return timeflags(ms, flags) + f32(roll)


def rot_y(ms, flags, deg):
    """Rotation key for a rotation of `deg` degrees about +Y (file values)."""
    half = math.radians(deg) / 2.0
    return rot_key(ms, flags, math.cos(half), 0.0, math.sin(half), 0.0)


# --- structures -------------------------------------------------------------

def header(radius, cx, cy, cz, parse_scene, val3=1, magic=0x11):   # 28 bytes
    return (s32(magic) + f32(radius) + f32(cx) + f32(cy) + f32(cz)
            + s32(parse_scene) + s32(val3))


def actor_list(actors):
    """actors: list of (name, type). The type is only written when len > 0."""
    out = u32(len(actors))
    for name, typ in actors:
        raw = name.encode('ascii')
        out += u32(len(raw)) + raw
        if len(raw) > 0:
            out += u32(typ)
    return out


def duration(ms):
    return s32(ms)


def camera_block(pos_keys, target_keys, roll_keys):
    return (u16(len(pos_keys)) + b''.join(pos_keys)
            + u16(len(target_keys)) + b''.join(target_keys)
            + u16(len(roll_keys)) + b''.join(roll_keys))


def node(name, T=(), R=(), S=(), M=(), children=()):
    """One tree node in pre-order: NodeData, numChildren, children."""
    raw = name.encode('ascii')
    out = u32(len(raw)) + raw
    out += u16(len(T)) + b''.join(T)
    out += u16(len(R)) + b''.join(R)
    out += u16(len(S)) + b''.join(S)
    out += u16(len(M)) + b''.join(M)
    out += u32(len(children)) + b''.join(children)
    return out


def write(name, data):
    path = os.path.join(HERE, name)
    with open(path, 'wb') as fh:
        fh.write(data)
    print('%-18s %5d bytes' % (name, len(data)))


# --- fixtures ---------------------------------------------------------------

def minimal():
    return (header(1.0, 0.0, 0.0, 0.0, 0)
            + actor_list([])
            + duration(1000)
            + node('ROOT', T=[trans_key(0, ACTIVE, 1.0, 2.0, 3.0)]))


def hierarchy():
    sub = node('SUB',
               T=[trans_key(0, ACTIVE, 1.0, 0.0, 0.0)],
               R=[rot_key(0, ACTIVE, H, H, 0.0, 0.0)],           # 90 deg about X
               M=[morph_key(1000, 0, 0), morph_key(1500, 0, 1)])
    part = node('PART',
                T=[trans_key(0, ACTIVE, 0.0, 1.0, 0.0)],
                S=[scale_key(1000, ACTIVE, 2.0, 1.0, 1.0),
                   scale_key(2000, ACTIVE, 4.0, 1.0, 1.0)],
                children=[sub])
    actor = node('ACTOR',
                 T=[trans_key(0, ACTIVE, 3.0, 0.0, 0.0)],
                 R=[rot_key(500, ACTIVE, H, 0.0, H, 0.0),        # 90 deg about Y
                    rot_key(1500, ACTIVE, 0.0, 0.0, 1.0, 0.0)],  # 180 deg about Y
                 children=[part])
    root = node('-HIER',
                T=[trans_key(0, ACTIVE, 0.0, 0.0, 2.0),
                   trans_key(2000, ACTIVE, 0.0, 0.0, 6.0)],
                children=[actor])
    return (header(8.0, 1.0, 1.0, -4.0, 0)
            + actor_list([('ACTOR', 1)])
            + duration(1800)            # shorter than the last key (2000)
            + root)


def camera():
    cam = camera_block(
        pos_keys=[trans_key(0, ACTIVE, 0.0, 2.0, -10.0),
                  trans_key(1000, ACTIVE, 10.0, 2.0, 0.0),
                  trans_key(2000, ACTIVE, 0.0, 2.0, 10.0)],
        target_keys=[trans_key(0, ACTIVE, 0.0, 2.0, 0.0)],
        roll_keys=[rotz_key(500, 0, math.pi / 2.0),
                   rotz_key(1500, 0, math.pi)])
    prop = node('PROP', T=[trans_key(0, ACTIVE, 0.0, 0.0, 1.0),
                           trans_key(2000, ACTIVE, 0.0, 0.0, 3.0)])
    root = node('-CAMSCENE', children=[prop])
    return (header(12.0, 0.0, 2.0, 0.0, 1)
            + actor_list([])
            + duration(2000)
            + cam
            + root)


def flags():
    tzero = node('TZERO', T=[trans_key(0, 0, 0.0, 0.0, 0.0),
                             trans_key(1000, ACTIVE, 2.0, 0.0, 4.0),
                             trans_key(2000, 0, 0.0, 0.0, 0.0)])
    rot = node('ROT', R=[rot_key(0, ACTIVE, H, 0.0, H, 0.0),            # 90 Y
                         rot_key(1000, NEGATE, 0.0, 0.0, -1.0, 0.0),    # -(180 Y)
                         rot_key(2000, HOLD, H, 0.0, 0.0, H),           # 90 Z
                         rot_key(3000, HOLD | ACTIVE, H, H, 0.0, 0.0)])  # 90 X
    wone = node('WONE', R=[rot_key(0, 0, 1.0, 0.0, 1.0, 0.0),        # w==1, inactive
                           rot_key(1000, ACTIVE, 1.0, 0.0, 1.0, 0.0)])  # same, active
    root = node('-FLAGS', children=[tzero, rot, wone])
    return (header(5.0, 0.0, 0.0, 0.0, 0)
            + actor_list([])
            + duration(3000)
            + root)


def long_arc():
    spin = node('SPIN', R=[
        rot_key(0, ACTIVE, math.cos(math.radians(10)), 0.0,
                math.sin(math.radians(10)), 0.0),                 # +20 deg about Y
        rot_key(1000, ACTIVE, -math.cos(math.radians(30)), 0.0,
                -math.sin(math.radians(30)), 0.0),                # NEGATED 60 deg about Y
        rot_key(2000, ACTIVE | NEGATE, math.cos(math.radians(50)), 0.0,
                math.sin(math.radians(50)), 0.0)])                # 100 deg about Y, 0x02
    root = node('-ARC', T=[trans_key(0, ACTIVE, 0.0, 0.0, 5.0)], children=[spin])
    return (header(2.0, 0.0, 0.0, 5.0, 0)
            + actor_list([])
            + duration(2000)
            + root)


def dup_names():
    def figure(name, T, R=()):
        return node(name, T=T, R=R, children=[
            node('BODY', T=[trans_key(0, ACTIVE, 0.0, 1.0, 0.0)], children=[
                node('ARM-RT', T=[trans_key(0, ACTIVE, 0.5, 0.0, 0.0)])]),
            node('HEAD', T=[trans_key(0, ACTIVE, 0.0, 2.0, 0.0)])])
    rd = figure('RD', T=[trans_key(0, ACTIVE, 2.0, 0.0, 0.0),
                         trans_key(1000, ACTIVE, 4.0, 0.0, 0.0)])
    pg = figure('PG', T=[trans_key(0, ACTIVE, -2.0, 0.0, 0.0)],
                R=[rot_key(0, ACTIVE, H, 0.0, H, 0.0)])          # 90 deg about Y
    cart = node('CART', T=[trans_key(0, ACTIVE, 0.0, 0.0, 3.0)], children=[
        node('AXLE', T=[trans_key(0, ACTIVE, 1.0, 0.0, 0.0)], children=[
            node('WHEEL', T=[trans_key(0, ACTIVE, 0.0, 0.0, 1.0)])]),
        node('WHEEL', T=[trans_key(0, ACTIVE, 0.0, 0.0, -1.0)])])
    root = node('-DUPS', children=[rd, pg, cart])
    return (header(6.0, 0.0, 1.0, 0.0, 0)
            + actor_list([('RD', 2), ('PG', 2)])
            + duration(1000)
            + root)


def names():
    helper = node('-HELPER', R=[rot_key(0, ACTIVE, H, 0.0, 0.0, H)],  # 90 deg about Z
                  children=[
                      node('HEAD', T=[trans_key(0, ACTIVE, 1.0, 0.0, 0.0)]),
                      node('', T=[trans_key(0, ACTIVE, 0.0, 1.0, 0.0)])])
    pepper = node('*PEPPER', T=[trans_key(0, ACTIVE, 0.0, 0.0, 2.0),
                                trans_key(1000, ACTIVE, 0.0, 0.0, 4.0)],
                  children=[helper])
    props = node('-PROPS', T=[trans_key(0, ACTIVE, 0.0, 0.0, -1.0)], children=[
        node('HEAD', T=[trans_key(0, ACTIVE, 0.0, 3.0, 0.0)])])
    root = node('-SCENE01', T=[trans_key(0, ACTIVE, 1.0, 0.0, 0.0)],
                children=[pepper, props])
    return (header(4.0, 1.0, 0.0, -3.0, 0)
            + actor_list([('*PEPPER', 2)])
            + duration(1000)
            + root)


def padding():
    box = node('BOX', T=[trans_key(0, 0, 0.0, 0.0, 0.0),
                         trans_key(500, ACTIVE, 0.0, 5.0, 0.0)])
    root = node('-PAD', children=[box])
    body = (header(5.0, 0.0, 2.5, 0.0, 0)
            + actor_list([])
            + duration(1000)
            + root)
    return body + u8(0) + u8(0) + u8(0)          # 3 trailing pad bytes


def body_only():
    # No 28-byte header, no camera: starts at numActors.
    wheel_l = node('WHEEL-L', T=[trans_key(0, ACTIVE, -1.0, 0.0, 1.5)],
                   R=[rot_key(0, ACTIVE, H, 0.0, H, 0.0)])         # +90 deg about Y
    wheel_r = node('WHEEL-R', T=[trans_key(0, ACTIVE, 1.0, 0.0, 1.5)],
                   R=[rot_key(0, ACTIVE, H, 0.0, -H, 0.0)])        # -90 deg about Y
    door = node('DOOR', T=[trans_key(0, ACTIVE, 0.0, 1.0, -0.5)],
                R=[rot_key(0, 0, 1.0, 0.0, 0.0, 0.0),              # identity
                   rot_key(500, ACTIVE, H, H, 0.0, 0.0)])          # 90 deg about X
    spring = node('SPRING', T=[trans_key(0, ACTIVE, 0.0, 2.0, 0.0)],
                  R=[rot_key(0, ACTIVE, H, 0.0, 0.0, H)],          # 90 deg about Z
                  S=[scale_key(0, ACTIVE, 1.0, 3.0, 1.0)])
    root = node('BUGGY', T=[trans_key(0, 0, 0.0, 0.0, 0.0)],
                children=[wheel_l, wheel_r, door, spring])
    return actor_list([]) + duration(500) + root


def dup_times():
    slide = node('SLIDE', T=[trans_key(0, ACTIVE, 0.0, 0.0, 0.0),
                             trans_key(1000, ACTIVE, 1.0, 0.0, 0.0),
                             trans_key(1000, ACTIVE, 5.0, 0.0, 0.0),   # same time
                             trans_key(2000, ACTIVE, 7.0, 0.0, 0.0)])
    root = node('-DUPT', children=[slide])
    return (header(7.0, 3.5, 0.0, 0.0, 0)
            + actor_list([])
            + duration(2000)
            + root)


# --- deep: a 128-level chain turning at every level ---------------------------

DEEP_LEVELS = 128
DEEP_TIMES_MS = (0, 600, 1000)


def deep_axis(i, k):
    """A unit axis that differs per level i and per key k."""
    v = (math.sin(1.3 * i + k), math.cos(0.7 * i + 2 * k), math.sin(0.4 * i - k) + 0.5)
    n = math.sqrt(sum(c * c for c in v))
    return tuple(c / n for c in v)


def deep_keys(i):
    """Level i's rotation keys (w, x, y, z) at DEEP_TIMES_MS and its constant translation.
    Angles stay within +-34 degrees, so consecutive keys have a positive dot product and
    the engine's plain slerp is the ordinary short-arc slerp."""
    angles = (10 + (i % 7) * 3, -(15 + (i % 5) * 4), 25 - (i % 3) * 5)
    rots = []
    for k, deg in enumerate(angles):
        half = math.radians(deg) / 2
        ax = deep_axis(i, k)
        rots.append((math.cos(half),) + tuple(math.sin(half) * c for c in ax))
    t = (0.0, 0.0, 0.0) if i == 0 else (0.3 * math.sin(i), 0.5, 0.3 * math.cos(i))
    return rots, t


def deep():
    """128 nodes, each the only child of the one before; every level has its own
    translation and three rotation keys about different axes, so every inverse bind
    matrix and every world matrix composes 128 turned levels."""
    child = ()
    for i in reversed(range(DEEP_LEVELS)):
        rots, t = deep_keys(i)
        R = [rot_key(ms, ACTIVE, *q) for ms, q in zip(DEEP_TIMES_MS, rots)]
        child = (node('J%03d' % i, T=[trans_key(0, ACTIVE, *t)], R=R, children=child),)
    return (header(64.0, 0.0, 32.0, 0.0, 0)
            + actor_list([])
            + duration(1000)
            + child[0])


def f32r(v):
    """The value as stored in the file (float32)."""
    return struct.unpack('<f', struct.pack('<f', v))[0]


def engine_slerp(a, b, u):
    """docs/formats/lego_island.md §3.2: plain slerp on the raw values (acos of the raw dot;
    linear if 1-d < 1e-5)."""
    d = sum(x * y for x, y in zip(a, b))
    if 1 - d < 1e-5:
        return tuple(x + (y - x) * u for x, y in zip(a, b))
    th = math.acos(d)
    sa, sb = math.sin((1 - u) * th) / math.sin(th), math.sin(u * th) / math.sin(th)
    return tuple(sa * x + sb * y for x, y in zip(a, b))


def mat_mul(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(4)) for c in range(4)] for r in range(4)]


def deep_world(t_ms):
    """World matrices of every level at t_ms, in the converted frame (README.md
    "Expectation lines"): the engine's row-vector local M = R(q) + T, composed as
    world_child = M_local * world_parent, then transposed and Z-mirrored.  The row-vector
    FromQuaternion of q (scaled by 2/|q|^2) is written out here."""
    out = []
    world = [[1.0 if r == c else 0.0 for c in range(4)] for r in range(4)]
    for i in range(DEEP_LEVELS):
        rots, t = deep_keys(i)
        rots = [tuple(f32r(c) for c in q) for q in rots]
        t = tuple(f32r(c) for c in t)
        k = max(j for j in range(len(DEEP_TIMES_MS)) if DEEP_TIMES_MS[j] <= t_ms)
        if k == len(DEEP_TIMES_MS) - 1:
            q = rots[k]
        else:
            u = (t_ms - DEEP_TIMES_MS[k]) / (DEEP_TIMES_MS[k + 1] - DEEP_TIMES_MS[k])
            q = engine_slerp(rots[k], rots[k + 1], u)
        w, x, y, z = q
        s = 2.0 / (w * w + x * x + y * y + z * z)
        # FromQuaternion fills the array of q's column-vector matrix, and the engine uses it
        # with row vectors (v' = v * M), so it turns by the conjugate
        # (docs/formats/lego_island.md §6)
        m = [[1 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y), 0.0],
             [s * (x * y + w * z), 1 - s * (x * x + z * z), s * (y * z - w * x), 0.0],
             [s * (x * z - w * y), s * (y * z + w * x), 1 - s * (x * x + y * y), 0.0],
             [t[0], t[1], t[2], 1.0]]
        world = mat_mul(m, world)
        wt = [[world[c][r] for c in range(4)] for r in range(4)]     # transpose
        f = (1, 1, -1, 1)
        out.append([[f[r] * wt[r][c] * f[c] for c in range(4)] for r in range(4)])
    return out


def deep_text():
    lines = ["deep.ani -- a 128-level chain with a translation and three rotation keys at every level",
             "",
             "How it was made: make_fixtures.py, functions deep() and deep_keys(). Level i",
             "(node Jiii, J000 to J127) is the only child of level i-1; its translation is",
             "(0.3 sin i, 0.5, 0.3 cos i) (level 0: none) and its rotation keys at 0, 600 and",
             "1000 ms turn about a different axis each (deep_axis) by 10..28, -15..-31 and",
             "15..25 degrees.  Consecutive keys have a positive dot product, so the engine's",
             "plain slerp is the short arc.  Duration 1000 ms.",
             "",
             "It tests exports of deep, turned hierarchies: every inverse bind matrix and",
             "every world matrix composes up to 128 rotations.",
             "",
             "The expect-pose lines are computed by make_fixtures.py deep_world() with the",
             "engine rules (docs/formats/lego_island.md section 3.2 slerp, row-vector",
             "FromQuaternion, world = local * parent), then transposed and Z-mirrored; they",
             "are not hand-evaluated.  Positions reach tens of units, so compare with 1e-4",
             "relative above 1.",
             "",
             "expect-duration 1.0",
             "expect-nodes %d" % DEEP_LEVELS]
    for t_ms in (0, 300, 600, 850, 1000):
        worlds = deep_world(t_ms)
        for i in (0, 1, 31, 63, 127):
            vals = ",".join("%.7g" % (worlds[i][r][c] + 0.0) for r in range(4) for c in range(4))
            lines.append("expect-pose t=%g node=J%03d world=%s" % (t_ms / 1000, i, vals))
    return "\n".join(lines) + "\n"


def bad_magic():
    return (header(1.0, 0.0, 0.0, 0.0, 0, magic=0x12)
            + actor_list([])
            + duration(1000)
            + node('ROOT', T=[trans_key(0, ACTIVE, 1.0, 2.0, 3.0)]))


def truncated():
    full = (header(1.0, 0.0, 0.0, 0.0, 0)
            + actor_list([])
            + duration(1000)
            + node('ROOT', R=[rot_key(0, ACTIVE, H, 0.0, H, 0.0)]))
    # 28 header + 4 numActors + 4 duration + 4 nameLen + 4 'ROOT' + 2 nT
    # + 2 nR = 48: the rotation key starts here. 48 timeflags, 52 w, 56 x.
    # Keep 2 of the 4 bytes of x: the read of x (offset 56) must fail.
    assert len(full) == 48 + 20 + 2 + 2 + 4
    return full[:58]


FIXTURES = [
    ('minimal.ani', minimal),
    ('hierarchy.ani', hierarchy),
    ('camera.ani', camera),
    ('flags.ani', flags),
    ('long_arc.ani', long_arc),
    ('dup_names.ani', dup_names),
    ('names.ani', names),
    ('padding.ani', padding),
    ('body_only.anb', body_only),
    ('dup_times.ani', dup_times),
    ('deep.ani', deep),
    ('bad_magic.ani', bad_magic),
    ('truncated.ani', truncated),
]


def main():
    for name, make in FIXTURES:
        write(name, make())
    with open(os.path.join(HERE, 'deep.txt'), 'w') as fh:
        fh.write(deep_text())


if __name__ == '__main__':
    main()
