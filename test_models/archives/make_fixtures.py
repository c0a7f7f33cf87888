#!/usr/bin/env python3
"""Writes the archive fixtures byte by byte from the container layouts (SI:
docs/formats/lego_island.md §7; Metroid Prime 1 pak: docs/formats/metroid_prime.md
§11, the layout the public AxioDL/metaforce and PrimeWorldEditor readers use), with struct.pack and zlib
only: independent of retroanim's own writers.  The payloads are the loose fixtures
of test_models/lego_island and test_models/metroid_prime, so a test can
compare an archive's animation with the same loose file.

  tiny.si       one LegoAnimPresenter object (type 11, " OBJ"), one data chunk
  several.si    bufferSize 256: a parallel composite (LegoAnimMMPresenter)
                holding three animations and a sound object; data chunks split
                at buffer ends (SPLIT flag + total size) and interleaved, the
                boundary gaps filled with "pad " chunks or left as bare filler
                (< 8 bytes), location/direction/up/extra set
  tiny.pak      one uncompressed ANIM, no ANCS (listed unnamed)
  several.pak   an ANCS (zlib) naming two ANIMs (one zlib, one stored) with
                the CINF of its first character, a third ANIM named only in
                the named-resource table, a duplicate resource entry, 0xFF padding

Metroid Prime 2 (Echoes, docs/formats/metroid_prime.md §11): the same container;
a compressed resource is a u32 size and one segment per 0x4000-byte piece
(s16 length: > 0 an LZO1X stream of the piece, < 0 the piece stored).  The
LZO1X streams come from the small greedy compressor below (literal runs, M1
after a literal run, M2, M3 with length extensions, overlapping runs; M4 only
as the end marker 11 00 00, since a match never reaches further back than one
0x4000 piece) and each is decoded by liblzo2 (lzo1x_decompress_safe, ctypes)
and by the decoder below before it is written.
  echoes.pak    [0x8A3F0001] ANCS "splinter" (LZO, 1 segment): character
                  Splinter (sectionCount 10, every list filled, CINF
                  0x8A3F2001), animations "sway" = primitive splinter_sway
                  (0x8A3F1001) and "sway_long" = blend of splinter_long
                  (0x8A3F1002) and splinter_sway again (as
                  splinter_sway_again), transitions, additive and half
                  transitions, two embedded EVNTs (version 1)
                [0x8A3F1001] ANIM v2_mp2.anim (LZO, 1 segment)
                [0x8A3F2001] CINF v2_mp2.cinf (LZO, 1 segment)
                [0x8A3F1002] ANIM echoes_long.anim (LZO, 3 segments: LZO
                  7438 bytes, stored 0x4000, LZO 3152 bytes)
                [0x5C770001] ANCS (stored): character Crawler (sectionCount
                  10, empty lists, CINF 0x5C772001), "twist" = primitive
                  crawler_twist (0x5C771001)
                [0x5C771001] ANIM v0_mp2.anim (stored)
                [0x5C772001] CINF v0_mp2.cinf (stored)
  echoes_long.anim  the loose 41856-byte Echoes ANIM (version 0, 372 keys,
                32 a second, for bones 0, 1, 4, 5 of v2_mp2.cinf): constant
                scales and ramped translations around jittery rotations that
                LZO cannot shrink
  echoes_bad_segment.pak  the ANCS's segment length (at 196) says 347 bytes,
                346 follow it in its entry
  echoes_bad_lzo.pak  splinter_sway's stream (at 550): its first match (an M2
                after 4 literals) has its high distance byte set to 0xFF
  echoes_bad_stored.pak  splinter_long's size word says 0x7FE0: its stored
                segment (length at 8276) is 0x20 longer than what is left
Run from this folder: python3 make_fixtures.py (needs liblzo2.so.2)"""
import ctypes
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
LEGO = os.path.join(HERE, "..", "lego_island")
MP = os.path.join(HERE, "..", "metroid_prime")


def rd(*p):
    with open(os.path.join(*p), "rb") as f:
        return f.read()


# ---- SI ---------------------------------------------------------------------
def chunk(cc, body):
    return cc + struct.pack("<I", len(body)) + body + (b"\0" if len(body) & 1 else b"")


def cstr(s):
    return s.encode() + b"\0"


def mxob(typ, presenter, name, oid, loc=(0, 0, 0), dirn=(0, 0, 1), up=(0, 1, 0), extra=b"", media=None, children=None):
    b = struct.pack("<H", typ) + cstr(presenter) + struct.pack("<I", 0) + cstr(name)
    b += struct.pack("<IIIii", oid, 0, 0, -1, 1)
    b += struct.pack("<9d", *loc, *dirn, *up)
    b += struct.pack("<H", len(extra)) + extra
    if media is not None:  # media action: path, 3 x u32, file type, 2 x u32 (+ volume for WAV)
        path, ftype = media
        b += cstr(path) + struct.pack("<III", 0, 0, 0) + ftype + struct.pack("<II", 0, 0)
        if ftype == b" WAV":
            b += struct.pack("<I", 100)
    if children is not None:  # LIST MxCh: u32 count, then the child MxOb chunks
        b += chunk(b"LIST", b"MxCh" + struct.pack("<I", len(children)) + b"".join(children))
    return chunk(b"MxOb", b)


