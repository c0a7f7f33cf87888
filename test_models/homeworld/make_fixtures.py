#!/usr/bin/env python3
"""Write the Homeworld (1999) .mad mesh-animation test fixtures, byte by byte,
from the format's page and the project's playback rules.

Sources of truth:
  docs/formats/homeworld.md         section 1 (on-disk layout: 40-byte header,
                                    16-byte madanimation, 48-byte madobjpath,
                                    per-object arrays, string block; LWExport's
                                    conventions: phantom keys, frame/fps times,
                                    radians, bits), section 2 (the TCB
                                    Hermite of bsCurveUpdate), section 3 (the
                                    transform), section 4 (playback).
  test_models/homeworld/RULES.md    the project's decisions (nodes, names,
                                    channel evaluation, rest pose, windows,
                                    refused files and their error offsets).

This script uses nothing from the project (no reader, no writer, no binary).
Every data file is written with explicit struct.pack('<...') calls by pack_mad
(the Homeworld 2 IFF sample by pack_hw2, big-endian as IFF is). Every offset
and size field is computed from the bytes written.

Before anything is written to disk the script
  * re-parses its own bytes with a separate small Parser (parse_bytes) that
    follows the stored offsets (objPath, times, parameters, path[6],
    stringBlock, name offsets) and never assumes the contiguous layout; the
    parsed model must equal the description (floats rounded to float32);
  * computes the expect-* lines with the reference evaluator (RULES.md) from
    the parsed model and again from the description; both must agree;
  * cross-checks every rotation matrix of the closed form (RULES.md) against
    the product Rx(-h)*Rz(p)*Ry(-b) of elementary matrices, against the
    quaternion q(X,-h)*q(Z,p)*q(Y,-b), and against the game's intrinsic
    Rodrigues construction (docs/formats/homeworld.md section 3);
  * checks the hand-worked numbers quoted in the .txt files (HAND, computed
    with a separate power-basis form of the cubic) against the evaluator;
  * checks the pose requests (POSES): t = 0 and t = D present, at least two
    interior times off the 1/60 s grid and off every key, nothing within
    1e-3 s of a step, 0 <= t <= D, a non-participating node wherever the
    animation has one;
  * requires every broken file to make the Parser fail at the documented
    offset and to differ from its valid base in exactly one aligned u32 (or
    to be a prefix of it); homeworld2.mad must be "not detected".

Usage:  python3 make_fixtures.py      (writes the files into this folder)
        python3 expect.py --check     (re-reads the files, compares the .txt)

The output is deterministic: no clocks, no randomness, no dict-order tricks.
"""

import math
import os
import struct
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(v):
    """The value a float becomes after a round trip through float32."""
    return struct.unpack('<f', struct.pack('<f', v))[0]


def f32t(vals):
    return tuple(f32(v) for v in vals)


def g9(v):
    """Numbers in expect lines: %.9g, and |v| < 5e-10 written as 0."""
    if abs(v) < 5e-10:
        return '0'
    return '%.9g' % v


# --- constants (docs/formats/homeworld.md section 1) --------------------------

MAGIC = b'Mellonn\x00'
VERSION_BYTES = bytes.fromhex('c3f5683f')            # 0.91f
VERSION_091 = struct.unpack('<f', VERSION_BYTES)[0]
assert VERSION_091 == f32(0.91)
MAX_ANIMS = 32
MAF_LOOP = 0x1
CH = ('x', 'y', 'z', 'h', 'p', 'b')
ARRAYS = ('times', 'tcb') + CH                       # LWExport write order
HEADER_FIELDS = [(0, 8, 'identifier'), (8, 4, 'version'),
                 (12, 4, 'stringBlockLength'), (16, 4, 'stringBlock'),
                 (20, 4, 'length'), (24, 4, 'framesPerSecond'),
                 (28, 4, 'nObjects'), (32, 4, 'objPath'),
                 (36, 4, 'nAnimations')]
HDR_FMT = '<8sfiIffiIi'                              # 40 bytes
ANIM_FMT = '<IffI'                                   # 16 bytes
OBJ_FMT = '<IHBBIiII6I'                              # 48 bytes
assert struct.calcsize(HDR_FMT) == 40
assert struct.calcsize(ANIM_FMT) == 16
assert struct.calcsize(OBJ_FMT) == 48


# --- the model (shared by the description and the Parser's result) -----------

class M:
    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, ', '.join(
            '%s=%r' % kv for kv in sorted(vars(self).items())))


class Anim(M):
    def __init__(self, name, start, end, flags):
        self.name, self.start, self.end, self.flags = \
            name, f32(start), f32(end), flags


class Obj(M):
    """One madobjpath. times/tcb/ch hold all n keys (phantoms included)."""

    def __init__(self, name, bits, times, tcb, ch, crc=0, pad=(0, 0)):
        self.name, self.bits = name, bits
        self.times = f32t(times)
        self.tcb = tuple(f32t(k) for k in tcb)
        self.ch = tuple(f32t(c) for c in ch)
        self.crc, self.pad = crc, tuple(pad)
        n = len(self.times)
        assert len(self.tcb) == n and len(self.ch) == 6
        assert all(len(c) == n for c in self.ch)

    @property
    def n(self):
        return len(self.times)


class Mad(M):
    def __init__(self, version, fps, length, anims, objs):
        self.version, self.fps, self.length = f32(version), f32(fps), \
            f32(length)
        self.anims, self.objs = list(anims), list(objs)


def lw_mad(fps, anims, objs, version=VERSION_091):
    """A description built with LWExport's conventions
    (docs/formats/homeworld.md section 1).

    anims: [(name, start_frame, end_frame, flags)]  (times = frame/fps, f32)
    objs:  [dict(name, frames, x, y, z, h, p, b [, tcb] [, force_bits])]
           h, p, b given in LightWave degrees, stored as degrees*pi/180.
    Phantom first key = copy of key 0 with time -1.0; phantom last key = copy
    of the last real key with time = endTime of the LAST animation in file
    order + 1.0. Bit a is set when the object has keys at exactly that
    animation's start and end frames (plus force_bits).
    """
    A = [Anim(nm, f32(sf / fps), f32(ef / fps), fl)
         for nm, sf, ef, fl in anims]
    last_end = A[-1].end
    O = []
    for o in objs:
        frames = o['frames']
        N = len(frames)
        real_t = [f32(fr / fps) for fr in frames]
        times = [-1.0] + real_t + [f32(last_end + 1.0)]
        ch = []
        for c in CH:
            vals = list(o[c])
            assert len(vals) == N, (o['name'], c)
            if c in ('h', 'p', 'b'):
                vals = [v * math.pi / 180.0 for v in vals]
            vals = [f32(v) for v in vals]
            ch.append([vals[0]] + vals + [vals[-1]])
        tcb = list(o.get('tcb', [(0.0, 0.0, 0.0)] * N))
        tcb = [tcb[0]] + tcb + [tcb[-1]]
        bits = 0
        for a, (nm, sf, ef, fl) in enumerate(anims):
            if sf in frames and ef in frames:
                bits |= 1 << a
        bits |= o.get('force_bits', 0)
        O.append(Obj(o['name'], bits, times, tcb, ch))
    length = f32(sum(a.end - a.start for a in A))
    return Mad(version, fps, length, A, O)


# --- the writer ----------------------------------------------------------------

def lw_plan(nobj):
    """LWExport's contiguous layout: records, then each object's 8 arrays."""
    return [('objs',)] + [('arr', j, a) for j in range(nobj)
                          for a in ARRAYS] + [('sb',)]


def pack_mad(m, plan=None, sb_order=None):
    """Pack a description. Returns (bytes, marks); marks = field offsets."""
    nA, nO = len(m.anims), len(m.objs)
    if sb_order is None:
        sb_order = [('anim', a) for a in range(nA)] + \
                   [('obj', j) for j in range(nO)]
    assert sorted(sb_order) == sorted([('anim', a) for a in range(nA)] +
                                      [('obj', j) for j in range(nO)])
    sb = bytearray()
    name_off = {}
    for key in sb_order:
        name = m.anims[key[1]].name if key[0] == 'anim' else \
            m.objs[key[1]].name
        name_off[key] = len(sb)
        sb += name.encode('latin-1') + b'\x00'
    if plan is None:
        plan = lw_plan(nO)

    buf = bytearray(40)                      # header: packed at the end
    marks = {}
    for a, an in enumerate(m.anims):         # madanimation[] always at 40
        marks[('anim', a)] = len(buf)
        buf += struct.pack(ANIM_FMT, name_off[('anim', a)], an.start, an.end,
                           an.flags)
    objpath = sbpos = None
    for item in plan:
        if item[0] == 'objs':
            objpath = len(buf)
            buf += bytes(48 * nO)            # records: packed below
        elif item[0] == 'pad':
            buf += bytes(item[1])
        elif item[0] == 'sb':
            sbpos = len(buf)
            buf += sb
        elif item[0] == 'arr':
            j, arr = item[1], item[2]
            o = m.objs[j]
            marks[('arr', j, arr)] = len(buf)
            if arr == 'times':
                for t in o.times:
                    buf += struct.pack('<f', t)
            elif arr == 'tcb':
                for T, C, B in o.tcb:
                    buf += struct.pack('<fff', T, C, B)
            else:
                for v in o.ch[CH.index(arr)]:
                    buf += struct.pack('<f', v)
        else:
            raise ValueError(item)
    assert objpath is not None and sbpos is not None
    for j, o in enumerate(m.objs):
        off = objpath + 48 * j
        marks[('obj', j)] = off
        struct.pack_into(OBJ_FMT, buf, off, name_off[('obj', j)], o.crc,
                         o.pad[0], o.pad[1], o.bits, o.n,
                         marks[('arr', j, 'times')], marks[('arr', j, 'tcb')],
                         *[marks[('arr', j, c)] for c in CH])
    struct.pack_into(HDR_FMT, buf, 0, MAGIC, m.version, len(sb), sbpos,
                     m.length, m.fps, nO, objpath, nA)
    marks['objPath'] = objpath
    marks['stringBlock'] = sbpos
    return bytes(buf), marks


