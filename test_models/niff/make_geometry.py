#!/usr/bin/env python3
"""Write the NIFF geometry, material and texture fixtures byte by byte.

Sources of truth:
  docs/formats/niff.md         the file: header, physical list order, generic
                               list header (section 1), Obj (section 3),
                               the geometry lists (Shape, Vtx, Tri, Color,
                               Vector, St, Part, Mat, Tex, TexImg; NIFF2
                               CiImg, ColorPalette).
  test_models/niff/RULES.md    the project's rules, section "Geometry":
                               meshes per Shape, corner attributes, materials,
                               textures and their N64 formats.

Layouts written here (all big-endian u32 / float32; offsets from the start of
the area):
  VtxGroup      0 tag 0x00040100 | 4 index | 8 header_size 24 | 12 size |
                16 name | 20 vtx_num | 24 vtx_num x {x, y, z}
  TriColorGroup / VtxColorGroup (ColorList, two counts)
                0 tag 0x00050100 / 0x00050200 | 4 index | 8 header_size 20 |
                12 size | 16 num | 20 num x {r, g, b, a}
  TriNvGroup / VtxNvGroup (VectorList, two counts)
                0 tag 0x00060100 / 0x00060200 | 4 | 8 header 20 | 12 size |
                16 num | 20 num x {x, y, z}
  StGroup       0 tag 0x00070100 | 4 | 8 header 20 | 12 size | 16 st_num |
                20 st_num x {s, t}
  TriGroup      0 tag 0x00080100 | 4 index | 8 header_size 32 | 12 size |
                16 name | 20 tri_anim_type | 24 tri_anim_frame_num |
                28 tri_num | 32 six Reference areas (Vtx, TriColor,
                VtxColor, TriNv, VtxNv, St): one index, or frame_num + 1
                indices (FULL bit), or key_num, keys, indices (KEY bit) |
                then tri_num Tri areas
  Tri           0 tag 0x00080101 | 4 index | 8 size 76 | 12 tri_nv_index |
                16 tri_color_index | 20 3 x {vtx_index, st_index,
                vtx_nv_index, vtx_color_index} | 68 nx | 72 ux
  Shape         0 tag 0x00030100 | 4 index | 8 size | 12 name | 16 shape_type |
                20 shape_tri_link | 24 shape_mat_link | 28 shape_part_num |
                32 nx | 36 ux | 40 shape_part_link[] | ext (NIFF2: 12 bytes,
                kind_of_node_for_geometry 0x00080100 and two external names)
  Part          0 tag 0x00090100 | 4 | 8 size | 12 name | 16 mat_index |
                20 tri_group_index | 24 part_tri_num | 28 nx | 32 ux |
                36 tri_index[]
  Mat           0 tag 0x000a0100 | 4 | 8 size | 12 name | 16 mat_type |
                20 mat_shade_type | 24 color_type0 | 28 color_type1 |
                32 alpha_type0 | 36 alpha_type1 | 40 prim RGBA (4 floats) |
                56 user_flag0..7 | 88 local_light_index | 92 tex_num |
                96 nx | 100 ux | 104 tex_index[tex_num]
  Tex           0 tag 0x000b0100 | 4 | 8 tex_header_size 52 | 12 tex_size |
                16 name | 20 tex_type | 24 wrap_s | 28 wrap_t | 32 tex_anim |
                36 tex_data_area_size 28 | 40 tex_anim_frame_rate | 44 nx |
                48 ux | 52 TexDataArea {img_w, img_h, tile_w, tile_h,
                offset_x, offset_y, tex_img_index} | ext (NIFF2: tex_filter,
                use_perspective_correction, mipmap_level, use_color_palette,
                external_tex_img_num, [color_palette_index,
                tlut_palette_number when use_color_palette is 1])
  TexImg        0 tag 0x00120100 | 4 | 8 header_size 24 | 12 tex_img_size |
                16 nx | 20 ux | 24 RGBA8 pixels, rows from the bottom-left |
                ext (NIFF2: mipmap_max_level)
  CiImg         0 tag 0x00200100 | 4 | 8 size | 12 name | 16 width |
                20 height | 24 pixel_depth 4/8 | 28 reserved[12] | 76 nx |
                80 ux | 84 packed indices (big-endian, 8 or 4 per u32, from
                the bottom-left, the last word zero-padded)
  ColorPalette  0 tag 0x00210100 | 4 | 8 size | 12 name | 16 color_num 16/256 |
                20 color_type (RGBA16 0, IA16 1) | 24 reserved[13] | 76 nx |
                80 ux | 84 colours, 16 bits each, two per u32, big-endian
NIFF 2 deformable geometry (RULES "Deformable geometry"; a Shape whose
kind_of_node_for_geometry is 0x00220100 / 0x00280100 links an Envelope /
ClusterShape by shape_tri_link):
  Envelope      0 tag 0x00220100 | 4 index | 8 size | 12 name | 16 type |
                20 full_num F | 24 weighted_num W | 28 morph_num M |
                32 tri_num | 36 nx | 40 ux | F FullWeightedParts, W
                WeightedParts, M MorphParts, tri_num EnvelopeTris
  FullWeightedPart 0 tag 0x00220110 | 4 index (within its kind) | 8 size 64 |
                12 (unused, written 0) | 16 node kind | 20 node index |
                24, 28 external file / name | 32 vtx group | 36 vtx_nv |
                40 tri_nv | 44 vtx_color | 48 tri_color | 52 st group |
                56 nx | 60 ux
  WeightedPart  0 tag 0x00220120 | 4 | 8 size | 12 (0) | 16 a | 20 st group |
                24 e | 28 nx | 32 ux | 36 kind[a] | index[a] | external
                file[e] | external name[e] | weight_group[a+e] |
                vtx_group[a+e] | vtx_nv[a+e] | tri_nv[a+e] | vtx_color[a+e] |
                tri_color[a+e]
  MorphPart     0 tag 0x00220130 | 4 | 8 size | 12 (0) | 16 kind0 | 20 index0 |
                24, 28 external | 32 kind1 | 36 index1 | 40, 44 external |
                48 st group | 52 table_num t | 56 nx | 60 ux | vtx_group[t] |
                vtx_nv[t] | tri_nv[t] | vtx_color[t] | tri_color[t]
  EnvelopeTri   0 tag 0x00220180 | 4 index | 8 size 116 | 12 part kind |
                16 part index | 20 tri_nv | 24 tri_color | 28 weight_index_tri |
                32 3 x {part kind, part index, vtx, st, vtx_nv, vtx_color,
                weight_index} (28 bytes each)
  ClusterShape  0 tag 0x00280100 | 4 index | 8 size | 12 name | 16 type |
                20 cluster_num | 24 tri_num | 28 nx | 32 ux | Clusters |
                ClusterTris
  Cluster       0 tag 0x00280110 | 4 index | 8 size 56 | 12 (0) | 16 node kind |
                20 node index | 24, 28 external | 32 vtx group | 36 vtx_nv |
                40 tri_nv | 44 vtx_color | 48 tri_color | 52 st group
  ClusterTri    0 tag 0x00280180 | 4 index | 8 size 100 | 12 kind 0x00280110 |
                16 cluster | 20 tri_nv | 24 tri_color | 28 3 x {kind, cluster,
                vtx, st, vtx_nv, vtx_color} (24 bytes each)
  WeightGroup   0 tag 0x00230100 | 4 index | 8 size | 12 name | 16 weight_num |
                20 nx | 24 ux | 28 weight[weight_num] (float, percent)

This script uses make_fixtures.py only for the animation side (file header,
SceneList, ObjList, AnimList, NameList packers, its Parser and evaluator for
nodes and poses). Its geometry reader (GeoReader) is separate from its writer:
it walks the lists by their size words and item size arrays (the list offsets
come from make_fixtures' Parser), checks every count against its item, and
re-reads the model; every expect line is computed from that parsed model and
again from the description, and both must agree. Texel values are derived by
explicit per-format rules (reduce, then replicate bits; the shifts are
cross-checked against the bit pattern written out as a string), and the test
images are chosen so
that every reasonable 8 -> n bit reduction (truncation, rounding) gives the
same texel.

Expect lines (after make_fixtures' format/version/nodes/duration/pose lines):
  expect-meshes N, expect-materials N, expect-textures N   scene totals
  expect-mesh name=<mesh> node=<node> vertices=<N> triangles=<M>
      material=<material name or -> uv=<0|1> normals=<0|1> colors=<0|1>
  expect-triangle mesh=<mesh> index=<k> p=x,y,z;x,y,z;x,y,z [uv=u,v;u,v;u,v]
      [n=x,y,z;...] [c=r,g,b,a;...]    the mesh's k-th triangle, corners in
      stored order (uv with v down: (s, 1 - t)); compare within 1e-5
  expect-material name=<m> color=r,g,b,a texture=<tex name or -> alpha=OPAQUE|
      MASK|BLEND double_sided=0|1 unlit=0|1
  expect-texture name=<t> size=<W>x<H> format=<RGBA16|RGBA32|IA4|IA8|IA16|I4|
      I8|CI4|CI8> wrap=<REPEAT|CLAMP|MIRROR>,<...> nearest=0|1
  expect-texel texture=<t> x=<x> y=<y> rgba=r,g,b,a   (y from the image's top;
      exact integers; every texel of every texture is listed)
  expect-skin mesh=<mesh> skin=<skin name> joints=<node>,<node>,...
      a skinned (deformable) mesh: its skin and the skin's joints in order
  expect-skinned mesh=<mesh> tri=<k> corner=<c> t=<seconds> p=x,y,z
      the WORLD position at time t of corner c of the mesh's k-th triangle:
      sum over the vertex's four largest (renormalised) weights w'_k of
      w'_k * World(node_k, t) * RestWorld(node_k)^-1 * rest position, with
      rest position = sum_k w_k * RestWorld(node_k) * p_k over all its
      normalised weights (RULES "Deformable geometry"); World from
      make_fixtures' reference evaluator, RestWorld = World at frame 0
  expect-error-offset N   (broken files)

Usage:  python3 make_geometry.py     (writes its files into this folder;
                                      make_fixtures.py runs it too)
        python3 expect.py --check    (re-reads every fixture, compares)
"""

import os
import struct
import sys
import textwrap

sys.dont_write_bytecode = True
import make_fixtures as mf  # noqa: E402
from make_fixtures import (M, Blob, Fail, NOLINK, Obj, Scene, g9,  # noqa: E402
                           f32t)

HERE = os.path.dirname(os.path.abspath(__file__))

TAG_SHAPE = 0x00030100
TAG_VTX_GROUP = 0x00040100
TAG_TRI_COLOR_GROUP = 0x00050100
TAG_VTX_COLOR_GROUP = 0x00050200
TAG_TRI_NV_GROUP = 0x00060100
TAG_VTX_NV_GROUP = 0x00060200
TAG_ST_GROUP = 0x00070100
TAG_TRI_GROUP = 0x00080100
TAG_TRI = 0x00080101
TAG_PART = 0x00090100
TAG_MAT = 0x000a0100
TAG_TEX = 0x000b0100
TAG_TEX_IMG = 0x00120100
TAG_CI_IMG = 0x00200100
TAG_COLOR_PALETTE = 0x00210100

USE_SHAPE_MAT = 0x80000000
CULL_BACK = 0x10
# Reference areas of a TriGroup, in order, with their (FULL, KEY) bits
REF_KINDS = [('vtx', 0x1, 0x2), ('tri_color', 0x10, 0x20),
             ('vtx_color', 0x100, 0x200), ('tri_nv', 0x1000, 0x2000),
             ('vtx_nv', 0x10000, 0x20000), ('st', 0x100000, 0x200000)]

# tex_type = TEX_FORM (low byte) | TEX_DEPTH (bits 8-11)
FORM_NAME = {0: 'I', 1: 'IA', 2: 'CI', 3: 'YUV', 5: 'RGBA'}
DEPTH_BITS = {0x000: 4, 0x100: 8, 0x200: 16, 0x400: 32}
TEX_TYPE = {'I4': 0x000, 'I8': 0x100, 'IA4': 0x001, 'IA8': 0x101,
            'IA16': 0x201, 'CI4': 0x002, 'CI8': 0x102, 'RGBA16': 0x205,
            'RGBA32': 0x405}
WRAP_S = {0: 'REPEAT', 1: 'CLAMP', 2: 'MIRROR'}
WRAP_T = {0: 'REPEAT', 0x100: 'CLAMP', 0x200: 'MIRROR'}
TEX_FILTER = {0: 'POINT', 1: 'BILERP', 2: 'AVERAGE'}
PAL_TYPE = {0: 'RGBA16', 1: 'IA16'}
KIND_TRI_GROUP = 0x00080100

# NIFF 2 deformable geometry (RULES "Deformable geometry")
TAG_ENVELOPE = 0x00220100
TAG_FULL_PART = 0x00220110
TAG_WEIGHTED_PART = 0x00220120
TAG_MORPH_PART = 0x00220130
TAG_ENVELOPE_TRI = 0x00220180
TAG_WEIGHT_GROUP = 0x00230100
TAG_CLUSTER_SHAPE = 0x00280100
TAG_CLUSTER = 0x00280110
TAG_CLUSTER_TRI = 0x00280180
KIND_ENVELOPE = TAG_ENVELOPE              # kind_of_node_for_geometry values
KIND_CLUSTER = TAG_CLUSTER_SHAPE
ENV_PART_TAGS = (TAG_FULL_PART, TAG_WEIGHTED_PART, TAG_MORPH_PART)
PART_NAME = {TAG_FULL_PART: 'full', TAG_WEIGHTED_PART: 'weighted',
             TAG_MORPH_PART: 'morph', TAG_CLUSTER: 'cluster'}
# node kinds: the tag of the list the node index counts in
NODE_OBJ = 0x00020000
NODE_CHAIN_ROOT = 0x00240000
NODE_JOINT = 0x00250000
NODE_EFFECTOR = 0x00260000
NODE_KIND = {NODE_OBJ: 'obj', NODE_CHAIN_ROOT: 'chain_root',
             NODE_JOINT: 'joint', NODE_EFFECTOR: 'effector'}
GROUP_FIELDS = ('vtx', 'vtx_nv', 'tri_nv', 'vtx_color', 'tri_color')


def tex_format_name(tex_type):
    return '%s%d' % (FORM_NAME[tex_type & 0xFF], DEPTH_BITS[tex_type & 0xF00])


# --- the model ------------------------------------------------------------------

class VtxGroup(M):
    def __init__(self, pts, name_index=NOLINK):
        self.pts = [f32t(p) for p in pts]
        self.name_index = name_index


class AttrGroup(M):
    """TriColor / VtxColor (4 floats) or TriNv / VtxNv (3) or St (2) group."""

    def __init__(self, vals):
        self.vals = [f32t(v) for v in vals]


class Ref(M):
    """A Reference area: static index, FULL indices (frame 0 .. frame_num) or
    KEY (keys, indices)."""

    def __init__(self, static=None, full=None, keys=None, idx=None):
        self.static, self.full = static, None if full is None else list(full)
        self.keys = None if keys is None else list(keys)
        self.idx = None if idx is None else list(idx)

    def rest(self):
        """The group index used for the mesh (RULES: the stored index, frame
        0's (FULL) or the first key's (KEY))."""
        if self.full is not None:
            return self.full[0]
        if self.keys is not None:
            return self.idx[0]
        return self.static


def R(i):
    return Ref(static=i)


class Tri(M):
    def __init__(self, corners, tri_nv=NOLINK, tri_color=NOLINK):
        """corners: 3 x (vtx, st, vtx_nv, vtx_color)."""
        self.corners = [tuple(c) for c in corners]
        self.tri_nv, self.tri_color = tri_nv, tri_color


class TriGroup(M):
    def __init__(self, refs, tris, frame_num=0, name_index=NOLINK):
        self.refs, self.tris = list(refs), list(tris)
        self.frame_num, self.name_index = frame_num, name_index

    @property
    def anim_type(self):
        t = 0
        for (kind, full, key), r in zip(REF_KINDS, self.refs):
            if r.full is not None:
                t |= full
            elif r.keys is not None:
                t |= key
        return t


class Shape(M):
    def __init__(self, name_index, type, tri_link, mat_link=NOLINK, parts=(),
                 ext=None):
        self.name_index, self.type, self.tri_link = name_index, type, tri_link
        self.mat_link, self.parts = mat_link, list(parts)
        self.ext = None if ext is None else tuple(ext)


class Part(M):
    def __init__(self, mat, tri_group, tris, name_index=NOLINK):
        self.mat, self.tri_group, self.tris = mat, tri_group, list(tris)
        self.name_index = name_index


class Mat(M):
    """ext: the NIFF 2 Nintendo extension's first 12 floats (ambient,
    emission, diffuse RGBA), or None (no extension)."""
    def __init__(self, name_index, prim, shade=0x12, tex=(), mat_type=0,
                 color_types=(0xF, NOLINK, 0xF0000, NOLINK), user=(0,) * 8,
                 local_light=NOLINK, ext=None):
        self.name_index, self.prim, self.shade = name_index, f32t(prim), shade
        self.tex, self.mat_type = list(tex), mat_type
        self.color_types, self.user = tuple(color_types), tuple(user)
        self.local_light = local_light
        self.ext = None if ext is None else f32t(ext)


class Tex(M):
    def __init__(self, name_index, fmt, w, h, img, wrap_s=0, wrap_t=0,
                 ext=None):
        self.name_index, self.type = name_index, TEX_TYPE.get(fmt, fmt)
        self.w, self.h, self.img = w, h, img
        self.wrap_s, self.wrap_t = wrap_s, wrap_t
        self.ext = None if ext is None else tuple(ext)


def tex2_ext(filter=1, palette=None, tlut=0):
    """NIFF2 Tex extension: tex_filter, use_perspective_correction,
    mipmap_level, use_color_palette, external_tex_img_num, then (palette
    only) color_palette_index[1], tlut_palette_number[1]."""
    if palette is None:
        return (filter, 1, 0, 0, 0)
    return (filter, 1, 0, 1, 0, palette, tlut)


class TexImg(M):
    def __init__(self, rows, ext=None):
        """rows: pixel rows from the BOTTOM (as stored), each a list of RGBA8
        tuples; stored as bytes."""
        self.data = bytes(b for row in rows for px in row for b in px)
        self.ext = None if ext is None else tuple(ext)


class CiImg(M):
    def __init__(self, w, h, depth, words, name_index=NOLINK):
        self.w, self.h, self.depth, self.words = w, h, depth, list(words)
        self.name_index = name_index


class Palette(M):
    def __init__(self, color_type, colors, name_index=NOLINK):
        self.color_type, self.colors = color_type, list(colors)
        self.name_index = name_index


class EnvPart(M):
    """A FullWeightedPart, WeightedPart, MorphPart or Cluster (tag).
    nodes: (node kind, node index) per internal node (full / cluster: 1,
    weighted: a, morph: 2); ext_names: the external (file, name) pairs
    (full / cluster / morph: one per node slot; weighted: the e external
    nodes); groups: {field: [group index per node (weighted: a + e) or per
    table (morph)]} for GROUP_FIELDS, plus 'weight' (weighted only)."""

    def __init__(self, tag, nodes, st, groups, ext_names=None, word12=0):
        self.tag, self.nodes, self.st = tag, [tuple(n) for n in nodes], st
        self.groups = {k: list(v) for k, v in groups.items()}
        if ext_names is None:
            ext_names = [] if tag == TAG_WEIGHTED_PART else \
                [(NOLINK, NOLINK)] * len(self.nodes)
        self.ext_names = [tuple(e) for e in ext_names]
        self.word12 = word12

    def slots(self):
        """Entries of each group array."""
        return len(self.groups['vtx'])


def full_part(node, vtx, st=NOLINK, vtx_nv=NOLINK, tri_nv=NOLINK,
              vtx_color=NOLINK, tri_color=NOLINK, tag=TAG_FULL_PART):
    return EnvPart(tag, [node], st, dict(
        vtx=[vtx], vtx_nv=[vtx_nv], tri_nv=[tri_nv], vtx_color=[vtx_color],
        tri_color=[tri_color]))


def weighted_part(nodes, weight, vtx, st=NOLINK, vtx_nv=None, tri_nv=None,
                  vtx_color=None, tri_color=None):
    n = len(nodes)
    none = [NOLINK] * n
    return EnvPart(TAG_WEIGHTED_PART, nodes, st, dict(
        weight=weight, vtx=vtx, vtx_nv=vtx_nv or none, tri_nv=tri_nv or none,
        vtx_color=vtx_color or none, tri_color=tri_color or none))


def morph_part(node0, node1, vtx, st=NOLINK, vtx_nv=None, tri_nv=None,
               vtx_color=None, tri_color=None):
    t = len(vtx)
    none = [NOLINK] * t
    return EnvPart(TAG_MORPH_PART, [node0, node1], st, dict(
        vtx=vtx, vtx_nv=vtx_nv or none, tri_nv=tri_nv or none,
        vtx_color=vtx_color or none, tri_color=tri_color or none))


class EnvTri(M):
    """EnvelopeTri (corners: 7-tuples part kind, part index, vtx, st, vtx_nv,
    vtx_color, weight_index) or ClusterTri (6-tuples, no weight_index)."""

    def __init__(self, part, corners, tri_nv=NOLINK, tri_color=NOLINK,
                 weight_tri=NOLINK):
        self.part = tuple(part)
        self.corners = [tuple(c) for c in corners]
        self.tri_nv, self.tri_color, self.weight_tri = tri_nv, tri_color, \
            weight_tri


class Envelope(M):
    def __init__(self, name_index, full, weighted, morph, tris, type=0):
        self.name_index, self.type = name_index, type
        self.full, self.weighted, self.morph = list(full), list(weighted), \
            list(morph)
        self.tris = list(tris)

    def kinds(self):
        """(corner part kind tag, parts) in file order."""
        return [(TAG_FULL_PART, self.full), (TAG_WEIGHTED_PART, self.weighted),
                (TAG_MORPH_PART, self.morph)]


class ClusterShape(M):
    def __init__(self, name_index, clusters, tris, type=0):
        self.name_index, self.type = name_index, type
        self.clusters, self.tris = list(clusters), list(tris)

    def kinds(self):
        return [(TAG_CLUSTER, self.clusters)]


class WeightGroup(M):
    def __init__(self, weights, name_index=NOLINK):
        self.weights = f32t(weights)
        self.name_index = name_index


class Geo(M):
    def __init__(self, vtx=(), tri_colors=(), vtx_colors=(), tri_nvs=(),
                 vtx_nvs=(), sts=(), tri_groups=(), shapes=(), parts=(),
                 mats=(), texs=(), tex_imgs=(), ci_imgs=(), palettes=(),
                 envelopes=(), clusters=(), weights=()):
        self.vtx, self.tri_colors, self.vtx_colors = list(vtx), \
            list(tri_colors), list(vtx_colors)
        self.tri_nvs, self.vtx_nvs, self.sts = list(tri_nvs), list(vtx_nvs), \
            list(sts)
        self.tri_groups, self.shapes, self.parts = list(tri_groups), \
            list(shapes), list(parts)
        self.mats, self.texs, self.tex_imgs = list(mats), list(texs), \
            list(tex_imgs)
        self.ci_imgs, self.palettes = list(ci_imgs), list(palettes)
        self.envelopes, self.clusters = list(envelopes), list(clusters)
        self.weights = list(weights)


# --- packing ----------------------------------------------------------------------

def pack_vtx_group(g, i):
    bl = Blob()
    bl.mark(('vtx', i))
    bl.mark(('vtx', i, 'num'), 20)
    n = len(g.pts)
    bl.put(struct.pack('>6I', TAG_VTX_GROUP, i, 24, 24 + 12 * n, g.name_index,
                       n))
    for p in g.pts:
        bl.put(struct.pack('>3f', *p))
    return bl


def pack_attr_group(kind, tag, width, g, i):
    bl = Blob()
    bl.mark((kind, i))
    n = len(g.vals)
    bl.put(struct.pack('>5I', tag, i, 20, 20 + 4 * width * n, n))
    for v in g.vals:
        bl.put(struct.pack('>%df' % width, *v))
    return bl