def mxch(flags, oid, total, data):
    return chunk(b"MxCh", struct.pack("<HIII", flags, oid, 0, total) + data)


class SiOut:
    """Lays chunks out in buffers: a chunk never starts within 8 bytes of a
    buffer's end; the gap is a "pad " chunk, or bare filler when < 8 bytes."""

    def __init__(self, buf, start):
        self.buf, self.pos, self.out = buf, start, b""

    def room(self):
        return self.buf - self.pos % self.buf

    def gap(self, need):
        left = self.room()
        if left >= need or left == self.buf:
            return
        self.put(b"\xcd" * left if left < 8 else b"pad " + struct.pack("<I", left - 8) + b"\xcd" * (left - 8))

    def put(self, b):
        self.out += b
        self.pos += len(b)

    def data(self, oid, payload):
        """the object's data: split where a buffer ends"""
        off, first = 0, True
        while off < len(payload):
            self.gap(8 + 14 + 1)
            room = self.room() - 8 - 14
            piece = payload[off:off + room]
            split = not first or len(payload) > room
            self.put(mxch(0x10 if split else 0, oid, len(payload), piece))
            off += len(piece)
            first = False
        self.gap(8 + 14 + 1)
        self.put(mxch(0x02, oid, 0, b""))


def si_file(buf, streams):
    """streams: list of (mxob bytes, [(oid, payload)])"""
    hd = chunk(b"MxHd", struct.pack("<IIHH", 0x00020002, buf, 1, 0))
    of_len = 8 + 4 + 4 * len(streams)
    start = 12 + len(hd) + of_len + 12  # RIFF hdr + MxHd + MxOf + LIST hdr
    o = SiOut(buf, start)
    offsets = []
    for ob, datas in streams:
        o.gap(64)
        offsets.append(o.pos)
        inner = SiOut(buf, o.pos + 8)
        inner.put(ob)
        inner.gap(12)
        da = SiOut(buf, inner.pos + 12)
        for oid, payload in datas:
            da.data(oid, payload)
        inner.put(chunk(b"LIST", b"MxDa" + da.out))
        o.put(chunk(b"MxSt", inner.out))
    of = chunk(b"MxOf", struct.pack("<I", len(streams)) + b"".join(struct.pack("<I", x) for x in offsets))
    body = b"OMNI" + hd + of + chunk(b"LIST", b"MxSt" + o.out)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def write_si():
    minimal, hierarchy, camera = rd(LEGO, "minimal.ani"), rd(LEGO, "hierarchy.ani"), rd(LEGO, "camera.ani")
    tiny = si_file(0x10000, [(mxob(11, "LegoAnimPresenter", "minimal", 1, media=("minimal", b" OBJ")), [(1, minimal)])])
    with open(os.path.join(HERE, "tiny.si"), "wb") as f:
        f.write(tiny)
    kids = [
        mxob(11, "LegoAnimPresenter", "walk", 10, loc=(1.5, 0, -2), dirn=(0, 0, 1), up=(0, 1, 0),
             extra=b"ptatcam:cam0\0", media=("walk", b" OBJ")),
        mxob(11, "LegoLoopingAnimPresenter", "hierarchy", 11, media=("hierarchy", b" OBJ")),
        mxob(4, "MxWavePresenter", "sound", 12, media=("sound", b" WAV")),
        mxob(11, "LegoLocomotionAnimPresenter", "camera", 13, loc=(0, 2, 0), media=("camera", b" OBJ")),
    ]
    comp = mxob(7, "LegoAnimMMPresenter", "scene", 9, children=kids)
    several = si_file(256, [(comp, [(10, minimal), (11, hierarchy), (12, b"RIFF-not-parsed" * 3), (13, camera)])])
    with open(os.path.join(HERE, "several.si"), "wb") as f:
        f.write(several)


# ---- pak --------------------------------------------------------------------
def pad32(b):
    return b + b"\xff" * (-len(b) % 32)


def pak_file(resources, named):
    """resources: (type, id, bytes, compress); named: (type, id, name)"""
    return pak_layout([(t, i, struct.pack(">I", len(data)) + zlib.compress(data, 9) if comp else data, comp)
                       for t, i, data, comp in resources], named)


