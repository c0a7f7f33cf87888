"""File > Import > Classic game animation: LEGO Island, Metroid Prime, World of
Goo, Nintendo 64 NIFF and Homeworld animations (and the .SI and .pak archives
that hold them), played by the games' own rules.

The add-on carries retroanim's Python package and its shared library.  It
builds the scene directly (not through a glTF file and Blender's glTF
importer): the nodes become empties (a Metroid Prime skeleton becomes an
armature), every animation becomes one action per animated object in an NLA
track named after the animation (the first one active), cameras become
camera objects with the game's field of view and clip planes, metadata
become custom properties, and the scene's frame rate and range are set so
the animation plays at the game's speed.

Geometry (today from NIFF files): every retroanim mesh becomes a mesh object
parented to its node's empty (or bone) with an identity parent inverse, so
its vertices are in the node's space and it follows the node's animation:
triangles, custom split normals, a "UVMap" layer (v flipped to Blender's
bottom-left origin), a "Color" colour attribute (the values as they are,
as glTF's COLOR_0); a mesh is shown and hidden with its node's visibility
steps.  Materials become
Principled BSDF node trees (an Emission shader when unlit): base colour
factor x texture x vertex colour, alpha mode as blend method (CLIP with the
cutoff for MASK), backface culling unless double-sided (a material used by
meshes with and without colours is made twice, the second NAME.vertex_colors,
since a missing colour attribute would read black); textures become
packed images with the texture's sampling (Closest when nearest) and wrap
(Blender 3.4's Image Texture node has no mirrored repeat, and one extension
for both axes: wraps that differ per axis or mirror are made with Wrap and
Ping-Pong math on the UVs).

A skinned mesh (its vertices at rest in the scene's world frame) sits under
the root at the scene's world frame with an Armature modifier and one vertex
group per joint of its skin holding the weights.  Every skin a mesh uses
becomes an armature (NAME.skin, also under the root at the scene's world
frame) with one unparented bone per joint, at the joint's rest world
position and turned as the joint (a short bone along its local Y), moved by
a Child Of constraint on the joint's object (or bone) whose inverse undoes
the joint's rest world matrix: the bone deforms by jointWorld(t) x
inverse(jointRestWorld), the library's skinning, whatever scale or shear the
joint's rest holds (a bone's rest can hold none), and the whole follows the
root when it is moved.

Building directly needs no temporary file and no numpy (Debian's Blender 3.4
glTF importer needs a numpy the system may not lend it), and measured on a
generated LEGO Island file of 200 nodes and 70,461 keys in Blender 3.4.1 it
takes 0.43-0.66 s, against 0.52-0.82 s for Blender's glTF importer on the
same animation as a .glb (before counting the time to write the .glb)."""

bl_info = {
    "name": "retroanim: classic game animations",
    "author": "retroanim",
    "version": (0, 2, 0),
    "blender": (3, 4, 0),
    "location": "File > Import > Classic game animation",
    "description": "LEGO Island .ani/.SI, Metroid Prime ANIM/CINF/.pak, World of Goo .binltl, N64 NIFF, Homeworld .mad",
    "category": "Import-Export",
}

import math
import os

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Matrix, Quaternion, Vector

try:
    from . import retroanim
except ImportError as e:  # the shared library could not be loaded: said when the operator runs
    retroanim = None
    _IMPORT_ERROR = str(e)

EXTENSIONS = ("*.ani;*.anim;*.ANIM;*.cinf;*.CINF;*.cmdl;*.CMDL;*.binltl;*.binltl64;*.binuni;*.binbig;*.niff;*.nif;"
              "*.mad;*.MAD;*.si;*.SI;*.pak;*.PAK;*.big;*.BIG;*.wdb;*.WDB")
