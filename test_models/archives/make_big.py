#!/usr/bin/env python3
"""Writes the Homeworld (1999) .big fixtures (RBF1.23) byte by byte from the
layout of docs/formats/homeworld.md §9, with struct.pack, zlib.crc32 and the
LZSS encoder and decoder below: independent of retroanim's C code.  The .mad
payloads are the loose fixtures of test_models/homeworld (and big_long.mad,
written here with that folder's make_fixtures.lw_mad / pack_mad and checked
with its parse_bytes), so a test can compare an archive's animation with the
same loose file.

The layout: "RBF1.23", s32 numFiles, s32 flags (bit 0: TOC sorted), numFiles
32-byte TOC entries {u32 crc1, u32 crc2, u16 nameLength, 2 bytes padding, u32
storedLength, u32 realLength, u32 offset, u32 timeStamp, u8 compressionType,
3 bytes padding}, then per entry at `offset`: the encrypted name (c = p ^ mask,
mask = the previous PLAIN byte, starting at 0xD5), one NUL (not encrypted),
the stored bytes.  Every TOC here is flagged sorted and sorted by (crc1, crc2):
crc1 = crc32 of the first half of the lower-cased name, crc2 = crc32 of the
next half (the shipped form: an odd length's last character is left out).
The blobs follow the TOC in the order the entries were added, which is not the
TOC's order (a reader must use `offset`).  The padding bytes are 00 00 and
C9 CA CB (the garbage seen in shipped files).  compressionType 1 is LZSS: MSB-
first bits, a 4096-byte ring whose first byte goes to position 1; flag 1 + 8
bits = a literal, flag 0 + 12-bit absolute ring position (0 = the end) + 4 bits
L = L + 2 bytes copied from that position on (a copy may overlap its own
output); then zero bits to the byte boundary.  The encoder below is greedy
(the longest match of 2..17 bytes, the nearest on a tie, within 4095 bytes
back), never uses ring position 0 as a source, and each stream is decoded by
the decoder below (which refuses what retroanim's reader refuses) before it is
written.

  ships.big       3 entries, flags 1, TOC (by CRC): R1\\Probe.lod,
                  R1\\Probe.MAD, R2\\Defender.mad (the entry ids 0, 1, 2):
                    R1\\Probe.MAD     test_models/homeworld/spin.mad, stored
                    R2\\Defender.mad  test_models/homeworld/timeline.mad, LZSS
                                     (odd name length: the shipped crc2)
                    R1\\Probe.lod     a small text file, stored (not listed)
  big_geo.big     4 entries: R1\\GeoShip.mad (test_models/homeworld/
                  geo_ship.mad, stored), its ship geometry twice, as the
                  game's LOD folders hold it: R1\\GeoShip\\Rl0\\LOD0\\
                  GeoShip.geo (geo_ship.geo, stored: a sweep of this file
                  reaches the .geo reader) and R1\\GeoShip\\Rl0\\LOD1\\
                  geoship.PEO (geo_ship.geo again, LZSS), and R1\\GeoShip.lod
                  (text, not read).  The .mad's companion is the LOD0 .geo
                  (the shallowest, then the first path); --option geo= naming
                  the LOD1 entry takes that one.
  big_lods.big    four ships (test_models/homeworld/spin.mad, stored) and
                  their candidate geometries (8 bytes each, not a .geo: the
                  pairing is what is tested): R1\\Alpha.mad takes
                  R1\\Alpha\\Rl0\\LOD0\\alpha.geo (LOD1's Alpha.geo is a
                  later path, LOD0's ALPHA.peo a .peo at the same place);
                  R1\\Alphabet.mad takes R1\\Alphabet.PEO (beside it: the
                  shallowest, over R1\\Alphabet\\Rl0\\LOD0\\Alphabet.geo),
                  and neither takes the other's (a stem that is a prefix of
                  another); R2\\Beta.mad takes none (R1\\Beta.geo is in
                  another folder, R2\\Betax.geo another stem); R2\\Gamma.mad
                  takes R2\\Gamma\\gamma.GEO (any case) over the deeper
                  R2\\Gamma\\Rl0\\LOD0\\Gamma.geo.
  big_long.mad    a loose 10,034-byte .mad: two objects keyed on every frame
                  of 120 (LWExport's layout), so its LZSS stream wraps the ring
                  twice
  big_long.big    1 entry, R3\\Carrier.mad = big_long.mad, LZSS: matches across
                  the ring's wrap, overlapping copies, and candidates at ring
                  position 0 passed over
  big_remaster.big  ships.big with the Remastered collection's 36-byte entries
                  (a u32 after timeStamp, compressionType at +32): the 32-byte
                  reading does not validate
  big_hw2.big     a Homeworld 2 archive's first bytes ("_ARCHIVE", version 2,
                  an MD5 and a UTF-16 name): refused by name
  big_bad_toc.big     ships.big with numFiles (at 7) = 1000: 32,000 bytes of
                      TOC in a smaller file
  big_bad_lzss.big    ships.big with R2\\Defender.mad's storedLength cut to
                      half its stream: the stream ends before its end marker
  big_bad_ref.big     ships.big with the first copy of R2\\Defender.mad's
                      stream referring to the ring position right after the
                      last byte written (nothing there yet)
  big_bad_size.big    ships.big with R2\\Defender.mad's realLength one byte
                      short: the last token passes it
Each broken file differs from ships.big in one TOC field or in 12 bits of the
stream; the error each must give (field and byte offset) is printed, and
tests/test_big.c checks those values.
Run from this folder: python3 make_big.py"""
import math
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
HW = os.path.join(HERE, "..", "homeworld")

