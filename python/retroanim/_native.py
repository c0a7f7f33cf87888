"""ctypes declarations of libretroanim.so.0 (the public C API of retroanim.h,
ra_gltf.h, ra_fbx.h and ra_archive.h; docs/api.md)."""
import ctypes
import ctypes.util
import os

RA_NO_OFFSET = 2**64 - 1
RA_MAX_OPTIONS = 32
RA_ERROR_TEXT_MAX = 640
RA_DUMP_SOURCE = 1
RA_DUMP_COMPACT = 2
RA_ERR_USAGE = 8


class RaError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("format", ctypes.c_char_p), ("offset", ctypes.c_uint64),
                ("field", ctypes.c_char * 64), ("msg", ctypes.c_char * 512)]


class RaOptions(ctypes.Structure):
    _fields_ = [("keys", ctypes.c_char_p * RA_MAX_OPTIONS), ("values", ctypes.c_char_p * RA_MAX_OPTIONS),
                ("count", ctypes.c_size_t)]


class RaVec3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("z", ctypes.c_double)]


class RaMetaValue(ctypes.Union):
    _fields_ = [("b", ctypes.c_bool), ("i", ctypes.c_int64), ("d", ctypes.c_double), ("s", ctypes.c_char_p),
                ("v", RaVec3)]


class RaMeta(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("type", ctypes.c_int), ("u", RaMetaValue)]


class RaMetaList(ctypes.Structure):
    _fields_ = [("items", ctypes.POINTER(RaMeta)), ("count", ctypes.c_size_t), ("cap", ctypes.c_size_t)]


class RaArchiveItem(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("name", ctypes.c_char_p), ("kind", ctypes.c_char_p),
                ("format", ctypes.c_char_p), ("extension", ctypes.c_char_p), ("offset", ctypes.c_uint64),
                ("stored_size", ctypes.c_uint64), ("size", ctypes.c_uint64), ("compressed", ctypes.c_bool),
                ("has_skeleton", ctypes.c_bool), ("skeleton_id", ctypes.c_uint32), ("group", ctypes.c_char_p),
                ("meta", RaMetaList), ("priv", ctypes.c_void_p)]


class RaArchive(ctypes.Structure):
    _fields_ = [("format", ctypes.c_char_p), ("items", ctypes.POINTER(RaArchiveItem)), ("count", ctypes.c_size_t),
                ("meta", RaMetaList), ("warnings", ctypes.POINTER(ctypes.c_char_p)),
                ("warning_count", ctypes.c_size_t)]  # private fields follow; never allocated from Python


class RaNode(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("parent", ctypes.c_int32), ("transform", ctypes.c_double * 16),
                ("meta", RaMetaList)]


class RaChannel(ctypes.Structure):
    _fields_ = [("node", ctypes.c_uint32), ("pre_state", ctypes.c_int), ("post_state", ctypes.c_int),
                ("position", ctypes.c_void_p), ("position_count", ctypes.c_size_t),
                ("rotation", ctypes.c_void_p), ("rotation_count", ctypes.c_size_t),
                ("scaling", ctypes.c_void_p), ("scaling_count", ctypes.c_size_t)]


class RaVisKey(ctypes.Structure):
    _fields_ = [("t", ctypes.c_double), ("visible", ctypes.c_bool)]


class RaVisTrack(ctypes.Structure):
    _fields_ = [("node", ctypes.c_uint32), ("keys", ctypes.POINTER(RaVisKey)), ("count", ctypes.c_size_t)]


class RaAnimation(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("ticks_per_second", ctypes.c_double), ("duration", ctypes.c_double),
                ("channels", ctypes.POINTER(RaChannel)), ("channel_count", ctypes.c_size_t),
                ("visibility", ctypes.POINTER(RaVisTrack)), ("visibility_count", ctypes.c_size_t)]


class RaCamera(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("node", ctypes.c_uint32), ("horizontal_fov", ctypes.c_double),
                ("aspect", ctypes.c_double), ("clip_near", ctypes.c_double), ("clip_far", ctypes.c_double),
                ("position", RaVec3), ("look_at", RaVec3), ("up", RaVec3), ("orthographic", ctypes.c_bool),
                ("ortho_xmag", ctypes.c_double), ("ortho_ymag", ctypes.c_double)]


class RaWarning(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char_p), ("count", ctypes.c_uint32)]


class RaSkin(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("skeleton", ctypes.c_int32), ("joints", ctypes.POINTER(ctypes.c_uint32)),
                ("joint_count", ctypes.c_size_t)]


# geometry (ra_wrap and ra_alpha_mode are C enums: ints)
RA_WRAP_REPEAT, RA_WRAP_CLAMP, RA_WRAP_MIRROR = 0, 1, 2
RA_ALPHA_OPAQUE, RA_ALPHA_MASK, RA_ALPHA_BLEND = 0, 1, 2


class RaTexture(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("rgba", ctypes.c_void_p), ("wrap_s", ctypes.c_int), ("wrap_t", ctypes.c_int),
                ("nearest", ctypes.c_bool), ("source_format", ctypes.c_char_p)]


