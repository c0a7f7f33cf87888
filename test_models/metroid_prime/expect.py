#!/usr/bin/env python3
"""Reference decoder and pose evaluator for the Metroid Prime fixtures.

It reads ONLY the bytes written by make_fixtures.py (it imports nothing from
it and nothing from the project) and applies the project's rules from
README.md: docs/formats/metroid_prime.md sections 2, 3.1-3.2, 3.6 and 5 for
the bytes, the v0 / v2 timing rules, raw (non shortest-path) slerp, T*R*S
local transforms, world = parent * local, and the converted frame
W' = Rx(-90) * W.

Usage:
  python3 expect.py             print the expect-* lines of every fixture
  python3 expect.py NAME...     only those fixtures (stem, e.g. v2_mp1)
  python3 expect.py --check     compare with the expect-* lines in the .txt
                                files (exit status 1 on any difference)
"""

import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Fail(Exception):
    def __init__(self, offset, msg):
        Exception.__init__(self, '%s at offset %d' % (msg, offset))
        self.offset = offset


class Reader:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def need(self, n, what):
        if self.pos + n > len(self.data):
            raise Fail(self.pos, 'truncated ' + what)

    def take(self, fmt, what):
        n = struct.calcsize(fmt)
        self.need(n, what)
        v = struct.unpack_from('>' + fmt, self.data, self.pos)[0]
        self.pos += n
        return v

    def u8(self, w='u8'):
        return self.take('B', w)

    def u16(self, w='u16'):
        return self.take('H', w)

    def s16(self, w='s16'):
        return self.take('h', w)

    def u32(self, w='u32'):
        return self.take('I', w)

    def f32(self, w='f32'):
        return self.take('f', w)

    def vec(self, n, w='vector'):
        return tuple(self.f32(w) for _ in range(n))

    def only_padding_left(self):
        return all(b == 0xFF for b in self.data[self.pos:])


# --- CINF (docs/formats/metroid_prime.md 5) ---------------------------------

def parse_cinf(data):
    r = Reader(data)
    count = r.u32('bone count')
    bones, mp2 = [], None
    for _ in range(count):
        rec = r.pos
        bid = r.u32('bone id')
        parent = r.u32('parent id')
        pos = r.vec(3, 'position')
        if mp2 is None:                       # PWE heuristic (docs/formats/metroid_prime.md 5)
            peek = struct.unpack_from('>I', data, r.pos)[0]
            mp2 = peek == 0 or peek > 100
        if mp2:
            r.vec(4, 'rotation')
            r.vec(4, 'local rotation')
        n = r.u32('linked count')
        linked = [r.u32('linked id') for _ in range(n)]
        bones.append({'id': bid, 'parent': parent, 'pos': pos, 'rec': rec,
                      'linked': linked})
    n = r.u32('build order count')
    [r.u32('build order id') for _ in range(n)]
    n = r.u32('name count')
    names = {}
    for _ in range(n):
        end = data.index(b'\x00', r.pos)
        name = data[r.pos:end].decode('ascii')
        r.pos = end + 1
        bid = r.u32('name bone id')
        names.setdefault(bid, name)
    assert r.only_padding_left()
    ids = {b['id']: b for b in bones}
    # cycle check: the first bone (file order) that lies on a parent cycle
    for b in bones:
        seen, cur = set(), b['id']
        while True:
            p = ids[cur]['parent']
            if p == 2 or p not in ids:
                break
            if p == b['id']:
                raise Fail(b['rec'], 'parent cycle through bone %d' % b['id'])
            if p in seen:
                break
            seen.add(p)
            cur = p
    return {'layout': 'cinf-mp2' if mp2 else 'cinf-mp1', 'bones': bones,
            'names': names}


# --- ANIM version 0 (docs/formats/metroid_prime.md 2) -----------------------