# the scene is right-handed, Y up; Blender is Z up: (x, y, z) -> (x, -z, y)
Y_UP_TO_Z_UP = Matrix(((1, 0, 0, 0), (0, 0, -1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))

_archive_items = []  # Blender needs the enum items kept alive


def _matrix(m16):
    return Matrix((m16[0:4], m16[4:8], m16[8:12], m16[12:16]))


def _is_archive(path):
    return path.lower().endswith((".si", ".pak", ".big"))


def _animation_items(self, context):
    global _archive_items
    items = [("FIRST", "(the first)", "The archive's first animation")]
    path = bpy.path.abspath(self.filepath) if self.filepath else ""
    if retroanim and _is_archive(path) and os.path.isfile(path):
        try:
            for it in retroanim.list_archive(path):
                label = "%s (%s)" % (it["name"], it["id"])
                items.append((str(it["id"]), label, it["kind"]))
        except retroanim.Error:
            pass
    _archive_items = items
    return items


def _frame_rate(doc):
    """The native rate where it is a whole number of frames per second Blender
    can show (10..240), else 30; keys land on fractional frames either way."""
    for a in doc.animations:
        r = a.ticks_per_second
        if 10 <= r <= 240 and abs(r - round(r)) < 1e-9:
            return int(round(r))
    return 30


def _set_props(idb, meta):
    """Metadata as custom properties (Blender's integers are 32-bit: larger
    ones are kept as text)."""
    for k, v in meta.items():
        key = k[:63]
        if isinstance(v, int) and not isinstance(v, bool) and not -2**31 <= v < 2**31:
            idb[key] = str(v)
        elif isinstance(v, (bool, int, float, str)):
            idb[key] = v
        elif isinstance(v, list) and all(isinstance(x, (int, float)) for x in v):
            idb[key] = [float(x) for x in v]
        else:
            idb[key] = str(v)


_IPO = {"CONSTANT": 0, "LINEAR": 1}
UV_LAYER = "UVMap"
COLOR_LAYER = "Color"


def _fcurve(action, path, index, keys, group, interpolation="LINEAR"):
    fc = action.fcurves.new(path, index=index, action_group=group)
    fc.keyframe_points.add(len(keys))
    flat = [c for k in keys for c in k]
    fc.keyframe_points.foreach_set("co", flat)
    # the enum's values: CONSTANT 0, LINEAR 1 (Blender's BEZT_IPO_*)
    fc.keyframe_points.foreach_set("interpolation", [_IPO[interpolation]] * len(keys))
    fc.update()
    return fc


def _track_keys(keys, fps, comp, offset=0.0):
    """[(frame, value)] of component comp (1-based in the key: 0 is the time)."""
    return [(k[0] * fps, k[comp] - offset) for k in keys]


class _Builder:
    def __init__(self, context, doc, name):
        self.context = context
        self.doc = doc
        self.fps = _frame_rate(doc)
        self.collection = bpy.data.collections.new(name)
        context.scene.collection.children.link(self.collection)
        self.objects = []  # per node: the object that carries it (an empty, a camera, or the armature)
        self.bones = {}  # node index -> pose bone name
        self.armature = None
        self.rest = {}  # bone node index -> its rest translation
        self.mesh_objects = []  # (node index, object) per retroanim mesh
        self.skin_armatures = {}  # skin index -> (armature object, bone name per joint)
        self.warnings = []  # what the import could not carry over

    # -- nodes
    def _joints(self):
        """The nodes an armature carries: a Metroid Prime skeleton's bones
        (metadata metroid.bone_id) whose rest pose is a pure translation (the
        bones' axes stay the armature's) and whose parent is a bone or the root."""
        joints = set()
        for i, n in enumerate(self.doc.nodes):
            if i == 0 or "metroid.bone_id" not in n.metadata:
                continue
            t, r, s = _matrix(n.transform).decompose()
            if abs(r.angle) < 1e-9 and all(abs(x - 1) < 1e-9 for x in s) and \
                    (n.parent == 0 or n.parent in joints):
                joints.add(i)
        return joints

    def _object(self, i, data=None):
        n = self.doc.nodes[i]
        obj = bpy.data.objects.new(n.name, data)
        if data is None:
            obj.empty_display_size = 0.1
        obj.rotation_mode = "QUATERNION"
        self.collection.objects.link(obj)
        basis = _matrix(n.transform)
        if n.parent in self.bones:  # under a bone: at its head, not its tail
            obj.parent = self.armature
            obj.parent_type = "BONE"
            obj.parent_bone = self.bones[n.parent]
            obj.matrix_parent_inverse = Matrix.Translation((0, -self.armature.data.bones[obj.parent_bone].length, 0))
        elif n.parent >= 0:
            obj.parent = self.objects[n.parent]
        obj.matrix_basis = Y_UP_TO_Z_UP @ basis if i == 0 else basis
        obj["retroanim_node"] = n.name
        _set_props(obj, n.metadata)
        return obj

    def nodes(self):
        doc = self.doc
        cams = {c.name: c for c in doc.cameras}
        joints = self._joints()
        self.objects = [None] * len(doc.nodes)
        self.objects[0] = self._object(0)
        if joints:
            self._armature(joints)
        for i, n in enumerate(doc.nodes):
            if i == 0 or i in joints:
                continue
            cam = cams.get(n.name)
            aligned = cam is not None and self._camera_is_node_aligned(cam)
            self.objects[i] = self._object(i, self._camera_data(cam, n.name) if aligned else None)
            if cam is not None and not aligned:
                self._camera_child(cam, self.objects[i])
        _set_props(self.objects[0], doc.metadata)
        self.objects[0]["retroanim_warnings"] = "\n".join(doc.warnings)

    def _armature(self, joints):
        doc = self.doc
        arm = bpy.data.armatures.new(doc.nodes[0].name + ".skeleton")
        obj = bpy.data.objects.new(doc.nodes[0].name + ".skeleton", arm)
        self.collection.objects.link(obj)
        obj.parent = self.objects[0]
        self.armature = obj
        self.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="EDIT")
        heads = {}
        order = sorted(joints)  # pre-order: parents first
        for i in order:
            n = doc.nodes[i]
            heads[i] = heads.get(n.parent, Vector((0, 0, 0))) + _matrix(n.transform).to_translation()
            eb = arm.edit_bones.new(n.name)
            eb.head = heads[i]
            eb.tail = heads[i] + Vector((0, 0.05, 0))
            eb.roll = 0
            if n.parent in self.bones:
                eb.parent = arm.edit_bones[self.bones[n.parent]]
            self.bones[i] = eb.name
        bpy.ops.object.mode_set(mode="OBJECT")
        self.rest = {}
        for i in order:
            pb = obj.pose.bones[self.bones[i]]
            pb.rotation_mode = "QUATERNION"
            pb["retroanim_node"] = doc.nodes[i].name
            _set_props(pb, doc.nodes[i].metadata)
            self.objects[i] = obj
            self.rest[i] = _matrix(doc.nodes[i].transform).to_translation()

    # -- cameras
    @staticmethod
    def _camera_is_node_aligned(cam):
        return (max(abs(x) for x in cam.position) < 1e-9 and
                abs(cam.look_at[2] + 1) < 1e-9 and abs(cam.look_at[0]) < 1e-9 and abs(cam.look_at[1]) < 1e-9 and
                abs(cam.up[1] - 1) < 1e-9 and abs(cam.up[0]) < 1e-9 and abs(cam.up[2]) < 1e-9)

    def _camera_data(self, cam, name):
        data = bpy.data.cameras.new(name)
        data.sensor_fit = "HORIZONTAL"
        data.angle_x = min(max(2 * cam.horizontal_fov, 1e-4), math.pi - 1e-4)
        if cam.orthographic:  # the view's width (sensor_fit horizontal)
            data.type = "ORTHO"
            data.ortho_scale = 2 * cam.ortho_xmag
        data.clip_start = cam.near
        data.clip_end = cam.far
        scene = self.context.scene
        if cam.aspect > 0:
            scene.render.resolution_y = 1080
            scene.render.resolution_x = max(4, int(round(1080 * cam.aspect)))
        return data

    def _camera_child(self, cam, node_obj):
        """A camera whose view is not the node's -Z: a child turned to it."""
        data = self._camera_data(cam, cam.name + ".camera")
        obj = bpy.data.objects.new(cam.name + ".camera", data)
        self.collection.objects.link(obj)
        obj.parent = node_obj
        view = (Vector(cam.look_at) - Vector(cam.position)).normalized()
        up = Vector(cam.up)
        right = view.cross(up).normalized()
        up = right.cross(view).normalized()
        m = Matrix((right, up, -view)).transposed().to_4x4()
        m.translation = Vector(cam.position)
        obj.matrix_basis = m

    # -- geometry
    def geometry(self):
        """One mesh object per retroanim mesh, parented to its node's object
        (or bone) with an identity parent inverse: its vertices are in the
        node's space and follow the node's animation.  A skinned mesh sits
        under the root at the scene's world frame, deformed by its skin's
        armature."""
        doc = self.doc
        if not doc.meshes:
            return
        index = {n.name: k for k, n in enumerate(doc.nodes)}
        materials = {m.name: m for m in doc.materials}
        textures = {t.name: t for t in doc.textures}
        images = {}
        # a material used with and without vertex colours becomes two: "NAME" and "NAME.vertex_colors"
        variants = {}
        for m in doc.meshes:
            variants.setdefault(m.material, set()).add(m.colors is not None)
        blender_mats = {}
        skipped = 0
        for m in doc.meshes:
            data, dropped = self._mesh_data(m)
            skipped += dropped
            key = (m.material, m.colors is not None)
            if key not in blender_mats and (m.material is not None or m.colors is not None):
                mat = materials.get(m.material)
                name = m.material if m.material is not None else "retroanim vertex colours"
                if m.colors is not None and len(variants[m.material]) > 1:
                    name += ".vertex_colors"
                blender_mats[key] = self._material(name, mat, m.colors is not None, textures, images)
            if key in blender_mats:
                data.materials.append(blender_mats[key])
            obj = bpy.data.objects.new(m.name, data)
            self.collection.objects.link(obj)
            obj["retroanim_mesh"] = m.name
            i = index[m.node]
            if m.skin >= 0:  # vertices in the scene's frame at rest: under the root, undoing its transform
                obj.parent = self.objects[0]
                obj.matrix_parent_inverse = _matrix(doc.nodes[0].transform).inverted_safe()
                self._skin_mesh(obj, m)
            elif i in self.bones:  # a bone's child hangs at its tail: back to its head
                obj.parent = self.armature
                obj.parent_type = "BONE"
                obj.parent_bone = self.bones[i]
                obj.matrix_parent_inverse = Matrix.Translation(
                    (0, -self.armature.data.bones[obj.parent_bone].length, 0))
            else:
                obj.parent = self.objects[i]
                obj.matrix_parent_inverse = Matrix.Identity(4)
            obj.matrix_basis = Matrix.Identity(4)
            self.mesh_objects.append((i, obj))
        if skipped:
            self.warnings.append("%d triangle(s) that repeat a vertex left out (Blender has no such faces)" % skipped)

    def _rest_worlds(self):
        """Every node's rest world matrix in the scene's frame (nodes[0]'s
        transform included)."""
        out = []
        for n in self.doc.nodes:
            local = _matrix(n.transform)
            out.append(out[n.parent] @ local if n.parent >= 0 else local)
        return out

    def _skin_armature(self, k):
        """The armature of skin k: at the scene's world frame under the root,
        one unparented bone per joint at the joint's rest world position and
        turned as the joint, each driven by a Child Of constraint on the
        joint's object (or bone) whose inverse undoes the joint's rest world
        matrix: the pose bone's matrix is then
        jointWorld(t) x inverse(jointRestWorld) x boneRest, so the Armature
        modifier moves a vertex by jointWorld(t) x inverse(jointRestWorld),
        exactly, whatever the joint's rest scale (a bone's rest has none)."""
        if k in self.skin_armatures:
            return self.skin_armatures[k]
        doc = self.doc
        skin = doc.skins[k]
        index = {n.name: i for i, n in enumerate(doc.nodes)}
        rest = self._rest_worlds()
        # bone length: a twentieth of the skin's meshes' size
        pts = [p for m in doc.meshes if m.skin == k for p in m.positions]
        size = max([max(p[c] for p in pts) - min(p[c] for p in pts) for c in range(3)] if pts else [0.0])
        length = 0.05 * size if size > 1e-6 else 0.05
        name = (skin.name or doc.nodes[0].name) + ".skin"
        arm = bpy.data.armatures.new(name)
        obj = bpy.data.objects.new(name, arm)
        self.collection.objects.link(obj)
        obj.parent = self.objects[0]  # at the scene's world frame, as the skinned meshes
        obj.matrix_parent_inverse = _matrix(doc.nodes[0].transform).inverted_safe()
        obj.matrix_basis = Matrix.Identity(4)
        obj["retroanim_skin"] = skin.name
        prev_active = self.context.view_layer.objects.active
        self.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="EDIT")
        names = []
        for j in skin.joints:
            r = rest[index[j]]
            t, q, _s = r.decompose()
            if not all(math.isfinite(x) for x in (*t, *q)) or abs(q.magnitude) < 1e-9:
                q = Quaternion()
            eb = arm.edit_bones.new(j)
            eb.head = (0, 0, 0)
            eb.tail = (0, length, 0)
            eb.matrix = Matrix.Translation(t) @ q.normalized().to_matrix().to_4x4()
            names.append(eb.name)
        bpy.ops.object.mode_set(mode="OBJECT")
        self.context.view_layer.objects.active = prev_active
        for j, bone in zip(skin.joints, names):
            i = index[j]
            pb = obj.pose.bones[bone]
            pb["retroanim_joint"] = j
            con = pb.constraints.new("CHILD_OF")
            con.name = "retroanim joint"
            if i in self.bones:
                con.target = self.armature
                con.subtarget = self.bones[i]
            else:
                con.target = self.objects[i]
            # as Blender's Set Inverse makes it for a bone (the constraint works in pose space): the
            # inverse of the target's rest world matrix, times the armature's world matrix; the target
            # rests at Y_UP_TO_Z_UP x rest, the armature at Y_UP_TO_Z_UP: inverse(rest)
            con.inverse_matrix = rest[i].inverted_safe()
        self.skin_armatures[k] = (obj, names)
        return obj, names

    def _skin_mesh(self, obj, m):
        """Vertex groups named after the skin's bones with the mesh's weights,
        and an Armature modifier on the skin's armature."""
        arm, names = self._skin_armature(m.skin)
        groups = [obj.vertex_groups.new(name=b) for b in names]
        per_joint = [{} for _ in names]  # joint -> {vertex: weight} (a joint named twice: its weights summed)
        for v, (js, ws) in enumerate(zip(m.joints, m.weights)):
            for j, w in zip(js, ws):
                if w > 0:
                    per_joint[j][v] = per_joint[j].get(v, 0.0) + w
        for g, weights in zip(groups, per_joint):
            by_weight = {}
            for v, w in weights.items():
                by_weight.setdefault(w, []).append(v)
            for w, verts in by_weight.items():
                g.add(verts, w, "REPLACE")
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = arm
        mod.use_vertex_groups = True
        mod.use_bone_envelopes = False
        mod.use_deform_preserve_volume = False

    @staticmethod
    def _mesh_data(m):
        """The Blender mesh of a retroanim mesh: its vertices, its triangles
        (but those that repeat a vertex), normals, UVs and colours."""
        me = bpy.data.meshes.new(m.name)
        _set_props(me, m.metadata)
        me["retroanim_mesh"] = m.name
        tris = [t for t in m.indices if t[0] != t[1] and t[1] != t[2] and t[0] != t[2]]
        corners = [v for t in tris for v in t]
        me.vertices.add(m.vertex_count)
        me.vertices.foreach_set("co", [c for p in m.positions for c in p])
        me.loops.add(len(corners))
        me.loops.foreach_set("vertex_index", corners)
        me.polygons.add(len(tris))
        me.polygons.foreach_set("loop_start", range(0, len(corners), 3))
        me.polygons.foreach_set("loop_total", [3] * len(tris))
        me.update(calc_edges=True)
        if m.uvs is not None:
            uv = me.uv_layers.new(name=UV_LAYER)
            uv.data.foreach_set("uv", [c for v in corners for c in (m.uvs[v][0], 1.0 - m.uvs[v][1])])
        if m.colors is not None:
            ca = me.color_attributes.new(COLOR_LAYER, "FLOAT_COLOR", "POINT")
            ca.data.foreach_set("color", [c for col in m.colors for c in col])
            me.color_attributes.active_color = ca
        if m.normals is not None:
            me.polygons.foreach_set("use_smooth", [True] * len(tris))
            me.use_auto_smooth = True
            me.auto_smooth_angle = math.pi
            me.normals_split_custom_set_from_vertices(m.normals)
        me.update()
        return me, len(m.indices) - len(tris)

    def _image(self, tex, images):
        """The texture as a packed image (Blender's rows start at the bottom)."""
        img = images.get(tex.name)
        if img is not None:
            return img
        w, h = tex.width, tex.height
        img = bpy.data.images.new(tex.name, w, h, alpha=True)
        row = 4 * w
        flipped = b"".join(tex.rgba[(h - 1 - r) * row:(h - r) * row] for r in range(h))
        img.pixels.foreach_set([b / 255.0 for b in flipped])
        img.pack()
        img["retroanim_texture"] = tex.name
        if tex.source_format:
            img["retroanim_source_format"] = tex.source_format
        img["retroanim_wrap"] = "%s,%s" % (tex.wrap_s, tex.wrap_t)
        images[tex.name] = img
        return img

    def _image_node(self, nt, tex, images):
        """An Image Texture node with the texture's sampling and wrap."""
        nodes, links = nt.nodes, nt.links
        node = nodes.new("ShaderNodeTexImage")
        node.image = self._image(tex, images)
        node.interpolation = "Closest" if tex.nearest else "Linear"
        node.location = (-700, 300)
        simple = {"REPEAT": "REPEAT", "CLAMP": "EXTEND"}
        if tex.wrap_s == tex.wrap_t and tex.wrap_s in simple:
            node.extension = simple[tex.wrap_s]
            return node
        # per-axis wrap, or mirrored repeat (not in Blender 3.4): math on the UVs, the image clamped
        node.extension = "EXTEND"
        uv = nodes.new("ShaderNodeUVMap")
        uv.uv_map = UV_LAYER
        uv.location = (-1300, 300)
        sep = nodes.new("ShaderNodeSeparateXYZ")
        sep.location = (-1120, 300)
        comb = nodes.new("ShaderNodeCombineXYZ")
        comb.location = (-880, 300)
        links.new(uv.outputs["UV"], sep.inputs[0])
        for axis, wrap in ((0, tex.wrap_s), (1, tex.wrap_t)):
            src = sep.outputs[axis]
            if wrap != "CLAMP":
                op = nodes.new("ShaderNodeMath")
                op.location = (-1000, 400 - 200 * axis)
                if wrap == "MIRROR":
                    op.operation = "PINGPONG"
                    op.inputs[1].default_value = 1.0
                else:
                    op.operation = "WRAP"
                    op.inputs[1].default_value = 1.0
                    op.inputs[2].default_value = 0.0
                links.new(src, op.inputs[0])
                src = op.outputs[0]
            links.new(src, comb.inputs[axis])
        links.new(comb.outputs[0], node.inputs["Vector"])
        return node

    def _material(self, name, mat, colored, textures, images):
        """A node material: base colour factor x texture x vertex colour into a
        Principled BSDF (an Emission shader when unlit), with the alpha mode."""
        bm = bpy.data.materials.new(name)
        bm["retroanim_material"] = mat.name if mat else ""
        if mat:
            _set_props(bm, mat.metadata)
        bm.use_nodes = True
        nt = bm.node_tree
        nodes, links = nt.nodes, nt.links
        nodes.clear()
        out = nodes.new("ShaderNodeOutputMaterial")
        out.location = (400, 0)
        factor = tuple(mat.base_color) if mat else (1.0, 1.0, 1.0, 1.0)
        alpha_mode = mat.alpha_mode if mat else "OPAQUE"
        color = alpha = None  # sockets: the colour and alpha so far
        y = 300

        def mul_color(a, b_socket=None, b_value=None):
            mix = nodes.new("ShaderNodeMixRGB")
            mix.blend_type = "MULTIPLY"
            mix.inputs["Fac"].default_value = 1.0
            mix.location = (-250, y)
            links.new(a, mix.inputs["Color1"])
            if b_socket is not None:
                links.new(b_socket, mix.inputs["Color2"])
            else:
                mix.inputs["Color2"].default_value = b_value
            return mix.outputs["Color"]

        def mul_alpha(a, b_socket=None, b_value=None):
            op = nodes.new("ShaderNodeMath")
            op.operation = "MULTIPLY"
            op.location = (-250, y - 150)
            links.new(a, op.inputs[0])
            if b_socket is not None:
                links.new(b_socket, op.inputs[1])
            else:
                op.inputs[1].default_value = b_value
            return op.outputs[0]

        if mat and mat.texture:
            img = self._image_node(nt, textures[mat.texture], images)
            color, alpha = img.outputs["Color"], img.outputs["Alpha"]
        if colored:
            vc = nodes.new("ShaderNodeVertexColor")
            vc.layer_name = COLOR_LAYER
            vc.location = (-700, -100)
            color = vc.outputs["Color"] if color is None else mul_color(color, vc.outputs["Color"])
            y -= 300
            alpha = vc.outputs["Alpha"] if alpha is None else mul_alpha(alpha, vc.outputs["Alpha"])
            y -= 300
        rgb = (factor[0], factor[1], factor[2], 1.0)
        if color is not None and rgb != (1.0, 1.0, 1.0, 1.0):
            color = mul_color(color, b_value=rgb)
            y -= 300
        if alpha is not None and factor[3] != 1.0:
            alpha = mul_alpha(alpha, b_value=factor[3])
        see_through = alpha_mode != "OPAQUE"
        if mat and mat.unlit:
            shader = nodes.new("ShaderNodeEmission")
            shader.inputs["Strength"].default_value = 1.0
            shader.location = (0, 0)
            if color is not None:
                links.new(color, shader.inputs["Color"])
            else:
                shader.inputs["Color"].default_value = rgb
            result = shader.outputs[0]
            if see_through:
                mix = nodes.new("ShaderNodeMixShader")
                mix.location = (200, 0)
                clear = nodes.new("ShaderNodeBsdfTransparent")
                clear.location = (0, -150)
                if alpha is not None:
                    links.new(alpha, mix.inputs["Fac"])
                else:
                    mix.inputs["Fac"].default_value = factor[3]
                links.new(clear.outputs[0], mix.inputs[1])
                links.new(result, mix.inputs[2])
                result = mix.outputs[0]
            links.new(result, out.inputs["Surface"])
        else:
            bsdf = nodes.new("ShaderNodeBsdfPrincipled")
            bsdf.location = (0, 0)
            bsdf.inputs["Metallic"].default_value = 0.0  # as the glTF writer: metallic 0, roughness 1
            bsdf.inputs["Roughness"].default_value = 1.0
            if color is not None:
                links.new(color, bsdf.inputs["Base Color"])
            else:
                bsdf.inputs["Base Color"].default_value = rgb
            if see_through:
                if alpha is not None:
                    links.new(alpha, bsdf.inputs["Alpha"])
                else:
                    bsdf.inputs["Alpha"].default_value = factor[3]
            links.new(bsdf.outputs[0], out.inputs["Surface"])
        if alpha_mode == "MASK":
            bm.blend_method = "CLIP"
            bm.shadow_method = "CLIP"
            bm.alpha_threshold = mat.alpha_cutoff
        elif alpha_mode == "BLEND":
            bm.blend_method = "BLEND"
            bm.shadow_method = "HASHED"
            bm.show_transparent_back = False
        else:
            bm.blend_method = "OPAQUE"
        bm.use_backface_culling = not (mat and mat.double_sided)
        bm.diffuse_color = factor  # the viewport's solid colour
        return bm

    # -- animations
    def _rest_keys(self, i):
        """A node's rest pose as one key per track: (position, rotation, scaling)
        in the channels' layout [t, ...]; a bone's pose is relative to its rest."""
        if i in self.bones:
            return [[0, *self.rest[i]]], [[0, 1, 0, 0, 0]], [[0, 1, 1, 1]]
        t, r, s = _matrix(self.doc.nodes[i].transform).decompose()
        return [[0, *t]], [[0, r.w, r.x, r.y, r.z]], [[0, *s]]

    def animations(self):
        """One action per animation on every object it moves.  Each action keys
        every track of every node any animation moves (a track this animation
        leaves alone holds the rest value), so switching actions never leaves
        a node where another animation put it."""
        doc = self.doc
        fps = self.fps
        index = {n.name: k for k, n in enumerate(doc.nodes)}
        moved = {}  # object -> node indices any animation moves
        shown = set()  # objects any animation shows and hides
        meshes_on = {}  # node index -> its mesh objects (shown and hidden with it)
        for i, obj in self.mesh_objects:
            meshes_on.setdefault(i, []).append(obj)
        for an in doc.animations:
            for ch in an.channels:
                i = index[ch.node]
                moved.setdefault(self.objects[i], set()).add(i)
            for name in an.visibility:
                i = index[name]
                targets = ([] if i in self.bones else [self.objects[i]]) + meshes_on.get(i, [])
                for obj in targets:
                    shown.add(obj)
                    moved.setdefault(obj, set())
        for ai, an in enumerate(doc.animations):
            chans = {index[ch.node]: ch for ch in an.channels}
            vis = {}
            for n, keys in an.visibility.items():
                i = index[n]
                for obj in ([] if i in self.bones else [self.objects[i]]) + meshes_on.get(i, []):
                    vis[obj] = keys
            for obj, nodes in moved.items():
                action = bpy.data.actions.new("%s|%s" % (an.name, obj.name))
                action["retroanim_animation"] = an.name
                for i in sorted(nodes):
                    self._node_curves(action, i, chans.get(i))
                if obj in shown:  # hidden while a step says so (shown where this animation has none)
                    keys = vis.get(obj) or [[0.0, True]]
                    steps = [(t * fps, 0.0 if v else 1.0) for t, v in keys]
                    if steps[0][0] > 0:
                        steps.insert(0, (0.0, 0.0))
                    for path in ("hide_viewport", "hide_render"):
                        _fcurve(action, path, 0, steps, "visibility", "CONSTANT")
                # every animation an NLA track of its own (muted: the first
                # animation's action is the active one, so it plays alone)
                ad = obj.animation_data or obj.animation_data_create()
                track = ad.nla_tracks.new()
                track.name = an.name
                track.strips.new(an.name, 0, action)
                track.mute = True
                if ai == 0:
                    ad.action = action
        dur = max([a.duration for a in doc.animations] or [0])
        scene = self.context.scene
        scene.render.fps = fps
        scene.render.fps_base = 1
        scene.frame_start = 0
        scene.frame_end = max(1, int(math.ceil(dur * fps - 1e-9)))

    def _node_curves(self, action, i, ch):
        fps = self.fps
        rest_p, rest_r, rest_s = self._rest_keys(i)
        pos = ch.position if ch and ch.position else rest_p
        rot = ch.rotation if ch and ch.rotation else rest_r
        scl = ch.scaling if ch and ch.scaling else rest_s
        if i in self.bones:
            base = 'pose.bones["%s"].' % bpy.utils.escape_identifier(self.bones[i])
            group = self.bones[i]
            origin = self.rest[i]  # the pose moves the bone from its rest position
        else:
            base, group, origin = "", self.doc.nodes[i].name[:63], (0, 0, 0)
        for c in range(3):
            _fcurve(action, base + "location", c, _track_keys(pos, fps, c + 1, origin[c]), group)
        for c in range(4):
            _fcurve(action, base + "rotation_quaternion", c, _track_keys(rot, fps, c + 1), group)
        for c in range(3):
            _fcurve(action, base + "scale", c, _track_keys(scl, fps, c + 1), group)