def pak_layout(entries, named):
    """entries: (type, id, stored bytes, compressed flag), each padded with 0xFF
    to 32 bytes; named: (type, id, name)"""
    stored = [pad32(s) for _, _, s, _ in entries]
    head = struct.pack(">II", 0x00030005, 0) + struct.pack(">I", len(named))
    for t, i, n in named:
        head += t + struct.pack(">II", i, len(n)) + n.encode()
    head += struct.pack(">I", len(entries))
    off = len(head) + 20 * len(entries)
    off += -off % 32
    for (t, i, _, comp), s in zip(entries, stored):
        head += struct.pack(">I", 1 if comp else 0) + t + struct.pack(">III", i, len(s), off)
        off += len(s)
    return pad32(head) + b"".join(stored)


def mstr(s):
    return s.encode() + b"\0"


def ancs(cinf_id, prims):
    """one MP1 character (sections 1) and an animation set (sections 4) whose
    animations are primitives (type 0) except one blend of the first two"""
    ch = struct.pack(">IH", 0, 1) + mstr("Samus") + struct.pack(">III", 0x100, 0x200, cinf_id)
    ch += struct.pack(">I", 0)                               # animation names
    ch += b"PAS4" + struct.pack(">II", 1, 0)                 # PAS: one state
    ch += struct.pack(">III", 7, 1, 1)                       # id, 1 parameter, 1 info
    ch += struct.pack(">IIf", 3, 0, 1.0) + b"\x00\x01"      # a bool parameter: 1-byte range
    ch += struct.pack(">I", 0) + b"\x01"                     # info: id, bool value
    ch += struct.pack(">I", 0) * 3                           # PART, SWHC, unknown particle lists
    ch += struct.pack(">I", 0)                               # unk1
    body = struct.pack(">HHI", 1, 1, 1) + ch
    s = struct.pack(">HI", 4, len(prims))
    for k, (anim_id, name) in enumerate(prims):
        s += mstr("set_" + name)
        if k == 0 and len(prims) > 1:  # a blend of primitives 0 and 1 under the first name
            s += struct.pack(">I", 1)
            for j in (0, 1):
                s += struct.pack(">III", 0, prims[j][0], j) + mstr(prims[j][1]) + struct.pack(">fI", 1.0, 0)
            s += struct.pack(">f", 0.5) + b"\x00"
        else:
            s += struct.pack(">III", 0, anim_id, k) + mstr(name) + struct.pack(">fI", 1.0, 0)
    s += struct.pack(">I", 0)            # transitions
    s += struct.pack(">I", 3)            # default transition: none
    s += struct.pack(">I", 0) + struct.pack(">ff", 0, 0)   # additive (sect > 1)
    s += struct.pack(">I", 0)            # half transitions (sect > 2)
    s += struct.pack(">I", len(prims))   # resources (sect > 3)
    for anim_id, _ in prims:
        s += struct.pack(">II", anim_id, 0xFFFFFFFF)
    return body + s


def write_pak():
    upper_anim, upper_cinf = rd(MP, "upper.ANIM"), rd(MP, "upper.CINF")
    v2 = rd(MP, "v2_mp1.anim")
    with open(os.path.join(HERE, "tiny.pak"), "wb") as f:
        f.write(pak_file([(b"ANIM", 0x1001, v2, False)], []))
    a = ancs(0x3000, [(0x2001, "upper_walk"), (0x2002, "upper_idle")])
    res = [
        (b"ANCS", 0x4000, a, True),
        (b"ANIM", 0x2001, upper_anim, True),
        (b"ANIM", 0x2002, upper_anim, False),
        (b"CINF", 0x3000, upper_cinf, False),
        (b"ANIM", 0x2002, upper_anim, False),  # the same asset again: the first one counts
        (b"ANIM", 0x2003, v2, True),
        (b"TXTR", 0x5000, b"\x01" * 100, False),
    ]
    with open(os.path.join(HERE, "several.pak"), "wb") as f:
        f.write(pak_file(res, [(b"ANIM", 0x2003, "loose_v2"), (b"ANCS", 0x4000, "samus")]))


# ---- Echoes (Metroid Prime 2) pak: LZO1X segments -----------------------------
# A compressed Echoes resource: u32 decompressed size, then segments, one per
# 0x4000-byte piece of the resource: s16 length > 0, an LZO1X stream of that
# many bytes inflating to the piece (each stream starts with an empty window),
# or < 0, the piece stored as it is (when LZO does not make it smaller).
PIECE = 0x4000


def _ext(v):
    """the LZO1X run-length extension of v >= 1: a zero per 255, then the rest (1..255)"""
    zeros = (v - 1) // 255
    return b"\0" * zeros + bytes([v - 255 * zeros])