MAGIC = b"RBF1.23"
HEADER = 15
MASK0 = 0xD5
RING = 4096
MAX_MATCH = 17  # (1 << 4) + 2 - 1
MIN_MATCH = 2
PAD_TAIL = b"\xC9\xCA\xCB"


def rd(*p):
    with open(os.path.join(*p), "rb") as f:
        return f.read()


# ---- names --------------------------------------------------------------------
def encrypt_name(plain):
    out, mask = bytearray(), MASK0
    for p in plain:
        out.append(p ^ mask)
        mask = p  # the previous PLAIN byte
    return bytes(out)


def decrypt_name(cipher):
    out, mask = bytearray(), MASK0
    for c in cipher:
        p = c ^ mask
        out.append(p)
        mask = p
    return bytes(out)


def normalise(name):
    n = name.lower().replace(b"/", b"\\")
    while b"\\\\" in n:
        n = n.replace(b"\\\\", b"\\")
    return n


def crcs(name):
    """(crc1, crc2) of the shipped archives: crc2 leaves an odd length's last character out."""
    n = normalise(name)
    half = len(n) // 2
    return zlib.crc32(n[:half]) & 0xFFFFFFFF, zlib.crc32(n[half:2 * half]) & 0xFFFFFFFF


# ---- LZSS ---------------------------------------------------------------------
class Bits:
    def __init__(self):
        self.out, self.rack, self.mask = bytearray(), 0, 0x80

    def put(self, value, count):
        for k in range(count - 1, -1, -1):  # MSB first
            if value >> k & 1:
                self.rack |= self.mask
            self.mask >>= 1
            if not self.mask:
                self.out.append(self.rack)
                self.rack, self.mask = 0, 0x80

    def flush(self):
        if self.mask != 0x80:
            self.out.append(self.rack)
        return bytes(self.out)


