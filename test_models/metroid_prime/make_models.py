#!/usr/bin/env python3
"""Metroid Prime character fixtures: TXTR textures (one per GX format), a
skinned CMDL with its CSKR and CINF, an ANIM that moves it, a pak holding all
of it behind an ANCS with two characters, a Prime 2 model, and broken files.

Every byte is written here with struct.pack from the layouts of
docs/formats/metroid_prime.md §13 (CMDL, materials, display lists, CSKR, TXTR,
ANCS); nothing is read back from the project's code.  The expectations (texels,
meshes, materials, skinned vertex positions at several times) are computed
here too, from the values the files were made from, with the game's rules:

  texels      the GX decoding rules (bit replication, tiles, palettes, CMPR with
              thirds truncated and a transparent fourth colour when c0 <= c1)
  triangles   strips (v0,v1,v2),(v2,v1,v3),...; fans (v0,vi,vi+1); lists; a
              triangle that repeats a position index is dropped
  skinning    v' = sum w_i (R_i (v - b_i) + P_i) over the rule that owns the
              position (rules take positions in file order; at most 3 weights,
              duplicated ids summed), R_i, P_i the bone's animated world
              rotation and position (v0 sampling: raw slerp / lerp between
              frames), b_i its CINF bind position; then (x,y,z) -> (x,z,-y)

Run: python3 make_models.py   (rewrites the files and their .txt; deterministic)
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def u8(v): return struct.pack(">B", v)
def u16(v): return struct.pack(">H", v)
def s16(v): return struct.pack(">h", v)
def u32(v): return struct.pack(">I", v)
def s32(v): return struct.pack(">i", v)
def f32(v): return struct.pack(">f", v)
def f32v(v): return struct.unpack(">f", struct.pack(">f", v))[0]


def pad(b, n=32, fill=b"\0"):
    return b + fill * (-len(b) % n)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def fmt(v):
    s = "%.7f" % v
    s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


# ---- TXTR ------------------------------------------------------------------------------------------------
TILE = {0: (8, 8, 32), 1: (8, 4, 32), 2: (8, 4, 32), 3: (4, 4, 32), 4: (8, 8, 32), 5: (8, 4, 32),
        6: (4, 4, 32), 7: (4, 4, 32), 8: (4, 4, 32), 9: (4, 4, 64), 10: (8, 8, 32)}
NAMES = ["I4", "I8", "IA4", "IA8", "C4", "C8", "C14X2", "RGB565", "RGB5A3", "RGBA8", "CMPR"]


def x3(v): return (v << 5) | (v << 2) | (v >> 1)
def x4(v): return v * 0x11
def x5(v): return (v << 3) | (v >> 2)
def x6(v): return (v << 2) | (v >> 4)


def dec565(v): return (x5(v >> 11 & 31), x6(v >> 5 & 63), x5(v & 31), 255)


def dec5a3(v):
    if v & 0x8000:
        return (x5(v >> 10 & 31), x5(v >> 5 & 31), x5(v & 31), 255)
    return (x4(v >> 8 & 15), x4(v >> 4 & 15), x4(v & 15), x3(v >> 12 & 7))


def texel_value(fmt_id, x, y):
    """the stored value of texel (x, y): a nibble, byte, u16 or (a,r,g,b) tuple"""
    h = (x * 7 + y * 13 + fmt_id * 5) & 0xFFFF
    if fmt_id in (0, 4):
        return h & 15
    if fmt_id in (1, 2, 5):
        return (h * 37 + x) & 0xFF
    if fmt_id == 3:
        return ((h * 41) & 0xFF) << 8 | ((h * 23 + 5) & 0xFF)
    if fmt_id == 7:
        return (h * 2749 + 12345) & 0xFFFF
    if fmt_id == 8:  # both layouts: the opaque one on even rows
        v = (h * 1931 + 77) & 0x7FFF
        return v | 0x8000 if y % 2 == 0 else v
    if fmt_id == 9:
        return ((h * 3) & 0xFF, (h * 5 + 1) & 0xFF, (h * 11 + 2) & 0xFF, (h * 17 + 3) & 0xFF)
    raise ValueError(fmt_id)


def palette_entries(pf, n):
    out = []
    for i in range(n):
        if pf == 0:    # IA8 entries: intensity byte, then alpha byte
            out.append(((i * 29 + 7) & 0xFF) << 8 | ((i * 53 + 200) & 0xFF))
        elif pf == 1:
            out.append((i * 4099 + 31) & 0xFFFF)
        else:
            out.append(((i * 2311) & 0x7FFF) | (0x8000 if i % 2 else 0))
    return out


def palette_rgba(pf, v):
    if pf == 0:
        return (v >> 8, v >> 8, v >> 8, v & 0xFF)
    return dec565(v) if pf == 1 else dec5a3(v)


def decode_value(fmt_id, v, pal):
    if fmt_id == 0:
        return (x4(v), x4(v), x4(v), 255)
    if fmt_id == 1:
        return (v, v, v, 255)
    if fmt_id == 2:
        return (x4(v & 15), x4(v & 15), x4(v & 15), x4(v >> 4))
    if fmt_id == 3:
        return (v & 0xFF, v & 0xFF, v & 0xFF, v >> 8)
    if fmt_id in (4, 5):
        return pal[v] if v < len(pal) else (0, 0, 0, 0)
    if fmt_id == 7:
        return dec565(v)
    if fmt_id == 8:
        return dec5a3(v)
    if fmt_id == 9:
        a, r, g, b = v
        return (r, g, b, a)
    raise ValueError(fmt_id)


def tile_bytes(fmt_id, vals, tw, th):
    """one tile from its texel values (row-major)"""
    if fmt_id in (0, 4):
        return bytes((vals[i] << 4) | vals[i + 1] for i in range(0, tw * th, 2))
    if fmt_id in (1, 2, 5):
        return bytes(vals)
    if fmt_id in (3, 7, 8):
        return b"".join(u16(v) for v in vals)
    if fmt_id == 9:
        return b"".join(bytes((a, r)) for a, r, g, b in vals) + b"".join(bytes((g, b)) for a, r, g, b in vals)
    raise ValueError(fmt_id)


def cmpr_blocks(w, h):
    """8x8 tiles of four 4x4 sub-blocks: (c0, c1, 4 row bytes); alternately c0 > c1 and c0 <= c1"""
    tiles = []
    n = 0
    for ty in range((h + 7) // 8):
        for tx in range((w + 7) // 8):
            sub = []
            for k in range(4):
                a, b = (0xF81F - n * 0x0841) & 0xFFFF, (0x07E0 + n * 0x1003) & 0xFFFF
                c0, c1 = (max(a, b), min(a, b)) if n % 2 == 0 else (min(a, b), max(a, b))
                rows = bytes(((n * 3 + r * 0x1B) * 0x39) & 0xFF for r in range(4))
                sub.append((c0, c1, rows))
                n += 1
            tiles.append(sub)
    return tiles


def cmpr_palette(c0, c1):
    p0, p1 = dec565(c0), dec565(c1)
    if c0 > c1:
        p2 = tuple((2 * p0[k] + p1[k]) // 3 for k in range(3)) + (255,)
        p3 = tuple((p0[k] + 2 * p1[k]) // 3 for k in range(3)) + (255,)
    else:
        p2 = tuple((p0[k] + p1[k]) // 2 for k in range(3)) + (255,)
        p3 = (0, 0, 0, 0)
    return [p0, p1, p2, p3]


def txtr(fmt_id, w, h, mips=1, pal_fmt=None, pal_shape=None, extra=b"", cut=0):
    """(bytes, {(x, y): rgba}) of a texture; level 0 only (then `extra` bytes)"""
    out = u32(fmt_id) + u16(w) + u16(h) + u32(mips)
    pal = None
    if fmt_id in (4, 5):
        n = 16 if fmt_id == 4 else 256
        pw, ph = pal_shape or ((n, 1) if fmt_id == 5 else (1, n))
        entries = palette_entries(pal_fmt, pw * ph)
        out += u32(pal_fmt) + u16(pw) + u16(ph) + b"".join(u16(e) for e in entries)
        pal = [palette_rgba(pal_fmt, e) for e in entries]
    tw, th, _ = TILE[fmt_id]
    texels = {}
    if fmt_id == 10:
        data = b""
        for t, sub in enumerate(cmpr_blocks(w, h)):
            tx, ty = t % ((w + 7) // 8), t // ((w + 7) // 8)
            for k, (c0, c1, rows) in enumerate(sub):
                data += u16(c0) + u16(c1) + rows
                p = cmpr_palette(c0, c1)
                for r in range(4):
                    for c in range(4):
                        x, y = tx * 8 + (k & 1) * 4 + c, ty * 8 + (k >> 1) * 4 + r
                        if x < w and y < h:
                            texels[(x, y)] = p[rows[r] >> (6 - 2 * c) & 3]
    else:
        data = b""
        for ty in range((h + th - 1) // th):
            for tx in range((w + tw - 1) // tw):
                vals = []
                for y in range(th):
                    for x in range(tw):
                        X, Y = tx * tw + x, ty * th + y
                        v = texel_value(fmt_id, X, Y) if X < w and Y < h else (
                            (0, 0, 0, 0) if fmt_id == 9 else 0)
                        vals.append(v)
                        if X < w and Y < h:
                            texels[(X, Y)] = decode_value(fmt_id, v, pal)
                data += tile_bytes(fmt_id, vals, tw, th)
    out += data
    if cut:
        out = out[:-cut]
    return out + extra, texels


TEX_ID = 0x10000000


def texel_lines(name, texels):
    return ["expect-texel texture=%s x=%d y=%d rgba=%d,%d,%d,%d" % ((name, x, y) + tuple(c))
            for (x, y), c in sorted(texels.items(), key=lambda kv: (kv[0][1], kv[0][0]))]


def make_textures():
    specs = {  # id offset: (format, w, h, kwargs, words)
        0: (0, 8, 8, {}, "one 8x8 tile, high nibble = left texel"),
        1: (1, 12, 6, {"mips": 3, "extra": b"\x55" * 20},
            "12x6 = 2x2 tiles of 8x4 (the right and bottom tiles are cropped), 3 mip levels of which only "
            "20 bytes of level 1 follow (the chain is cut short: level 0 alone is read)"),
        2: (2, 8, 4, {}, "high nibble alpha, low nibble intensity"),
        3: (3, 4, 4, {}, "byte 0 alpha, byte 1 intensity"),
        4: (4, 8, 8, {"pal_fmt": 2}, "16-entry RGB5A3 palette (1x16), odd entries opaque RGB555, even ones 3-bit alpha"),
        5: (5, 8, 4, {"pal_fmt": 0}, "256-entry IA8 palette (256x1): entry byte 0 intensity, byte 1 alpha"),
        7: (7, 4, 4, {}, "RGB565, one tile (used by hero.cmdl's material 0)"),
        8: (8, 4, 4, {}, "RGB5A3, even rows opaque RGB555, odd rows A3 R4 G4 B4"),
        9: (9, 4, 4, {}, "RGBA8: 32 bytes of (A,R) pairs then 32 bytes of (G,B) pairs"),
        10: (10, 8, 8, {}, "CMPR: four sub-blocks TL, TR, BL, BR, alternately c0 > c1 (4 opaque colours) and "
                           "c0 <= c1 (midpoint and transparent black); used by hero.cmdl's material 1"),
    }
    tex = {}
    for k, (f, w, h, kw, words) in specs.items():
        data, texels = txtr(f, w, h, **kw)
        tid = TEX_ID + k
        name = "%08X" % tid
        write(name + ".TXTR", data)
        tex[tid] = (data, texels, f, w, h)
        lines = ["%s.TXTR -- %s %dx%d texture (%d bytes), made by make_models.py txtr()" % (name, NAMES[f], w, h, len(data)),
                 "", "Layout: u32 format %d, u16 %d, u16 %d, u32 mips %d%s; level 0 in %s tiles, left to right then" % (
                     f, w, h, kw.get("mips", 1), ", palette" if f in (4, 5) else "", "x".join(map(str, TILE[f][:2]))),
                 "top to bottom.  " + words + ".",
                 "Texels are the GX decoding rules applied to the stored values (bit replication); y from the top",
                 "(the first stored row).", ""]
        lines += texel_lines(name, texels)
        write(name + ".txt", ("\n".join(lines) + "\n").encode())
    # C14X2: refused at the format field
    data = u32(6) + u16(4) + u16(4) + u32(1) + u32(0) + u16(1) + u16(16) + b"\0" * 32 + b"\0" * 32
    write("10000006.TXTR", data)
    write("10000006.txt", b"10000006.TXTR -- a C14X2 texture (14-bit palette indices), which no game texture uses:\n"
          b"refused with RA_ERR_UNSUPPORTED at the format field.\n\nexpect-error-offset 0\n")
    # broken: a C4 palette of 8 entries (the format needs 16): refused at the palette's width (byte 16)
    good, _ = txtr(4, 8, 8, pal_fmt=1, pal_shape=(8, 1))
    write("bad_palette.TXTR", good)
    write("bad_palette.txt", b"bad_palette.TXTR -- C4 8x8 whose palette header says 8x1 entries; C4 needs 16.\n"
          b"Refused at palette.width, byte 16.\n\nexpect-error-offset 16\n")
    # broken: RGB565 8x8 needs 4 tiles of 32 bytes, 3 are stored: refused at level 0's first byte (12)
    good, _ = txtr(7, 8, 8, cut=32)
    write("bad_tiles.TXTR", good)
    write("bad_tiles.txt", b"bad_tiles.TXTR -- RGB565 8x8 needs 2x2 tiles of 32 bytes; only 96 bytes follow the\n"
          b"header.  Refused (truncated) at level0, byte 12.\n\nexpect-error-offset 12\n")
    return tex


# ---- skeleton and animation (docs/formats/metroid_prime.md §2, §5) --------------------------------------------
BONES = [(3, 2, (0, 0, 0), "Root"), (4, 3, (0, 0, 1), "Hip"), (5, 4, (1, 0, 1), "Arm"), (6, 4, (0, 0, 2), "Head")]


def cinf(bones, mp2=False):
    out = u32(len(bones))
    ids = [b[0] for b in bones]
    for bid, parent, p, _ in bones:
        out += u32(bid) + u32(parent) + b"".join(f32(c) for c in p)
        if mp2:
            out += f32(1) + f32(0) * 3 + f32(1) + f32(0) * 3
        linked = [parent] + [c[0] for c in bones if c[1] == bid]
        out += u32(len(linked)) + b"".join(u32(i) for i in linked)
    roots = [b[0] for b in bones if b[1] not in ids]
    order = roots + sorted((i for i in ids if i not in roots), reverse=True)
    out += u32(len(order)) + b"".join(u32(i) for i in order)
    out += u32(len(bones)) + b"".join(n.encode() + b"\0" + u32(b) for b, _, _, n in bones)
    return pad(out, 32, b"\xff")


def aa(axis, deg):
    h = math.radians(deg) / 2
    return (math.cos(h),) + tuple(a * math.sin(h) for a in axis)


X, Z = (1, 0, 0), (0, 0, 1)
INTERVAL, K = 0.5, 3
CHANNELS = [  # channel order: the Arm first (the bone map points to it)
    (5, [aa(X, a) for a in (0, 0, 60)], None),
    (4, [aa(Z, a) for a in (0, 90, 90)], [(0, 0, 1), (0, 0, 1.5), (0.5, 0, 1.5)]),
]


def anim_v0():
    out = u32(0) + f32((K - 1) * INTERVAL) + u32(0) + f32(INTERVAL) + u32(0) + u32(K) + u32(3) + u32(100)
    bmap = [0xFF] * 100
    for ci, (b, _, _) in enumerate(CHANNELS):
        bmap[b] = ci
    out += bytes(bmap)
    tmap, t = [], 0
    for _, _, tr in CHANNELS:
        tmap.append(0xFF if tr is None else t)
        t += tr is not None
    out += u32(len(CHANNELS)) + bytes(tmap)
    out += u32(len(CHANNELS) * K) + b"".join(f32(c) for _, rot, _ in CHANNELS for q in rot for c in q)
    out += u32(t * K) + b"".join(f32(c) for _, _, tr in CHANNELS if tr for v in tr for c in v)
    return out + u32(0)


# quaternion / matrix helpers (double, from the float32 values stored)
def qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def qrot(q, v):
    w, x, y, z = q
    r = qmul(qmul(q, (0,) + tuple(v)), (w, -x, -y, -z))
    return r[1:]


def slerp(a, b, f):
    d = sum(x * y for x, y in zip(a, b))
    d = max(-1.0, min(1.0, d))
    th = math.acos(d)
    if th < 1e-9:
        return a
    s = math.sin(th)
    return tuple((math.sin((1 - f) * th) * x + math.sin(f * th) * y) / s for x, y in zip(a, b))


def bone_world(t):
    """{bone id: (rotation quaternion, position)} in the file's frame at t (v0 sampling)"""
    fi = min(math.floor(t / INTERVAL + 1e-12), K - 1)
    f = min(max((t - fi * INTERVAL) / INTERVAL, 0), 1)
    k0, k1 = fi, (fi + 1) % K
    pos = {b: p for b, _, p, _ in BONES}
    par = {b: pa for b, pa, _, _ in BONES}
    local = {}
    for b, _, p, _ in BONES:
        rest = tuple(p[i] - pos[par[b]][i] for i in range(3)) if par[b] in pos else p
        local[b] = ((1, 0, 0, 0), rest)
    for b, rot, tr in CHANNELS:
        q = slerp(tuple(map(f32v, rot[k0])), tuple(map(f32v, rot[k1])), f)
        o = local[b][1] if tr is None else tuple(f32v(tr[k0][i]) * (1 - f) + f32v(tr[k1][i]) * f for i in range(3))
        local[b] = (q, o)
    world = {}
    for b, pa, _, _ in BONES:  # parents first
        if pa in world:
            pq, pp = world[pa]
            q, o = local[b]
            world[b] = (qmul(pq, q), tuple(pp[i] + qrot(pq, o)[i] for i in range(3)))
        else:
            world[b] = local[b]
    return world


