#!/usr/bin/env python3
"""Write the World of Goo anim / movie test fixtures, byte by byte, from the spec.

Source of truth: docs/formats/world_of_goo.md (in this repository)
  section 1   anim.binltl (BinImageAnimation) layout, the 220-byte rot_1rps example
  section 2   movie.binltl (BinMovie) layout, BinActor
  section 3   the variants: binltl64, binbig, binuni, the Mac .png.binltl image
  section 4   runtime semantics (channels, -1 sentinels, interpolation, looping)
plus the project's canonical writer layout and the evaluation rules given in
README.md ("Conventions").

This script uses nothing from the project. Every field is written with an
explicit struct.pack call by the layout code below (pack_anim, pack_movie).
The expect-* numbers come from the reference evaluator in this file, which
works on the in-memory description of each fixture. Before anything is
written, the script re-reads its own bytes with a separate small parser
(Parser: it only follows pointers, it never uses the writer's offsets), runs
the evaluator on what it parsed and requires the same expect lines; each
broken file must make that parser fail at the documented offset. The poses
are also recomputed by a second, closed-form evaluator.

Usage:  python3 make_fixtures.py      (writes the files into this folder)
        python3 expect.py --check     (re-reads the files, compares the .txt)

The output is deterministic: no clocks, no randomness, no dict-order tricks.
"""

import math
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

SCALE, ROTATE, TRANSLATE = 0, 1, 2
NONE, LINEAR = 0, 1
TYPE_KIND = {SCALE: 'scale', ROTATE: 'rotate', TRANSLATE: 'translate'}
KIND_TYPE = {v: k for k, v in TYPE_KIND.items()}
INTERP_NAME = {NONE: 'none', LINEAR: 'linear'}
JUST_NAME = {0: 'left', 1: 'center', 2: 'right'}


def f32val(v):
    """The value a float becomes after a round trip through float32."""
    return struct.unpack('<f', struct.pack('<f', v))[0]


