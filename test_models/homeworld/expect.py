#!/usr/bin/env python3
"""Re-derive the expect-* lines of the Homeworld .mad fixtures from the bytes
on disk and compare them with the .txt files.

It uses make_fixtures.py's Parser (which follows the stored offsets) and its
reference evaluator, but NOT the in-memory fixture descriptions: everything is
computed from what is read back from disk. Only the pose requests (which
animations, times and nodes: make_fixtures.POSES) are shared.

Usage:  python3 expect.py --check     (exit status 1 on any difference)
        python3 expect.py FILE...     (print the expect lines of those files)
"""

import os
import sys

sys.dont_write_bytecode = True
import make_fixtures as mf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# data file -> 'ok' | 'bad' | 'notdetected'
FILES = {
    'one_object.mad': 'ok',
    'timeline.mad': 'ok',
    'tcb.mad': 'ok',
    'spin.mad': 'ok',
    'window_cut.mad': 'ok',
    'out_of_order.mad': 'ok',
    'layout.mad': 'ok',
    'short.mad': 'ok',
    'truncated.mad': 'bad',
    'too_many_anims.mad': 'bad',
    'bad_array.mad': 'bad',
    'bad_name.mad': 'bad',
    'unterminated.mad': 'bad',
    'nan_key.mad': 'bad',
    'bad_times.mad': 'bad',
    'bad_window.mad': 'bad',
    'neg_keys.mad': 'bad',
    'homeworld2.mad': 'notdetected',
    'geo_ship.mad': 'geo',        # with its sibling geo_ship.geo
    'geo_sibling.mad': 'badgeo',  # its sibling .geo is broken: flat, with a warning
    'geo_roots.mad': 'geo',       # a second parent-less object, not linked: its subtree is not drawn
    'geo_links.mad': 'geo',       # an oMother the daughter/sister links disagree with: drawn, warned
    'geo_instanced.mad': 'geo',   # 40 objects on one set of lists (more than 8x the file decoded each time)
    'geo_twins.mad': 'geo',       # two objects of one bound name: both take the path, a channel each
}
GEO_TIMES = ('0', '0.25', '0.5', '1')