def lzss_compress(src):
    """Greedy: at each byte the longest match (2..17 bytes, overlapping its own
    output allowed) among the bytes 1..4095 back, the nearest on a tie, except
    those whose ring position is 0 (that code is the end marker)."""
    bits = Bits()
    stats = dict(literals=0, matches=0, overlapping=0, wrapped=0, skipped_position_0=0)
    where = {}  # 2-byte prefix -> positions, ascending
    i, n = 0, len(src)
    while i < n:
        best, best_j = 0, None
        for j in reversed(where.get(src[i:i + 2], []) if i + 1 < n else []):
            if i - j > RING - 1:
                break
            length = 0
            while length < MAX_MATCH and i + length < n and src[j + length] == src[i + length]:
                length += 1
            if length < MIN_MATCH:
                continue
            if (j + 1) % RING == 0:  # output index j sits at ring position j + 1
                stats["skipped_position_0"] += 1
                continue
            if length > best:
                best, best_j = length, j
            if length == MAX_MATCH:
                break
        if best >= MIN_MATCH:
            bits.put(0, 1)
            bits.put((best_j + 1) % RING, 12)
            bits.put(best - MIN_MATCH, 4)
            stats["matches"] += 1
            stats["overlapping"] += i - best_j < best
            p, cur = (best_j + 1) % RING, (i + 1) % RING
            stats["wrapped"] += p > cur or p + best > RING  # the source lies across the ring's end
        else:
            bits.put(1, 1)
            bits.put(src[i], 8)
            stats["literals"] += 1
            best = 1
        for k in range(i, i + best):
            if k + 1 < n:
                where.setdefault(src[k:k + 2], []).append(k)
        i += best
    bits.put(0, 1)
    bits.put(0, 12)  # the end of the stream
    return bits.flush(), stats


class LzssError(Exception):
    def __init__(self, kind, offset, text):
        super().__init__("%s at stream byte %d: %s" % (kind, offset, text))
        self.kind, self.offset = kind, offset