def lzo1x_compress(src):
    """A greedy LZO1X compressor (matches only inside src: one piece).
    Returns (stream, matches), matches = [(instruction offset, kind, distance,
    length, bytes produced before it)] for the fixtures' bookkeeping."""
    n = len(src)
    heads = {}

    def insert(j):
        if j + 3 <= n:
            heads.setdefault(src[j:j + 3], []).append(j)

    def cost(d, ln, pending):
        if pending >= 4 and ln == 3 and 2049 <= d <= 3072:
            return 2                                  # M1 after a literal run
        if ln <= 8 and d <= 2048:
            return 2                                  # M2
        return 3 + (len(_ext(ln - 33)) if ln - 2 > 31 else 0)   # M3 (d <= 0x4000 inside a piece)

    tokens, i, lit = [], 0, 0
    while i + 3 <= n:
        best_l = best_d = 0
        for p in reversed(heads.get(src[i:i + 3], [])[-48:]):   # nearest first
            d = i - p
            if d > PIECE:
                break
            ln = 3
            while i + ln < n and src[p + ln] == src[i + ln]:   # may overlap i: a run
                ln += 1
            if ln > best_l:
                best_l, best_d = ln, d
        if best_l and cost(best_d, best_l, i - lit) < best_l:
            tokens.append((lit, i, best_d, best_l))
            for j in range(i, i + best_l):
                insert(j)
            i += best_l
            lit = i
        else:
            insert(i)
            i += 1
    tokens.append((lit, n, None, None))

    out, matches = bytearray(), []

    def literals(a, b, state):
        """literals src[a:b] after an instruction that left `state`; returns the new state"""
        k = b - a
        if k == 0:
            return state
        if k <= 3:                                    # carried by the previous match's low bits
            out.extend(src[a:b])
            return k
        out.extend(bytes([k - 3]) if k <= 18 else b"\0" + _ext(k - 18))
        out.extend(src[a:b])
        return 4

    a0, b0 = tokens[0][0], tokens[0][1]
    if 0 < b0 - a0 <= 238:                            # the first byte's own literal run
        out.append(17 + b0 - a0)
        out.extend(src[a0:b0])
        state = min(b0 - a0, 4)
    else:
        state = literals(a0, b0, 0)
    for k, (a, b, d, ln) in enumerate(tokens[:-1]):
        na, nb = tokens[k + 1][0], tokens[k + 1][1]
        s = nb - na if nb - na <= 3 else 0
        at = len(out)
        if state == 4 and ln == 3 and 2049 <= d <= 3072:
            x = d - 2049
            out.extend([(x & 3) << 2 | s, x >> 2])
            kind = "M1"
        elif ln <= 8 and d <= 2048:
            x = d - 1
            out.extend([(ln - 1) << 5 | (x & 7) << 2 | s, x >> 3])
            kind = "M2"
        elif d <= 0x4000:
            out.extend([32 | (ln - 2)] if ln - 2 <= 31 else b"\x20" + _ext(ln - 2 - 31))
            le = (d - 1) << 2 | s
            out.extend([le & 0xFF, le >> 8])
            kind = "M3"
        else:                                         # never inside one 0x4000 piece
            x = d - 0x4000
            t = 16 | (x >> 14 & 1) << 3
            out.extend([t | (ln - 2)] if ln - 2 <= 7 else bytes([t]) + _ext(ln - 2 - 7))
            le = (x & 0x3FFF) << 2 | s
            out.extend([le & 0xFF, le >> 8])
            kind = "M4"
        matches.append((at, kind, d, ln, b))
        state = literals(na, nb, 0) if s == 0 else literals(na, nb, state)
    out.extend(b"\x11\x00\x00")                       # M4 of distance 0x4000: the end
    return bytes(out), matches


class LzoError(Exception):
    pass


def lzo1x_decompress(src, size):
    """LZO1X decoding written from the instruction set alone (no liblzo):
    exactly `size` bytes, every distance inside what this stream produced,
    every read inside src, nothing after the end marker."""
    out = bytearray()
    i = 0

    def byte():
        nonlocal i
        if i >= len(src):
            raise LzoError("input overrun")
        i += 1
        return src[i - 1]

    def ext(base):
        while True:
            b = byte()
            if b:
                return base + b
            base += 255

    def lits(k):
        nonlocal i
        if i + k > len(src):
            raise LzoError("input overrun")
        if len(out) + k > size:
            raise LzoError("output overrun")
        out.extend(src[i:i + k])
        i += k

    state = 0
    if src and src[0] > 17:
        i = 1
        lits(src[0] - 17)
        state = min(src[0] - 17, 4)
    while True:
        t = byte()
        if t < 16:
            if state == 0:                            # literal run
                lits((ext(15) if t == 0 else t) + 3)
                state = 4
                continue
            h = byte()
            if state < 4:
                ln, d = 2, (h << 2) + (t >> 2) + 1
            else:
                ln, d = 3, (h << 2) + (t >> 2) + 2049
            s = t & 3
        elif t < 32:                                  # M4
            ln = (ext(7) if t & 7 == 0 else t & 7) + 2
            le = byte() | byte() << 8
            d = 0x4000 + ((t & 8) << 11) + (le >> 2)
            if d == 0x4000:
                if i != len(src):
                    raise LzoError("bytes after the end marker")
                if len(out) != size:
                    raise LzoError("ends after %d of %d bytes" % (len(out), size))
                return bytes(out)
            s = le & 3
        elif t < 64:                                  # M3
            ln = (ext(31) if t & 31 == 0 else t & 31) + 2
            le = byte() | byte() << 8
            d, s = (le >> 2) + 1, le & 3
        else:                                         # M2
            h = byte()
            ln, d, s = (t >> 5) + 1, (h << 3) + (t >> 2 & 7) + 1, t & 3
        if d > len(out):
            raise LzoError("look-behind overrun: distance %d after %d bytes" % (d, len(out)))
        if len(out) + ln > size:
            raise LzoError("output overrun")
        for _ in range(ln):                           # byte by byte: a run may overlap
            out.append(out[-d])
        lits(s)
        state = s