def read_geo(data):
    """the .geo's objects as read back through its offsets: (name, mother index,
    row-major localMatrix, {material: triangles}, sister index) --
    docs/formats/homeworld.md"""
    import struct

    def cstr(off):
        return data[off:data.index(b'\0', off)].decode('latin-1') if off else ''
    n = struct.unpack_from('<I', data, 40)[0]
    objs = []
    for i in range(n):
        at = 68 + 112 * i
        name_off, = struct.unpack_from('<I', data, at)
        npoly, = struct.unpack_from('<i', data, at + 20)
        po, mother, daughter, sister = struct.unpack_from('<IIII', data, at + 32)
        col = struct.unpack_from('<16f', data, at + 48)
        M = [[col[c * 4 + r] for c in range(4)] for r in range(4)]
        tris = {}
        for k in range(npoly):
            mi, = struct.unpack_from('<H', data, po + 40 * k + 10)
            tris[mi] = tris.get(mi, 0) + 1
        objs.append((cstr(name_off), (mother - 68) // 112 if mother else -1, M, tris,
                     (sister - 68) // 112 if sister else -1, (daughter - 68) // 112 if daughter else -1))
    return objs


def drawn_objects(objs):
    """the objects the game draws (meshRender): from object 0 along the
    sister links, and below each along its daughter link (oMother unread);
    with the object each is drawn under"""
    drawn, todo = {}, [(0, -1)] if objs else []
    while todo:
        k, under = todo.pop()
        if k < 0 or k in drawn:
            continue
        drawn[k] = under
        todo += [(objs[k][4], under), (objs[k][5], k)]
    return drawn


def geo_expectations(fname, m, info):
    with open(os.path.join(HERE, mf.stem_of(fname) + '.geo'), 'rb') as fh:
        objs = read_geo(fh.read())
    names = [o.name for o in m.objs]

    def world(t, k):
        name, mother, M, _, _, _ = objs[k]
        if name in names and mf.participates(m, names.index(name), 0):
            o = m.objs[names.index(name)]
            M = mf.local_matrix(mf.channels_at(o, m.anims[0].start + t))
        return mf.m4mul(mf.ROOT if mother < 0 else world(t, mother), M)
    unbound = [j for j in names if j not in [o[0] for o in objs]]
    # node names are unique: a repeated object name gets #2, #3, ... in file order
    node, seen = [], {}
    for o in objs:
        seen[o[0]] = seen.get(o[0], 0) + 1
        node.append(o[0] if seen[o[0]] == 1 else '%s#%d' % (o[0], seen[o[0]]))
    L = ['expect-format homeworld_mad', 'expect-canonical %d' % info['canonical'],
         'expect-nodes %d' % (1 + len(objs) + len(unbound)), 'expect-animations %d' % len(m.anims)]
    for a, an in enumerate(m.anims):  # as make_fixtures.expect_lines names them; a twin has a channel too
        twins = sum(1 for o in objs if o[0] in names and mf.participates(m, names.index(o[0]), a)) - \
            sum(1 for j in set(o[0] for o in objs) if j in names and mf.participates(m, names.index(j), a))
        L.append('expect-anim index=%d duration=%s loop=%d channels=%d name=%s'
                 % (a, '%.9g' % (an.end - an.start), an.flags & mf.MAF_LOOP, mf.anim_channels(m, a) + twins,
                    an.name))
    for t in GEO_TIMES:
        for k in range(len(objs)):
            L.append('expect-pose anim=0 t=%s node=%s world=%s' % (t, node[k], mf.mat_str(world(float(t), k))))
    drawn = drawn_objects(objs)
    for k, (name, _, _, tris, _, _) in enumerate(objs):
        for mi in sorted(tris) if k in drawn else ():
            L.append('expect-mesh name=%s.material%d node=%s vertices=%d triangles=%d material=material%d'
                     % (name, mi, name, 3 * tris[mi], tris[mi], mi))
    L.append('expect-meshes %d' % sum(len(objs[k][3]) for k in drawn))
    if len(drawn) < len(objs):
        L.append('expect-warning not drawn by the game')
    if any(objs[k][1] != under for k, under in drawn.items()):
        L.append('expect-warning have an oMother other than')
    return L


def expectations(fname):
    with open(os.path.join(HERE, fname), 'rb') as fh:
        data = fh.read()
    kind = FILES.get(fname)
    try:
        m, info = mf.parse_bytes(data)
    except mf.NotDetected as e:
        assert kind in (None, 'notdetected'), fname + ' not detected'
        return ['expect-not-detected', 'expect-error-offset %d' % e.offset]
    except mf.Fail as e:
        assert kind in (None, 'bad'), '%s: %s' % (fname, e)
        return ['expect-error-offset %d' % e.offset]
    assert kind in (None, 'ok', 'geo', 'badgeo'), fname + ' parsed but should not'
    if kind == 'geo':
        return geo_expectations(fname, m, info)
    if kind == 'badgeo':
        return mf.expect_lines(m, info, []) + ['expect-warning could not be read']
    return mf.expect_lines(m, info, mf.POSES.get(fname, []))


def txt_lines(fname):
    with open(os.path.join(HERE, mf.stem_of(fname) + '.txt')) as fh:
        return [l.rstrip('\n') for l in fh if l.startswith('expect-')]


def main(argv):
    if argv and argv[0] == '--check':
        bad = total = 0
        for fname in FILES:
            try:
                want = expectations(fname)
            except (OSError, AssertionError) as e:
                print('%-20s ERROR %s' % (fname, e))
                bad += 1
                continue
            try:
                have = txt_lines(fname)
            except FileNotFoundError:
                print('%-20s missing .txt' % fname)
                bad += 1
                continue
            total += len(want)
            if have != want:
                bad += 1
                print('%-20s DIFFERS' % fname)
                for l in want:
                    if l not in have:
                        print('   want ' + l)
                for l in have:
                    if l not in want:
                        print('   have ' + l)
        print('homeworld .mad fixtures: %d files, %d expect lines, %s' %
              (len(FILES), total, 'all match' if not bad else
               '%d file(s) differ' % bad))
        return 1 if bad else 0
    for fname in argv:
        for l in expectations(os.path.basename(fname)):
            print(l)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