def parse_v0(data, mp2):
    r = Reader(data, 4)
    a = {'version': 0, 'looping': 0, 'evnt': 0}
    a['duration'] = r.f32()
    r.u32()
    a['interval'] = r.f32()
    r.u32()
    K = a['K'] = r.u32()
    a['root'] = r.u32()
    if r.u32() != 100:
        raise Fail(r.pos - 4, 'map count')
    bonemap = [r.u8() for _ in range(100)]
    if not mp2:
        R = r.u32()
        tmap = [r.u8() for _ in range(R)]
        rmap = list(range(R))
        smap = [0xFF] * R
        rots = [r.vec(4) for _ in range(r.u32())]
        trans = [r.vec(3) for _ in range(r.u32())]
        scales = []
        a['evnt'] = r.u32()
        assert r.only_padding_left()
    else:
        maps = []
        for _ in range(3):
            n = r.u32()
            if n > 100:
                raise Fail(r.pos - 4, 'not MP2')
            maps.append([r.u8() for _ in range(n)])
        rmap, tmap, smap = maps
        arrays = []
        for n in (3, 4, 3):
            cnt = r.u32()
            if cnt * 4 * n > len(data) - r.pos:
                raise Fail(r.pos - 4, 'not MP2')
            arrays.append([r.vec(n) for _ in range(cnt)])
        scales, rots, trans = arrays
        if not r.only_padding_left():
            raise Fail(r.pos, 'not MP2 (does not end at EOF)')
    chans = []
    for bone in range(100):
        c = bonemap[bone]
        if c == 0xFF:
            continue
        ri, ti, si = rmap[c], tmap[c], smap[c]
        keys = []
        for k in range(K):
            keys.append({'frame': k,
                         'rot': rots[ri * K + k] if ri != 0xFF else None,
                         'trans': trans[ti * K + k] if ti != 0xFF else None,
                         'scale': scales[si * K + k] if si != 0xFF else None})
        chans.append({'bone': bone, 'keys': keys})
    a['chans'] = chans
    a['layout'] = 'v0-mp2' if mp2 else 'v0-mp1'
    return a


# --- ANIM version 2 / 3 (docs/formats/metroid_prime.md 3, 3.6) --------------

class BitReader:
    """docs/formats/metroid_prime.md 3.1: LSB-first inside big-endian 32-bit
    words."""

    def __init__(self, words):
        self.words = words
        self.cur = 0

    def get(self, q, signed):
        if q == 0:
            return 0
        v = 0
        for i in range(q):                    # bit by bit: obviously correct
            p = self.cur + i
            v |= ((self.words[p >> 5] >> (p & 31)) & 1) << i
        self.cur += q
        if signed and (v >> (q - 1)) & 1:
            v -= 1 << q
        return v