def parse_options(text):
    """"k=v;k=v" (or ','-separated; a backslash makes the next character
    literal) as a dict; the library checks the keys and values."""
    out, key, cur, esc = {}, None, "", False
    for ch in text + ";":
        if esc:
            cur, esc = cur + ch, False
        elif ch == "\\":
            esc = True
        elif ch == "=" and key is None:
            key, cur = cur.strip(), ""
        elif ch in ";,":
            if key:
                out[key] = cur
            elif cur.strip():
                raise ValueError("option %r is not KEY=VALUE" % cur.strip())
            key, cur = None, ""
        else:
            cur += ch
    return out


def import_file(context, path, animation="", cinf="", coords="converted", all_animations=False, extra="",
                warnings=None):
    """Imports one file (every animation of an archive with all_animations).
    Returns the names of the collections made; raises retroanim.Error.  What
    could not be carried over is appended to the list warnings."""
    if retroanim is None:
        raise RuntimeError("retroanim's library could not be loaded: " + _IMPORT_ERROR)
    options = parse_options(extra) if extra else {}
    options["coords"] = coords
    if cinf:
        options["cinf"] = bpy.path.abspath(cinf)
    if animation == "FIRST":
        animation = ""
    runs = [animation or None]
    if _is_archive(path) and all_animations:
        runs = [str(it["id"]) for it in retroanim.list_archive(path)]
    made = []
    for which in runs:
        opts = dict(options)
        if which is not None and _is_archive(path):
            opts["animation"] = which
        with retroanim.load(path, **opts) as doc:
            name = os.path.basename(path)
            if _is_archive(path):
                name += ":" + str(doc.metadata.get("archive.item_name", which))
            b = _Builder(context, doc, name)
            b.nodes()
            b.geometry()
            b.animations()
            if b.warnings:
                root = b.objects[0]
                root["retroanim_import_warnings"] = "\n".join(b.warnings)
                if warnings is not None:
                    warnings += ["%s: %s" % (name, w) for w in b.warnings]
            made.append(b.collection.name)
    return made


