/* glTF 2.0 writer: ra_scene -> .glb or .gltf + .bin.
 *
 * Two passes over the keys: the first lays out every accessor (counts, byte
 * offsets, the first and last float32 time), which is all the JSON needs; the
 * second streams the binary data in the same order.  Memory is the JSON and
 * one track's float32 times, whatever the number of keys. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "retroanim/ra_gltf.h"
#include "retroanim/ra_json.h"
#include "retroanim/ra_output.h"
#include "retroanim/ra_document.h"
#include "retroanim/ra_image.h"

#define FMT "gltf"

enum {
    PATH_T,
    PATH_R,
    PATH_S,
    PATH_V
};

/* One sampler: a track of one channel (or the stand-in of an animation
 * without channels, which keeps its duration on the root node). */
typedef struct track {
    uint32_t node;
    int path;
    const void *keys; /* ra_vec_key, ra_quat_key or ra_vis_key; NULL for the stand-in */
    size_t n;         /* keys in the scene */
    size_t count;     /* keys written (with the hold key at the duration) */
    float t0, t1;     /* first and last input */
    uint64_t in_off, out_off;
} track;

typedef struct anim_plan {
    size_t first, count; /* tracks[first .. first + count) */
    float duration;
} anim_plan;

typedef struct writer {
    const ra_scene *s;
    const ra_gltf_options *opt;
    ra_error *err;
    track *tracks;
    size_t track_count;
    anim_plan *anims;
    uint32_t *children; /* CSR: child_start[i] .. child_start[i + 1] */
    size_t *child_start;
    uint32_t *view_node; /* per camera: the node holding it (an extra node where the camera is turned) */
    size_t node_total;   /* scene nodes + extra camera nodes */
    uint64_t anim_bytes, ibm_bytes;
    bool visibility; /* some track is KHR_node_visibility's */
    size_t skin_joints;
    float *times; /* scratch for one track */
    size_t times_cap;
    /* geometry: one glTF mesh per (node, skin) group of scene meshes; the
     * first group of a node sits on it, the others on extra child nodes */
    size_t *mesh_order;  /* scene meshes by group */
    size_t *group_start; /* groups: mesh_order[group_start[g] .. group_start[g + 1]) */
    size_t group_count;
    uint32_t *group_node; /* the glTF node of each group */
    size_t *mesh_acc;     /* first accessor of each scene mesh (relative to the geometry's first) */
    size_t geo_accessors;
    uint64_t *acc_off;  /* byte offset of each geometry accessor in the geometry data */
    uint64_t geo_bytes; /* vertex and index data */
    uint8_t **png;      /* per texture */
    size_t *png_size;
    uint64_t *png_off;
    uint64_t img_bytes; /* PNGs, each padded to 4 */
    bool unlit;         /* some material is KHR_materials_unlit */
} writer;

/* ---- time --------------------------------------------------------------------------------- */
static double key_time(const track *tr, size_t i)
{
    if (tr->path == PATH_V) return ((const ra_vis_key *)tr->keys)[i].t;
    return tr->path == PATH_R ? ((const ra_quat_key *)tr->keys)[i].t : ((const ra_vec_key *)tr->keys)[i].t;
}

/* The float32 inputs of a track into w->times (strictly increasing; a key at
 * the duration lands on the float32 duration; the last value is held to the
 * duration).  Returns the count. */
static size_t track_times(writer *w, const track *tr, double duration, float dur_f)
{
    if (!tr->keys) {
        w->times[0] = 0;
        if (dur_f > 0) {
            w->times[1] = dur_f;
            return 2;
        }
        return 1;
    }
    size_t c = 0;
    if (tr->path == PATH_V && key_time(tr, 0) > 0) w->times[c++] = 0; /* shown before the first key */
    for (size_t i = 0; i < tr->n; i++) {
        double t = key_time(tr, i);
        float f = t >= duration ? dur_f : ra_f32_floor(t);
        if (f > dur_f) f = dur_f;
        if (c && !(f > w->times[c - 1])) f = nextafterf(w->times[c - 1], INFINITY);
        w->times[c++] = f;
    }
    if (w->times[c - 1] < dur_f) w->times[c++] = dur_f;
    return c;
}

/* ---- layout --------------------------------------------------------------------------------- */
static ra_status plan(writer *w)
{
    const ra_scene *s = w->s;
    size_t tracks = 0, most = 2;
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        size_t here = 0;
        for (size_t c = 0; c < an->channel_count; c++) {
            const ra_channel *ch = &an->channels[c];
            here += (size_t)((ch->position_count > 0) + (ch->rotation_count > 0) + (ch->scaling_count > 0));
            size_t m = ch->position_count > ch->rotation_count ? ch->position_count : ch->rotation_count;
            if (ch->scaling_count > m) m = ch->scaling_count;
            if (m + 1 > most) most = m + 1;
        }
        size_t vis = w->opt->khr_visibility ? an->visibility_count : 0;
        for (size_t v = 0; v < vis; v++)
            if (an->visibility[v].count + 2 > most) most = an->visibility[v].count + 2;
        tracks += (here ? here : 1) + vis;
    }
    w->tracks = ra_calloc(tracks ? tracks : 1, sizeof *w->tracks);
    w->anims = ra_calloc(s->animation_count ? s->animation_count : 1, sizeof *w->anims);
    w->times = ra_malloc(most * sizeof *w->times);
    w->times_cap = most;
    if (!w->tracks || !w->anims || !w->times) return ra_fail_nomem(w->err, FMT);
    uint64_t off = 0;
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        anim_plan *ap = &w->anims[a];
        ap->first = w->track_count;
        ap->duration = ra_f32_floor(an->duration); /* at or before the true end, like every key */
        for (size_t c = 0; c < an->channel_count; c++) {
            const ra_channel *ch = &an->channels[c];
            if (ch->position_count)
                w->tracks[w->track_count++] =
                    (track){ch->node, PATH_T, ch->position, ch->position_count, 0, 0, 0, 0, 0};
            if (ch->rotation_count)
                w->tracks[w->track_count++] =
                    (track){ch->node, PATH_R, ch->rotation, ch->rotation_count, 0, 0, 0, 0, 0};
            if (ch->scaling_count)
                w->tracks[w->track_count++] = (track){ch->node, PATH_S, ch->scaling, ch->scaling_count, 0, 0, 0, 0, 0};
        }
        if (w->track_count == ap->first) /* glTF wants a channel: the root's rest position over the duration */
            w->tracks[w->track_count++] = (track){0, PATH_T, NULL, 0, 0, 0, 0, 0, 0};
        for (size_t v = 0; w->opt->khr_visibility && v < an->visibility_count; v++) {
            const ra_vis_track *vt = &an->visibility[v];
            if (!vt->count) continue;
            w->tracks[w->track_count++] = (track){vt->node, PATH_V, vt->keys, vt->count, 0, 0, 0, 0, 0};
            w->visibility = true;
        }
        ap->count = w->track_count - ap->first;
        for (size_t k = ap->first; k < w->track_count; k++) {
            track *tr = &w->tracks[k];
            tr->count = track_times(w, tr, an->duration, ap->duration);
            tr->t0 = w->times[0];
            tr->t1 = w->times[tr->count - 1];
            tr->in_off = off;
            off += 4 * (uint64_t)tr->count;
            tr->out_off = off;
            off += tr->path == PATH_V ? ((uint64_t)tr->count + 3) / 4 * 4 /* bytes, padded to 4 */
                                      : (tr->path == PATH_R ? 16 : 12) * (uint64_t)tr->count;
        }
    }
    w->anim_bytes = off;
    return RA_OK;
}