def parse_v2(data, layout):
    r = Reader(data, 4)
    a = {'version': 3 if layout == 'v3-pc' else 2, 'layout': layout, 'evnt': 0}
    r.u32()                                   # scratch size
    if layout == 'v2-mp2':
        r.u16()                               # 0x0101
    else:
        if layout != 'v2-demo':
            a['evnt'] = r.u32()
        r.u32()                               # unknown = 1
    a['duration'] = r.f32()
    a['interval'] = r.f32()
    a['root'] = r.u32()
    a['looping'] = r.u32()
    D = r.u32()
    M = r.f32()
    S = r.f32() if layout == 'v2-mp2' else None
    r.u32()                                   # C
    r.u32()                                   # unknown = 1
    N = r.u32()
    bm = [r.u32() for _ in range((N + 31) // 32)]
    frames = [f for f in range(N) if (bm[f >> 5] >> (f & 31)) & 1]
    if layout != 'v2-mp2':
        r.u32()                               # C again
    C = r.u32()
    descs = []

    def comp3(kind):
        out = []
        for c in range(3):
            if layout == 'v3-pc':
                v = r.u32()
                init = v >> 8
                if init & 0x800000:
                    init -= 1 << 24
                bits, boff = v & 0xFF, r.pos - 1
            else:
                init = r.s16()
                boff = r.pos
                bits = r.u8()
            if bits > 32:
                raise Fail(boff, 'bit count %d' % bits)
            out.append((init, bits))
        return out

    for _ in range(C):
        d = {}
        if layout == 'v2-mp2':
            d['bone'] = r.u8()
            d['rcount_off'] = r.pos
            d['rcount'] = r.u16()
            d['r'] = comp3('r') if d['rcount'] else None
            d['tcount'] = r.u16()
            d['t'] = comp3('t') if d['tcount'] else None
            d['scount'] = r.u16()
            d['s'] = comp3('s') if d['scount'] else None
        else:
            big = layout == 'v3-pc'
            d['bone'] = r.u32()
            d['rcount_off'] = r.pos
            d['rcount'] = r.u32() if big else r.u16()
            d['r'] = comp3('r')               # always present in MP1 / v3
            d['tcount'] = r.u32() if big else r.u16()
            d['t'] = comp3('t') if d['tcount'] else None
            d['s'] = None
        descs.append(d)
    Kb = descs[0]['rcount']
    if not frames or frames[0] != 0 or len(frames) != Kb + 1:
        raise Fail(descs[0]['rcount_off'], 'popcount %d != Kb+1 = %d'
                   % (len(frames), Kb + 1))
    bits = sum((1 + sum(q for _, q in d['r']) if d['r'] else 0)
               + (sum(q for _, q in d['t']) if d['t'] else 0)
               + (sum(q for _, q in d['s']) if d['s'] else 0) for d in descs)
    nwords = (bits * Kb + 31) // 32
    if nwords * 4 > len(data) - r.pos:
        raise Fail(r.pos, 'bitstream of %d bytes does not fit' % (nwords * 4))
    a['bitstream_offset'] = r.pos
    br = BitReader([r.u32() for _ in range(nwords)])
    s = math.pi / (2.0 * D)

    def key(frame, acc):
        k = {'frame': frame, 'rot': None, 'trans': None, 'scale': None}
        if acc['r'] is not None:
            x, y, z = (math.sin(v * s) for v in acc['r'])
            w = math.sqrt(max(0.0, 1.0 - x * x - y * y - z * z))
            k['rot'] = (-w if acc['wneg'] else w, x, y, z)
        if acc['t'] is not None:
            k['trans'] = tuple(v * M for v in acc['t'])
        if acc['s'] is not None:
            k['scale'] = tuple(v * S for v in acc['s'])
        return k

    accs, chans = [], []
    for d in descs:
        acc = {'wneg': 0}
        for kind in 'rts':
            acc[kind] = [i for i, _ in d[kind]] if d[kind] else None
        accs.append(acc)
        chans.append({'bone': d['bone'], 'keys': [key(0, acc)]})
    for j in range(1, Kb + 1):
        for d, acc, ch in zip(descs, accs, chans):
            if d['r']:
                acc['wneg'] = br.get(1, False)
                for c in range(3):
                    acc['r'][c] += br.get(d['r'][c][1], True)
            for kind in 'ts':
                if d[kind]:
                    for c in range(3):
                        acc[kind][c] += br.get(d[kind][c][1], True)
            ch['keys'].append(key(frames[j], acc))
    a['chans'] = chans
    a['D'], a['M'], a['S'], a['N'], a['frames'] = D, M, S, N, frames
    return a


def detect_and_parse(data):
    r = Reader(data)
    version = r.u32('version')
    if version == 0:
        try:
            return parse_v0(data, True)
        except (Fail, AssertionError, IndexError):
            return parse_v0(data, False)
    if version == 2:
        if struct.unpack_from('>H', data, 8)[0] == 0x0101:
            return parse_v2(data, 'v2-mp2')
        if (struct.unpack_from('>I', data, 8)[0] == 1
                and struct.unpack_from('>I', data, 12)[0] != 1):
            return parse_v2(data, 'v2-demo')
        return parse_v2(data, 'v2-mp1')
    if version == 3:
        return parse_v2(data, 'v3-pc')
    raise Fail(0, 'version %d' % version)


# --- math ----------------------------------------------------------------------

def mat_mul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(4)) for j in range(4)]
            for i in range(4)]


def mat_T(v):
    return [[1, 0, 0, v[0]], [0, 1, 0, v[1]], [0, 0, 1, v[2]], [0, 0, 0, 1]]


def mat_S(v):
    return [[v[0], 0, 0, 0], [0, v[1], 0, 0], [0, 0, v[2], 0], [0, 0, 0, 1]]


def mat_R(q):
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 0],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 0],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), 0],
            [0, 0, 0, 1]]


RX_M90 = [[1, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 0], [0, 0, 0, 1]]


def slerp_raw(a, b, u):
    """Plain slerp along the great circle between the STORED quaternions:
    no negation when the dot product is negative (the game's rule)."""
    d = sum(p * q for p, q in zip(a, b))
    d = max(-1.0, min(1.0, d))
    th = math.acos(d)
    if math.sin(th) < 1e-9:
        out = tuple(p + (q - p) * u for p, q in zip(a, b))
    else:
        sa = math.sin((1 - u) * th) / math.sin(th)
        sb = math.sin(u * th) / math.sin(th)
        out = tuple(sa * p + sb * q for p, q in zip(a, b))
    assert d > -0.999, 'antipodal pair: slerp undefined'
    return out


def lerp(a, b, u):
    return tuple(p + (q - p) * u for p, q in zip(a, b))


# --- scene and sampling ----------------------------------------------------------