def lzss_decompress(stream, real_length):
    """The decoder retroanim's rules ask for: fails (LzssError, with the stream
    byte where the failing token starts) when the input ends before the end
    marker ("cut"), a copy reads a ring position nothing was written to yet
    ("unwritten"), or the output would pass real_length ("overrun"); returns
    (bytes, bytes of stream consumed)."""
    if real_length > len(stream) * 8:
        raise LzssError("implausible", 0, "realLength %d from %d bytes" % (real_length, len(stream)))
    ring, cur, out, pos, nbits = bytearray(RING), 1, bytearray(), 0, len(stream) * 8

    def get(count, token):
        nonlocal pos
        if pos + count > nbits:
            raise LzssError("cut", token // 8, "the stream ends before its end marker")
        v = 0
        for _ in range(count):
            v = v << 1 | (stream[pos >> 3] >> (7 - (pos & 7)) & 1)
            pos += 1
        return v

    while True:
        token = pos
        if get(1, token):
            c = get(8, token)
            if len(out) + 1 > real_length:
                raise LzssError("overrun", token // 8, "a literal past realLength")
            out.append(c)
            ring[cur], cur = c, (cur + 1) % RING
            continue
        p = get(12, token)
        if p == 0:
            break
        length = get(4, token) + MIN_MATCH
        if p > len(out):  # ring positions 1..len(out) hold bytes (all of them once 4095 are out)
            raise LzssError("unwritten", token // 8, "a copy from ring position %d, %d bytes out" % (p, len(out)))
        if len(out) + length > real_length:
            raise LzssError("overrun", token // 8, "a copy past realLength")
        for k in range(length):
            c = ring[(p + k) % RING]
            out.append(c)
            ring[cur], cur = c, (cur + 1) % RING
    return bytes(out), (pos + 7) // 8


def lzss_tokens(stream):
    """(bit position, kind, output index) of each token of a valid stream."""
    pos, out, toks = 0, 0, []

    def get(count):
        nonlocal pos
        v = 0
        for _ in range(count):
            v = v << 1 | (stream[pos >> 3] >> (7 - (pos & 7)) & 1)
            pos += 1
        return v

    while True:
        at = pos
        if get(1):
            get(8)
            toks.append((at, "literal", out))
            out += 1
            continue
        p = get(12)
        if p == 0:
            toks.append((at, "end", out))
            return toks
        length = get(4) + 2
        toks.append((at, "copy", out))
        out += length


def set_bits(stream, bit, count, value):
    b = bytearray(stream)
    for k in range(count):
        i = bit + k
        if value >> (count - 1 - k) & 1:
            b[i >> 3] |= 0x80 >> (i & 7)
        else:
            b[i >> 3] &= ~(0x80 >> (i & 7)) & 0xFF
    return bytes(b)


def lzss_selftest():
    """Round trips, including runs (overlapping copies), a ring wrapped several times and position 0 passed over."""
    x, noise = 12345, bytearray()
    while len(noise) < 6000:  # pseudo-random bytes without 0xAA
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        if x >> 16 & 0xFF != 0xAA:
            noise.append(x >> 16 & 0xFF)
    tune = b"\xAA" + bytes(range(20))  # output index 4095 = ring position 0, then again: only a later start matches
    samples = [b"", b"a", b"ab" * 40, bytes(300), bytes(range(256)) * 20,
               bytes((i * 7 + (i >> 5)) & 0xFF for i in range(12000)),
               bytes(noise[:4095]) + tune + bytes(noise[4095:4600]) + tune + bytes(noise[4600:])]
    seen = dict(overlapping=0, wrapped=0, skipped_position_0=0)
    for s in samples:
        st, stats = lzss_compress(s)
        out, used = lzss_decompress(st, len(s))
        assert out == s and used == len(st), len(s)
        for k in seen:
            seen[k] += stats[k]
    assert all(seen.values()), seen
    # each refusal
    st, _ = lzss_compress(b"abcabcabc")
    for args, kind in (((st[:1], 8), "cut"), ((st, 8), "overrun"), ((st[:1], 9), "implausible")):
        try:
            lzss_decompress(*args)
            raise AssertionError(kind)
        except LzssError as e:
            assert e.kind == kind, (e.kind, kind)


# ---- the archive ----------------------------------------------------------------
class Entry:
    def __init__(self, name, data, compress, stamp):
        self.name, self.data, self.compress, self.stamp = name, data, compress, stamp
        self.stored, self.stats = (lzss_compress(data) if compress else (data, None))
        if compress:
            out, used = lzss_decompress(self.stored, len(data))
            assert out == data and used == len(self.stored)
        self.real = len(data)
        self.crc1, self.crc2 = crcs(name)


def big_file(entries, entry_size=32, extra=0x5A5A0001):
    """Returns (bytes, marks): marks[name] = dict of TOC field offsets and the blob's offsets."""
    toc = sorted(entries, key=lambda e: (e.crc1, e.crc2))
    n = len(entries)
    data_at = HEADER + entry_size * n
    blob, place = bytearray(), {}
    for e in entries:  # blobs in the order added
        place[e.name] = data_at + len(blob)
        blob += encrypt_name(e.name) + b"\0" + e.stored
    out = bytearray(MAGIC + struct.pack("<ii", n, 1))
    marks = {}
    for i, e in enumerate(toc):
        at = len(out)
        out += struct.pack("<IIH2sIIII", e.crc1, e.crc2, len(e.name), b"\0\0", len(e.stored), e.real,
                           place[e.name], e.stamp)
        if entry_size == 36:
            out += struct.pack("<I", extra)
        out += struct.pack("<B", 1 if e.compress else 0) + PAD_TAIL
        marks[e.name] = dict(index=i, entry=at, storedLength=at + 12, realLength=at + 16, offset=at + 20,
                             name=place[e.name], data=place[e.name] + len(e.name) + 1)
    assert len(out) == data_at
    out += blob
    return bytes(out), marks


class BigError(Exception):
    def __init__(self, field, offset, text):
        super().__init__("%s (at byte %d): %s" % (field, offset, text))
        self.field, self.offset = field, offset


def parse_toc(data, n, stride):
    """The TOC checks of retroanim's reader (docs/formats/homeworld.md §9)."""
    end = HEADER + n * stride
    if end > len(data):
        raise BigError("numFiles", 7, "%d entries do not fit" % n)
    out = []
    for i in range(n):
        e = HEADER + i * stride
        crc1, crc2, nlen, _, stored, real, off, stamp = struct.unpack_from("<IIH2sIIII", data, e)
        ctype = data[e + stride - 4]
        if ctype > 1:
            raise BigError("entry.compressionType", e + stride - 4, "type %d" % ctype)
        if off < end or off > len(data) or nlen + 1 > len(data) - off:
            raise BigError("entry.offset", e + 20, "the name is not inside the file after the TOC")
        if data[off + nlen] != 0:
            raise BigError("entry.name", off + nlen, "no NUL after the name")
        if stored > len(data) - off - nlen - 1:
            raise BigError("entry.storedLength", e + 12, "past the end")
        name = decrypt_name(data[off:off + nlen])
        out.append(dict(index=i, name=name, crc=(crc1, crc2), stored=stored, real=real, type=ctype,
                        data=off + nlen + 1, stamp=stamp))
    return out


def parse_big(data):
    if data[:8] == b"_ARCHIVE":
        raise BigError("magic", 0, "Homeworld 2")
    if data[:7] != MAGIC:
        raise BigError("magic", 0, "not RBF1.23")
    n, flags = struct.unpack_from("<ii", data, 7)
    if n < 0:
        raise BigError("numFiles", 7, "negative")
    try:
        return parse_toc(data, n, 32), 32, flags
    except BigError as first:
        try:
            return parse_toc(data, n, 36), 36, flags
        except BigError:
            raise first


def payload(data, e):
    raw = data[e["data"]:e["data"] + e["stored"]]
    if e["type"] == 0:
        assert e["stored"] == e["real"]
        return raw
    out, used = lzss_decompress(raw, e["real"])
    assert len(out) == e["real"]
    return out


def check_archive(data, entries, stride):
    toc, got_stride, flags = parse_big(data)
    assert got_stride == stride and flags == 1
    assert [t["crc"] for t in toc] == sorted(t["crc"] for t in toc)
    by = {e.name: e for e in entries}
    assert sorted(t["name"] for t in toc) == sorted(by)
    for t in toc:
        e = by[t["name"]]
        assert t["crc"] == crcs(t["name"]) and payload(data, t) == e.data and t["type"] == e.compress
    order = [t["name"] for t in toc]
    assert order != [e.name for e in entries], "the blobs must not be in TOC order"
    return toc


def expect_fail(data, field, offset, lzss=None):
    """The refusal a broken file must give: TOC (BigError) or payload (LzssError at data + its offset)."""
    try:
        toc, _, _ = parse_big(data)
    except BigError as e:
        assert (e.field, e.offset) == (field, offset), (e.field, e.offset, field, offset)
        return
    for t in toc:
        if not t["name"].lower().endswith(b".mad"):
            continue
        try:
            payload(data, t)
        except LzssError as e:
            assert e.kind == lzss and (field, t["data"] + e.offset) == ("data", offset), \
                (e.kind, t["data"] + e.offset, lzss, offset)
            return
        except AssertionError:
            continue
    raise AssertionError("not refused: " + field)


# ---- the long loose .mad ------------------------------------------------------------
def long_mad():
    sys.path.insert(0, HW)
    import make_fixtures as hw  # test_models/homeworld: the .mad writer and parser

    frames = list(range(0, 121))

    def ramp(a, b):
        return [a + (b - a) * f / 120.0 for f in frames]

    m = hw.lw_mad(30.0, [("Launch", 0, 60, 0), ("Dock", 60, 120, 1)], [
        dict(name="BayDoor", frames=frames, x=ramp(0, 2), y=[0.5] * 121,
             z=[1 + 0.25 * math.sin(f / 9.0) for f in frames], h=ramp(0, 90), p=[0] * 121,
             b=[5 * math.cos(f / 7.0) for f in frames]),
        dict(name="Crane", frames=frames, x=[1.5] * 121, y=ramp(-1, 1), z=[0] * 121,
             h=[30 * math.sin(f / 20.0) for f in frames], p=ramp(0, 45), b=[0] * 121)])
    data, _ = hw.pack_mad(m)
    parsed, _ = hw.parse_bytes(data)
    assert parsed == m
    return data


# ---- writing ------------------------------------------------------------------------
STAMP = 0x36E3F5A0  # 1999-03-08, invented


def ships_entries():
    return [Entry(b"R1\\Probe.MAD", rd(HW, "spin.mad"), False, STAMP),
            Entry(b"R2\\Defender.mad", rd(HW, "timeline.mad"), True, STAMP + 60),
            Entry(b"R1\\Probe.lod", b"; Probe LOD script (invented)\r\npMeshFile0 R1\\Probe\\Rl0\\LOD0\\Probe.geo\r\n",
                  False, STAMP + 120)]


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def main():
    lzss_selftest()
    report = []
    ents = ships_entries()
    defender = ents[1]
    assert len(defender.name) % 2 == 1
    ships, marks = big_file(ents)
    toc = check_archive(ships, ents, 32)
    write("ships.big", ships)
    report.append("ships.big: %d bytes; TOC %s" % (len(ships), [t["name"].decode() for t in toc]))
    for e in ents:
        mk = marks[e.name]
        report.append("  %-18s id %d entry %d data %d stored %d real %d %s" % (
            e.name.decode(), mk["index"], mk["entry"], mk["data"], len(e.stored), e.real,
            "lzss %s" % e.stats if e.compress else "stored"))

    geo_ents = [Entry(b"R1\\GeoShip.mad", rd(HW, "geo_ship.mad"), False, STAMP + 240),
                Entry(b"R1\\GeoShip\\Rl0\\LOD1\\geoship.PEO", rd(HW, "geo_ship.geo"), True, STAMP + 250),
                Entry(b"R1\\GeoShip\\Rl0\\LOD0\\GeoShip.geo", rd(HW, "geo_ship.geo"), False, STAMP + 260),
                Entry(b"R1\\GeoShip.lod", b"pMeshFile0 GeoShip\\Rl0\\LOD0\\GeoShip.geo\r\n", False, STAMP + 270)]
    big_geo, _ = big_file(geo_ents)
    check_archive(big_geo, geo_ents, 32)
    write("big_geo.big", big_geo)
    report.append("big_geo.big: %d bytes; TOC %s" % (len(big_geo), [t["name"].decode() for t in parse_big(big_geo)[0]]))

    spin = rd(HW, "spin.mad")
    lods = [Entry(b"R1\\Alpha.mad", spin, False, STAMP),
            Entry(b"R1\\Alpha\\Rl0\\LOD1\\Alpha.geo", b"geometry", False, STAMP),
            Entry(b"R1\\Alpha\\Rl0\\LOD0\\ALPHA.peo", b"geometry", False, STAMP),
            Entry(b"R1\\Alpha\\Rl0\\LOD0\\alpha.geo", b"geometry", False, STAMP),
            Entry(b"R1\\Alphabet.mad", spin, False, STAMP),
            Entry(b"R1\\Alphabet\\Rl0\\LOD0\\Alphabet.geo", b"geometry", False, STAMP),
            Entry(b"R1\\Alphabet.PEO", b"geometry", False, STAMP),
            Entry(b"R2\\Beta.mad", spin, False, STAMP),
            Entry(b"R1\\Beta.geo", b"geometry", False, STAMP),
            Entry(b"R2\\Betax.geo", b"geometry", False, STAMP),
            Entry(b"R2\\Gamma.mad", spin, False, STAMP),
            Entry(b"R2\\Gamma\\Rl0\\LOD0\\Gamma.geo", b"geometry", False, STAMP),
            Entry(b"R2\\Gamma\\gamma.GEO", b"geometry", False, STAMP)]
    big_lods, _ = big_file(lods)
    check_archive(big_lods, lods, 32)
    write("big_lods.big", big_lods)
    report.append("big_lods.big: %d bytes; TOC %s" % (len(big_lods), [t["name"].decode() for t in parse_big(big_lods)[0]]))

    long_data = long_mad()
    assert len(long_data) > 2 * RING
    write("big_long.mad", long_data)
    long_ents = [Entry(b"R3\\Carrier.mad", long_data, True, STAMP + 180)]
    st = long_ents[0].stats
    assert st["wrapped"] and st["overlapping"] and st["skipped_position_0"], st
    big_long, lmarks = big_file(long_ents)
    tl, _, _ = parse_big(big_long)
    assert payload(big_long, tl[0]) == long_data
    write("big_long.big", big_long)
    report.append("big_long.big: %d bytes; big_long.mad %d bytes -> %d stored, data at %d, %s" % (
        len(big_long), len(long_data), len(long_ents[0].stored), lmarks[b"R3\\Carrier.mad"]["data"], st))

    remaster, _ = big_file(ents, entry_size=36)
    try:
        parse_toc(remaster, len(ents), 32)
        raise AssertionError("the 36-byte TOC must not read as 32-byte entries")
    except BigError as e:
        report.append("big_remaster.big: %d bytes; as 32-byte entries: %s" % (len(remaster), e))
    check_archive(remaster, ents, 36)
    write("big_remaster.big", remaster)

    hw2 = b"_ARCHIVE" + struct.pack("<I", 2) + bytes(16) + "ships".encode("utf-16-le").ljust(128, b"\0") + \
        bytes(16) + struct.pack("<II", 180, 0)
    write("big_hw2.big", hw2)
    expect_fail(hw2, "magic", 0)

    d = marks[defender.name]
    # numFiles too large
    bad = bytearray(ships)
    struct.pack_into("<i", bad, 7, 1000)
    expect_fail(bytes(bad), "numFiles", 7)
    write("big_bad_toc.big", bytes(bad))
    report.append("big_bad_toc.big: numFiles (at 7) = 1000")
    # a stream cut before its end marker
    bad = bytearray(ships)
    cut = len(defender.stored) // 2
    struct.pack_into("<I", bad, d["storedLength"], cut)
    try:
        lzss_decompress(defender.stored[:cut], defender.real)
        raise AssertionError("cut")
    except LzssError as e:
        assert e.kind == "cut"
        at_cut = d["data"] + e.offset
    expect_fail(bytes(bad), "data", at_cut, "cut")
    write("big_bad_lzss.big", bytes(bad))
    report.append("big_bad_lzss.big: storedLength (at %d) = %d: the stream ends, token at byte %d" % (
        d["storedLength"], cut, at_cut))
    # a copy from a ring position nothing was written to
    toks = lzss_tokens(defender.stored)
    bit, _, out_at = next(t for t in toks if t[1] == "copy")
    stream = set_bits(defender.stored, bit + 1, 12, out_at + 1)
    bad = bytearray(ships)
    bad[d["data"]:d["data"] + len(stream)] = stream
    at_ref = d["data"] + bit // 8
    expect_fail(bytes(bad), "data", at_ref, "unwritten")
    write("big_bad_ref.big", bytes(bad))
    report.append("big_bad_ref.big: the first copy (bit %d, output byte %d) from ring position %d; token at byte %d" % (
        bit, out_at, out_at + 1, at_ref))
    # realLength one short
    bad = bytearray(ships)
    struct.pack_into("<I", bad, d["realLength"], defender.real - 1)
    last = toks[-2]
    at_size = d["data"] + last[0] // 8
    expect_fail(bytes(bad), "data", at_size, "overrun")
    write("big_bad_size.big", bytes(bad))
    report.append("big_bad_size.big: realLength (at %d) = %d: the last token (%s at byte %d) passes it" % (
        d["realLength"], defender.real - 1, last[1], at_size))
    return report


if __name__ == "__main__":
    for line in main():
        print(line)
