"""retroanim: animations of classic games (LEGO Island, Metroid Prime, World
of Goo, the Nintendo 64 SDK's NIFF, Homeworld), read and played by the games'
own rules.  Pure Python over the shared library libretroanim.so.0 (ctypes).

    import retroanim
    with retroanim.load("walk.ani", coords="native") as doc:
        print(doc.format, [n.name for n in doc.nodes], doc.animations[0].duration)
        world = doc.pose(0.5)          # every node's world matrix at 0.5 s
        doc.save_gltf("walk.glb")

Files with geometry (today NIFF) also give doc.meshes, doc.materials and
doc.textures.
"""
import ctypes
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _native as _n

__all__ = ["Error", "Document", "Node", "Animation", "Channel", "Camera", "Skin", "Mesh", "Material", "Texture", "load",
           "formats", "list_archive", "__version__"]

__version__ = _n.lib.ra_version_string().decode()


class Error(Exception):
    """A file or an option the library refused.  str() is the command line's
    message ("FILE: FORMAT: what is wrong (field) (at byte N)"); .format is
    the format id (or "retroanim"), .field the field or option key, .offset
    the byte offset in the input (None when not tied to one), .code the kind:
    "truncated", "bad_magic", "bad_value", "limit", "no_memory",
    "unsupported", "io" or "usage"."""

    def __init__(self, message, format="retroanim", field="", offset=None, code="usage"):
        super().__init__(message)
        self.format = format
        self.field = field
        self.offset = offset
        self.code = code


_CODES = {1: "truncated", 2: "bad_magic", 3: "bad_value", 4: "limit", 5: "no_memory", 6: "unsupported", 7: "io",
          8: "usage"}


def _raise(err, st, where=None):
    buf = ctypes.create_string_buffer(_n.RA_ERROR_TEXT_MAX)
    _n.lib.ra_error_format(ctypes.byref(err), buf, len(buf))
    text = buf.value.decode("utf-8", "replace")
    fmt = err.format.decode() if err.format else "retroanim"
    if fmt == "retroanim" and text.startswith("retroanim: "):
        text = text[len("retroanim: "):]
    if where:
        text = f"{where}: {text}"
    raise Error(text, fmt, err.field.decode("utf-8", "replace"),
                None if err.offset == _n.RA_NO_OFFSET else int(err.offset), _CODES.get(st, "unknown"))


def _option_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return str(v)


class _Options:
    """ra_options over Python keyword arguments; keeps the strings alive."""

    def __init__(self, options):
        self.struct = _n.RaOptions()
        _n.lib.ra_options_init(ctypes.byref(self.struct))
        self._keep = []
        items = [(k, v) for k, v in options.items() if v is not None]
        if len(items) > _n.RA_MAX_OPTIONS:
            raise Error(f"too many options (at most {_n.RA_MAX_OPTIONS})")
        for k, v in items:
            kb, vb = str(k).encode(), _option_text(v).encode()
            self._keep += [kb, vb]
            if not _n.lib.ra_options_add(ctypes.byref(self.struct), kb, vb):
                raise Error(f"option {k!r}: not a valid key", field=str(k))


@dataclass
class Node:
    name: str
    parent: int  # index into Document.nodes, -1 for the root
    transform: List[float]  # local rest transform, 16 numbers, row-major (Assimp's convention)
    metadata: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Channel:
    node: str
    pre_state: str
    post_state: str
    position: List[List[float]]  # [t, x, y, z]
    rotation: List[List[float]]  # [t, w, x, y, z]
    scaling: List[List[float]]  # [t, x, y, z]


@dataclass
class Animation:
    name: str
    duration: float  # seconds
    ticks_per_second: float  # the format's native rate
    channels: List[Channel]
    # nodes shown and hidden (LEGO Island's morph keys): node name -> [[t, visible], ...];
    # from each key's time on its value holds, before the first key the node is shown
    visibility: Dict[str, List[list]] = field(default_factory=dict)


@dataclass
class Camera:
    name: str  # the name of the node that places it
    horizontal_fov: float  # half angle, radians (as Assimp)
    aspect: float
    near: float
    far: float
    position: List[float]
    look_at: List[float]
    up: List[float]
    orthographic: bool = False
    ortho_xmag: float = 0.0  # an orthographic camera's half width and height
    ortho_ymag: float = 0.0


@dataclass
class Skin:
    """A skeleton: the nodes that are its joints (a glTF skin, an armature).
    Its inverse bind matrices are the inverses of the joints' rest world
    transforms."""
    name: str  # may be empty
    skeleton: Optional[str]  # the common root joint's node name, or None
    joints: List[str]  # node names; Mesh.joints index into this list