# ---- the model (docs/formats/metroid_prime.md §13.1, §13.2) ----------------------------------------------
POS = [(0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 1.25),
       (1.5, 0, 1), (1.5, 1, 1), (2, 0, 1), (2, 1, 1.125),
       (0, 0, 2), (0.5, 0, 2.5), (0, 0.5, 2.5),
       (-0.5, 0, 2.5)]
NRM = [(0, 0, 1), (0, -1, 0), (1, 0, 0), (0.6, 0, 0.8), (0, 0, 1), (0, 0.6, 0.8), (0, 0, -1), (0.8, 0.6, 0),
       (0, 1, 0), (-1, 0, 0), (0, 0.8, 0.6), (0.6, 0.8, 0)]
CLR = [0xFF0000FF, 0x00FF00FF, 0x0000FFFF, 0xFFFFFF80]
UV = [(0, 0), (1, 0), (0, 1), (1, 1), (0.5, 0.25), (0.25, 0.75), (2, 0.5), (0.75, 2)]
# rules: (weights [(bone id, w)], vertex count); ids deliberately unsorted
RULES = [([(4, 1.0)], 4),
         ([(5, 0.25), (4, 0.75)], 4),
         ([(6, 0.5), (3, 0.2), (5, 0.3)], 3),
         ([(6, 0.5), (6, 0.5)], 1)]