def build_scene(anim, cinf):
    """Returns ordered {name: {'parent': name|None, 'rest': vec3, 'chan': ch}}."""
    nodes = {}
    by_id = {}
    if cinf is not None:
        ids = {b['id']: b for b in cinf['bones']}
        for b in cinf['bones']:
            p = b['parent']
            pb = ids.get(p) if p != 2 else None
            rest = tuple(c - (pb['pos'][i] if pb else 0.0)
                         for i, c in enumerate(b['pos']))
            name = cinf['names'][b['id']]
            nodes[name] = {'parent': None, 'rest': rest, 'chan': None,
                           'bone': b['id'], 'pbone': pb['id'] if pb else None}
            by_id[b['id']] = name
        for n in nodes.values():
            n['parent'] = by_id[n['pbone']] if n['pbone'] is not None else None
    if anim is not None:
        for ch in anim['chans']:
            name = by_id.get(ch['bone'])
            if name is None:
                name = 'bone_%d' % ch['bone']
                nodes[name] = {'parent': None, 'rest': (0.0, 0.0, 0.0),
                               'chan': None, 'bone': ch['bone']}
                by_id[ch['bone']] = name
            if nodes[name]['chan'] is None:  # duplicate channels: keep first
                nodes[name]['chan'] = ch
    return nodes


def sample(anim, ch, t):
    keys = ch['keys']
    I = anim['interval']
    if anim['version'] == 0:
        K = len(keys)
        frame = min(int(math.floor(t / I)), K - 1)
        u = max(0.0, min(1.0, (t - frame * I) / I))
        a, b = keys[frame], keys[(frame + 1) % K]
    else:
        times = [k['frame'] * I for k in keys]
        if t >= times[-1]:
            a = b = keys[-1]
            u = 0.0
        else:
            j = max(i for i in range(len(keys)) if times[i] <= t)
            a, b = keys[j], keys[j + 1]
            u = (t - times[j]) / (times[j + 1] - times[j])
    return {'rot': slerp_raw(a['rot'], b['rot'], u) if a['rot'] else None,
            'trans': lerp(a['trans'], b['trans'], u) if a['trans'] else None,
            'scale': lerp(a['scale'], b['scale'], u) if a['scale'] else None}


def local_parts(anim, node, t):
    q, off, s = (1.0, 0.0, 0.0, 0.0), node['rest'], (1.0, 1.0, 1.0)
    if node['chan'] is not None:
        v = sample(anim, node['chan'], t)
        q = v['rot'] or q
        off = v['trans'] or off
        s = v['scale'] or s
    return q, off, s


def world(anim, nodes, name, t):
    n = nodes[name]
    q, off, s = local_parts(anim, n, t)
    local = mat_mul(mat_mul(mat_T(off), mat_R(q)), mat_S(s))
    parent = world(anim, nodes, n['parent'], t) if n['parent'] else None
    return mat_mul(parent, local) if parent else local


def qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def qrot(q, v):
    p = qmul(qmul(q, (0.0,) + tuple(v)), (q[0], -q[1], -q[2], -q[3]))
    return p[1:]


def world_rt(anim, nodes, name, t):
    """Second evaluator (runtime style, docs/formats/metroid_prime.md 6, no
    scale): global rot = parentRot * localRot, pos = parentPos + parentRot *
    localOffset."""
    n = nodes[name]
    q, off, _ = local_parts(anim, n, t)
    qn = math.sqrt(sum(c * c for c in q))
    q = tuple(c / qn for c in q)
    if n['parent'] is None:
        return q, off
    pq, pp = world_rt(anim, nodes, n['parent'], t)
    return qmul(pq, q), tuple(a + b for a, b in zip(pp, qrot(pq, off)))


# --- formatting ------------------------------------------------------------------

def fmt(v):
    s = '%.7f' % v
    s = s.rstrip('0').rstrip('.')
    return '0' if s in ('-0', '') else s


def fmtv(v):
    return ','.join(fmt(c) for c in v)


# --- the fixtures ------------------------------------------------------------------

# stem: (anim file or None, cinf file or None, layout, pose times as written)
FIXTURES = {
    'example_96': ('example_96.anim', None, 'v2-mp1',
                   ['0', '0.0166667', '0.0333333', '0.05', '0.0666667']),
    'v0_mp1': ('v0_mp1.anim', 'v0_mp1.cinf', 'v0-mp1',
               ['0', '0.0166667', '0.0333333', '0.05', '0.1', '0.1166667',
                '0.1333333']),
    'v0_mp2': ('v0_mp2.anim', 'v0_mp2.cinf', 'v0-mp2',
               ['0', '0.0166667', '0.0333333', '0.05', '0.0666667']),
    'v2_mp1': ('v2_mp1.anim', 'v2_mp1.cinf', 'v2-mp1',
               ['0', '0.0166667', '0.0333333', '0.0833333', '0.1333333',
                '0.1666667', '0.2333333', '0.3', '0.35']),
    'v2_mp2': ('v2_mp2.anim', 'v2_mp2.cinf', 'v2-mp2',
               ['0', '0.0625', '0.125', '0.1875', '0.28125', '0.375', '0.45']),
    'v2_demo': ('v2_demo.anim', None, 'v2-demo',
                ['0', '0.2833333', '0.5666667', '0.95', '1.3333333']),
    'v3_pc': ('v3_pc.anim', None, 'v3-pc',
              ['0', '0.0166667', '0.0333333', '0.0666667', '0.1166667',
               '0.1666667']),
    'upper': ('upper.ANIM', 'upper.CINF', 'v2-mp1', ['0', '0.05', '0.1']),
    'skeleton_alone': (None, 'skeleton_alone.cinf', 'cinf-mp1', ['0']),
}