static ra_status plan_nodes(writer *w)
{
    const ra_scene *s = w->s;
    size_t n = s->node_count;
    w->child_start = ra_calloc(n + 2, sizeof *w->child_start);
    w->children = ra_malloc((n ? n : 1) * sizeof *w->children);
    w->view_node = ra_malloc((s->camera_count ? s->camera_count : 1) * sizeof *w->view_node);
    if (!w->child_start || !w->children || !w->view_node) return ra_fail_nomem(w->err, FMT);
    for (size_t i = 1; i < n; i++) w->child_start[(size_t)s->nodes[i].parent + 2]++;
    for (size_t i = 0; i < n; i++) w->child_start[i + 2] += w->child_start[i + 1];
    for (size_t i = 1; i < n; i++) w->children[w->child_start[(size_t)s->nodes[i].parent + 1]++] = (uint32_t)i;
    /* child_start[i] .. child_start[i + 1] now lists node i's children, in order */
    w->node_total = n;
    for (size_t c = 0; c < s->camera_count; c++) {
        const ra_camera *cam = &s->cameras[c];
        bool plain = cam->position.x == 0 && cam->position.y == 0 && cam->position.z == 0 && cam->look_at.x == 0 &&
                     cam->look_at.y == 0 && cam->look_at.z < 0 && cam->up.x == 0 && cam->up.z == 0 && cam->up.y > 0;
        w->view_node[c] = plain ? cam->node : (uint32_t)w->node_total++;
    }
    return RA_OK;
}

/* Accessors of scene mesh m, in order: POSITION, NORMAL, COLOR_0, TEXCOORD_0, JOINTS_0 and WEIGHTS_0, indices. */
static size_t mesh_accessor_count(const ra_mesh *m)
{
    return 2u + (m->normals ? 1u : 0u) + (m->colors ? 1u : 0u) + (m->uvs ? 1u : 0u) + (m->skin >= 0 ? 2u : 0u);
}

static int cmp_group(const void *a, const void *b, const ra_scene *s)
{
    const ra_mesh *x = &s->meshes[*(const size_t *)a], *y = &s->meshes[*(const size_t *)b];
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->skin != y->skin) return x->skin < y->skin ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* The meshes by (node, skin), their accessors and bytes, and every texture as PNG. */
static ra_status plan_geometry(writer *w)
{
    const ra_scene *s = w->s;
    size_t n = s->mesh_count;
    w->mesh_order = ra_malloc((n ? n : 1) * sizeof *w->mesh_order);
    w->group_start = ra_malloc((n + 1) * sizeof *w->group_start);
    w->group_node = ra_malloc((n ? n : 1) * sizeof *w->group_node);
    w->mesh_acc = ra_malloc((n ? n : 1) * sizeof *w->mesh_acc);
    size_t nt = s->texture_count;
    w->png = ra_calloc(nt ? nt : 1, sizeof *w->png);
    w->png_size = ra_calloc(nt ? nt : 1, sizeof *w->png_size);
    w->png_off = ra_calloc(nt ? nt : 1, sizeof *w->png_off);
    if (!w->mesh_order || !w->group_start || !w->group_node || !w->mesh_acc || !w->png || !w->png_size || !w->png_off)
        return ra_fail_nomem(w->err, FMT);
    /* insertion sort by (node, skin, index): meshes come mostly in node order */
    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        while (k && cmp_group(&w->mesh_order[k - 1], &i, s) > 0) {
            w->mesh_order[k] = w->mesh_order[k - 1];
            k--;
        }
        w->mesh_order[k] = i;
    }
    uint32_t last_node = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        const ra_mesh *m = &s->meshes[w->mesh_order[i]];
        if (i && m->node == s->meshes[w->mesh_order[i - 1]].node && m->skin == s->meshes[w->mesh_order[i - 1]].skin)
            continue;
        w->group_start[w->group_count] = i;
        /* a skinned mesh follows its joints, not its node: it goes on a node of its own at the scene's top (glTF
         * ignores a skinned mesh node's transform; the validator warns when it has a parent) */
        bool own = m->node == last_node || m->skin >= 0;
        w->group_node[w->group_count++] = own ? (uint32_t)w->node_total++ : m->node;
        if (m->skin < 0) last_node = m->node;
    }
    w->group_start[w->group_count] = n;
    for (size_t i = 0; i < n; i++) {
        w->mesh_acc[i] = w->geo_accessors;
        w->geo_accessors += mesh_accessor_count(&s->meshes[i]);
    }
    w->acc_off = ra_malloc((w->geo_accessors ? w->geo_accessors : 1) * sizeof *w->acc_off);
    if (!w->acc_off) return ra_fail_nomem(w->err, FMT);
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const ra_mesh *m = &s->meshes[i];
        size_t a = w->mesh_acc[i];
        uint64_t nv = m->vertex_count;
        w->acc_off[a++] = off, off += 12 * nv;
        if (m->normals) w->acc_off[a++] = off, off += 12 * nv;
        if (m->colors) w->acc_off[a++] = off, off += 16 * nv;
        if (m->uvs) w->acc_off[a++] = off, off += 8 * nv;
        if (m->skin >= 0) {
            w->acc_off[a++] = off, off += 8 * nv;
            w->acc_off[a++] = off, off += 16 * nv;
        }
        w->acc_off[a++] = off, off += 12 * (uint64_t)m->triangle_count;
    }
    w->geo_bytes = off;
    for (size_t t = 0; t < nt; t++) {
        const ra_texture *tx = &s->textures[t];
        ra_status st = ra_png_encode(tx->rgba, tx->width, tx->height, &w->png[t], &w->png_size[t], w->err);
        if (st != RA_OK) return st;
        w->png_off[t] = w->img_bytes;
        w->img_bytes += (w->png_size[t] + 3) / 4 * 4;
    }
    for (size_t m = 0; m < s->material_count; m++) w->unlit = w->unlit || s->materials[m].unlit;
    return RA_OK;
}