_LZO = None


def liblzo_decompress(src, size):
    """liblzo2's lzo1x_decompress_safe through ctypes: (status, bytes)"""
    global _LZO
    if _LZO is None:
        _LZO = ctypes.CDLL("liblzo2.so.2")
        z = ctypes.sizeof
        ptr, sz = z(ctypes.c_void_p), z(ctypes.c_size_t)
        ok = _LZO.__lzo_init_v2(_LZO.lzo_version(), z(ctypes.c_short), z(ctypes.c_int), z(ctypes.c_long), 4, sz,
                                ptr, ptr, ptr, 4 * ptr + 2 * sz)   # lzo_init(); the callback struct: 4 pointers, 2 xints
        assert ok == 0, "liblzo2: lzo_init failed (%d)" % ok
        _LZO.lzo1x_decompress_safe.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                               ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
    dst = ctypes.create_string_buffer(size + 1)
    got = ctypes.c_size_t(size)
    r = _LZO.lzo1x_decompress_safe(src, len(src), dst, ctypes.byref(got), None)
    return r, dst.raw[:got.value]


def check_lzo(stream, piece):
    """both decoders give the piece back"""
    r, got = liblzo_decompress(stream, len(piece))
    assert r == 0 and got == piece, "liblzo2 disagrees (%d, %d of %d bytes)" % (r, len(got), len(piece))
    assert lzo1x_decompress(stream, len(piece)) == piece, "the Python decoder disagrees"


def lzo_resource(data, store=()):
    """u32 size + a segment per 0x4000-byte piece: LZO1X when that is smaller
    than the piece, else stored (negative length).  Returns (bytes, segments),
    segments = [(offset of the length in the resource, length, matches)]."""
    out, segs = struct.pack(">I", len(data)), []
    for k in range(0, len(data), PIECE):
        piece = data[k:k + PIECE]
        stream, matches = lzo1x_compress(piece)
        check_lzo(stream, piece)
        if len(stream) < len(piece):
            segs.append((len(out), len(stream), matches))
            out += struct.pack(">h", len(stream)) + stream
        else:
            segs.append((len(out), -len(piece), []))
            out += struct.pack(">h", -len(piece)) + piece
    return out, segs


def lzo_selftest():
    """the codec against liblzo2 on the cases the fixtures rely on"""
    cases = [b"", b"a", b"abc", b"abcd" * 300, b"\xff" * 5000, bytes(range(256)) * 9,
             b"x" * 3 + b"y" * 300 + b"xyz" * 10, bytes(2500) + b"q" * 7 + bytes(3000)]
    seed = 12345
    rnd = bytearray()
    for _ in range(3000):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        rnd.append(seed >> 16 & 0xFF)
    cases += [bytes(rnd), bytes(rnd[:300]) + bytes(rnd[:300]) + b"\0" * 2200 + bytes(rnd[:4]) + bytes(rnd[1000:1100]),
              b"\0" * 300 + bytes(rnd[:2400]) + bytes(rnd[:3]) + b"\1" * 40]
    kinds = set()
    for c in cases:
        stream, matches = lzo1x_compress(c)
        check_lzo(stream, c)
        kinds |= {m[1] for m in matches}
    assert {"M1", "M2", "M3"} <= kinds, kinds
    # hand-encoded: 3 literals (first byte 17+3), an overlapping M2 run
    # (distance 1, 8 bytes), an M3 of 40 bytes (T 0x20, ext(31) = 31 + 7) at
    # distance 10 with one trailing literal, the end marker
    hand = bytes([20]) + b"abc" + bytes([7 << 5 | 0 << 2 | 0, 0]) + bytes([32, 7]) + struct.pack("<H", 9 << 2 | 1) + \
        b"Z" + b"\x11\x00\x00"
    want = b"abc" + b"c" * 8 + (b"b" + b"c" * 9) * 4 + b"Z"
    r, got = liblzo_decompress(hand, len(want))
    assert r == 0 and got == want and lzo1x_decompress(hand, len(want)) == want
    # a match before the start: liblzo2 LZO_E_LOOKBEHIND_OVERRUN (-6), ours refuses
    bad = bytes([21]) + b"abcd" + bytes([2 << 5 | 7 << 2, 0]) + b"\x11\x00\x00"
    assert liblzo_decompress(bad, 7)[0] == -6
    try:
        lzo1x_decompress(bad, 7)
        raise AssertionError("look-behind accepted")
    except LzoError:
        pass