class RaMaterial(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("base_color", ctypes.c_double * 4), ("texture", ctypes.c_int32),
                ("alpha_mode", ctypes.c_int), ("alpha_cutoff", ctypes.c_double), ("double_sided", ctypes.c_bool),
                ("unlit", ctypes.c_bool), ("meta", RaMetaList)]


class RaMesh(ctypes.Structure):
    # the arrays as addresses (read with from_address: float32, uint32, uint16)
    _fields_ = [("name", ctypes.c_char_p), ("node", ctypes.c_uint32), ("material", ctypes.c_int32),
                ("vertex_count", ctypes.c_uint32), ("positions", ctypes.c_void_p), ("normals", ctypes.c_void_p),
                ("colors", ctypes.c_void_p), ("uvs", ctypes.c_void_p), ("indices", ctypes.c_void_p),
                ("triangle_count", ctypes.c_size_t), ("skin", ctypes.c_int32), ("joints", ctypes.c_void_p),
                ("weights", ctypes.c_void_p), ("meta", RaMetaList)]


class RaScene(ctypes.Structure):
    _fields_ = [("format", ctypes.c_char_p), ("arena", ctypes.c_void_p), ("nodes", ctypes.POINTER(RaNode)),
                ("node_count", ctypes.c_size_t), ("node_cap", ctypes.c_size_t),
                ("animations", ctypes.POINTER(RaAnimation)), ("animation_count", ctypes.c_size_t),
                ("cameras", ctypes.POINTER(RaCamera)), ("camera_count", ctypes.c_size_t),
                ("skins", ctypes.POINTER(RaSkin)), ("skin_count", ctypes.c_size_t), ("meta", RaMetaList),
                ("warnings", ctypes.POINTER(RaWarning)), ("warning_count", ctypes.c_size_t),
                ("warning_cap", ctypes.c_size_t), ("non_skeleton", ctypes.c_void_p),
                ("non_skeleton_count", ctypes.c_size_t),
                ("meshes", ctypes.POINTER(RaMesh)), ("mesh_count", ctypes.c_size_t),
                ("materials", ctypes.POINTER(RaMaterial)), ("material_count", ctypes.c_size_t),
                ("textures", ctypes.POINTER(RaTexture)), ("texture_count", ctypes.c_size_t)]


def _candidates():
    env = os.environ.get("RETROANIM_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libretroanim.so.0")
    yield "libretroanim.so.0"
    found = ctypes.util.find_library("retroanim")
    if found:
        yield found


def _load():
    errors = []
    for c in _candidates():
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            errors.append(f"{c}: {e}")
    raise ImportError("retroanim: libretroanim.so.0 not found (set RETROANIM_LIBRARY, or install retroanim): " +
                      "; ".join(errors))


lib = _load()
P = ctypes.POINTER
c_char_p, c_size_t, c_int, c_bool, c_double, c_void_p = (ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                                                          ctypes.c_bool, ctypes.c_double, ctypes.c_void_p)
_sigs = {
    "ra_version": (ctypes.c_uint32, []),
    "ra_version_string": (c_char_p, []),
    "ra_status_name": (c_char_p, [c_int]),
    "ra_error_clear": (None, [P(RaError)]),
    "ra_error_format": (c_size_t, [P(RaError), c_char_p, c_size_t]),
    "ra_options_init": (None, [P(RaOptions)]),
    "ra_options_add": (c_bool, [P(RaOptions), c_char_p, c_char_p]),
    "ra_format_count": (c_size_t, []),
    "ra_format_at": (c_void_p, [c_size_t]),
    "ra_format_find": (c_void_p, [c_char_p]),
    "ra_format_id": (c_char_p, [c_void_p]),
    "ra_format_name": (c_char_p, [c_void_p]),
    "ra_format_extensions": (c_char_p, [c_void_p]),
    "ra_format_detection": (c_char_p, [c_void_p]),
    "ra_format_is_archive": (c_bool, [c_void_p]),
    "ra_document_load": (c_int, [c_char_p, c_size_t, c_char_p, P(RaOptions), P(c_void_p), P(RaError)]),
    "ra_document_load_file": (c_int, [c_char_p, P(RaOptions), P(c_void_p), P(RaError)]),
    "ra_document_free": (None, [c_void_p]),
    "ra_document_format": (c_void_p, [c_void_p]),
    "ra_document_scene": (P(RaScene), [c_void_p]),
    "ra_document_pose": (c_int, [c_void_p, c_size_t, c_double, P(c_double), P(RaError)]),
    "ra_document_dump": (c_int, [c_void_p, c_int, P(ctypes.c_void_p), P(c_size_t), P(RaError)]),
    "ra_string_free": (None, [c_void_p]),
    "ra_gltf_write": (c_int, [P(RaScene), c_char_p, c_void_p, c_void_p, P(RaError)]),
    "ra_fbx_write": (c_int, [P(RaScene), c_char_p, c_void_p, c_void_p, P(RaError)]),
    "ra_archive_open": (c_int, [c_char_p, c_size_t, P(RaOptions), P(P(RaArchive)), P(RaError)]),
    "ra_archive_free": (None, [P(RaArchive)]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args