def patch_u32(data, off, value):
    b = bytearray(data)
    struct.pack_into('<I', b, off, value & 0xFFFFFFFF)
    return bytes(b)


def pack_hw2():
    """A small Homeworld 2 style IFF .mad: FORM <size BE> 'MAD ' NAME VERS."""
    name = b'Homeworld2 MAD File\x00'
    body = b'MAD '
    body += b'NAME' + struct.pack('>I', len(name)) + name
    body += b'VERS' + struct.pack('>I', 4) + struct.pack('>I', 1)
    return b'FORM' + struct.pack('>I', len(body)) + body


# --- the Parser ----------------------------------------------------------------

class Fail(Exception):
    def __init__(self, offset, msg):
        Exception.__init__(self, 'offset %d: %s' % (offset, msg))
        self.offset, self.msg = offset, msg


class NotDetected(Fail):
    pass


def parse_bytes(data):
    """Parse a .mad through its stored offsets. Returns (Mad, info).

    Raises NotDetected (a Homeworld 2 IFF file) or Fail(offset) following
    RULES.md "Refused files", in this order: size < 40, identifier, counts,
    the three header extents, then animation records in order (name, start,
    end), then object records in order (name, nKeyframes, array extents
    times/parameters/x..b, non-finite floats in the order times, parameters,
    x..b, each in key order, then real key times that decrease).
    """
    size = len(data)
    if size >= 11 and data[0:4] == b'FORM' and data[8:11] == b'MAD':
        raise NotDetected(0, 'Homeworld 2 .mad (IFF FORM/MAD): not a '
                             'Homeworld (1999) .mad')
    if size < 40:
        for off, ln, nm in HEADER_FIELDS:
            if off + ln > size:
                raise Fail(off, 'file has %d bytes: header field %s does '
                                'not fit' % (size, nm))
    if data[0:8] != MAGIC:
        raise Fail(0, 'identifier is not "Mellonn\\0"')

    def u32(off):
        return struct.unpack_from('<I', data, off)[0]

    def s32(off):
        return struct.unpack_from('<i', data, off)[0]

    def fl(off):
        return struct.unpack_from('<f', data, off)[0]

    info = {'size': size, 'warnings': [], 'anim_rec': [], 'obj_rec': []}
    warn = info['warnings'].append
    version = fl(8)
    sbl, sbo, length, fps = s32(12), u32(16), fl(20), fl(24)
    nO, objpath, nA = s32(28), u32(32), s32(36)
    info.update(version_raw=data[8:12], sbl=sbl, sbo=sbo, objpath=objpath)
    if data[8:12] != VERSION_BYTES:
        warn('version %.9g (bytes %s) is not 0.91f' %
             (version, data[8:12].hex()))
    if sbl < 0:
        raise Fail(12, 'stringBlockLength < 0')
    if nO < 0:
        raise Fail(28, 'nObjects < 0')
    if nA < 0 or nA > MAX_ANIMS:
        raise Fail(36, 'nAnimations %d not in 0..32' % nA)
    if 40 + 16 * nA > size:
        raise Fail(36, 'animation records run past the end')
    if sbo + sbl > size:
        raise Fail(16, 'string block runs past the end')
    if objpath + 48 * nO > size:
        raise Fail(32, 'object records run past the end')
    if not math.isfinite(fps) or fps <= 0:
        warn('framesPerSecond %.9g: using 30' % fps)
    block = data[sbo:sbo + sbl]

    def name_at(field):
        off = u32(field)
        if off >= sbl:
            raise Fail(field, 'name offset %d >= stringBlockLength %d' %
                       (off, sbl))
        end = block.find(b'\x00', off)
        if end < 0:
            raise Fail(field, 'name at %d has no NUL before the end of the '
                              'string block' % off)
        return block[off:end].decode('latin-1'), off

    anims = []
    for a in range(nA):
        r = 40 + 16 * a
        name, noff = name_at(r)
        st, en, flags = fl(r + 4), fl(r + 8), u32(r + 12)
        if not math.isfinite(st):
            raise Fail(r + 4, 'startTime not finite')
        if not math.isfinite(en):
            raise Fail(r + 8, 'endTime not finite')
        if en < st:
            raise Fail(r + 8, 'endTime < startTime')
        anims.append(Anim(name, st, en, flags))
        info['anim_rec'].append({'off': r, 'name_off': noff})

    objs = []
    for j in range(nO):
        r = objpath + 48 * j
        name, noff = name_at(r)
        crc = struct.unpack_from('<H', data, r + 4)[0]
        pad = (data[r + 6], data[r + 7])
        bits, n = u32(r + 8), s32(r + 12)
        if n < 0:
            raise Fail(r + 12, 'nKeyframes < 0')
        toff, poff = u32(r + 16), u32(r + 20)
        coff = [u32(r + 24 + 4 * c) for c in range(6)]
        if toff + 4 * n > size:
            raise Fail(r + 16, 'times array outside the file')
        if poff + 12 * n > size:
            raise Fail(r + 20, 'parameters array outside the file')
        for c in range(6):
            if coff[c] + 4 * n > size:
                raise Fail(r + 24 + 4 * c, 'path[%d] (%s) array outside the '
                           'file' % (c, CH[c]))

        def floats(base, count, what):
            out = []
            for k in range(count):
                v = fl(base + 4 * k)
                if not math.isfinite(v):
                    raise Fail(base + 4 * k, '%s[%d] not finite' % (what, k))
                out.append(v)
            return out

        times = floats(toff, n, 'times')
        par = floats(poff, 3 * n, 'parameters')
        tcb = [tuple(par[3 * k:3 * k + 3]) for k in range(n)]
        ch = [floats(coff[c], n, CH[c]) for c in range(6)]
        for k in range(2, n - 1):
            if times[k] < times[k - 1]:
                raise Fail(toff + 4 * k, 'real key time %d decreases' % k)
        for k in range(2, n - 1):
            if times[k] == times[k - 1]:
                warn('object %d: keys %d and %d share time %.9g (step)' %
                     (j, k - 1, k, times[k]))
        if (bits >> nA) if nA < 32 else 0:
            warn('object %d: animationBits 0x%08X has bits >= nAnimations' %
                 (j, bits))
        objs.append(Obj(name, bits, times, tcb, ch, crc, pad))
        info['obj_rec'].append({'off': r, 'name_off': noff, 'times': toff,
                                'tcb': poff, 'path': coff})
    m = Mad(version, fps, length, anims, objs)
    info['canonical'] = is_canonical(data, m, info)
    return m, info


def is_canonical(data, m, info):
    """LWExport's contiguous layout, nothing else (expect-canonical)."""
    nA, nO = len(m.anims), len(m.objs)
    if info['version_raw'] != VERSION_BYTES:
        return 0
    if info['objpath'] != 40 + 16 * nA:
        return 0
    cur = info['objpath'] + 48 * nO
    for o, rec in zip(m.objs, info['obj_rec']):
        n = o.n
        if rec['times'] != cur or rec['tcb'] != cur + 4 * n:
            return 0
        for c in range(6):
            if rec['path'][c] != cur + 16 * n + 4 * c * n:
                return 0
        if o.crc != 0 or o.pad != (0, 0):
            return 0
        cur += 40 * n
    if info['sbo'] != cur or cur + info['sbl'] != len(data):
        return 0
    sb = bytearray()
    for an, rec in zip(m.anims, info['anim_rec']):
        if rec['name_off'] != len(sb):
            return 0
        sb += an.name.encode('latin-1') + b'\x00'
    for o, rec in zip(m.objs, info['obj_rec']):
        if rec['name_off'] != len(sb):
            return 0
        sb += o.name.encode('latin-1') + b'\x00'
    return 1 if bytes(sb) == data[cur:] else 0


# --- the reference evaluator (RULES.md) ----------------------------------------

ADJ_FALLBACKS = []          # (object name, tau, which) seen by the evaluator


def segment(times, tau):
    """RULES: i = the largest index in [1, n-3] with t_i <= tau."""
    n = len(times)
    i = 1
    for k in range(1, n - 2):
        if times[k] <= tau:
            i = k
    return i


def channel_at(o, c, tau):
    P, t, n = o.ch[c], o.times, o.n
    if n == 0:
        return 0.0
    if n == 1:
        return P[0]
    if n < 4:
        return P[1]
    if tau < t[1]:
        return P[1]
    if tau >= t[n - 2]:
        return P[n - 2]
    i = segment(t, tau)
    s = (tau - t[i]) / (t[i + 1] - t[i])
    d0 = t[i + 1] - t[i - 1]
    d1 = t[i + 2] - t[i]
    adj0 = (t[i + 1] - t[i]) / d0 if d0 > 0 else 0.5
    adj1 = (t[i + 1] - t[i]) / d1 if d1 > 0 else 0.5
    if d0 <= 0:
        ADJ_FALLBACKS.append((o.name, tau, 'adj0'))
    if d1 <= 0:
        ADJ_FALLBACKS.append((o.name, tau, 'adj1'))
    Ti, Ci, Bi = o.tcb[i]
    Tj, Cj, Bj = o.tcb[i + 1]
    out = adj0 * ((1 - Ti) * (1 + Ci) * (1 + Bi) * (P[i] - P[i - 1]) +
                  (1 - Ti) * (1 - Ci) * (1 - Bi) * (P[i + 1] - P[i]))
    inn = adj1 * ((1 - Tj) * (1 - Cj) * (1 + Bj) * (P[i + 1] - P[i]) +
                  (1 - Tj) * (1 + Cj) * (1 - Bj) * (P[i + 2] - P[i + 1]))
    h00 = 2 * s ** 3 - 3 * s ** 2 + 1
    h01 = -2 * s ** 3 + 3 * s ** 2
    h10 = s ** 3 - 2 * s ** 2 + s
    h11 = s ** 3 - s ** 2
    return h00 * P[i] + h01 * P[i + 1] + h10 * out + h11 * inn