def pack_two_count_list(name, first, second):
    """ColorList / VectorList: 28 + 4 (n1 + n2) header, two size arrays."""
    n1, n2 = len(first), len(second)
    hsize = 28 + 4 * (n1 + n2)
    items = list(first) + list(second)
    total = hsize + sum(len(it.b) for it in items)
    bl = Blob()
    bl.mark(('list', name))
    bl.put(struct.pack('>7I', mf.LIST_TAG[name], hsize, total, n1, n2, 0, 0))
    bl.put(struct.pack('>%dI' % (n1 + n2), *[len(it.b) for it in items]))
    for it in items:
        bl.add(it)
    assert len(bl.b) == total
    return bl


def pack_tri_group(tg, i):
    refs = Blob()
    for k, r in enumerate(tg.refs):
        refs.mark(('tri_group', i, 'ref', k))
        if r.full is not None:
            assert len(r.full) == tg.frame_num + 1
            refs.put(struct.pack('>%dI' % len(r.full), *r.full))
        elif r.keys is not None:
            refs.put(struct.pack('>I', len(r.keys)))
            refs.put(struct.pack('>%dI' % len(r.keys), *r.keys))
            refs.put(struct.pack('>%dI' % len(r.idx), *r.idx))
        else:
            refs.put(struct.pack('>I', r.static))
    tris = Blob()
    for k, t in enumerate(tg.tris):
        tris.mark(('tri_group', i, 'tri', k))
        tris.put(struct.pack('>5I', TAG_TRI, k, 76, t.tri_nv, t.tri_color))
        for c, corner in enumerate(t.corners):
            tris.mark(('tri_group', i, 'tri', k, 'vtx', c))
            tris.put(struct.pack('>4I', *corner))
        tris.put(struct.pack('>2I', 0, 0))
    size = 32 + len(refs.b) + len(tris.b)
    bl = Blob()
    bl.mark(('tri_group', i))
    bl.put(struct.pack('>8I', TAG_TRI_GROUP, i, 32, size, tg.name_index,
                       tg.anim_type, tg.frame_num, len(tg.tris)))
    bl.add(refs)
    bl.add(tris)
    assert len(bl.b) == size
    return bl


def pack_shape(sh, i):
    ext = b'' if sh.ext is None else struct.pack('>%dI' % len(sh.ext), *sh.ext)
    size = 40 + 4 * len(sh.parts) + len(ext)
    bl = Blob()
    bl.mark(('shape', i))
    bl.mark(('shape', i, 'tri_link'), 20)
    bl.put(struct.pack('>10I', TAG_SHAPE, i, size, sh.name_index, sh.type,
                       sh.tri_link, sh.mat_link, len(sh.parts), len(ext), 0))
    bl.put(struct.pack('>%dI' % len(sh.parts), *sh.parts))
    bl.put(ext)
    assert len(bl.b) == size
    return bl


def pack_part(p, i):
    size = 36 + 4 * len(p.tris)
    bl = Blob()
    bl.mark(('part', i))
    bl.put(struct.pack('>9I', TAG_PART, i, size, p.name_index, p.mat,
                       p.tri_group, len(p.tris), 0, 0))
    bl.put(struct.pack('>%dI' % len(p.tris), *p.tris))
    return bl


def pack_mat(m, i):
    ext = m.ext or ()
    size = 104 + 4 * len(m.tex) + 4 * len(ext)
    bl = Blob()
    bl.mark(('mat', i))
    bl.put(struct.pack('>4I', TAG_MAT, i, size, m.name_index))
    bl.put(struct.pack('>2I', m.mat_type, m.shade))
    bl.put(struct.pack('>4I', *m.color_types))
    bl.put(struct.pack('>4f', *m.prim))
    bl.put(struct.pack('>8I', *m.user))
    bl.put(struct.pack('>4I', m.local_light, len(m.tex), 4 * len(ext), 0))
    assert len(bl.b) == 104
    bl.put(struct.pack('>%dI' % len(m.tex), *m.tex))
    bl.put(struct.pack('>%df' % len(ext), *ext))
    return bl


def pack_tex(t, i):
    ext = b'' if t.ext is None else struct.pack('>%dI' % len(t.ext), *t.ext)
    size = 52 + 28 + len(ext)
    bl = Blob()
    bl.mark(('tex', i))
    bl.put(struct.pack('>13I', TAG_TEX, i, 52, size, t.name_index, t.type,
                       t.wrap_s, t.wrap_t, 0, 28, 0, len(ext), 0))
    bl.mark(('tex', i, 'img_w'))
    bl.put(struct.pack('>7I', t.w, t.h, t.w, t.h, 0, 0, t.img))
    bl.put(ext)
    assert len(bl.b) == size
    return bl


def pack_tex_img(ti, i):
    ext = b'' if ti.ext is None else struct.pack('>%dI' % len(ti.ext), *ti.ext)
    size = 24 + len(ti.data) + len(ext)
    bl = Blob()
    bl.mark(('tex_img', i))
    bl.mark(('tex_img', i, 'size'), 12)
    bl.put(struct.pack('>6I', TAG_TEX_IMG, i, 24, size, len(ext), 0))
    bl.put(ti.data)
    bl.put(ext)
    return bl


def pack_ci_img(c, i):
    size = 84 + 4 * len(c.words)
    bl = Blob()
    bl.mark(('ci_img', i))
    bl.put(struct.pack('>7I', TAG_CI_IMG, i, size, c.name_index, c.w, c.h,
                       c.depth))
    bl.put(struct.pack('>12I', *([0] * 12)))
    bl.put(struct.pack('>2I', 0, 0))
    for j, w in enumerate(c.words):
        bl.mark(('ci_img', i, 'word', j))
        bl.put(struct.pack('>I', w))
    return bl