IDX16 = 3
A_POS, A_NRM, A_CLR0, A_TEX0 = 0, 2, 4, 8


def tev(cin, kcolor=0x0C, ras=0):
    return u32(cin) + u32(7 << 15 | 7 << 10 | 7 << 5 | 7) + u32(0) + u32(0) + bytes((0, 0x1C, kcolor, ras))


def cin(a, b, c, d):
    return a | b << 5 | c << 10 | d << 15


ZERO, TEXC, RASC, KONST = 15, 8, 10, 14


def material(mp2, flags, textures, vtx, stages, orders, gens, blend=(0, 1), konst=()):
    """stages: tev() bytes; orders: (texmap, texcoord); gens: texgen source per coordinate"""
    out = u32(flags) + u32(len(textures)) + b"".join(u32(t) for t in textures) + u32(vtx)
    if mp2:
        out += u32(0) + u32(0)
    out += u32(0)                                          # group
    if flags & 8:
        out += u32(len(konst)) + b"".join(u32(k) for k in konst)
    out += u16(blend[0]) + u16(blend[1])                   # dst, src
    out += u32(1) + u32(0x1 | 0x2)                         # one colour channel
    out += u32(len(stages)) + b"".join(stages)
    out += b"".join(u16(0) + bytes(o) for o in orders)
    out += u32(len(gens)) + b"".join(u32(1 | s << 4 | 30 << 9 | 125 << 15) for s in gens)
    out += u32(4) + u32(0)                                 # UV animations: none
    return out


def material_set(texture_ids, mats):
    out = u32(len(texture_ids)) + b"".join(u32(t) for t in texture_ids) + u32(len(mats))
    end = 0
    for m in mats:
        end += len(m)
        out += u32(end)
    return out + b"".join(mats)


def dl_prim(op, verts):
    """verts: tuples of already packed attribute bytes"""
    return u8(op) + u16(len(verts)) + b"".join(verts)


def surface(mp2, mat, dl, extra=b""):
    head = f32(0) * 3 + u32(mat) + u32(0) + u32(0) + u32(0) + u32(len(extra)) + f32(0) * 3
    if mp2:
        head += s16(-1) + u16(0)
    head = pad(head + extra)
    body = pad(dl)
    head = head[:16] + u32(0x80000000 | len(body)) + head[20:]
    return head + body


def cmdl(version, flags, matset, pos, nrm, clr, uv, surfaces, short_nrm=False):
    sections = [pad(matset), pad(b"".join(f32(c) for p in pos for c in p)),
                pad(b"".join((s16(round(c * 16384)) if short_nrm else f32(c)) for n in nrm for c in n)),
                pad(b"".join(u32(c) for c in clr)), pad(b"".join(f32(c) for t in uv for c in t))]
    if flags & 4:
        sections.append(b"")
    ends, e = [], 0
    for s in surfaces:
        e += len(s)
        ends.append(e)
    sections.append(pad(u32(len(surfaces)) + b"".join(u32(x) for x in ends)))
    sections += surfaces
    head = u32(0xDEADBABE) + u32(version) + u32(flags)
    lo = [min(p[i] for p in pos) for i in range(3)]
    hi = [max(p[i] for p in pos) for i in range(3)]
    head += b"".join(f32(v) for v in lo + hi) + u32(len(sections)) + u32(1)
    head += b"".join(u32(len(s)) for s in sections)
    head = pad(head)
    starts, at = [], len(head)
    for s in sections:
        starts.append(at)
        at += len(s)
    return head + b"".join(sections), starts


def v16(*idx):
    return b"".join(u16(i) for i in idx)


def hero_model(mp2=False):
    """(bytes, section starts, surface DL info, {mesh material: [triangles of (pos, nrm, clr, uv) tuples]})"""
    tex_table = [TEX_ID + 7, TEX_ID + 10, TEX_ID + 1]
    vtx0 = IDX16 << A_POS | IDX16 << A_NRM | IDX16 << A_TEX0
    m0 = material(mp2, 0x80, [0], vtx0, [tev(cin(ZERO, TEXC, RASC, ZERO))], [(0, 0)], [4])
    # material 1: 8-bit indices, a matrix-index byte per vertex (PNMTXIDX) and a TEX0 matrix-index byte;
    # stage 0 samples a reflection map (coordinates from the normal, source 1), stage 1 the base texture
    vtx1 = 2 << A_POS | 2 << A_TEX0 | 1 << 24 | 1 << 25
    m1 = material(mp2, 0x20 | 0x80, [2, 1], vtx1,
                  [tev(cin(ZERO, TEXC, RASC, ZERO)), tev(cin(ZERO, TEXC, RASC, ZERO))], [(0, 0), (1, 1)], [1, 4])
    vtx2 = IDX16 << A_POS | IDX16 << A_NRM | IDX16 << A_CLR0
    m2 = material(mp2, 0x10 | 0x8, [], vtx2, [tev(cin(ZERO, ZERO, ZERO, KONST), kcolor=0x0C)], [(0xFF, 0xFF)], [],
                  blend=(5, 4), konst=[0x3366CCFF])
    vat = 1 if mp2 else 0
    # surface 0: a strip over positions 0-3, then a triangle list with a degenerate triangle and (3, 2, 11)
    s0 = dl_prim(0x98 | vat, [v16(i, i, i) for i in range(4)])
    s0 += dl_prim(0x90 | vat, [v16(1, 1, 1), v16(1, 1, 1), v16(2, 2, 2), v16(3, 3, 3), v16(2, 2, 2), v16(11, 11, 4)])
    # surface 1: a triangle list, 1-byte indices after two matrix-index bytes (PNMTXIDX 0, TEX0MTXIDX 30)
    s1 = dl_prim(0x90 | vat, [bytes((0, 30, p, t)) for p, t in ((4, 4), (5, 5), (6, 6), (6, 6), (5, 5), (7, 7))])
    # surface 2: a fan over positions 8-11 with colours 0-3
    s2 = dl_prim(0xA0 | vat, [v16(8 + i, 8 + i, i) for i in range(4)])
    surfs = [surface(mp2, 0, s0), surface(mp2, 1, s1), surface(mp2, 2, s2)]
    data, starts = cmdl(4 if mp2 else 2, 1 | (2 if mp2 else 0), material_set(tex_table, [m0, m1, m2]),
                        POS, NRM, CLR, UV, surfs, short_nrm=mp2)
    tris = {
        0: [((0, 0, None, 0), (1, 1, None, 1), (2, 2, None, 2)), ((2, 2, None, 2), (1, 1, None, 1), (3, 3, None, 3)),
            ((3, 3, None, 3), (2, 2, None, 2), (11, 11, None, 4))],
        1: [((4, None, None, 4), (5, None, None, 5), (6, None, None, 6)),
            ((6, None, None, 6), (5, None, None, 5), (7, None, None, 7))],
        2: [((8, 8, 0, None), (9, 9, 1, None), (10, 10, 2, None)), ((8, 8, 0, None), (10, 10, 2, None), (11, 11, 3, None))],
    }
    hdr = 0x30 if mp2 else 0x2C
    return data, starts, tris, hdr