def s32(v):
    """An unsigned 32-bit pattern (e.g. a colour 0xAARRGGBB) as a signed int."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


# --- layouts -----------------------------------------------------------------

class Layout:
    def __init__(self, name, endian, ptr, anim_magic=None, movie_magic=None):
        self.name = name
        self.e = endian                 # '<' or '>'
        self.ptr = ptr                  # pointer size, 4 or 8
        self.anim_magic = anim_magic
        self.movie_magic = movie_magic

    @property
    def anim_header(self):
        return len(self.anim_magic or b'') + 6 * 4 + 7 * self.ptr

    @property
    def movie_header(self):
        return len(self.movie_magic or b'') + 4 + 4 + 3 * self.ptr


LAYOUTS = {
    'binltl': Layout('binltl', '<', 4),
    'binbig': Layout('binbig', '>', 4),
    'binltl64': Layout('binltl64', '<', 8),
    'binuni': Layout('binuni', '<', 8, b'BINUNIAN', b'BINUNIMO'),
}
assert LAYOUTS['binltl'].anim_header == 0x34
assert LAYOUTS['binltl64'].anim_header == 0x50
assert LAYOUTS['binuni'].anim_header == 0x58
assert LAYOUTS['binltl'].movie_header == 0x14
assert LAYOUTS['binltl64'].movie_header == 0x20
assert LAYOUTS['binuni'].movie_header == 0x28


# --- primitive fields (explicit struct.pack, endianness from the layout) -------

def i32(L, v):
    return struct.pack(L.e + 'i', v)


def f32(L, v):
    return struct.pack(L.e + 'f', v)


def ptr(L, v):
    return struct.pack(L.e + ('I' if L.ptr == 4 else 'Q'), v)


def keyframe(L, x, y, angle, alpha, color, nxt, sidx, interp):
    """The 32-byte keyframe (docs/formats/world_of_goo.md section 1): f32 x,
    y, angle; i32 alpha, color, nextFrameIndex, soundStrIdx, interpolation."""
    return (struct.pack(L.e + 'f', x) + struct.pack(L.e + 'f', y)
            + struct.pack(L.e + 'f', angle) + struct.pack(L.e + 'i', alpha)
            + struct.pack(L.e + 'i', s32(color)) + struct.pack(L.e + 'i', nxt)
            + struct.pack(L.e + 'i', sidx) + struct.pack(L.e + 'i', interp))


def actor_record(L, typ, img, label, font, maxw, wrapw, just, depth):
    """The 32-byte BinActor (docs/formats/world_of_goo.md section 2)."""
    return (struct.pack(L.e + 'i', typ) + struct.pack(L.e + 'i', img)
            + struct.pack(L.e + 'i', label) + struct.pack(L.e + 'i', font)
            + struct.pack(L.e + 'f', maxw) + struct.pack(L.e + 'f', wrapw)
            + struct.pack(L.e + 'i', just) + struct.pack(L.e + 'f', depth))


def pad_to(n, m):
    return b'\0' * ((-n) % m)


# --- in-memory description of an animation ------------------------------------

class Chan:
    """One channel: kind in scale/rotate/translate/alpha/color/sound and its
    keys (slot, value, interpolation) in slot order. Values: (x, y) for
    scale/translate, angle (deg) for rotate, int for alpha, 0xAARRGGBB for
    color, the resource ID string for sound."""

    def __init__(self, kind, keys):
        self.kind = kind
        norm = []
        for slot, v, it in keys:
            if kind in ('scale', 'translate'):
                v = (f32val(v[0]), f32val(v[1]))
            elif kind == 'rotate':
                v = f32val(v)
            elif kind == 'color':
                v &= 0xFFFFFFFF
            norm.append((slot, v, it))
        norm.sort(key=lambda k: k[0])
        self.keys = norm

    def __eq__(self, other):
        return self.kind == other.kind and self.keys == other.keys


class Anim:
    def __init__(self, times, xforms, alpha=None, color=None, sound=None,
                 has_transform=1):
        self.times = [f32val(t) for t in times]
        self.xforms = xforms
        self.alpha, self.color, self.sound = alpha, color, sound
        self.has_color = 1 if color is not None else 0
        self.has_alpha = 1 if alpha is not None else 0
        self.has_sound = 1 if sound is not None else 0
        self.has_transform = has_transform

    def __eq__(self, o):
        return (self.times == o.times and self.xforms == o.xforms
                and self.alpha == o.alpha and self.color == o.color
                and self.sound == o.sound
                and self.has_transform == o.has_transform)


class Actor:
    def __init__(self, typ, image, label, font, just, maxw, wrapw, depth, anim):
        self.typ, self.image, self.label, self.font = typ, image, label, font
        self.just, self.maxw, self.wrapw = just, f32val(maxw), f32val(wrapw)
        self.depth, self.anim = f32val(depth), anim

    def __eq__(self, o):
        return all(getattr(self, k) == getattr(o, k) for k in
                   ('typ', 'image', 'label', 'font', 'just', 'maxw', 'wrapw',
                    'depth', 'anim'))


class Movie:
    def __init__(self, length, actors):
        self.length, self.actors = f32val(length), actors

    def __eq__(self, o):
        return self.length == o.length and self.actors == o.actors


# --- the anim writer (canonical layout) ---------------------------------------

def chan_list(anim):
    """(channel id, Chan) in keyframe order: transform 0, 1, ..., alpha,
    colour, sound."""
    out = [(('x', i), ch) for i, ch in enumerate(anim.xforms)]
    for cid in ('alpha', 'color', 'sound'):
        ch = getattr(anim, cid)
        if ch is not None:
            out.append((cid, ch))
    return out


def pack_anim(anim, L):
    """Return (bytes, rec). All offsets in rec are relative to the anim start
    A, which is also what every pointer stored in the anim is relative to."""
    nT, nF, P = len(anim.xforms), len(anim.times), L.ptr
    rec = {'hdr': {}, 'slotptr': {}, 'key': {}}
    # 1. positions
    pos = L.anim_header
    rec['types'] = pos
    pos += 4 * nT
    rec['times'] = pos
    pos += 4 * nF
    rec['pad64'] = (-pos) % 8 if P == 8 else 0
    pos += rec['pad64']
    rec['xff'] = pos
    pos += P * nT
    rec['xarr'] = []
    for _ in range(nT):
        rec['xarr'].append(pos)
        pos += P * nF
    for cid in ('alpha', 'color', 'sound'):
        rec[cid] = pos
        pos += P * nF
    strings = []
    if anim.sound is not None:
        for _, sid, _ in anim.sound.keys:
            if sid not in strings:
                strings.append(sid)
    table = b'\0'
    sidx = {}
    for s in strings:
        sidx[s] = len(table)
        table += s.encode('ascii') + b'\0'
    table += pad_to(len(table), 4)
    assert len(table) >= 4
    rec['strtab'] = pos
    rec['strtab_len'] = len(table)
    rec['sidx'] = sidx
    pos += len(table)
    for cid, ch in chan_list(anim):
        for slot, _, _ in ch.keys:
            rec['key'][(cid, slot)] = pos
            pos += 32
    rec['end'] = pos

    # 2. bytes
    out = bytearray()
    if L.anim_magic:
        out += L.anim_magic
    for name, v in (('hasColor', anim.has_color), ('hasAlpha', anim.has_alpha),
                    ('hasSound', anim.has_sound),
                    ('hasTransform', anim.has_transform),
                    ('numTransforms', nT), ('numFrames', nF)):
        rec['hdr'][name] = len(out)
        out += i32(L, v)
    for name, v in (('transformTypes', rec['types']),
                    ('frameTimes', rec['times']), ('xformFrames', rec['xff']),
                    ('alphaFrames', rec['alpha']),
                    ('colorFrames', rec['color']),
                    ('soundFrames', rec['sound']),
                    ('stringTable', rec['strtab'])):
        rec['hdr'][name] = len(out)
        out += ptr(L, v)
    assert len(out) == L.anim_header
    for ch in anim.xforms:
        out += i32(L, KIND_TYPE[ch.kind])
    for t in anim.times:
        out += f32(L, t)
    out += b'\0' * rec['pad64']
    assert len(out) == rec['xff']
    for a in rec['xarr']:
        out += ptr(L, a)

    def slot_array(cid, ch):
        used = {} if ch is None else {s: rec['key'][(cid, s)] for s, _, _ in ch.keys}
        for j in range(nF):
            rec['slotptr'][(cid, j)] = len(out)
            out.extend(ptr(L, used.get(j, 0)))

    for i, ch in enumerate(anim.xforms):
        assert len(out) == rec['xarr'][i]
        slot_array(('x', i), ch)
    for cid in ('alpha', 'color', 'sound'):
        assert len(out) == rec[cid]
        slot_array(cid, getattr(anim, cid))
    assert len(out) == rec['strtab']
    out += table
    for cid, ch in chan_list(anim):
        slots = [s for s, _, _ in ch.keys]
        for n, (slot, v, it) in enumerate(ch.keys):
            assert len(out) == rec['key'][(cid, slot)]
            nxt = slots[n + 1] if n + 1 < len(slots) else -1
            x = y = angle = -1.0
            alpha = color = -1
            si = 0
            if ch.kind in ('scale', 'translate'):
                x, y = v
            elif ch.kind == 'rotate':
                angle = v
            elif ch.kind == 'alpha':
                alpha = v
            elif ch.kind == 'color':
                color = v
            elif ch.kind == 'sound':
                si = sidx[v]
            out += keyframe(L, x, y, angle, alpha, color, nxt, si, it)
    assert len(out) == rec['end']
    return bytes(out), rec


def pack_movie(movie, L):
    """Return (bytes, rec); offsets in rec are absolute (from the file start =
    the movie magic in binuni)."""
    n, P = len(movie.actors), L.ptr
    rec = {'hdr': {}, 'anims': [], 'arecs': []}
    pos = L.movie_header
    rec['actors'] = pos
    pos += 32 * n
    rec['pp'] = pos
    pos += P * n
    table = b'\0'
    idx = {'': 0}
    for a in movie.actors:
        for s in (a.image, a.label, a.font):
            if s not in idx:
                idx[s] = len(table)
                table += s.encode('ascii') + b'\0'
    table += pad_to(len(table), 4)
    rec['strtab'] = pos
    rec['strtab_len'] = len(table)
    rec['sidx'] = idx
    pos += len(table)
    blobs = []
    for a in movie.actors:
        pad = (-pos) % 8 if P == 8 else 0
        pos += pad
        data, arec = pack_anim(a.anim, L)
        rec['anims'].append(pos)
        rec['arecs'].append(arec)
        blobs.append((pad, data))
        pos += len(data)
    rec['end'] = pos

    out = bytearray()
    if L.movie_magic:
        out += L.movie_magic
    rec['hdr']['length'] = len(out)
    out += f32(L, movie.length)
    rec['hdr']['numActors'] = len(out)
    out += i32(L, n)
    for name, v in (('pActors', rec['actors']), ('ppAnims', rec['pp']),
                    ('pStringTable', rec['strtab'])):
        rec['hdr'][name] = len(out)
        out += ptr(L, v)
    assert len(out) == L.movie_header == rec['actors']
    for a in movie.actors:
        out += actor_record(L, a.typ, idx[a.image], idx[a.label], idx[a.font],
                            a.maxw, a.wrapw, a.just, a.depth)
    assert len(out) == rec['pp']
    for p in rec['anims']:
        out += ptr(L, p)
    out += table
    for (pad, data), p in zip(blobs, rec['anims']):
        out += b'\0' * pad
        assert len(out) == p
        out += data
    assert len(out) == rec['end']
    return bytes(out), rec


def patch(data, off, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, off, value)
    return bytes(b)


# --- the separate parser (follows pointers; used for the self-check) ----------

class Fail(Exception):
    def __init__(self, offset, msg):
        Exception.__init__(self, '%s at offset %d' % (msg, offset))
        self.offset = offset


class NotDetected(Exception):
    pass


class Parser:
    """Reads the bytes only. Every read and every pointer is checked against
    the current extent [lo, hi); a failure reports the absolute offset of
    the field that holds the bad value (for a read that does not fit: the
    offset of that field)."""

    def __init__(self, data, L):
        self.d, self.L = data, L

    def need(self, off, n, lo, hi, what):
        if off < lo or off + n > hi:
            raise Fail(off, 'truncated ' + what)

    def rd(self, fmt, off, lo, hi, what):
        n = struct.calcsize(fmt)
        self.need(off, n, lo, hi, what)
        return struct.unpack_from(self.L.e + fmt, self.d, off)[0]

    def rptr(self, off, lo, hi, what):
        return self.rd('I' if self.L.ptr == 4 else 'Q', off, lo, hi, what)

    def target(self, field_off, p, size, A, hi, what, allow_null=False):
        """A pointer p stored at field_off, relative to A, to `size` bytes."""
        if p == 0 and allow_null:
            return None
        if p == 0 or p % 4 or A + p + size > hi:
            raise Fail(field_off, 'bad pointer ' + what)
        return A + p

    def cstring(self, off, hi, field_off):
        end = self.d.find(b'\0', off, hi)
        if off >= hi or end < 0:
            raise Fail(field_off, 'bad string index')
        return self.d[off:end].decode('ascii')

    def anim(self, A, hi):
        L, P = self.L, self.L.ptr
        pos = A
        if L.anim_magic:
            self.need(pos, 8, A, hi, 'magic')
            if self.d[pos:pos + 8] != L.anim_magic:
                raise Fail(pos, 'bad magic')
            pos += 8
        ints = []
        for what in ('hasColor', 'hasAlpha', 'hasSound', 'hasTransform',
                     'numTransforms', 'numFrames'):
            ints.append((pos, self.rd('i', pos, A, hi, what)))
            pos += 4
        ptrs = []
        for what in ('transformTypes', 'frameTimes', 'xformFrames',
                     'alphaFrames', 'colorFrames', 'soundFrames', 'stringTable'):
            ptrs.append((pos, self.rptr(pos, A, hi, what)))
            pos += P
        for off, v in ints[:4]:
            if v not in (0, 1):
                raise Fail(off, 'flag not 0/1')
        hc, ha, hs, ht = [v for _, v in ints[:4]]
        nT, nF = ints[4][1], ints[5][1]
        if not 0 <= nT <= 3:
            raise Fail(ints[4][0], 'numTransforms')
        if nF < 1 or nF > 100000:
            raise Fail(ints[5][0], 'numFrames')
        sizes = (4 * nT, 4 * nF, P * nT, P * nF, P * nF, P * nF, 1)
        names = ('transformTypes', 'frameTimes', 'xformFrames', 'alphaFrames',
                 'colorFrames', 'soundFrames', 'stringTable')
        at = {}
        for (off, p), size, name in zip(ptrs, sizes, names):
            at[name] = self.target(off, p, size, A, hi, name,
                                   allow_null=(size == 0))
        types = []
        for i in range(nT):
            off = at['transformTypes'] + 4 * i
            t = self.rd('i', off, A, hi, 'type')
            if t not in TYPE_KIND:
                raise Fail(off, 'transform type')
            types.append(t)
        times = []
        for j in range(nF):
            off = at['frameTimes'] + 4 * j
            t = self.rd('f', off, A, hi, 'time')
            if not math.isfinite(t) or (times and t < times[-1]):
                raise Fail(off, 'frame time')
            times.append(t)
        strtab = at['stringTable']

        def channel(arr, kind):
            keys = []
            for j in range(nF):
                off = arr + P * j
                p = self.rptr(off, A, hi, 'slot')
                k = self.target(off, p, 32, A, hi, 'keyframe', allow_null=True)
                if k is not None:
                    keys.append((j, k))
            out = []
            for n, (j, k) in enumerate(keys):
                x, y, ang, alpha, color, nxt, si, it = struct.unpack_from(
                    L.e + 'fffiiiii', self.d, k)
                if it not in (NONE, LINEAR):
                    raise Fail(k + 0x1C, 'interpolation')
                want = keys[n + 1][0] if n + 1 < len(keys) else -1
                if nxt != want:
                    raise Fail(k + 0x14, 'nextFrameIndex')
                if kind in ('scale', 'translate'):
                    v = (x, y)
                elif kind == 'rotate':
                    v = ang
                elif kind == 'alpha':
                    v = alpha
                elif kind == 'color':
                    v = color & 0xFFFFFFFF
                else:
                    if si < 1:
                        raise Fail(k + 0x18, 'sound index')
                    v = self.cstring(strtab + si, hi, k + 0x18)
                out.append((j, v, it))
            return Chan(kind, out)

        xforms = []
        if ht:
            for i, t in enumerate(types):
                off = at['xformFrames'] + P * i
                arr = self.target(off, self.rptr(off, A, hi, 'xform'), P * nF,
                                  A, hi, 'xform array')
                xforms.append(channel(arr, TYPE_KIND[t]))
        else:
            xforms = [Chan(TYPE_KIND[t], []) for t in types]
        anim = Anim(times, xforms, has_transform=ht)
        anim.alpha = channel(at['alphaFrames'], 'alpha') if ha else None
        anim.color = channel(at['colorFrames'], 'color') if hc else None
        anim.sound = channel(at['soundFrames'], 'sound') if hs else None
        anim.has_alpha, anim.has_color, anim.has_sound = ha, hc, hs
        return anim

    def movie(self):
        L, P, d = self.L, self.L.ptr, self.d
        hi = len(d)
        pos = 0
        if L.movie_magic:
            self.need(0, 8, 0, hi, 'magic')
            if d[:8] != L.movie_magic:
                raise Fail(0, 'bad magic')
            pos = 8
        length = self.rd('f', pos, 0, hi, 'length')
        if not (math.isfinite(length) and length > 0):
            raise Fail(pos, 'length')
        n_off = pos + 4
        n = self.rd('i', n_off, 0, hi, 'numActors')
        if not 0 <= n <= 10000:
            raise Fail(n_off, 'numActors')
        fields = []
        pos = n_off + 4
        for what in ('pActors', 'ppAnims', 'pStringTable'):
            fields.append((pos, self.rptr(pos, 0, hi, what)))
            pos += P
        pa = self.target(fields[0][0], fields[0][1], 32 * n, 0, hi, 'actors',
                         allow_null=(n == 0))
        pp = self.target(fields[1][0], fields[1][1], P * n, 0, hi, 'ppAnims',
                         allow_null=(n == 0))
        st = self.target(fields[2][0], fields[2][1], 1, 0, hi, 'strings')
        starts = []
        for i in range(n):
            off = pp + P * i
            q = self.rptr(off, 0, hi, 'anim pointer')
            if q == 0 or q % 4 or q + L.anim_header > hi:
                raise Fail(off, 'anim pointer')
            starts.append(q)
        actors = []
        for i in range(n):
            a = pa + 32 * i
            typ, img, lab, fnt, maxw, wrapw, just, depth = struct.unpack_from(
                L.e + 'iiiiffif', d, a)
            if typ not in (0, 1):
                raise Fail(a, 'actor type')
            strs = []
            for k, v in enumerate((img, lab, fnt)):
                if v < 0:
                    raise Fail(a + 4 + 4 * k, 'string index')
                strs.append(self.cstring(st + v, hi, a + 4 + 4 * k))
            if just not in JUST_NAME:
                raise Fail(a + 0x18, 'justification')
            later = [s for s in starts if s > starts[i]]
            end = min(later) if later else hi
            anim = self.anim(starts[i], end)
            actors.append(Actor(typ, strs[0], strs[1], strs[2], just, maxw,
                                wrapw, depth, anim))
        return Movie(length, actors)


def detect(name, data):
    """(kind, layout) from the file name, confirmed by a structural sniff."""
    low = name.lower()
    for ext, L in LAYOUTS.items():
        for kind in ('anim', 'movie'):
            if low.endswith('.%s.%s' % (kind, ext)):
                if L.name == 'binuni':
                    magic = L.anim_magic if kind == 'anim' else L.movie_magic
                    if data[:8] != magic:
                        raise NotDetected(name)
                elif kind == 'anim' and len(data) >= 16:
                    flags = struct.unpack_from(L.e + '4i', data, 0)
                    if any(f not in (0, 1) for f in flags):
                        raise NotDetected(name)
                return kind, L
    raise NotDetected(name)


def parse_file(name, data):
    kind, L = detect(name, data)
    p = Parser(data, L)
    if kind == 'anim':
        return kind, L, p.anim(0, len(data))
    return kind, L, p.movie()


# --- the reference evaluator ---------------------------------------------------

def sample(times, ch, tau):
    """Value of a channel at local time tau (README "Conventions")."""
    keys = [(times[s], v, it) for s, v, it in ch.keys]
    if not keys:
        return None
    k = None
    for i, (T, _, _) in enumerate(keys):
        if T <= tau:
            k = i                     # the LAST key at or before tau
    if k is None:
        return keys[0][1]
    if k == len(keys) - 1:
        return keys[k][1]
    T0, v0, it = keys[k]
    T1, v1, _ = keys[k + 1]           # T1 > tau >= T0, so T1 > T0
    if it == NONE:
        return v0
    u = (tau - T0) / (T1 - T0)
    if isinstance(v0, tuple):
        return tuple(a + (b - a) * u for a, b in zip(v0, v1))
    return v0 + (v1 - v0) * u


def ident():
    return [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]


def mul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(4)) for j in range(4)]
            for i in range(4)]


def xform_matrix(kind, v):
    M = ident()
    if v is None:
        return M
    if kind == 'scale':
        M[0][0], M[1][1] = v
    elif kind == 'rotate':
        r = math.radians(v)
        c, s = math.cos(r), math.sin(r)
        M[0][0], M[0][1], M[1][0], M[1][1] = c, -s, s, c
    else:
        M[0][3], M[1][3] = v
    return M


FLIP = [[1.0, 0, 0, 0], [0, -1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]]


def local_matrix(anim, tau, order='normal', flip=False):
    M = ident()
    if anim.has_transform:
        for ch in anim.xforms:
            X = xform_matrix(ch.kind, sample(anim.times, ch, tau))
            M = mul(X, M) if order == 'normal' else mul(M, X)
    if flip:
        M = mul(FLIP, mul(M, FLIP))
    return M


def tau_standalone(anim, t):
    P = anim.times[-1]
    if t <= P or P <= 0:
        return t
    return math.fmod(t, P)


def tau_movie(anim, length, t):
    P = anim.times[-1]
    if 0 < P < length:
        return math.fmod(t, P)
    return t


# a second evaluator, closed form, for [scale?, rotate?, translate?] lists
def sample2(times, ch, tau):
    keys = ch.keys
    if not keys:
        return None
    for n in range(len(keys) - 1, -1, -1):        # walk back from the end
        T0 = times[keys[n][0]]
        if T0 <= tau:
            if n == len(keys) - 1 or keys[n][2] == NONE:
                return keys[n][1]
            T1, v1 = times[keys[n + 1][0]], keys[n + 1][1]
            v0 = keys[n][1]
            w = (tau - T0) / (T1 - T0)
            if isinstance(v0, tuple):
                return (v0[0] * (1 - w) + v1[0] * w, v0[1] * (1 - w) + v1[1] * w)
            return v0 * (1 - w) + v1 * w
    return keys[0][1]


def closed_form(anim, tau, order, flip):
    kinds = [ch.kind for ch in anim.xforms]
    assert kinds == [k for k in ('scale', 'rotate', 'translate') if k in kinds]
    sx = sy = 1.0
    a = tx = ty = 0.0
    for ch in anim.xforms:
        v = sample2(anim.times, ch, tau)
        if v is None:
            continue
        if ch.kind == 'scale':
            sx, sy = v
        elif ch.kind == 'rotate':
            a = v
        else:
            tx, ty = v
    c, s = math.cos(math.radians(a)), math.sin(math.radians(a))
    if order == 'normal':          # T.R.S
        M = [[sx * c, -sy * s, 0, tx], [sx * s, sy * c, 0, ty],
             [0, 0, 1, 0], [0, 0, 0, 1]]
    else:                          # S.R.T
        M = [[sx * c, -sx * s, 0, sx * (c * tx - s * ty)],
             [sy * s, sy * c, 0, sy * (s * tx + c * ty)],
             [0, 0, 1, 0], [0, 0, 0, 1]]
    if flip:                       # F.M.F: sign flips where one index is 1
        M = [[M[i][j] * (-1 if (i == 1) != (j == 1) else 1) for j in range(4)]
             for i in range(4)]
    return M


# --- expect lines ---------------------------------------------------------------

def fmt(v):
    if abs(v) < 5e-13:
        return '0'
    s = '%.12g' % v
    if 'e' in s:
        s = '%.15f' % v
        s = s.rstrip('0').rstrip('.')
    return s


def fmt_matrix(M):
    return ','.join(fmt(M[i][j]) for i in range(4) for j in range(4))


def anim_node_name(fname):
    i = fname.lower().rfind('.anim.')
    return fname[:i]


def actor_nodes(movie):
    """[(name, index, actor)] sorted by depth (stable)."""
    rows = []
    for i, a in enumerate(movie.actors):
        ident_ = a.image if a.typ == 0 else a.label[1:] if a.label.startswith('$') else a.label
        name = 'actor%02d' % i + ('_' + ident_ if ident_ else '')
        rows.append((name, i, a))
    return sorted(rows, key=lambda r: r[2].depth)


def channel_lines(node, anim):
    out = []
    if anim.has_alpha:
        for s, v, it in anim.alpha.keys:
            out.append('expect-alpha node=%s t=%s value=%d interp=%s'
                       % (node, fmt(anim.times[s]), v, INTERP_NAME[it]))
    if anim.has_color:
        for s, v, it in anim.color.keys:
            out.append('expect-color node=%s t=%s value=0x%08X interp=%s'
                       % (node, fmt(anim.times[s]), v, INTERP_NAME[it]))
    if anim.has_sound:
        for s, v, it in anim.sound.keys:
            out.append('expect-sound node=%s t=%s id=%s'
                       % (node, fmt(anim.times[s]), v))
    return out


def check_pose(anim, tau, order, flip, M):
    C = closed_form(anim, tau, order, flip)
    for i in range(4):
        for j in range(4):
            assert abs(C[i][j] - M[i][j]) < 1e-9, (tau, order, flip, C, M)


def expect_lines(fname, kind, L, obj, pose_times, with_opts=()):
    out = ['expect-format wog_' + kind, 'expect-layout ' + L.name]
    if kind == 'anim':
        node = anim_node_name(fname)
        out.append('expect-nodes 2')
        out.append('expect-duration %s' % fmt(obj.times[-1]))
        for ts in pose_times:
            tau = tau_standalone(obj, float(ts))
            M = local_matrix(obj, tau)
            check_pose(obj, tau, 'normal', False, M)
            out.append('expect-pose t=%s node=%s world=%s' % (ts, node, fmt_matrix(M)))
        for opt, val, times in with_opts:
            for ts in times:
                tau = tau_standalone(obj, float(ts))
                order = 'reverse' if opt == 'transform_order' else 'normal'
                flip = opt == 'flip_y'
                M = local_matrix(obj, tau, order, flip)
                check_pose(obj, tau, order, flip, M)
                out.append('expect-pose-with %s=%s t=%s node=%s world=%s'
                           % (opt, val, ts, node, fmt_matrix(M)))
        out += channel_lines(node, obj)
        return out
    nodes = actor_nodes(obj)
    out.append('expect-nodes %d' % (len(nodes) + 1))
    out.append('expect-duration %s' % fmt(obj.length))
    for name, _, a in nodes:
        out.append('expect-actor node=%s type=%s image=%s label=%s font=%s '
                   'justification=%s depth=%s maxWidth=%s wrapWidth=%s'
                   % (name, 'image' if a.typ == 0 else 'text', a.image, a.label,
                      a.font, JUST_NAME[a.just], fmt(a.depth), fmt(a.maxw),
                      fmt(a.wrapw)))
    for ts in pose_times:
        for name, _, a in nodes:
            tau = tau_movie(a.anim, obj.length, float(ts))
            M = local_matrix(a.anim, tau)
            check_pose(a.anim, tau, 'normal', False, M)
            out.append('expect-pose t=%s node=%s world=%s' % (ts, name, fmt_matrix(M)))
    for name, _, a in nodes:
        out += channel_lines(name, a.anim)
    return out


# --- the fixtures ------------------------------------------------------------------

def C(kind, *keys):
    return Chan(kind, keys)


L_, N_ = LINEAR, NONE


def rot_1rps_anim():
    return Anim([0.0, 0.5, 1.0], [C('rotate', (0, 0.0, L_), (1, 180.0, L_),
                                   (2, 360.0, L_))])


def xform_anim():
    return Anim(
        [0.0, 0.25, 0.5, 1.0, 1.5, 2.0],
        [C('scale', (0, (1.5, 0.75), L_), (2, (2.0, 0.5), N_), (4, (0.5, 1.25), L_)),
         C('rotate', (1, 30.0, L_), (3, 290.0, L_), (4, 200.0, N_), (5, -45.0, L_)),
         C('translate', (0, (0.0, 0.0), N_), (1, (10.0, -5.0), L_),
           (3, (40.0, 20.0), L_), (5, (-12.5, 7.25), L_))],
        alpha=C('alpha', (0, 255, L_), (3, 0, N_), (5, 128, L_)),
        color=C('color', (1, 0xFF80FF00, L_), (2, 0x80FF0000, N_),
                (4, 0xFF0000FF, L_)),
        sound=C('sound', (1, 'SOUND_GLASS_BREAK', N_), (4, 'SOUND_BOING', N_)))


def steps_anim():
    return Anim(
        [0.25, 0.5, 1.0, 1.0, 1.5, 2.0],
        [C('rotate', (0, 10.0, N_), (1, 210.0, L_), (2, 150.0, L_),
           (3, 90.0, N_), (5, 0.0, L_)),
         C('translate', (1, (0.0, 0.0), L_), (2, (100.0, 50.0), N_),
           (3, (-20.0, 30.0), L_), (4, (60.0, -40.0), N_), (5, (5.0, 5.0), N_))])


def scene_movie():
    text = Anim([0.0, 1.0, 2.5, 4.0],
                [C('translate', (0, (547.5, 300.0), L_), (1, (547.5, 250.0), N_),
                   (2, (600.0, 250.0), L_), (3, (620.0, 240.0), L_))],
                alpha=C('alpha', (0, 0, L_), (1, 255, N_), (3, 0, L_)))
    bg = Anim([0.0, 0.75, 1.5],
              [C('scale', (0, (1.0, 1.0), L_), (1, (1.25, 0.75), L_), (2, (1.0, 1.0), L_)),
               C('rotate', (0, 0.0, L_), (2, -90.0, L_))],
              sound=C('sound', (1, 'SOUND_MOVIE_WHOOSH', N_)))
    return Movie(4.0, [
        Actor(1, '', '$TEXT_CHAPTER1_TITLE', 'FONT_TITLE', 1, 400.0, 300.0, 1.0, text),
        Actor(0, 'IMAGE_MOVIE_BG', '', '', 0, -1.0, -1.0, 0.0, bg)])


ROT_TIMES = ['0', '0.125', '0.25', '0.375', '0.5', '0.625', '0.75', '0.875',
             '1', '1.25', '1.75']
XFORM_TIMES = ['0', '0.125', '0.249', '0.25', '0.375', '0.5', '0.625', '0.75',
               '0.999', '1', '1.25', '1.499', '1.5', '1.75', '1.999', '2',
               '2.25', '2.625', '3.5']
XFORM_WITH = [('transform_order', 'reverse', ['0', '0.625', '1.25', '2']),
              ('flip_y', 'true', ['0', '0.625', '1.25', '2'])]
STEPS_TIMES = ['0', '0.125', '0.25', '0.375', '0.499', '0.5', '0.625', '0.75',
               '0.999', '1', '1.25', '1.499', '1.5', '1.75', '1.999', '2',
               '2.125', '2.5', '3']
SCENE_TIMES = ['0', '0.375', '0.75', '1', '1.125', '1.499', '1.5', '1.875',
               '2.25', '2.5', '3', '3.25', '3.749', '3.75', '4']


def rot_1rps_reference():
    """The worked example of docs/formats/world_of_goo.md section 1, written
    out independently of pack_anim."""
    e = '<'
    b = struct.pack(e + '6i', 0, 0, 0, 1, 1, 3)
    b += struct.pack(e + '7I', 52, 56, 68, 84, 96, 108, 120)
    b += struct.pack(e + 'i', 1)                            # 52 ROTATE
    b += struct.pack(e + '3f', 0.0, 0.5, 1.0)               # 56
    b += struct.pack(e + 'I', 72)                           # 68
    b += struct.pack(e + '3I', 124, 156, 188)               # 72
    b += b'\0' * 36                                         # 84, 96, 108
    b += b'\0' * 4                                          # 120 string table
    for angle, nxt in ((0.0, 1), (180.0, 2), (360.0, -1)):  # 124, 156, 188
        b += struct.pack(e + '3f5i', -1.0, -1.0, angle, -1, -1, nxt, 0, 1)
    assert len(b) == 220
    return b


def build():
    """Return {file name: (bytes, spec)}; spec describes the expectation."""
    F = {}
    bl, b64, bbig, buni = (LAYOUTS[k] for k in ('binltl', 'binltl64', 'binbig', 'binuni'))

    rot, rot_rec = pack_anim(rot_1rps_anim(), bl)
    F['rot_1rps.anim.binltl'] = (rot, ('ok', 'anim', bl, rot_1rps_anim(), ROT_TIMES, ()), rot_rec)
    d, r = pack_anim(rot_1rps_anim(), bbig)
    F['rot_big.anim.binbig'] = (d, ('ok', 'anim', bbig, rot_1rps_anim(), ROT_TIMES, ()), r)
    for fname, L in (('xform.anim.binltl', bl), ('xform64.anim.binltl64', b64),
                     ('xformuni.anim.binuni', buni)):
        d, r = pack_anim(xform_anim(), L)
        F[fname] = (d, ('ok', 'anim', L, xform_anim(), XFORM_TIMES, XFORM_WITH), r)
    d, r = pack_anim(steps_anim(), bl)
    F['steps.anim.binltl'] = (d, ('ok', 'anim', bl, steps_anim(), STEPS_TIMES, ()), r)
    scene, scene_rec = pack_movie(scene_movie(), bl)
    F['scene.movie.binltl'] = (scene, ('ok', 'movie', bl, scene_movie(), SCENE_TIMES, ()), scene_rec)
    d, r = pack_movie(scene_movie(), buni)
    F['sceneuni.movie.binuni'] = (d, ('ok', 'movie', buni, scene_movie(), SCENE_TIMES, ()), r)

    # broken files: one defect each
    F['bad_ptr.anim.binltl'] = (patch(rot, 0x1C, '<I', 0x1000), ('bad', 0x1C), rot_rec)
    xf, xr = pack_anim(xform_anim(), bl)
    off = xr['key'][(('x', 1), 3)] + 0x14          # ROTATE slot 3: next 4 -> 1
    assert struct.unpack_from('<i', xf, off)[0] == 4
    F['bad_next.anim.binltl'] = (patch(xf, off, '<i', 1), ('bad', off), xr)
    off = xr['key'][(('x', 2), 3)] + 0x1C          # TRANSLATE slot 3: interp 7
    assert struct.unpack_from('<i', xf, off)[0] == LINEAR
    F['bad_interp.anim.binltl'] = (patch(xf, off, '<i', 7), ('bad', off), xr)
    off = xr['types'] + 4                          # transformTypes[1] = 5
    assert struct.unpack_from('<i', xf, off)[0] == ROTATE
    F['bad_type.anim.binltl'] = (patch(xf, off, '<i', 5), ('bad', off), xr)
    off = xr['times'] + 4 * 3                      # frameTimes[3] 1.0 -> 0.375
    assert struct.unpack_from('<f', xf, off)[0] == 1.0
    F['bad_times.anim.binltl'] = (patch(xf, off, '<f', 0.375), ('bad', off), xr)
    F['truncated.anim.binltl'] = (rot[:40], ('bad', 40), rot_rec)
    # actor 0's TRANSLATE slot 0 pointer -> actor 1's first keyframe
    a0, a1 = scene_rec['anims']
    off = a0 + scene_rec['arecs'][0]['slotptr'][(('x', 0), 0)]
    target = a1 + scene_rec['arecs'][1]['key'][(('x', 0), 0)] - a0
    assert struct.unpack_from('<I', scene, off)[0] == scene_rec['arecs'][0]['key'][(('x', 0), 0)]
    F['bad_embedded.movie.binltl'] = (patch(scene, off, '<I', target), ('bad', off), scene_rec)
    bad_embedded_target[:] = [target, a0 + target]
    off = scene_rec['pp'] + 4                      # ppAnims[1] -> 0x10000
    F['bad_actor_ptr.movie.binltl'] = (patch(scene, off, '<I', 0x10000), ('bad', off), scene_rec)

    F['image.png.binltl'] = (mac_image(), ('notdetected',), None)
    return F


bad_embedded_target = []


def mac_image():
    """docs/formats/world_of_goo.md section 3 / GooTool MacGraphicFormat:
    u16 width, u16 height, u32 compressed size, u32 uncompressed size (all
    little-endian; 12 bytes), then zlib data of a square power-of-two BGRA
    raster (here 8x8 for a 5x3 image)."""
    w, h, side = 5, 3, 8
    raw = bytearray()
    for y in range(side):
        for x in range(side):
            if x < w and y < h:
                raw += struct.pack('<4B', 40 * x, 60 * y, 200, 255)   # B,G,R,A
            else:
                raw += struct.pack('<4B', 0, 0, 0, 0)
    comp = zlib.compress(bytes(raw), 9)
    return (struct.pack('<H', w) + struct.pack('<H', h)
            + struct.pack('<I', len(comp)) + struct.pack('<I', len(raw)) + comp)


# --- the self-check ---------------------------------------------------------------

def self_check(F):
    # 1. docs/formats/world_of_goo.md section 1: rot_1rps is exactly the
    #    220-byte example of the goofans.com format page
    rot = F['rot_1rps.anim.binltl'][0]
    assert rot == rot_1rps_reference(), \
        'rot_1rps differs from docs/formats/world_of_goo.md section 1'
    assert len(rot) == 220
    assert list(struct.unpack_from('<7I', rot, 24)) == [52, 56, 68, 84, 96, 108, 120]
    assert list(struct.unpack_from('<3I', rot, 72)) == [124, 156, 188]
    # 2. every file through the separate parser
    lines = {}
    for fname, (data, spec, _) in F.items():
        if spec[0] == 'notdetected':
            try:
                parse_file(fname, data)
            except NotDetected:
                pass
            else:
                raise AssertionError(fname + ' was detected')
            # also not a WoG anim by content: its first int is not 0/1 ...
            assert struct.unpack_from('<i', data, 0)[0] not in (0, 1)
            # ... and it is a well-formed Mac image
            w, h, cs, us = struct.unpack_from('<HHII', data, 0)
            assert len(data) == 12 + cs and len(zlib.decompress(data[12:])) == us
            lines[fname] = ['expect-not-detected']
            continue
        if spec[0] == 'bad':
            try:
                parse_file(fname, data)
            except Fail as e:
                assert e.offset == spec[1], (fname, e.offset, spec[1], str(e))
            else:
                raise AssertionError(fname + ' did not fail')
            lines[fname] = ['expect-error-offset %d' % spec[1]]
            continue
        _, kind, L, obj, times, opts = spec
        pkind, pL, parsed = parse_file(fname, data)
        assert (pkind, pL) == (kind, L), fname
        assert parsed == obj, fname + ': parsed model differs'
        want = expect_lines(fname, kind, L, obj, times, opts)
        have = expect_lines(fname, kind, L, parsed, times, opts)
        assert want == have, fname
        lines[fname] = want
    # 3. the variants carry the same expectations as their binltl originals
    def strip(fname, ls, node):
        return [l.replace('node=%s ' % node, 'node=@ ') for l in ls
                if not l.startswith('expect-layout')]
    for base, other in (('xform.anim.binltl', 'xform64.anim.binltl64'),
                        ('xform.anim.binltl', 'xformuni.anim.binuni'),
                        ('rot_1rps.anim.binltl', 'rot_big.anim.binbig')):
        assert strip(base, lines[base], anim_node_name(base)) == \
            strip(other, lines[other], anim_node_name(other)), other
    assert lines['scene.movie.binltl'][2:] == lines['sceneuni.movie.binuni'][2:]
    # 4. the hand-worked numbers quoted in the .txt files
    for fname, ts, node, idx, value in HAND:
        for l in lines[fname]:
            if l.startswith('expect-pose t=%s node=%s ' % (ts, node)):
                got = [float(x) for x in l.split('world=')[1].split(',')]
                for i, v in zip(idx, value):
                    assert abs(got[i] - v) < 5e-7, (fname, ts, node, i, got[i], v)
                break
        else:
            raise AssertionError((fname, ts, node))
    return lines


# --- the .txt files -----------------------------------------------------------------

def stem_of(fname):
    return fname[:fname.rfind('.')]


def hexdump_fields(data, L, A, rec, anim):
    """Decoded fields with absolute byte offsets, read back from the bytes."""
    e, P = L.e, L.ptr
    pf = 'I' if P == 4 else 'Q'
    out = []

    def at(rel):
        return A + rel

    if L.anim_magic:
        out.append('  %4d 0x%04X  magic %r' % (A, A, data[A:A + 8].decode()))
    for name in ('hasColor', 'hasAlpha', 'hasSound', 'hasTransform',
                 'numTransforms', 'numFrames'):
        o = at(rec['hdr'][name])
        out.append('  %4d 0x%04X  %-15s %d' % (o, o, name,
                                              struct.unpack_from(e + 'i', data, o)[0]))
    for name in ('transformTypes', 'frameTimes', 'xformFrames', 'alphaFrames',
                 'colorFrames', 'soundFrames', 'stringTable'):
        o = at(rec['hdr'][name])
        v = struct.unpack_from(e + pf, data, o)[0]
        out.append('  %4d 0x%04X  %-15s -> %d (0x%X)%s' % (
            o, o, name, v, v, '' if A == 0 else ', absolute %d' % (A + v)))
    nT, nF = len(anim.xforms), len(anim.times)
    for i in range(nT):
        o = at(rec['types'] + 4 * i)
        t = struct.unpack_from(e + 'i', data, o)[0]
        out.append('  %4d 0x%04X  transformTypes[%d] = %d (%s)'
                   % (o, o, i, t, TYPE_KIND.get(t, '?').upper()))
    for j in range(nF):
        o = at(rec['times'] + 4 * j)
        out.append('  %4d 0x%04X  frameTimes[%d] = %s' % (
            o, o, j, fmt(struct.unpack_from(e + 'f', data, o)[0])))
    if rec['pad64']:
        o = at(rec['times'] + 4 * nF)
        out.append('  %4d 0x%04X  %d zero bytes (8-byte alignment)' % (o, o, rec['pad64']))
    for i in range(nT):
        o = at(rec['xff'] + P * i)
        v = struct.unpack_from(e + pf, data, o)[0]
        out.append('  %4d 0x%04X  xformFrames[%d] -> %d%s' % (
            o, o, i, v, '' if A == 0 else ' (absolute %d)' % (A + v)))
    for cid, label in ([(('x', i), 'transform %d (%s)' % (i, anim.xforms[i].kind.upper()))
                        for i in range(nT)]
                       + [('alpha', 'alphaFrames'), ('color', 'colorFrames'),
                          ('sound', 'soundFrames')]):
        o = at(rec['slotptr'][(cid, 0)])
        vals = [struct.unpack_from(e + pf, data, at(rec['slotptr'][(cid, j)]))[0]
                for j in range(nF)]
        out.append('  %4d 0x%04X  %s slots: %s%s' % (
            o, o, label, ', '.join(str(v) for v in vals),
            '' if A == 0 else ' (relative to %d)' % A))
    o = at(rec['strtab'])
    tab = data[o:o + rec['strtab_len']]
    out.append('  %4d 0x%04X  string table, %d bytes: %s' % (
        o, o, len(tab), ' '.join(['""@0'] + [('"%s"@%d' % (s, i)) for s, i in
                                           sorted(rec['sidx'].items(), key=lambda k: k[1])])
        if rec['sidx'] else '"" (index 0) + padding'))
    for (cid, slot), ko in sorted(rec['key'].items(), key=lambda k: k[1]):
        o = at(ko)
        x, y, ang, al, co, nx, si, it = struct.unpack_from(e + 'fffiiiii', data, o)
        name = anim.xforms[cid[1]].kind.upper() if isinstance(cid, tuple) else cid
        out.append('  %4d 0x%04X  key %-9s slot %d (t=%s): x=%s y=%s angle=%s alpha=%d '
                   'color=%s next=%d sound=%d interp=%s'
                   % (o, o, name, slot, fmt(anim.times[slot]), fmt(x), fmt(y),
                      fmt(ang), al, '-1' if co == -1 else '0x%08X' % (co & 0xFFFFFFFF),
                      nx, si, INTERP_NAME.get(it, str(it))))
    return out


def movie_fields(data, L, rec, movie):
    e, P = L.e, L.ptr
    pf = 'I' if P == 4 else 'Q'
    out = []
    if L.movie_magic:
        out.append('     0 0x0000  magic %r' % data[:8].decode())
    o = rec['hdr']['length']
    out.append('  %4d 0x%04X  length %s' % (o, o, fmt(struct.unpack_from(e + 'f', data, o)[0])))
    o = rec['hdr']['numActors']
    out.append('  %4d 0x%04X  numActors %d' % (o, o, struct.unpack_from(e + 'i', data, o)[0]))
    for name in ('pActors', 'ppAnims', 'pStringTable'):
        o = rec['hdr'][name]
        out.append('  %4d 0x%04X  %s -> %d' % (o, o, name, struct.unpack_from(e + pf, data, o)[0]))
    for i in range(len(movie.actors)):
        o = rec['actors'] + 32 * i
        f = struct.unpack_from(e + 'iiiiffif', data, o)
        out.append('  %4d 0x%04X  actor %d: type %d, image idx %d, label idx %d, font idx %d, '
                   'maxWidth %s, wrapWidth %s, justification %d, depth %s'
                   % (o, o, i, f[0], f[1], f[2], f[3], fmt(f[4]), fmt(f[5]), f[6], fmt(f[7])))
    for i in range(len(movie.actors)):
        o = rec['pp'] + P * i
        out.append('  %4d 0x%04X  ppAnims[%d] -> %d' % (o, o, i, struct.unpack_from(e + pf, data, o)[0]))
    o = rec['strtab']
    out.append('  %4d 0x%04X  string table, %d bytes: %s' % (
        o, o, rec['strtab_len'], ' '.join('"%s"@%d' % (s, i) for s, i in
                                          sorted(rec['sidx'].items(), key=lambda k: k[1]))))
    for i, (A, arec) in enumerate(zip(rec['anims'], rec['arecs'])):
        prev = rec['strtab'] + rec['strtab_len'] if i == 0 else \
            rec['anims'][i - 1] + rec['arecs'][i - 1]['end']
        if A > prev:
            out.append('  %4d 0x%04X  %d zero bytes (8-byte alignment before the anim)'
                       % (prev, prev, A - prev))
        out.append('  --- actor %d anim at %d (0x%X), %d bytes; its pointers are relative to %d'
                   % (i, A, A, arec['end'], A))
        out += hexdump_fields(data, L, A, arec, movie.actors[i].anim)
    return out


def main():
    F = build()
    lines = self_check(F)
    for fname, (data, spec, rec) in F.items():
        with open(os.path.join(HERE, fname), 'wb') as fh:
            fh.write(data)
        title, prose = PROSE[fname]
        body = ['%s -- %s (%d bytes)' % (fname, title, len(data)), '']
        body += prose.strip('\n').split('\n')
        if spec[0] == 'ok':
            body += ['', 'Decoded fields (offset decimal, hex; read back from the written bytes):']
            if spec[1] == 'anim':
                body += hexdump_fields(data, spec[2], 0, rec, spec[3])
            else:
                body += movie_fields(data, spec[2], rec, spec[3])
            if fname in HANDWORK:
                body += [''] + HANDWORK[fname].strip('\n').split('\n')
        body += [''] + lines[fname]
        with open(os.path.join(HERE, stem_of(fname) + '.txt'), 'w') as fh:
            fh.write('\n'.join(body) + '\n')
        print('%-28s %5d bytes   %-22s %3d expect lines'
              % (fname, len(data), stem_of(fname) + '.txt', len(lines[fname])))


# --- the hand-written prose of each .txt --------------------------------------
# PROSE[file] = (title, text): how the file was made and what it covers.
# HANDWORK[file]: the key cases worked by hand. HAND lists the numbers of that
# hand work which self_check() compares with the evaluator's expect lines
# (file, t, node, row-major matrix indices, values).

PROSE = {}
HANDWORK = {}
HAND = []

PROSE['rot_1rps.anim.binltl'] = ('the 220-byte example of docs/formats/world_of_goo.md section 1 (one ROTATE channel, 0 -> 180 -> 360 deg)', '''
How it was made: make_fixtures.py, rot_1rps_anim() packed by pack_anim() with
the binltl layout (32-bit little-endian). The script's first check compares
these bytes with rot_1rps_reference(), which spells out the worked
example of docs/formats/world_of_goo.md section 1 field by field: flags
0,0,0,1; nT = 1; nF = 3; pointers 52, 56, 68, 84, 96, 108, 120;
transformTypes[0] = 1 (ROTATE) at 52; frameTimes 0, 0.5, 1.0 at 56;
mXformFrames[0] = 72 at 68; keyframe pointers 124, 156, 188 at 72; the alpha,
colour and sound pointer arrays (3 nulls each) at 84, 96, 108; the 4-byte
string table (one NUL + 3 pad bytes) at 120; three 32-byte keyframes
(-1, -1, angle 0/180/360, -1, -1, next 1/2/-1, 0, LINEAR) at 124, 156, 188.
The file is 220 bytes, as in the example on the goofans.com format page: the
page's extra fourth "framePointer = 0" is GooTool reading one slot too far
(docs/formats/world_of_goo.md section 1).

What it covers: the plain binltl anim, a single transform channel, the
standalone loop (period = last frame time = 1 s), and a rotation that goes
through 180 deg per segment (the direction must come from the unwrapped angle,
not from a shortest-path slerp: 0 -> 180 has no shortest path).''')

HANDWORK['rot_1rps.anim.binltl'] = '''
Hand evaluation (angle lerped linearly inside each 0.5 s segment; R(a) =
[[cos a, -sin a],[sin a, cos a]] in the upper-left, no translation):
  t=0      angle 0   -> identity.
  t=0.125  angle 45  -> rows (0.7071068, -0.7071068), (0.7071068, 0.7071068).
  t=0.25   angle 90  -> rows (0, -1), (1, 0). Counter-clockwise: +90, not -90.
  t=0.5    angle 180 -> rows (-1, 0), (0, -1) (exactly the key of slot 1).
  t=0.75   angle 270 -> rows (0, 1), (-1, 0).
  t=1      angle 360 -> identity (t <= P = 1, so tau = t = the last key).
  t=1.25   after the end: tau = fmod(1.25, 1) = 0.25 -> 90 deg again.
  t=1.75   tau = 0.75 -> 270 deg.
Duration = P = frameTimes[2] = 1. Nodes: RootNode + "rot_1rps" = 2.'''
HAND += [('rot_1rps.anim.binltl', '0.125', 'rot_1rps', [0, 1, 4, 5],
          [0.7071068, -0.7071068, 0.7071068, 0.7071068]),
         ('rot_1rps.anim.binltl', '0.25', 'rot_1rps', [0, 1, 4, 5], [0, -1, 1, 0]),
         ('rot_1rps.anim.binltl', '0.75', 'rot_1rps', [0, 1, 4, 5], [0, 1, -1, 0]),
         ('rot_1rps.anim.binltl', '1.25', 'rot_1rps', [0, 1, 4, 5], [0, -1, 1, 0])]

PROSE['rot_big.anim.binbig'] = ('rot_1rps in the big-endian binbig layout', '''
How it was made: make_fixtures.py, rot_1rps_anim() packed by pack_anim() with
the binbig layout: the binltl layout of rot_1rps.anim.binltl with every int,
float and pointer big-endian (docs/formats/world_of_goo.md section 3; the
Python exportBIN's packed(">")).
Same offsets, same 220 bytes; e.g. bytes 0x0C..0x0F are 00 00 00 01
(hasTransform) and the first pointer at 0x18 is 00 00 00 34 (52). The -1
sentinels read FF FF FF FF in both byte orders; the float -1.0 is BF 80 00 00
here and 00 00 80 BF in binltl.

What it covers: endianness. The expectations are those of rot_1rps with the
node name "rot_big" and layout binbig. (docs/formats/world_of_goo.md
section 3 calls binbig colour packing dubious; this file has no colour keys.)''')
HANDWORK['rot_big.anim.binbig'] = '''
Hand evaluation: identical to rot_1rps.anim.txt (t=0.25 -> 90 deg, t=0.5 ->
180 deg, t=1.25 -> tau 0.25 -> 90 deg).'''
HAND += [('rot_big.anim.binbig', '0.25', 'rot_big', [0, 1, 4, 5], [0, -1, 1, 0])]

XFORM_MADE = '''
The animation (slot: value + interpolation, "L" LINEAR, "N" NONE; the slots
not listed hold null pointers):
  frameTimes    slot 0 = 0, 1 = 0.25, 2 = 0.5, 3 = 1.0, 4 = 1.5, 5 = 2.0
  t0 SCALE      slot 0 (1.5,0.75) L, slot 2 (2,0.5) N, slot 4 (0.5,1.25) L
  t1 ROTATE     slot 1 30 L, slot 3 290 L, slot 4 200 N, slot 5 -45 L
  t2 TRANSLATE  slot 0 (0,0) N, slot 1 (10,-5) L, slot 3 (40,20) L,
                slot 5 (-12.5,7.25) L
  alpha         slot 0 255 L, slot 3 0 N, slot 5 128 L
  colour        slot 1 0xFF80FF00 L, slot 2 0x80FF0000 N, slot 4 0xFF0000FF L
  sound         slot 1 SOUND_GLASS_BREAK N, slot 4 SOUND_BOING N
hasColor = hasAlpha = hasSound = hasTransform = 1, nT = 3, nF = 6. Sound keys
are written with interpolation NONE; they carry soundStrIdx 1 and 19 (string
table "\\0SOUND_GLASS_BREAK\\0SOUND_BOING\\0" = 31 bytes + 1 pad byte = 32).

What it covers: all three transform types in the shipped order [S, R, T]
(Local = T.R.S); sparse channels; a channel whose first key is not slot 0
(ROTATE starts at slot 1: before 0.25 s it holds 30 deg); a channel that ends
before the last slot (SCALE ends at slot 4 and holds after 1.5 s); a
non-uniform scale; a rotation segment of +260 deg (30 -> 290, must not take
the -100 deg short way) and a negative one (290 -> 200); NONE holds in every
transform channel; alpha, colour (one NONE key) and two different sound IDs;
the loop after the end (t = 2.25, 2.625, 3.5); the transform_order=reverse
and flip_y=true options.'''

XFORM_HAND = '''
Hand evaluation (M = T.R.S; upper-left 2x2 = [[sx c, -sy s],[sx s, sy c]],
translation (tx, ty) in elements 3 and 7):
  t=0     S (1.5,0.75) (slot 0); R: before its first key (0.25) -> 30 deg;
          T (0,0). Rows (1.5*0.8660254, -0.75*0.5) = (1.2990381, -0.375),
          (1.5*0.5, 0.75*0.8660254) = (0.75, 0.6495191); translation 0.
  t=0.249 T still (0,0): slot 0 is NONE and holds until 0.25. S is lerped
          u = 0.249/0.5 = 0.498 -> (1.749, 0.6255): M00 = 1.749*0.8660254 =
          1.5146784, M01 = -0.6255*0.5 = -0.31275.
  t=0.25  T jumps to (10,-5).
  t=0.625 R: 30 + 260*(0.375/0.75) = 160 deg (a shortest-path slerp would give
          -20). S = (2,0.5), held by slot 2 (NONE) over [0.5,1.5). T: u = 0.5
          between (10,-5) and (40,20) -> (25, 7.5). c = -0.9396926,
          s = 0.3420201: rows (-1.8793852, -0.1710101 | 25),
          (0.6840403, -0.4698463 | 7.5).
  t=1.25  R: 290 -> 200, u = 0.5 -> 245 deg (c = -0.4226183, s = -0.9063078);
          S (2,0.5); T: u = 0.25 between (40,20) and (-12.5,7.25) -> (26.875,
          16.8125). Rows (-0.8452365, 0.4531539 | 26.875),
          (-1.8126155, -0.2113091 | 16.8125).
  t=1.499 S still (2,0.5); t=1.5: S jumps to (0.5,1.25) (end of the NONE
          hold), R = 200 (slot 4 is NONE, held until 2.0), T (13.75,13.625).
          Rows (0.5*-0.9396926, -1.25*-0.3420201) = (-0.4698463, 0.4275252),
          (0.5*-0.3420201, 1.25*-0.9396926) = (-0.1710101, -1.1746158).
  t=1.999 R still 200; T (-12.4475, 7.26275).
  t=2     R -45, S (0.5,1.25) (last SCALE key, held), T (-12.5,7.25): rows
          (0.3535534, 0.8838835), (-0.3535534, 0.8838835).
  t=2.25, 2.625, 3.5: tau = fmod(t, 2) = 0.25, 0.625, 1.5 -> the poses of
          those times.
  transform_order=reverse, t=0.625: M = S.R.T. Upper-left S.R = rows
          (2c, -2s) = (-1.8793852, -0.6840403), (0.5s, 0.5c) = (0.1710101,
          -0.4698463); translation S.R.(25,7.5) = (2*(25c - 7.5s),
          0.5*(25s + 7.5c)) = (-52.1149332, 0.7514045).
  flip_y=true, t=0.625: F.M.F negates the elements whose row or column (not
          both) is 1: rows (-1.8793852, 0.1710101 | 25), (-0.6840403,
          -0.4698463 | -7.5).
  alpha keys: 255 at 0 (LINEAR), 0 at 1.0 (NONE), 128 at 2.0; colour keys at
  0.25, 0.5 (NONE), 1.5; sounds SOUND_GLASS_BREAK at 0.25, SOUND_BOING at 1.5.
Duration = frameTimes[5] = 2. Nodes: RootNode + 1 = 2.'''


def _xform_hand(fname, node):
    return [(fname, '0', node, [0, 1, 4, 5, 3, 7], [1.2990381, -0.375, 0.75, 0.6495191, 0, 0]),
            (fname, '0.249', node, [0, 1, 3, 7], [1.5146784, -0.31275, 0, 0]),
            (fname, '0.625', node, [0, 1, 3, 4, 5, 7],
             [-1.8793852, -0.1710101, 25, 0.6840403, -0.4698463, 7.5]),
            (fname, '1.25', node, [0, 1, 3, 4, 5, 7],
             [-0.8452365, 0.4531539, 26.875, -1.8126155, -0.2113091, 16.8125]),
            (fname, '1.5', node, [0, 1, 4, 5, 3, 7],
             [-0.4698463, 0.4275252, -0.1710101, -1.1746158, 13.75, 13.625]),
            (fname, '2', node, [0, 1, 4, 5], [0.3535534, 0.8838835, -0.3535534, 0.8838835])]


PROSE['xform.anim.binltl'] = ('all three transforms, sparse NONE/LINEAR channels, alpha, colour, sound (binltl)', '''
How it was made: make_fixtures.py, xform_anim() packed by pack_anim() with
the binltl layout. Physical order: header (52) -> transformTypes (3 ints) ->
frameTimes (6 floats) -> xformFrames ptr[3] -> 3 x ptr[6] -> alpha, colour,
sound ptr[6] -> string table -> 19 keyframes in the order SCALE, ROTATE,
TRANSLATE, alpha, colour, sound (each in slot order).
''' + XFORM_MADE)
HANDWORK['xform.anim.binltl'] = XFORM_HAND
HAND += _xform_hand('xform.anim.binltl', 'xform')

PROSE['xform64.anim.binltl64'] = ('the xform animation in the 64-bit binltl64 layout', '''
How it was made: make_fixtures.py, xform_anim() packed by pack_anim() with
the binltl64 layout: little-endian, no magic, the 7 header pointers are u64
(header 0x50 = 80 bytes), every pointer array entry is a u64; ints, floats
and the 32-byte keyframes are unchanged. transformTypes (80..91) and
frameTimes (92..115) are followed by 4 zero bytes (116..119) so that the
xformFrames array starts at 120, a multiple of 8. The high dword of every
pointer is 0.
''' + XFORM_MADE + '''
The expectations are those of xform.anim.txt with node "xform64" and layout
binltl64.''')
HANDWORK['xform64.anim.binltl64'] = XFORM_HAND.replace('Hand evaluation', 'Hand evaluation (as in xform.anim.txt)')
HAND += _xform_hand('xform64.anim.binltl64', 'xform64')

PROSE['xformuni.anim.binuni'] = ('the xform animation in the WoG 1.5 binuni layout', '''
How it was made: make_fixtures.py, xform_anim() packed by pack_anim() with
the binuni layout: the 8 ASCII bytes "BINUNIAN", then the binltl64 layout
shifted by 8: six ints at 8..31, seven u64 pointers at 32..87 (header 0x58 =
88 bytes); transformTypes at 88, frameTimes at 100..123, 4 zero bytes so the
xformFrames array starts at 128. Every pointer is relative to the magic's
first byte (here the file start), as in OpenGOO / WooGLE2
(docs/formats/world_of_goo.md section 3).
''' + XFORM_MADE + '''
The expectations are those of xform.anim.txt with node "xformuni" and layout
binuni.''')
HANDWORK['xformuni.anim.binuni'] = XFORM_HAND.replace('Hand evaluation', 'Hand evaluation (as in xform.anim.txt)')
HAND += _xform_hand('xformuni.anim.binuni', 'xformuni')

PROSE['steps.anim.binltl'] = ('NONE steps vs LINEAR, a 200 deg NONE jump, duplicate frame times, first frame at 0.25 s', '''
How it was made: make_fixtures.py, steps_anim() packed by pack_anim() with
the binltl layout. Two transforms [ROTATE, TRANSLATE] (nT = 2, so Local =
T.R), no alpha/colour/sound (their pointer arrays are all null, string table
4 zero bytes).
  frameTimes    slot 0 = 0.25, 1 = 0.5, 2 = 1.0, 3 = 1.0, 4 = 1.5, 5 = 2.0
  t0 ROTATE     slot 0 10 N, slot 1 210 L, slot 2 150 L, slot 3 90 N, slot 5 0 L
  t1 TRANSLATE  slot 1 (0,0) L, slot 2 (100,50) N, slot 3 (-20,30) L,
                slot 4 (60,-40) N, slot 5 (5,5) N

What it covers: the first frame time is 0.25, not 0 (before the first key a
channel holds its first key's value); TRANSLATE starts one slot later still
(0.5); a NONE key followed by a 200 deg jump (10 -> 210 at 0.5 s, no
interpolation in between); slots 2 and 3 share the time 1.0 in both channels
(at exactly 1.0 the later slot wins; just before 1.0 the LINEAR segment from
slot 1 has almost reached slot 2's value); NONE holds in both channels; the
loop: t = 2.125, 2.5 and 3 map to tau 0.125, 0.5 and 1.0.''')
HANDWORK['steps.anim.binltl'] = '''
Hand evaluation (M = T.R):
  t=0 .. 0.499  R = 10 deg: t < 0.25 is before the first key; slot 0 is NONE
                and holds 10 until 0.5. T = (0,0): before its first key (0.5).
                Rows (0.9848078, -0.1736482), (0.1736482, 0.9848078).
  t=0.5         R = 210 (c = -0.8660254, s = -0.5): rows (-0.8660254, 0.5),
                (-0.5, -0.8660254); T (0,0).
  t=0.75        R: 210 -> 150 over [0.5,1.0), u = 0.5 -> 180: rows (-1,0),
                (0,-1); T: (0,0) -> (100,50), u = 0.5 -> (50,25).
  t=0.999       R = 210 - 60*0.998 = 150.12; T = (99.8, 49.9).
  t=1           duplicate time: slot 3 (later) wins: R = 90 -> rows (0,-1),
                (1,0); T = (-20,30) (not slot 2's (100,50)).
  t=1.25        R = 90 (slot 3 is NONE until slot 5 at 2.0); T: slot 3 LINEAR
                to slot 4, u = 0.5 -> (20,-5).
  t=1.5 .. 1.999 T = (60,-40) held (slot 4 NONE); R = 90.
  t=2           R = 0, T = (5,5): rows (1,0), (0,1), translation (5,5).
  t=2.125       tau = 0.125 -> as t = 0. t=2.5 -> tau 0.5. t=3 -> tau = 1.0,
                the duplicate instant: R 90, T (-20,30).
Duration = 2. Nodes: 2.'''
HAND += [('steps.anim.binltl', '0.499', 'steps', [0, 1, 4, 5, 3, 7],
          [0.9848078, -0.1736482, 0.1736482, 0.9848078, 0, 0]),
         ('steps.anim.binltl', '0.5', 'steps', [0, 1, 4, 5, 3, 7],
          [-0.8660254, 0.5, -0.5, -0.8660254, 0, 0]),
         ('steps.anim.binltl', '0.75', 'steps', [0, 1, 4, 5, 3, 7], [-1, 0, 0, -1, 50, 25]),
         ('steps.anim.binltl', '0.999', 'steps', [3, 7], [99.8, 49.9]),
         ('steps.anim.binltl', '1', 'steps', [0, 1, 4, 5, 3, 7], [0, -1, 1, 0, -20, 30]),
         ('steps.anim.binltl', '1.25', 'steps', [3, 7], [20, -5]),
         ('steps.anim.binltl', '1.999', 'steps', [3, 7], [60, -40]),
         ('steps.anim.binltl', '2', 'steps', [0, 1, 4, 5, 3, 7], [1, 0, 0, 1, 5, 5]),
         ('steps.anim.binltl', '3', 'steps', [0, 1, 4, 5, 3, 7], [0, -1, 1, 0, -20, 30])]

SCENE_MADE = '''
The movie: length 4.0 s, 2 actors.
  actor 0: text, image "" (index 0), label "$TEXT_CHAPTER1_TITLE", font
           "FONT_TITLE", justification 1 (center), maxWidth 400, wrapWidth
           300, depth 1.0. Its anim (hasTransform, hasAlpha; nT = 1):
             frameTimes   0             1.0            2.5          4.0
             TRANSLATE    (547.5,300)L  (547.5,250)N   (600,250)L   (620,240)L
             alpha        0 L           255 N          -            0 L
           The last frame time 4.0 equals the movie length: no loop.
  actor 1: image "IMAGE_MOVIE_BG", label/font "" (index 0), justification 0,
           maxWidth/wrapWidth -1 (unused), depth 0.0. Its anim (hasTransform,
           hasSound; [SCALE, ROTATE]):
             frameTimes   0          0.75            1.5
             SCALE        (1,1)L     (1.25,0.75)L    (1,1)L
             ROTATE       0 L        -               -90 L
             sound        -          SOUND_MOVIE_WHOOSH -
           The last frame time 1.5 < 4.0: the actor loops, tau = fmod(t, 1.5).
Movie string table: "\\0" + "$TEXT_CHAPTER1_TITLE\\0" (index 1) + "FONT_TITLE\\0"
(22) + "IMAGE_MOVIE_BG\\0" (33) = 48 bytes, already a multiple of 4. Actor 1's
anim has its own string table "\\0SOUND_MOVIE_WHOOSH\\0" (20 bytes, no padding
needed; soundStrIdx 1); actor 0's is 4 zero bytes.

What it covers: a BinMovie with two embedded anims whose pointers are relative
to their own start; a text actor and an image actor (strings by index, empty
strings = index 0, the label's leading "$" is kept in the metadata and dropped
from the node name); node order by depth (actor 1, depth 0, comes first);
a looping actor inside a longer movie (at t = 1.5 and 3.0 its tau is 0, so it
snaps back to identity); a non-looping actor whose anim spans the whole
length; alpha keys with a NONE hold; one sound key.'''

SCENE_HAND = '''
Hand evaluation:
  Nodes: RootNode, actor01_IMAGE_MOVIE_BG (depth 0), actor00_TEXT_CHAPTER1_TITLE
  (depth 1) = 3. Duration = length = 4.
  actor01 (M = R.S, tau = fmod(t, 1.5); the ROTATE channel has no key at
  slot 1, so it goes 0 -> -90 over the whole 1.5 s):
    t=0.75  S (1.25,0.75), R -45 (c = 0.7071068, s = -0.7071068): rows
            (1.25c, -0.75s) = (0.8838835, 0.5303301), (1.25s, 0.75c) =
            (-0.8838835, 0.5303301).
    t=1     S: u = 1/3 from (1.25,0.75) to (1,1) -> (1.1666667, 0.8333333);
            R -60: rows (0.5833333, 0.7216878), (-1.0103630, 0.4166667).
    t=1.499 R -89.94, almost rows (0,1), (-1,0).
    t=1.5   tau = fmod(1.5,1.5) = 0 -> identity (the loop restarts).
    t=3     tau 0 -> identity. t=3.75 -> tau 0.75 (as t=0.75). t=4 -> tau 1.
  actor00 (M = T, tau = t since P = 4.0 is not < length):
    t=0.375 (547.5, 300 - 50*0.375) = (547.5, 281.25).
    t=1 .. 2.499  (547.5, 250) (slot 1 NONE). t=2.5 (600,250).
    t=3     u = 1/3 from (600,250) to (620,240) -> (606.6666667, 246.6666667).
    t=4     (620,240).
  alpha of actor00: 0 at 0 (linear), 255 at 1 (none), 0 at 4 (linear).
  sound of actor01: SOUND_MOVIE_WHOOSH at 0.75 (actor time).'''


def _scene_hand(fname):
    bg, tx = 'actor01_IMAGE_MOVIE_BG', 'actor00_TEXT_CHAPTER1_TITLE'
    return [(fname, '0.75', bg, [0, 1, 4, 5], [0.8838835, 0.5303301, -0.8838835, 0.5303301]),
            (fname, '1', bg, [0, 1, 4, 5], [0.5833333, 0.7216878, -1.0103630, 0.4166667]),
            (fname, '1.5', bg, [0, 1, 4, 5], [1, 0, 0, 1]),
            (fname, '3', bg, [0, 1, 4, 5], [1, 0, 0, 1]),
            (fname, '0.375', tx, [3, 7], [547.5, 281.25]),
            (fname, '3', tx, [3, 7], [606.6666667, 246.6666667]),
            (fname, '4', tx, [3, 7], [620, 240])]


PROSE['scene.movie.binltl'] = ('a 2-actor BinMovie: text actor + looping image actor (binltl)', '''
How it was made: make_fixtures.py, scene_movie() packed by pack_movie() with
the binltl layout: header (20 bytes) -> 2 BinActors (20..83) -> ppAnims
ptr[2] (84..91) -> movie string table (92..139) -> actor 0's anim (140..507)
-> actor 1's anim (508..859). ppAnims holds 140 and 508 (offsets from the
file start); inside each anim every pointer is relative to that anim's start.
''' + SCENE_MADE)
HANDWORK['scene.movie.binltl'] = SCENE_HAND
HAND += _scene_hand('scene.movie.binltl')

PROSE['sceneuni.movie.binuni'] = ('the scene movie in the WoG 1.5 binuni layout', '''
How it was made: make_fixtures.py, scene_movie() packed by pack_movie() with
the binuni layout: "BINUNIMO", f32 length, i32 numActors, u64 pActors,
ppAnims, pStringTable (header 0x28 = 40 bytes) -> 2 BinActors (40..103) ->
ppAnims u64[2] (104..119) -> string table (120..167) -> actor 0's anim at 168
(starts with its own "BINUNIAN", 476 bytes, ends at 644) -> 4 zero bytes ->
actor 1's anim at 648 (460 bytes). Inside each anim the pointers are u64 and
relative to the anim's magic.
''' + SCENE_MADE + '''
The expectations are those of scene.movie.txt with layout binuni.''')
HANDWORK['sceneuni.movie.binuni'] = SCENE_HAND.replace('Hand evaluation', 'Hand evaluation (as in scene.movie.txt)')
HAND += _scene_hand('sceneuni.movie.binuni')

PROSE['bad_ptr.anim.binltl'] = ('frameTimes pointer past the end: fails at 0x1C', '''
How it was made: make_fixtures.py, build(): rot_1rps.anim.binltl (220 bytes)
with the u32 at 0x1C (mFrameTimes) changed from 56 (38 00 00 00) to 0x1000 =
4096 (00 10 00 00). Nothing else differs.

What it must decode to: nothing. The pointer leads 3876 bytes past the end of
the 220-byte file (docs/formats/world_of_goo.md section 1, reader checks:
every pointer < size), so the reader fails at the field that holds it,
offset 0x1C = 28.''')

PROSE['bad_next.anim.binltl'] = ('a nextFrameIndex that points back to an earlier slot (cycle): fails at 424', '''
How it was made: make_fixtures.py, build(): xform.anim.binltl (884 bytes)
with one int changed. The ROTATE channel has keys in slots 1, 3, 4, 5; its
slot-3 keyframe is at 404 and its nextFrameIndex (keyframe + 0x14 = 424)
should be 4. It is set to 1 (01 00 00 00), the channel's earlier slot 1,
whose own nextFrameIndex is 3: the chain 1 -> 3 -> 1 -> ... is a cycle.

What it must decode to: nothing. docs/formats/world_of_goo.md section 1:
nextFrameIndex must be -1 or in (current, nF) and name the next non-null slot
(GooTool validateFrameList).
The bad value is the int at offset 424.''')

PROSE['bad_interp.anim.binltl'] = ('interpolation 7 on a used key: fails at 592', '''
How it was made: make_fixtures.py, build(): xform.anim.binltl (884 bytes)
with one int changed: the TRANSLATE key of slot 3 (keyframe at 564, value
(40,20), LINEAR) gets interpolation 7 (07 00 00 00) at 564 + 0x1C = 592.

What it must decode to: nothing. Interpolation must be 0 (NONE) or 1 (LINEAR)
(docs/formats/world_of_goo.md section 1). The bad value is the int at offset
592.''')

PROSE['bad_type.anim.binltl'] = ('transform type 5: fails at 56', '''
How it was made: make_fixtures.py, build(): xform.anim.binltl (884 bytes)
with transformTypes[1] (the int at 52 + 4 = 56, ROTATE = 1) changed to 5.

What it must decode to: nothing. TransformType is SCALE 0, ROTATE 1 or
TRANSLATE 2 (docs/formats/world_of_goo.md section 1). The bad value is the int
at offset 56.''')

PROSE['bad_times.anim.binltl'] = ('a frame time smaller than the previous one: fails at 76', '''
How it was made: make_fixtures.py, build(): xform.anim.binltl (884 bytes)
with frameTimes[3] (the float at 64 + 12 = 76) changed from 1.0 (00 00 80 3F)
to 0.375 (00 00 C0 3E). The times become 0, 0.25, 0.5, 0.375, 1.5, 2.0.

What it must decode to: nothing. frameTimes must be non-decreasing
(docs/formats/world_of_goo.md section 1; equal times are allowed, see
steps.anim.binltl). The first time smaller than its predecessor is
frameTimes[3], at offset 76.''')

PROSE['truncated.anim.binltl'] = ('rot_1rps cut to 40 bytes: fails at 40', '''
How it was made: make_fixtures.py, build(): the first 40 bytes of
rot_1rps.anim.binltl. They hold the six ints (0..23) and the first four
pointers (24..39: 52, 56, 68, 84).

What it must decode to: nothing. The 52-byte header does not fit. The first
field that does not fit is mColorFrames at 0x28 = 40.''')

PROSE['bad_embedded.movie.binltl'] = ('a keyframe pointer of actor 0 that leaves actor 0\'s anim: fails at 216', '''
How it was made: make_fixtures.py, build(): scene.movie.binltl (860 bytes)
with one u32 changed. Actor 0's anim starts at 140 and ends where actor 1's
anim starts, at 508. Its TRANSLATE pointer array is at 140 + 76 = 216; slot
0 held 144 (relative to 140, i.e. the keyframe at absolute 284). It now holds
528, relative to 140 = absolute 668: actor 1's first keyframe (its SCALE key
of slot 0). The target is 4-aligned, inside the file and a well-formed
keyframe, so only the extent check catches it.

What it must decode to: nothing. Every pointer inside an embedded anim is
relative to that anim and must stay inside the anim's own extent, which ends
where the next anim starts (docs/formats/world_of_goo.md section 2: do not
assume the anims are contiguous; follow the pointers but stay inside the
anim). The bad value is the pointer slot at absolute offset 216.''')

PROSE['bad_actor_ptr.movie.binltl'] = ('a ppAnims entry past the end of the file: fails at 88', '''
How it was made: make_fixtures.py, build(): scene.movie.binltl (860 bytes)
with ppAnims[1] (the u32 at 84 + 4 = 88) changed from 508 to 0x10000 = 65536.

What it must decode to: nothing. The entry points far past the 860-byte file
(docs/formats/world_of_goo.md section 2: ppAnims entries are offsets from
the file start). The bad value is the entry at offset 88.''')

PROSE['image.png.binltl'] = ('a Mac .png.binltl image, not an anim or movie', '''
How it was made: make_fixtures.py, mac_image(), after GooTool
MacGraphicFormat (docs/formats/world_of_goo.md section 3): a 12-byte
little-endian header u16 width = 5, u16 height = 3, u32 compressed size = 53,
u32 uncompressed size = 256, then 53 bytes of zlib.compress(level 9) data.
The raster is the square power-of-two side 8 (8 x 8 x 4 bytes = 256), BGRA,
the 5 x 3 image in the top-left corner, the rest transparent black. First
bytes: 05 00 03 00 35 00 00 00 00 01 00 00 78 DA.

What it must decode to: nothing. The name has no ".anim." or ".movie." part,
and the content fails the anim sniff too: the int at 0 is 0x00030005, not a
0/1 flag (docs/formats/world_of_goo.md section 3, detection). The importer
must not claim it.''')


if __name__ == '__main__':
    sys.exit(main())
