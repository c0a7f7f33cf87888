# The job loop both Blender samplers share (blender_sample.py for glTF,
# blender_fbx_sample.py for FBX): read JOBS.json (the arguments after "--"),
# play each job with the sampler's play(job), write OUT.json; a job that
# raises is reported with its traceback instead of ending the run.
#
# Also the mesh report both give: for each scene mesh (a glTF primitive, an
# FBX Mesh model), its polygons, vertices and texture as Blender holds them,
# whether Blender skins it (an Armature modifier on its object), and at
# MESH_TIMES of the sample times the world positions of its vertices and of
# its first polygon's corners, in the file's frame (Y up).  Positions are
# those of the evaluated mesh (the depsgraph's, modifiers applied: what
# Blender draws and renders), so a skinned mesh is reported as its Armature
# modifier deforms it at that frame; the modifier keeps the vertex order.
import json
import sys
import traceback

A_INV = None  # Blender (Z up) -> file (Y up), set on first use (mathutils is Blender's)


def run_jobs(play):
    argv = sys.argv[sys.argv.index("--") + 1:]
    jobs = json.load(open(argv[0]))
    results = []
    for job in jobs:
        try:
            results.append(play(job))
        except Exception:
            results.append({"file": job["file"], "error": traceback.format_exc(), "anims": []})
    with open(argv[1], "w") as f:
        json.dump(results, f)


def mesh_times(times):
    """The indices of the sample times the meshes are reported at: the first and the middle one."""
    return sorted({0, len(times) // 2}) if times else []


def _a_inv():
    global A_INV
    if A_INV is None:
        from mathutils import Matrix
        A_INV = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1)))
    return A_INV


def material_image(mat):
    """The image of a material's first Image Texture node (the importers' base colour map)."""
    if mat is None or not mat.use_nodes or mat.node_tree is None:
        return None
    for n in mat.node_tree.nodes:
        if n.type == "TEX_IMAGE" and n.image is not None:
            return n.image
    return None


def image_info(image, max_texels=4096):
    """{width, height, texel, texels}: Blender's size of the image, its top-left texel and, for an
    image of up to max_texels, every texel (rows from the top, [r, g, b, a] each), as 0-255 values
    (Blender's pixel rows go from the bottom); texel None when Blender has no pixels for it."""
    w, h = image.size[0], image.size[1]
    texel, texels = None, None
    if w and h and image.channels == 4:
        px = image.pixels[:]
        top = (h - 1) * w * 4
        texel = [round(v * 255) for v in px[top:top + 4]]
        if w * h <= max_texels:
            texels = [[[round(v * 255) for v in px[((h - 1 - y) * w + x) * 4:((h - 1 - y) * w + x) * 4 + 4]]
                       for x in range(w)] for y in range(h)]
    return {"width": w, "height": h, "texel": texel, "texels": texels, "name": image.name}


def mesh_info(name, obj, first_poly, num_polys):
    """The report of one scene mesh: polygons first_poly .. first_poly + num_polys of obj's mesh."""
    me = obj.data
    polys = me.polygons[first_poly:first_poly + num_polys]
    verts = sorted({me.loops[li].vertex_index for p in polys for li in range(p.loop_start, p.loop_start + p.loop_total)})
    tex = None
    if polys and me.materials and polys[0].material_index < len(me.materials):
        img = material_image(me.materials[polys[0].material_index])
        tex = image_info(img) if img is not None else None
    skinned = any(m.type == "ARMATURE" and m.object is not None for m in obj.modifiers)
    return {"name": name, "object": obj.name, "triangles": sum(1 for p in polys if p.loop_total == 3),
            "polygons": len(polys), "vertices": len(verts), "texture": tex, "skinned": skinned,
            "_verts": verts, "_first": [me.loops[li].vertex_index for li in
                                        range(polys[0].loop_start, polys[0].loop_start + polys[0].loop_total)]
            if polys else []}


def mesh_positions(obj, info):
    """{"corners": the first polygon's corners, "vertices": every vertex (Blender's order)}, world, file frame,
    of the evaluated mesh (modifiers applied: an Armature modifier's skinning) at the current frame."""
    import bpy
    a = _a_inv()
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = ev.to_mesh()
    try:
        co = me.vertices
        if len(co) != len(obj.data.vertices):
            raise RuntimeError("%s: the evaluated mesh has %d vertices, the mesh %d" % (obj.name, len(co),
                                                                                      len(obj.data.vertices)))
        m = a @ ev.matrix_world
        return {"corners": [list(m @ co[i].co) for i in info["_first"]],
                "vertices": [list(m @ co[i].co) for i in info["_verts"]]}
    finally:
        ev.to_mesh_clear()


def public(info):
    return {k: v for k, v in info.items() if not k.startswith("_")}