def cskr(rules, mp2=False):
    out = u32(len(rules))
    for ws, n in rules:
        out += u32(len(ws)) + b"".join(u32(b) + f32(w) for b, w in ws) + u32(n)
    if mp2:
        out += u32(2) + u16(0) + u16(1) + u32(4) + b"\0\0\0\0"
    else:
        total = sum(n for _, n in rules)
        out += s32(-1) + u32(total) + s32(-1) + u32(total)
    return pad(out, 32, b"\xff")


def rule_of(p, rules):
    for ws, n in rules:
        if p < n:
            merged = {}
            for b, w in ws[:3]:
                merged[b] = merged.get(b, 0) + f32v(w)
            s = sum(merged.values())
            return [(b, w / s) for b, w in merged.items()]
        p -= n
    return None


def skinned(p, t, rules, animated=True):
    bind = {b: pos for b, _, pos, _ in BONES}
    world = bone_world(t) if animated else {b: ((1, 0, 0, 0), bind[b]) for b in bind}
    v = tuple(map(f32v, POS[p]))
    out = [0.0, 0.0, 0.0]
    for b, w in rule_of(p, rules):
        q, P = world[b]
        r = qrot(q, tuple(v[i] - bind[b][i] for i in range(3)))
        for i in range(3):
            out[i] += w * (r[i] + P[i])
    return (out[0], out[2], -out[1])


def mat_world(q, p):
    w, x, y, z = q
    r = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    m = [r[0] + [p[0]], r[1] + [p[1]], r[2] + [p[2]], [0, 0, 0, 1]]
    return [m[0], m[2], [-v for v in m[1]], m[3]]  # the converted frame: rows 0, 2, -1


def model_lines(mesh_prefix, tris, times, texels, rules, animated=True):
    lines = ["expect-meshes 3", "expect-materials 3", "expect-textures 2"]
    verts = {0: 5, 1: 4, 2: 4}
    flags = {0: (1, 1, 0), 1: (1, 0, 0), 2: (0, 1, 1)}
    for m in range(3):
        uv, nv, col = flags[m]
        lines.append("expect-mesh name=%s_%d node=RootNode vertices=%d triangles=%d material=material_%d uv=%d "
                     "normals=%d colors=%d" % (mesh_prefix, m, verts[m], len(tris[m]), m, uv, nv, col))
    for m in range(3):  # the CINF bones in pre-order, children in the CINF's build order (3, 6, 5, 4)
        lines.append("expect-skin mesh=%s_%d skin=skeleton joints=Root,Hip,Head,Arm" % (mesh_prefix, m))
    lines.append("expect-material name=material_0 color=1,1,1,1 texture=%08X alpha=OPAQUE double_sided=0 unlit=0"
                 % (TEX_ID + 7))
    lines.append("expect-material name=material_1 color=1,1,1,1 texture=%08X alpha=MASK double_sided=0 unlit=0"
                 % (TEX_ID + 10))
    lines.append("expect-material name=material_2 color=0.2,0.4,0.8,1 texture=- alpha=BLEND double_sided=0 unlit=0")
    lines.append("expect-texture name=%08X size=4x4 format=RGB565 wrap=REPEAT,REPEAT nearest=0" % (TEX_ID + 7))
    lines.append("expect-texture name=%08X size=8x8 format=CMPR wrap=REPEAT,REPEAT nearest=0" % (TEX_ID + 10))
    for m in range(3):
        for k, tri in enumerate(tris[m]):
            uvs = ";".join("%s,%s" % tuple(fmt(c) for c in UV[c[3]]) for c in tri) if tri[0][3] is not None else None
            cols = ";".join(",".join(fmt((CLR[c[2]] >> s & 0xFF) / 255) for s in (24, 16, 8, 0)) for c in tri) \
                if tri[0][2] is not None else None
            line = "expect-triangle mesh=%s_%d index=%d p=%s" % (
                mesh_prefix, m, k, ";".join(",".join(fmt(v) for v in skinned(c[0], 0, rules, False)) for c in tri))
            if uvs:
                line += " uv=" + uvs
            if cols:
                line += " c=" + cols
            lines.append(line)
    for t in times:
        for m in range(3):
            for k, tri in enumerate(tris[m]):
                for c in range(3):
                    p = skinned(tri[c][0], t, rules, animated)
                    lines.append("expect-skinned mesh=%s_%d tri=%d corner=%d t=%s p=%s" % (
                        mesh_prefix, m, k, c, fmt(t), ",".join(fmt(v) for v in p)))
    for tid in (TEX_ID + 7, TEX_ID + 10):
        lines += texel_lines("%08X" % tid, texels[tid][1])
    return lines


def pose_lines(times):
    lines = []
    for t in times:
        w = bone_world(t)
        for b, _, _, name in BONES:
            m = mat_world(*w[b])
            lines.append("expect-pose t=%s node=%s world=%s" % (fmt(t), name, ",".join(fmt(v) for r in m for v in r)))
    return lines


# ---- pak and ANCS (docs/formats/metroid_prime.md §11, §13.5) ---------------------------------------------
def ancs(chars, prims):
    body = struct.pack(">HHI", 1, 1, len(chars))
    for i, (name, cm, sk, ci) in enumerate(chars):
        ch = struct.pack(">IH", i, 1) + name.encode() + b"\0" + u32(cm) + u32(sk) + u32(ci)
        ch += u32(0)                                              # animation names
        ch += b"PAS4" + u32(0) + u32(0)                           # PAS database: no states
        ch += u32(0) * 3 + u32(0)                                 # particles, unknown
        body += ch
    s = struct.pack(">HI", 4, len(prims))
    for k, (anim_id, name) in enumerate(prims):
        s += name.encode() + b"\0" + u32(0) + u32(anim_id) + u32(k) + name.encode() + b"\0" + f32(1) + u32(0)
    s += u32(0) + u32(3) + u32(0) + f32(0) * 2 + u32(0) + u32(len(prims))
    for anim_id, _ in prims:
        s += u32(anim_id) + u32(0)
    return body + s


