#!/usr/bin/env python3
"""Writes geo_ship.geo byte by byte (docs/formats/homeworld.md, the .geo section)
beside geo_ship.mad (packed by make_fixtures.py) and prints the expect lines,
computed here from the combination rule: a .mad-bound object that takes part
in the playing animation has the path's matrix INSTEAD of its localMatrix;
W(obj) = W(mother) * M(obj), under the root's turn Rz(+90).

Hierarchy: Hull (root, scale 2,1,1) -> Turret -> Barrel; Hull -> Antenna.
The .mad animates Turret and Barrel; Hull and Antenna stand at rest."""
import math
import os
import struct
import sys

sys.dont_write_bytecode = True
import make_fixtures as mf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def T(x, y, z):
    return [[1, 0, 0, x], [0, 1, 0, y], [0, 0, 1, z], [0, 0, 0, 1]]


def Rz(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return [[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]


S = [[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
# name, mother index, localMatrix (row-major here, written column-major)
OBJS = [('Hull', -1, mf.m4mul(T(0, 0, 1), S)),
        ('Turret', 0, mf.m4mul(T(0, 1, 0), Rz(30))),
        ('Barrel', 1, T(0, 0, 2)),
        ('Antenna', 0, T(0.5, 0, 0))]
# materials: diffuse RGB word, flags, texture name
MATS = [(0x00336699, 8, None), (0x000000FF, 0, 'gun')]
# per object: vertices, normals (face then vertex), polygons (iFaceNormal, v0, v1, v2, iMat, s/t x3)
MESH = {0: ([(0, 0, 0, 1), (1, 0, 0, 1), (0, 1, 0, 1)], [(0, 0, 1), (0, 0, 2)],
            [(0, 0, 1, 2, 0, (0, 0, 1, 0, 0, 1))]),
        2: ([(0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 0, 1), (0, 1, 1, 1)], [(1, 0, 0), (1, 0, 0)],
            [(0, 0, 1, 2, 1, (0, 0, 0, 1, 1, 0)), (0, 1, 3, 2, 1, (0, 1, 1, 1, 1, 0))])}


def pack_geo(objs=OBJS, mesh=MESH, share=None):
    """share: object -> the object whose lists it points at (the same offsets and counts)"""
    n = len(objs)
    obj_off = 68
    mat_off = obj_off + 112 * n
    lists = mat_off + 32 * len(MATS)
    body = b''
    offs = {}
    for i, (verts, norms, polys) in mesh.items():
        po = lists + len(body)
        for (fn, a, b, c, mi, st) in polys:
            body += struct.pack('<i4H6f2H', fn, a, b, c, mi, *st, 0, 0)
        vo = lists + len(body)
        for (x, y, z, ni) in verts:
            body += struct.pack('<3fi', x, y, z, ni)
        no = lists + len(body)
        for (x, y, z) in norms:
            body += struct.pack('<3f4B', x, y, z, 0xAB, 0xAB, 0xAB, 0xAB)
        offs[i] = (len(verts), 1, len(norms) - 1, len(polys), vo, no, po)
    for i, j in (share or {}).items():
        offs[i] = offs[j]
    strings = b''
    sbase = lists + len(body)
    name_off = []
    for name, _, _ in objs:
        name_off.append(sbase + len(strings))
        strings += name.encode() + b'\0'
    tex_off = []
    for _, _, tex in MATS:
        tex_off.append(sbase + len(strings) if tex else 0)
        if tex:
            strings += tex.encode() + b'\0'
    size = sbase + len(strings)
    out = b'RMF99ba\0' + struct.pack('<9I', 0x402, 0, size - 68, 0, len(MATS), 0, mat_off, mat_off, n) + b'\xab' * 24
    for i, (name, mother, M) in enumerate(objs):
        kids = [k for k in range(n) if objs[k][1] == i]
        sis = [k for k in range(i + 1, n) if objs[k][1] == mother and mother >= 0]
        nv, nfn, nvn, npoly, vo, no, po = offs.get(i, (0, 0, 0, 0, 0, 0, 0))
        link = lambda k: 68 + 112 * k  # noqa: E731
        out += struct.pack('<IBBHiiiiIIIIII', name_off[i], 1, 0, 0, nv, nfn, nvn, npoly, vo, no, po,
                           link(mother) if mother >= 0 else 0, link(kids[0]) if kids else 0,
                           link(sis[0]) if sis else 0)
        out += struct.pack('<16f', *[M[r][c] for c in range(4) for r in range(4)])
    for k, (rgb, flags, _) in enumerate(MATS):
        out += struct.pack('<5IIHBBI', 0, rgb, rgb, rgb, 0, tex_off[k], flags, 0, 0, 0xABABABAB)
    out += body + strings
    assert len(out) == size
    return out, offs


def mad():
    return mf.lw_mad(30.0, [('Aim', 0, 30, 0)], [
        dict(name='Turret', frames=[0, 15, 30], x=[0, 0, 0], y=[0, 0, 0], z=[1, 1, 1],
             h=[20, 45, 70], p=[30, 10, -20], b=[0, 5, 0]),
        dict(name='Barrel', frames=[0, 30], x=[-2, -3], y=[0, 0], z=[0, 0],
             h=[0, 0], p=[0, 0], b=[0, 20]),
        dict(name='Ghost', frames=[0, 30], x=[0, 0], y=[5, 5], z=[0, 0], h=[0, 0], p=[0, 0], b=[0, 0])])


def world(m, t, node, objs=OBJS):
    """node index in objs; the path matrix replaces the localMatrix of bound objects"""
    mad_names = [o.name for o in m.objs]
    name, mother, M = objs[node]
    if name in mad_names:
        j = mad_names.index(name)
        if mf.participates(m, j, 0):
            M = mf.local_matrix(mf.channels_at(m.objs[j], m.anims[0].start + t))
    parent = mf.ROOT if mother < 0 else world(m, t, mother, objs)
    return mf.m4mul(parent, M)


def put(data, off, fmt, *v):
    b = bytearray(data)
    struct.pack_into(fmt, b, off, *v)
    return bytes(b)


def obj_field(i, rel):
    """offset of a field of object record i (docs: records at 68 + 112 i)"""
    return 68 + 112 * i + rel


def broken(geo, offs):
    """(stem, description, bytes, offending offset): one field changed each"""
    out = []
    off = obj_field(2, 36)  # Barrel's oMother
    out.append(('geo_bad_link', "Barrel's oMother (offset %d) = %d, inside Turret's record, not 68 + 112 i"
                % (off, 68 + 112 + 4), put(geo, off, '<I', 68 + 112 + 4), off))
    off = obj_field(0, 36)  # Hull's oMother -> Barrel: Hull -> Barrel -> Turret -> Hull
    out.append(('geo_bad_cycle', "Hull's oMother (offset %d) = %d (Barrel): the mother links "
                "Hull -> Barrel -> Turret -> Hull form a cycle" % (off, obj_field(2, 0)),
                put(geo, off, '<I', obj_field(2, 0)), off))
    nv, _, _, _, vo, no, po = offs[2]
    off = po + 40 * 1 + 4 + 2 * 1  # Barrel polygon 1, iV1
    out.append(('geo_bad_vertex', "Barrel's polygon 1 iV1 (offset %d) = %d, Barrel has %d vertices"
                % (off, nv, nv), put(geo, off, '<H', nv), off))
    off = offs[0][6] + 10  # Hull polygon 0, iMaterial
    out.append(('geo_bad_material', "Hull's polygon 0 iMaterial (offset %d) = %d, the file has %d materials"
                % (off, len(MATS), len(MATS)), put(geo, off, '<H', len(MATS)), off))
    off = obj_field(2, 24)  # Barrel's oVertexList: the 4 x 16-byte list ends 16 bytes past the file
    bad = len(geo) - 16 * nv + 16
    out.append(('geo_bad_list', "Barrel's oVertexList (offset %d) = %d: its %d x 16-byte vertex list ends "
                "16 bytes past the %d-byte file" % (off, bad, nv, len(geo)), put(geo, off, '<I', bad), off))
    return out


def write_broken(geo, offs, mad_bytes):
    for stem, what, data, off in broken(geo, offs):
        with open(os.path.join(HERE, stem + '.geo'), 'wb') as fh:
            fh.write(data)
        with open(os.path.join(HERE, stem + '.txt'), 'w') as fh:
            fh.write('%s.geo -- broken ship geometry: %s\n\n' % (stem, what))
            fh.write('How it was made: make_geo.py copies geo_ship.geo and changes that one field.\n'
                     'Loaded as geo_ship.mad with --option geo=%s.geo: the load is refused at the\n'
                     'field (format homeworld_geo).\n\nexpect-error-offset %d\n' % (stem, off))
    # the same cycle as the sibling of a .mad: only a warning, the load goes on without geometry
    stem, what, data, off = broken(geo, offs)[1]
    with open(os.path.join(HERE, 'geo_sibling.geo'), 'wb') as fh:
        fh.write(data)
    with open(os.path.join(HERE, 'geo_sibling.mad'), 'wb') as fh:
        fh.write(mad_bytes)
    return off


SIBLING_TXT = """geo_sibling.mad + geo_sibling.geo -- a .mad whose sibling geometry is broken

How it was made: make_geo.py: geo_sibling.mad is geo_ship.mad; geo_sibling.geo
is geo_bad_cycle.geo (a cycle in the mother links). A broken SIBLING only
warns: the .mad loads flat, as without a .geo (Turret, Barrel, Ghost under the
root). The same file given with --option geo= is refused (geo_bad_cycle.txt).

"""


def sibling_expect(m, info):
    """the flat .mad's lines (expect.py derives the same) and the warning"""
    return mf.expect_lines(m, info, []) + ['expect-warning could not be read']


ROOTS_TXT = """geo_roots.mad + geo_roots.geo -- a .geo with a second parent-less object

How it was made: make_geo.py: geo_roots.mad is geo_ship.mad; geo_roots.geo is
geo_ship.geo with three links changed, as LWExport would write Turret as a
second root: Turret's oMother (offset %d) and oSister (offset %d) set to 0,
Hull's oDaughter (offset %d) set to Antenna's record (%d). The game draws from
object 0 (Hull) along the sister links and below each object along its
daughter link (meshRender; docs/formats/homeworld.md section 10): Hull and
Antenna. Turret and Barrel are not drawn: their nodes stay (Turret under the
root; the .mad still animates both), Barrel's two triangles are not exported,
and a warning says so.
Expected worlds: W = Rz(+90) * W(mother) * M with Turret's mother gone,
computed by make_geo.py.

"""


def write_roots(geo, mad_bytes, m):
    """geo_roots: Turret made a second root (its links and Hull's daughter changed); its lines from OBJS"""
    off, sis, dau = obj_field(1, 36), obj_field(1, 44), obj_field(0, 40)
    data = put(put(put(geo, off, '<I', 0), sis, '<I', 0), dau, '<I', obj_field(3, 0))
    with open(os.path.join(HERE, 'geo_roots.geo'), 'wb') as fh:
        fh.write(data)
    with open(os.path.join(HERE, 'geo_roots.mad'), 'wb') as fh:
        fh.write(mad_bytes)
    objs = [(name, -1 if name == 'Turret' else mother, M) for name, mother, M in OBJS]
    L = geo_lines(m, objs, ['expect-mesh name=Hull.material0 node=Hull vertices=3 triangles=1 material=material0',
                            'expect-meshes 1', 'expect-warning not drawn by the game'])
    with open(os.path.join(HERE, 'geo_roots.txt'), 'w') as fh:
        fh.write(ROOTS_TXT % (off, sis, dau, obj_field(3, 0)) + '\n'.join(L) + '\n')


LINKS_TXT = """geo_links.mad + geo_links.geo -- an oMother the daughter and sister links disagree with

How it was made: make_geo.py: geo_links.mad is geo_ship.mad; geo_links.geo is
geo_ship.geo with one field changed: Turret's oMother (offset %d) set to 0,
while Hull's oDaughter still names Turret. The game draws by the daughter and
sister links (meshRender never reads oMother), so all four objects are drawn
and both meshes are exported; the nodes follow oMother (Turret under the root)
and a warning says that the two disagree.
Expected worlds: W = Rz(+90) * W(mother) * M with Turret's mother gone,
computed by make_geo.py.

"""


def write_links(geo, mad_bytes, m):
    """geo_links: only Turret's oMother cleared; its lines from OBJS with that change"""
    off = obj_field(1, 36)
    with open(os.path.join(HERE, 'geo_links.geo'), 'wb') as fh:
        fh.write(put(geo, off, '<I', 0))
    with open(os.path.join(HERE, 'geo_links.mad'), 'wb') as fh:
        fh.write(mad_bytes)
    objs = [(name, -1 if name == 'Turret' else mother, M) for name, mother, M in OBJS]
    L = geo_lines(m, objs, ['expect-mesh name=Hull.material0 node=Hull vertices=3 triangles=1 material=material0',
                            'expect-mesh name=Barrel.material1 node=Barrel vertices=6 triangles=2 material=material1',
                            'expect-meshes 2', 'expect-warning have an oMother other than'])
    with open(os.path.join(HERE, 'geo_links.txt'), 'w') as fh:
        fh.write(LINKS_TXT % off + '\n'.join(L) + '\n')


INSTANCED_TXT = """geo_instanced.mad + geo_instanced.geo -- one part instanced 40 times

How it was made: make_geo.py: geo_instanced.geo is a Hull (no polygons) with 40
daughters Gun0 ... Gun39 (localMatrix T(k, 0, 0)), linked as LWExport links them
(Hull's oDaughter names Gun0, each gun's oSister the next). All 40 records point
at one set of lists (the same oVertexList, oNormalList, oPolygonList and counts):
60 vertices, 1 face normal and 1 vertex normal, 20 disjoint triangles of
material 0. Decoded once per gun, those lists would need %d bytes, more than 8
times the %d-byte file: an instanced part is read once and shared. Each gun is
drawn with its own mesh. geo_instanced.mad animates Gun0 only (one path, h 0 to
90 degrees over 30 frames at 30 fps).
Expected worlds: W = Rz(+90) * W(mother) * M, computed by make_geo.py.

"""


def write_pair(stem, geo, m):
    """stem.geo and stem.mad (m packed); returns the .mad's bytes"""
    data = mf.pack_mad(m)
    data = data[0] if isinstance(data, tuple) else data
    with open(os.path.join(HERE, stem + '.geo'), 'wb') as fh:
        fh.write(geo)
    with open(os.path.join(HERE, stem + '.mad'), 'wb') as fh:
        fh.write(data)
    return data


def write_instanced():
    n = 40
    objs = [('Hull', -1, T(0, 0, 0))] + [('Gun%d' % k, 0, T(k, 0, 0)) for k in range(n)]
    verts = [(float(v % 7), float(v // 7), 0.0, 1) for v in range(60)]
    polys = [(0, 3 * k, 3 * k + 1, 3 * k + 2, 0, (0, 0, 1, 0, 0, 1)) for k in range(20)]
    geo, _ = pack_geo(objs, {1: (verts, [(0, 0, 1), (0, 0, 1)], polys)}, {k: 1 for k in range(2, n + 1)})
    m = mf.lw_mad(30.0, [('Aim', 0, 30, 0)], [
        dict(name='Gun0', frames=[0, 30], x=[0, 0], y=[0, 0], z=[0, 0], h=[0, 90], p=[0, 0], b=[0, 0])])
    write_pair('geo_instanced', geo, m)
    decoded = n * (16 * 60 + 16 * 2 + 40 * 20)
    assert decoded > 8 * len(geo) + 4096
    tail = ['expect-mesh name=Gun%d.material0 node=Gun%d vertices=60 triangles=20 material=material0' % (k, k)
            for k in range(n)] + ['expect-meshes %d' % n]
    L = geo_lines(m, objs, tail, unbound=0)
    with open(os.path.join(HERE, 'geo_instanced.txt'), 'w') as fh:
        fh.write(INSTANCED_TXT % (decoded, len(geo)) + '\n'.join(L) + '\n')


TWINS_TXT = """geo_twins.mad + geo_twins.geo -- two .geo objects of one name, bound to one .mad path

How it was made: make_geo.py: geo_twins.geo is a Hull (T(0,0,1)) with three daughters,
Gun (T(1,0,0)), Gun (T(-1,0,0)) and Mast (T(0,1,0)), no polygons; geo_twins.mad animates
one path, Gun (z 0 to 2, h 0 to 90 degrees over 30 frames at 30 fps). Both objects named Gun
take the path (the second node is Gun#2, names being unique): each has the path's matrix
instead of its localMatrix, so the two stand together, and the animation has a channel for
each (the twin's keys are the first's). Hull and Mast stand at rest.
Expected worlds: W = Rz(+90) * W(mother) * M, computed by make_geo.py.

"""


def write_twins():
    objs = [('Hull', -1, T(0, 0, 1)), ('Gun', 0, T(1, 0, 0)), ('Gun', 0, T(-1, 0, 0)), ('Mast', 0, T(0, 1, 0))]
    geo, _ = pack_geo(objs, {})
    m = mf.lw_mad(30.0, [('Aim', 0, 30, 0)], [
        dict(name='Gun', frames=[0, 30], x=[0, 0], y=[0, 0], z=[0, 2], h=[0, 90], p=[0, 0], b=[0, 0])])
    write_pair('geo_twins', geo, m)
    L = geo_lines(m, objs, ['expect-meshes 0'], unbound=0)
    L = [line.replace('channels=1', 'channels=2') for line in L]
    seen = 0
    for k, line in enumerate(L):  # the second Gun's lines name its node Gun#2
        if ' node=Gun ' in line:
            seen += 1
            if seen % 2 == 0:
                L[k] = line.replace(' node=Gun ', ' node=Gun#2 ')
    with open(os.path.join(HERE, 'geo_twins.txt'), 'w') as fh:
        fh.write(TWINS_TXT + '\n'.join(L) + '\n')


def geo_lines(m, objs, tail, unbound=1):
    """unbound: the .mad's paths no object takes (geo_ship.mad's Ghost)"""
    L = ['expect-format homeworld_mad', 'expect-canonical 1',
         'expect-nodes %d' % (1 + len(objs) + unbound), 'expect-animations 1']
    for a, an in enumerate(m.anims):  # as make_fixtures.expect_lines names them
        L.append('expect-anim index=%d duration=%s loop=%d channels=%d name=%s'
                 % (a, '%.9g' % (an.end - an.start), an.flags & mf.MAF_LOOP, mf.anim_channels(m, a), an.name))
    for t in ('0', '0.25', '0.5', '1'):
        for k in range(len(objs)):
            L.append('expect-pose anim=0 t=%s node=%s world=%s'
                     % (t, objs[k][0], mf.mat_str(world(m, float(t), k, objs))))
    return L + tail


def main():
    geo, offs = pack_geo()
    m = mad()
    data = write_pair('geo_ship', geo, m)
    write_broken(geo, offs, data)
    m2, info2 = mf.parse_bytes(data)
    with open(os.path.join(HERE, 'geo_sibling.txt'), 'w') as fh:
        fh.write(SIBLING_TXT + '\n'.join(sibling_expect(m2, info2)) + '\n')
    write_roots(geo, data, m)
    write_links(geo, data, m)
    write_instanced()
    write_twins()
    L = geo_lines(m, OBJS, ['expect-mesh name=Hull.material0 node=Hull vertices=3 triangles=1 material=material0',
                            'expect-mesh name=Barrel.material1 node=Barrel vertices=6 triangles=2 material=material1',
                            'expect-meshes 2'])
    print('\n'.join(L))


if __name__ == '__main__':
    main()