/* ---- JSON ------------------------------------------------------------------------------------- */
static void json_f32(ra_json *j, float f)
{
    char b[40];
    snprintf(b, sizeof b, "%.17g", (double)f); /* exact: min/max must equal the data */
    ra_json_raw(j, b);
}

static void json_vec(ra_json *j, const char *key, ra_vec3 v)
{
    ra_json_key(j, key);
    ra_json_begin_array(j);
    ra_json_number(j, (float)v.x);
    ra_json_number(j, (float)v.y);
    ra_json_number(j, (float)v.z);
    ra_json_end_array(j);
}

/* The rotation that turns -Z to the camera's view direction and +Y to its up,
 * placed at its position: the local transform of the extra camera node. */
static ra_mat4 camera_frame(const ra_camera *c)
{
    ra_vec3 f, y, x;
    ra_camera_axes(c, &f, &y, &x);
    return ra_m4_from_columns(x, y, ra_v3_scale(f, -1), c->position);
}

static void json_trs(ra_json *j, const ra_mat4 *m)
{
    ra_vec3 t, sc;
    ra_quat r;
    ra_m4_decompose(m, &t, &r, &sc);
    r = ra_q_normalize(r);
    if (t.x != 0 || t.y != 0 || t.z != 0) json_vec(j, "translation", t);
    if (r.w != 1) {
        ra_json_key(j, "rotation");
        ra_json_begin_array(j);
        ra_json_number(j, (float)r.x);
        ra_json_number(j, (float)r.y);
        ra_json_number(j, (float)r.z);
        ra_json_number(j, (float)r.w);
        ra_json_end_array(j);
    }
    if (sc.x != 1 || sc.y != 1 || sc.z != 1) json_vec(j, "scale", sc);
}

static bool node_has_visibility(const writer *w, size_t node)
{
    for (size_t k = 0; k < w->track_count; k++)
        if (w->tracks[k].path == PATH_V && w->tracks[k].node == node) return true;
    return false;
}