def channels_at(o, tau):
    return [channel_at(o, c, tau) for c in range(6)]


def rest_channels(o):
    """RULES: the local transform at tau = t_1 (n < 4: the constants)."""
    if o.n < 2:
        return channels_at(o, 0.0)
    return channels_at(o, o.times[1])


def rot_closed(h, p, b):
    ch, sh, cp, sp, cb, sb = (math.cos(h), math.sin(h), math.cos(p),
                              math.sin(p), math.cos(b), math.sin(b))
    return [[cp * cb, -sp, -cp * sb],
            [ch * sp * cb + sh * sb, ch * cp, sh * cb - ch * sp * sb],
            [ch * sb - sh * sp * cb, -sh * cp, ch * cb + sh * sp * sb]]


def m3mul(A, B):
    return [[sum(A[r][k] * B[k][c] for k in range(3)) for c in range(3)]
            for r in range(3)]


def m_rx(a):
    c, s = math.cos(a), math.sin(a)
    return [[1, 0, 0], [0, c, -s], [0, s, c]]


def m_ry(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, 0, s], [0, 1, 0], [-s, 0, c]]


def m_rz(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def rot_product(h, p, b):
    return m3mul(m3mul(m_rx(-h), m_rz(p)), m_ry(-b))


def q_axis(axis, a):
    s = math.sin(a / 2)
    return (math.cos(a / 2), axis[0] * s, axis[1] * s, axis[2] * s)


def q_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def q_matrix(q):
    w, x, y, z = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def rot_quat(h, p, b):
    q = q_mul(q_mul(q_axis((1, 0, 0), -h), q_axis((0, 0, 1), p)),
              q_axis((0, 1, 0), -b))
    return q_matrix(q)


def rodrigues(v, a):
    """Right-handed rotation by a about the unit vector v (column vectors)."""
    c, s = math.cos(a), math.sin(a)
    x, y, z = v
    return [[c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
            [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
            [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)]]


def rot_game(h, p, b):
    """nisObjectEulerToMatrix (docs/formats/homeworld.md section 3): from I,
    about X by -h, about the current 3rd column by +p, about the current 2nd
    column by -b."""
    M = m3mul(rodrigues((1, 0, 0), -h), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    col3 = [M[r][2] for r in range(3)]
    M = m3mul(rodrigues(col3, p), M)
    col2 = [M[r][1] for r in range(3)]
    return m3mul(rodrigues(col2, -b), M)


ROT_CHECKS = [0]


def rotation(h, p, b):
    R = rot_closed(h, p, b)
    for other in (rot_product(h, p, b), rot_quat(h, p, b),
                  rot_game(h, p, b)):
        err = max(abs(R[r][c] - other[r][c]) for r in range(3)
                  for c in range(3))
        assert err < 1e-12, ('rotation cross-check', h, p, b, err)
    ROT_CHECKS[0] += 1
    return R


ROOT = [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]  # Rz(+90)


def m4mul(A, B):
    return [[sum(A[r][k] * B[k][c] for k in range(4)) for c in range(4)]
            for r in range(4)]


def local_matrix(vals):
    x, y, z, h, p, b = vals
    R = rotation(h, p, b)
    T = (y, z, -x)
    return [R[0] + [T[0]], R[1] + [T[1]], R[2] + [T[2]], [0, 0, 0, 1]]


def world_of(vals):
    return m4mul(ROOT, local_matrix(vals))


def mat_str(Mx):
    return ','.join(g9(Mx[r][c]) for r in range(4) for c in range(4))


def node_names(m):
    """RULES: RootNode, then one node per object; empty -> object<j>;
    a used name gets #2, #3, ..."""
    used = {'RootNode'}
    names = []
    for j, o in enumerate(m.objs):
        base = o.name if o.name != '' else 'object%d' % j
        name, k = base, 1
        while name in used:
            k += 1
            name = '%s#%d' % (base, k)
        used.add(name)
        names.append(name)
    return names


def participates(m, j, a):
    return bool(m.objs[j].bits >> a & 1) if a < len(m.anims) else False


def pose_world(m, a, t, node):
    """World matrix of node in animation a at t (seconds from start)."""
    an = m.anims[a]
    D = an.end - an.start
    assert 0 <= t <= D, (a, t, D)
    if node == 'RootNode':
        return [row[:] for row in ROOT]
    j = node_names(m).index(node)
    if participates(m, j, a):
        return world_of(channels_at(m.objs[j], an.start + t))
    return world_of(rest_channels(m.objs[j]))


def anim_channels(m, a):
    k = sum(1 for j in range(len(m.objs)) if participates(m, j, a))
    return k if k else 1


def expect_lines(m, info, poses):
    L = ['expect-format homeworld_mad',
         'expect-canonical %d' % info['canonical'],
         'expect-nodes %d' % (1 + len(m.objs)),
         'expect-animations %d' % len(m.anims)]
    for a, an in enumerate(m.anims):
        L.append('expect-anim index=%d duration=%s loop=%d channels=%d '
                 'name=%s' % (a, '%.9g' % (an.end - an.start),
                              an.flags & MAF_LOOP, anim_channels(m, a),
                              an.name))
    names = node_names(m)
    for j, o in enumerate(m.objs):
        L.append('expect-rest node=%s world=%s' %
                 (names[j], mat_str(world_of(rest_channels(o)))))
    for a, ts, nodes in poses:
        for ts_ in ts:
            for node in nodes:
                L.append('expect-pose anim=%d t=%s node=%s world=%s' %
                         (a, ts_, node,
                          mat_str(pose_world(m, a, float(ts_), node))))
    return L


# --- fixture descriptions ------------------------------------------------------

def one_object():
    return lw_mad(30.0, [('Open', 0, 30, 0)], [dict(
        name='Hatch', frames=[0, 10, 20, 30],
        x=[0.5, 1.5, 2.0, 2.25], y=[-0.25, 0.25, 1.0, 2.0],
        z=[0.125, -0.5, -1.25, -1.5], h=[5, 30, 60, 90],
        p=[-5, -10, 15, 20], b=[10, 5, -20, -10])])


def timeline():
    return lw_mad(30.0, [('IdleLoop', 0, 30, 1), ('Open', 45, 90, 0),
                         ('SpinLoop', 105, 150, 1)], [
        dict(name='Door1', frames=[0, 15, 30, 45, 70, 90],
             x=[0, 0.2, 0, 0.5, 1.6, 2.0], y=[0, 0.05, 0, 0, 0.1, 0.3],
             z=[1, 1, 1, 1.2, 1.5, 1.5], h=[0, 3, 0, 10, 75, 90],
             p=[0, 0, 0, -5, 10, 0], b=[0, -2, 0, 0, 5, 8]),
        dict(name='Door2', frames=[45, 60, 90, 105, 127, 150],
             x=[0, -0.25, -1.5, -1.2, -0.9, -1.2],
             y=[0.5, 0.5, 0.75, 0.5, 0.6, 0.5],
             z=[1, 1.1, 1.5, 1.2, 1.0, 1.2], h=[-5, -20, -90, -80, -100, -80],
             p=[0, 5, 0, 10, -10, 10], b=[0, 0, 15, 0, 20, 0]),
        dict(name='Turret', frames=[0, 30, 105, 120, 135, 150],
             x=[0.5, 0.5, 0.6, 0.7, 0.6, 0.5], y=[-1, -1, -1, -1, -1, -1],
             z=[0, 0.1, 0, 0.2, 0.4, 0.2], h=[0, 0, 0, 120, 240, 360],
             p=[0, 12, 0, 0, 0, 0], b=[0, 0, 0, 10, -10, 0]),
        dict(name='Antenna', frames=[45, 60, 90],
             x=[0, 0, 0.05], y=[2, 2.25, 2.5], z=[0.3, 0.3, 0.3],
             h=[15, 15, 20], p=[0, 45, 90], b=[0, 0, 0])])


def tcb():
    return lw_mad(30.0, [('Wobble Loop', 0, 60, 1)], [
        dict(name='Arm', frames=[0, 12, 27, 36, 51, 60],
             tcb=[(0, 0, 0), (-1, 0.5, 0.75), (0.5, -0.5, -0.75),
                  (1, 0, 0), (0.25, 0.5, -0.75), (0, -0.5, 0.75)],
             x=[0, 1, -0.5, 2, 1.5, 0], y=[0, 0.5, 1.25, 1, -0.25, 0],
             z=[0, -1, -0.75, 0.5, 0.25, 0], h=[0, 20, -15, 40, 10, 0],
             p=[0, -10, 25, 5, -20, 0], b=[0, 15, 30, -10, 5, 0]),
        dict(name='Hub', frames=[6, 54],
             tcb=[(0.3, -0.2, 0.1), (0.3, -0.2, 0.1)],
             x=[1, 1.5], y=[0, 0.25], z=[-2, -2], h=[10, 30], p=[0, 5],
             b=[-5, 5])])


def spin():
    return lw_mad(30.0, [('Rotate', 0, 60, 1)], [
        dict(name='Rotor', frames=[0, 20, 40, 60],
             x=[0, 0.1, 0.2, 0.3], y=[1, 1, 1, 1], z=[0, 0, 0, 0],
             h=[0, 270, 540, 720], p=[0, 15, -15, 0],
             b=[0, -180, -360, -540]),
        dict(name='Prop', frames=[0, 30, 60],
             x=[0, 0, 0], y=[0, 0, 0], z=[2, 2, 2],
             h=[0, 900, 1800], p=[0, 0, 0], b=[0, 30, 0]),
        dict(name='Mast', frames=[10, 50],
             x=[0, 0], y=[3, 3.5], z=[0, 0], h=[0, 0], p=[10, 20],
             b=[0, 0])])


def window_cut():
    return lw_mad(30.0, [('Cut', 7.5, 48.75, 0), ('FullLoop', 0, 60, 1)], [
        dict(name='Blade', frames=[0, 15, 30, 45, 60],
             x=[0, 1, 1.5, 0.5, 0], y=[0, 0.5, -0.5, 0.25, 0],
             z=[0, 0.25, 0.5, 0.75, 0], h=[0, 45, 90, 135, 0],
             p=[0, 10, -10, 10, 0], b=[0, -30, 30, -30, 0], force_bits=1),
        dict(name='Guard', frames=[0, 30, 60],
             x=[1, 1.25, 1], y=[0, 0, 0], z=[0.5, 0.5, 0.5],
             h=[0, 0, 0], p=[0, 20, 0], b=[5, 5, 5])])


def out_of_order():
    return lw_mad(30.0, [('Late', 120, 180, 0), ('Mid', 75, 105, 0),
                         ('Early', 0, 60, 0)], [
        dict(name='Flap', frames=[0, 60, 120, 150, 180],
             x=[0, 1, 1, 2, 3], y=[0, 0.5, 0, -0.5, 0],
             z=[0, 0, 0.25, 0.5, 1], h=[0, 30, 30, 60, 90],
             p=[0, 5, 0, -5, 0], b=[0, 0, 10, 20, 40]),
        dict(name='Hinge', frames=[0, 60, 75, 105],
             x=[0, 0.5, 0.5, 1.5], y=[0, 0, 0.25, 1], z=[1, 1, 1, 0.5],
             h=[0, 10, 10, 80], p=[0, 0, 5, 25], b=[0, 0, 0, -15]),
        dict(name='Rod', frames=[120, 180],
             x=[0, 2], y=[1, 0], z=[0, 0.5], h=[0, 60], p=[0, -30],
             b=[0, 45]),
        dict(name='Plate', frames=[30, 90],
             x=[-1, -1], y=[0.5, 0.75], z=[0, 0], h=[90, 80], p=[0, 0],
             b=[0, 0])])


LAYOUT_OBJS = ['WingL', 'WingR', 'Gun']


def layout():
    return lw_mad(30.0, [('Fold', 0, 30, 0), ('Sweep Loop', 30, 90, 1)], [
        dict(name='WingL', frames=[0, 15, 30, 60, 90],
             x=[0, 0.1, 0.3, 0.2, 0.3], y=[1, 1.2, 1.5, 1.4, 1.5],
             z=[0, 0, -0.5, -0.25, -0.5], h=[0, 20, 45, 30, 45],
             p=[0, -5, -10, 0, -10], b=[0, 30, 60, 45, 60]),
        dict(name='WingR', frames=[0, 30],
             x=[0.05, 0.3], y=[-1, -1.5], z=[0, -0.5], h=[-5, -45],
             p=[3, 10], b=[-8, -60]),
        dict(name='Gun', frames=[30, 50, 90],
             x=[2, 2.5, 2], y=[0, 0, 0], z=[0, 0.25, 0], h=[0, 0, 0],
             p=[0, 35, 0], b=[0, 0, 0])],
        version=1.0)


def layout_plan():
    """Not LWExport's layout: arrays first, interleaved across objects in the
    reverse channel order with 4 zero bytes after each channel group; then the
    object records, 8 zero bytes, the string block (object names first)."""
    plan = []
    for arr in reversed(ARRAYS):
        for j in (2, 0, 1):
            plan.append(('arr', j, arr))
        plan.append(('pad', 4))
    plan += [('objs',), ('pad', 8), ('sb',)]
    sb_order = [('obj', 1), ('obj', 0), ('obj', 2), ('anim', 1), ('anim', 0)]
    return plan, sb_order


def short():
    """Edge cases, hand-made (not LWExport): n = 0, 1, 3; a step; names."""
    def obj(name, bits, times, vals, tcb=None):
        n = len(times)
        tcb = tcb or [(0.0, 0.0, 0.0)] * n
        ch = [[v[c] for v in vals] for c in range(6)]
        return Obj(name, bits, times, tcb, ch)
    r = math.pi / 180
    objs = [
        obj('Gear', 0x1, [], []),
        obj('', 0x1, [0.5], [(0.5, 1.0, -1.5, 10 * r, 20 * r, 30 * r)]),
        obj('Gear', 0x1, [-1.0, 0.5, 4.0],
            [(9, 9, 9, 0, 0, 0), (1.0, -2.0, 0.5, -30 * r, 15 * r, 45 * r),
             (7, 7, 7, 1, 1, 1)]),
        obj('RootNode', 0x5, [-1.0, 0.0, 1.0, 1.0, 2.0, 4.0],
            [(0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0),
             (1.0, 0.5, 0, 20 * r, 0, 0), (2.0, 1.5, 0.5, 60 * r, 10 * r, 0),
             (2.5, 2.0, 1.0, 90 * r, 0, 5 * r),
             (2.5, 2.0, 1.0, 90 * r, 0, 5 * r)]),
        obj('Gear', 0x80000005, [-1.0, 0.25, 0.75, 2.0, 4.0],
            [(0.25, 0, 0, 0, 10 * r, 0), (0.25, 0, 0, 0, 10 * r, 0),
             (-0.5, 0.25, 0.75, 0, -40 * r, 10 * r),
             (-1.0, 0.0, 1.5, 0, -60 * r, 0),
             (-1.0, 0.0, 1.5, 0, -60 * r, 0)]),
    ]
    anims = [Anim('Run', 0.0, 2.0, 0), Anim('Nobody', 2.0, 3.0, 1),
             Anim('Tail', 1.5, 3.5, 0)]
    return Mad(VERSION_091, 0.0, 5.0, anims, objs)


def kt(frame, fps, start_frame):
    """A pose time at a key: f32(frame/fps) - f32(start/fps), as %.9g."""
    return '%.9g' % (f32(frame / fps) - f32(start_frame / fps))


VALID = [
    ('one_object.mad', one_object, None),
    ('timeline.mad', timeline, None),
    ('tcb.mad', tcb, None),
    ('spin.mad', spin, None),
    ('window_cut.mad', window_cut, None),
    ('out_of_order.mad', out_of_order, None),
    ('layout.mad', layout, layout_plan),
    ('short.mad', short, None),
]

# Pose requests: file -> [(anim index, [t strings], [node names])]
POSES = {
    'one_object.mad': [
        (0, ['0', '0.1291', kt(10, 30, 0), '0.4137', kt(20, 30, 0),
             '0.7713', '0.9527', '1'], ['Hatch']),
        (0, ['0.4137'], ['RootNode'])],
    'timeline.mad': [
        (0, ['0', '0.1291', '0.4137', kt(15, 30, 0), '0.7713', '1'],
         ['Door1', 'Turret', 'Door2', 'Antenna']),
        (1, ['0', '0.19365', kt(60, 30, 45), '0.62055', kt(70, 30, 45),
             '1.15695', '1.5'], ['Door1', 'Door2', 'Antenna', 'Turret']),
        (2, ['0', '0.19365', kt(120, 30, 105), '0.62055', kt(127, 30, 105),
             kt(135, 30, 105), '1.15695', '1.5'],
         ['Door2', 'Turret', 'Door1', 'Antenna'])],
    'tcb.mad': [
        (0, ['0', '0.2582', kt(12, 30, 0), '0.8274', kt(27, 30, 0),
             kt(36, 30, 0), '1.5426', kt(51, 30, 0), '1.89', '2'],
         ['Arm', 'Hub'])],
    'spin.mad': [
        (0, ['0', '0.2582', kt(20, 30, 0), '0.8274', '1', '1.5426', '1.89',
             '2'], ['Rotor', 'Prop', 'Mast'])],
    'window_cut.mad': [
        (0, ['0', '0.1775', '0.5688', '0.75', '1.0605', '1.375'],
         ['Blade', 'Guard']),
        (1, ['0', '0.2582', '0.5', '0.8274', '1.5426', '2'],
         ['Blade', 'Guard'])],
    'out_of_order.mad': [
        (0, ['0', '0.2582', '0.8274', '1', '1.5426', '1.89', '2'],
         ['Flap', 'Rod', 'Hinge', 'Plate']),
        (1, ['0', '0.1291', '0.4137', '0.7713', '0.9527', '1'],
         ['Hinge', 'Flap', 'Rod', 'Plate']),
        (2, ['0', '0.2582', '0.8274', '1.5426', '2'],
         ['Flap', 'Hinge', 'Rod', 'Plate'])],
    'layout.mad': [
        (0, ['0', '0.1291', '0.4137', kt(15, 30, 0), '0.7713', '1'],
         ['WingL', 'WingR', 'Gun']),
        (1, ['0', '0.2582', kt(50, 30, 30), '0.8274', '1', '1.5426', '2'],
         ['WingL', 'Gun', 'WingR'])],
    'short.mad': [
        (0, ['0', '0.1291', '0.6', '0.8274', '1.5426', '1.89', '2'],
         ['Gear', 'object1', 'Gear#2', 'RootNode#2', 'Gear#3']),
        (0, ['0.6'], ['RootNode']),
        (1, ['0', '0.4137', '0.7713', '1'],
         ['RootNode', 'Gear', 'object1', 'Gear#2', 'RootNode#2',
          'Gear#3']),
        (2, ['0', '0.2582', '0.8274', '1.5426', '2'],
         ['RootNode#2', 'Gear#3', 'Gear', 'object1', 'Gear#2'])],
}

# Hand-worked poses: file -> [(anim, t string, node, channel worked in full,
# note)]
HAND = {
    'one_object.mad': [(0, '0.4137', 'Hatch', 'x',
                        'TCB 0: out = adj0*(P_3 - P_1), in = adj1*(P_4 - P_2) '
                        '(Catmull-Rom with time ratios).')],
    'timeline.mad': [(0, '0.7713', 'Door1', 'x',
                      'P_4 = 0.5 is Door1\'s key at frame 45 (the start of '
                      'Open, outside IdleLoop): the tangent "in" at the end '
                      'of IdleLoop depends on it (a still frame would need '
                      'P_4 = P_3 = 0).')],
    'tcb.mad': [(0, '0.8274', 'Arm', 'y',
                 'Key 2 (frame 12) has T = -1, C = 0.5, B = 0.75: the weights '
                 'of "out" are (1-T)(1+C)(1+B) = 5.25 and (1-T)(1-C)(1-B) = '
                 '0.25; key 3 (frame 27) has T = 0.5, C = -0.5, B = -0.75.')],
    'spin.mad': [(0, '0.8274', 'Rotor', 'h',
                  'No wrapping: h runs through 2*pi on its way to 4*pi.')],
    'window_cut.mad': [(0, '0', 'Blade', 'x',
                        'Cut starts at 0.25 s, in the middle of the segment '
                        '[0, 0.5]: the full spline is evaluated there.')],
    'out_of_order.mad': [(0, '0.2582', 'Rod', 'x',
                          'Rod\'s phantom last time 3 (Early\'s end + 1) is '
                          'before t_1 = 4: the adj1 denominator is -1, the '
                          'ratio falls back to 0.5 (RULES).'),
                         (1, '0.7713', 'Hinge', 'h',
                          'Hinge\'s last segment [2.5, 3.5] ends after the '
                          'phantom time 3: adj1 = 1/0.5 = 2, four times the '
                          'usual 0.5; kept as the game computes it.')],
    'layout.mad': [(1, '0.8274', 'Gun', 'p',
                    'Read through the stored offsets: Gun\'s p array is at '
                    'the offset in its record, between other objects\' '
                    'arrays.')],
    'short.mad': [(0, '0.6', 'RootNode#2', 'x',
                   'The step at 1 s (keys 2 and 3 share time 1) makes adj1 '
                   '= (t_2 - t_1)/(t_3 - t_1) = 1/1 here.'),
                  (0, '0.6', 'Gear#2', 'x', None)],
}

# Broken files: (file, base, kind, how) ; kind 'prefix' keeps N bytes,
# kind 'u32' patches the u32 at marks[key] (+ delta) with a value.
BROKEN = [
    'truncated.mad', 'too_many_anims.mad', 'bad_array.mad', 'bad_name.mad',
    'unterminated.mad', 'nan_key.mad', 'bad_times.mad', 'bad_window.mad',
    'neg_keys.mad']


BROKEN_SUMMARY = {
    'truncated.mad': 'the first 30 bytes of one_object.mad',
    'too_many_anims.mad': 'nAnimations = 33',
    'bad_array.mad': 'Turret\'s x array offset = the file size',
    'bad_name.mad': 'Door2\'s name offset = stringBlockLength',
    'unterminated.mad': 'the string block\'s final NUL replaced by "X"',
    'nan_key.mad': 'a NaN in Hatch\'s h array',
    'bad_times.mad': 'a real key time smaller than the one before',
    'bad_window.mad': 'endTime < startTime in animation "Open"',
    'neg_keys.mad': 'nKeyframes = -1',
}


def make_broken(valid_bytes, valid_marks, valid_models):
    """Returns {file: (bytes, base file, offset, value, old, expected error
    offset, description)}."""
    out = {}
    one, om = valid_bytes['one_object.mad'], valid_marks['one_object.mad']
    tl, tm = valid_bytes['timeline.mad'], valid_marks['timeline.mad']
    tc, tcm = valid_bytes['tcb.mad'], valid_marks['tcb.mad']

    def u32(data, off):
        return struct.unpack_from('<I', data, off)[0]

    def patch(fname, base, data, off, value, err, what):
        out[fname] = (patch_u32(data, off, value), base, off, value,
                      u32(data, off), err, what)

    out['truncated.mad'] = (one[:30], 'one_object.mad', None, None, None, 28,
                            'the first 30 bytes of one_object.mad')
    patch('too_many_anims.mad', 'one_object.mad', one, 36, 33, 36,
          'nAnimations (u32 at 36) = 33')
    j = 2                                         # Turret
    off = tm[('obj', j)] + 24
    patch('bad_array.mad', 'timeline.mad', tl, off, len(tl), off,
          'object %d (Turret) path[0] (x) offset = %d, the file size '
          '(an array of %d floats there ends past the end)'
          % (j, len(tl), valid_models['timeline.mad'].objs[j].n))
    sbl = struct.unpack_from('<i', tl, 12)[0]
    off = tm[('obj', 1)]
    patch('bad_name.mad', 'timeline.mad', tl, off, sbl, off,
          'object 1 (Door2) name offset = %d = stringBlockLength' % sbl)
    # unterminated: the final NUL of tcb.mad's string block -> 'X'
    assert len(tc) % 4 == 0 and tc[-1] == 0
    word = len(tc) - 4
    new = bytearray(tc[word:word + 4])
    new[3] = ord('X')
    last_obj = len(valid_models['tcb.mad'].objs) - 1
    off = tcm[('obj', last_obj)]
    patch('unterminated.mad', 'tcb.mad', tc, word,
          struct.unpack('<I', bytes(new))[0], off,
          'the last byte of the file (the string block\'s final NUL, '
          'in the u32 at %d) = 0x58 \'X\': the last name "%s" has no NUL; '
          'error at object %d\'s name field'
          % (word, valid_models['tcb.mad'].objs[last_obj].name, last_obj))
    off = om[('arr', 0, 'h')] + 4 * 2
    patch('nan_key.mad', 'one_object.mad', one, off, 0x7FC00000, off,
          'Hatch h[2] (float at %d) = 0x7FC00000 (quiet NaN)' % off)
    off = om[('arr', 0, 'times')] + 4 * 3
    patch('bad_times.mad', 'one_object.mad', one, off,
          struct.unpack('<I', struct.pack('<f', 0.2))[0], off,
          'Hatch times[3] (float at %d, real key 3 of 4, was 20/30) = 0.2f, '
          'smaller than times[2] = 10/30' % off)
    off = tm[('anim', 1)] + 8
    patch('bad_window.mad', 'timeline.mad', tl, off,
          struct.unpack('<I', struct.pack('<f', 1.0))[0], off,
          'animation 1 (Open) endTime (float at %d) = 1.0, startTime 1.5'
          % off)
    off = om[('obj', 0)] + 12
    patch('neg_keys.mad', 'one_object.mad', one, off, -1, off,
          'Hatch nKeyframes (s32 at %d) = -1' % off)
    assert sorted(out) == sorted(BROKEN)
    return out


def one_u32_diff(base, bad):
    """'prefix', or the offset of the single aligned u32 that differs."""
    if len(bad) < len(base):
        assert base[:len(bad)] == bad
        return 'prefix'
    assert len(bad) == len(base)
    words = sorted({i // 4 for i in range(len(base)) if base[i] != bad[i]})
    assert len(words) == 1, words
    return 4 * words[0]


# --- pose-request and hand-work checks ---------------------------------------

def key_times_of(m, a):
    out = []
    for j, o in enumerate(m.objs):
        if participates(m, j, a) and o.n >= 4:
            out += list(o.times[1:o.n - 1])
    return out


def steps_of(m, a):
    out = []
    for j, o in enumerate(m.objs):
        if participates(m, j, a):
            for k in range(2, o.n - 1):
                if o.times[k] == o.times[k - 1]:
                    out.append(o.times[k])
    return out


def check_poses(fname, m):
    names = node_names(m)
    reqs = {}
    for a, ts, nodes in POSES[fname]:
        reqs.setdefault(a, ([], []))
        reqs[a][0].extend(t for t in ts if t not in reqs[a][0])
        reqs[a][1].extend(nd for nd in nodes if nd not in reqs[a][1])
    assert sorted(reqs) == list(range(len(m.anims))), fname
    for a in sorted(reqs):
        ts = sorted(reqs[a][0], key=float)
        nodes = reqs[a][1]
        an = m.anims[a]
        D = an.end - an.start
        assert float('%.9g' % D) == D, (fname, a, 'D must print exactly')
        assert ts[0] == '0' and float(ts[-1]) == D, (fname, a)
        inner = 0
        keys = key_times_of(m, a)
        for s in ts:
            assert s == '%.9g' % float(s), (fname, s)
            t = float(s)
            assert 0 <= t <= D, (fname, a, s)
            tau = an.start + t
            for st in steps_of(m, a):
                assert abs(tau - st) > 1e-3, (fname, a, s, 'near a step')
            if 0 < t < D:
                off_grid = all(abs(v * 60 - round(v * 60)) > 0.05
                               for v in (t, tau))
                off_key = all(abs(tau - k) > 1e-3 for k in keys)
                if off_grid and off_key:
                    inner += 1
        assert inner >= 2, (fname, a, 'needs 2 interior off-grid times')
        for nd in nodes:
            assert nd == 'RootNode' or nd in names, (fname, nd)
        nonpart = [names[j] for j in range(len(m.objs))
                   if not participates(m, j, a)]
        if nonpart:
            assert any(nd in nonpart for nd in nodes), (fname, a)
        if any(participates(m, j, a) for j in range(len(m.objs))):
            assert any(nd in names and participates(m, names.index(nd), a)
                       for nd in nodes), (fname, a)


# --- .txt writing --------------------------------------------------------------

def wrap(text, indent=''):
    out = []
    for para in text.strip('\n').split('\n\n'):
        if para.startswith(' '):
            out += para.split('\n')
        else:
            out += textwrap.wrap(' '.join(para.split()), 78,
                                 initial_indent=indent,
                                 subsequent_indent=indent)
        out.append('')
    return out


def fl_list(vals):
    return '[' + ', '.join('%.9g' % v for v in vals) + ']'


def decoded_fields(data, m, info):
    def u32(off):
        return struct.unpack_from('<I', data, off)[0]

    def fl(off):
        return struct.unpack_from('<f', data, off)[0]

    L = ['Decoded fields (offset decimal, hex; read back from the written '
         'bytes by the Parser):']

    def row(off, field, value):
        L.append('%6d 0x%04X  %-22s %s' % (off, off, field, value))
    row(0, 'identifier', repr(data[0:8].decode('latin-1')))
    row(8, 'version', '%.9g (bytes %s)' % (fl(8), data[8:12].hex(' ')))
    row(12, 'stringBlockLength', '%d' % info['sbl'])
    row(16, 'stringBlock', '%d' % info['sbo'])
    row(20, 'length', '%.9g' % fl(20))
    row(24, 'framesPerSecond', '%.9g' % fl(24))
    row(28, 'nObjects', '%d' % len(m.objs))
    row(32, 'objPath', '%d' % info['objpath'])
    row(36, 'nAnimations', '%d' % len(m.anims))
    for a, (an, rec) in enumerate(zip(m.anims, info['anim_rec'])):
        r = rec['off']
        row(r, 'anim[%d].name' % a, '%d -> "%s"' % (rec['name_off'], an.name))
        row(r + 4, 'anim[%d].startTime' % a, '%.9g' % an.start)
        row(r + 8, 'anim[%d].endTime' % a, '%.9g' % an.end)
        row(r + 12, 'anim[%d].flags' % a, '0x%X%s' %
            (an.flags, ' (loop)' if an.flags & 1 else ''))
    for j, (o, rec) in enumerate(zip(m.objs, info['obj_rec'])):
        r = rec['off']
        row(r, 'obj[%d].name' % j, '%d -> "%s"' % (rec['name_off'], o.name))
        row(r + 4, 'obj[%d].nameCRC, pad' % j, '%d, %d %d' %
            (o.crc, o.pad[0], o.pad[1]))
        row(r + 8, 'obj[%d].animationBits' % j, '0x%08X' % o.bits)
        row(r + 12, 'obj[%d].nKeyframes' % j, '%d' % o.n)
        row(r + 16, 'obj[%d].times' % j, '%d' % rec['times'])
        row(r + 20, 'obj[%d].parameters' % j, '%d' % rec['tcb'])
        row(r + 24, 'obj[%d].path[x..b]' % j,
            ' '.join('%d' % v for v in rec['path']))
    for j, (o, rec) in enumerate(zip(m.objs, info['obj_rec'])):
        if o.n == 0:
            L.append('        obj[%d] "%s": no keys (arrays of 0 bytes at '
                     'the offsets above)' % (j, o.name))
            continue
        row(rec['times'], 'obj[%d] times' % j, fl_list(o.times))
        row(rec['tcb'], 'obj[%d] tcb (T,C,B)' % j, ' '.join(
            '(%s)' % ','.join('%.9g' % v for v in k) for k in o.tcb))
        for c in range(6):
            row(rec['path'][c], 'obj[%d] %s' % (j, CH[c]), fl_list(o.ch[c]))
    sb = data[info['sbo']:info['sbo'] + info['sbl']]
    row(info['sbo'], 'string block', repr(sb.decode('latin-1')))
    L.append('File size %d bytes.' % len(data))
    return L


def hand_work(m, a, ts, node, wch):
    """A worked example, closed form, separate from the evaluator: the cubic
    in power basis v(s) = P_i + out*s + (3D - 2out - in)*s^2 +
    (out + in - 2D)*s^3 (D = P_{i+1} - P_i). Returns (lines, checks);
    checks = [(row, col, value)] of the world matrix."""
    an = m.anims[a]
    t = float(ts)
    tau = an.start + t
    names = node_names(m)
    j = names.index(node)
    o = m.objs[j]
    n = o.n
    part = participates(m, j, a)
    L = ['Pose anim=%d "%s" t=%s, node %s (object %d, n = %d keys, bit %d '
         '%s):' % (a, an.name, ts, node, j, n, a,
                   'set' if part else 'clear')]
    tau_eval = tau if part else (o.times[1] if n >= 2 else 0.0)
    if part:
        L.append('  tau = startTime + t = %.9g + %s = %.9g s.' %
                 (an.start, ts, tau))
    else:
        L.append('  not taking part: rest pose (tau = t_1).')
    vals = []
    for c in range(6):
        P, T = o.ch[c], o.times
        full = (CH[c] == wch)
        detailed = False
        if n == 0:
            v = 0.0
            txt = 'n = 0: 0'
        elif n == 1:
            v = P[0]
            txt = 'n = 1: key 0 = %.9g' % v
        elif n < 4:
            v = P[1]
            txt = 'n = %d < 4: constant key 1 = %.9g (keys 0 and 2 are '\
                  '%.9g, %.9g, not used)' % (n, v, P[0], P[2])
        elif tau_eval < T[1]:
            v = P[1]
            txt = 'tau < t_1: key 1 = %.9g' % v
        elif tau_eval >= T[n - 2]:
            v = P[n - 2]
            txt = 'tau >= t_%d: key %d = %.9g' % (n - 2, n - 2, v)
        else:
            i = max(k for k in range(1, n - 2) if T[k] <= tau_eval)
            s = (tau_eval - T[i]) / (T[i + 1] - T[i])
            dt = T[i + 1] - T[i]
            d0, d1 = T[i + 1] - T[i - 1], T[i + 2] - T[i]
            a0 = dt / d0 if d0 > 0 else 0.5
            a1 = dt / d1 if d1 > 0 else 0.5
            (Ti, Ci, Bi), (Tj, Cj, Bj) = o.tcb[i], o.tcb[i + 1]
            g_prev, g_cur = P[i] - P[i - 1], P[i + 1] - P[i]
            g_next = P[i + 2] - P[i + 1]
            wa, wb = (1 - Ti) * (1 + Ci) * (1 + Bi), (1 - Ti) * (1 - Ci) * \
                (1 - Bi)
            wc, wd = (1 - Tj) * (1 - Cj) * (1 + Bj), (1 - Tj) * (1 + Cj) * \
                (1 - Bj)
            out = a0 * (wa * g_prev + wb * g_cur)
            inn = a1 * (wc * g_cur + wd * g_next)
            cb = 3 * g_cur - 2 * out - inn
            ca = out + inn - 2 * g_cur
            v = P[i] + s * (out + s * (cb + s * ca))
            txt = 'segment i = %d, s = %.9g: v = %.9g' % (i, s, v)
            if full:
                detailed = True
                L.append('  Channel %s in full:' % CH[c])
                L.append('    t_%d..t_%d = %s; P_%d..P_%d = %s' % (
                    i - 1, i + 2, fl_list(T[i - 1:i + 3]), i - 1, i + 2,
                    fl_list(P[i - 1:i + 3])))
                L.append('    i = %d (t_%d <= tau < t_%d), s = (tau - t_%d)/'
                         '(t_%d - t_%d) = %.9g' % (i, i, i + 1, i, i + 1, i, s))
                L.append('    adj0 = (t_%d - t_%d)/(t_%d - t_%d) = %.9g/%.9g'
                         ' = %.9g%s' % (i + 1, i, i + 1, i - 1, dt, d0, a0,
                                        '' if d0 > 0 else
                                        ' -> denominator <= 0: 0.5'))
                L.append('    adj1 = (t_%d - t_%d)/(t_%d - t_%d) = %.9g/%.9g'
                         ' = %.9g%s' % (i + 1, i, i + 2, i, dt, d1,
                                        dt / d1 if d1 else float('inf'),
                                        '' if d1 > 0 else
                                        ' -> denominator <= 0: 0.5'))
                L.append('    (T,C,B)_%d = (%.9g, %.9g, %.9g), (T,C,B)_%d = '
                         '(%.9g, %.9g, %.9g)' % (i, Ti, Ci, Bi, i + 1, Tj, Cj,
                                                 Bj))
                L.append('    out = adj0*[%.9g*(%.9g) + %.9g*(%.9g)] = %.9g' %
                         (wa, g_prev, wb, g_cur, out))
                L.append('    in  = adj1*[%.9g*(%.9g) + %.9g*(%.9g)] = %.9g' %
                         (wc, g_cur, wd, g_next, inn))
                L.append('    v(s) = P_i + out*s + (3D - 2out - in)*s^2 + '
                         '(out + in - 2D)*s^3, D = P_%d - P_%d = %.9g' %
                         (i + 1, i, g_cur))
                L.append('         = %.9g + %.9g*s + %.9g*s^2 + %.9g*s^3 = '
                         '%.9g' % (P[i], out, cb, ca, v))
                if CH[c] in 'hpb':
                    L.append('         (%.9g degrees)' % math.degrees(v))
        if not detailed:
            L.append('  %s: %s' % (CH[c], txt))
        vals.append(v)
    x, y, z, h, p, b = vals
    checks = [(0, 3, -z), (1, 3, y), (2, 3, -x), (1, 1, -math.sin(p)),
              (2, 1, -math.sin(h) * math.cos(p)),
              (1, 0, math.cos(p) * math.cos(b))]
    L.append('  World = Rz(+90)*[R|T], T = (y, z, -x): translation column '
             '(m03, m13, m23) = (-z, y, -x)')
    L.append('    = (%s, %s, %s)' % (g9(-z), g9(y), g9(-x)))
    L.append('  Row 1 of World = row 0 of R: m11 = -sin p = %s, m10 = cos p*'
             'cos b = %s;' % (g9(-math.sin(p)), g9(math.cos(p) * math.cos(b))))
    L.append('  row 2 of World = row 2 of R: m21 = -sin h*cos p = %s.' %
             g9(-math.sin(h) * math.cos(p)))
    L.append('  These match the expect-pose line anim=%d t=%s node=%s.' %
             (a, ts, node))
    return L, checks


PROSE = {
    'one_object.mad': dict(
        summary='one object "Hatch", one non-looping animation "Open", '
                '4 keys, TCB 0',
        made='''make_fixtures.py, one_object() packed by pack_mad() in
LWExport's contiguous layout (docs/formats/homeworld.md section 1).
framesPerSecond 30. One animation
"Open", frames 0..30 (startTime 0, endTime 1), flags 0. One object "Hatch"
with LightWave keys at frames 0, 10, 20, 30 (times f32(frame/30)), all
(T,C,B) = 0; the file holds 6 keys: phantom key 0 (copy of frame 0, time
-1), the 4 real keys, phantom key 5 (copy of frame 30, time = endTime of
the last animation + 1 = 2). x, y, z raw; h, p, b = LightWave degrees x
pi/180: h 5, 30, 60, 90; p -5, -10, 15, 20; b 10, 5, -20, -10. Every
channel moves. animationBits 0x1 (keys at frames 0 and 30). length = 1.''',
        covers='''The basic case: header, one animation record, one object
record, the 8 contiguous arrays, the string block ("Open", then "Hatch").
The TCB-0 spline is Catmull-Rom-like with the time ratios adj0/adj1 and the
phantom keys' zero first difference at both ends; poses at the window ends,
at the interior keys (10/30, 20/30 as float32) and off the 1/60 s grid.
RootNode is Rz(+90). It is also the base of truncated, too_many_anims,
nan_key, bad_times and neg_keys.'''),
    'timeline.mad': dict(
        summary='four objects, three animations on one timeline (two loops, '
                'one non-loop), neighbour-dependent tangents',
        made='''make_fixtures.py, timeline() in LWExport's layout, fps 30.
Animations in time order: 0 "IdleLoop" frames 0-30 (0..1 s, flags 1),
1 "Open" frames 45-90 (1.5..3 s, flags 0), 2 "SpinLoop" frames 105-150
(3.5..5 s, flags 1). Phantom last key time = 5 + 1 = 6 for every object.
Objects: Door1 keys at frames 0, 15, 30, 45, 70, 90 (bits 0x3: IdleLoop,
Open); Door2 keys 45, 60, 90, 105, 127, 150 (bits 0x6: Open, SpinLoop);
Turret keys 0, 30, 105, 120, 135, 150 (bits 0x5: IdleLoop, SpinLoop; h 0,
120, 240, 360 degrees over SpinLoop); Antenna keys 45, 60, 90 (bits 0x2:
Open only). Bits follow the exporter's rule: keys at exactly the start and
end frame. No still frames at the window edges.''',
        covers='''One long spline per object with animations as windows on
it (docs/formats/homeworld.md section 4). The window borders are not still
frames, so the tangents
there depend on keys outside the window: Door1's tangent at the end of
IdleLoop (frame 30) uses its Open key at frame 45 (x 0.5), and its tangent
at the start of Open uses the IdleLoop key at 30; Door2's tangent at the
end of Open (90) uses its SpinLoop key at 105; Turret's IdleLoop segment
(0..1 s) reaches to its key at 3.5 s. Non-participants are at rest:
Antenna in IdleLoop and SpinLoop (the looping kind), Door2 in IdleLoop,
Turret in Open, Door1 in SpinLoop. Loop flags 1, 0, 1. Poses at keys inside
windows (frames 15, 60, 70, 120, 127, 135) and off-grid times. Base of
bad_array, bad_name and bad_window.'''),
    'tcb.mad': dict(
        summary='non-zero tension, continuity and bias per key, one looping '
                'animation "Wobble Loop"',
        made='''make_fixtures.py, tcb() in LWExport's layout, fps 30. One
animation "Wobble Loop" (a name with a space) frames 0-60 (0..2 s), flags 1.
Object "Arm": keys at frames 0, 12, 27, 36, 51, 60 (uneven spacing) with
(T,C,B) = (0,0,0), (-1,0.5,0.75), (0.5,-0.5,-0.75), (1,0,0),
(0.25,0.5,-0.75), (0,-0.5,0.75); the phantom keys copy the first and last
(T,C,B). All six channels move and return to 0 at frame 60. Object "Hub":
keys at frames 6 and 54 only (T,C,B = 0.3, -0.2, 0.1), so it does not take
part (bits 0) and stays at rest (its key at frame 6).''',
        covers='''The full Kochanek-Bartels weights of RULES: tension -1
(doubled tangents), 0.5, and 1 (zero tangents at frame 36), continuity
+-0.5, bias +-0.75, all per key and with unequal time ratios adj0/adj1.
Poses at every interior key, at the ends and off-grid. A non-participating
object at rest. The string block is 20 bytes (file size a multiple of 4):
base of unterminated.'''),
    'spin.mad': dict(
        summary='angles past 2*pi (h to 4*pi, b to -3*pi, 10*pi), loop',
        made='''make_fixtures.py, spin() in LWExport's layout, fps 30. One
animation "Rotate" frames 0-60 (0..2 s), flags 1. "Rotor": keys at 0, 20,
40, 60 with h 0, 270, 540, 720 degrees (to 4*pi), b 0, -180, -360, -540
(to -3*pi), p 0, 15, -15, 0, x 0..0.3. "Prop": keys 0, 30, 60 with h 0,
900, 1800 degrees (to 10*pi) and b 0, 30, 0. "Mast": keys 10, 50 only: not
taking part (rest).''',
        covers='''Angles are plain floats interpolated without wrapping
(RULES, docs/formats/homeworld.md section 2): a key 4*pi away is two full
turns, not zero. The float32
values of 4*pi etc. are not exact multiples of pi, so the end pose is not
exactly the identity rotation. Loop flag; a rest node.'''),
    'window_cut.mad': dict(
        summary='an animation window that starts and ends between keys, '
                'plus a normal loop',
        made='''make_fixtures.py, window_cut() in LWExport's layout, fps 30.
Animation 0 "Cut": startTime 0.25, endTime 1.625 (frames 7.5 and 48.75;
exactly representable), flags 0; animation 1 "FullLoop" frames 0-60
(0..2 s), flags 1. The phantom last time is FullLoop's end + 1 = 3.
"Blade": keys at frames 0, 15, 30, 45, 60 (times 0, 0.5, 1, 1.5, 2); it has
keys at FullLoop's ends (bit 1) and none at Cut's ends, but bit 0 is set
anyway (bits 0x3). "Guard": keys 0, 30, 60, bit 1 only (rest in Cut).''',
        covers='''RULES: a window whose start or end is not a key time of a
participating object is played on the full spline all the same (the game
would abort in debug builds; retroanim warns). Cut's pose at t = 0 is Blade
at tau = 0.25, in the middle of segment [0, 0.5], and at t = D at
tau = 1.625 in segment [1.5, 2]. FullLoop is the normal case on the same
spline.'''),
    'out_of_order.mad': dict(
        summary='animations not in time order: the phantom last key time is '
                'earlier than the last real keys',
        made='''make_fixtures.py, out_of_order() in LWExport's layout, fps 30.
Animation records in file order: 0 "Late" frames 120-180 (4..6 s), 1 "Mid"
frames 75-105 (2.5..3.5 s), 2 "Early" frames 0-60 (0..2 s), all flags 0.
The exporter writes the phantom last time = endTime of the LAST record
(Early) + 1 = 3 s, earlier than the real keys at 3.5..6 s. Objects: Flap
keys 0, 60, 120, 150, 180 (bits 0x5: Late, Early); Hinge keys 0, 60, 75,
105 (bits 0x6: Mid, Early); Rod keys 120, 180 (bits 0x1: Late); Plate keys
30, 90 (bits 0: rest everywhere).''',
        covers='''The out-of-order rule (docs/formats/homeworld.md sections 1
and 2) and the RULES guard:
Flap's last segment [5, 6] has adj1 denominator t_6 - t_4 = 3 - 5 = -2 and
Rod's only segment [4, 6] has t_3 - t_1 = 3 - 4 = -1: both use the ratio
0.5 instead. Hinge's last segment [2.5, 3.5] has a positive but small
denominator t_5 - t_3 = 3 - 2.5 = 0.5, so adj1 = 1/0.5 = 2 (the game's real,
exaggerated tangent, kept). Rod's adj0 is 2/7 (the phantom at -1). Records
out of time order; length = 5.'''),
    'layout.mad': dict(
        summary='not the LWExport layout: records after the arrays, '
                'interleaved arrays with padding, version 1.0',
        made='''make_fixtures.py, layout() packed by pack_mad() with the plan
of layout_plan() (like a hand-made Mad_Editor file). After the header and
the 2 animation records (at 40, as always): the key arrays in the order b,
p, h, z, y, x, tcb, times, each for the objects Gun, WingL, WingR in turn,
with 4 zero bytes after each group of three; then the 3 object records
(objPath after the arrays); then 8 zero bytes; then the string block with
the names in the order WingR, WingL, Gun, "Sweep Loop", Fold (object names
first); the block is still the last stringBlockLength bytes. version = 1.0
(not 0.91f: a warning only). fps 30. Animations 0 "Fold" frames 0-30,
flags 0; 1 "Sweep Loop" frames 30-90, flags 1. WingL keys 0, 15, 30, 60, 90
(bits 0x3), WingR keys 0, 30 (0x1), Gun keys 30, 50, 90 (0x2).''',
        covers='''Reading through the stored offsets (objPath, times,
parameters, path[6], name offsets), never through the contiguous
assumption of the x86-64 converter. expect-canonical 0. A version warning.
Windows sharing a border key (frame 30).'''),
    'short.mad': dict(
        summary='edge cases: n = 0, 1, 3, a step, names (duplicates, empty, '
                'RootNode), fps 0, an empty animation, a high bit',
        made='''make_fixtures.py, short(): hand-made object records (not
exporter output) in the contiguous layout. framesPerSecond 0 (-> 30,
warning). Animations: 0 "Run" 0..2 s flags 0; 1 "Nobody" 2..3 s flags 1,
which no object takes part in; 2 "Tail" 1.5..3.5 s flags 0. Objects:
0 "Gear" n = 0 (arrays of 0 bytes; bits 0x1); 1 "" n = 1 (time 0.5; bits
0x1); 2 "Gear" n = 3 (key 1 differs from keys 0 and 2; bits 0x1);
3 "RootNode" n = 6 with real key times 0, 1, 1, 2 (a step at 1 s; bits 0x5:
Run, Tail); 4 "Gear" n = 5, real keys 0.25, 0.75, 2, bits 0x80000005 (Run,
Tail, and bit 31 >= nAnimations). length = 5.''',
        covers='''RULES: n = 0 -> all channels 0 (identity local); n = 1 ->
key 0; n = 2 or 3 -> key 1, constant; a step (two equal real times, warning;
no pose within 1e-3 s of it); node names: the second and third "Gear" become
"Gear#2" and "Gear#3", the empty name "object1", "RootNode" "RootNode#2";
fps 0 -> 30 (only the tick rate; all expect values are in seconds); an
animation with no participant (channels=1, the RootNode constant channel;
every object at rest); bit 31 ignored (warning); the clamps of RULES:
Run at t < 0.25 is before Gear#3's first real key (tau < t_1 -> key 1),
Tail past 2 s is after the last real keys (tau >= t_(n-2) -> key n-2). The layout is LWExport's
(expect-canonical 1); a byte-exact writer must keep the stored names, the
fps 0 and the hand-made phantom values.'''),
}


def write_valid_txt(fname, data, m, info, lines):
    p = PROSE[fname]
    L = ['%s -- %s (%d bytes)' % (fname, p['summary'], len(data)), '']
    L += wrap('How it was made: ' + p['made'])
    L += wrap('What it covers: ' + p['covers'])
    L += wrap('''Every file is little-endian: header 40 bytes, madanimation
16 bytes, madobjpath 48 bytes, per-object arrays times f32[n], tcb 12n, x,
y, z, h, p, b f32[n] (h, p, b in radians), string block of NUL-terminated
names. Node names: %s.''' % ', '.join(['RootNode'] + node_names(m)))
    if info['warnings']:
        L.append('Warnings the rules call for:')
        L += ['  - ' + w for w in info['warnings']]
        L.append('')
    L += decoded_fields(data, m, info)
    L.append('')
    L.append('Hand-worked example(s) (closed form, power basis of the cubic; '
             'make_fixtures.py checks every number against the evaluator):')
    for a, ts, node, wch, note in HAND[fname]:
        hl, _ = hand_work(m, a, ts, node, wch)
        L += hl
        if note:
            L += wrap('Note: ' + note, '  ')[:-1]
    L.append('')
    L.append('Matrices: world 4x4 row-major, column vectors (translation in '
             'm03, m13, m23), RootNode = Rz(+90). Numbers %.9g, |v| < 5e-10 '
             'written 0.')
    L.append('')
    L += lines
    return '\n'.join(L) + '\n'


def write_broken_txt(fname, data, base, base_len, off, value, old, err, what,
                     msg):
    L = []
    if base is None:
        L.append('%s -- not Homeworld (1999): a Homeworld 2 IFF .mad (%d '
                 'bytes)' % (fname, len(data)))
        L.append('')
        L += wrap('''How it was made: make_fixtures.py, pack_hw2(): "FORM",
big-endian u32 size %d, "MAD ", a NAME chunk (size 20, "Homeworld2 MAD
File" + NUL) and a VERS chunk (size 4, big-endian 1).''' % (len(data) - 8))
        L += wrap('''What it covers: the name clash of docs/formats/homeworld.md
section 6. RULES: a file
with bytes 0..3 "FORM" and 8..10 "MAD" is not detected at all (and refused
with a message naming Homeworld 2); its identifier is not "Mellonn\\0", so
an explicit load attempt fails at offset 0.''')
        L.append('Read back: bytes 0..11 = %r.' % data[:12])
        L.append('Parser: %s' % msg)
        L.append('')
        L += ['expect-not-detected', 'expect-error-offset 0']
        return '\n'.join(L) + '\n'
    L.append('%s -- broken: %s (%d bytes)' % (fname, BROKEN_SUMMARY[fname],
                                               len(data)))
    L.append('')
    if off is None:
        L += wrap('How it was made: make_fixtures.py keeps the first %d '
                  'bytes of %s (%d bytes); a prefix of it.' %
                  (len(data), base, base_len))
        L += wrap('What it must decode to: nothing. RULES: fewer than 40 '
                  'bytes -> the first header field that does not fit '
                  'entirely: nObjects at 28..31 (the file ends at 30).')
    else:
        L += wrap('How it was made: make_fixtures.py takes %s and changes '
                  'exactly one u32, at offset %d (0x%X): 0x%08X -> 0x%08X. '
                  '%s.' % (base, off, off, old, value & 0xFFFFFFFF, what))
        L += wrap('What it must decode to: nothing; the file is refused at '
                  'offset %d (RULES "Refused files"). Everything before '
                  'that field is valid.' % err)
        L.append('Read back: u32 at %d = 0x%08X.' % (
            off, struct.unpack_from('<I', data, off)[0]))
    L.append('Parser: %s' % msg)
    L.append('')
    L.append('expect-error-offset %d' % err)
    return '\n'.join(L) + '\n'


# --- main ----------------------------------------------------------------------

def stem_of(fname):
    return fname.rsplit('.', 1)[0]


def build_all():
    """Everything, in memory: {file: bytes}, {stem.txt: text}."""
    files, texts = {}, {}
    vbytes, vmarks, vmodels = {}, {}, {}
    for fname, fn, planfn in VALID:
        desc = fn()
        plan, sb_order = planfn() if planfn else (None, None)
        data, marks = pack_mad(desc, plan, sb_order)
        m, info = parse_bytes(data)
        assert m == desc, (fname, m, desc)
        # the Parser followed the stored offsets to where the writer wrote
        for j, rec in enumerate(info['obj_rec']):
            assert rec['off'] == marks[('obj', j)]
            assert rec['times'] == marks[('arr', j, 'times')]
            assert rec['tcb'] == marks[('arr', j, 'tcb')]
            assert rec['path'] == [marks[('arr', j, c)] for c in CH]
        assert info['sbo'] == marks['stringBlock'] == len(data) - info['sbl']
        assert info['canonical'] == (0 if fname == 'layout.mad' else 1), fname
        check_poses(fname, m)
        lines = expect_lines(m, info, POSES[fname])
        assert lines == expect_lines(desc, info, POSES[fname]), fname
        # hand-worked numbers vs the evaluator
        for a, ts, node, wch, _note in HAND[fname]:
            _, checks = hand_work(m, a, ts, node, wch)
            W = pose_world(m, a, float(ts), node)
            for r, c, v in checks:
                assert abs(W[r][c] - v) < 1e-12, (fname, node, r, c, v,
                                                  W[r][c])
            want = 'expect-pose anim=%d t=%s node=%s world=%s' % (
                a, ts, node, mat_str(W))
            assert want in lines, (fname, 'hand pose not among the poses')
        vbytes[fname], vmarks[fname], vmodels[fname] = data, marks, m
        files[fname] = data
        texts[stem_of(fname) + '.txt'] = write_valid_txt(fname, data, m, info,
                                                          lines)
    # fixture-specific sanity on the readings the files are meant to cover
    oo = vmodels['out_of_order.mad']
    assert oo.objs[0].times[-1] == 3.0 < oo.objs[0].times[-2]
    ADJ_FALLBACKS[:] = []
    channel_at(oo.objs[0], 0, 5.5)
    channel_at(oo.objs[2], 0, 5.0)
    assert [w for _, _, w in ADJ_FALLBACKS] == ['adj1', 'adj1']
    hinge = oo.objs[1]
    assert hinge.times[5] - hinge.times[3] == 0.5
    tl = vmodels['timeline.mad']
    assert tl.objs[0].ch[0][4] != tl.objs[0].ch[0][3]   # Door1 x 30 vs 45
    for fname, m in vmodels.items():                     # rest: t_1 < t_2
        for o in m.objs:
            if o.n >= 4:
                assert o.times[1] < o.times[2], fname

    broken = make_broken(vbytes, vmarks, vmodels)
    for fname in BROKEN:
        data, base, off, value, old, err, what = broken[fname]
        where = one_u32_diff(vbytes[base], data)
        assert where == ('prefix' if off is None else off), (fname, where)
        try:
            parse_bytes(data)
        except NotDetected:
            raise AssertionError(fname + ' not detected')
        except Fail as e:
            assert e.offset == err, (fname, e.offset, err, e.msg)
            msg = e.msg
        else:
            raise AssertionError(fname + ' parsed')
        files[fname] = data
        texts[stem_of(fname) + '.txt'] = write_broken_txt(
            fname, data, base, len(vbytes[base]), off, value, old, err, what,
            'refused at offset %d: %s' % (err, msg))
    hw2 = pack_hw2()
    try:
        parse_bytes(hw2)
    except NotDetected as e:
        assert e.offset == 0
        msg = e.msg
    else:
        raise AssertionError('homeworld2 detected')
    files['homeworld2.mad'] = hw2
    texts['homeworld2.txt'] = write_broken_txt(
        'homeworld2.mad', hw2, None, None, None, None, None, 0, None, msg)
    return files, texts


def main():
    files, texts = build_all()
    for name in sorted(files):
        with open(os.path.join(HERE, name), 'wb') as fh:
            fh.write(files[name])
    for name in sorted(texts):
        text = texts[name]
        with open(os.path.join(HERE, name), 'w', newline='\n') as fh:
            fh.write(text)
    print('wrote %d data files and %d .txt files (%d rotation cross-checks)'
          % (len(files), len(texts), ROT_CHECKS[0]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