def pak(entries):
    """entries: (type, id, bytes, compress); compress "bad": flagged compressed, a zlib stream cut short"""
    stored = []
    for t, i, d, comp in entries:
        z = zlib.compress(d, 9)
        z = z[:len(z) // 2] if comp == "bad" else z
        stored.append(pad(u32(len(d)) + z if comp else d, 32, b"\xff"))
    head = u32(0x00030005) + u32(0) + u32(0) + u32(len(entries))
    off = len(head) + 20 * len(entries)
    off += -off % 32
    for (t, i, _, comp), s in zip(entries, stored):
        head += u32(1 if comp else 0) + t + u32(i) + u32(len(s)) + u32(off)
        off += len(s)
    return pad(head) + b"".join(stored)


def drone_model():
    vtx = IDX16 << A_POS
    m0 = material(False, 0x80, [], vtx, [tev(cin(ZERO, ZERO, ZERO, KONST), kcolor=0x04)], [(0xFF, 0xFF)], [])
    dl = dl_prim(0x90, [u16(0), u16(1), u16(2)])
    data, _ = cmdl(2, 1, material_set([], [m0]), [(0, 0, 2), (1, 0, 2), (0, 1, 2)], [], [], [], [surface(False, 0, dl)])
    return data


def main():
    tex = make_textures()
    times = [0, 0.25, 0.5, 0.75, 1.0]
    model, starts, tris, hdr = hero_model()
    skin, skel, anim = cskr(RULES), cinf(BONES), anim_v0()
    for ext, d in (("cmdl", model), ("cskr", skin), ("cinf", skel), ("anim", anim)):
        write("hero." + ext, d)
    desc = """hero.anim + hero.cinf + hero.cmdl + hero.cskr -- a skinned, textured character (make_models.py)

hero.cinf: Prime 1 skeleton, bones 3 Root (0,0,0), 4 Hip (0,0,1), 5 Arm (1,0,1), 6 Head (0,0,2)
(absolute bind positions; Arm and Head are children of Hip).
hero.anim: version 0, Prime 1 layout, K = 3 frames, interval 0.5 s, duration 1 s.  Channel 0 = Arm:
rotation about X 0, 0, 60 deg, no translation; channel 1 = Hip: rotation about Z 0, 90, 90 deg,
translation (absolute, parent-relative) (0,0,1), (0,0,1.5), (0.5,0,1.5).  Root and Head are not
animated.  At t = 0 every bone is at its bind position: the pose there is the bind pose.
hero.cmdl: version 2 (Prime 1), flags 1 (skinned, float normals), 1 material set, 8 sections:
material set, 12 positions, 12 normals, 4 colours, 8 UVs, surface offsets, 3 surfaces (starts %s).
  material 0: POS/NRM/TEX0 16-bit indices, one TEV stage TEXC x RASC, texture map 0 -> set texture 0
              = %08X (RGB565 4x4), coordinates from TEX0; blend (ONE, ZERO): OPAQUE.
  material 1: POS/TEX0 8-bit indices after a PNMTXIDX byte and a TEX0MTXIDX byte; flag 0x20 (alpha
              test): MASK with cutoff 64/255.  Stage 0 samples texture map 0 through coordinates made
              from the normal (a reflection map: skipped); stage 1 texture map 1 -> set texture 1 =
              %08X (CMPR 8x8) through TEX0: the base colour texture.
  material 2: POS/NRM/CLR0, flags 0x10|0x8 (depth sort, konst colours), blend (SRCALPHA, INVSRCALPHA):
              BLEND; no texture stage, a KONST stage with K0 = 0x3366CCFF: base colour 0.2,0.4,0.8,1.
  surface 0 (material 0): a strip 0,1,2,3 -> (0,1,2), (2,1,3); a list (1,1,2) [dropped: repeats
              position 1], (3,2,11) with UV 4 -> 3 triangles, 5 distinct vertices.
  surface 1 (material 1): a list (4,5,6), (6,5,7) -> 2 triangles, 4 vertices.
  surface 2 (material 2): a fan 8,9,10,11 -> (8,9,10), (8,10,11), colours 0-3.
hero.cskr: 4 rules in position order: positions 0-3 Hip 1; 4-7 Arm 0.25 + Hip 0.75 (ids unsorted);
8-10 Head 0.5 + Root 0.2 + Arm 0.3 (3 weights, unsorted); 11 Head 0.5 + Head 0.5 (a duplicated id:
summed to 1).  MP1 footer (-1, 12, -1, 12), 0xFF padding.

Expected: one mesh per material on the root, vertices de-duplicated by (position, normal, colour,
UV) index tuples; positions at rest in the converted frame (x, z, -y); skinned positions
v' = sum w (R (v - b) + P) turned to (x, z, -y), computed from the bone poses of the v0 rules
(frame = floor(t / 0.5), raw slerp and lerp to the next frame).  Texels as in 10000007.txt and
1000000A.txt.  Loaded alone (hero.cmdl), the model is in its bind pose: the t = 0 lines hold.

expect-meta metroid.layout=v0-mp1
expect-duration 1
expect-nodes 4
""" % (starts[-3:], TEX_ID + 7, TEX_ID + 10)
    lines = model_lines("model", tris, times, tex, RULES) + pose_lines(times)
    write("hero.txt", (desc + "\n".join(lines) + "\n").encode())

    # Prime 2 variant: version 4 (two more material words, 0x30-byte surface headers), short normals
    # (s16 / 16384, VAT 1), an MP2 CSKR footer and an MP2 CINF; loaded alone in its bind pose.
    m2, starts2, tris2, _ = hero_model(mp2=True)
    write("hero_mp2.cmdl", m2)
    write("hero_mp2.cskr", cskr(RULES, mp2=True))
    write("hero_mp2.cinf", cinf(BONES, mp2=True))
    desc2 = """hero_mp2.cmdl + hero_mp2.cskr + hero_mp2.cinf -- the hero model in the Prime 2 layouts (make_models.py)

CMDL version 4: each material has two more u32 after its vertex attributes, each surface header is
0x30 bytes (a skin-matrix bank s16 -1 and a group u16 0 after the reflection normal) padded to 64;
header flags 3 (skinned, short normals): the normals are s16 with 14 fractional bits (value * 16384)
and every primitive uses vertex format 1.  CSKR: the same rules with the Prime 2 footer (2 u16
envelope indices, 4 bytes).  CINF: Prime 2 records (two identity quaternions per bone).  Surfaces
start at %s.  Loaded alone: skinned in the bind pose (the rest positions, turned).

expect-meta metroid.layout=cmdl-mp2
""" % (starts2[-3:],)
    lines2 = [l for l in model_lines("model", tris2, [0], tex, RULES, animated=False)]
    write("hero_mp2.txt", (desc2 + "\n".join(lines2) + "\n").encode())

    # the pak: an ANCS with two characters over one skeleton, the ANIM, models, skins, textures
    drone = drone_model()
    drone_skin = cskr([([(6, 1.0)], 3)])
    ids = dict(ancs=0x20000000, cmdl=0x20000001, cskr=0x20000002, cinf=0x20000003, anim=0x20000004,
               dcmdl=0x20000011, dcskr=0x20000012)
    a = ancs([("Hero", ids["cmdl"], ids["cskr"], ids["cinf"]), ("Drone", ids["dcmdl"], ids["dcskr"], ids["cinf"])],
             [(ids["anim"], "walk")])
    entries = [(b"ANCS", ids["ancs"], a, True), (b"ANIM", ids["anim"], anim, True),
               (b"CMDL", ids["cmdl"], model, True), (b"CSKR", ids["cskr"], skin, False),
               (b"CINF", ids["cinf"], skel, False), (b"TXTR", TEX_ID + 7, tex[TEX_ID + 7][0], False),
               (b"TXTR", TEX_ID + 10, tex[TEX_ID + 10][0], True), (b"CMDL", ids["dcmdl"], drone, False),
               (b"CSKR", ids["dcskr"], drone_skin, False)]
    write("character.pak", pak(entries))
    descp = """character.pak -- the hero character in a Prime 1 pak (make_models.py pak(), ancs())

Resources: ANCS %(ancs)08X (zlib) with two characters on CINF %(cinf)08X: "Hero" (CMDL %(cmdl)08X zlib,
CSKR %(cskr)08X) and "Drone" (CMDL %(dcmdl)08X: one triangle over positions (0,0,2), (1,0,2), (0,1,2),
a KONST stage with the fixed konst 4/8 -> grey 0.5; CSKR %(dcskr)08X: one rule, Head 1, 3 positions);
an animation set with one primitive "walk" = ANIM %(anim)08X (hero.anim, zlib); the textures
10000007 (stored) and 1000000A (zlib).  The ANCS names the animation and its first character, so
loading the pak gives "walk" with the Hero's skinned, textured mesh: the same expectations as
hero.txt, with meshes named Hero_0, Hero_1, Hero_2.  With character=Drone the mesh is Drone_0
(1 triangle, grey, skinned to Head).

expect-meta metroid.layout=v0-mp1
expect-meta metroid.character=Hero
expect-duration 1
expect-nodes 4
""" % ids
    linesp = model_lines("Hero", tris, times, tex, RULES) + pose_lines(times)
    dl = ["expect-drone t=%s p=%s" % (fmt(t), ";".join(
        ",".join(fmt(v) for v in drone_skinned(p, t)) for p in ((0, 0, 2), (1, 0, 2), (0, 1, 2)))) for t in times]
    write("character.txt", (descp + "\n".join(linesp + dl) + "\n").encode())

    # the same character in an Echoes pak: the Prime 2 ANCS layout (sectionCount 10, one string per
    # animation name, the Echoes particle lists, CSPP and extents; an animation set whose EVNTs are
    # embedded) and the Prime 2 model, skin and skeleton; stored resources (no LZO needed)
    ch = echoes_character("Hero", ids["cmdl"], ids["cskr"], ids["cinf"])
    a2 = echoes_ancs(ch, [(ids["anim"], "walk")])
    entries2 = [(b"ANCS", ids["ancs"], a2, False), (b"ANIM", ids["anim"], anim, False),
                (b"CMDL", ids["cmdl"], m2, False), (b"CSKR", ids["cskr"], cskr(RULES, mp2=True), False),
                (b"CINF", ids["cinf"], cinf(BONES, mp2=True), False),
                (b"TXTR", TEX_ID + 7, tex[TEX_ID + 7][0], False), (b"TXTR", TEX_ID + 10, tex[TEX_ID + 10][0], False)]
    write("character_mp2.pak", pak(entries2))
    desc3 = """character_mp2.pak -- the hero character in an Echoes pak (make_models.py echoes_ancs())

An Echoes ANCS (character sectionCount 10: one string per animation name, PART/SWHC/u32/ELSC/SPSC
lists and two words, no AABBs or effects, frozen ids -1, no animation indices, CSPP -1, u8 0, no
extents; an animation set of sectionCount 4 with one EVNT per animation) naming "walk" = hero.anim and
the character "Hero" = hero_mp2.cmdl (version 4, short normals), hero_mp2.cskr (Prime 2 footer) and
hero_mp2.cinf (Prime 2 records); every resource stored.  Expected: as character.txt (the Prime 2
model has the same positions, UVs, colours, rules and skeleton), meshes Hero_0..2.

expect-meta metroid.layout=v0-mp1
expect-meta metroid.character=Hero
expect-duration 1
expect-nodes 4
"""
    write("character_mp2.txt", (desc3 + "\n".join(model_lines("Hero", tris, times, tex, RULES) + pose_lines(times))
                                + "\n").encode())

    broken(model, starts, hdr, skin)
    lenient(model, skin, skel, anim, starts, tex)


def echoes_character(name, cm, sk, ci):
    ch = struct.pack(">IH", 0, 10) + name.encode() + b"\0" + u32(cm) + u32(sk) + u32(ci)
    ch += u32(1) + u32(0) + b"walk\0"                   # animation names: index, one string
    ch += b"PAS4" + u32(0) + u32(0)
    ch += u32(0) * 7                                     # PART, SWHC, u32, ELSC, SPSC, u32, u32
    ch += u32(0) + u32(0)                                # AABBs, effects
    ch += u32(0xFFFFFFFF) * 2                            # frozen CMDL, CSKR
    ch += u32(0)                                         # animation indices
    ch += u32(0xFFFFFFFF) + b"\0" + u32(0)               # CSPP, u8, extents
    return ch


def echoes_ancs(character, prims):
    a = struct.pack(">HHI", 1, 1, 1) + character + struct.pack(">HI", 4, len(prims))
    for k, (anim_id, name) in enumerate(prims):
        a += name.encode() + b"\0" + u32(0) + u32(anim_id) + u32(k) + name.encode() + b"\0" + f32(1) + u32(0)
    a += u32(0) + u32(3) + u32(0) + f32(0) * 2 + u32(0)  # transitions, default, additive, half transitions
    a += u32(len(prims)) + (u32(1) + u32(0) + u32(0) + u32(0)) * len(prims)  # EVNT v1: no events
    return a


def drone_skinned(p, t):
    q, P = bone_world(t)[6]
    r = qrot(q, tuple(p[i] - (0, 0, 2)[i] for i in range(3)))
    v = tuple(r[i] + P[i] for i in range(3))
    return (v[0], v[2], -v[1])


def broken(model, starts, hdr, skin):
    # a section size that is not a multiple of 32 (the normals' size field, section 2 at 0x2C + 8)
    b = bytearray(model)
    b[0x34:0x38] = u32(struct.unpack(">I", model[0x34:0x38])[0] + 4)
    write("bad_section.cmdl", bytes(b))
    write("bad_section.txt", b"bad_section.cmdl -- hero.cmdl with the normals section's size (field at 0x34)\n"
          b"4 bytes larger: not a multiple of 32.  Refused at section_sizes, byte 52.\n\nexpect-error-offset 52\n")
    # a display-list count running past the list: surface 1's first primitive says 200 vertices
    s1 = starts[-2] + 64
    b = bytearray(model)
    assert b[s1] == 0x90
    b[s1 + 1:s1 + 3] = u16(200)
    write("bad_dl_overrun.cmdl", bytes(b))
    write("bad_dl_overrun.txt", ("bad_dl_overrun.cmdl -- hero.cmdl whose surface 1 display list starts with a\n"
                                 "triangle list of 200 vertices (4 bytes each) in a 64-byte list.  Refused at\n"
                                 "display_list.count, byte %d.\n\nexpect-error-offset %d\n" % (s1 + 1, s1 + 1)).encode())
    # a position index past the 12 positions: surface 1's third vertex (1-byte indices after 2 matrix bytes)
    at = s1 + 3 + 2 * 4 + 2
    b = bytearray(model)
    assert b[at] == 6
    b[at] = 200
    write("bad_index.cmdl", bytes(b))
    write("bad_index.txt", ("bad_index.cmdl -- hero.cmdl whose surface 1 third vertex names position 200; the\n"
                            "160-byte position section holds 13 (12 and 16 bytes of zero padding).  The index is a\n"
                            "1-byte index after the two matrix-index bytes.  Refused at\n"
                            "display_list.position_index, byte %d.\n\nexpect-error-offset %d\n" % (at, at)).encode())
    # a skin whose second rule claims 100000 weights
    b = bytearray(skin)
    r1 = 4 + 4 + 8 + 4
    assert struct.unpack(">I", b[r1:r1 + 4])[0] == 2
    b[r1:r1 + 4] = u32(100000)
    write("bad_skin_count.cskr", bytes(b))
    write("bad_skin_count.txt", ("bad_skin_count.cskr -- hero.cskr whose rule 1 claims 100000 weights (800000\n"
                                 "bytes) in a file of %d.  Refused at rule.weight_count, byte %d.\n\n"
                                 "expect-error-offset %d\n" % (len(skin), r1, r1)).encode())


# ---- what the loaders tolerate (docs/formats/metroid_prime.md §13.6) ------------------------------------------
def static_lines(name, tris, pos, uvs=None, nrm=None):
    """expect-triangle lines of a static mesh: positions as stored (the root node turns them)"""
    out = []
    for k, tri in enumerate(tris):
        line = "expect-triangle mesh=%s index=%d p=%s" % (name, k, ";".join(",".join(fmt(f32v(v)) for v in pos[c[0]])
                                                                         for c in tri))
        if uvs is not None:
            line += " uv=" + ";".join(",".join(fmt(v) for v in uvs(c)) for c in tri)
        out.append(line)
    return out


def face_normal(a, b, c):
    e1 = [b[i] - a[i] for i in range(3)]
    e2 = [c[i] - a[i] for i in range(3)]
    return (e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0])