def pack_palette(p, i):
    cols = list(p.colors)
    words = [(cols[2 * j] << 16) | cols[2 * j + 1] for j in range(len(cols) // 2)]
    size = 84 + 4 * len(words)
    bl = Blob()
    bl.mark(('palette', i))
    bl.put(struct.pack('>6I', TAG_COLOR_PALETTE, i, size, p.name_index,
                       len(cols), p.color_type))
    bl.put(struct.pack('>13I', *([0] * 13)))
    bl.put(struct.pack('>2I', 0, 0))
    bl.put(struct.pack('>%dI' % len(words), *words))
    return bl


def pack_env_part(p, ei, j, what='env'):
    """One FullWeightedPart / WeightedPart / MorphPart / Cluster. ei: the
    Envelope (ClusterShape) index, j: the part's index within its kind."""
    kind = PART_NAME[p.tag]
    key = (what, ei, kind, j)
    G = p.groups
    bl = Blob()
    bl.mark(key)
    if p.tag in (TAG_FULL_PART, TAG_CLUSTER):
        assert len(p.nodes) == 1 and p.slots() == 1
        size = 64 if p.tag == TAG_FULL_PART else 56
        bl.put(struct.pack('>4I', p.tag, j, size, p.word12))
        bl.mark(key + ('node_kind', 0))
        bl.mark(key + ('node', 0), 4)
        bl.put(struct.pack('>2I', *p.nodes[0]))
        bl.put(struct.pack('>2I', *p.ext_names[0]))
        for f in GROUP_FIELDS:
            bl.mark(key + ('group', f, 0))
            bl.put(struct.pack('>I', G[f][0]))
        bl.put(struct.pack('>I', p.st))
        if p.tag == TAG_FULL_PART:
            bl.put(struct.pack('>2I', 0, 0))        # nx, ux
    elif p.tag == TAG_WEIGHTED_PART:
        a, e = len(p.nodes), len(p.ext_names)
        assert p.slots() == a + e
        size = 36 + 8 * a + 8 * e + 24 * (a + e)
        bl.put(struct.pack('>4I', p.tag, j, size, p.word12))
        bl.put(struct.pack('>3I', a, p.st, e))
        bl.put(struct.pack('>2I', 0, 0))            # nx, ux
        for q, (nk, ni) in enumerate(p.nodes):
            bl.mark(key + ('node_kind', q), 4 * q)
            bl.mark(key + ('node', q), 4 * a + 4 * q)
        bl.put(struct.pack('>%dI' % a, *[n[0] for n in p.nodes]))
        bl.put(struct.pack('>%dI' % a, *[n[1] for n in p.nodes]))
        bl.put(struct.pack('>%dI' % e, *[x[0] for x in p.ext_names]))
        bl.put(struct.pack('>%dI' % e, *[x[1] for x in p.ext_names]))
        for f in ('weight',) + GROUP_FIELDS:
            for q in range(a + e):
                bl.mark(key + ('group', f, q), 4 * q)
            bl.put(struct.pack('>%dI' % (a + e), *G[f]))
    else:
        t = p.slots()
        assert len(p.nodes) == 2 and t >= 1
        size = 64 + 20 * t
        bl.put(struct.pack('>4I', p.tag, j, size, p.word12))
        for q in range(2):
            bl.mark(key + ('node_kind', q))
            bl.mark(key + ('node', q), 4)
            bl.put(struct.pack('>2I', *p.nodes[q]))
            bl.put(struct.pack('>2I', *p.ext_names[q]))
        bl.put(struct.pack('>2I', p.st, t))
        bl.put(struct.pack('>2I', 0, 0))            # nx, ux
        for f in GROUP_FIELDS:
            for q in range(t):
                bl.mark(key + ('group', f, q), 4 * q)
            bl.put(struct.pack('>%dI' % t, *G[f]))
    assert len(bl.b) == size, (kind, len(bl.b), size)
    return bl


def pack_env_tri(t, ei, k, what):
    cluster = what == 'cluster'
    bl = Blob()
    bl.mark((what, ei, 'tri', k))
    if cluster:
        bl.put(struct.pack('>7I', TAG_CLUSTER_TRI, k, 100, t.part[0], t.part[1],
                           t.tri_nv, t.tri_color))
    else:
        bl.put(struct.pack('>8I', TAG_ENVELOPE_TRI, k, 116, t.part[0],
                           t.part[1], t.tri_nv, t.tri_color, t.weight_tri))
    for c, corner in enumerate(t.corners):
        assert len(corner) == (6 if cluster else 7)
        bl.mark((what, ei, 'tri', k, 'corner', c))
        bl.put(struct.pack('>%dI' % len(corner), *corner))
    assert len(bl.b) == (100 if cluster else 116)
    return bl


def pack_envelope(env, i):
    body = Blob()
    for tag, parts in env.kinds():
        for j, p in enumerate(parts):
            assert p.tag == tag
            body.add(pack_env_part(p, i, j))
    for k, t in enumerate(env.tris):
        body.add(pack_env_tri(t, i, k, 'env'))
    size = 44 + len(body.b)
    bl = Blob()
    bl.mark(('env', i))
    bl.put(struct.pack('>11I', TAG_ENVELOPE, i, size, env.name_index, env.type,
                       len(env.full), len(env.weighted), len(env.morph),
                       len(env.tris), 0, 0))
    bl.add(body)
    assert len(bl.b) == size
    return bl


def pack_cluster_shape(cs, i):
    body = Blob()
    for j, p in enumerate(cs.clusters):
        assert p.tag == TAG_CLUSTER
        body.add(pack_env_part(p, i, j, 'cluster'))
    for k, t in enumerate(cs.tris):
        body.add(pack_env_tri(t, i, k, 'cluster'))
    size = 36 + len(body.b)
    bl = Blob()
    bl.mark(('cluster', i))
    bl.put(struct.pack('>9I', TAG_CLUSTER_SHAPE, i, size, cs.name_index,
                       cs.type, len(cs.clusters), len(cs.tris), 0, 0))
    bl.add(body)
    assert len(bl.b) == size
    return bl


def pack_weight_group(wg, i):
    n = len(wg.weights)
    bl = Blob()
    bl.mark(('weight', i))
    bl.put(struct.pack('>7I', TAG_WEIGHT_GROUP, i, 28 + 4 * n, wg.name_index, n,
                       0, 0))
    bl.put(struct.pack('>%df' % n, *wg.weights))
    return bl


def geo_lists(geo, niff2):
    L = {}
    L['vtx'] = mf.pack_list('vtx', [pack_vtx_group(g, i)
                                    for i, g in enumerate(geo.vtx)])
    L['color'] = pack_two_count_list(
        'color', [pack_attr_group('tri_color', TAG_TRI_COLOR_GROUP, 4, g, i)
                  for i, g in enumerate(geo.tri_colors)],
        [pack_attr_group('vtx_color', TAG_VTX_COLOR_GROUP, 4, g, i)
         for i, g in enumerate(geo.vtx_colors)])
    L['vector'] = pack_two_count_list(
        'vector', [pack_attr_group('tri_nv', TAG_TRI_NV_GROUP, 3, g, i)
                   for i, g in enumerate(geo.tri_nvs)],
        [pack_attr_group('vtx_nv', TAG_VTX_NV_GROUP, 3, g, i)
         for i, g in enumerate(geo.vtx_nvs)])
    L['st'] = mf.pack_list('st', [pack_attr_group('st', TAG_ST_GROUP, 2, g, i)
                                  for i, g in enumerate(geo.sts)])
    L['tri'] = mf.pack_list('tri', [pack_tri_group(g, i)
                                    for i, g in enumerate(geo.tri_groups)])
    L['shape'] = mf.pack_list('shape', [pack_shape(g, i)
                                        for i, g in enumerate(geo.shapes)])
    L['part'] = mf.pack_list('part', [pack_part(g, i)
                                      for i, g in enumerate(geo.parts)])
    L['mat'] = mf.pack_list('mat', [pack_mat(g, i)
                                    for i, g in enumerate(geo.mats)])
    L['tex'] = mf.pack_list('tex', [pack_tex(g, i)
                                    for i, g in enumerate(geo.texs)])
    L['tex_img'] = mf.pack_list('tex_img', [pack_tex_img(g, i)
                                            for i, g in enumerate(geo.tex_imgs)])
    if niff2:
        L['ci_img'] = mf.pack_list('ci_img', [pack_ci_img(g, i) for i, g in
                                              enumerate(geo.ci_imgs)])
        L['color_palette'] = mf.pack_list(
            'color_palette', [pack_palette(g, i)
                              for i, g in enumerate(geo.palettes)])
        # the deformable lists only when used (an empty list is what
        # make_fixtures.pack_file writes anyway)
        if geo.envelopes:
            L['envelope'] = mf.pack_list('envelope', [
                pack_envelope(g, i) for i, g in enumerate(geo.envelopes)])
        if geo.clusters:
            L['cluster'] = mf.pack_list('cluster', [
                pack_cluster_shape(g, i) for i, g in enumerate(geo.clusters)])
        if geo.weights:
            L['weight'] = mf.pack_list('weight', [
                pack_weight_group(g, i) for i, g in enumerate(geo.weights)])
    else:
        assert not geo.ci_imgs and not geo.palettes
        assert not geo.envelopes and not geo.clusters and not geo.weights
    return L


def pack_geo_file(sc, geo):
    return mf.pack_file(sc, extra=geo_lists(geo, sc.niff2))


# --- the reader -----------------------------------------------------------------------
# Walks each geometry list by its header and item size array, reads every item
# by its own layout and checks its counts against its size. It shares only the
# model classes, the tags and the list offsets found by make_fixtures' Parser.

class GeoReader:
    def __init__(self, p, sc=None):
        self.p = p                        # make_fixtures.Parser (already parsed)
        self.sc = sc                      # its scene (node lists for the checks)
        self.d = p.d
        self.where = p.where

    def u32(self, off):
        return self.p.u32(off)

    def f32(self, off):
        return self.p.f32(off)

    def note(self, off, text):
        self.p.note(off, text)

    def items(self, name):
        if name not in self.p.lists:
            return []
        return self.p.items(self.p.lists[name], name)

    def two_count_items(self, name):
        off, size = self.p.lists[name]
        hs, n1, n2 = self.u32(off + 4), self.u32(off + 12), self.u32(off + 16)
        nx, ux = self.u32(off + 20), self.u32(off + 24)
        if hs != 28 + 4 * (n1 + n2):
            raise Fail(off + 4, '%s list header size %d' % (name, hs))
        nb = [self.u32(off + 28 + 4 * k) for k in range(n1 + n2)]
        if hs + sum(nb) + nx + ux != size:
            raise Fail(off + 8, '%s list size %d does not add up' % (name, size))
        out, p = [], off + hs
        for k in range(n1 + n2):
            out.append((p, nb[k]))
            p += nb[k]
        return out[:n1], out[n1:]

    def head(self, off, nb, tag, i, what, size_at=8):
        t, idx = self.u32(off), self.u32(off + 4)
        if t != tag:
            raise Fail(off, '%s tag 0x%08X' % (what, t))
        if idx != i:
            raise Fail(off + 4, '%s index %d at position %d' % (what, idx, i))
        if self.u32(off + size_at) != nb:
            raise Fail(off + size_at, '%s size %d != %d' % (what,
                                                          self.u32(off + size_at),
                                                          nb))

    def read(self):
        geo = Geo()
        for i, (o, nb) in enumerate(self.items('vtx')):
            geo.vtx.append(self.vtx_group(o, nb, i))
        tri_c, vtx_c = self.two_count_items('color')
        geo.tri_colors = [self.attr_group(o, nb, i, TAG_TRI_COLOR_GROUP, 4,
                                          'TriColorGroup', 'tri_color')
                          for i, (o, nb) in enumerate(tri_c)]
        geo.vtx_colors = [self.attr_group(o, nb, i, TAG_VTX_COLOR_GROUP, 4,
                                          'VtxColorGroup', 'vtx_color')
                          for i, (o, nb) in enumerate(vtx_c)]
        tri_n, vtx_n = self.two_count_items('vector')
        geo.tri_nvs = [self.attr_group(o, nb, i, TAG_TRI_NV_GROUP, 3,
                                       'TriNvGroup', 'tri_nv')
                       for i, (o, nb) in enumerate(tri_n)]
        geo.vtx_nvs = [self.attr_group(o, nb, i, TAG_VTX_NV_GROUP, 3,
                                       'VtxNvGroup', 'vtx_nv')
                       for i, (o, nb) in enumerate(vtx_n)]
        geo.sts = [self.attr_group(o, nb, i, TAG_ST_GROUP, 2, 'StGroup', 'st')
                   for i, (o, nb) in enumerate(self.items('st'))]
        geo.tri_groups = [self.tri_group(o, nb, i) for i, (o, nb) in
                          enumerate(self.items('tri'))]
        geo.shapes = [self.shape(o, nb, i) for i, (o, nb) in
                      enumerate(self.items('shape'))]
        geo.parts = [self.part(o, nb, i) for i, (o, nb) in
                     enumerate(self.items('part'))]
        geo.mats = [self.mat(o, nb, i) for i, (o, nb) in
                    enumerate(self.items('mat'))]
        geo.texs = [self.tex(o, nb, i) for i, (o, nb) in
                    enumerate(self.items('tex'))]
        geo.tex_imgs = [self.tex_img(o, nb, i) for i, (o, nb) in
                        enumerate(self.items('tex_img'))]
        geo.ci_imgs = [self.ci_img(o, nb, i) for i, (o, nb) in
                       enumerate(self.items('ci_img'))]
        geo.palettes = [self.palette(o, nb, i) for i, (o, nb) in
                        enumerate(self.items('color_palette'))]
        geo.envelopes = [self.envelope(o, nb, i) for i, (o, nb) in
                         enumerate(self.items('envelope'))]
        geo.clusters = [self.cluster_shape(o, nb, i) for i, (o, nb) in
                        enumerate(self.items('cluster'))]
        geo.weights = [self.weight_group(o, nb, i) for i, (o, nb) in
                       enumerate(self.items('weight'))]
        self.validate(geo)
        return geo

    def vtx_group(self, off, nb, i):
        self.head(off, nb, TAG_VTX_GROUP, i, 'VtxGroup', size_at=12)
        hs, name, n = self.u32(off + 8), self.u32(off + 16), self.u32(off + 20)
        self.where[('vtx', i)] = off
        self.where[('vtx', i, 'num')] = off + 20
        if hs != 24:
            raise Fail(off + 8, 'VtxGroup header size %d' % hs)
        if 24 + 12 * n != nb:
            raise Fail(off + 20, 'vtx_num %d does not fit in %d bytes' % (n, nb))
        pts = [tuple(self.f32(off + 24 + 12 * k + 4 * c) for c in range(3))
               for k in range(n)]
        self.note(off, 'VtxGroup %d: tag 0x%08X header 24 size %d name_index %s '
                  'vtx_num %d' % (i, TAG_VTX_GROUP, nb, mf.idx_str(name), n))
        self.note(off + 24, '  xyz %s' % ' '.join(mf.fmt_list(p) for p in pts))
        return VtxGroup(pts, name)

    def attr_group(self, off, nb, i, tag, width, label, kind):
        self.head(off, nb, tag, i, label, size_at=12)
        hs, n = self.u32(off + 8), self.u32(off + 16)
        self.where[(kind, i)] = off
        if hs != 20:
            raise Fail(off + 8, '%s header size %d' % (label, hs))
        if 20 + 4 * width * n != nb:
            raise Fail(off + 16, '%s count %d does not fit in %d bytes'
                       % (label, n, nb))
        vals = [tuple(self.f32(off + 20 + 4 * (width * k + c))
                      for c in range(width)) for k in range(n)]
        self.note(off, '%s %d: tag 0x%08X header 20 size %d num %d'
                  % (label, i, tag, nb, n))
        if n:
            self.note(off + 20, '  %s' % ' '.join(mf.fmt_list(v) for v in vals))
        return AttrGroup(vals)

    def tri_group(self, off, nb, i):
        self.head(off, nb, TAG_TRI_GROUP, i, 'TriGroup', size_at=12)
        hs = self.u32(off + 8)
        name, atype, frames, ntri = [self.u32(off + 16 + 4 * k)
                                     for k in range(4)]
        self.where[('tri_group', i)] = off
        if hs != 32:
            raise Fail(off + 8, 'tri_group_header_size %d' % hs)
        self.note(off, 'TriGroup %d: tag 0x%08X header 32 size %d name_index %s '
                  'tri_anim_type 0x%X tri_anim_frame_num %d tri_num %d'
                  % (i, TAG_TRI_GROUP, nb, mf.idx_str(name), atype, frames, ntri))
        p = off + 32
        end = off + nb
        refs, texts = [], []
        for k, (kind, fbit, kbit) in enumerate(REF_KINDS):
            self.where[('tri_group', i, 'ref', k)] = p
            if atype & fbit:
                n = frames + 1
                if p + 4 * n > end:
                    raise Fail(off + 24, 'tri_anim_frame_num %d does not fit'
                               % frames)
                r = Ref(full=[self.u32(p + 4 * j) for j in range(n)])
                texts.append('%s FULL %s' % (kind, r.full))
                p += 4 * n
            elif atype & kbit:
                n = self.u32(p)
                if p + 4 + 8 * n > end:
                    raise Fail(p, '%s key_num %d does not fit' % (kind, n))
                r = Ref(keys=[self.u32(p + 4 + 4 * j) for j in range(n)],
                        idx=[self.u32(p + 4 + 4 * n + 4 * j) for j in range(n)])
                texts.append('%s KEY keys %s groups %s' % (kind, r.keys, r.idx))
                p += 4 + 8 * n
            else:
                r = Ref(static=self.u32(p))
                texts.append('%s %s' % (kind, mf.idx_str(r.static)))
                p += 4
            refs.append(r)
        self.note(off + 32, '  references: ' + ', '.join(texts))
        tris = []
        for k in range(ntri):
            if p + 76 > end:
                raise Fail(off + 28, 'tri_num %d does not fit' % ntri)
            tag, idx, size, tnv, tcol = [self.u32(p + 4 * j) for j in range(5)]
            if tag != TAG_TRI:
                raise Fail(p, 'Tri tag 0x%08X' % tag)
            nx, ux = self.u32(p + 68), self.u32(p + 72)
            if size != 76 + nx + ux or p + size > end:
                raise Fail(p + 8, 'tri_size %d' % size)
            self.where[('tri_group', i, 'tri', k)] = p
            corners = []
            for c in range(3):
                q = p + 20 + 16 * c
                self.where[('tri_group', i, 'tri', k, 'vtx', c)] = q
                corners.append(tuple(self.u32(q + 4 * j) for j in range(4)))
            tris.append(Tri(corners, tnv, tcol))
            self.note(p, '  Tri %d: tri_nv %s tri_color %s corners (vtx, st, nv, '
                      'color) %s' % (k, mf.idx_str(tnv), mf.idx_str(tcol),
                                     ' '.join('(%s)' % ', '.join(
                                         mf.idx_str(v) for v in c)
                                         for c in corners)))
            p += size
        if p != end:
            raise Fail(off + 12, 'tri_group_size %d does not add up' % nb)
        return TriGroup(refs, tris, frames, name)

    def shape(self, off, nb, i):
        self.head(off, nb, TAG_SHAPE, i, 'Shape')
        name, typ, tri, mat, npart, nx, ux = [self.u32(off + 12 + 4 * k)
                                              for k in range(7)]
        self.where[('shape', i)] = off
        self.where[('shape', i, 'tri_link')] = off + 20
        if 40 + 4 * npart + nx + ux != nb:
            raise Fail(off + 28, 'shape_part_num %d does not fit' % npart)
        parts = [self.u32(off + 40 + 4 * k) for k in range(npart)]
        ext = None
        if nx:
            ext = [self.u32(off + 40 + 4 * npart + 4 * k) for k in range(nx // 4)]
        self.note(off, 'Shape %d: tag 0x%08X size %d name_index %s shape_type '
                  '0x%X (%s) shape_tri_link %s shape_mat_link %s'
                  % (i, TAG_SHAPE, nb, mf.idx_str(name), typ,
                     'CULL_BACK' if typ & CULL_BACK else 'no CULL_BACK',
                     mf.idx_str(tri), mf.idx_str(mat)))
        self.note(off + 28, '  shape_part_num %d shape_part_link %s, ext %d/%d%s'
                  % (npart, parts, nx, ux, '' if ext is None else
                     ' Nintendo ext %s' % mf.words_str(ext)))
        return Shape(name, typ, tri, mat, parts, ext)

    def part(self, off, nb, i):
        self.head(off, nb, TAG_PART, i, 'Part')
        self.where[('part', i)] = off
        name, mat, tg, n, nx, ux = [self.u32(off + 12 + 4 * k) for k in range(6)]
        if 36 + 4 * n + nx + ux != nb:
            raise Fail(off + 24, 'part_tri_num %d does not fit' % n)
        tris = [self.u32(off + 36 + 4 * k) for k in range(n)]
        self.note(off, 'Part %d: tag 0x%08X size %d mat_index %s tri_group_index '
                  '%s tri_index %s' % (i, TAG_PART, nb,
                                       'USE_SHAPE_MAT' if mat == USE_SHAPE_MAT
                                       else mf.idx_str(mat), mf.idx_str(tg), tris))
        return Part(mat, tg, tris, name)

    def mat(self, off, nb, i):
        self.head(off, nb, TAG_MAT, i, 'Mat')
        self.where[('mat', i)] = off
        w = [self.u32(off + 12 + 4 * k) for k in range(7)]
        name, mtype, shade = w[0], w[1], w[2]
        ctypes = tuple(w[3:7])
        prim = [self.f32(off + 40 + 4 * k) for k in range(4)]
        user = tuple(self.u32(off + 56 + 4 * k) for k in range(8))
        light, ntex, nx, ux = [self.u32(off + 88 + 4 * k) for k in range(4)]
        if 104 + 4 * ntex + nx + ux != nb:
            raise Fail(off + 92, 'tex_num %d does not fit' % ntex)
        tex = [self.u32(off + 104 + 4 * k) for k in range(ntex)]
        ext = [self.f32(off + 104 + 4 * ntex + 4 * k) for k in range(nx // 4)] \
            if nx else None
        self.note(off, 'Mat %d: tag 0x%08X size %d name_index %s mat_type 0x%X '
                  'mat_shade_type 0x%X' % (i, TAG_MAT, nb, mf.idx_str(name),
                                           mtype, shade))
        self.note(off + 24, '  color_type %s alpha_type %s'
                  % (mf.words_str(ctypes[:2]), mf.words_str(ctypes[2:])))
        self.note(off + 40, '  prim RGBA %s, tex_num %d tex_index %s'
                  % (mf.fmt_list(prim), ntex, tex))
        if ext:
            self.note(off + 104 + 4 * ntex, '  Nintendo ext: ambient %s emission '
                      '%s diffuse %s' % (mf.fmt_list(ext[0:4]),
                                         mf.fmt_list(ext[4:8]),
                                         mf.fmt_list(ext[8:12])))
        return Mat(name, prim, shade, tex, mtype, ctypes, user, light, ext)

    def tex(self, off, nb, i):
        self.head(off, nb, TAG_TEX, i, 'Tex', size_at=12)
        self.where[('tex', i)] = off
        w = [self.u32(off + 8 + 4 * k) for k in range(11)]
        hs, name, typ, ws, wt, anim, dsize, rate, nx, ux = \
            w[0], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10]
        if hs != 52 or anim != 0 or dsize != 28 or 52 + 28 + nx + ux != nb:
            raise Fail(off + 36, 'Tex %d: only still textures with a 28-byte '
                       'TexDataArea here' % i)
        img_w, img_h, tw, th, ox, oy, img = [self.u32(off + 52 + 4 * k)
                                             for k in range(7)]
        self.where[('tex', i, 'img_w')] = off + 52
        ext = None
        if nx:
            ext = [self.u32(off + 80 + 4 * k) for k in range(nx // 4)]
        self.note(off, 'Tex %d: tag 0x%08X header 52 size %d name_index %s '
                  'tex_type 0x%03X (%s) wrap_s %d wrap_t 0x%X tex_anim 0'
                  % (i, TAG_TEX, nb, mf.idx_str(name), typ, tex_format_name(typ),
                     ws, wt))
        self.note(off + 52, '  TexDataArea: img %dx%d tile %dx%d offset (%d, %d) '
                  'tex_img_index %d' % (img_w, img_h, tw, th, ox, oy, img))
        if ext is not None:
            self.note(off + 80, '  Nintendo ext %s (tex_filter %s, '
                      'use_color_palette %d)' % (mf.words_str(ext),
                                                 TEX_FILTER.get(ext[0], '?'),
                                                 ext[3]))
        assert (tw, th, ox, oy) == (img_w, img_h, 0, 0)
        return Tex(name, typ, img_w, img_h, img, ws, wt, ext)

    def tex_img(self, off, nb, i):
        self.head(off, nb, TAG_TEX_IMG, i, 'TexImg', size_at=12)
        self.where[('tex_img', i)] = off
        hs, nx, ux = self.u32(off + 8), self.u32(off + 16), self.u32(off + 20)
        self.where[('tex_img', i, 'size')] = off + 12
        if hs != 24 or 24 + nx + ux > nb:
            raise Fail(off + 8, 'TexImg header')
        n = nb - 24 - nx - ux
        data = bytes(self.d[off + 24:off + 24 + n])
        ext = None
        if nx:
            ext = [self.u32(off + 24 + n + 4 * k) for k in range(nx // 4)]
        self.note(off, 'TexImg %d: tag 0x%08X header 24 size %d: %d pixel bytes '
                  '(RGBA8, rows from the bottom-left)%s'
                  % (i, TAG_TEX_IMG, nb, n, '' if ext is None else
                     ', Nintendo ext %s' % mf.words_str(ext)))
        for r in range(0, n, 32):
            self.note(off + 24 + r, '  ' + ' '.join(
                '%02X%02X%02X%02X' % tuple(data[q:q + 4])
                for q in range(r, min(n, r + 32), 4)))
        ti = TexImg([], ext)
        ti.data = data
        return ti

    def ci_img(self, off, nb, i):
        self.head(off, nb, TAG_CI_IMG, i, 'CiImg')
        self.where[('ci_img', i)] = off
        name, w, h, depth = [self.u32(off + 12 + 4 * k) for k in range(4)]
        nx, ux = self.u32(off + 76), self.u32(off + 80)
        nwords = (nb - 84 - nx - ux) // 4
        if depth not in (4, 8) or nb < 84 + nx + ux:
            raise Fail(off + 24, 'ci_img_pixel_depth %d' % depth)
        per = 32 // depth
        if nwords < -(-w * h // per):
            raise Fail(off + 8, 'CiImg %d: %d words for %dx%d pixels'
                       % (i, nwords, w, h))
        words = []
        for j in range(nwords):
            self.where[('ci_img', i, 'word', j)] = off + 84 + 4 * j
            words.append(self.u32(off + 84 + 4 * j))
        self.note(off, 'CiImg %d: tag 0x%08X size %d name_index %s %dx%d '
                  'pixel_depth %d' % (i, TAG_CI_IMG, nb, mf.idx_str(name), w, h,
                                      depth))
        self.note(off + 84, '  packed indices (from the bottom-left) %s'
                  % ' '.join('%08X' % x for x in words))
        return CiImg(w, h, depth, words, name)

    def palette(self, off, nb, i):
        self.head(off, nb, TAG_COLOR_PALETTE, i, 'ColorPalette')
        self.where[('palette', i)] = off
        name, num, ctype = [self.u32(off + 12 + 4 * k) for k in range(3)]
        nx, ux = self.u32(off + 76), self.u32(off + 80)
        if num not in (16, 256) or 84 + 2 * num + nx + ux != nb:
            raise Fail(off + 16, 'color_num %d' % num)
        cols = []
        for j in range(num // 2):
            wd = self.u32(off + 84 + 4 * j)
            cols += [wd >> 16, wd & 0xFFFF]
        self.note(off, 'ColorPalette %d: tag 0x%08X size %d name_index %s '
                  'color_num %d color_type %d (%s)'
                  % (i, TAG_COLOR_PALETTE, nb, mf.idx_str(name), num, ctype,
                     PAL_TYPE.get(ctype, '?')))
        for j in range(0, num, 16):
            self.note(off + 84 + 2 * j, '  colours %d-%d: %s' % (
                j, j + 15, ' '.join('%04X' % c for c in cols[j:j + 16])))
        return Palette(ctype, cols, name)

    # -- NIFF 2 deformable geometry --

    def env_part(self, off, end, what, ei, tag, j):
        """One part (or Cluster) at off; returns (EnvPart, size)."""
        kind = PART_NAME[tag]
        key = (what, ei, kind, j)
        label = {'full': 'FullWeightedPart', 'weighted': 'WeightedPart',
                 'morph': 'MorphPart', 'cluster': 'Cluster'}[kind]
        if off + 12 > end:
            raise Fail(off, '%s %d does not fit' % (label, j))
        t, idx, size = self.u32(off), self.u32(off + 4), self.u32(off + 8)
        if t != tag:
            raise Fail(off, '%s tag 0x%08X, expected 0x%08X' % (label, t, tag))
        if idx != j:
            raise Fail(off + 4, '%s index %d at position %d' % (label, idx, j))
        if size % 4 or off + size > end:
            raise Fail(off + 8, '%s size %d does not fit' % (label, size))
        self.where[key] = off
        w12 = self.u32(off + 12)
        groups, texts = {}, []
        if tag in (TAG_FULL_PART, TAG_CLUSTER):
            fixed = 64 if tag == TAG_FULL_PART else 56
            if size < fixed:
                raise Fail(off + 8, '%s size %d < %d' % (label, size, fixed))
            nodes = [(self.u32(off + 16), self.u32(off + 20))]
            self.where[key + ('node_kind', 0)] = off + 16
            self.where[key + ('node', 0)] = off + 20
            ext = [(self.u32(off + 24), self.u32(off + 28))]
            for k, f in enumerate(GROUP_FIELDS):
                self.where[key + ('group', f, 0)] = off + 32 + 4 * k
                groups[f] = [self.u32(off + 32 + 4 * k)]
            st = self.u32(off + 52)
            nx, ux = (self.u32(off + 56), self.u32(off + 60)) \
                if tag == TAG_FULL_PART else (0, 0)
            if fixed + nx + ux != size:
                raise Fail(off + 8, '%s size %d != %d + extension blocks'
                           % (label, size, fixed))
            p = EnvPart(tag, nodes, st, groups, ext, w12)
        elif tag == TAG_WEIGHTED_PART:
            a, st, e, nx, ux = [self.u32(off + 16 + 4 * k) for k in range(5)]
            need = 36 + 8 * a + 8 * e + 24 * (a + e)
            if a + e == 0 or need + nx + ux != size:
                raise Fail(off + 16, 'affected_node_num %d (external %d) does '
                           'not fit the %d-byte WeightedPart' % (a, e, size))
            q0 = off + 36
            nodes = []
            for q in range(a):
                self.where[key + ('node_kind', q)] = q0 + 4 * q
                self.where[key + ('node', q)] = q0 + 4 * a + 4 * q
                nodes.append((self.u32(q0 + 4 * q), self.u32(q0 + 4 * a + 4 * q)))
            q0 += 8 * a
            ext = [(self.u32(q0 + 4 * q), self.u32(q0 + 4 * e + 4 * q))
                   for q in range(e)]
            q0 += 8 * e
            for f in ('weight',) + GROUP_FIELDS:
                groups[f] = []
                for q in range(a + e):
                    self.where[key + ('group', f, q)] = q0 + 4 * q
                    groups[f].append(self.u32(q0 + 4 * q))
                q0 += 4 * (a + e)
            p = EnvPart(tag, nodes, st, groups, ext, w12)
        else:
            if size < 64:
                raise Fail(off + 8, 'MorphPart size %d < 64' % size)
            nodes, ext = [], []
            for q in range(2):
                b = off + 16 + 16 * q
                self.where[key + ('node_kind', q)] = b
                self.where[key + ('node', q)] = b + 4
                nodes.append((self.u32(b), self.u32(b + 4)))
                ext.append((self.u32(b + 8), self.u32(b + 12)))
            st, t, nx, ux = [self.u32(off + 48 + 4 * k) for k in range(4)]
            if t == 0 or 64 + 20 * t + nx + ux != size:
                raise Fail(off + 52, 'table_num %d does not fit the %d-byte '
                           'MorphPart' % (t, size))
            q0 = off + 64
            for f in GROUP_FIELDS:
                groups[f] = []
                for q in range(t):
                    self.where[key + ('group', f, q)] = q0 + 4 * q
                    groups[f].append(self.u32(q0 + 4 * q))
                q0 += 4 * t
            p = EnvPart(tag, nodes, st, groups, ext, w12)
        for f in ('weight',) + GROUP_FIELDS:
            if f in groups:
                texts.append('%s %s' % (f, '[' + ', '.join(
                    mf.idx_str(v) for v in groups[f]) + ']'))
        self.note(off, '  %s %d: tag 0x%08X size %d nodes %s st group %s'
                  % (label, j, tag, size, ', '.join(
                      '(%s %s)' % (NODE_KIND.get(k, '0x%08X' % k),
                                   mf.idx_str(n)) for k, n in p.nodes),
                     mf.idx_str(p.st)))
        self.note(off + 16, '    groups: ' + '; '.join(texts))
        return p, size

    def env_tri(self, off, end, what, ei, k):
        cluster = what == 'cluster'
        need, stride, c0 = (100, 24, 28) if cluster else (116, 28, 32)
        tag = TAG_CLUSTER_TRI if cluster else TAG_ENVELOPE_TRI
        label = 'ClusterTri' if cluster else 'EnvelopeTri'
        if off + need > end:
            raise Fail(off, '%s %d does not fit' % (label, k))
        if self.u32(off) != tag:
            raise Fail(off, '%s tag 0x%08X' % (label, self.u32(off)))
        if self.u32(off + 4) != k:
            raise Fail(off + 4, '%s index %d at position %d'
                       % (label, self.u32(off + 4), k))
        if self.u32(off + 8) != need:
            raise Fail(off + 8, '%s size %d' % (label, self.u32(off + 8)))
        self.where[(what, ei, 'tri', k)] = off
        part = (self.u32(off + 12), self.u32(off + 16))
        tnv, tcol = self.u32(off + 20), self.u32(off + 24)
        wtri = NOLINK if cluster else self.u32(off + 28)
        corners = []
        for c in range(3):
            q = off + c0 + stride * c
            self.where[(what, ei, 'tri', k, 'corner', c)] = q
            corners.append(tuple(self.u32(q + 4 * j)
                                 for j in range(stride // 4)))
        self.note(off, '  %s %d: part (%s %s) tri_nv %s tri_color %s%s corners '
                  '(part, index, vtx, st, vtx_nv, vtx_color%s) %s'
                  % (label, k, PART_NAME.get(part[0], '0x%08X' % part[0]),
                     mf.idx_str(part[1]), mf.idx_str(tnv), mf.idx_str(tcol),
                     '' if cluster else ' weight_index_tri %s'
                     % mf.idx_str(wtri), '' if cluster else ', weight_index',
                     ' '.join('(%s)' % ', '.join(
                         [PART_NAME.get(cn[0], '0x%08X' % cn[0])] +
                         [mf.idx_str(v) for v in cn[1:]]) for cn in corners)))
        if cluster:
            return EnvTri(part, corners, tnv, tcol), need
        return EnvTri(part, corners, tnv, tcol, wtri), need

    def envelope(self, off, nb, i):
        self.head(off, nb, TAG_ENVELOPE, i, 'Envelope')
        name, typ, nf, nw, nm, ntri, nx, ux = [self.u32(off + 12 + 4 * k)
                                               for k in range(8)]
        self.where[('env', i)] = off
        end = off + nb - nx - ux
        self.note(off, 'Envelope %d: tag 0x%08X size %d name_index %s type %d '
                  'full %d weighted %d morph %d tri_num %d ext %d/%d'
                  % (i, TAG_ENVELOPE, nb, mf.idx_str(name), typ, nf, nw, nm,
                     ntri, nx, ux))
        p = off + 44
        lists = []
        for tag, n in zip(ENV_PART_TAGS, (nf, nw, nm)):
            parts = []
            for j in range(n):
                part, size = self.env_part(p, end, 'env', i, tag, j)
                parts.append(part)
                p += size
            lists.append(parts)
        tris = []
        for k in range(ntri):
            t, size = self.env_tri(p, end, 'env', i, k)
            tris.append(t)
            p += size
        if p != end:
            raise Fail(off + 8, 'envelope size %d does not add up' % nb)
        return Envelope(name, lists[0], lists[1], lists[2], tris, typ)

    def cluster_shape(self, off, nb, i):
        self.head(off, nb, TAG_CLUSTER_SHAPE, i, 'ClusterShape')
        name, typ, ncl, ntri, nx, ux = [self.u32(off + 12 + 4 * k)
                                        for k in range(6)]
        self.where[('cluster', i)] = off
        end = off + nb - nx - ux
        self.note(off, 'ClusterShape %d: tag 0x%08X size %d name_index %s type '
                  '%d cluster_num %d tri_num %d ext %d/%d'
                  % (i, TAG_CLUSTER_SHAPE, nb, mf.idx_str(name), typ, ncl, ntri,
                     nx, ux))
        p = off + 36
        clusters, tris = [], []
        for j in range(ncl):
            part, size = self.env_part(p, end, 'cluster', i, TAG_CLUSTER, j)
            clusters.append(part)
            p += size
        for k in range(ntri):
            t, size = self.env_tri(p, end, 'cluster', i, k)
            tris.append(t)
            p += size
        if p != end:
            raise Fail(off + 8, 'cluster shape size %d does not add up' % nb)
        return ClusterShape(name, clusters, tris, typ)

    def weight_group(self, off, nb, i):
        self.head(off, nb, TAG_WEIGHT_GROUP, i, 'WeightGroup')
        name, n, nx, ux = [self.u32(off + 12 + 4 * k) for k in range(4)]
        self.where[('weight', i)] = off
        if 28 + 4 * n + nx + ux != nb:
            raise Fail(off + 16, 'weight_num %d does not fit %d bytes' % (n, nb))
        w = [self.f32(off + 28 + 4 * k) for k in range(n)]
        self.note(off, 'WeightGroup %d: tag 0x%08X size %d name_index %s '
                  'weight_num %d: %s' % (i, TAG_WEIGHT_GROUP, nb,
                                         mf.idx_str(name), n, mf.fmt_list(w)))
        return WeightGroup(w, name)

    def validate(self, geo):
        """The links RULES names as refusing the file."""
        for i, sh in enumerate(geo.shapes):
            kind = shape_kind(sh)
            n = {KIND_ENVELOPE: len(geo.envelopes),
                 KIND_CLUSTER: len(geo.clusters)}.get(kind, len(geo.tri_groups))
            if sh.tri_link >= n:
                raise Fail(self.where[('shape', i, 'tri_link')],
                           'shape_tri_link %d >= %d %s'
                           % (sh.tri_link, n, {
                               KIND_ENVELOPE: 'Envelopes',
                               KIND_CLUSTER: 'ClusterShapes'}.get(kind,
                                                                  'TriGroups')))
        for i, d in enumerate(geo.envelopes):
            self.check_deform(geo, 'env', i, d)
        for i, d in enumerate(geo.clusters):
            self.check_deform(geo, 'cluster', i, d)

    def check_deform(self, geo, what, i, d):
        """RULES "Deformable geometry": node kinds, node indices, group
        indices, corner part kinds, part indices and vtx indices, each refused
        at its own field."""
        sc, W = self.sc, self.where
        counts = {NODE_OBJ: len(sc.objs), NODE_CHAIN_ROOT: len(sc.chain_roots),
                  NODE_JOINT: len(sc.joints), NODE_EFFECTOR: len(sc.effectors)}
        lists = {'weight': geo.weights, 'vtx': geo.vtx, 'vtx_nv': geo.vtx_nvs,
                 'tri_nv': geo.tri_nvs, 'vtx_color': geo.vtx_colors,
                 'tri_color': geo.tri_colors}
        for tag, parts in d.kinds():
            for j, p in enumerate(parts):
                key = (what, i, PART_NAME[tag], j)
                for q, (nk, ni) in enumerate(p.nodes):
                    if nk == NOLINK or ni == NOLINK:
                        continue                  # another file's node
                    if nk not in counts:
                        raise Fail(W[key + ('node_kind', q)],
                                   'node kind 0x%08X' % nk)
                    if ni >= counts[nk]:
                        raise Fail(W[key + ('node', q)],
                                   '%s node index %d >= %d' % (
                                       NODE_KIND[nk], ni, counts[nk]))
                for f, vals in p.groups.items():
                    for q, g in enumerate(vals):
                        # vertex and weight groups are required; the others
                        # may be 0xFFFFFFFF (none)
                        if g >= len(lists[f]) and (
                                g != NOLINK or f in ('vtx', 'weight')):
                            raise Fail(W[key + ('group', f, q)],
                                       '%s group %s past its list (%d)'
                                       % (f, mf.idx_str(g), len(lists[f])))
                if p.st != NOLINK and p.st >= len(geo.sts):
                    raise Fail(W[key], 'st group %d' % p.st)
        kinds = dict(d.kinds())
        for k, t in enumerate(d.tris):
            for c, cn in enumerate(t.corners):
                at = W[(what, i, 'tri', k, 'corner', c)]
                if cn[0] not in kinds:
                    raise Fail(at, 'part kind 0x%08X is not one of the shape\'s'
                               % cn[0])
                if cn[1] >= len(kinds[cn[0]]):
                    raise Fail(at + 4, 'part index %d >= %d %s parts'
                               % (cn[1], len(kinds[cn[0]]), PART_NAME[cn[0]]))
                p = kinds[cn[0]][cn[1]]
                for g in p.groups['vtx']:
                    if cn[2] >= len(geo.vtx[g].pts):
                        raise Fail(at + 8, 'vtx_index %d >= %d vertices of '
                                   'VtxGroup %d' % (cn[2], len(geo.vtx[g].pts),
                                                    g))
            if t.part[0] in kinds and t.part[1] >= len(kinds[t.part[0]]):
                raise Fail(W[(what, i, 'tri', k)] + 16, 'triangle part index')


def shape_kind(sh):
    """kind_of_node_for_geometry (NIFF 1 shapes: TriGroup)."""
    return sh.ext[0] if sh.ext else KIND_TRI_GROUP


def parse_geo_bytes(data):
    p = mf.Parser(data, foreign_items=True)
    sc = p.parse()
    geo = GeoReader(p, sc).read()
    return sc, geo, p


# --- N64 texel rules (RULES "Textures") ----------------------------------------------

def expand(v, bits):
    """The RDP's bit replication: an n-bit value to 8 bits."""
    if bits == 1:
        return 255 if v else 0
    if bits == 3:
        return (v << 5) | (v << 2) | (v >> 1)
    if bits == 4:
        return (v << 4) | v
    if bits == 5:
        return (v << 3) | (v >> 2)
    assert bits == 8
    return v


def reduce_(x, bits):
    """8 bits -> n bits. The fixtures only use values where truncation
    (x >> (8 - n)) and both roundings agree (checked by agree())."""
    return x >> (8 - bits)


def agree(x, bits):
    """True when truncation, rounding in the 8-bit domain and rounding of
    x * (2^n - 1) / 255 all give the same n-bit value."""
    if bits == 8:
        return True
    top = (1 << bits) - 1
    a = x >> (8 - bits)
    b = min(top, (x + (1 << (7 - bits))) >> (8 - bits))
    c = int(x * top / 255.0 + 0.5)
    return a == b == c


def intensity(r, g, b):
    """round(0.299 R + 0.587 G + 0.114 B); the fixtures keep away from .5."""
    v = 0.299 * r + 0.587 * g + 0.114 * b
    frac = v - int(v)
    assert abs(frac - 0.5) > 0.02, (r, g, b, v)
    return int(v + 0.5)


def texel(fmt, px):
    """One stored RGBA8 pixel as the game shows it in this N64 format."""
    r, g, b, a = px
    if fmt == 'RGBA32' or fmt in ('CI4', 'CI8'):
        return (r, g, b, a)
    if fmt == 'RGBA16':
        for v in (r, g, b):
            assert agree(v, 5), (fmt, px)
        return (expand(reduce_(r, 5), 5), expand(reduce_(g, 5), 5),
                expand(reduce_(b, 5), 5), expand(reduce_(a, 1), 1))
    i = intensity(r, g, b)
    if fmt == 'IA16':
        return (i, i, i, a)
    if fmt == 'IA8':
        assert agree(i, 4) and agree(a, 4), (fmt, px)
        iv = expand(reduce_(i, 4), 4)
        return (iv, iv, iv, expand(reduce_(a, 4), 4))
    if fmt == 'IA4':
        assert agree(i, 3), (fmt, px)
        iv = expand(reduce_(i, 3), 3)
        return (iv, iv, iv, expand(reduce_(a, 1), 1))
    if fmt == 'I8':
        return (i, i, i, i)
    if fmt == 'I4':
        assert agree(i, 4), (fmt, px)
        iv = expand(reduce_(i, 4), 4)
        return (iv, iv, iv, iv)
    raise ValueError(fmt)


def check_expand():
    """Cross-check of the shifts in expand(): bit replication is the n-bit
    pattern written again and again until 8 bits are filled."""
    for bits in (1, 3, 4, 5):
        for v in range(1 << bits):
            pattern = format(v, '0%db' % bits)
            assert expand(v, bits) == int((pattern * 8)[:8], 2), (bits, v)


def tlut_entry(c, color_type):
    """A 16-bit palette entry: RGBA16 5551 or IA16 (8-bit I, 8-bit A)."""
    if color_type == 1:
        i, a = c >> 8, c & 0xFF
        return (i, i, i, a)
    return (expand((c >> 11) & 31, 5), expand((c >> 6) & 31, 5),
            expand((c >> 1) & 31, 5), expand(c & 1, 1))


def ci_indices(ci):
    """The pixel indices of a CiImg in stored order (from the bottom-left),
    with the word each sits in."""
    per = 32 // ci.depth
    out = []
    for k in range(ci.w * ci.h):
        word = ci.words[k // per]
        shift = 32 - ci.depth * (k % per + 1)
        out.append(((word >> shift) & ((1 << ci.depth) - 1), k // per))
    return out


# --- the scene's geometry (RULES "Geometry") -------------------------------------------

class Mesh:
    def __init__(self, name, node, mat_key, uv, nrm, col):
        self.name, self.node, self.mat_key = name, node, mat_key
        self.uv, self.nrm, self.col = uv, nrm, col
        self.verts = []                   # corner tuples (keys)
        self.values = []                  # (p, uv, n, c)
        self.tris = []                    # 3 vertex indices each
        self.file_tris = []               # the triangle's index in its TriGroup
        self.skin = None                  # deformable: dict(name, joints)
        self.vinfo = None                 # deformable: per vertex (deform_vertex)


def normalized(v):
    n = mf.v_len(v)
    if n < 1e-12:
        return None
    return tuple(x / n for x in v)


def mat_sources(mat):
    """RULES "Geometry" (material sources): the sources a Mat's colour and
    alpha take (VTX 1, TRI 2, PRIM 4, TEX0 8): the union of its two colour
    types' bits, and of its alpha types' >> 16 (0xFFFFFFFF: cycle unused);
    the alpha follows the colour where it names none; a Mat naming no source,
    or an N64 combiner Mat (mat_type != 0), takes all four."""
    c = a = 0
    for k in range(2):
        if mat.color_types[k] != NOLINK:
            c |= mat.color_types[k] & 0xF
        if mat.color_types[2 + k] != NOLINK:
            a |= (mat.color_types[2 + k] >> 16) & 0xF
    if mat.mat_type != 0 or not c:
        c = 0xF
    if mat.mat_type != 0 or not a:
        a = c
    return c, a


def gate_color(geo, mat, has_c, cv):
    """A corner's colour as the Mat takes it: None when neither its colour nor
    its alpha takes the stored colours, else RGB and alpha at 1 where that
    part does not take them."""
    if mat is None:
        return has_c, cv
    c, a = mat_sources(geo.mats[mat])
    if not ((c | a) & 3):
        return False, None
    if cv is None:
        return has_c, cv
    return has_c, tuple(cv[k] if ((c if k < 3 else a) & 3) else 1.0
                        for k in range(4))


def geometry_of(sc, geo, where=None):
    """meshes, materials, textures per RULES "Geometry". where: the reader's
    offsets (None for the description: offsets then read as 0)."""
    W = where or {}
    nodes = mf.build_nodes(sc, '')
    meshes, used_names = [], set()
    for ni, n in enumerate(nodes):
        if n.obj is None:
            continue
        ob = sc.objs[n.obj]
        if ob.state != mf.STATE_ACTIVE or ob.shape == NOLINK:
            continue
        si = ob.shape
        sh = geo.shapes[si]
        ds = not (sh.type & CULL_BACK)
        if shape_kind(sh) in (KIND_ENVELOPE, KIND_CLUSTER):
            deform_meshes(sc, geo, nodes, ni, si, sh, meshes, used_names)
            continue
        tgi = sh.tri_link
        tg = geo.tri_groups[tgi]
        vg, tcg, vcg, tng, vng, stg = [r.rest() for r in tg.refs]

        def grp(lst, k):
            return lst[k].vals if k is not None and k < len(lst) else []
        vtx = geo.vtx[vg].pts if vg < len(geo.vtx) else []
        tri_cols, vtx_cols = grp(geo.tri_colors, tcg), grp(geo.vtx_colors, vcg)
        tri_nvs, vtx_nvs = grp(geo.tri_nvs, tng), grp(geo.vtx_nvs, vng)
        sts = grp(geo.sts, stg)
        base = sc.names[sh.name_index] if sh.name_index != NOLINK \
            else 'shape%d' % si
        groups = {}
        order = []
        for k, t in enumerate(tg.tris):
            # material: first Part in shape_part_link order listing k
            mat = None
            for pi in sh.parts:
                p = geo.parts[pi]
                if k in p.tris and p.mat not in (USE_SHAPE_MAT, NOLINK):
                    mat = p.mat
                    break
            if mat is None and sh.mat_link != NOLINK:
                mat = sh.mat_link
            if mat is None and ob.mat != NOLINK:
                mat = ob.mat
            corners = []
            for c, (vi, st, vn, vc) in enumerate(t.corners):
                if vi >= len(vtx):
                    raise Fail(W.get(('tri_group', tgi, 'tri', k, 'vtx', c), 0),
                               'vtx_index %d >= %d vertices' % (vi, len(vtx)))
                uv = (sts[st][0], 1.0 - sts[st][1]) if st < len(sts) else None
                if vn < len(vtx_nvs):
                    nsrc, nv = ('vtx', vn), normalized(vtx_nvs[vn])
                elif t.tri_nv < len(tri_nvs):
                    nsrc, nv = ('tri', t.tri_nv), normalized(tri_nvs[t.tri_nv])
                else:
                    nsrc, nv = None, None
                if nv is None:
                    nsrc = None
                if vc < len(vtx_cols):
                    csrc, cv = ('vtx', vc), vtx_cols[vc]
                elif t.tri_color < len(tri_cols):
                    csrc, cv = ('tri', t.tri_color), tri_cols[t.tri_color]
                else:
                    csrc, cv = None, None
                corners.append((vi, st, uv, nsrc, nv, csrc, cv))
            has_uv = all(c[2] is not None for c in corners)
            has_n = all(c[4] is not None for c in corners)
            has_c = all(c[6] is not None for c in corners)
            if gate_color(geo, mat, has_c, None)[0] is False:
                has_c = False
            corners = [c[:6] + (gate_color(geo, mat, has_c, c[6])[1],)
                       for c in corners]
            key = (mat, has_uv, has_n, has_c)
            if key not in groups:
                groups[key] = Mesh(None, ni, None if mat is None else (mat, ds),
                                   has_uv, has_n, has_c)
                order.append(key)
            m = groups[key]
            tri = []
            for (vi, st, uv, nsrc, nv, csrc, cv) in corners:
                vkey = (vi, st if has_uv else None, nsrc if has_n else None,
                        csrc if has_c else None)
                if vkey not in m.verts:
                    m.verts.append(vkey)
                    m.values.append((vtx[vi], uv if has_uv else None,
                                     nv if has_n else None,
                                     cv if has_c else None))
                tri.append(m.verts.index(vkey))
            m.tris.append(tri)
            m.file_tris.append(k)
        for key in order:
            m = groups[key]
            name, j = base, 2
            while name in used_names:
                name = '%s#%d' % (base, j)
                j += 1
            used_names.add(name)
            m.name = name
            meshes.append(m)
    # materials: one per used (Mat, double-sided)
    used = []
    for m in meshes:
        if m.mat_key is not None and m.mat_key not in used:
            used.append(m.mat_key)
    textures = {}
    for (mi, ds) in used:
        mat = geo.mats[mi]
        if mat.tex and mat.tex[0] not in textures and (mat_sources(mat)[0] | mat_sources(mat)[1]) & 8:
            textures[mat.tex[0]] = texture_of(sc, geo, mat.tex[0], W)
    mats = {}
    for (mi, ds) in used:
        mat = geo.mats[mi]
        name = sc.names[mat.name_index] if mat.name_index != NOLINK \
            else 'mat%d' % mi
        if ds and (mi, False) in used:
            name += '#2'
        cs, as_ = mat_sources(mat)
        tex = textures[mat.tex[0]] if mat.tex and (cs | as_) & 8 else None
        color = tuple(mat.prim[k] if ((cs if k < 3 else as_) & 4) else 1.0
                      for k in range(4))
        if sc.niff2 and mat.ext and len(mat.ext) >= 12 and mat.shade & 0xF:
            # a lit NIFF 2 Mat's diffuse colour tints the RGB (float32
            # product, as the reader multiplies the two floats in double
            # and stores a float)
            color = tuple(mf.f32(color[k] * mat.ext[8 + k]) if k < 3 else color[k]
                          for k in range(4))
        alphas = [v[3][3] for m in meshes if m.mat_key == (mi, ds) and m.col
                  for v in m.values]
        tex_alpha = set(px[3] for row in tex['rows'] for px in row) \
            if tex else set()
        if color[3] < 1 or any(a < 1 for a in alphas) or \
                tex_alpha - {0, 255}:
            mode = 'BLEND'
        elif 0 in tex_alpha:
            mode = 'MASK'
        else:
            mode = 'OPAQUE'
        mats[(mi, ds)] = dict(name=name, color=color, mode=mode,
                              ds=ds, unlit=(mat.shade & 0xF) == 0,
                              tex=None if tex is None else tex['name'])
    return nodes, meshes, mats, textures


def m_apply(M, p):
    return tuple(sum(M[r][c] * p[c] for c in range(3)) + M[r][3]
                 for r in range(3))


def m_linear(M, v):
    return tuple(sum(M[r][c] * v[c] for c in range(3)) for r in range(3))


def is_rigid(M):
    cols = [tuple(M[r][c] for r in range(3)) for c in range(3)]
    return all(abs(mf.v_dot(cols[a], cols[b]) - (a == b)) < 1e-9
               for a in range(3) for b in range(3))


def node_of(sc, nodes, kind, index, shape_node):
    """The scene node of a part's (node kind, node index); another file's
    node (0xFFFFFFFF): the shape's own object (RULES)."""
    if kind == NOLINK or index == NOLINK:
        return shape_node
    for i, n in enumerate(nodes):
        if kind == NODE_OBJ and n.obj == index:
            return i
        if kind != NODE_OBJ and n.chain == (NODE_KIND[kind], index):
            return i
    raise AssertionError('node %s %d is not placed' % (NODE_KIND[kind], index))


def part_influences(p):
    """(node slot, group slot) pairs of the nodes that move a part's
    vertices (RULES: FullWeighted / Cluster: its node; Weighted: the a
    internal nodes; Morph: node 0 with table 0)."""
    if p.tag == TAG_WEIGHTED_PART:
        return [(q, q) for q in range(len(p.nodes))]
    return [(0, 0)]


def deform_vertex(sc, geo, nodes, rest, shape_node, p, corner):
    """One vertex of a deformable shape (RULES "Deformable geometry"): its
    rest position, uv, normal, colour (None when absent), all its nodes with
    their normalised weights and positions, and the (node, weight) pairs of
    its skin (the four largest weights, renormalised)."""
    vtx, st, nv, col = corner[2], corner[3], corner[4], corner[5]
    wi = corner[6] if len(corner) > 6 else NOLINK
    infl = []
    for q, g in part_influences(p):
        node = node_of(sc, nodes, p.nodes[q][0], p.nodes[q][1], shape_node)
        if p.tag == TAG_WEIGHTED_PART:
            wg = geo.weights[p.groups['weight'][g]].weights
            idx = wi if wi < len(wg) else vtx
            assert idx < len(wg), 'no weight for vertex %d' % vtx
            w = max(wg[idx], 0.0)                 # negative counts as 0
        else:
            w = 1.0
        local = geo.vtx[p.groups['vtx'][g]].pts[vtx]
        infl.append([node, w, local, g])
    total = sum(x[1] for x in infl)
    if total == 0:                                # all 0: the first node alone
        for k, x in enumerate(infl):
            x[1] = 1.0 if k == 0 else 0.0
        total = 1.0
    for x in infl:
        x[1] /= total
    pos = [0.0, 0.0, 0.0]
    for node, w, local, g in infl:
        wp = m_apply(rest[node], local)
        for r in range(3):
            pos[r] += w * wp[r]
    # normal: the same blend of the nodes' rotated vertex normals
    nrm, have_n = [0.0, 0.0, 0.0], True
    for node, w, local, g in infl:
        gi = p.groups['vtx_nv'][g]
        vals = geo.vtx_nvs[gi].vals if gi < len(geo.vtx_nvs) else []
        if nv >= len(vals) or mf.v_len(vals[nv]) < 1e-12:
            have_n = False
            break
        # the fixtures keep away from the readings RULES leaves open: nodes
        # with normals are rigid at rest (rotation = linear part), and a
        # blend of several nodes uses unit normals (normalising before or
        # after the blend agree)
        assert is_rigid(rest[node]), 'a scaled node with normals'
        assert len(infl) == 1 or abs(mf.v_len(vals[nv]) - 1) < 1e-6
        rn = m_linear(rest[node], vals[nv])
        for r in range(3):
            nrm[r] += w * rn[r]
    n = normalized(nrm) if have_n else None
    sts = geo.sts[p.st].vals if p.st < len(geo.sts) else []
    uv = (sts[st][0], 1.0 - sts[st][1]) if st < len(sts) else None
    cg = p.groups['vtx_color'][0]
    cols = geo.vtx_colors[cg].vals if cg < len(geo.vtx_colors) else []
    c = cols[col] if col < len(cols) else None
    # the skin: the four largest weights (ties at the cut are avoided)
    ranked = sorted((x for x in infl if x[1] > 0), key=lambda x: -x[1])
    if len(ranked) > 4:
        assert ranked[3][1] > ranked[4][1], 'a tie at the fourth weight'
    kept = ranked[:4]
    ksum = sum(x[1] for x in kept)
    skin = [(x[0], x[1] / ksum) for x in kept]
    return dict(pos=tuple(pos), uv=uv, n=n, c=c, infl=infl, skin=skin)


def skin_joints(sc, nodes, d, shape_node):
    """The skin's joints: the influencing nodes in order of first appearance
    (parts in file order, nodes in part order)."""
    joints = []
    for tag, parts in d.kinds():
        for p in parts:
            for q, g in part_influences(p):
                node = node_of(sc, nodes, p.nodes[q][0], p.nodes[q][1],
                               shape_node)
                if node not in joints:
                    joints.append(node)
    return joints


def deform_meshes(sc, geo, nodes, shape_node, si, sh, meshes, used_names):
    """An Envelope or ClusterShape: skinned meshes on the scene root, grouped
    and named as for TriGroups; vertices at rest in the root's space."""
    ev = mf.Evaluator(sc, '')
    assert [n.name for n in ev.nodes] == [n.name for n in nodes]
    rest = ev.worlds(0.0)
    ob = sc.objs[nodes[shape_node].obj]
    ds = not (sh.type & CULL_BACK)
    d = geo.envelopes[sh.tri_link] if shape_kind(sh) == KIND_ENVELOPE \
        else geo.clusters[sh.tri_link]
    kinds = dict(d.kinds())
    base = sc.names[sh.name_index] if sh.name_index != NOLINK \
        else 'shape%d' % si
    skin = dict(name=base, joints=skin_joints(sc, nodes, d, shape_node))
    groups, order = {}, []
    for k, t in enumerate(d.tris):
        mat = None                                # Parts count these triangles
        for pi in sh.parts:
            p = geo.parts[pi]
            if k in p.tris and p.mat not in (USE_SHAPE_MAT, NOLINK):
                mat = p.mat
                break
        if mat is None and sh.mat_link != NOLINK:
            mat = sh.mat_link
        if mat is None and ob.mat != NOLINK:
            mat = ob.mat
        corners = [(cn, deform_vertex(sc, geo, nodes, rest, shape_node,
                                      kinds[cn[0]][cn[1]], cn))
                   for cn in t.corners]
        # the triangle's own normal and colour where a corner has none
        # (RULES: vertex before triangle): the first TriNvGroup /
        # TriColorGroup of the triangle's part, the normal turned by that
        # part's first node at rest
        tps = kinds.get(t.part[0], [])
        tp = tps[t.part[1]] if t.part[1] < len(tps) else None
        for cn, v in corners:
            v['nkey'] = ('vtx', cn[4])
            v['ckey'] = ('vtx', cn[5])
            if tp is None:
                continue
            gi = tp.groups['tri_nv'][0]
            vals = geo.tri_nvs[gi].vals if gi < len(geo.tri_nvs) else []
            if v['n'] is None and t.tri_nv < len(vals) and \
                    mf.v_len(vals[t.tri_nv]) >= 1e-12:
                node = node_of(sc, nodes, tp.nodes[0][0], tp.nodes[0][1],
                               shape_node)
                assert is_rigid(rest[node]), 'a scaled node with normals'
                v['n'] = normalized(m_linear(rest[node], vals[t.tri_nv]))
                v['nkey'] = ('tri', t.part, t.tri_nv)
            gi = tp.groups['tri_color'][0]
            cols = geo.tri_colors[gi].vals if gi < len(geo.tri_colors) else []
            if v['c'] is None and t.tri_color < len(cols):
                v['c'] = cols[t.tri_color]
                v['ckey'] = ('tri', t.part, t.tri_color)
        has_uv = all(v['uv'] is not None for cn, v in corners)
        has_n = all(v['n'] is not None for cn, v in corners)
        has_c = all(v['c'] is not None for cn, v in corners)
        if gate_color(geo, mat, has_c, None)[0] is False:
            has_c = False
        for cn, v in corners:
            v['c'] = gate_color(geo, mat, has_c, v['c'])[1]
        key = (mat, has_uv, has_n, has_c)
        if key not in groups:
            m = Mesh(None, 0, None if mat is None else (mat, ds), has_uv,
                     has_n, has_c)
            m.skin, m.vinfo = skin, []
            groups[key] = m
            order.append(key)
        m = groups[key]
        tri = []
        for cn, v in corners:
            # a vertex: (part kind, part index, vtx) and its attribute sources
            vkey = (cn[0], cn[1], cn[2], cn[3] if has_uv else None,
                    v['nkey'] if has_n else None,
                    v['ckey'] if has_c else None)
            if vkey not in m.verts:
                m.verts.append(vkey)
                m.values.append((v['pos'], v['uv'] if has_uv else None,
                                 v['n'] if has_n else None,
                                 v['c'] if has_c else None))
                m.vinfo.append(v)
            else:                                 # one vertex, one weighting
                assert m.vinfo[m.verts.index(vkey)]['skin'] == v['skin'], vkey
            tri.append(m.verts.index(vkey))
        m.tris.append(tri)
        m.file_tris.append(k)
    for key in order:
        m = groups[key]
        name, j = base, 2
        while name in used_names:
            name = '%s#%d' % (base, j)
            j += 1
        used_names.add(name)
        m.name = name
        meshes.append(m)


def texture_of(sc, geo, ti, W):
    t = geo.texs[ti]
    fmt = tex_format_name(t.type)
    name = sc.names[t.name_index] if t.name_index != NOLINK else 'tex%d' % ti
    palette = t.ext is not None and len(t.ext) >= 5 and t.ext[3] == 1
    if palette:
        ci = geo.ci_imgs[t.img]
        assert (ci.w, ci.h) == (t.w, t.h)
        pal = geo.palettes[t.ext[5]]
        bank = t.ext[6] if ci.depth == 4 and len(pal.colors) == 256 else 0
        stored = []
        for idx, word in ci_indices(ci):
            k = bank * 16 + idx if ci.depth == 4 else idx
            if k >= len(pal.colors):
                raise Fail(W.get(('ci_img', t.img, 'word', word), 0),
                           'colour index %d past the %d-colour palette'
                           % (k, len(pal.colors)))
            stored.append(tlut_entry(pal.colors[k], pal.color_type))
        source = 'CiImg %d, ColorPalette %d (%s, %d colours%s)' % (
            t.img, t.ext[5], PAL_TYPE[pal.color_type], len(pal.colors),
            ', bank %d' % bank if bank else '')
    else:
        img = geo.tex_imgs[t.img]
        need = t.w * t.h * 4
        if len(img.data) < need:
            raise Fail(W.get(('tex_img', t.img, 'size'), 0),
                       'TexImg %d holds %d pixel bytes, %dx%dx4 = %d needed'
                       % (t.img, len(img.data), t.w, t.h, need))
        stored = [tuple(img.data[4 * k:4 * k + 4]) for k in range(t.w * t.h)]
        stored = [texel(fmt, px) for px in stored]
        source = 'TexImg %d' % t.img
    rows_bottom = [stored[r * t.w:(r + 1) * t.w] for r in range(t.h)]
    rows = rows_bottom[::-1]                      # rows from the top
    nearest = t.ext is not None and t.ext[0] == 0
    return dict(name=name, w=t.w, h=t.h, fmt=fmt, rows=rows,
                wrap=(WRAP_S[t.wrap_s], WRAP_T[t.wrap_t]), nearest=nearest,
                source=source)


def fl(vals):
    return ','.join(g9(v) for v in vals)


def skinned_position(v, worlds, rest):
    """RULES: sum over the skin's (node, w') of w' * World(node, t) *
    RestWorld(node)^-1 * rest position."""
    out = [0.0, 0.0, 0.0]
    for node, w in v['skin']:
        M = mf.mul(worlds[node], mf.inverse_affine(rest[node]))
        p = m_apply(M, v['pos'])
        for r in range(3):
            out[r] += w * p[r]
    return tuple(out)


def skin_lines(sc, meshes, nodes, frames):
    out = []
    skinned = [m for m in meshes if m.skin is not None]
    if not skinned:
        return out
    ev = mf.Evaluator(sc, '')
    rest = ev.worlds(0.0)
    for m in skinned:
        out.append('expect-skin mesh=%s skin=%s joints=%s'
                   % (m.name, m.skin['name'],
                      ','.join(nodes[j].name for j in m.skin['joints'])))
    for frame in frames:
        t = mf.t_string(frame)
        worlds = ev.worlds(float(t) * mf.FPS)
        for m in skinned:
            for k, tri in enumerate(m.tris):
                for c, vi in enumerate(tri):
                    p = skinned_position(m.vinfo[vi], worlds, rest)
                    out.append('expect-skinned mesh=%s tri=%d corner=%d t=%s '
                               'p=%s' % (m.name, k, c, t, fl(p)))
    return out


def geometry_lines(sc, geo, where=None, fname=None):
    nodes, meshes, mats, texs = geometry_of(sc, geo, where)
    out = ['expect-meshes %d' % len(meshes),
           'expect-materials %d' % len(mats),
           'expect-textures %d' % len(texs)]
    for m in meshes:
        mat = '-' if m.mat_key is None else mats[m.mat_key]['name']
        out.append('expect-mesh name=%s node=%s vertices=%d triangles=%d '
                   'material=%s uv=%d normals=%d colors=%d'
                   % (m.name, nodes[m.node].name, len(m.verts), len(m.tris), mat,
                      m.uv, m.nrm, m.col))
    for m in meshes:
        for k, tri in enumerate(m.tris):
            vals = [m.values[v] for v in tri]
            line = 'expect-triangle mesh=%s index=%d p=%s' % (
                m.name, k, ';'.join(fl(v[0]) for v in vals))
            if m.uv:
                line += ' uv=' + ';'.join(fl(v[1]) for v in vals)
            if m.nrm:
                line += ' n=' + ';'.join(fl(v[2]) for v in vals)
            if m.col:
                line += ' c=' + ';'.join(fl(v[3]) for v in vals)
            out.append(line)
    out += skin_lines(sc, meshes, nodes, SKIN_FRAMES.get(fname, []))
    for key in sorted(mats, key=lambda k: mats[k]['name']):
        d = mats[key]
        out.append('expect-material name=%s color=%s texture=%s alpha=%s '
                   'double_sided=%d unlit=%d'
                   % (d['name'], fl(d['color']), d['tex'] or '-', d['mode'],
                      d['ds'], d['unlit']))
    for ti in sorted(texs):
        t = texs[ti]
        out.append('expect-texture name=%s size=%dx%d format=%s wrap=%s,%s '
                   'nearest=%d' % (t['name'], t['w'], t['h'], t['fmt'],
                                   t['wrap'][0], t['wrap'][1], t['nearest']))
    for ti in sorted(texs):
        t = texs[ti]
        for y, row in enumerate(t['rows']):
            for x, px in enumerate(row):
                out.append('expect-texel texture=%s x=%d y=%d rgba=%d,%d,%d,%d'
                           % ((t['name'], x, y) + tuple(px)))
    return out


def expect_lines(sc, geo, fname, where=None):
    lines = mf.expect_lines(sc, mf.stem_of(fname), POSES.get(fname, []))
    return lines + geometry_lines(sc, geo, where, fname)


# --- the fixtures ------------------------------------------------------------------------

NONE = NOLINK


def corner(v, st=NONE, nv=NONE, col=NONE):
    return (v, st, nv, col)


GEOMETRY_NAMES = ['spinner', 'cube', 'plane', 'morph', 'hidden', 'loose',
                  'cube_shape', 'plane_shape', 'morph_shape', 'bare_shape',
                  'red', 'glass', 'unlit', 'spare', 'Scene_geometry']


def geometry():
    """NIFF 1: a cube-ish shape using all six attribute kinds, parts, a
    double-sided plane, a FULL/KEY-referenced shape, CLEAR and unreached
    objects with shapes."""
    n = {s: i for i, s in enumerate(GEOMETRY_NAMES)}
    groups = [
        mf.key_group([0, 10, 20], [mf.I_LINEAR] * 3,             # 0 spinner
                     [(0, 0, 0), (0, 1, 0), (0, 0, 0)],
                     [(0, 0, 0), (0, 1.5, 0), (0, 3.0, 0)], [(1, 1, 1)] * 3),
        mf.static_group((1, 0, 0)),                              # 1 cube
        mf.static_group((-1.5, 0, 0), (0.3, 0, 0)),              # 2 plane
        mf.static_group((0, 2, 0), (0, 0, 0), (2, 2, 2)),        # 3 morph
        mf.static_group((0, -3, 0)),                             # 4 loose
    ]
    objs = [Obj(n['spinner'], 0, children=(1, 2, 3, 4), type=mf.OBJ_NULL),
            Obj(n['cube'], 1, parent=0, shape=0),
            Obj(n['plane'], 2, parent=0, shape=1),
            Obj(n['morph'], 3, parent=0, shape=2, mat=4),
            Obj(n['hidden'], NOLINK, parent=0, shape=3,
                state=mf.STATE_CLEAR),
            Obj(n['loose'], 4, shape=3)]
    sc = Scene(mf.VERSION_NIFF1, objs, groups, GEOMETRY_NAMES, roots=(0,),
               scene_name=n['Scene_geometry'])
    cube_v = [(-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1),
              (-1, -1, -1), (1, -1, -1), (1, 1, -1), (-1, 1, -1)]
    plane_v = [(-1, 0, -1), (1, 0, -1), (1, 0, 1), (-1, 0, 1)]
    morph0 = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    morph1 = [(0, 0, 1), (1, 0, 1), (0, 1, 1)]
    bare_v = [(0, 0, 0), (0, 1, 0), (0, 0, 1)]
    C = corner
    cube_tris = [
        # T0, T1 front: uv, vertex normals, vertex colours (corner indices
        # differ from the vertex index)
        Tri([C(0, 0, 0, 0), C(1, 1, 0, 1), C(2, 2, 0, 2)]),
        Tri([C(0, 0, 0, 0), C(2, 2, 0, 2), C(3, 3, 0, 3)]),
        # T2 right: uv, the triangle's normal and colour
        Tri([C(1, 1), C(5, 0), C(6, 3)], tri_nv=1, tri_color=1),
        # T3: one corner without st (uv dropped), no normal, vertex colours
        Tri([C(1, 1, NONE, 1), C(6, NONE, NONE, 3), C(2, 2, NONE, 2)]),
        # T4 top: no st, vertex normals, no colour
        Tri([C(3, NONE, 3), C(2, NONE, 3), C(6, NONE, 3)]),
        # T5: uv, normals, a colour at two corners only (dropped)
        Tri([C(3, 4, 3, 0), C(6, 4, 1), C(7, 4, 3, 1)]),
        # T6 back: normals and colours from vertex and triangle mixed
        Tri([C(4, NONE, NONE, 3), C(6, NONE, 2), C(5)], tri_nv=0,
            tri_color=0),
        # T7: uv only
        Tri([C(4, 0), C(7, 1), C(6, 2)]),
        # T8: like T4, shares two of its corners
        Tri([C(7, NONE, 3), C(3, NONE, 3), C(6, NONE, 3)]),
    ]
    tgs = [
        TriGroup([R(0), R(1), R(0), R(0), R(1), R(0)], cube_tris),
        TriGroup([R(1), R(0), R(0), R(0), R(0), R(1)],
                 [Tri([C(0, 0, 0), C(1, 1, 0), C(2, 2, 0)]),
                  Tri([C(0, 0, 0), C(2, 2, 0), C(3, 3, 0)])]),
        # morph: Vtx FULL over frames 0..1 (groups 2, 3), St KEY (keys 0, 5:
        # groups 2, 1): the mesh uses VtxGroup 2 and StGroup 2
        TriGroup([Ref(full=[2, 3]), R(0), R(1), R(0), R(0),
                  Ref(keys=[0, 5], idx=[2, 1])],
                 [Tri([C(0, 0, NONE, 0), C(1, 1, NONE, 1), C(2, 2, NONE, 2)])],
                 frame_num=1),
        TriGroup([R(4), R(0), R(0), R(0), R(0), R(0)], [Tri([C(0), C(1), C(2)])]),
    ]
    geo = Geo(
        vtx=[VtxGroup(cube_v), VtxGroup(plane_v), VtxGroup(morph0),
             VtxGroup(morph1), VtxGroup(bare_v)],
        tri_colors=[AttrGroup([(0.5, 0.5, 0.5, 1)]),
                    AttrGroup([(0.1, 0.1, 0.1, 1), (0.25, 0.75, 1, 1)])],
        vtx_colors=[AttrGroup([(1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1),
                               (1, 1, 0, 1)]),
                    AttrGroup([(1, 1, 1, 0.25), (1, 0.5, 0, 0.25),
                               (0, 0.5, 1, 0.25)])],
        tri_nvs=[AttrGroup([(0, 0, -5), (3, 0, 0)])],
        vtx_nvs=[AttrGroup([(0, 3, 0)]),
                 AttrGroup([(0, 0, 2), (1, 1, 1), (0, 0, -1), (0, 0.5, 0)])],
        sts=[AttrGroup([(0, 0), (1, 0), (1, 1), (0, 1), (0.5, 0.25)]),
             AttrGroup([(0, 0), (2, 0), (2, 2), (0, 2)]),
             AttrGroup([(0.1, 0.2), (0.9, 0.2), (0.1, 0.8)])],
        tri_groups=tgs,
        shapes=[Shape(n['cube_shape'], 0x15, 0, mat_link=0, parts=[1, 2, 0, 3]),
                Shape(n['plane_shape'], 0x05, 1, mat_link=0),
                Shape(n['morph_shape'], 0x15, 2),
                Shape(n['bare_shape'], 0x15, 3)],
        parts=[Part(1, 0, [2, 3]), Part(USE_SHAPE_MAT, 0, [4, 6]),
               Part(2, 0, [3, 6, 7]), Part(NOLINK, 0, [5])],
        mats=[Mat(n['red'], (1, 0, 0, 1), shade=0x12),
              Mat(n['glass'], (0.2, 0.6, 1, 0.5), shade=0x11),
              Mat(n['unlit'], (1, 1, 0.5, 1), shade=0x110),
              Mat(n['spare'], (0, 0, 0, 1)),
              Mat(NOLINK, (0.8, 0.8, 0.8, 1), shade=0x02)])
    return sc, geo


def mat_sources_file():
    """geometry() with the Mats' colour and alpha types naming their sources
    (RULES "Geometry", material sources)."""
    sc, geo = geometry()
    PRIM, VTX, TRI = 0x4, 0x1, 0x2
    m = geo.mats
    m[0].color_types = (PRIM, NOLINK, PRIM << 16, NOLINK)          # red
    m[1].color_types = (VTX | TRI, NOLINK, NOLINK, NOLINK)         # glass
    m[2].mat_type = 0x01010101                                     # unlit
    m[2].color_types = (PRIM, NOLINK, PRIM << 16, NOLINK)
    m[4].color_types = (VTX, PRIM, PRIM << 16, NOLINK)             # mat4
    return sc, geo


# Texture images, rows from the BOTTOM (as stored). Every colour channel is
# picked so that truncation and rounding reduce it alike (agree()).
TEX_SPECS = [
    # name, format, w, h, wrap_s, wrap_t, rows from the bottom
    ('t_rgba16', 'RGBA16', 4, 2, 0, 0x000,
     [[(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 0), (99, 130, 66, 200)],
      [(16, 33, 49, 255), (202, 96, 8, 0), (255, 255, 255, 255), (0, 0, 0, 100)]]),
    ('t_rgba32', 'RGBA32', 2, 2, 1, 0x100,
     [[(1, 2, 3, 255), (250, 128, 64, 128)],
      [(77, 88, 99, 0), (12, 200, 180, 255)]]),
    ('t_ia4', 'IA4', 4, 2, 2, 0x200,
     [[(255, 255, 255, 255), (0, 0, 0, 255), (200, 54, 40, 0), (40, 200, 40, 130)],
      [(128, 128, 128, 255), (96, 96, 96, 20), (10, 20, 230, 255), (66, 66, 66, 255)]]),
    (None, 'IA8', 5, 3, 0, 0x100,
     [[(255, 255, 255, 255), (0, 0, 0, 0), (136, 135, 136, 135), (17, 17, 17, 34),
       (250, 8, 5, 199)],
      [(5, 250, 5, 100), (5, 5, 250, 70), (120, 119, 120, 247), (60, 67, 60, 64),
       (180, 90, 45, 150)],
      [(34, 34, 34, 255), (68, 68, 68, 17), (100, 116, 120, 215), (222, 210, 222, 0),
       (30, 60, 90, 255)]]),
    ('t_ia16', 'IA16', 2, 2, 1, 0x200,
     [[(255, 0, 0, 255), (0, 255, 0, 255)],
      [(0, 0, 255, 255), (123, 45, 67, 255)]]),
    ('t_i4', 'I4', 4, 2, 2, 0x000,
     [[(255, 255, 255, 255), (0, 0, 0, 255), (100, 157, 200, 255), (17, 36, 51, 0)],
      [(136, 135, 136, 255), (200, 106, 50, 255), (68, 68, 68, 68), (240, 252, 240, 255)]]),
    ('t_i8', 'I8', 3, 2, 0, 0x000,
     [[(10, 20, 30, 255), (255, 255, 255, 255), (90, 180, 45, 0)],
      [(0, 0, 0, 255), (201, 101, 51, 255), (77, 77, 77, 255)]]),
    ('t_ci8', 'CI8', 2, 2, 0, 0x000,
     [[(255, 128, 0, 255), (0, 128, 255, 255)],
      [(12, 34, 56, 255), (210, 220, 230, 255)]]),
]

TEXTURE_NAMES = [s[0] for s in TEX_SPECS if s[0]] + \
    ['m_' + s[1].lower() for s in TEX_SPECS] + \
    ['board', 'quads', 'spare_tex', 'Scene_textures']


def quad(i):
    x = 2.0 * i
    return [(x, 0, 0), (x + 1.5, 0, 0), (x + 1.5, 1.5, 0), (x, 1.5, 0)]


def textures(short_img=None):
    """NIFF 1: one Tex per N64 format on its own quad. short_img: make that
    TexImg one row short (bad_teximg_size)."""
    names = TEXTURE_NAMES
    n = {s: i for i, s in enumerate(names)}
    texs, imgs, mats = [], [], []
    for i, (tn, fmt, w, h, ws, wt, rows) in enumerate(TEX_SPECS):
        assert len(rows) == h and all(len(r) == w for r in rows)
        if short_img == i:
            rows = rows[:-1]
        texs.append(Tex(n[tn] if tn else NOLINK, fmt, w, h, i, ws, wt))
        imgs.append(TexImg(rows))
        mats.append(Mat(n['m_' + fmt.lower()], (1, 1, 1, 1), shade=0x12,
                        tex=[i]))
    # an unused Tex (no Mat links it): not in the scene
    texs.append(Tex(n['spare_tex'], 'RGBA32', 1, 1, len(imgs)))
    imgs.append(TexImg([[(1, 2, 3, 4)]]))
    nq = len(TEX_SPECS)
    pts = [p for i in range(nq) for p in quad(i)]
    tris = []
    for i in range(nq):
        b = 4 * i
        tris.append(Tri([corner(b, 0), corner(b + 1, 1), corner(b + 2, 2)]))
        tris.append(Tri([corner(b, 0), corner(b + 2, 2), corner(b + 3, 3)]))
    geo = Geo(vtx=[VtxGroup(pts)], tri_colors=[AttrGroup([])],
              vtx_colors=[AttrGroup([])], tri_nvs=[AttrGroup([])],
              vtx_nvs=[AttrGroup([])],
              sts=[AttrGroup([(0, 0), (1, 0), (1, 1), (0, 1)])],
              tri_groups=[TriGroup([R(0)] * 6, tris)],
              shapes=[Shape(n['quads'], 0x15, 0, parts=list(range(nq)))],
              parts=[Part(i, 0, [2 * i, 2 * i + 1]) for i in range(nq)],
              mats=mats, texs=texs, tex_imgs=imgs)
    objs = [Obj(n['board'], 0, shape=0)]
    groups = [mf.static_group((0, 0, -3))]
    sc = Scene(mf.VERSION_NIFF1, objs, groups, names, roots=(0,),
               scene_name=n['Scene_textures'])
    return sc, geo


def rgba16(r5, g5, b5, a1):
    return (r5 << 11) | (g5 << 6) | (b5 << 1) | a1


def pack_ci(indices, depth):
    """Indices (from the bottom-left) into big-endian words, 8 or 4 per u32,
    the last word zero-padded."""
    per = 32 // depth
    words = []
    for j in range(0, len(indices), per):
        chunk = list(indices[j:j + per]) + [0] * (per - len(indices[j:j + per]))
        w = 0
        for v in chunk:
            assert 0 <= v < (1 << depth)
            w = (w << depth) | v
        words.append(w)
    return words


PAL0 = [rgba16(31, 0, 0, 1), rgba16(0, 31, 0, 1), rgba16(0, 0, 31, 1),
        rgba16(31, 31, 31, 1), rgba16(0, 0, 0, 0), rgba16(16, 8, 4, 1),
        rgba16(1, 2, 3, 1), rgba16(30, 20, 10, 0), rgba16(5, 10, 15, 1),
        rgba16(20, 25, 30, 1), rgba16(7, 7, 7, 1), rgba16(24, 0, 24, 1),
        rgba16(0, 24, 24, 1), rgba16(24, 24, 0, 1), rgba16(11, 22, 3, 1),
        rgba16(2, 4, 8, 1)]
PAL1 = [(i * 17 << 8) | (255 - 16 * i) for i in range(16)]          # IA16
PAL2 = [rgba16(k & 31, (k * 7) & 31, (k >> 3) & 31, (k >> 2) & 1)
        for k in range(256)]                                         # 256
CI0 = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15]           # CI4 5x3
CI1 = [0, 3, 7, 15, 9, 12]                                          # CI8 3x2
CI2 = [0, 1, 2, 3, 12, 13, 14, 15]                                  # CI4 4x2
CI3 = [200, 255, 37, 0]                                             # CI8 4x1

CI_NAMES = ['panel', 'panel_quads', 't_ci4', 't_ci8_ia', 't_ci4_bank2',
            't_ci8_256', 't_rgba32_v2', 'm_ci4', 'm_ci8_ia', 'm_ci4_bank2',
            'm_ci8_256', 'm_rgba32_v2', 'Scene_ci_palette']


def ci_palette():
    """NIFF 2: colour-indexed textures from CiImg + ColorPalette."""
    names = CI_NAMES
    n = {s: i for i, s in enumerate(names)}
    ci_imgs = [CiImg(5, 3, 4, pack_ci(CI0, 4)), CiImg(3, 2, 8, pack_ci(CI1, 8)),
               CiImg(4, 2, 4, pack_ci(CI2, 4)), CiImg(4, 1, 8, pack_ci(CI3, 8))]
    palettes = [Palette(0, PAL0), Palette(1, PAL1), Palette(0, PAL2)]
    texs = [Tex(n['t_ci4'], 'CI4', 5, 3, 0, 0, 0x100,
                ext=tex2_ext(0, palette=0, tlut=0)),
            Tex(n['t_ci8_ia'], 'CI8', 3, 2, 1, 1, 0x000,
                ext=tex2_ext(1, palette=1, tlut=0)),
            Tex(n['t_ci4_bank2'], 'CI4', 4, 2, 2, 2, 0x200,
                ext=tex2_ext(0, palette=2, tlut=2)),
            Tex(n['t_ci8_256'], 'CI8', 4, 1, 3, 0, 0x000,
                ext=tex2_ext(2, palette=2, tlut=0)),
            Tex(n['t_rgba32_v2'], 'RGBA32', 2, 1, 0, 1, 0x100,
                ext=tex2_ext(1))]
    imgs = [TexImg([[(10, 20, 30, 255), (40, 50, 60, 128)]], ext=(0,))]
    mat_names = ['m_ci4', 'm_ci8_ia', 'm_ci4_bank2', 'm_ci8_256', 'm_rgba32_v2']
    mats = [Mat(n[m], (1, 1, 1, 1), tex=[i]) for i, m in enumerate(mat_names)]
    # the last Mat's colour in its NIFF 2 extension's diffuse (docs pitfall 13)
    mats[-1].ext = f32t((1, 1, 1, 1, 0, 0, 0, 0, 0.5, 0.25, 1, 1))
    nq = len(texs)
    pts = [p for i in range(nq) for p in quad(i)]
    tris = []
    for i in range(nq):
        b = 4 * i
        tris.append(Tri([corner(b, 0), corner(b + 1, 1), corner(b + 2, 2)]))
        tris.append(Tri([corner(b, 0), corner(b + 2, 2), corner(b + 3, 3)]))
    geo = Geo(vtx=[VtxGroup(pts)], tri_colors=[AttrGroup([])],
              vtx_colors=[AttrGroup([])], tri_nvs=[AttrGroup([])],
              vtx_nvs=[AttrGroup([])],
              sts=[AttrGroup([(0, 0), (1, 0), (1, 1), (0, 1)])],
              tri_groups=[TriGroup([R(0)] * 6, tris)],
              shapes=[Shape(n['panel_quads'], 0x15, 0, parts=list(range(nq)),
                            ext=(KIND_TRI_GROUP, NOLINK, NOLINK))],
              parts=[Part(i, 0, [2 * i, 2 * i + 1]) for i in range(nq)],
              mats=mats, texs=texs, tex_imgs=imgs, ci_imgs=ci_imgs,
              palettes=palettes)
    objs = [Obj(n['panel'], 0, shape=0, ext=mf.obj2_ext())]
    groups = [mf.static_group((0, 1, -4))]
    sc = Scene(mf.VERSION_NIFF2, objs, groups, names, roots=(0,),
               scene_name=n['Scene_ci_palette'], scene_ext=(0, 0, 0, 0, 0))
    return sc, geo


# --- NIFF 2 deformable geometry ------------------------------------------------------------

ENVELOPE_NAMES = ['body', 'arm', 'skin_obj', 'tip', 'shoulder', 'elbow',
                  'body_skin', 'skin_mat', 'Scene_envelope']
# WeightedPart 0 (nodes body, arm, elbow): rest points (root space), their
# weights (percent, per node; index = vertex) and, for vertex 3 only, a
# different offset per node (the nodes' copies disagree at rest)
W0_REST = [(0.9, 1.0, 0.1), (1.4, 0.8, -0.2), (1.8, 0.3, 0.3), (1.2, 1.4, 0.0),
           (0.6, 0.5, 0.5), (1.0, -0.3, 0.2), (0.4, 0.9, -0.4), (1.6, 1.1, 0.3)]
W0_WEIGHTS = [[20, 50, 10, 40, 5, 60, 0, 90],          # body
              [30, 25, 0, 40, 15, -20, 0, 5],          # arm
              [10, 25, 70, 20, 30, 40, 0, 5]]          # elbow
W0_DISAGREE = {3: [(0.2, 0, 0), (0, -0.3, 0), (0, 0, 0.4)]}
# WeightedPart 1 (nodes body, arm, shoulder, elbow, tip): 5 weights each
W1_REST = [(0.2, 1.6, 0.2), (0.7, 1.8, -0.1), (0.4, 2.1, 0.4)]
W1_WEIGHTS = [[10, 35, 22], [20, 5, 18], [30, 20, 12], [25, 25, 8],
              [15, 15, 40]]
UNITS = [(0, 0, 1), (0, 1, 0), (1, 0, 0), (0.6, 0.8, 0), (0, 0.6, 0.8),
         (0.8, 0, 0.6)]
ENV_FRAMES = [0, 6, 12, 24]


def envelope_scene():
    n = {s: i for i, s in enumerate(ENVELOPE_NAMES)}
    L = mf.I_LINEAR
    groups = [
        mf.key_group([0, 12, 24], [L] * 3,                       # 0 body
                     [(0, 0, 0), (0, 0.4, 0), (0.2, 0, 0)],
                     [(0, 0.3, 0), (0, 1.0, 0), (0, 0.6, 0)], [(1, 1, 1)] * 3,
                     loop=1),
        mf.key_group([0, 12, 24], [L] * 3,                       # 1 arm
                     [(1, 0, 0), (1.3, 0.2, 0), (1, 0, 0.2)],
                     [(0, 0, 0.4), (0, 0, 0.9), (0, 0, 0.2)], [(1, 1, 1)] * 3,
                     loop=1),
        mf.static_group((0, 0, -7), (0.3, 0, 0), (2, 2, 2)),     # 2 skin_obj
        mf.static_group((0, 1.2, 0), (0, 0, 0.25)),              # 3 tip
        mf.static_group((0.5, 0, 0), (0, 0, 0.2)),               # 4 shoulder
        mf.key_group([0, 12, 24], [L] * 3, [(0.6, 0, 0)] * 3,    # 5 elbow
                     [(0.1, 0, 0), (0.8, 0, 0), (0.3, 0, 0.2)],
                     [(1, 1, 1)] * 3, loop=1),
    ]
    objs = [Obj(n['body'], 0, children=(1, 3), ext=mf.obj2_ext()),
            Obj(n['arm'], 1, parent=0, ext=mf.obj2_ext([0])),
            Obj(n['skin_obj'], 2, shape=0, ext=mf.obj2_ext()),
            Obj(n['tip'], 3, parent=0, ext=mf.obj2_ext())]
    return Scene(mf.VERSION_NIFF2, objs, groups, ENVELOPE_NAMES, roots=(0, 2),
                 scene_name=n['Scene_envelope'], scene_ext=(0, 0, 0, 0, 0),
                 chain_roots=[mf.ChainRoot(n['shoulder'], 4, 0)],
                 joints=[mf.Joint(n['elbow'], 5, NOLINK, NOLINK, length=0.6)])


def local_copies(sc, nodes_spec, points, offsets=None):
    """Per node: the VtxGroup that puts each point at its rest position
    (point + that node's offset) = inverse rest world x point."""
    ev = mf.Evaluator(sc, '')
    rest = ev.worlds(0.0)
    out = []
    for k, (kind, idx) in enumerate(nodes_spec):
        inv = mf.inverse_affine(rest[node_of(sc, ev.nodes, kind, idx, None)])
        pts = []
        for v, P in enumerate(points):
            off = (offsets or {}).get(v, [(0, 0, 0)] * len(nodes_spec))[k]
            pts.append(m_apply(inv, mf.v_add(P, off)))
        out.append(VtxGroup(pts))
    return out


def envelope():
    """NIFF 2: an Envelope on an animated hierarchy with an IK chain: a
    FullWeightedPart, two WeightedParts (3 and 5 nodes), a MorphPart,
    stitched EnvelopeTris, a Part material."""
    sc = envelope_scene()
    n = {s: i for i, s in enumerate(ENVELOPE_NAMES)}
    body, arm, tip = (NODE_OBJ, 0), (NODE_OBJ, 1), (NODE_OBJ, 3)
    skin_obj = (NODE_OBJ, 2)
    shoulder, elbow = (NODE_CHAIN_ROOT, 0), (NODE_JOINT, 0)
    w0_nodes = [body, arm, elbow]
    w1_nodes = [body, arm, shoulder, elbow, tip]
    vtx = [VtxGroup([(0.3, 0.2, 0.1), (0.8, -0.1, 0.0), (0.5, 0.6, -0.2),
                     (0.1, -0.4, 0.3)])]                         # 0 full
    vtx += local_copies(sc, w0_nodes, W0_REST, W0_DISAGREE)     # 1-3
    vtx += local_copies(sc, w1_nodes, W1_REST)                   # 4-8
    vtx += [VtxGroup([(0.2, 0.3, 0.0), (0.4, -0.2, 0.1), (-0.1, 0.5, 0.2)]),
            VtxGroup([(5, 5, 5), (6, 6, 6), (7, 7, 7)])]         # 9, 10 morph
    vtx_nvs = [AttrGroup([(0, 0, 2), (0, 3, 0), (1, 1, 0), (0, 0, -0.5)])]
    vtx_nvs += [AttrGroup([UNITS[(k + v) % 6] for v in range(3)])
                for k in range(5)]                               # 1-5
    weights = [WeightGroup(w) for w in W0_WEIGHTS + W1_WEIGHTS]  # 0-2, 3-7
    F, Wt, Mo = TAG_FULL_PART, TAG_WEIGHTED_PART, TAG_MORPH_PART

    def C(kind, part, v, st, nv=NONE, col=NONE, wi=None):
        return (kind, part, v, st, nv, col, v if wi is None else wi)
    tris = [
        EnvTri((F, 0), [C(F, 0, 0, 0, 0, 0), C(F, 0, 1, 1, 1, 1),
                        C(F, 0, 2, 2, 2, 2)]),
        EnvTri((Wt, 0), [C(F, 0, 2, 2, 2, 2), C(Wt, 0, 0, 0), C(Wt, 0, 1, 1)]),
        EnvTri((Wt, 0), [C(Wt, 0, 1, 1), C(Wt, 0, 2, 2), C(Wt, 0, 3, 3)]),
        EnvTri((Mo, 0), [C(Wt, 0, 3, 3), C(Mo, 0, 0, 0), C(Mo, 0, 1, 1)]),
        EnvTri((Mo, 0), [C(Mo, 0, 1, 1), C(Mo, 0, 2, 2), C(F, 0, 3, 3, 3, 3)]),
        EnvTri((Wt, 0), [C(Wt, 0, 4, 0, wi=NONE), C(Wt, 0, 5, 1),
                         C(Wt, 0, 6, 2)]),
        EnvTri((Wt, 0), [C(Wt, 0, 7, 3, wi=0), C(Wt, 0, 0, 0),
                         C(F, 0, 0, 0, 0, 0)]),
        EnvTri((Wt, 1), [C(Wt, 1, 0, 0, 0), C(Wt, 1, 1, 1, 1),
                         C(Wt, 1, 2, 2, 2)]),
        EnvTri((F, 0), [C(F, 0, 1, 1, 1, 1), C(F, 0, 3, 3, 3, 3),
                        C(F, 0, 0, 0, 0, 0)]),
    ]
    env = Envelope(NONE, [
        full_part(arm, 0, st=0, vtx_nv=0, vtx_color=0)], [
        weighted_part(w0_nodes, [0, 1, 2], [1, 2, 3], st=1),
        weighted_part(w1_nodes, [3, 4, 5, 6, 7], [4, 5, 6, 7, 8], st=0,
                      vtx_nv=[1, 2, 3, 4, 5])], [
        morph_part(shoulder, skin_obj, [9] + [10] * 8, st=1)], tris)
    geo = Geo(
        vtx=vtx, tri_colors=[],
        vtx_colors=[AttrGroup([(1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1),
                               (1, 1, 0, 1)])],
        tri_nvs=[], vtx_nvs=vtx_nvs,
        sts=[AttrGroup([(0, 0), (1, 0), (1, 1), (0, 1)]),
             AttrGroup([(0.25, 0.5), (0.75, 0.5), (0.5, 1), (0, 0.25)])],
        shapes=[Shape(n['body_skin'], 0x15, 0, parts=[0],
                      ext=(KIND_ENVELOPE, NOLINK, NOLINK))],
        parts=[Part(0, 0, [1, 3])],
        mats=[Mat(n['skin_mat'], (0.8, 0.6, 0.4, 1), shade=0x12)],
        envelopes=[env], weights=weights)
    return sc, geo


CLUSTER_NAMES = ['hip', 'thigh', 'foot', 'bird_shape', 'feather',
                 'Scene_cluster']
CLUSTER_FRAMES = [0, 5, 10, 20]


def cluster():
    """NIFF 2: a ClusterShape with one Cluster on each Obj of a 3-level
    animated hierarchy (like the SDK's ClusterBird), ClusterTris stitching
    the clusters."""
    n = {s: i for i, s in enumerate(CLUSTER_NAMES)}
    L = mf.I_LINEAR
    groups = [
        mf.key_group([0, 10, 20], [L] * 3,                       # 0 hip
                     [(0, 0, 0), (0.5, 0.3, 0), (0, 0.6, 0)],
                     [(0, 0.2, 0), (0.3, 0.9, 0), (0, 0.4, 0.1)],
                     [(1, 1, 1)] * 3, loop=1),
        mf.key_group([0, 10, 20], [L] * 3, [(0, -1, 0)] * 3,     # 1 thigh
                     [(0.3, 0, 0), (-0.4, 0, 0), (0.2, 0, 0.3)],
                     [(1, 1, 1)] * 3, loop=1),
        mf.key_group([0, 10, 20], [L] * 3, [(0, -0.8, 0.2)] * 3,  # 2 foot
                     [(0, 0, 0.1), (0, 0, 0.7), (0.2, 0, 0)],
                     [(1, 1, 1)] * 3, loop=1),
    ]
    objs = [Obj(n['hip'], 0, children=(1,), shape=0, ext=mf.obj2_ext()),
            Obj(n['thigh'], 1, children=(2,), parent=0, ext=mf.obj2_ext()),
            Obj(n['foot'], 2, parent=1, ext=mf.obj2_ext())]
    sc = Scene(mf.VERSION_NIFF2, objs, groups, CLUSTER_NAMES, roots=(0,),
               scene_name=n['Scene_cluster'], scene_ext=(0, 0, 0, 0, 0))
    CL = TAG_CLUSTER

    def C(cl, v, st, nv, col=NONE):
        return (CL, cl, v, st, nv, col)
    tris = [
        EnvTri((CL, 0), [C(0, 0, 0, 0, 0), C(0, 1, 1, 1, 1), C(0, 2, 2, 2, 2)]),
        EnvTri((CL, 0), [C(0, 2, 2, 2, 2), C(0, 3, 3, 3, 3), C(1, 0, 0, 0)]),
        EnvTri((CL, 1), [C(1, 0, 0, 0), C(1, 1, 1, 1), C(1, 2, 2, 2)]),
        EnvTri((CL, 1), [C(1, 2, 2, 2), C(1, 3, 3, 3), C(2, 0, 0, 0)]),
        EnvTri((CL, 2), [C(2, 0, 0, 0), C(2, 1, 1, 1), C(2, 2, 2, 2)]),
        EnvTri((CL, 2), [C(2, 2, 2, 2), C(0, 0, 0, 0, 0), C(1, 3, 3, 3)]),
    ]
    cs = ClusterShape(NONE, [
        full_part((NODE_OBJ, 0), 0, st=0, vtx_nv=0, vtx_color=0, tag=CL),
        full_part((NODE_OBJ, 1), 1, st=0, vtx_nv=1, tag=CL),
        full_part((NODE_OBJ, 2), 2, st=1, vtx_nv=2, tag=CL)], tris)
    geo = Geo(
        vtx=[VtxGroup([(0.3, 0.2, 0.1), (-0.3, 0.2, 0.1), (0, 0.5, -0.2),
                       (0, -0.2, 0.3)]),
             VtxGroup([(0.2, -0.3, 0), (-0.2, -0.3, 0), (0, -0.7, 0.1),
                       (0.1, 0.1, 0.1)]),
             VtxGroup([(0, -0.2, 0.3), (0.2, -0.3, 0), (-0.2, -0.3, 0)])],
        tri_colors=[],
        vtx_colors=[AttrGroup([(1, 0.5, 0, 1), (0, 0.5, 1, 1), (0.5, 1, 0, 1),
                               (1, 1, 1, 1)])],
        tri_nvs=[],
        vtx_nvs=[AttrGroup([(0, 1, 0), (0, 0, 2), (1, 1, 1), (0, -1, 0)]),
                 AttrGroup([(1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 1, 1)]),
                 AttrGroup([(0, -1, 0), (0, 0, 1), (0.5, 0, 0.5)])],
        sts=[AttrGroup([(0, 0), (1, 0), (1, 1), (0, 1)]),
             AttrGroup([(0.1, 0.2), (0.9, 0.2), (0.5, 0.9)])],
        shapes=[Shape(n['bird_shape'], 0x15, 0, parts=[0],
                      ext=(KIND_CLUSTER, NOLINK, NOLINK))],
        parts=[Part(0, 0, [2])],
        mats=[Mat(n['feather'], (0.3, 0.7, 0.2, 1), shade=0x12)],
        clusters=[cs])
    return sc, geo


def cluster_tri():
    """cluster() with per-triangle normals and colours: the foot's Cluster
    has a TriNvGroup instead of vertex normals, the thigh's and the foot's a
    TriColorGroup, and the ClusterTris on them name a triangle normal and
    colour, which the corners without their own take."""
    sc, geo = cluster()
    cs = geo.clusters[0]
    CL = TAG_CLUSTER
    cs.clusters[1] = full_part((NODE_OBJ, 1), 1, st=0, vtx_nv=1, tri_color=0,
                               tag=CL)
    cs.clusters[2] = full_part((NODE_OBJ, 2), 2, st=1, tri_nv=0, tri_color=1,
                               tag=CL)
    for k, (nv, col) in enumerate([(NOLINK, NOLINK), (NOLINK, NOLINK),
                                   (NOLINK, 0), (NOLINK, 1), (1, 0), (0, 1)]):
        cs.tris[k].tri_nv, cs.tris[k].tri_color = nv, col
    geo.tri_colors = [AttrGroup([(0.9, 0.1, 0.2, 1), (0.2, 0.3, 0.8, 0.5)]),
                      AttrGroup([(0.1, 0.6, 0.3, 1), (0.7, 0.7, 0.1, 1)])]
    geo.tri_nvs = [AttrGroup([(0, 0, 1), (0, 3, 4)])]
    return sc, geo


# --- requests, broken files ------------------------------------------------------------

POSES = {
    'geometry.niff': [(f, n) for n in ('spinner', 'cube', 'plane', 'morph',
                                       'loose', 'hidden')
                      for f in (0, 5, 12.5)],
    'textures.niff': [(0, 'board')],
    'ci_palette.niff': [(0, 'panel')],
    'envelope.niff': [(f, nd) for nd in ('body', 'arm', 'shoulder', 'elbow',
                                         'tip', 'skin_obj')
                      for f in ENV_FRAMES],
    'cluster.niff': [(f, nd) for nd in ('hip', 'thigh', 'foot')
                     for f in CLUSTER_FRAMES],
}
# the frames of the expect-skinned lines
SKIN_FRAMES = {'envelope.niff': ENV_FRAMES, 'cluster.niff': CLUSTER_FRAMES,
               'cluster_tri.niff': CLUSTER_FRAMES}

GOOD = [('geometry.niff', geometry), ('textures.niff', textures),
        ('ci_palette.niff', ci_palette), ('envelope.niff', envelope),
        ('cluster.niff', cluster), ('cluster_tri.niff', cluster_tri),
        ('mat_sources.niff', mat_sources_file)]

# (file, base, what, mark, relative offset, new value): one u32 changed
BROKEN = [
    ('bad_tri_vertex.niff', geometry, 'vtx_index of corner 2 of Tri 1 of '
     'TriGroup 0 (cube_shape; VtxGroup 0 has 8 vertices)',
     ('tri_group', 0, 'tri', 1, 'vtx', 2), 0, 8),
    ('bad_shape_link.niff', geometry, 'shape_tri_link of Shape 0 (cube_shape; '
     'the TriList has 4 TriGroups)', ('shape', 0, 'tri_link'), 0, 4),
    ('bad_vtx_count.niff', geometry, 'vtx_num of VtxGroup 0 (8 vertices, '
     '24 + 96 = 120 bytes)', ('vtx', 0, 'num'), 0, 9),
    ('bad_ci_index.niff', ci_palette, 'packed word 0 of CiImg 1 (CI8 3x2, '
     'palette: 16 IA16 colours): the first index becomes 0x10 = 16',
     ('ci_img', 1, 'word', 0), 0, None),
    ('bad_envelope_node.niff', envelope, 'affected_node_index[1] of '
     'WeightedPart 0 (the Obj "arm", index 1; the ObjList has 4 objects)',
     ('env', 0, 'weighted', 0, 'node', 1), 0, 7),
    ('bad_envelope_part.niff', envelope, 'part_index of corner 1 of '
     'EnvelopeTri 2 (a WeightedPart corner; the Envelope has 2 '
     'WeightedParts)', ('env', 0, 'tri', 2, 'corner', 1), 4, 2),
    ('bad_cluster_vertex.niff', cluster, 'vtx_index of corner 2 of ClusterTri '
     '3 (Cluster 2, whose VtxGroup 2 has 3 vertices)',
     ('cluster', 0, 'tri', 3, 'corner', 2), 8, 3),
]
# made from a changed description (not a one-u32 patch)
SHORT_IMG = 3                        # TexImg 3 (the IA8 5x3 image) loses a row


def build():
    F = {}
    for fname, fn in GOOD:
        sc, geo = fn()
        data, marks = pack_geo_file(sc, geo)
        F[fname] = dict(data=data, kind='ok', sc=sc, geo=geo, marks=marks,
                        base=fn.__name__)
    for fname, fn, what, mark, rel, value in BROKEN:
        data, marks = pack_geo_file(*fn())
        off = marks[mark] + rel
        old = struct.unpack_from('>I', data, off)[0]
        if value is None:                 # bad_ci_index: the first byte -> 0x10
            value = (old & 0x00FFFFFF) | 0x10000000
        F[fname] = dict(data=mf.patch_u32(data, off, value), kind='bad',
                        offset=off, base=fn.__name__, what=what, old=old,
                        new=value)
    sc, geo = textures(short_img=SHORT_IMG)
    data, marks = pack_geo_file(sc, geo)
    F['bad_teximg_size.niff'] = dict(
        data=data, kind='bad', offset=marks[('tex_img', SHORT_IMG, 'size')],
        base='textures', what=None)
    return F


def expectations_from_bytes(fname, data):
    """expect.py: the expect lines of a file on disk."""
    try:
        sc, geo, p = parse_geo_bytes(data)
        return expect_lines(sc, geo, fname, p.where)
    except Fail as e:
        return ['expect-error-offset %d' % e.offset]


FILES = {'geometry.niff': 'ok', 'textures.niff': 'ok', 'ci_palette.niff': 'ok',
         'bad_tri_vertex.niff': 'bad', 'bad_teximg_size.niff': 'bad',
         'bad_ci_index.niff': 'bad', 'bad_shape_link.niff': 'bad',
         'bad_vtx_count.niff': 'bad', 'envelope.niff': 'ok',
         'cluster.niff': 'ok', 'cluster_tri.niff': 'ok', 'mat_sources.niff': 'ok',
         'bad_envelope_node.niff': 'bad',
         'bad_envelope_part.niff': 'bad', 'bad_cluster_vertex.niff': 'bad'}


# --- hand work quoted in the .txt files ---------------------------------------------------
# HAND: (file, line prefix, expected rest) checked against the expect lines.

HAND = []


def bits_str(v, n):
    return format(v, '0%db' % n)


def replicate_str(v, n):
    """Bit replication written out: the n-bit pattern repeated to 8 bits."""
    pat = bits_str(v, n)
    full = (pat * 8)[:8]
    return '%s -> %s = %d' % (pat, full, int(full, 2))


def hand_texel(fmt, px):
    """Texel derivation written out step by step (strings, not texel())."""
    r, g, b, a = px
    if fmt in ('RGBA32', 'CI8', 'CI4'):
        return ['%s: kept as stored' % fmt], px
    if fmt == 'RGBA16':
        out, L = [], []
        for name, v in (('R', r), ('G', g), ('B', b)):
            q = v >> 3
            full = int((bits_str(q, 5) * 2)[:8], 2)
            out.append(full)
            L.append('%s %d >> 3 = %d, %s' % (name, v, q, replicate_str(q, 5)))
        al = 255 if a >= 128 else 0
        L.append('A %d -> 1 bit %d -> %d' % (a, a >> 7, al))
        return L, tuple(out + [al])
    exact = 0.299 * r + 0.587 * g + 0.114 * b
    i = int(exact + 0.5)
    L = ['I = 0.299*%d + 0.587*%d + 0.114*%d = %.3f -> %d' % (r, g, b, exact, i)]
    if fmt in ('IA16', 'I8'):
        al = a if fmt == 'IA16' else i
        L.append('%s: I kept, A %s' % (fmt, '%d' % al if fmt == 'IA16'
                                       else '= I'))
        return L, (i, i, i, al)
    ibits = {'IA8': 4, 'IA4': 3, 'I4': 4}[fmt]
    q = i >> (8 - ibits)
    iv = int((bits_str(q, ibits) * 8)[:8], 2)
    L.append('I >> %d = %d, %s' % (8 - ibits, q, replicate_str(q, ibits)))
    if fmt == 'I4':
        L.append('A = I')
        return L, (iv, iv, iv, iv)
    if fmt == 'IA8':
        qa = a >> 4
        av = int((bits_str(qa, 4) * 2), 2)
        L.append('A %d >> 4 = %d, %s' % (a, qa, replicate_str(qa, 4)))
        return L, (iv, iv, iv, av)
    al = 255 if a >= 128 else 0
    L.append('A %d -> 1 bit -> %d' % (a, al))
    return L, (iv, iv, iv, al)


def hand_geometry(sc, geo):
    L = ['Hand evaluation (RULES "Geometry"):',
         '  Group indices count within their kind: cube_shape\'s TriGroup 0 '
         'references TriColorGroup 1',
         '  (the 2nd tri colour group), VtxColorGroup 0 (the 1st vertex colour '
         'group, which follows',
         '  both tri colour groups in the ColorList), TriNvGroup 0, VtxNvGroup 1, '
         'StGroup 0, VtxGroup 0.',
         '  Materials of cube_shape\'s triangles (shape_part_link [1, 2, 0, 3], '
         'shape_mat_link 0 "red"):',
         '    T0, T1, T8: no Part lists them -> red',
         '    T2: Part 0 (glass) -> glass',
         '    T3: Part 2 (unlit) comes before Part 0 (glass) in shape_part_link '
         '-> unlit',
         '    T4: only Part 1, USE_SHAPE_MAT -> skipped -> red',
         '    T5: only Part 3, mat_index 0xFFFFFFFF -> skipped -> red',
         '    T6: Part 1 (USE_SHAPE_MAT, skipped), then Part 2 -> unlit',
         '    T7: Part 2 -> unlit',
         '  Corner attributes and meshes (material, uv, normals, colours), in '
         'order of first triangle:',
         '    cube_shape    red   uv n c: T0, T1; corners (vtx, st, nv, col) '
         '(0,0,0,0) (1,1,0,1) (2,2,0,2) (3,3,0,3)',
         '                  -> 4 vertices (T1 reuses T0\'s corners 0 and 2)',
         '    cube_shape#2  glass uv n c: T2; n = TriNv 1 (3,0,0) -> (1,0,0), '
         'c = TriColor 1 (0.25,0.75,1,1)',
         '    cube_shape#3  unlit c: T3; corner 1 has st 0xFFFFFFFF: uv dropped '
         'for the whole triangle',
         '    cube_shape#4  red   n: T4, T8; VtxNv 3 (0,0.5,0) -> (0,1,0); 4 '
         'vertices (v3, v2, v6, v7)',
         '    cube_shape#5  red   uv n: T5; colour at corners 0 and 2 only -> '
         'dropped; VtxNv 1 (1,1,1) -> 0.57735...',
         '    cube_shape#6  unlit n c: T6; corners 0 and 2 take TriNv 0 (0,0,-5) '
         '-> (0,0,-1) and TriColor 0',
         '                  (0.1,0.1,0.1,1); corner 1 VtxNv 2 (0,0,-1), corner '
         '0 VtxColor 3 (1,1,0,1)',
         '    cube_shape#7  unlit uv: T7',
         '  plane_shape: shape_type 0x05 has no CULL_BACK bit -> double-sided; '
         'its material is Mat 0 "red"',
         '    again, used single-sided by the cube too -> the double-sided '
         'variant is "red#2".',
         '    uv = (s, 1 - t): St (2, 2) -> (2, -1).',
         '  morph_shape: Vtx reference FULL [2, 3] (tri_anim_frame_num 1) -> '
         'frame 0: VtxGroup 2; St reference',
         '    KEY keys [0, 5] groups [2, 1] -> the first key: StGroup 2; no '
         'shape or Part material ->',
         '    obj_mat_link 4, an unnamed Mat -> "mat4"; its vertex colours have '
         'alpha 0.25 -> BLEND.',
         '  bare_shape: linked by "hidden" (obj_state CLEAR: no mesh) and by '
         '"loose" (reached by no link,',
         '    placed under RootNode): one mesh on "loose", no material, no '
         'attributes.',
         '  glass: prim alpha 0.5 -> BLEND. unlit: mat_shade_type 0x110, low '
         'nibble 0 (LIGHT_OFF) -> unlit.',
         '  Mat 3 "spare" is used by nothing: 5 materials. 10 meshes.']
    HAND.append(('geometry.niff', 'expect-mesh name=cube_shape#3 ',
                 'node=cube vertices=3 triangles=1 material=unlit uv=0 '
                 'normals=0 colors=1'))
    HAND.append(('geometry.niff', 'expect-material name=red#2 ',
                 'color=1,0,0,1 texture=- alpha=OPAQUE double_sided=1 unlit=0'))
    HAND.append(('geometry.niff', 'expect-triangle mesh=cube_shape#6 index=0 ',
                 'p=-1,-1,-1;1,1,-1;1,-1,-1 n=0,0,-1;0,0,-1;0,0,-1 '
                 'c=1,1,0,1;0.100000001,0.100000001,0.100000001,1;'
                 '0.100000001,0.100000001,0.100000001,1'))
    return L


def hand_textures(sc, geo):
    L = ['Hand evaluation (RULES "Textures"; TexImg rows are stored from the '
         'bottom, output rows from the',
         '  top: output (x, y) = stored pixel x of stored row H - 1 - y):']
    # one texel per texture: (x, stored row)
    pick = {'RGBA16': (3, 0), 'RGBA32': (1, 0), 'IA4': (2, 0), 'IA8': (4, 0),
            'IA16': (1, 1), 'I4': (2, 0), 'I8': (1, 1), 'CI8': (0, 1)}
    for k, (tn, fmt, w, h, ws, wt, rows) in enumerate(TEX_SPECS):
        name = tn or 'tex%d' % k
        x, sr = pick[fmt]
        px = rows[sr][x]
        steps, out = hand_texel(fmt, px)
        L.append('  %s (%s %dx%d, wrap_s %d wrap_t 0x%X -> %s, %s): texel '
                 '(%d, %d) = stored row %d pixel %d %s:'
                 % (name, fmt, w, h, ws, wt, WRAP_S[ws], WRAP_T[wt], x,
                    h - 1 - sr, sr, x, tuple(px)))
        for j in range(0, len(steps), 2):
            L.append('      ' + '; '.join(steps[j:j + 2]) +
                     (' -> rgba %s' % (tuple(out),) if j + 2 >= len(steps)
                      else ';'))
        HAND.append(('textures.niff', 'expect-texel texture=%s x=%d y=%d '
                     % (name, x, h - 1 - sr), 'rgba=%d,%d,%d,%d' % out))
    L += ['  Alpha modes: t_rgba16 keeps alpha 0 and 255 only (1 bit) -> MASK; '
          't_rgba32 has 128 -> BLEND;',
          '    t_ia4 1-bit alpha with 0 -> MASK; tex3 (IA8) 4-bit alpha 0x11, '
          '0x44 ... -> BLEND; t_ia16 all',
          '    255 -> OPAQUE; I4 and I8 take alpha = intensity -> BLEND; t_ci8 '
          '(NIFF 1, RGBA8 kept) all 255 -> OPAQUE.',
          '  Tex 3 has no name (name index 0xFFFFFFFF): "tex3". Tex 8 '
          '"spare_tex" is linked by no Mat:',
          '    8 textures. NIFF 1 has no tex_filter: nearest 0 everywhere.',
          '  The shape "quads" has 8 Parts, one Mat each: 8 meshes "quads", '
          '"quads#2" ... "quads#8".']
    return L


def hand_ci(sc, geo):
    ci = geo.ci_imgs[0]
    L = ['Hand evaluation (NIFF 2 CiImg + ColorPalette):',
         '  t_ci4: CiImg 0, CI4 5x3 = 15 indices, 8 per word, high nibble first, '
         'from the bottom-left:',
         '    words %s: the second word holds 7 indices and a zero pad '
         'nibble.' % ' '.join('%08X' % w for w in ci.words),
         '    stored row 0 (bottom) = indices %s -> output row 2;' % CI0[0:5],
         '    stored row 2 (top) = indices %s -> output row 0.' % CI0[10:15]]
    for k in (4, 7, 15):
        c = PAL0[k]
        L.append('    ColorPalette 0 (RGBA16) entry %d = 0x%04X: R %s, G %s, '
                 'B %s, A bit %d' % (k, c, replicate_str((c >> 11) & 31, 5),
                                     replicate_str((c >> 6) & 31, 5),
                                     replicate_str((c >> 1) & 31, 5), c & 1))
    L += ['  t_ci8_ia: CiImg 1, CI8 3x2 = 6 indices, 4 per word: words %s '
          '(the last one padded with two zero' % ' '.join(
              '%08X' % w for w in geo.ci_imgs[1].words),
          '    bytes); ColorPalette 1 is IA16: entry i = I 17 i, A 255 - 16 i '
          '(high byte I, low byte A).',
          '  t_ci4_bank2: CiImg 2 (CI4 4x2), ColorPalette 2 has 256 colours, '
          'tlut_palette_number 2: index i',
          '    reads entry 2 * 16 + i: the bottom row [0, 1, 2, 3] -> entries '
          '32-35, the top row [12..15] -> 44-47.',
          '    Entry k of ColorPalette 2 = RGBA16 (k & 31, 7k & 31, k >> 3, bit 2 '
          'of k): entry 44 = (12, 20, 5, 1)',
          '    -> rgba (99, 165, 41, 255) at output (0, 0).',
          '  t_ci8_256: CiImg 3 (CI8 4x1) indices 200, 255, 37, 0 into the same '
          '256-colour palette (no bank).',
          '  t_rgba32_v2: an ordinary TexImg in a NIFF 2 file (use_color_palette '
          '0), with a 4-byte TexImg',
          '    Nintendo extension (mipmap_max_level 0).',
          '  nearest: tex_filter POINT (0) for t_ci4 and t_ci4_bank2; BILERP (1) '
          'and AVERAGE (2) are not POINT.',
          '  Alpha: palettes 0 and 2 have entries with alpha bit 0 that the '
          'images use -> MASK; IA16 alphas',
          '    15 ... 255 -> BLEND; t_rgba32_v2 has alpha 128 -> BLEND.',
          '  m_rgba32_v2: prim (1,1,1,1), lit (shade 0x12); its Nintendo '
          'extension\'s diffuse (0.5,0.25,1,1)',
          '    tints the RGB -> base colour (0.5,0.25,1,1) (RULES "Geometry", '
          'materials).']
    HAND.append(('ci_palette.niff', 'expect-material name=m_rgba32_v2 ',
                 'color=0.5,0.25,1,1 texture=t_rgba32_v2 alpha=BLEND '
                 'double_sided=0 unlit=0'))
    HAND.append(('ci_palette.niff', 'expect-texel texture=t_ci4_bank2 x=0 y=0 ',
                 'rgba=99,165,41,255'))
    HAND.append(('ci_palette.niff', 'expect-texel texture=t_ci4 x=4 y=2 ',
                 'rgba=0,0,0,0'))
    return L


# HAND_NUM: (file, line prefix, field, corner or None, numbers): numbers
# worked out by hand with closed-form rotations (make_fixtures' rx3 / ry3 /
# rz3, not the evaluator's matrices), compared within 1e-6 with the field of
# the expect line that starts with the prefix.
HAND_NUM = []


def hand_envelope(sc, geo):
    rest3 = tuple(W0_REST[3][r] + sum(W0_WEIGHTS[k][3] / 100.0 *
                                     W0_DISAGREE[3][k][r] for k in range(3))
                  for r in range(3))
    a = 1.0 - 0.3                                 # body ry at frame 12 minus rest
    P6 = W0_REST[6]
    v6 = mf.v_add(mf.mv3(mf.ry3(a), P6), (0, 0.4, 0))
    n0 = mf.mv3(mf.mm3(mf.ry3(0.3), mf.rz3(0.4)), (0, 0, 1))
    HAND_NUM.append(('envelope.niff', 'expect-triangle mesh=body_skin#3 '
                     'index=0 ', 'p', 2, rest3))
    HAND_NUM.append(('envelope.niff', 'expect-skinned mesh=body_skin#3 tri=2 '
                     'corner=2 t=0.4 ', 'p', None, v6))
    HAND_NUM.append(('envelope.niff', 'expect-triangle mesh=body_skin index=0 ',
                     'n', 0, n0))
    w = lambda v: [W0_WEIGHTS[k][v] for k in range(3)]  # noqa: E731
    return [
        'Hand evaluation (RULES "Deformable geometry"):',
        '  Scene nodes: RootNode, body, arm, shoulder (ChainRoot 0, linked from '
        'arm\'s NIFF2 extension),',
        '    elbow (Joint 0, the ChainRoot\'s joint_index), tip (body\'s 2nd '
        'child), skin_obj (2nd scene root).',
        '  The Shape "body_skin" sits on skin_obj (T (0,0,-7), Rx 0.3, S 2), '
        'but its meshes hang on RootNode',
        '    with their vertices in the root\'s space: skin_obj\'s transform '
        'moves nothing.',
        '  Weights of WeightedPart 0 (nodes body, arm, elbow; WeightGroups 0, '
        '1, 2, percent):',
        '    vertex 0: %s -> /60 = 1/3, 1/2, 1/6 (the sum is not 100)' % w(0),
        '    vertex 3: %s; the nodes\' copies disagree: each is inverse '
        'rest world x (P + offset),' % w(3),
        '      P = %s, offsets (0.2,0,0), (0,-0.3,0), (0,0,0.4):' % (
            mf.fmt_list(W0_REST[3]),),
        '      rest position = sum w_k RestWorld_k p_k = P + 0.4 (0.2,0,0) + '
        '0.4 (0,-0.3,0) + 0.2 (0,0,0.4)',
        '      = %s (mesh body_skin#3, triangle 0, corner 2)'
        % mf.fmt_list(rest3),
        '    vertex 4 (weight_index 0xFFFFFFFF -> its vtx, 4): %s -> 0.1, '
        '0.3, 0.6' % w(4),
        '    vertex 5: %s: -20 counts as 0 -> 0.6, 0, 0.4' % w(5),
        '    vertex 6: %s: all 0 -> body alone; at frame 12 (t 0.4) body has '
        'T (0,0.4,0), ry 1.0' % w(6),
        '      against ry 0.3 at rest: World(t) RestWorld^-1 = T(0,0.4,0) '
        'Ry(0.7), so P %s goes to' % mf.fmt_list(P6),
        '      Ry(0.7) P + (0,0.4,0) = %s' % mf.fmt_list(v6),
        '    vertex 7 (weight_index 0): the weights of index 0, %s, not its '
        'own %s' % (w(0), w(7)),
        '  WeightedPart 1 (body, arm, shoulder, elbow, tip): five weights per '
        'vertex, e.g. vertex 0',
        '    %s: the rest position blends all five (they agree there); the '
        'skin keeps the four' % [W1_WEIGHTS[k][0] for k in range(5)],
        '    largest (arm, shoulder, elbow, tip) renormalised: 20/90, 30/90, '
        '25/90, 15/90.',
        '    Its vertex normals (unit, one VtxNvGroup per node) blend with the '
        'weights, rotated by the',
        '    nodes\' rest worlds, then normalised.',
        '  FullWeightedPart 0 (arm): the rest normal of vertex 0, stored '
        '(0,0,2), is arm\'s rest',
        '    rotation Ry(0.3) Rz(0.4) applied to (0,0,1) = %s.' % mf.fmt_list(n0),
        '  MorphPart 0 (node 0 shoulder, node 1 skin_obj, table_num 9): only '
        'table 0 (VtxGroup 9) on',
        '    node 0 moves its vertices (VtxGroup 10 of tables 1-8 is far away '
        'on purpose).',
        '  Skin "body_skin": the influencing nodes in order of first '
        'appearance: arm (full part),',
        '    body, elbow (weighted part 0), shoulder, tip (weighted part 1); '
        'the morph part adds nothing',
        '    (its node 0 is shoulder, its node 1 does not influence).',
        '  Meshes (material, uv, normals, colours) in order of first '
        'EnvelopeTri:',
        '    body_skin    -  uv n c: Tris 0, 8 (full part only)',
        '    body_skin#2  skin_mat uv: Tris 1, 3 (Part 0 lists EnvelopeTris 1 '
        'and 3); the full part\'s',
        '                 corner of Tri 1 has a normal and a colour, the '
        'weighted ones do not: dropped',
        '    body_skin#3  -  uv: Tris 2, 4, 5, 6',
        '    body_skin#4  -  uv n: Tri 7 (weighted part 1, blended normals)']


def hand_cluster(sc, geo):
    v = mf.v_add(mf.mv3(mf.mm3(mf.ry3(0.9), mf.rx3(0.3)), (0.3, 0.2, 0.1)),
                 (0.5, 0.3, 0))
    n1 = mf.mv3(mf.ry3(0.2), (0, 0, 1))
    HAND_NUM.append(('cluster.niff', 'expect-skinned mesh=bird_shape tri=0 '
                     'corner=0 t=0.333333333 ', 'p', None, v))
    HAND_NUM.append(('cluster.niff', 'expect-triangle mesh=bird_shape index=0 ',
                     'n', 1, n1))
    return [
        'Hand evaluation (RULES "Deformable geometry"; a Cluster reads as a '
        'FullWeightedPart):',
        '  Cluster 0 moves with hip, 1 with thigh, 2 with foot (one node each, '
        'weight 1).',
        '  Vertex 0 of Cluster 0, (0.3,0.2,0.1) in hip\'s space, at frame 10 '
        '(t 0.333333333): hip has',
        '    T (0.5,0.3,0), rx 0.3, ry 0.9 (order XYZ: R = Ry Rx); World(t) '
        'RestWorld^-1 x rest position',
        '    = World(t) x (0.3,0.2,0.1) = Ry(0.9) Rx(0.3) (0.3,0.2,0.1) + '
        '(0.5,0.3,0) = %s.' % mf.fmt_list(v),
        '  Rest normal of vertex 1 of Cluster 0, stored (0,0,2): hip\'s rest '
        'rotation Ry(0.2) applied',
        '    to (0,0,1) = %s.' % mf.fmt_list(n1),
        '  ClusterTris 1, 3 and 5 stitch clusters (0-1, 1-2, 2-0-1); the '
        'skin\'s joints are hip, thigh,',
        '    foot. Only Cluster 0 has vertex colours: Tri 0 keeps them, the '
        'stitching Tris drop them.',
        '  Meshes: bird_shape (Tri 0: uv n c), bird_shape#2 (Tris 1, 3, 4, 5: '
        'uv n), bird_shape#3',
        '    (Tri 2, Part 0 -> "feather").']


def check_hand_num(lines):
    for fname, prefix, field, corner, want in HAND_NUM:
        hits = [l for l in lines[fname] if l.startswith(prefix)]
        assert len(hits) == 1, (fname, prefix)
        val = [f.split('=', 1)[1] for f in hits[0].split() if
               f.startswith(field + '=')][0]
        groups = [[float(x) for x in g.split(',')] for g in val.split(';')]
        have = groups[corner if corner is not None else 0]
        assert max(abs(a - b) for a, b in zip(have, want)) < 1e-6, \
            (fname, prefix, have, want)


def hand_cluster_tri(sc, geo):
    # the foot's rest rotation: hip ry 0.2, thigh rx 0.3, foot rz 0.1 at frame 0
    rot = mf.mm3(mf.mm3(mf.ry3(0.2), mf.rx3(0.3)), mf.rz3(0.1))
    n = mf.mv3(rot, (0, 0.6, 0.8))
    HAND_NUM.append(('cluster_tri.niff', 'expect-triangle mesh=bird_shape index=1 ',
                     'n', 0, n))
    return [
        'Hand evaluation (RULES "Geometry": vertex before triangle):',
        '  ClusterTri 4 lies on Cluster 2 (foot), which has no vertex normals: its corners take',
        '    the triangle normal, TriNvGroup 0 record 1 (0,3,4) -> (0,0.6,0.8), turned by the foot\'s',
        '    rest rotation Ry(0.2) Rx(0.3) Rz(0.1) (hip, thigh, foot at frame 0) = %s,' % mf.fmt_list(n),
        '    and the triangle colour, TriColorGroup 1 record 0 (0.1,0.6,0.3,1).',
        '  ClusterTri 5 (cluster_for_tri 2): the hip corner keeps its vertex colour and normal, the',
        '    foot corner takes the triangle\'s normal (0,0,1) turned and colour (0.7,0.7,0.1,1), the',
        '    thigh corner (vertex normal, no vertex colour) the colour only.',
    ]


def hand_mat_sources(sc, geo):
    L = ['Hand evaluation (RULES "Geometry", material sources; the rest as in '
         'geometry.niff):',
         '  red (Mat 0): colour PRIM, alpha PRIM -> the stored colours feed '
         'nothing: its triangles lose',
         '    them. T0, T1 (uv n, were with colours) and T5 (uv n) form one '
         'mesh, cube_shape: 4 + 3 = 7',
         '    vertices; T4, T8 stay "red n" (cube_shape#4); plane_shape (red#2) '
         'keeps uv n. Base colour',
         '    = prim (1,0,0,1).',
         '  glass (Mat 1): colour VTX|TRI, alpha types 0xFFFFFFFF -> the alpha '
         'takes the colour\'s',
         '    sources: T2 keeps TriColor 1 (0.25,0.75,1,1); PRIM feeds neither: '
         'base colour (1,1,1,1),',
         '    prim alpha 0.5 unused -> OPAQUE (BLEND in geometry.niff).',
         '  unlit (Mat 2): mat_type 0x01010101 (N64 combiner): its type words '
         'are not NIFF bits -> every',
         '    source, as geometry.niff: base (1,1,0.5,1), T3, T6 keep their '
         'colours.',
         '  mat4 (Mat 4): colour VTX (cycle 0) | PRIM (cycle 1), alpha PRIM -> '
         'morph_shape keeps its',
         '    vertex colours\' RGB, their alpha 0.25 becomes 1; base = prim '
         '(0.8,0.8,0.8,1) -> OPAQUE.',
         '  9 meshes (geometry.niff\'s 10 less the merged one), 5 materials.']
    HAND.append(('mat_sources.niff', 'expect-mesh name=cube_shape ',
                 'node=cube vertices=7 triangles=3 material=red uv=1 normals=1 '
                 'colors=0'))
    HAND.append(('mat_sources.niff', 'expect-material name=glass ',
                 'color=1,1,1,1 texture=- alpha=OPAQUE double_sided=0 unlit=0'))
    HAND.append(('mat_sources.niff', 'expect-material name=unlit ',
                 'color=1,1,0.5,1 texture=- alpha=OPAQUE double_sided=0 '
                 'unlit=1'))
    HAND.append(('mat_sources.niff', 'expect-material name=mat4 ',
                 'color=0.800000012,0.800000012,0.800000012,1 texture=- '
                 'alpha=OPAQUE double_sided=0 unlit=0'))
    HAND.append(('mat_sources.niff', 'expect-triangle mesh=morph_shape '
                 'index=0 ', 'p=0,0,0;1,0,0;0,1,0 uv=0.100000001,0.799999997;'
                 '0.899999976,0.799999997;0.100000001,0.199999988 '
                 'c=1,1,1,1;1,0.5,0,1;0,0.5,1,1'))
    return L


HANDWORK = {'geometry.niff': hand_geometry, 'textures.niff': hand_textures,
            'ci_palette.niff': hand_ci, 'envelope.niff': hand_envelope,
            'cluster.niff': hand_cluster, 'cluster_tri.niff': hand_cluster_tri,
            'mat_sources.niff': hand_mat_sources}


# --- prose --------------------------------------------------------------------------------

COMMON = '''
Every file is NIFF big-endian, all fields u32 or float32, 4-byte aligned.
The lists follow the physical order of docs/formats/niff.md section 1
(Scene, Env, Cam, Light, Obj, Shape, Vtx, Tri, Color, Vector, St, Part, Mat,
Tex, TexImg, Anim, Coll, Switch, Name, then in NIFF 2 CiImg, ColorPalette,
Envelope, Cluster, Weight, ChainRoot, Joint, Effector, ExternalName); empty
lists are 24-byte headers with count 0. The Color and Vector lists carry two
counts and two size arrays (header 28 + 4 (n1 + n2)): their Tri* groups
first, then their Vtx* groups. Every list_size = header + items + extension
blocks; the header size fields (in header order, Tri after St) equal the
list sizes; file_size is the file length.'''


PROSE = {}
PROSE['geometry.niff'] = ('NIFF 1, meshes: all six attribute kinds, Parts, double-sided, per-corner indices', '''
How it was made: make_geometry.py, geometry() packed by pack_geo_file()
(make_fixtures.pack_file with the geometry lists). NIFF 1.
ObjList:
  0 spinner  obj_type NULL, KEY LINEAR keys 0, 10, 20: T (0,0,0), (0,1,0),
             (0,0,0); ry 0, 1.5, 3 (P 20); children [1, 2, 3, 4]
  1 cube     STATIC T (1,0,0); obj_shape_link 0 (cube_shape)
  2 plane    STATIC T (-1.5,0,0) Rx 0.3; obj_shape_link 1 (plane_shape)
  3 morph    STATIC T (0,2,0) S 2; obj_shape_link 2, obj_mat_link 4
  4 hidden   obj_state CLEAR, obj_shape_link 3 (no mesh: CLEAR)
  5 loose    STATIC T (0,-3,0); obj_shape_link 3; reached by no link
Shapes (Shape: tag 0x00030100, 40 bytes + part links):
  0 cube_shape   shape_type 0x15 (CULL_BACK), TriGroup 0, shape_mat_link 0,
                 shape_part_link [1, 2, 0, 3]
  1 plane_shape  shape_type 0x05 (no CULL_BACK: double-sided), TriGroup 1,
                 shape_mat_link 0
  2 morph_shape  0x15, TriGroup 2, no material of its own, no Parts
  3 bare_shape   0x15, TriGroup 3, no material
Parts: 0 glass [2, 3]; 1 USE_SHAPE_MAT [4, 6]; 2 unlit [3, 6, 7];
  3 mat_index 0xFFFFFFFF [5].
Mats (104 bytes + tex_index): 0 "red" prim (1,0,0,1) shade 0x12; 1 "glass"
  (0.2,0.6,1,0.5) shade 0x11; 2 "unlit" (1,1,0.5,1) shade 0x110; 3 "spare"
  (unused); 4 unnamed (0.8,0.8,0.8,1) shade 0x02.
VtxList: 0 the cube's 8 corners (+-1); 1 the plane's 4 (y = 0); 2 and 3 the
  morph frames 0 and 1; 4 bare_shape's triangle.
ColorList: TriColorGroups [0: (0.5,0.5,0.5,1)], [1: (0.1,0.1,0.1,1),
  (0.25,0.75,1,1)]; VtxColorGroups [0: red, green, blue, yellow], [1: three
  colours with alpha 0.25].
VectorList: TriNvGroups [0: (0,0,-5), (3,0,0)]; VtxNvGroups [0: (0,3,0)],
  [1: (0,0,2), (1,1,1), (0,0,-1), (0,0.5,0)] (normals stored unnormalised).
StList: 0 (0,0) (1,0) (1,1) (0,1) (0.5,0.25); 1 (0,0) (2,0) (2,2) (0,2);
  2 (0.1,0.2) (0.9,0.2) (0.1,0.8).
TriList: TriGroup 0 (cube, 9 Tris), 1 (plane, 2), 2 (morph: tri_anim_type
  0x200001 = VTX_FULL | ST_KEY, tri_anim_frame_num 1: its Vtx reference holds
  2 indices, its St reference key_num 2, keys, groups), 3 (bare, 1). Every
  Tri is 76 bytes; corner indices differ from the vertex index and
  0xFFFFFFFF marks an absent attribute.
''' + COMMON + '''

What it covers: RULES "Geometry": corner attributes from six groups chosen
by the TriGroup's Reference areas (indices counted within their kind),
per-corner indices, normals normalised, uv = (s, 1 - t), colours from the
vertex group else the triangle group, an attribute missing at one corner
dropped for the triangle, meshes split by (material, uv, normals, colours)
in order of first triangle with vertices = distinct corner tuples, names
"cube_shape", "cube_shape#2" ... "#7", Part / Shape / Obj material
priority (USE_SHAPE_MAT and 0xFFFFFFFF Parts skipped), double-sided shapes
and the "#2" material variant, unlit and BLEND materials, the rest group of
an animated Reference area (FULL and KEY), a CLEAR object's shape (no mesh),
an unreached object's mesh, a mesh moving with an animated parent (poses).''')

PROSE['textures.niff'] = ('NIFF 1, one texture per N64 format (RGBA16 ... CI8), wrap modes, 5x3', '''
How it was made: make_geometry.py, textures() packed by pack_geo_file().
NIFF 1. One object "board" (STATIC T (0,0,-3)) whose shape "quads" holds 8
quads (16 triangles, uv from one StGroup (0,0) (1,0) (1,1) (0,1)); Part i
gives quad i the Mat i (prim white, shade 0x12, tex_num 1, tex_index [i]).
Tex i (52-byte header, tex_anim 0, a 28-byte TexDataArea img_w, img_h,
tile_w, tile_h, offset 0, 0, tex_img_index i) and TexImg i (24-byte header,
img_w * img_h RGBA8 pixels, rows from the bottom-left):
  0 t_rgba16  tex_type 0x205 RGBA16  4x2  wrap_s 0 wrap_t 0x000
  1 t_rgba32  0x405 RGBA32           2x2  wrap_s 1 wrap_t 0x100
  2 t_ia4     0x001 IA4              4x2  wrap_s 2 wrap_t 0x200
  3 (unnamed) 0x101 IA8              5x3  wrap_s 0 wrap_t 0x100
  4 t_ia16    0x201 IA16             2x2  wrap_s 1 wrap_t 0x200
  5 t_i4      0x000 I4               4x2  wrap_s 2 wrap_t 0x000
  6 t_i8      0x100 I8               3x2  wrap_s 0 wrap_t 0x000
  7 t_ci8     0x102 CI8              2x2  (NIFF 1: RGBA8 pixels, kept)
  8 spare_tex 0x405 RGBA32           1x1  linked by no Mat
Every colour channel that a format reduces was picked so that truncation and
rounding reduce it alike (the rules do not say which the converter uses),
and every intensity keeps clear of .5.
''' + COMMON + '''

What it covers: RULES "Textures": the stored RGBA8 image reduced to the
Tex's N64 format and expanded back by bit replication (RGBA16 5/5/5/1, IA4
3+1, IA8 4+4, IA16 8+8, I4 and I8 with alpha = intensity, RGBA32 and CI8
unchanged), intensity = round(0.299 R + 0.587 G + 0.114 B), rows flipped to
start at the top, a non-power-of-two image (5x3), wrap_s 0/1/2 and wrap_t
0/0x100/0x200, an unnamed Tex ("tex3"), an unused Tex (not in the scene),
alpha modes MASK (alpha 0 and 255 only), BLEND (other alpha) and OPAQUE.
Every texel of every texture has an expect-texel line.''')

PROSE['ci_palette.niff'] = ('NIFF 2, colour-indexed textures: CiImg (CI4, CI8) + ColorPalette (RGBA16, IA16, 256 colours, TLUT bank)', '''
How it was made: make_geometry.py, ci_palette() packed by pack_geo_file().
NIFF 2 (0x02010200): the CiImg and ColorPalette lists are the first two
NIFF2 lists after the NameList. One object "panel" (STATIC T (0,1,-4), NIFF2
Obj extension) with the shape "panel_quads" (NIFF2 Shape extension:
kind_of_node_for_geometry 0x00080100 TriGroup, external names 0xFFFFFFFF):
5 quads, Part i -> Mat i -> Tex i.
CiImgList (84-byte head, then the packed indices):
  0 CI4 5x3 (2 words), 1 CI8 3x2 (2 words), 2 CI4 4x2 (1 word),
  3 CI8 4x1 (1 word)
ColorPaletteList (84-byte head, then two 16-bit colours per word):
  0 16 colours RGBA16, 1 16 colours IA16, 2 256 colours RGBA16
TexList (NIFF2 Tex extension: tex_filter, use_perspective_correction 1,
mipmap_level 0, use_color_palette, external_tex_img_num 0, then with a
palette color_palette_index[0] and tlut_palette_number[0]):
  0 t_ci4        CI4 5x3, CiImg 0, palette 0, tlut 0, POINT, wrap 0/0x100
  1 t_ci8_ia     CI8 3x2, CiImg 1, palette 1, tlut 0, BILERP, wrap 1/0
  2 t_ci4_bank2  CI4 4x2, CiImg 2, palette 2, tlut 2, POINT, wrap 2/0x200
  3 t_ci8_256    CI8 4x1, CiImg 3, palette 2, tlut 0, AVERAGE, wrap 0/0
  4 t_rgba32_v2  RGBA32 2x1, TexImg 0 (use_color_palette 0), BILERP,
                 wrap 1/0x100; the TexImg has a 4-byte Nintendo extension
''' + COMMON + '''

What it covers: RULES "Textures" with use_color_palette 1: tex_img_index
names a CiImg; indices packed big-endian (CI4 high nibble first, 8 per word;
CI8 4 per word) from the bottom-left, the last word zero-padded; 16-bit
palette entries RGBA16 (5/5/5/1, bit-replicated) and IA16; a 256-colour
palette read by a CI4 image through TLUT bank 2 (entries 32-47) and by a
CI8 image directly; tex_filter POINT -> nearest; alpha modes from the
decoded texels. Every texel has an expect-texel line. Mat 4 (m_rgba32_v2)
carries a 48-byte NIFF 2 Nintendo extension (ambient, emission, diffuse
RGBA) whose diffuse (0.5,0.25,1,1) tints its base colour (RULES
"Geometry", materials).''')

PROSE['envelope.niff'] = ('NIFF 2, deformable geometry: an Envelope (full, weighted, morph parts) skinned to objects and IK chain nodes', '''
How it was made: make_geometry.py, envelope() packed by pack_geo_file().
NIFF 2 (0x02010200); NIFF2 Obj extensions; arm's links ChainRoot 0.
ObjList (all KEY LINEAR keys 0, 12, 24, anim_loop 1: played once, then held):
  0 body      T (0,0,0) (0,0.4,0) (0.2,0,0), ry 0.3 1.0 0.6; children [1, 3]
  1 arm       T (1,0,0) (1.3,0.2,0) (1,0,0.2), rz 0.4 0.9 0.2;
              obj_chain_root_link [0]
  2 skin_obj  STATIC T (0,0,-7) Rx 0.3 S 2; obj_shape_link 0 (body_skin)
  3 tip       STATIC T (0,1.2,0) Rz 0.25
ChainRootList: 0 shoulder (STATIC T (0.5,0,0) Rz 0.2), joint_index 0.
JointList: 0 elbow (T (0.6,0,0), rx 0.1 0.8 0.3, rz 0 0 0.2 at keys 0 12 24).
Shape 0 body_skin: shape_type 0x15, NIFF2 extension kind_of_node_for_geometry
  0x00220100 (Envelope), shape_tri_link 0, shape_part_link [0].
Part 0: mat_index 0 (skin_mat), tri_index [1, 3] (EnvelopeTris).
EnvelopeList, Envelope 0 (44-byte head, 1 full, 2 weighted, 1 morph part,
  9 EnvelopeTris of 116 bytes):
  FullWeightedPart 0: node Obj 1 (arm); VtxGroup 0, VtxNvGroup 0 (normals
    stored unnormalised), VtxColorGroup 0, StGroup 0.
  WeightedPart 0: nodes Obj 0 (body), Obj 1 (arm), Joint 0 (elbow);
    WeightGroups 0-2, VtxGroups 1-3 (each node's copy: inverse rest world x
    the rest point; vertex 3's copies disagree), no normals, StGroup 1.
  WeightedPart 1: nodes Obj 0, Obj 1, ChainRoot 0, Joint 0, Obj 3 (five);
    WeightGroups 3-7, VtxGroups 4-8, VtxNvGroups 1-5 (unit), StGroup 0.
  MorphPart 0: node 0 ChainRoot 0 (shoulder), node 1 Obj 2; table_num 9:
    VtxGroup 9, then VtxGroup 10 eight times; StGroup 1.
  EnvelopeTris (corners: part, index, vtx, st, vtx_nv, vtx_color,
    weight_index):
    0 full 0,1,2            1 full 2 + weighted0 0,1   2 weighted0 1,2,3
    3 weighted0 3 + morph 0,1   4 morph 1,2 + full 3   5 weighted0 4
    (weight_index 0xFFFFFFFF), 5, 6   6 weighted0 7 (weight_index 0), 0 +
    full 0   7 weighted1 0,1,2   8 full 1,3,0
WeightList: 8 WeightGroups (percent, index = vertex), WeightedPart 0:
  body  %s
  arm   %s
  elbow %s
  WeightedPart 1 (body, arm, shoulder, elbow, tip; 3 vertices):
  %s
''' % (W0_WEIGHTS[0], W0_WEIGHTS[1], W0_WEIGHTS[2], W1_WEIGHTS) + COMMON + '''

What it covers: RULES "Deformable geometry": a Shape naming an Envelope;
FullWeightedPart, WeightedPart and MorphPart vertices (node kinds Obj,
ChainRoot, Joint); weights in percent not summing to 100 (normalised), a
negative weight (0), all weights 0 (the first node alone), weight_index out
of range (falls back to vtx) and in range but not vtx; a vertex whose nodes'
copies disagree at rest (the blend decides its rest position); five
weights (the skin keeps the four largest); a MorphPart with 9 tables (table
0 on node 0); triangles stitching parts; vertex normals (one node, and a
blend of five), colours and uv from the parts' groups; a Part material by
EnvelopeTri index; skinned meshes on RootNode with one skin (joints in order
of first appearance); world positions of every corner at frames 0, 6, 12,
24 (expect-skinned).''')

PROSE['cluster.niff'] = ('NIFF 2, deformable geometry: a ClusterShape with a cluster on each object of a 3-level hierarchy', '''
How it was made: make_geometry.py, cluster() packed by pack_geo_file().
NIFF 2 (0x02010200). ObjList (KEY LINEAR keys 0, 10, 20, anim_loop 1):
  0 hip    T (0,0,0) (0.5,0.3,0) (0,0.6,0), rx 0 0.3 0, ry 0.2 0.9 0.4,
           rz 0 0 0.1; children [1]; obj_shape_link 0 (bird_shape)
  1 thigh  T (0,-1,0), rx 0.3 -0.4 0.2, rz 0 0 0.3; children [2]
  2 foot   T (0,-0.8,0.2), rx 0 0 0.2, rz 0.1 0.7 0
Shape 0 bird_shape: NIFF2 extension kind 0x00280100 (ClusterShape),
  shape_tri_link 0, shape_part_link [0]; Part 0: Mat 0 (feather), tri [2].
ClusterList, ClusterShape 0 (36-byte head, 3 Clusters of 56 bytes, 6
  ClusterTris of 100 bytes):
  Cluster 0: Obj 0 (hip), VtxGroup 0 (4), VtxNvGroup 0, VtxColorGroup 0,
             StGroup 0
  Cluster 1: Obj 1 (thigh), VtxGroup 1 (4), VtxNvGroup 1, StGroup 0
  Cluster 2: Obj 2 (foot), VtxGroup 2 (3), VtxNvGroup 2, StGroup 1
  ClusterTris (kind 0x00280110, cluster, vtx, st, vtx_nv, vtx_color):
  0 C0 0,1,2   1 C0 2,3 + C1 0   2 C1 0,1,2   3 C1 2,3 + C2 0   4 C2 0,1,2
  5 C2 2 + C0 0 + C1 3
''' + COMMON + '''

What it covers: RULES "Deformable geometry" for a ClusterShape: each
Cluster's vertices follow its object (weight 1), stitching triangles across
three levels of an animated hierarchy, rest positions and normals in the
root's space, colours from one cluster only (dropped on stitching
triangles), a Part material by ClusterTri index, one skin (hip, thigh,
foot), world positions of every corner at frames 0, 5, 10, 20.''')
PROSE['cluster_tri.niff'] = ('NIFF 2, deformable geometry: cluster.niff with triangle normals and colours', '''
How it was made: make_geometry.py, cluster_tri() packed by pack_geo_file():
cluster() with these changes.
  Cluster 1 (thigh): VtxNvGroup 1, TriColorGroup 0 (no vertex colours)
  Cluster 2 (foot):  no VtxNvGroup, TriNvGroup 0, TriColorGroup 1
  TriColorGroup 0: (0.9,0.1,0.2,1) (0.2,0.3,0.8,0.5)
  TriColorGroup 1: (0.1,0.6,0.3,1) (0.7,0.7,0.1,1)
  TriNvGroup 0:    (0,0,1) (0,3,4)
  ClusterTris (triangle's cluster; tri_nv, tri_color): 0 C0 (-, -)
  1 C0 (-, -)  2 C1 (-, 0)  3 C1 (-, 1)  4 C2 (1, 0)  5 C2 (0, 1)
''' + COMMON + '''

What it covers: RULES "Deformable geometry" with "vertex before triangle"
(RULES "Geometry"): a corner without its own normal or colour takes the
triangle's, from the first TriNvGroup / TriColorGroup of the triangle's
cluster (ClusterTri cluster_for_tri), the normal turned by that cluster's
object at rest; triangles 0 and 1 on the hip's cluster keep what they had,
the thigh's triangles get colours, the foot's normals and colours, and
triangle 5 mixes a vertex colour (hip) with triangle values.''')

PROSE['mat_sources.niff'] = ('NIFF 1, geometry.niff with the Mats naming the sources of their colour and alpha', '''
How it was made: make_geometry.py, mat_sources_file() packed by
pack_geo_file(): geometry() (see geometry.txt) with these Mat words
(mat_type; color_type0, color_type1, alpha_type0, alpha_type1; "-" is
0xFFFFFFFF, an unused cycle):
  Mat 0 red    NIFF; PRIM 0x4, -, PRIM_ALPHA 0x40000, -
  Mat 1 glass  NIFF; VTX|TRI 0x3, -, -, -
  Mat 2 unlit  N64 combiner 0x01010101; PRIM 0x4, -, PRIM_ALPHA 0x40000, -
  Mat 3 spare  NIFF; every source (0xF, -, 0xF0000, -), as in geometry.niff
  Mat 4 (mat4) NIFF; VTX 0x1, PRIM 0x4, PRIM_ALPHA 0x40000, -
''' + COMMON + '''

What it covers: RULES "Geometry", material sources: the colour and alpha
types' bits (docs/formats/niff.md: "they say which of vertex colour,
triangle colour, prim colour, texture feed the surface colour") decide
whether a triangle keeps its stored colours and whether the prim colour is
the base colour; the alpha follows the colour where it names nothing; an N64
combiner Mat takes every source.''')

BASES = {
    'envelope': 'envelope.niff (its .txt describes it): NIFF 2, one Envelope '
                '(1 full, 2 weighted, 1 morph part, 9 EnvelopeTris); the '
                'ObjList has 4 objects.',
    'cluster': 'cluster.niff (its .txt describes it): NIFF 2, one '
               'ClusterShape with 3 Clusters and 6 ClusterTris.',
    'geometry': 'geometry.niff (its .txt describes it): NIFF 1, cube_shape\'s '
                'TriGroup 0 has 9 Tris over VtxGroup 0 (8 vertices).',
    'textures': 'textures.niff (its .txt describes it): NIFF 1, 9 Tex with 9 '
                'TexImg.',
    'ci_palette': 'ci_palette.niff (its .txt describes it): NIFF 2, 4 CiImg, '
                  '3 ColorPalettes.',
}

BROKEN_PROSE = {
    'bad_tri_vertex.niff': 'a triangle corner whose vtx_index is past its '
                           'VtxGroup',
    'bad_shape_link.niff': 'a Shape whose shape_tri_link is past the TriList',
    'bad_vtx_count.niff': 'a VtxGroup whose vtx_num does not fit its size',
    'bad_ci_index.niff': 'a colour index past its palette',
    'bad_teximg_size.niff': 'a TexImg shorter than img_w * img_h * 4',
    'bad_envelope_node.niff': 'a WeightedPart node index past the ObjList',
    'bad_envelope_part.niff': 'an EnvelopeTri corner whose part index is past '
                              'its kind\'s count',
    'bad_cluster_vertex.niff': 'a ClusterTri corner whose vtx_index is past '
                               'its cluster\'s VtxGroup',
}

BROKEN_WHY = {
    'bad_tri_vertex.niff': 'Tri 1 of cube_shape (a used shape) names vertex 8 '
                           'at its third corner; the VtxGroup its TriGroup '
                           'references has vertices 0-7. RULES "Geometry": a '
                           'position out of range refuses the file at that '
                           'vtx_index field.',
    'bad_shape_link.niff': 'cube_shape links TriGroup 4; the TriList has '
                           'TriGroups 0-3. The file is refused at '
                           'shape_tri_link (Shape +20).',
    'bad_vtx_count.niff': 'VtxGroup 0 is 120 bytes (24 + 8 * 12) and says 9 '
                          'vertices (24 + 9 * 12 = 132): refused at vtx_num '
                          '(VtxGroup +20).',
    'bad_ci_index.niff': 't_ci8_ia reads CiImg 1 with ColorPalette 1, which '
                         'has 16 colours; the first index (high byte of the '
                         'first packed word) is now 16. Refused at that word '
                         '(CiImg +84).',
    'bad_teximg_size.niff': 'Tex 3 (IA8, 5x3) needs 5 * 3 * 4 = 60 pixel '
                            'bytes; TexImg 3 was written with its bottom two '
                            'rows only (40 bytes; every size field agrees with '
                            'that). The file is refused at that TexImg\'s '
                            'tex_img_size field (TexImg +12), the size too '
                            'small for the Tex that uses it.',
    'bad_envelope_node.niff': 'WeightedPart 0 has a = 3 nodes; its '
                              'affected_node_index array starts at part + 36 '
                              '+ 4a = +48, so node 1\'s index sits at part + '
                              '52. Its kind is the ObjList (0x00020000) and it '
                              'now says 7; the ObjList has 4 objects. RULES '
                              '"Deformable geometry": an index past its list '
                              'is refused at that field.',
    'bad_envelope_part.niff': 'EnvelopeTri 2\'s corner 1 (at tri + 32 + 28) '
                              'is a WeightedPart corner (kind 0x00220120); '
                              'its part index (corner + 4) now says 2, and the '
                              'Envelope has WeightedParts 0 and 1. Refused at '
                              'that part index field.',
    'bad_cluster_vertex.niff': 'ClusterTri 3\'s corner 2 (at tri + 28 + 2 x '
                               '24) names Cluster 2, whose VtxGroup 2 has '
                               'vertices 0-2; its vtx_index (corner + 8) now '
                               'says 3. Refused at that vtx_index field.',
}


def txt_body(fname, e, lines):
    data = e['data']
    if e['kind'] == 'ok':
        title, prose = PROSE[fname]
        body = ['%s -- %s (%d bytes)' % (fname, title, len(data)), '']
        body += prose.strip('\n').split('\n')
        body += ['', 'Decoded fields (offset decimal, hex; read back from the '
                 'written bytes by make_fixtures\' Parser and make_geometry\'s '
                 'GeoReader):']
        body += mf.decoded(e['parser'])
        body += [''] + e['hand']
    else:
        body = ['%s -- broken: %s (%d bytes)' % (fname, BROKEN_PROSE[fname],
                                                 len(data)), '']
        if e['what']:
            body += textwrap.wrap(
                'How it was made: make_geometry.py writes the base file below '
                'and changes one u32: %s, at offset %d (0x%X), from %d '
                '(0x%08X) to %d (0x%08X).' % (e['what'], e['offset'],
                                              e['offset'], e['old'], e['old'],
                                              e['new'], e['new']), 78)
        else:
            body += textwrap.wrap(
                'How it was made: make_geometry.py, textures(short_img=%d): the '
                'base file below with TexImg %d one row short.' % (SHORT_IMG,
                                                                   SHORT_IMG), 78)
        body += [''] + textwrap.wrap('The base file: ' + BASES[e['base']], 78)
        body += ['', 'What it must decode to: nothing; the file is refused at '
                 'offset %d.' % e['offset']]
        body += textwrap.wrap(BROKEN_WHY[fname], 78)
        v = struct.unpack_from('>I', data, e['offset'])[0]
        body += [''] + textwrap.wrap(
            'Read back: u32 at %d (0x%X) = %d (0x%08X); file length %d. '
            'Reader: %s.' % (e['offset'], e['offset'], v, v, len(data),
                             e['reason']), 78)
    body += [''] + lines[fname]
    return '\n'.join(body) + '\n'


# --- checks --------------------------------------------------------------------------------

def continuity(fname, sc):
    ev = mf.Evaluator(sc, mf.stem_of(fname))
    for frame, node in POSES.get(fname, []):
        f = float(mf.t_string(frame)) * mf.FPS
        M = ev.pose(f, node)
        for g in (f + 1e-5, f - 1e-5):
            if g >= 0:
                assert mf.max_diff(M, ev.pose(g, node)) < 1e-3, (fname, frame)


def self_check(F):
    check_expand()
    lines = {}
    for fname, e in F.items():
        data = e['data']
        if e['kind'] == 'ok':
            sc, geo, p = parse_geo_bytes(data)
            assert sc == e['sc'], fname + ': parsed scene != description'
            assert geo == e['geo'], fname + ': parsed geometry != description'
            for k, v in e['marks'].items():
                assert p.where.get(k) == v, (fname, k, v, p.where.get(k))
            L = expect_lines(sc, geo, fname, p.where)
            assert L == expect_lines(e['sc'], e['geo'], fname), fname
            assert L == expectations_from_bytes(fname, data), fname
            continuity(fname, sc)
            e['parser'] = p
            lines[fname] = L
            e['hand'] = HANDWORK[fname](sc, geo)
        else:
            try:
                parse_geo_bytes(data)
                sc, geo, p = parse_geo_bytes(data)
                expect_lines(sc, geo, fname, p.where)
            except Fail as x:
                assert x.offset == e['offset'], (fname, x.offset, e['offset'],
                                                 x.msg)
                e['reason'] = x.msg
            else:
                raise AssertionError(fname + ' parsed but should fail')
            lines[fname] = ['expect-error-offset %d' % e['offset']]
            base = F[e['base'] + '.niff']['data']
            if e['what']:                         # one u32 differs
                diff = [i for i in range(len(base)) if base[i] != data[i]]
                assert len(base) == len(data) and diff and \
                    diff[0] >= e['offset'] and diff[-1] < e['offset'] + 4, fname
            else:                                 # 20 bytes of one TexImg less
                assert len(base) - len(data) == 20, fname
    for fname, prefix, rest in HAND:
        want = prefix + rest
        assert want in lines[fname], ('hand line not among the expect lines',
                                      want)
    check_hand_num(lines)
    return lines


def main():
    F = build()
    lines = self_check(F)
    for fname, e in F.items():
        with open(os.path.join(HERE, fname), 'wb') as fh:
            fh.write(e['data'])
        with open(os.path.join(HERE, mf.stem_of(fname) + '.txt'), 'w') as fh:
            fh.write(txt_body(fname, e, lines))
        print('%-22s %5d bytes   %-20s %3d expect lines'
              % (fname, len(e['data']), mf.stem_of(fname) + '.txt',
                 len(lines[fname])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