# ---- Echoes ANIM (version 0, Prime 2 layout) and ANCS ------------------------
def v0_mp2_anim(chans, keys, interval, root):
    """chans: (bone, rot, trans, scale) with per-key lists or None (channel order)"""
    out = struct.pack(">IfIfIIII", 0, (keys - 1) * interval, 0, interval, 0, keys, root, 100)
    bmap = [0xFF] * 100
    for c, ch in enumerate(chans):
        bmap[ch[0]] = c
    out += bytes(bmap)
    arrays = []
    for kind in (1, 2, 3):                            # rotation, translation, scale maps
        m, n = [], 0
        for ch in chans:
            m.append(0xFF if ch[kind] is None else n)
            n += ch[kind] is not None
        out += struct.pack(">I", len(chans)) + bytes(m)
    for kind in (3, 1, 2):                            # scale, rotation, translation keys
        ks = [k for ch in chans if ch[kind] is not None for k in ch[kind]]
        out += struct.pack(">I", len(ks)) + b"".join(struct.pack(">%df" % len(k), *k) for k in ks)
    return pad32(out)


def long_anim():
    """~40 KiB: constant scales and ramped translations (LZO shrinks them) around
    jittery rotations (nothing for LZO to find: a stored piece)"""
    seed = 0x2468ACE1

    def rnd():
        nonlocal seed
        seed ^= seed << 13 & 0xFFFFFFFF
        seed ^= seed >> 17
        seed ^= seed << 5 & 0xFFFFFFFF
        return seed / 2.0 ** 31 - 1.0

    def quats(n):
        """within ~25 degrees of the rest pose: consecutive keys never turn the long way"""
        qs = []
        for _ in range(n):
            q = [1.0] + [rnd() / 4 for _ in range(3)]
            m = math.sqrt(sum(c * c for c in q))
            qs.append(tuple(c / m for c in q))
        return qs

    K = 372
    chans = [(0, quats(K), [(j / 256.0, 0.0, 0.5) for j in range(K)], [(1.0, 1.0, 1.0)] * K),
             (1, quats(K), [(0.0, j / 512.0, 0.5) for j in range(K)], [(1.0, 1.0, 1.0)] * K),
             (4, quats(K), None, None),
             (5, quats(K), None, None)]
    return v0_mp2_anim(chans, K, 1.0 / 32.0, 0)        # 32 keys/s: the duration 371/32 s is exact


def prim(anim_id, index, name):
    return struct.pack(">III", 0, anim_id, index) + mstr(name) + struct.pack(">fI", 1.0, 0)