@dataclass
class Texture:
    name: str
    width: int
    height: int
    rgba: bytes  # width * height * 4 bytes, 8-bit RGBA, rows from the TOP
    wrap_s: str  # "REPEAT", "CLAMP" or "MIRROR"
    wrap_t: str
    nearest: bool  # point sampling (else linear)
    source_format: Optional[str] = None  # the game's pixel format ("RGBA16", "CI4", ...)

    def texel(self, x: int, y: int) -> Tuple[int, int, int, int]:
        """The RGBA bytes at column x, row y (row 0 at the top)."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise IndexError(f"texel ({x}, {y}) outside {self.width}x{self.height}")
        k = 4 * (y * self.width + x)
        return tuple(self.rgba[k:k + 4])


@dataclass
class Material:
    name: str
    base_color: Tuple[float, float, float, float]  # RGBA factor: multiplies the texture and the vertex colours
    texture: Optional[str]  # the base colour texture's name (Document.textures), or None
    alpha_mode: str  # "OPAQUE", "MASK" (alpha below alpha_cutoff cut out, the rest opaque) or "BLEND"
    alpha_cutoff: float
    double_sided: bool
    unlit: bool  # shown without lighting
    metadata: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Mesh:
    """A triangle list with one material.  Every attribute is per vertex.
    It moves with its node: positions and normals are in that node's space
    (a skinned mesh, skin >= 0, holds its vertices in the scene's frame at
    rest, and each vertex follows up to four of the skin's joints)."""
    name: str
    node: str  # the node it moves with (skinned: the node it hangs on)
    material: Optional[str]  # the material's name (Document.materials), or None
    vertex_count: int
    triangle_count: int
    positions: List[Tuple[float, float, float]]
    normals: Optional[List[Tuple[float, float, float]]]  # unit length, or None
    colors: Optional[List[Tuple[float, float, float, float]]]  # RGBA in [0, 1], or None
    uvs: Optional[List[Tuple[float, float]]]  # u right, v DOWN from the image's top (glTF's convention), or None
    indices: List[Tuple[int, int, int]]  # vertex indices, counter-clockwise seen from the front
    skin: int = -1  # index into Document.skins, -1: not skinned
    joints: Optional[List[Tuple[int, int, int, int]]] = None  # skinned: positions in the skin's joints
    weights: Optional[List[Tuple[float, float, float, float]]] = None  # skinned: summing to 1
    metadata: Dict[str, Any] = field(default_factory=dict)


_STATES = ("default", "constant", "linear", "repeat")
_WRAPS = ("REPEAT", "CLAMP", "MIRROR")
_ALPHA_MODES = ("OPAQUE", "MASK", "BLEND")


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


def _keys(ptr, n, width):
    """n keys of width doubles ([t, ...]) from the library's array"""
    if not n:
        return []
    flat = list((ctypes.c_double * (width * n)).from_address(ptr))
    return [flat[i:i + width] for i in range(0, width * n, width)]


def _array(ctype, addr, n, width):
    """n tuples of width values of ctype from the library's array at addr, or None when addr is NULL"""
    if not addr:
        return None
    flat = (ctype * (width * n)).from_address(addr) if n else ()
    it = iter(list(flat))
    return list(zip(*[it] * width))


def _enum(names, v):
    return names[v] if 0 <= v < len(names) else str(v)


def _skin(sk, names):
    joints = [names[sk.joints[k]] for k in range(sk.joint_count)]
    return Skin(_text(sk.name), names[sk.skeleton] if 0 <= sk.skeleton < len(names) else None, joints)


def _texture(t):
    size = 4 * t.width * t.height
    return Texture(_text(t.name), t.width, t.height, ctypes.string_at(t.rgba, size) if t.rgba and size else b"",
                   _enum(_WRAPS, t.wrap_s), _enum(_WRAPS, t.wrap_t), bool(t.nearest),
                   t.source_format.decode("utf-8", "replace") if t.source_format else None)


def _material(m, textures):
    return Material(_text(m.name), tuple(m.base_color), textures[m.texture] if m.texture >= 0 else None,
                    _enum(_ALPHA_MODES, m.alpha_mode), m.alpha_cutoff, bool(m.double_sided), bool(m.unlit),
                    _meta(m.meta))


def _mesh(m, names, materials):
    nv, nt = m.vertex_count, m.triangle_count
    f, u32, u16 = ctypes.c_float, ctypes.c_uint32, ctypes.c_uint16
    skinned = m.skin >= 0
    return Mesh(_text(m.name), names[m.node], materials[m.material] if m.material >= 0 else None, nv, nt,
                _array(f, m.positions, nv, 3) or [], _array(f, m.normals, nv, 3), _array(f, m.colors, nv, 4),
                _array(f, m.uvs, nv, 2), _array(u32, m.indices, nt, 3) or [], m.skin,
                _array(u16, m.joints, nv, 4) if skinned else None, _array(f, m.weights, nv, 4) if skinned else None,
                _meta(m.meta))


def _node(n):
    return Node(_text(n.name), n.parent, list(n.transform), _meta(n.meta))


def _animation(a, names):
    chans = []
    for k in range(a.channel_count):
        c = a.channels[k]
        chans.append(Channel(names[c.node], _STATES[c.pre_state] if 0 <= c.pre_state < 4 else "default",
                             _STATES[c.post_state] if 0 <= c.post_state < 4 else "default",
                             _keys(c.position, c.position_count, 4), _keys(c.rotation, c.rotation_count, 5),
                             _keys(c.scaling, c.scaling_count, 4)))
    vis = {}
    for k in range(a.visibility_count):
        vt = a.visibility[k]
        vis[names[vt.node]] = [[vt.keys[j].t, bool(vt.keys[j].visible)] for j in range(vt.count)]
    return Animation(_text(a.name), a.duration, a.ticks_per_second, chans, vis)


def _camera(c):
    v = lambda x: [x.x, x.y, x.z]  # noqa: E731
    return Camera(_text(c.name), c.horizontal_fov, c.aspect, c.clip_near, c.clip_far, v(c.position), v(c.look_at),
                  v(c.up), bool(c.orthographic), c.ortho_xmag, c.ortho_ymag)


class Document:
    """One loaded file: its scene (nodes, animations, cameras, metadata,
    warnings) as the CLI's `dump` shows it, its skins and geometry (meshes,
    materials, textures; files without geometry have none), and the game's
    own pose.  Frees its memory when collected, on close(), or at the end of
    a with block; what was read stays readable after that."""

    def __init__(self, handle, name):
        self._h = handle
        self.name = name
        # read straight from the library's scene (the dump's content, without its JSON)
        sc = _n.lib.ra_document_scene(handle).contents
        self.format: str = sc.format.decode()
        self.nodes: List[Node] = [_node(sc.nodes[i]) for i in range(sc.node_count)]
        names = [n.name for n in self.nodes]
        self.animations: List[Animation] = [_animation(sc.animations[i], names) for i in range(sc.animation_count)]
        self.cameras: List[Camera] = [_camera(sc.cameras[i]) for i in range(sc.camera_count)]
        self.metadata: Dict[str, Any] = _meta(sc.meta)
        self.warnings: List[str] = [sc.warnings[i].msg.decode("utf-8", "replace") for i in range(sc.warning_count)]
        self.skins: List[Skin] = [_skin(sc.skins[i], names) for i in range(sc.skin_count)]
        self.textures: List[Texture] = [_texture(sc.textures[i]) for i in range(sc.texture_count)]
        tex_names = [t.name for t in self.textures]
        self.materials: List[Material] = [_material(sc.materials[i], tex_names) for i in range(sc.material_count)]
        mat_names = [m.name for m in self.materials]
        self.meshes: List[Mesh] = [_mesh(sc.meshes[i], names, mat_names) for i in range(sc.mesh_count)]

    # -- lifetime
    def close(self):
        if self._h:
            _n.lib.ra_document_free(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise Error("the document is closed")
        return self._h

    def __repr__(self):
        geo = f", {len(self.meshes)} mesh(es)" if self.meshes else ""
        return f"<retroanim.Document {self.name!r} {self.format}: {len(self.nodes)} nodes, " \
               f"{len(self.animations)} animation(s), {len(self.cameras)} camera(s){geo}>"

    # -- views
    def _dump(self, flags):
        out = ctypes.c_void_p()
        size = ctypes.c_size_t()
        err = _n.RaError()
        st = _n.lib.ra_document_dump(self._handle(), flags | _n.RA_DUMP_COMPACT, ctypes.byref(out),
                                     ctypes.byref(size), ctypes.byref(err))
        if st != 0:
            _raise(err, st, self.name)
        try:
            text = ctypes.string_at(out.value, size.value).decode("utf-8", "replace")
        finally:
            _n.lib.ra_string_free(out)
        return json.loads(text)

    def dump(self, source: bool = False) -> dict:
        """The dictionary `retroanim dump` prints (source=True: `dump --source`,
        the file's own fields as stored)."""
        return self._dump(_n.RA_DUMP_SOURCE if source else 0)

    def pose(self, t: float, anim: int = 0) -> List[List[float]]:
        """Every node's world transform (16 numbers, row-major; node order) at
        t seconds of animation `anim`, by the game's own rules: what
        `retroanim pose` prints."""
        h = self._handle()
        count = _n.lib.ra_document_scene(h).contents.node_count
        buf = (ctypes.c_double * (16 * count))()
        err = _n.RaError()
        st = _n.lib.ra_document_pose(h, int(anim), float(t), buf, ctypes.byref(err))
        if st != 0:
            _raise(err, st, self.name)
        return [list(buf[16 * i:16 * i + 16]) for i in range(count)]

    def _write(self, fn, path):
        err = _n.RaError()
        st = fn(_n.lib.ra_document_scene(self._handle()), os.fsencode(path), None, None, ctypes.byref(err))
        if st != 0:
            _raise(err, st, os.fspath(path))

    def save_gltf(self, path):
        """Writes glTF 2.0: .glb, or .gltf with a .bin beside it (by the
        extension), whole or not at all."""
        self._write(_n.lib.ra_gltf_write, path)

    def save_fbx(self, path):
        """Writes binary FBX 7.4, whole or not at all."""
        self._write(_n.lib.ra_fbx_write, path)


def load(source: Union[str, bytes, os.PathLike], filename: Optional[str] = None, **options) -> Document:
    """Loads a file (a path) or its bytes.  Options are the library's
    (docs/options.md) as keyword arguments: load("x.si", animation="walk"),
    load("a.ANIM", cinf="a.CINF"), load(data, filename="walk.ani").  An
    unknown key or a bad value raises Error, as a broken file does."""
    opts = _Options(options)
    err = _n.RaError()
    h = ctypes.c_void_p()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = filename
        st = _n.lib.ra_document_load(data, len(data), os.fsencode(filename) if filename else None,
                                     ctypes.byref(opts.struct), ctypes.byref(h), ctypes.byref(err))
    else:
        name = os.fspath(source)
        st = _n.lib.ra_document_load_file(os.fsencode(name), ctypes.byref(opts.struct), ctypes.byref(h),
                                          ctypes.byref(err))
    if st != 0:
        _raise(err, st, name)
    return Document(h.value, name)


def formats() -> List[dict]:
    """The formats of this build: id, name, extensions, how each is detected,
    whether it is an archive."""
    out = []
    for i in range(_n.lib.ra_format_count()):
        f = _n.lib.ra_format_at(i)
        out.append({"id": _n.lib.ra_format_id(f).decode(), "name": _n.lib.ra_format_name(f).decode(),
                    "extensions": _n.lib.ra_format_extensions(f).decode().split(),
                    "detection": _n.lib.ra_format_detection(f).decode(),
                    "archive": bool(_n.lib.ra_format_is_archive(f))})
    return out


def _meta(ml):
    out = {}
    for i in range(ml.count):
        m = ml.items[i]
        key = m.key.decode()
        out[key] = {1: lambda u: bool(u.b), 2: lambda u: int(u.i), 3: lambda u: float(u.d),
                    4: lambda u: u.s.decode("utf-8", "replace") if u.s else "",
                    5: lambda u: [u.v.x, u.v.y, u.v.z]}.get(m.type, lambda u: None)(m.u)
    return out


def list_archive(path: Union[str, os.PathLike], **options) -> List[dict]:
    """The animations inside a .SI or .pak (what `retroanim list` shows):
    index, id, name, kind, format and extension of the payload, sizes,
    compression, group, skeleton, the archive's own fields.  Pass one's name
    or id to load(path, animation=...)."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        data = f.read()
    opts = _Options(options)
    err = _n.RaError()
    ar = ctypes.POINTER(_n.RaArchive)()
    st = _n.lib.ra_archive_open(data, len(data), ctypes.byref(opts.struct), ctypes.byref(ar), ctypes.byref(err))
    if st != 0:
        _raise(err, st, name)
    try:
        a = ar.contents
        items = []
        for i in range(a.count):
            it = a.items[i]
            items.append({"index": i, "id": it.id, "name": it.name.decode("utf-8", "replace"),
                          "kind": it.kind.decode("utf-8", "replace"), "format": it.format.decode(),
                          "extension": it.extension.decode(), "size": it.size, "stored_size": it.stored_size,
                          "compressed": bool(it.compressed), "group": it.group.decode("utf-8", "replace"),
                          "has_skeleton": bool(it.has_skeleton), "metadata": _meta(it.meta)})
        return items
    finally:
        _n.lib.ra_archive_free(ar)