def lenient(model, skin, skel, anim, starts, tex):
    ids = dict(ancs=0x20000000, cmdl=0x20000001, cskr=0x20000002, cinf=0x20000003, anim=0x20000004)
    a = ancs([("Hero", ids["cmdl"], ids["cskr"], ids["cinf"])], [(ids["anim"], "walk")])

    def hero_pak(cmdl_bytes, cmdl_comp, skin_comp, with_parts=True):
        e = [(b"ANCS", ids["ancs"], a, False), (b"ANIM", ids["anim"], anim, True),
             (b"CINF", ids["cinf"], skel, False)]
        if with_parts:
            e += [(b"CMDL", ids["cmdl"], cmdl_bytes, cmdl_comp), (b"CSKR", ids["cskr"], skin, skin_comp)]
        return pak(e)

    # 1a. a pak whose CMDL is refused (bad_index.cmdl's position index 200): the animation exports alone
    s1 = starts[-2] + 64
    at = s1 + 3 + 2 * 4 + 2
    b = bytearray(model)
    b[at] = 200
    write("pak_bad_cmdl.pak", hero_pak(bytes(b), True, False))
    write("pak_bad_cmdl.txt", ("""pak_bad_cmdl.pak -- character.pak's Hero with the CMDL of bad_index.cmdl (position index 200 at
byte %d of the model; zlib-compressed in the pak).  The model is left out with a warning naming the
field and the byte; the animation still exports on the skeleton.

load pak_bad_cmdl.pak
expect-animations 1
expect-meshes 0
expect-warning CMDL %08X of Hero could not be read
expect-warning (display_list.position_index) (at byte %d)
""" % (at, ids["cmdl"], at)).encode())
    # 1b. a pak whose CSKR's zlib stream is cut short: the model exports static, the animation too
    write("pak_bad_skin.pak", hero_pak(model, False, "bad"))
    write("pak_bad_skin.txt", ("""pak_bad_skin.pak -- character.pak's Hero whose CSKR is flagged compressed but holds half a zlib
stream.  The skin is left out with a warning; the model is static (3 meshes, no skin) and the
animation exports.

load pak_bad_skin.pak
expect-animations 1
expect-meshes 3
expect-unskinned
expect-warning skin CSKR %08X of Hero could not be read
""" % ids["cskr"]).encode())
    # 5. a pak without the model and the skin the ANCS names: both said in the metadata
    write("pak_no_parts.pak", hero_pak(model, False, False, with_parts=False))
    write("pak_no_parts.txt", ("""pak_no_parts.pak -- an ANCS naming CMDL %08X and CSKR %08X, neither in the pak (shared resources
live in other paks): both named in metroid.model_not_in_pak.

load pak_no_parts.pak
expect-animations 1
expect-meshes 0
expect-meta metroid.model_not_in_pak=CMDL %08X, CSKR %08X
""" % (ids["cmdl"], ids["cskr"], ids["cmdl"], ids["cskr"])).encode())

    # 1c. a skin whose rule 1 names bone 99 (no such CINF bone): that rule's vertices follow the root
    rules_bad = [RULES[0], ([(99, 0.25), (4, 0.75)], 4), RULES[2], RULES[3]]
    rules_exp = [RULES[0], ([(3, 1.0)], 4), RULES[2], RULES[3]]
    bad_skin = cskr(rules_bad)
    bone_off = 4 + 4 + 8 + 4 + 4          # rule 0 (count, 1 weight, vertex count), rule 1 count, first id
    assert struct.unpack(">I", bad_skin[bone_off:bone_off + 4])[0] == 99
    for ext, d in (("cmdl", model), ("cskr", bad_skin), ("cinf", skel), ("anim", anim)):
        write("skin_missing_bone." + ext, d)
    _, _, tris, _ = hero_model()
    times = [0, 0.5, 1.0]
    lines = [l for l in model_lines("model", tris, times, tex, rules_exp) if not l.startswith("expect-texel")]
    write("skin_missing_bone.txt", ("""skin_missing_bone.anim + .cmdl + .cskr + .cinf -- the hero whose skin rule 1 (positions 4-7) names
bone 99 (id at byte %d of the CSKR), which the skeleton lacks.  The rule's vertices are bound to the
root (Root, weight 1, not animated: they stay at rest) with a warning; the other rules as hero.txt.

load skin_missing_bone.anim
expect-meta metroid.layout=v0-mp1
expect-duration 1
expect-nodes 4
expect-animations 1
expect-warning bone 99, metroid_cskr rule.bone_id at byte %d
""" % (bone_off, bone_off) + "\n".join(lines) + "\n").encode())

    # 2. a lightmapped material: flag 0x2000, TEX0 -> the lightmap (short UVs, indices 8-11 past the 4
    # float UVs), the diffuse (base) on TEX1 (float UVs); and a 0x2000 material whose base reads TEX0
    # (short UVs).  Header flags 4: the short-UV section follows the float UVs.
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (2, 0, 0), (2, 1, 0)]
    nrm = [(0, 0, 1)]
    fuv = [(0.125, 0.25), (0.5, 0.75), (1.5, 2.0), (0.25, 0.125)]
    suv = [(i * 1000 + 17, i * 2000 + 5) for i in range(12)]       # u16, 15 fractional bits
    vtx_lm = IDX16 << A_POS | IDX16 << A_NRM | IDX16 << A_TEX0 | IDX16 << (A_TEX0 + 2)
    lm = material(False, 0x2000, [0, 1], vtx_lm,
                  [tev(cin(ZERO, ZERO, ZERO, TEXC)), tev(cin(ZERO, TEXC, 0, ZERO))], [(0, 0), (1, 1)], [4, 5])
    vtx_s = IDX16 << A_POS | IDX16 << A_NRM | IDX16 << A_TEX0
    sm = material(False, 0x2000, [1], vtx_s, [tev(cin(ZERO, TEXC, RASC, ZERO))], [(0, 0)], [4])
    corners0 = ((0, 0), (1, 1), (2, 2), (2, 2), (1, 1), (3, 3))

    def short_cmdl(flags, tex0_base, tris1):
        dl0 = dl_prim(0x90, [v16(p, 0, tex0_base + i % 4, t) for i, (p, t) in enumerate(corners0)])
        dl1 = dl_prim(0x90, [v16(p, 0, q) for p, q in tris1[0]])
        sections = [pad(material_set([TEX_ID + 7, TEX_ID + 10], [lm, sm])),
                    pad(b"".join(f32(c) for p in pos for c in p)), pad(b"".join(f32(c) for n in nrm for c in n)),
                    pad(b""), pad(b"".join(f32(c) for t in fuv for c in t))]
        if flags & 4:
            sections.append(pad(b"".join(u16(c) for t in suv for c in t)))
        surfs = [surface(False, 0, dl0), surface(False, 1, dl1)]
        ends, e = [], 0
        for x in surfs:
            e += len(x)
            ends.append(e)
        sections.append(pad(u32(len(surfs)) + b"".join(u32(x) for x in ends)))
        sections += surfs
        head = u32(0xDEADBABE) + u32(2) + u32(flags) + b"".join(f32(v) for v in (0, 0, 0, 2, 1, 0))
        head += u32(len(sections)) + u32(1) + b"".join(u32(len(x)) for x in sections)
        return pad(head) + b"".join(sections)

    tris0 = [[(0, 0), (1, 1), (2, 2)], [(2, 2), (1, 1), (3, 3)]]

    def short_lines(tris1, short):
        lines = ["expect-meshes 2", "expect-materials 2", "expect-textures 1",
                 "expect-mesh name=model_0 node=RootNode vertices=4 triangles=2 material=material_0 uv=1 normals=1 "
                 "colors=0",
                 "expect-mesh name=model_1 node=RootNode vertices=3 triangles=1 material=material_1 uv=1 normals=1 "
                 "colors=0"]
        lines += static_lines("model_0", [[(p,) for p, _ in t] for t in tris0], pos)
        lines += static_lines("model_1", [[(p,) for p, _ in t] for t in tris1], pos)
        for k, t in enumerate(tris0):   # TEX1 (float) for the base texture
            lines[-3 + k] += " uv=" + ";".join(",".join(fmt(f32v(v)) for v in fuv[q]) for _, q in t)
        if short:
            lines[-1] += " uv=" + ";".join(",".join(fmt(v / 32768) for v in suv[q]) for _, q in tris1[0])
        else:
            lines[-1] += " uv=" + ";".join(",".join(fmt(f32v(v)) for v in fuv[q]) for _, q in tris1[0])
        return lines

    tris1 = [[(1, 5), (4, 6), (3, 11)]]
    write("lightmap.cmdl", short_cmdl(4, 8, tris1))
    lines = short_lines(tris1, True) + ["expect-no-warning short UVs"]
    write("lightmap.txt", ("""lightmap.cmdl -- a Prime 1 model, header flags 4 (short UVs: 12 u16 pairs, 15 fractional bits;
4 float UVs), two materials with flag 0x2000 (TEX0 indexes the short-UV array):
  material 0 (lightmapped): POS/NRM/TEX0/TEX1; stage 0 the lightmap (texture map 0) through TEX0,
    stage 1 the diffuse (texture map 1 = %08X) TEXC x CPREV through TEX1: the base texture, so
    the exported UVs are TEX1's float UVs; TEX0's indices 8-10 are checked against the 12 short UVs.
  material 1: POS/NRM/TEX0, the base texture through TEX0: short UVs (indices 5, 6, 11).
Static (no skin): positions as stored.

load lightmap.cmdl
""" % (TEX_ID + 10) + "\n".join(lines) + "\n").encode())
    # without the short-UV section, TEX0 reads the float UVs (as PWE does): a warning; TEX0 indices 0-3 here
    tris1f = [[(1, 1), (4, 2), (3, 3)]]
    write("short_uv_fallback.cmdl", short_cmdl(0, 0, tris1f))
    write("short_uv_fallback.txt", ("""short_uv_fallback.cmdl -- lightmap.cmdl's materials (flag 0x2000) in a model whose header lacks
flag 4 (no short-UV section), TEX0 indices 0-3: TEX0 reads the float UVs, as PWE does, with a
warning; material 1's base UVs are float UVs 1, 2, 3.

load short_uv_fallback.cmdl
expect-warning 2 material(s) set flag 0x2000 (short UVs) in a model without a short-UV array
""" + "\n".join(short_lines(tris1f, False)) + "\n").encode())

    # 3. a display list longer than its size field: 5 triangles (33 bytes) behind a size field of 32
    gpos = [(x, y, 0) for y in range(2) for x in range(4)]
    dl = dl_prim(0x90, [u16(i) for i in (0, 1, 4, 4, 1, 5, 1, 2, 5, 5, 2, 6, 2, 3, 6)])
    assert len(dl) == 33
    m0 = material(False, 0, [], IDX16 << A_POS, [tev(cin(ZERO, ZERO, ZERO, KONST), kcolor=0x00)], [(0xFF, 0xFF)], [])
    sf = bytearray(surface(False, 0, dl))
    sf[16:20] = u32(0x80000000 | 32)
    data, st = cmdl(2, 0, material_set([], [m0]), gpos, [], [], [], [bytes(sf)])
    write("dl_long.cmdl", data)
    # the game hands GX the field's 32 bytes: the header and 14 whole vertices, so the 5th triangle
    # (vertices 12-14) is cut
    tris = [[(0,), (1,), (4,)], [(4,), (1,), (5,)], [(1,), (2,), (5,)], [(5,), (2,), (6,)]]
    write("dl_long.txt", ("""dl_long.cmdl -- one surface (section at %d) whose display list is a triangle list of 15 vertices
(33 bytes, padded to 64) while its size field says 32.  The game draws the size field's bytes (the
public loaders walk to the section's end): the primitive header and 14 whole vertices, so the first
4 triangles, and a warning.

load dl_long.cmdl
expect-meshes 1
expect-mesh name=model_0 node=RootNode vertices=6 triangles=4 material=material_0 uv=0 normals=0 colors=0
expect-warning longer than their size field
""" % st[-1] + "\n".join(static_lines("model_0", tris, gpos)) + "\n").encode())

    # 3b. two primitives (one triangle each, 9 bytes) behind a size field of 9: the game stops before the
    # second primitive's header
    dl2 = dl_prim(0x90, [u16(i) for i in (0, 1, 4)]) + dl_prim(0x90, [u16(i) for i in (4, 1, 5)])
    sf2 = bytearray(surface(False, 0, dl2))
    sf2[16:20] = u32(0x80000000 | 9)
    data, st = cmdl(2, 0, material_set([], [m0]), gpos, [], [], [], [bytes(sf2)])
    write("dl_cut.cmdl", data)
    write("dl_cut.txt", ("""dl_cut.cmdl -- one surface (section at %d) whose display list holds two triangle-list primitives
of one triangle each (9 bytes each) while its size field says 9.  The game draws the size field's
bytes: the first triangle only, and a warning.

load dl_cut.cmdl
expect-meshes 1
expect-mesh name=model_0 node=RootNode vertices=3 triangles=1 material=material_0 uv=0 normals=0 colors=0
expect-warning longer than their size field
""" % st[-1] + "\n".join(static_lines("model_0", tris[:1], gpos)) + "\n").encode())

    # 4. tolerated oddities: 5 konst colours (K3 = the 4th is the base colour), an unused material
    # without positions, a NaN position no triangle uses, a primitive of vertex format 1 (short normals)
    # in a model with float normals
    konst = [0x11111111, 0x22222222, 0x33333333, 0x4080C0FF, 0x55555555]
    mk = material(False, 0x8, [], IDX16 << A_POS | IDX16 << A_NRM, [tev(cin(ZERO, ZERO, ZERO, KONST), kcolor=0x0F)],
                  [(0xFF, 0xFF)], [], konst=konst)
    mn = material(False, 0, [], IDX16 << A_NRM, [tev(cin(ZERO, ZERO, ZERO, KONST), kcolor=0x00)], [(0xFF, 0xFF)], [])
    lpos = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (float("nan"), 0, 0)]
    dl = dl_prim(0x91, [v16(0, 0), v16(1, 0), v16(2, 0)])
    data, _ = cmdl(2, 0, material_set([], [mk, mn]), lpos, [(0, 0, 1)], [], [], [surface(False, 0, dl)])
    write("lenient.cmdl", data)
    col = ",".join(fmt((konst[3] >> sh & 0xFF) / 255) for sh in (24, 16, 8, 0))
    write("lenient.txt", ("""lenient.cmdl -- what the public loaders accept (PrimeWorldEditor reads 4 konst colours and skips the
rest; unused materials and array values are not looked at; the vertex format is the GPU's business):
material 0 lists 5 konst colours, its KONST stage picks K3 = %08X; material 1 has no positions and
no surface uses it; position 3 is NaN and unused; the one primitive uses vertex format 1 (short
normals) though the header's normals are float.  Loaded with four warnings.

load lenient.cmdl
expect-meshes 1
expect-materials 1
expect-material name=material_0 color=%s texture=- alpha=OPAQUE double_sided=0 unlit=0
expect-warning more than 4 konst colours
expect-warning without positions, which no surface uses
expect-warning disagrees with the header's normal flag
expect-warning 1 non-finite value(s)
expect-no-warning inside out
""" % (konst[3], col) + "\n".join(static_lines("model_0", [[(0,), (1,), (2,)]], lpos)) + "\n").encode())

    # 4b. a NaN position a triangle uses is still refused, at the index that names it
    dl = dl_prim(0x91, [v16(0, 0), v16(1, 0), v16(3, 0)])
    data, st = cmdl(2, 0, material_set([], [mk, mn]), lpos, [(0, 0, 1)], [], [], [surface(False, 0, dl)])
    at = st[-1] + 0x40 + 3 + 2 * 4
    assert data[at:at + 2] == u16(3)
    write("nan_used.cmdl", data)
    write("nan_used.txt", ("""nan_used.cmdl -- lenient.cmdl whose triangle uses position 3 (NaN).  Refused at the index that
names it: display_list.position_index, byte %d.

expect-error-offset %d
""" % (at, at)).encode())

    # 6. winding: triangles whose face normal (counter-clockwise) points against their stored normals
    wpos = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]
    wn = [(0, 0, 1)]
    for name, order in (("wound_ok", ((0, 1, 2), (2, 1, 3))), ("wound_inverted", ((0, 2, 1), (2, 3, 1)))):
        faces = [face_normal(*(wpos[i] for i in t)) for t in order]
        inverted = sum(1 for f in faces if f[2] * wn[0][2] < 0)
        mw = material(False, 0, [], IDX16 << A_POS | IDX16 << A_NRM, [tev(cin(ZERO, ZERO, ZERO, KONST), kcolor=0)],
                      [(0xFF, 0xFF)], [])
        dl = dl_prim(0x90, [v16(i, 0) for t in order for i in t])
        data, _ = cmdl(2, 0, material_set([], [mw]), wpos, wn, [], [], [surface(False, 0, dl)])
        write(name + ".cmdl", data)
        verdict = ("expect-warning %d of 2 triangle(s) face away from their stored vertex normals" % inverted
                   if 2 * inverted > 2 else "expect-no-warning inside out")
        write(name + ".txt", ("""%s.cmdl -- two triangles over a unit square in z = 0, every normal (0,0,1); corners %s:
%d of 2 face normals (counter-clockwise) point against the stored normals.

load %s.cmdl
expect-meshes 1
%s
""" % (name, order, inverted, name, verdict) + "\n".join(static_lines("model_0", [[(i,) for i in t] for t in order],
                                                                          wpos)) + "\n").encode())


if __name__ == "__main__":
    main()