def echoes_character(index, name, cinf_id, anim_names, full):
    """one Echoes character (sectionCount 10); full: every list filled"""
    f6 = lambda *v: struct.pack(">6f", *v)
    ch = struct.pack(">IH", index, 10) + mstr(name) + struct.pack(">III", 0x11110000 + index, 0x22220000 + index,
                                                                     cinf_id)
    ch += struct.pack(">I", len(anim_names))
    for k, n in enumerate(anim_names):                # Echoes: one string per animation
        ch += struct.pack(">I", k) + mstr(n)
    if full:
        ch += b"PAS4" + struct.pack(">II", 2, 0)      # two states, default 0
        ch += struct.pack(">III", 0, 2, 2)            # state 0: 2 parameters, 2 infos
        ch += struct.pack(">IIf", 3, 0, 1.0) + b"\x00\x01"                     # bool: 1-byte range
        ch += struct.pack(">IIfff", 2, 1, 0.5, 0.0, 10.0)                      # real: 4-byte range
        ch += struct.pack(">I", 0) + b"\x01" + struct.pack(">f", 2.5)          # infos: id, bool, real
        ch += struct.pack(">I", 1) + b"\x00" + struct.pack(">f", 7.0)
        ch += struct.pack(">III", 1, 0, 0)            # state 1: empty
        ch += struct.pack(">III", 2, 0x33330001, 0x33330002)                   # PART
        ch += struct.pack(">II", 1, 0x33330003)       # SWHC
        ch += struct.pack(">I", 0)                    # unknown
        ch += struct.pack(">II", 1, 0x33330004)       # ELSC
        ch += struct.pack(">II", 1, 0x33330005)       # SPSC
        ch += struct.pack(">II", 0, 0)                # two unknown words
        ch += struct.pack(">I", len(anim_names))      # AABBs
        for n in anim_names:
            ch += mstr(n) + f6(-1, -1, 0, 1, 1, 2.5)
        ch += struct.pack(">I", 1) + mstr("sparks") + struct.pack(">I", 2)      # one effect, two components
        for k in (0, 1):
            ch += mstr("spark%d" % k) + b"PART" + struct.pack(">IIfII", 0x33330001 + k, 4, 1.0, 1, 0)
        ch += struct.pack(">II", 0x11120000 + index, 0x22230000 + index)        # frozen CMDL, CSKR
        ch += struct.pack(">I", len(anim_names)) + b"".join(struct.pack(">I", k) for k in range(len(anim_names)))
        ch += struct.pack(">I", 0x44440000 + index) + b"\x01"                   # CSPP, u8
        ch += struct.pack(">I", len(anim_names))      # extents
        for k in range(len(anim_names)):
            ch += struct.pack(">I", k) + f6(-2, -2, 0, 2, 2, 3)
    else:
        ch += b"PAS4" + struct.pack(">II", 0, 0)
        ch += struct.pack(">IIIIIII", 0, 0, 0, 0, 0, 0, 0)   # PART, SWHC, u32, ELSC, SPSC, u32, u32
        ch += struct.pack(">II", 0, 0)                # AABBs, effects
        ch += struct.pack(">II", 0xFFFFFFFF, 0xFFFFFFFF)
        ch += struct.pack(">I", 0)                    # animation indices
        ch += struct.pack(">I", 0xFFFFFFFF) + b"\x00" + struct.pack(">I", 0)
    return ch


def evnt(loop_event):
    """an embedded EVNT, version 1: loop, user and particle event lists"""
    e = struct.pack(">II", 1, 1 if loop_event else 0)
    if loop_event:                                    # base: u16, name, u16 type, time, u32 state, u32 index,
        e += struct.pack(">H", 0) + mstr("loop") + struct.pack(">HfIIBfiI", 0, 0.25, 0, 0, 0, 1.0, -1, 0)
        e += b"\x01"                                  # u8 unique, f32 weight, s32 character, u32 flags; bool
    return e + struct.pack(">II", 0, 0)


def echoes_ancs(character, animations, full):
    """ANCS v1 with one character and an animation set of sectionCount 4;
    animations: (name, MetaAnim bytes)"""
    a = struct.pack(">HHI", 1, 1, 1) + character
    a += struct.pack(">HI", 4, len(animations))
    for name, meta in animations:
        a += mstr(name) + meta
    if full:
        a += struct.pack(">I", 1) + struct.pack(">III", 0, 0, 1)                 # a transition 0 -> 1
        a += struct.pack(">IfIBBI", 1, 0.25, 0, 0, 1, 0)                       # MetaTrans 1
        a += struct.pack(">I", 3)                                               # default: snap
        a += struct.pack(">I", 1) + struct.pack(">Iff", 1, 0.1, 0.2) + struct.pack(">ff", 0.15, 0.25)   # additive
        a += struct.pack(">I", 1) + struct.pack(">I", 1) + struct.pack(">IfIBBI", 2, 0.5, 0, 1, 0, 0)   # half
    else:
        a += struct.pack(">I", 0) + struct.pack(">I", 3)
        a += struct.pack(">I", 0) + struct.pack(">ff", 0, 0)
        a += struct.pack(">I", 0)
    a += struct.pack(">I", len(animations))           # the EVNTs, one per animation
    for k in range(len(animations)):
        a += evnt(full and k == 1)
    return a


ANCS_SPLINTER, ANIM_SWAY, ANIM_LONG, CINF_SPLINTER = 0x8A3F0001, 0x8A3F1001, 0x8A3F1002, 0x8A3F2001
ANCS_CRAWLER, ANIM_TWIST, CINF_CRAWLER = 0x5C770001, 0x5C771001, 0x5C772001


