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
Run from this folder: python3 make_fixtures.py"""
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
    stored = []
    for t, i, data, comp in resources:
        s = struct.pack(">I", len(data)) + zlib.compress(data, 9) if comp else data
        stored.append(pad32(s))
    head = struct.pack(">II", 0x00030005, 0) + struct.pack(">I", len(named))
    for t, i, n in named:
        head += t + struct.pack(">II", i, len(n)) + n.encode()
    head += struct.pack(">I", len(resources))
    off = len(head) + 20 * len(resources)
    off += -off % 32
    for (t, i, data, comp), s in zip(resources, stored):
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


if __name__ == "__main__":
    write_si()
    write_pak()