BROKEN = {
    'bad_version': 'bad_version.anim',
    'truncated_bitstream': 'truncated_bitstream.anim',
    'bad_width': 'bad_width.anim',
    'bad_popcount': 'bad_popcount.anim',
    'bad_cinf_cycle': 'bad_cinf_cycle.cinf',
}


def read(name):
    with open(os.path.join(HERE, name), 'rb') as fh:
        return fh.read()


def expectations(stem):
    if stem in BROKEN:
        fname = BROKEN[stem]
        try:
            if fname.endswith('.cinf'):
                parse_cinf(read(fname))
            else:
                detect_and_parse(read(fname))
        except Fail as e:
            return ['expect-error-offset %d' % e.offset]
        raise AssertionError(stem + ' did not fail')
    afile, cfile, layout, times = FIXTURES[stem]
    anim = detect_and_parse(read(afile)) if afile else None
    cinf = parse_cinf(read(cfile)) if cfile else None
    out = []
    if anim:
        assert anim['layout'] == layout, (anim['layout'], layout)
        out.append('expect-meta metroid.layout=%s' % layout)
        out.append('expect-meta metroid.looping=%d' % anim['looping'])
        out.append('expect-meta metroid.evnt_id=%d' % anim['evnt'])
        dur = anim['duration']
        if anim['version'] != 0:
            dur = max(dur, max(k['frame'] for ch in anim['chans']
                               for k in ch['keys']) * anim['interval'])
        out.append('expect-duration %s' % fmt(dur))
    else:
        assert cinf['layout'] == layout
        out.append('expect-meta metroid.layout=%s' % layout)
    nodes = build_scene(anim, cinf)
    out.append('expect-nodes %d' % len(nodes))
    if anim:
        for ch in anim['chans']:
            for j, k in enumerate(ch['keys']):
                line = 'expect-key bone=%d key=%d frame=%d' % (ch['bone'], j,
                                                                k['frame'])
                if k['rot']:
                    line += ' rot=' + fmtv(k['rot'])
                if k['trans']:
                    line += ' pos=' + fmtv(k['trans'])
                if k['scale']:
                    line += ' scale=' + fmtv(k['scale'])
                out.append(line)
    has_scale = anim is not None and any(k['scale'] for ch in anim['chans']
                                         for k in ch['keys'])
    for ts in times:
        t = float(ts)
        for name in nodes:
            W = world(anim, nodes, name, t)
            if not has_scale:                 # cross-check with evaluator 2
                q, p = world_rt(anim, nodes, name, t)
                R = mat_R(q)
                for i in range(3):
                    assert abs(W[i][3] - p[i]) < 1e-9
                    for j in range(3):
                        assert abs(W[i][j] - R[i][j]) < 1e-9
            Wc = mat_mul(RX_M90, W)
            out.append('expect-pose t=%s node=%s world=%s'
                       % (ts, name, ','.join(fmt(v) for row in Wc for v in row)))
    return out


def txt_lines(stem):
    with open(os.path.join(HERE, stem + '.txt')) as fh:
        return [l.rstrip('\n') for l in fh if l.startswith('expect-')]


def main(argv):
    stems = list(FIXTURES) + list(BROKEN)
    if argv and argv[0] == '--check':
        bad = 0
        for stem in stems:
            want = expectations(stem)
            try:
                have = txt_lines(stem)
            except FileNotFoundError:
                print('%-22s missing .txt' % stem)
                bad += 1
                continue
            if have != want:
                bad += 1
                print('%-22s DIFFERS' % stem)
                for l in sorted(set(want) - set(have)):
                    print('   want ' + l)
                for l in sorted(set(have) - set(want)):
                    print('   have ' + l)
            else:
                print('%-22s ok (%d expect lines)' % (stem, len(want)))
        return 1 if bad else 0
    for stem in (argv or stems):
        print('== ' + stem)
        for line in expectations(stem):
            print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
