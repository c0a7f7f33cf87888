#!/usr/bin/env python3
"""Write the Metroid Prime ANIM / CINF test fixtures, byte by byte, from the spec.

Source of truth: docs/formats/metroid_prime.md
  section 2    version 0 (uncompressed), MP1 and MP2 layouts
  section 3    version 2 (bitstream), MP1 layout, bit order (3.1), decoding (3.2),
               encoder rules (3.3), the 96-byte worked example (3.4)
  section 3.6  MP2 (Echoes) version 2, the Echoes-demo layout, metaforce PC v3
  section 5    CINF, MP1 and MP2 layouts
This script uses nothing from the project. Every field is written with an
explicit big-endian struct.pack call, and the bitstream is packed by the small
BitWriter below (LSB-first inside 32-bit big-endian words, deltas in two's
complement). Each fixture has a hand-written <stem>.txt beside it that gives
the decoded values and the expected results; expect.py (a separate reference
decoder that only reads the written bytes) computes the expect-* numbers.

Usage:  python3 make_fixtures.py      (writes the files into this folder)

The output is deterministic: no clocks, no randomness, no dict-order tricks.
"""

import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


# --- primitive big-endian fields ---------------------------------------------

def u8(v):
    return struct.pack('>B', v)


def u16(v):
    return struct.pack('>H', v)


def s16(v):
    return struct.pack('>h', v)


def u32(v):
    return struct.pack('>I', v)


def f32(v):
    return struct.pack('>f', v)


def f32val(v):
    """The value a float becomes after a round trip through float32."""
    return struct.unpack('>f', struct.pack('>f', v))[0]


def pad32(data):
    """0xFF padding up to the next multiple of 32 bytes
    (docs/formats/metroid_prime.md section 1)."""
    return data + b'\xff' * ((-len(data)) % 32)


# --- quaternions used to describe the intended keys --------------------------

def aa(axis, deg):
    """Quaternion (w,x,y,z) for a rotation of `deg` degrees about unit `axis`.

    The half angle is NOT reduced, so aa(Z, 250) gives w = cos(125) < 0: the
    sign chosen here is the sign that is stored (the 'hemisphere' of the key).
    """
    h = math.radians(deg) / 2.0
    s = math.sin(h)
    return (math.cos(h), axis[0] * s, axis[1] * s, axis[2] * s)


def neg(q):
    return tuple(-c for c in q)


X = (1.0, 0.0, 0.0)
Y = (0.0, 1.0, 0.0)
Z = (0.0, 0.0, 1.0)
IDENT = (1.0, 0.0, 0.0, 0.0)


# --- the bit packer (docs/formats/metroid_prime.md 3.1) ---------------------

class BitWriter:
    """Bits are appended from the least significant bit of the current 32-bit
    word upward, spilling into the next word; the words are then written
    big-endian. A value of q bits is written LSB first."""

    def __init__(self):
        self.bits = 0      # all bits so far, bit i of this int = stream bit i
        self.n = 0         # number of bits written

    def put_signed(self, value, q):
        assert q >= 1
        assert -(1 << (q - 1)) <= value <= (1 << (q - 1)) - 1, (value, q)
        self.bits |= (value & ((1 << q) - 1)) << self.n    # two's complement
        self.n += q

    def put_flag(self, bit):
        assert bit in (0, 1)
        self.bits |= bit << self.n
        self.n += 1

    def words(self):
        count = (self.n + 31) // 32          # last word zero-padded
        return b''.join(u32((self.bits >> (32 * i)) & 0xFFFFFFFF)
                        for i in range(count))


def width(deltas):
    """Smallest q >= 1 with -2^(q-1) <= d <= 2^(q-1)-1 for every delta
    (docs/formats/metroid_prime.md 3.3 step 4; note +1 needs q = 2)."""
    q = 1
    while not all(-(1 << (q - 1)) <= d <= (1 << (q - 1)) - 1 for d in deltas):
        q += 1
    return q