class IMPORT_SCENE_OT_retroanim(bpy.types.Operator, ImportHelper):
    """Import a classic game animation (LEGO Island, Metroid Prime, World of Goo, NIFF, Homeworld)"""
    bl_idname = "import_scene.retroanim"
    bl_label = "Import Classic Game Animation"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filter_glob: StringProperty(default=EXTENSIONS, options={"HIDDEN"})
    animation: EnumProperty(name="Animation", description="The animation of a .SI, .pak or .big archive",
                            items=_animation_items)
    all_animations: BoolProperty(name="All animations", default=False,
                                 description="Every animation of an archive, each in its own collection")
    cinf: StringProperty(name="Skeleton (CINF)", subtype="FILE_PATH", default="",
                         description="Metroid Prime: the skeleton of an ANIM (default: found beside it)")
    extra_options: StringProperty(name="Options", default="",
                                  description="More retroanim options, KEY=VALUE;KEY=VALUE (e.g. sample_rate=240 "
                                              "for Homeworld, max_key_angle=30); an unknown key is reported")
    coords: EnumProperty(name="Frame", default="converted",
                         items=[("converted", "Converted", "Right-handed, Y up (then turned Z up for Blender)"),
                                ("native", "Native", "The game's own frame and values")])

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "coords")
        box = layout.box()
        box.label(text="Archives (.SI, .pak, .big)")
        box.prop(self, "animation")
        box.prop(self, "all_animations")
        layout.prop(self, "cinf")
        layout.prop(self, "extra_options")

    def execute(self, context):
        warnings = []
        try:
            made = import_file(context, self.filepath, self.animation, self.cinf, self.coords, self.all_animations,
                               self.extra_options, warnings)
        except Exception as e:  # the library's message, never a traceback
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        for w in warnings:
            self.report({"WARNING"}, w)
        self.report({"INFO"}, "Imported " + ", ".join(made))
        return {"FINISHED"}


def _menu(self, context):
    self.layout.operator(IMPORT_SCENE_OT_retroanim.bl_idname,
                         text="Classic game animation (.ani .anim .binltl .niff .mad .si .pak .big)")


def register():
    bpy.utils.register_class(IMPORT_SCENE_OT_retroanim)
    bpy.types.TOPBAR_MT_file_import.append(_menu)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(_menu)
    bpy.utils.unregister_class(IMPORT_SCENE_OT_retroanim)