def echoes_entries():
    """the echoes.pak entries and what the broken variants need to know"""
    sway, sway_cinf = rd(MP, "v2_mp2.anim"), rd(MP, "v2_mp2.cinf")
    twist, twist_cinf = rd(MP, "v0_mp2.anim"), rd(MP, "v0_mp2.cinf")
    long_ = long_anim()
    splinter = echoes_ancs(echoes_character(0, "Splinter", CINF_SPLINTER, ["sway", "sway_long"], True), [
        ("sway", prim(ANIM_SWAY, 0, "splinter_sway")),
        ("sway_long", struct.pack(">I", 1) + prim(ANIM_LONG, 1, "splinter_long") +
         prim(ANIM_SWAY, 0, "splinter_sway_again") + struct.pack(">fB", 0.5, 1)),
    ], True)
    crawler = echoes_ancs(echoes_character(0, "Crawler", CINF_CRAWLER, ["twist"], False),
                          [("twist", prim(ANIM_TWIST, 0, "crawler_twist"))], False)
    info = {}
    entries = []
    for t, i, data, comp in [(b"ANCS", ANCS_SPLINTER, splinter, True), (b"ANIM", ANIM_SWAY, sway, True),
                             (b"CINF", CINF_SPLINTER, sway_cinf, True), (b"ANIM", ANIM_LONG, long_, True),
                             (b"ANCS", ANCS_CRAWLER, crawler, False), (b"ANIM", ANIM_TWIST, twist, False),
                             (b"CINF", CINF_CRAWLER, twist_cinf, False)]:
        if comp:
            data, segs = lzo_resource(data)
            info[i] = segs
        entries.append((t, i, data, comp))
    assert [s[1] > 0 for s in info[ANIM_LONG]] == [True, False, True], info[ANIM_LONG]
    assert all(len(info[i]) == 1 and info[i][0][1] > 0 for i in (ANCS_SPLINTER, ANIM_SWAY, CINF_SPLINTER))
    return entries, info, long_


def offsets_of(pak):
    """id -> (resource table entry offset, resource offset) of a pak"""
    named = struct.unpack_from(">I", pak, 8)[0]
    at = 12
    for _ in range(named):
        at += 12 + struct.unpack_from(">I", pak, at + 8)[0]
    res = {}
    for k in range(struct.unpack_from(">I", pak, at)[0]):
        e = at + 4 + 20 * k
        res.setdefault(struct.unpack_from(">I", pak, e + 8)[0], (e, struct.unpack_from(">I", pak, e + 16)[0]))
    return res


def write_echoes():
    lzo_selftest()
    entries, info, long_ = echoes_entries()
    named = [(b"ANCS", ANCS_SPLINTER, "splinter")]
    good = pak_layout(entries, named)
    with open(os.path.join(HERE, "echoes.pak"), "wb") as f:
        f.write(good)
    with open(os.path.join(HERE, "echoes_long.anim"), "wb") as f:
        f.write(long_)
    off = offsets_of(good)
    report = []

    # the ANCS's only segment claims one byte more than its entry holds
    bad = bytearray(good)
    e, r = off[ANCS_SPLINTER]
    size = struct.unpack_from(">I", bad, e + 12)[0]
    struct.pack_into(">h", bad, r + 4, size - 4 - 2 + 1)
    with open(os.path.join(HERE, "echoes_bad_segment.pak"), "wb") as f:
        f.write(bad)
    report.append("echoes_bad_segment.pak: ANCS at %d: segment.length at %d = %d, %d bytes follow it"
                  % (r, r + 4, size - 4 - 2 + 1, size - 6))

    # splinter_sway's stream: its first match reaches back past the stream's start
    bad = bytearray(good)
    e, r = off[ANIM_SWAY]
    seg_at, seg_len, matches = info[ANIM_SWAY][0]
    at, kind, d, ln, produced = matches[0]
    stream_at = r + seg_at + 2
    if kind == "M2":        # H = (d - 1) >> 3: 0xFF reaches back >= 2041
        bad[stream_at + at + 1] = 0xFF
    else:                   # M3: the LE16 distance field's top bits
        bad[stream_at + at + 2] |= 0xFC
        bad[stream_at + at + 3] = 0xFF
    stream = bytes(bad[stream_at:stream_at + seg_len])
    assert liblzo_decompress(stream, struct.unpack_from(">I", good, r)[0])[0] == -6   # LZO_E_LOOKBEHIND_OVERRUN
    with open(os.path.join(HERE, "echoes_bad_lzo.pak"), "wb") as f:
        f.write(bad)
    report.append("echoes_bad_lzo.pak: ANIM at %d, stream at %d: %s match at stream byte %d (%d bytes produced)"
                  % (r, stream_at, kind, at, produced))

    # splinter_long claims 0x7FE0 bytes: its stored second segment (0x4000) is
    # 0x20 more than the 0x3FE0 left after the first piece
    bad = bytearray(good)
    e, r = off[ANIM_LONG]
    struct.pack_into(">I", bad, r, 0x7FE0)
    with open(os.path.join(HERE, "echoes_bad_stored.pak"), "wb") as f:
        f.write(bad)
    report.append("echoes_bad_stored.pak: ANIM at %d: stored segment.length at %d"
                  % (r, r + info[ANIM_LONG][1][0]))
    for k in sorted(info):
        report.append("%08X segments %s" % (k, [(s[0], s[1]) for s in info[k]]))
    return report


if __name__ == "__main__":
    write_si()
    write_pak()
    for line in write_echoes():
        print(line)