def quant_rot(q, D):
    """docs/formats/metroid_prime.md 3.3 step 2:
    ints = round(asin(c) * D / (pi/2)), wneg = (w < 0)."""
    w, x, y, z = q
    ints = tuple(int(round(math.asin(max(-1.0, min(1.0, c))) * D / (math.pi / 2.0)))
                 for c in (x, y, z))
    return (1 if w < 0 else 0,) + ints


def quant_vec(v, mult):
    """Absolute values / multiplier; the fixtures only use exact multiples."""
    out = []
    for c in v:
        i = int(round(c / mult))
        assert abs(i * mult - c) < 1e-12, (c, mult)
        out.append(i)
    return tuple(out)


# --- version 2 / 3 writer (docs/formats/metroid_prime.md 3, 3.3, 3.6) -------

class Chan:
    """One bone channel. rot: list of (wneg, rx, ry, rz) ints per key (or None),
    trans / scale: list of (x, y, z) ints per key (or None).
    force: {('r'|'t'|'s', component): bits} overrides a computed width."""

    def __init__(self, bone, rot=None, trans=None, scale=None, force=None):
        self.bone = bone
        self.rot = rot
        self.trans = trans
        self.scale = scale
        self.force = force or {}

    def nkeys(self):
        for arr in (self.rot, self.trans, self.scale):
            if arr is not None:
                return len(arr)
        raise ValueError('empty channel')

    def widths(self, kind):
        arr = {'r': self.rot, 't': self.trans, 's': self.scale}[kind]
        first = 1 if kind == 'r' else 0          # skip the wneg flag
        out = []
        for c in range(3):
            vals = [k[first + c] for k in arr]
            deltas = [b - a for a, b in zip(vals, vals[1:])]
            out.append(self.force.get((kind, c), width(deltas)))
        return out

    def init(self, kind):
        arr = {'r': self.rot, 't': self.trans, 's': self.scale}[kind]
        return arr[0][1:] if kind == 'r' else arr[0]