static void json_nodes(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    ra_json_key(j, "nodes");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->node_count; i++) {
        const ra_node *nd = &s->nodes[i];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, nd->name);
        size_t extra = 0;
        for (size_t c = 0; c < s->camera_count; c++)
            if (s->cameras[c].node == i) {
                if (w->view_node[c] == i) {
                    ra_json_key(j, "camera");
                    ra_json_uint(j, c);
                } else {
                    extra++;
                }
            }
        for (size_t g = 0; g < w->group_count; g++) {
            const ra_mesh *m = &s->meshes[w->mesh_order[w->group_start[g]]];
            if (m->node != i) continue;
            if (w->group_node[g] != i) {
                extra += m->skin < 0;
                continue;
            }
            ra_json_key(j, "mesh");
            ra_json_uint(j, g);
            if (m->skin >= 0) {
                ra_json_key(j, "skin");
                ra_json_uint(j, (uint64_t)m->skin);
            }
        }
        if (w->child_start[i + 1] > w->child_start[i] || extra) {
            ra_json_key(j, "children");
            ra_json_begin_array(j);
            for (size_t k = w->child_start[i]; k < w->child_start[i + 1]; k++) ra_json_uint(j, w->children[k]);
            for (size_t c = 0; c < s->camera_count; c++)
                if (s->cameras[c].node == i && w->view_node[c] != i) ra_json_uint(j, w->view_node[c]);
            for (size_t g = 0; g < w->group_count; g++)
                if (s->meshes[w->mesh_order[w->group_start[g]]].node == i && w->group_node[g] != i &&
                    s->meshes[w->mesh_order[w->group_start[g]]].skin < 0)
                    ra_json_uint(j, w->group_node[g]);
            ra_json_end_array(j);
        }
        json_trs(j, &nd->transform);
        if (w->visibility && node_has_visibility(w, i)) {
            ra_json_key(j, "extensions");
            ra_json_begin_object(j);
            ra_json_key(j, "KHR_node_visibility");
            ra_json_begin_object(j);
            ra_json_key(j, "visible");
            ra_json_bool(j, true);
            ra_json_end_object(j);
            ra_json_end_object(j);
        }
        if (nd->meta.count) {
            ra_json_key(j, "extras");
            ra_meta_dump_json(j, &nd->meta);
        }
        ra_json_end_object(j);
    }
    for (size_t c = 0; c < s->camera_count; c++) {
        if (w->view_node[c] == s->cameras[c].node) continue;
        ra_mat4 m = camera_frame(&s->cameras[c]);
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        char name[RA_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s.view", s->cameras[c].name);
        ra_json_string(j, name);
        ra_json_key(j, "camera");
        ra_json_uint(j, c);
        json_trs(j, &m);
        ra_json_end_object(j);
    }
    for (size_t g = 0; g < w->group_count; g++) { /* further meshes of a node, on a child of it */
        const ra_mesh *m = &s->meshes[w->mesh_order[w->group_start[g]]];
        if (w->group_node[g] == m->node) continue;
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        char name[RA_NAME_MAX + 32];
        if (m->skin >= 0) snprintf(name, sizeof name, "%s.skinned", m->name);
        else snprintf(name, sizeof name, "%s.mesh%zu", s->nodes[m->node].name, g);
        ra_json_string(j, name);
        ra_json_key(j, "mesh");
        ra_json_uint(j, g);
        if (m->skin >= 0) {
            ra_json_key(j, "skin");
            ra_json_uint(j, (uint64_t)m->skin);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

/* ---- geometry JSON ------------------------------------------------------------------------------ */
static size_t geo_view0(const writer *w) { return (w->anim_bytes ? 1u : 0u) + (w->ibm_bytes ? 1u : 0u); }
static size_t geo_acc0(const writer *w) { return 2 * w->track_count + w->s->skin_count; }

static void json_meshes(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    if (!w->group_count) return;
    ra_json_key(j, "meshes");
    ra_json_begin_array(j);
    for (size_t g = 0; g < w->group_count; g++) {
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, s->meshes[w->mesh_order[w->group_start[g]]].name);
        ra_json_key(j, "primitives");
        ra_json_begin_array(j);
        for (size_t k = w->group_start[g]; k < w->group_start[g + 1]; k++) {
            const ra_mesh *m = &s->meshes[w->mesh_order[k]];
            size_t a = geo_acc0(w) + w->mesh_acc[w->mesh_order[k]];
            ra_json_begin_object(j);
            ra_json_key(j, "attributes");
            ra_json_begin_object(j);
            ra_json_key(j, "POSITION");
            ra_json_uint(j, a++);
            if (m->normals) ra_json_key(j, "NORMAL"), ra_json_uint(j, a++);
            if (m->colors) ra_json_key(j, "COLOR_0"), ra_json_uint(j, a++);
            if (m->uvs) ra_json_key(j, "TEXCOORD_0"), ra_json_uint(j, a++);
            if (m->skin >= 0) {
                ra_json_key(j, "JOINTS_0");
                ra_json_uint(j, a++);
                ra_json_key(j, "WEIGHTS_0");
                ra_json_uint(j, a++);
            }
            ra_json_end_object(j);
            ra_json_key(j, "indices");
            ra_json_uint(j, a);
            if (m->material >= 0) {
                ra_json_key(j, "material");
                ra_json_uint(j, (uint64_t)m->material);
            }
            ra_json_key(j, "extras");
            ra_json_begin_object(j);
            ra_json_key(j, "name");
            ra_json_string(j, m->name);
            for (size_t i = 0; i < m->meta.count; i++) {
                ra_json_key(j, m->meta.items[i].key);
                ra_meta_value_json(j, &m->meta.items[i]);
            }
            ra_json_end_object(j);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

static void json_materials(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    if (s->material_count) {
        ra_json_key(j, "materials");
        ra_json_begin_array(j);
        for (size_t i = 0; i < s->material_count; i++) {
            const ra_material *m = &s->materials[i];
            ra_json_begin_object(j);
            ra_json_key(j, "name");
            ra_json_string(j, m->name);
            ra_json_key(j, "pbrMetallicRoughness");
            ra_json_begin_object(j);
            ra_json_key(j, "baseColorFactor");
            ra_json_begin_array(j);
            for (int c = 0; c < 4; c++) ra_json_number(j, m->base_color[c]);
            ra_json_end_array(j);
            if (m->texture >= 0) {
                ra_json_key(j, "baseColorTexture");
                ra_json_begin_object(j);
                ra_json_key(j, "index");
                ra_json_uint(j, (uint64_t)m->texture);
                ra_json_end_object(j);
            }
            ra_json_key(j, "metallicFactor");
            ra_json_number(j, 0);
            ra_json_key(j, "roughnessFactor");
            ra_json_number(j, 1);
            ra_json_end_object(j);
            if (m->alpha_mode != RA_ALPHA_OPAQUE) {
                ra_json_key(j, "alphaMode");
                ra_json_string(j, m->alpha_mode == RA_ALPHA_MASK ? "MASK" : "BLEND");
            }
            if (m->alpha_mode == RA_ALPHA_MASK) {
                ra_json_key(j, "alphaCutoff");
                ra_json_number(j, m->alpha_cutoff);
            }
            if (m->double_sided) {
                ra_json_key(j, "doubleSided");
                ra_json_bool(j, true);
            }
            if (m->unlit) {
                ra_json_key(j, "extensions");
                ra_json_begin_object(j);
                ra_json_key(j, "KHR_materials_unlit");
                ra_json_begin_object(j);
                ra_json_end_object(j);
                ra_json_end_object(j);
            }
            if (m->meta.count) {
                ra_json_key(j, "extras");
                ra_meta_dump_json(j, &m->meta);
            }
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    if (!s->texture_count) return;
    static const unsigned wraps[3] = {10497, 33071, 33648}; /* REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT */
    ra_json_key(j, "samplers");
    ra_json_begin_array(j);
    for (size_t t = 0; t < s->texture_count; t++) {
        const ra_texture *tx = &s->textures[t];
        ra_json_begin_object(j);
        ra_json_key(j, "magFilter");
        ra_json_uint(j, tx->nearest ? 9728 : 9729); /* NEAREST, LINEAR */
        ra_json_key(j, "minFilter");
        ra_json_uint(j, tx->nearest ? 9728 : 9729);
        ra_json_key(j, "wrapS");
        ra_json_uint(j, wraps[tx->wrap_s <= RA_WRAP_MIRROR ? tx->wrap_s : 0]);
        ra_json_key(j, "wrapT");
        ra_json_uint(j, wraps[tx->wrap_t <= RA_WRAP_MIRROR ? tx->wrap_t : 0]);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "images");
    ra_json_begin_array(j);
    for (size_t t = 0; t < s->texture_count; t++) {
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, s->textures[t].name);
        ra_json_key(j, "mimeType");
        ra_json_string(j, "image/png");
        ra_json_key(j, "bufferView");
        ra_json_uint(j, geo_view0(w) + w->geo_accessors + t);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "textures");
    ra_json_begin_array(j);
    for (size_t t = 0; t < s->texture_count; t++) {
        const ra_texture *tx = &s->textures[t];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, tx->name);
        ra_json_key(j, "sampler");
        ra_json_uint(j, t);
        ra_json_key(j, "source");
        ra_json_uint(j, t);
        if (tx->source_format) {
            ra_json_key(j, "extras");
            ra_json_begin_object(j);
            ra_json_key(j, "source_format");
            ra_json_string(j, tx->source_format);
            ra_json_end_object(j);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

/* Geometry accessors, in the order plan_geometry laid out, each on its own bufferView. */
static void json_geo_accessors(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    size_t view = geo_view0(w);
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        size_t nv = m->vertex_count;
        struct {
            const char *type;
            unsigned comp;
            size_t count;
            bool on;
        } acc[7] = {{"VEC3", 5126, nv, true},
                    {"VEC3", 5126, nv, m->normals != NULL},
                    {"VEC4", 5126, nv, m->colors != NULL},
                    {"VEC2", 5126, nv, m->uvs != NULL},
                    {"VEC4", 5123, nv, m->skin >= 0},
                    {"VEC4", 5126, nv, m->skin >= 0},
                    {"SCALAR", 5125, 3 * m->triangle_count, true}};
        for (int k = 0; k < 7; k++) {
            if (!acc[k].on) continue;
            ra_json_begin_object(j);
            ra_json_key(j, "bufferView");
            ra_json_uint(j, view++);
            ra_json_key(j, "componentType");
            ra_json_uint(j, acc[k].comp);
            ra_json_key(j, "count");
            ra_json_uint(j, acc[k].count);
            ra_json_key(j, "type");
            ra_json_string(j, acc[k].type);
            if (k == 0) { /* POSITION: bounds of the float32 data */
                float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
                for (size_t v = 0; v < nv; v++)
                    for (int c = 0; c < 3; c++) {
                        float x = m->positions[3 * v + (size_t)c];
                        lo[c] = x < lo[c] ? x : lo[c];
                        hi[c] = x > hi[c] ? x : hi[c];
                    }
                ra_json_key(j, "min");
                ra_json_begin_array(j);
                for (int c = 0; c < 3; c++) json_f32(j, lo[c]);
                ra_json_end_array(j);
                ra_json_key(j, "max");
                ra_json_begin_array(j);
                for (int c = 0; c < 3; c++) json_f32(j, hi[c]);
                ra_json_end_array(j);
            }
            ra_json_end_object(j);
        }
    }
}

static void json_geo_views(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    uint64_t base = w->anim_bytes + w->ibm_bytes;
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        size_t first = w->mesh_acc[i], n = mesh_accessor_count(m);
        for (size_t a = first; a < first + n; a++) {
            uint64_t end = a + 1 < w->geo_accessors ? w->acc_off[a + 1] : w->geo_bytes;
            ra_json_begin_object(j);
            ra_json_key(j, "buffer");
            ra_json_uint(j, 0);
            ra_json_key(j, "byteOffset");
            ra_json_uint(j, base + w->acc_off[a]);
            ra_json_key(j, "byteLength");
            ra_json_uint(j, end - w->acc_off[a]);
            ra_json_key(j, "target");
            ra_json_uint(j, a + 1 == first + n ? 34963 : 34962); /* ELEMENT_ARRAY_BUFFER, ARRAY_BUFFER */
            ra_json_end_object(j);
        }
    }
    for (size_t t = 0; t < s->texture_count; t++) {
        ra_json_begin_object(j);
        ra_json_key(j, "buffer");
        ra_json_uint(j, 0);
        ra_json_key(j, "byteOffset");
        ra_json_uint(j, base + w->geo_bytes + w->png_off[t]);
        ra_json_key(j, "byteLength");
        ra_json_uint(j, w->png_size[t]);
        ra_json_end_object(j);
    }
}

static void json_cameras(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    if (!s->camera_count) return;
    ra_json_key(j, "cameras");
    ra_json_begin_array(j);
    for (size_t c = 0; c < s->camera_count; c++) {
        const ra_camera *cam = &s->cameras[c];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, cam->name);
        double aspect = cam->aspect > 0 && isfinite(cam->aspect) ? cam->aspect : 1;
        if (cam->orthographic) {
            ra_json_key(j, "type");
            ra_json_string(j, "orthographic");
            ra_json_key(j, "orthographic");
            ra_json_begin_object(j);
            ra_json_key(j, "xmag");
            ra_json_number(j, cam->ortho_xmag);
            ra_json_key(j, "ymag");
            ra_json_number(j, cam->ortho_ymag);
            ra_json_key(j, "znear");
            ra_json_number(j, cam->clip_near >= 0 ? cam->clip_near : 0);
            ra_json_key(j, "zfar");
            ra_json_number(j, cam->clip_far);
            ra_json_end_object(j);
        } else {
            ra_json_key(j, "type");
            ra_json_string(j, "perspective");
            ra_json_key(j, "perspective");
            ra_json_begin_object(j);
            ra_json_key(j, "aspectRatio");
            ra_json_number(j, aspect);
            ra_json_key(j, "yfov");
            ra_json_number(j, 2 * atan(tan(cam->horizontal_fov) / aspect));
            ra_json_key(j, "znear");
            ra_json_number(j, cam->clip_near);
            ra_json_key(j, "zfar");
            ra_json_number(j, cam->clip_far);
            ra_json_end_object(j);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

static const char *const path_names[3] = {"translation", "rotation", "scale"};

static void json_target(ra_json *j, const track *tr)
{
    ra_json_key(j, "target");
    ra_json_begin_object(j);
    if (tr->path == PATH_V) {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/nodes/%u/extensions/KHR_node_visibility/visible", tr->node);
        ra_json_key(j, "path");
        ra_json_string(j, "pointer");
        ra_json_key(j, "extensions");
        ra_json_begin_object(j);
        ra_json_key(j, "KHR_animation_pointer");
        ra_json_begin_object(j);
        ra_json_key(j, "pointer");
        ra_json_string(j, ptr);
        ra_json_end_object(j);
        ra_json_end_object(j);
    } else {
        ra_json_key(j, "node");
        ra_json_uint(j, tr->node);
        ra_json_key(j, "path");
        ra_json_string(j, path_names[tr->path]);
    }
    ra_json_end_object(j);
}

static void json_animations(writer *w, ra_json *j, size_t *accessor)
{
    const ra_scene *s = w->s;
    if (!s->animation_count) return;
    ra_json_key(j, "animations");
    ra_json_begin_array(j);
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        const anim_plan *ap = &w->anims[a];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, an->name);
        ra_json_key(j, "channels");
        ra_json_begin_array(j);
        for (size_t k = 0; k < ap->count; k++) {
            const track *tr = &w->tracks[ap->first + k];
            ra_json_begin_object(j);
            ra_json_key(j, "sampler");
            ra_json_uint(j, k);
            json_target(j, tr);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_key(j, "samplers");
        ra_json_begin_array(j);
        for (size_t k = 0; k < ap->count; k++) {
            ra_json_begin_object(j);
            ra_json_key(j, "input");
            ra_json_uint(j, (*accessor)++);
            ra_json_key(j, "output");
            ra_json_uint(j, (*accessor)++);
            ra_json_key(j, "interpolation");
            ra_json_string(j, w->tracks[ap->first + k].path == PATH_V ? "STEP" : "LINEAR");
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_key(j, "extras");
        ra_json_begin_object(j);
        ra_json_key(j, "duration");
        ra_json_number(j, an->duration);
        ra_json_key(j, "native_ticks_per_second");
        ra_json_number(j, an->ticks_per_second);
        ra_json_end_object(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

static void json_accessors(writer *w, ra_json *j)
{
    const ra_scene *s = w->s;
    if (!w->track_count && !s->skin_count && !w->geo_accessors) return;
    ra_json_key(j, "accessors");
    ra_json_begin_array(j);
    for (size_t k = 0; k < w->track_count; k++) {
        const track *tr = &w->tracks[k];
        for (int out = 0; out < 2; out++) {
            ra_json_begin_object(j);
            ra_json_key(j, "bufferView");
            ra_json_uint(j, 0);
            ra_json_key(j, "byteOffset");
            ra_json_uint(j, out ? tr->out_off : tr->in_off);
            ra_json_key(j, "componentType");
            ra_json_uint(j, out && tr->path == PATH_V ? 5121 : 5126); /* booleans: unsigned bytes 0 / 1 */
            ra_json_key(j, "count");
            ra_json_uint(j, tr->count);
            ra_json_key(j, "type");
            ra_json_string(j, out && tr->path != PATH_V ? (tr->path == PATH_R ? "VEC4" : "VEC3") : "SCALAR");
            if (!out) {
                ra_json_key(j, "min");
                ra_json_begin_array(j);
                json_f32(j, tr->t0);
                ra_json_end_array(j);
                ra_json_key(j, "max");
                ra_json_begin_array(j);
                json_f32(j, tr->t1);
                ra_json_end_array(j);
            }
            ra_json_end_object(j);
        }
    }
    uint64_t ibm = 0;
    for (size_t k = 0; k < s->skin_count; k++) {
        ra_json_begin_object(j);
        ra_json_key(j, "bufferView");
        ra_json_uint(j, w->anim_bytes ? 1 : 0);
        ra_json_key(j, "byteOffset");
        ra_json_uint(j, ibm);
        ra_json_key(j, "componentType");
        ra_json_uint(j, 5126);
        ra_json_key(j, "count");
        ra_json_uint(j, s->skins[k].joint_count);
        ra_json_key(j, "type");
        ra_json_string(j, "MAT4");
        ra_json_end_object(j);
        ibm += 64 * (uint64_t)s->skins[k].joint_count;
    }
    json_geo_accessors(w, j);
    ra_json_end_array(j);
}

static void json_skins(writer *w, ra_json *j, size_t first_accessor)
{
    const ra_scene *s = w->s;
    if (!s->skin_count) return;
    ra_json_key(j, "skins");
    ra_json_begin_array(j);
    for (size_t k = 0; k < s->skin_count; k++) {
        const ra_skin *sk = &s->skins[k];
        ra_json_begin_object(j);
        if (sk->name) {
            ra_json_key(j, "name");
            ra_json_string(j, sk->name);
        }
        ra_json_key(j, "inverseBindMatrices");
        ra_json_uint(j, first_accessor + k);
        if (sk->skeleton >= 0) {
            ra_json_key(j, "skeleton");
            ra_json_uint(j, (uint64_t)sk->skeleton);
        }
        ra_json_key(j, "joints");
        ra_json_begin_array(j);
        for (size_t i = 0; i < sk->joint_count; i++) ra_json_uint(j, sk->joints[i]);
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

/* percent-encodes what a URI reference may not hold */
static void uri_encode(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < size; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = 0;
}

static void json_document(writer *w, ra_json *j, const ra_gltf_options *o, uint64_t bin_bytes, const char *bin_uri)
{
    const ra_scene *s = w->s;
    ra_json_begin_object(j);
    ra_json_key(j, "asset");
    ra_json_begin_object(j);
    ra_json_key(j, "version");
    ra_json_string(j, "2.0");
    ra_json_key(j, "generator");
    if (o->generator) {
        ra_json_string(j, o->generator);
    } else {
        char g[64];
        uint32_t v = ra_version();
        snprintf(g, sizeof g, "retroanim %u.%u.%u", v / 1000000, v / 1000 % 1000, v % 1000);
        ra_json_string(j, g);
    }
    ra_json_end_object(j);
    if (w->visibility || w->unlit) { /* used, not required: players that lack them play the rest */
        ra_json_key(j, "extensionsUsed");
        ra_json_begin_array(j);
        if (w->visibility) {
            ra_json_string(j, "KHR_animation_pointer");
            ra_json_string(j, "KHR_node_visibility");
        }
        if (w->unlit) ra_json_string(j, "KHR_materials_unlit");
        ra_json_end_array(j);
    }
    ra_json_key(j, "scene");
    ra_json_uint(j, 0);
    ra_json_key(j, "scenes");
    ra_json_begin_array(j);
    ra_json_begin_object(j);
    ra_json_key(j, "name");
    ra_json_string(j, s->format);
    ra_json_key(j, "nodes");
    ra_json_begin_array(j);
    ra_json_uint(j, 0);
    for (size_t g = 0; g < w->group_count; g++)
        if (s->meshes[w->mesh_order[w->group_start[g]]].skin >= 0) ra_json_uint(j, w->group_node[g]);
    ra_json_end_array(j);
    ra_json_key(j, "extras");
    ra_json_begin_object(j);
    for (size_t i = 0; i < s->meta.count; i++) {
        ra_json_key(j, s->meta.items[i].key);
        ra_meta_value_json(j, &s->meta.items[i]);
    }
    if (s->warning_count) {
        ra_json_key(j, "retroanim.warnings");
        ra_json_begin_array(j);
        for (size_t i = 0; i < s->warning_count; i++) ra_json_string(j, s->warnings[i].msg);
        ra_json_end_array(j);
    }
    ra_json_end_object(j);
    ra_json_end_object(j);
    ra_json_end_array(j);
    json_nodes(w, j);
    json_meshes(w, j);
    json_materials(w, j);
    json_cameras(w, j);
    size_t accessor = 0;
    json_animations(w, j, &accessor);
    json_skins(w, j, accessor);
    json_accessors(w, j);
    if (bin_bytes) {
        ra_json_key(j, "bufferViews");
        ra_json_begin_array(j);
        if (w->anim_bytes) {
            ra_json_begin_object(j);
            ra_json_key(j, "buffer");
            ra_json_uint(j, 0);
            ra_json_key(j, "byteLength");
            ra_json_uint(j, w->anim_bytes);
            ra_json_end_object(j);
        }
        if (w->ibm_bytes) {
            ra_json_begin_object(j);
            ra_json_key(j, "buffer");
            ra_json_uint(j, 0);
            ra_json_key(j, "byteOffset");
            ra_json_uint(j, w->anim_bytes);
            ra_json_key(j, "byteLength");
            ra_json_uint(j, w->ibm_bytes);
            ra_json_end_object(j);
        }
        json_geo_views(w, j);
        ra_json_end_array(j);
        ra_json_key(j, "buffers");
        ra_json_begin_array(j);
        ra_json_begin_object(j);
        ra_json_key(j, "byteLength");
        ra_json_uint(j, bin_bytes);
        if (bin_uri) {
            ra_json_key(j, "uri");
            ra_json_string(j, bin_uri);
        }
        ra_json_end_object(j);
        ra_json_end_array(j);
    }
    ra_json_end_object(j);
}

/* ---- binary ------------------------------------------------------------------------------------ */
typedef struct sink {
    ra_outfile *f;
    uint8_t buf[1 << 16];
    size_t n;
    uint64_t written;
} sink;

static void sink_flush(sink *k)
{
    ra_outfile_write(k->f, k->buf, k->n);
    k->written += k->n;
    k->n = 0;
}
static inline void put_u32(sink *k, uint32_t u)
{
    if (k->n + 4 > sizeof k->buf) sink_flush(k);
    k->buf[k->n++] = (uint8_t)u;
    k->buf[k->n++] = (uint8_t)(u >> 8);
    k->buf[k->n++] = (uint8_t)(u >> 16);
    k->buf[k->n++] = (uint8_t)(u >> 24);
}
static inline void put_f32(sink *k, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    put_u32(k, u);
}

static void put_track(writer *w, sink *k, const track *tr, double duration, float dur_f)
{
    size_t c = track_times(w, tr, duration, dur_f);
    for (size_t i = 0; i < c; i++) put_f32(k, w->times[i]);
    if (!tr->keys) { /* the root's rest position */
        ra_vec3 t, sc;
        ra_quat r;
        ra_m4_decompose(&w->s->nodes[0].transform, &t, &r, &sc);
        for (size_t i = 0; i < c; i++) {
            put_f32(k, (float)t.x);
            put_f32(k, (float)t.y);
            put_f32(k, (float)t.z);
        }
        return;
    }
    if (tr->path == PATH_V) { /* one byte a key (the first 1 when a key at 0 was added), padded to 4 */
        const ra_vis_key *v = tr->keys;
        size_t lead = key_time(tr, 0) > 0 ? 1 : 0; /* as track_times adds it */
        for (size_t i = 0; i < (c + 3) / 4 * 4; i++) {
            if (k->n + 1 > sizeof k->buf) sink_flush(k);
            size_t src = i - lead < tr->n ? i - lead : tr->n - 1;
            k->buf[k->n++] = i >= c ? 0 : i < lead ? 1 : v[src].visible;
        }
        return;
    }
    if (tr->path == PATH_R) {
        const ra_quat_key *q = tr->keys;
        ra_quat prev = ra_q_identity();
        for (size_t i = 0; i < c; i++) {
            ra_quat v = ra_q_normalize(q[i < tr->n ? i : tr->n - 1].q);
            /* consecutive keys in one hemisphere: consumers that lerp components need it */
            if (i && ra_q_dot(prev, v) < 0) v = ra_q_neg(v);
            prev = v;
            put_f32(k, (float)v.x);
            put_f32(k, (float)v.y);
            put_f32(k, (float)v.z);
            put_f32(k, (float)v.w);
        }
    } else {
        const ra_vec_key *v = tr->keys;
        for (size_t i = 0; i < c; i++) {
            ra_vec3 x = v[i < tr->n ? i : tr->n - 1].v;
            put_f32(k, (float)x.x);
            put_f32(k, (float)x.y);
            put_f32(k, (float)x.z);
        }
    }
}

static void put_ibm(writer *w, sink *k);
static void put_geometry(writer *w, sink *k);

static void put_binary(writer *w, sink *k)
{
    const ra_scene *s = w->s;
    for (size_t a = 0; a < s->animation_count; a++) {
        const anim_plan *ap = &w->anims[a];
        for (size_t t = 0; t < ap->count; t++)
            put_track(w, k, &w->tracks[ap->first + t], s->animations[a].duration, ap->duration);
    }
    if (s->skin_count) put_ibm(w, k);
    put_geometry(w, k);
}

static void put_floats(sink *k, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) put_f32(k, v[i]);
}

/* Vertex and index data in plan_geometry's order, then the PNGs. */
static void put_geometry(writer *w, sink *k)
{
    const ra_scene *s = w->s;
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        size_t nv = m->vertex_count;
        put_floats(k, m->positions, 3 * nv);
        if (m->normals) put_floats(k, m->normals, 3 * nv);
        if (m->colors) put_floats(k, m->colors, 4 * nv);
        if (m->uvs) put_floats(k, m->uvs, 2 * nv);
        if (m->skin >= 0) {
            for (size_t v = 0; v < 2 * nv; v++) put_u32(k, m->joints[2 * v] | (uint32_t)m->joints[2 * v + 1] << 16);
            put_floats(k, m->weights, 4 * nv);
        }
        for (size_t t = 0; t < 3 * m->triangle_count; t++) put_u32(k, m->indices[t]);
    }
    for (size_t t = 0; t < s->texture_count; t++) {
        for (size_t b = 0; b < (w->png_size[t] + 3) / 4 * 4; b++) {
            if (k->n + 1 > sizeof k->buf) sink_flush(k);
            k->buf[k->n++] = b < w->png_size[t] ? w->png[t][b] : 0;
        }
    }
}

static void put_ibm(writer *w, sink *k)
{
    const ra_scene *s = w->s;
    /* inverse bind matrices: the inverse of each joint's rest world matrix, column-major */
    ra_mat4 *world = ra_malloc(s->node_count * sizeof *world);
    if (!world) {
        k->f->error = ENOMEM;
        return;
    }
    for (size_t i = 0; i < s->node_count; i++)
        world[i] = i ? ra_m4_mul(&world[(size_t)s->nodes[i].parent], &s->nodes[i].transform) : s->nodes[0].transform;
    for (size_t sk = 0; sk < s->skin_count; sk++)
        for (size_t i = 0; i < s->skins[sk].joint_count; i++) {
            ra_mat4 inv;
            if (!ra_m4_invert_affine(&world[s->skins[sk].joints[i]], &inv)) inv = ra_m4_identity();
            for (int c = 0; c < 4; c++)
                for (int r = 0; r < 4; r++) put_f32(k, r == 3 ? (c == 3 ? 1.0f : 0.0f) : (float)inv.m[r][c]);
        }
    ra_free(world);
}

/* ---- files ---------------------------------------------------------------------------------------- */
void ra_gltf_options_default(ra_gltf_options *o)
{
    memset(o, 0, sizeof *o);
    o->binary = -1;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static void free_writer(writer *w)
{
    ra_free(w->tracks);
    ra_free(w->anims);
    ra_free(w->children);
    ra_free(w->child_start);
    ra_free(w->view_node);
    ra_free(w->times);
    ra_free(w->mesh_order);
    ra_free(w->group_start);
    ra_free(w->group_node);
    ra_free(w->mesh_acc);
    ra_free(w->acc_off);
    for (size_t t = 0; w->png && t < w->s->texture_count; t++) ra_free(w->png[t]);
    ra_free(w->png);
    ra_free(w->png_size);
    ra_free(w->png_off);
}

static ra_status write_all(writer *w, const char *path, const ra_gltf_options *o, ra_write_stats *stats)
{
    const ra_scene *s = w->s;
    bool binary = o->binary >= 0 ? o->binary != 0 : !ends_with(path, ".gltf");
    ra_status st = plan(w);
    if (st == RA_OK) st = plan_nodes(w);
    if (st == RA_OK) st = plan_geometry(w);
    if (st != RA_OK) return st;
    for (size_t k = 0; k < s->skin_count; k++) w->ibm_bytes += 64 * (uint64_t)s->skins[k].joint_count;
    uint64_t bin_bytes = w->anim_bytes + w->ibm_bytes + w->geo_bytes + w->img_bytes;

    /* the .bin beside a .gltf: the target's stem + ".bin" */
    char *bin_path = NULL, uri[3 * 1024];
    uri[0] = 0;
    if (!binary && bin_bytes) {
        size_t n = strlen(path);
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        const char *dot = strrchr(base, '.');
        size_t stem = dot && dot != base ? (size_t)(dot - path) : n;
        bin_path = ra_malloc(stem + 5);
        if (!bin_path) return ra_fail_nomem(w->err, FMT);
        memcpy(bin_path, path, stem);
        memcpy(bin_path + stem, ".bin", 5);
        uri_encode(bin_path + (size_t)(base - path), uri, sizeof uri);
    }

    ra_writer jb;
    ra_writer_init(&jb);
    ra_json j;
    ra_json_init_buffer(&j, &jb, !binary);
    json_document(w, &j, o, bin_bytes, binary ? NULL : uri);
    if (!binary) ra_json_finish(&j);
    if (j.failed || jb.failed) {
        ra_writer_free(&jb);
        ra_free(bin_path);
        return ra_fail_nomem(w->err, FMT);
    }

    sink *k = ra_malloc(sizeof *k);
    if (!k) {
        ra_writer_free(&jb);
        ra_free(bin_path);
        return ra_fail_nomem(w->err, FMT);
    }
    ra_outfile main_f, bin_f;
    st = ra_outfile_open(&main_f, path, w->err);
    if (st == RA_OK && bin_path) {
        st = ra_outfile_open(&bin_f, bin_path, w->err);
        if (st != RA_OK) ra_outfile_abort(&main_f);
    }
    if (st != RA_OK) {
        ra_free(k);
        ra_writer_free(&jb);
        ra_free(bin_path);
        return st;
    }
    uint64_t total = 0;
    if (binary) {
        size_t jlen = jb.size, jpad = (4 - jlen % 4) % 4;
        uint64_t bpad = (4 - bin_bytes % 4) % 4;
        uint64_t len = 12 + 8 + jlen + jpad + (bin_bytes ? 8 + bin_bytes + bpad : 0);
        if (len > UINT32_MAX) {
            ra_outfile_abort(&main_f);
            ra_free(k);
            ra_writer_free(&jb);
            return ra_fail(w->err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "",
                           "the scene needs a .glb of %llu bytes, more than "
                           "the 4 GiB a .glb can hold (write .gltf)",
                           (unsigned long long)len);
        }
        *k = (sink){&main_f, {0}, 0, 0};
        put_u32(k, 0x46546C67u); /* "glTF" */
        put_u32(k, 2);
        put_u32(k, (uint32_t)len);
        put_u32(k, (uint32_t)(jlen + jpad));
        put_u32(k, 0x4E4F534Au); /* "JSON" */
        sink_flush(k);
        ra_outfile_write(&main_f, jb.data, jlen);
        ra_outfile_write(&main_f, "   ", jpad);
        if (bin_bytes) {
            put_u32(k, (uint32_t)(bin_bytes + bpad));
            put_u32(k, 0x004E4942u); /* "BIN\0" */
            put_binary(w, k);
            for (uint64_t i = 0; i < bpad; i++) k->buf[k->n++] = 0;
        }
        sink_flush(k);
        total = len;
        st = ra_outfile_commit(&main_f, w->err);
    } else {
        if (bin_path) {
            *k = (sink){&bin_f, {0}, 0, 0};
            put_binary(w, k);
            sink_flush(k);
            st = ra_outfile_commit(&bin_f, w->err);
            total += k->written;
        }
        if (st == RA_OK) {
            ra_outfile_write(&main_f, jb.data, jb.size);
            st = ra_outfile_commit(&main_f, w->err);
            total += jb.size;
        } else {
            ra_outfile_abort(&main_f);
        }
    }
    ra_free(k);
    ra_writer_free(&jb);
    ra_free(bin_path);
    if (st != RA_OK) return st;
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->nodes = w->node_total;
        stats->animations = s->animation_count;
        stats->cameras = s->camera_count;
        stats->skins = s->skin_count;
        stats->channels = w->track_count;
        for (size_t t = 0; t < w->track_count; t++) stats->keys += w->tracks[t].count;
        stats->bytes = total;
    }
    return RA_OK;
}

ra_status ra_gltf_write(const ra_scene *s, const char *path, const ra_gltf_options *opt, ra_write_stats *stats,
                        ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    ra_gltf_options def;
    ra_gltf_options_default(&def);
    if (!opt) opt = &def;
    if (!s || !s->node_count) return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "", "the scene has no nodes");
    ra_status sc = ra_scene_check(s, err); /* hand-made scenes too: node indices, parents, tracks */
    if (sc != RA_OK) return sc;
    writer w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.opt = opt;
    w.err = err;
    ra_status st = write_all(&w, path, opt, stats);
    free_writer(&w);
    return st;
}