def bitmap_words(frames, nbits):
    words = [0] * ((nbits + 31) // 32)
    for f in frames:
        words[f // 32] |= 1 << (f % 32)      # bit f%32 of word f/32, LSB first
    return b''.join(u32(w) for w in words)


def packed24(init, bits):
    """metaforce v3: u32 = (init << 8) | bits, init signed 24-bit."""
    assert -(1 << 23) <= init < (1 << 23) and 0 <= bits <= 0xFF
    return u32(((init & 0xFFFFFF) << 8) | bits)


def v2_file(layout, chans, frames, *, duration, interval, root, looping, D, M,
            S=None, evnt=0, kb=None, nbits=None):
    """layout: 'mp1' (retail Prime 1), 'demo' (Prime 1 layout without EVNT),
    'mp2' (Echoes), 'v3' (metaforce PC). Returns (bytes, offsets dict).
    kb / nbits override the key count / bitmap length (broken fixtures)."""
    nkeys = chans[0].nkeys()
    for c in chans:
        assert c.nkeys() == nkeys
        assert c.rot is None or c.rot[0][0] == 0, 'key 0 must have w >= 0'
    if kb is None:
        kb = nkeys - 1
        assert len(frames) == nkeys and frames[0] == 0
    if nbits is None:
        nbits = frames[-1] + 1
    C = len(chans)
    off = {}

    # header
    if layout == 'mp2':
        head = (u16(0x0101) + f32(duration) + f32(interval) + u32(root)
                + u32(looping) + u32(D) + f32(M) + f32(S) + u32(C) + u32(1)
                + u32(nbits))
    else:
        head = b'' if layout == 'demo' else u32(evnt)
        head += (u32(1) + f32(duration) + f32(interval) + u32(root)
                 + u32(looping) + u32(D) + f32(M) + u32(C) + u32(1) + u32(nbits))
    version = 3 if layout == 'v3' else 2
    body = u32(version) + u32(0) + head       # scratch size patched below
    off['bitmap'] = len(body)
    body += bitmap_words(frames, nbits)
    if layout != 'mp2':
        body += u32(C)                        # MP1: C again (read and discarded)
    body += u32(C)                            # descriptor count

    # descriptors
    off['desc'] = []
    for ch in chans:
        d = {'start': len(body)}
        if layout == 'mp2':
            body += u8(ch.bone)
            groups = [('r', ch.rot), ('t', ch.trans), ('s', ch.scale)]
            for kind, arr in groups:
                d[kind + 'count'] = len(body)
                if arr is None:
                    body += u16(0)
                    continue
                body += u16(kb)
                for c, (i0, q) in enumerate(zip(ch.init(kind), ch.widths(kind))):
                    d[kind + 'bits%d' % c] = len(body) + 2
                    body += s16(i0) + u8(q)
        elif layout == 'v3':
            assert ch.rot is not None and ch.scale is None
            body += u32(ch.bone)
            d['rcount'] = len(body)
            body += u32(kb)
            for i0, q in zip(ch.init('r'), ch.widths('r')):
                body += packed24(i0, q)
            d['tcount'] = len(body)
            if ch.trans is None:
                body += u32(0)
            else:
                body += u32(kb)
                for i0, q in zip(ch.init('t'), ch.widths('t')):
                    body += packed24(i0, q)
        else:  # mp1 / demo
            assert ch.rot is not None and ch.scale is None
            body += u32(ch.bone)
            d['rcount'] = len(body)
            body += u16(kb)
            for c, (i0, q) in enumerate(zip(ch.init('r'), ch.widths('r'))):
                d['rbits%d' % c] = len(body) + 2
                body += s16(i0) + u8(q)
            d['tcount'] = len(body)
            if ch.trans is None:
                body += u16(0)
            else:
                body += u16(kb)
                for c, (i0, q) in enumerate(zip(ch.init('t'), ch.widths('t'))):
                    d['tbits%d' % c] = len(body) + 2
                    body += s16(i0) + u8(q)
        off['desc'].append(d)

    # bitstream: for each key j >= 1, for each channel in descriptor order:
    # [w flag + 3 rotation deltas] [3 translation deltas] [3 scale deltas]
    bw = BitWriter()
    for j in range(1, kb + 1):
        for ch in chans:
            if ch.rot is not None:
                q = ch.widths('r')
                bw.put_flag(ch.rot[j][0])
                for c in range(3):
                    bw.put_signed(ch.rot[j][1 + c] - ch.rot[j - 1][1 + c], q[c])
            for kind, arr in (('t', ch.trans), ('s', ch.scale)):
                if arr is None:
                    continue
                q = ch.widths(kind)
                for c in range(3):
                    bw.put_signed(arr[j][c] - arr[j - 1][c], q[c])
    off['bitstream'] = len(body)
    off['bits'] = bw.n
    body += bw.words()
    off['end'] = len(body)
    # scratch size = bytes after the version field
    # (docs/formats/metroid_prime.md 3, field 0x04)
    body = body[:4] + u32(len(body) - 4) + body[8:]
    return body, off


# --- version 0 writer (docs/formats/metroid_prime.md 2) ---------------------

def v0_file(mp2, chans, *, K, duration, interval, root, evnt=0):
    """chans: list (channel order) of dicts with 'bone' and float key lists
    'rot' (w,x,y,z), 'trans', 'scale' (each None or K entries)."""
    out = (u32(0) + f32(duration) + u32(0) + f32(interval) + u32(0)
           + u32(K) + u32(root) + u32(100))
    bonemap = [0xFF] * 100
    for ci, ch in enumerate(chans):
        bonemap[ch['bone']] = ci
    out += b''.join(u8(v) for v in bonemap)

    def compact(kind):
        m, n = [], 0
        for ch in chans:
            if ch.get(kind) is None:
                m.append(0xFF)
            else:
                assert len(ch[kind]) == K
                m.append(n)
                n += 1
        return m, n

    def quats(kind, n):
        keys = [k for ch in chans if ch.get(kind) is not None for k in ch[kind]]
        assert len(keys) == n * K                 # channel-major
        return u32(len(keys)) + b''.join(b''.join(f32(c) for c in k) for k in keys)

    rmap, R = compact('rot')
    tmap, T = compact('trans')
    if not mp2:
        assert R == len(chans), 'MP1: every channel has a rotation'
        out += u32(R) + b''.join(u8(v) for v in tmap)
        out += quats('rot', R) + quats('trans', T) + u32(evnt)
    else:
        smap, S = compact('scale')
        for m in (rmap, tmap, smap):
            out += u32(len(chans)) + b''.join(u8(v) for v in m)
        out += quats('scale', S) + quats('rot', R) + quats('trans', T)
    return out


# --- CINF writer (docs/formats/metroid_prime.md 5) --------------------------

def cinf_file(bones, names, mp2=False):
    """bones: list in RECORD order of (id, parent, (x,y,z)) or, for MP2,
    (id, parent, pos, q1, q2). Returns (bytes, {id: record offset})."""
    out = u32(len(bones))
    offs = {}
    ids = [b[0] for b in bones]
    for b in bones:
        bid, parent, pos = b[0], b[1], b[2]
        offs[bid] = len(out)
        out += u32(bid) + u32(parent) + b''.join(f32(c) for c in pos)
        if mp2:
            out += b''.join(f32(c) for c in b[3]) + b''.join(f32(c) for c in b[4])
        children = [c[0] for c in bones if c[1] == bid]
        linked = [parent] + children                  # parent id + children ids
        out += u32(len(linked)) + b''.join(u32(i) for i in linked)
    roots = [b[0] for b in bones if b[1] not in ids]
    order = roots + sorted((i for i in ids if i not in roots), reverse=True)
    out += u32(len(order)) + b''.join(u32(i) for i in order)  # build order list
    out += u32(len(names))
    for name, bid in names:
        out += name.encode('ascii') + b'\x00' + u32(bid)
    return pad32(out), offs


# --- fixtures ----------------------------------------------------------------

I30 = 1.0 / 30.0     # written as float32 0x3D088889 = 0.033333335


def example_96():
    """docs/formats/metroid_prime.md 3.4, exactly: one channel (bone 3), keys
    at frames 0 and 2."""
    ch = Chan(3, rot=[(0, 0, 0, 0), (0, 0, 0, 16384)],
              trans=[(0, 0, 1024), (512, 0, 1024)])
    data, _ = v2_file('mp1', [ch], [0, 2], duration=2.0 / 30.0, interval=I30,
                      root=3, looping=0, D=0x7FFF, M=1.0 / 1024.0)
    data = pad32(data)
    expected = bytes.fromhex(
        '00000002 0000005a 00000000 00000001'
        '3d888889 3d088889 00000003 00000000'
        '00007fff 3a800000 00000001 00000001'
        '00000003 00000005 00000001 00000001'
        '00000003 0001 000001 000001 000010 0001'
        '00000b 000001 040001 10020000 ffff'.replace(' ', ''))
    assert data == expected, 'packer does not reproduce docs/formats/metroid_prime.md 3.4'
    return data


def v0_mp1():
    I = f32val(I30)
    chans = [
        {'bone': 3,                                   # channel 0
         'rot': [aa(Z, a) for a in (0, 30, 60, 90)],
         'trans': [(0, 0, 1), (0.5, 0, 1), (1, 0, 1), (1.5, 0, 1)]},
        {'bone': 5,                                   # channel 1, no translation
         'rot': [aa(X, a) for a in (0, 45, 90, 45)],
         'trans': None},
        {'bone': 4,                                   # channel 2
         'rot': [aa(Y, a) for a in (0, 60, 120, 200)],   # key 3 has w < 0
         'trans': [(0, 0, 1), (0, 0, 1.25), (0, 0, 1.5), (0, 0, 1.25)]},
    ]
    anim = v0_file(False, chans, K=4, duration=4 * I, interval=I30, root=3,
                   evnt=0x12345678)
    cinf, _ = cinf_file([(3, 2, (0, 0, 1)), (4, 3, (0, 0, 2)),
                         (5, 4, (0, 0.5, 3)), (6, 3, (1, 0, 1))],
                        [('Root', 3), ('Hips', 4), ('Neck', 5), ('Arm', 6)])
    return anim, cinf


def v0_mp2():
    I = f32val(I30)
    r45z = aa(Z, 45)
    r90x = aa(X, 90)
    chans = [
        {'bone': 3,                                   # channel 0: R T S
         'rot': [aa(Z, a) for a in (0, 20, 40)],
         'trans': [(0, 0, 1), (0, 0.5, 1), (0, 1, 1)],
         'scale': [(1, 1, 1), (1.25, 1.25, 1.25), (1.5, 1.5, 1.5)]},
        {'bone': 7,                                   # channel 1: T only
         'rot': None,
         'trans': [(0, 0, 0.5), (0, 0, 0.75), (0.25, 0, 0.75)],
         'scale': None},
        {'bone': 9,                                   # channel 2: R S
         'rot': [aa(X, a) for a in (0, 90, 180)],
         'trans': None,
         'scale': [(1, 1, 1), (1, 2, 1), (1, 3, 1)]},
    ]
    anim = v0_file(True, chans, K=3, duration=2 * I, interval=I30, root=3)
    anim = pad32(anim)
    cinf, _ = cinf_file([(3, 2, (0, 0, 1), IDENT, IDENT),
                         (7, 3, (0, 0, 1.5), r45z, r45z),
                         (9, 7, (0, 0.25, 2), IDENT, IDENT),
                         (8, 3, (0.5, 0, 1), r90x, r90x)],
                        [('Body', 3), ('Neck', 7), ('Jaw', 9), ('Fin', 8)],
                        mp2=True)
    return anim, cinf


def v2_mp1():
    D, M = 0x7FFF, 1.0 / 256.0
    frames = [0, 1, 4, 5, 9]
    pelvis = Chan(3,
                  rot=[quant_rot(q, D) for q in (
                      IDENT, aa(Y, 10), aa(Y, 20), aa((0.6, 0.8, 0.0), 25),
                      aa(Y, 30))],
                  trans=[(0, 0, 256), (32, -1, 256), (64, -1, 256),
                         (96, -2, 256), (160, -2, 256)])     # TY: deltas -1,0,-1,0
    head = Chan(5,                                           # no translation
                rot=[quant_rot(q, D) for q in (
                    IDENT, aa(X, 40), neg(aa(X, 80)), neg(aa(X, 100)),
                    neg(aa(X, 70)))])       # key1->key2: negative dot, long way
    spine = Chan(4,                                          # 500 deg spin
                 rot=[quant_rot(aa(Z, a), D) for a in (0, 100, 250, 370, 500)],
                 trans=[(0, 64, 256), (0, 64, 288), (0, 64, 320), (0, 64, 256),
                        (0, 64, 224)])
    extra = Chan(50,                                         # not in the CINF
                 rot=[quant_rot(aa(X, a), D) for a in (0, 20, 40, 60, 80)],
                 trans=[(256, 0, 0), (256, 0, 64), (256, 0, 128), (256, 0, 192),
                        (256, 0, 256)])
    chans = [pelvis, head, spine, extra]
    assert pelvis.widths('t')[1] == 1
    anim, _ = v2_file('mp1', chans, frames, duration=0.4, interval=I30, root=3,
                      looping=1, D=D, M=M, evnt=0xCAFEBABE)
    anim = pad32(anim)
    cinf, _ = cinf_file([(3, 2, (0, 0, 1)), (4, 3, (0, 0.25, 2)),
                         (5, 4, (0, 0.25, 3.5)), (6, 3, (-0.5, 0, 1.5))],
                        [('Pelvis', 3), ('Spine', 4), ('Head', 5), ('Tail', 6)])
    return anim, cinf


def v2_mp2():
    D, M, S = 9000, 1.0 / 128.0, 1.0 / 256.0
    frames = [0, 2, 3, 6]
    base = Chan(0,
                rot=[quant_rot(aa(Z, a), D) for a in (0, 90, 180, 270)],
                trans=[quant_vec(v, M) for v in (
                    (0, 0, 0.5), (0.25, 0, 0.5), (0.5, 0, 0.5), (0.5, 0.25, 0.5))])
    boom = Chan(1,                                           # no rotation
                trans=[quant_vec(v, M) for v in (
                    (0, 0, 0.5), (0, 0, 0.75), (0, 0, 1), (0, 0, 0.5))],
                scale=[quant_vec(v, S) for v in (
                    (1, 1, 1), (2, 1, 1), (2, 2, 1), (1, 1, 1))])
    hook = Chan(4,                                           # no translation
                rot=[quant_rot(aa(X, a), D) for a in (0, -30, -60, -30)],
                scale=[quant_vec(v, S) for v in (
                    (1, 1, 1), (1, 1, 1.5), (1, 1, 2), (1, 1, 1))])
    anim, _ = v2_file('mp2', [base, boom, hook], frames, duration=0.5,
                      interval=0.0625, root=0, looping=0, D=D, M=M, S=S)
    r90z = aa(Z, 90)
    r60y = aa(Y, 60)
    cinf, _ = cinf_file([(0, 2, (0, 0, 0.5), IDENT, IDENT),
                         (1, 0, (0, 0, 1), r90z, r90z),
                         (4, 1, (0, 0, 1.75), IDENT, IDENT),
                         (5, 0, (0.25, 0, 0.5), r60y, r60y)],
                        [('Base', 0), ('Boom', 1), ('Hook', 4), ('Light', 5)],
                        mp2=True)
    return anim, cinf


def v2_demo():
    D, M = 0x7FFF, 1.0 / 64.0
    frames = [0, 17, 40]                       # N = 41: two bitmap words
    a = Chan(3, rot=[quant_rot(aa(Z, g), D) for g in (0, 50, 110)],
             trans=[(0, 0, 0), (64, 0, 0), (64, 64, 0)])
    b = Chan(7, rot=[quant_rot(aa(Y, g), D) for g in (0, -30, 30)])
    anim, _ = v2_file('demo', [a, b], frames, duration=f32val(I30) * 40,
                      interval=I30, root=3, looping=1, D=D, M=M)
    return anim


def v3_pc():
    D, M = 0x7FFFFF, 2.0 ** -20
    frames = [0, 1, 2, 5]
    a = Chan(3, rot=[quant_rot(aa(X, g), D) for g in (0, 30, 60, 100)],
             trans=[quant_vec(v, M) for v in (
                 (-3, 0.5, 2), (-2.5, 0.5, 2), (-2, 0.75, 2), (-1, 1, 2))])
    b = Chan(9, rot=[quant_rot(aa(Z, g), D) for g in (0, -20, -40, -60)])
    anim, _ = v2_file('v3', [a, b], frames, duration=f32val(I30) * 5,
                      interval=I30, root=3, looping=0, D=D, M=M,
                      evnt=0x0ABCDEF0)
    return anim


def upper():
    D, M = 0x7FFF, 1.0 / 128.0
    a = Chan(3, rot=[quant_rot(aa(Z, g), D) for g in (0, 60)],
             trans=[(0, 0, 128), (0, 0, 256)])
    b = Chan(4, rot=[quant_rot(aa(Y, g), D) for g in (0, 40)])
    anim, _ = v2_file('mp1', [a, b], [0, 3], duration=0.1, interval=I30,
                      root=3, looping=0, D=D, M=M, evnt=0x00A1B2C3)
    anim = pad32(anim)
    cinf, _ = cinf_file([(3, 2, (0, 0, 1)), (4, 3, (1, 0, 1.5))],
                        [('Torso', 3), ('Arm', 4)])
    return anim, cinf


def skeleton_alone():
    # Record order as metaforce's CINF writer emits it: children first, root last.
    data, _ = cinf_file([(4, 3, (0, 0, 1)), (5, 4, (0, 0.5, 2)),
                         (6, 3, (0, -1, 0.5)), (3, 2, (0, 0, 0))],
                        [('root', 3), ('Skeleton_Root', 4), ('spine', 5),
                         ('tail', 6)])
    return data


# --- broken fixtures ---------------------------------------------------------

def small_v2(kb=None, force=None, rot_keys=None):
    """Base file for the broken fixtures: bones 3 (R+T) and 4 (R), keys at
    frames 0, 1, 3 (or 4 rotation keys with kb=3 for bad_popcount)."""
    D, M = 0x7FFF, 1.0 / 128.0
    angles = rot_keys or (0, 30, 60)
    a = Chan(3, rot=[quant_rot(aa(Z, g), D) for g in angles],
             trans=[(0, 0, 128 + 16 * i) for i in range(len(angles))])
    b = Chan(4, rot=[quant_rot(aa(Y, g), D) for g in angles], force=force)
    return v2_file('mp1', [a, b], [0, 1, 3], duration=0.1, interval=I30,
                   root=3, looping=0, D=D, M=M, evnt=0x00001234, kb=kb)


def bad_version():
    data, _ = small_v2()
    return u32(1) + data[4:]


def truncated_bitstream():
    data, off = small_v2()
    assert off['end'] - off['bitstream'] == 12      # three bitstream words
    truncated_bitstream.offset = off['bitstream']
    return data[:-3]                                # cut 3 of its 12 bytes


def bad_width():
    data, off = small_v2(force={('r', 1): 33})      # bone 4, RY: 33 bits
    bad_width.offset = off['desc'][1]['rbits1']
    assert data[bad_width.offset] == 33
    return data


def bad_popcount():
    # 4 rotation keys (Kb = 3) but the bitmap has only 3 bits set (0, 1, 3)
    data, off = small_v2(kb=3, rot_keys=(0, 30, 60, 80))
    bad_popcount.offset = off['desc'][0]['rcount']
    return data


def bad_cinf_cycle():
    data, offs = cinf_file([(3, 2, (0, 0, 0)), (6, 3, (1, 0, 0)),
                            (4, 5, (0, 0, 1)), (5, 4, (0, 0, 2))],
                           [('root', 3), ('tail', 6), ('a', 4), ('b', 5)])
    bad_cinf_cycle.offset = offs[4]
    return data


# --- main --------------------------------------------------------------------

def write(name, data):
    with open(os.path.join(HERE, name), 'wb') as fh:
        fh.write(data)
    print('%-26s %5d bytes' % (name, len(data)))


def main():
    write('example_96.anim', example_96())
    for stem, make in (('v0_mp1', v0_mp1), ('v0_mp2', v0_mp2),
                       ('v2_mp1', v2_mp1), ('v2_mp2', v2_mp2)):
        anim, cinf = make()
        write(stem + '.anim', anim)
        write(stem + '.cinf', cinf)
    write('v2_demo.anim', v2_demo())
    write('v3_pc.anim', v3_pc())
    anim, cinf = upper()
    write('upper.ANIM', anim)
    write('upper.CINF', cinf)
    write('skeleton_alone.cinf', skeleton_alone())
    write('bad_version.anim', bad_version())
    write('truncated_bitstream.anim', truncated_bitstream())
    print('    first bitstream byte at', truncated_bitstream.offset)
    write('bad_width.anim', bad_width())
    print('    33-bit width byte at', bad_width.offset)
    write('bad_popcount.anim', bad_popcount())
    print('    channel 0 rotation key count at', bad_popcount.offset)
    write('bad_cinf_cycle.cinf', bad_cinf_cycle())
    print('    bone 4 record at', bad_cinf_cycle.offset)


if __name__ == '__main__':
    main()
