/* NIFF: the fixtures of test_models/niff (made by make_fixtures.py and
 * make_geometry.py from the spec, independently of this project), random files
 * from our writer, a 100-object x 300-frame FULL file, and hostile files.
 *
 * Per fixture: every expect-* line of its description (hand-computed poses
 * and camera fields within 1e-4, node count, duration, error offsets; meshes,
 * triangle corners within 1e-5, materials, textures and exact texels; skins
 * and the world positions of skinned (deformable) mesh corners, played as a
 * consumer skins them, within 1e-4), pose
 * against consumer playback of the baked keys at every frame and half frame
 * (1/60 s), the mesh/material/texture invariants, and a byte-identical
 * write(read(file)). */
#include <string.h>
#include <time.h>

#include "ra_fixture.h"
#include "retroanim/niff.h"

#define TOL 1e-4
#define GEO_TOL 1e-5 /* triangle corners, material colours */
static const char *g_dir;
static long g_checks;
static fx_stats g_stats;

static ra_status load(const uint8_t *d, size_t n, const char *name, const ra_options *o, ra_document **doc, ra_error *e)
{
    ra_error_clear(e);
    return ra_document_load(d, n, name, o, doc, e);
}

static double duration_of(const ra_document *doc)
{
    return doc->scene.animation_count ? doc->scene.animations[0].duration : 0;
}

/* An expect-pose line.  Past the end of the animation the pose (the game's
 * rule) is checked by itself; the baked keys cover [0, duration].  A pose
 * placed exactly on a jump (a loop seam: " at_step=1" after the matrix) is
 * also checked by the game's rule alone: there playback of baked keys may
 * take either side of the jump (the instants around it are compared with
 * playback by fx_check_semantics). */
static void check_pose(const ra_document *doc, const char *line, const char *what)
{
    const char *pt = strstr(line, "t=");
    double t = pt ? atof(pt + 2) : 0, dur = duration_of(doc);
    bool at_step = strstr(line, " at_step=1") != NULL;
    if ((!(t > dur + 1e-9) && !at_step) || !doc->scene.animation_count) {
        fx_check_pose_line(doc, line, what, TOL);
        return;
    }
    /* pose only: a temporary scene view without animations */
    ra_document copy = *doc;
    copy.scene.animation_count = 0;
    fx_check_pose_line(&copy, line, what, TOL);
}

static void check_camera_line(const ra_scene *s, const char *line, const char *what)
{
    char node[256] = "", v[64];
    fx_field(line, "node", node, sizeof node);
    const ra_camera *c = NULL;
    for (size_t i = 0; i < s->camera_count; i++)
        if (!strcmp(s->cameras[i].name, node)) c = &s->cameras[i];
    CHECK(c != NULL, "%s: no camera %s", what, node);
    if (!c) return;
    CHECK(!strcmp(s->nodes[c->node].name, node), "%s: camera %s is placed by node %s", what, node,
          s->nodes[c->node].name);
    if (fx_field(line, "hfov", v, sizeof v)) CHECK_NEAR(c->horizontal_fov, atof(v), TOL, what);
    if (fx_field(line, "aspect", v, sizeof v)) CHECK_NEAR(c->aspect, atof(v), TOL, what);
    if (fx_field(line, "near", v, sizeof v)) CHECK_NEAR(c->clip_near, atof(v), TOL, what);
    if (fx_field(line, "far", v, sizeof v)) CHECK_NEAR(c->clip_far, atof(v), TOL * fmax(1, atof(v)), what);
}

/* ---- geometry: expect-mesh, expect-triangle, expect-material, expect-texture, expect-texel ---------------- */
#include "expect_lines.h"

/* Every mesh, material and texture is usable: indices in range, links valid, arrays present. */
static void check_geometry_invariants(const ra_scene *s, const char *what)
{
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        const char *mn = m->name ? m->name : "(unnamed)";
        CHECK(m->name && m->name[0], "%s: mesh %zu has no name", what, i);
        CHECK(m->node < s->node_count, "%s: mesh %s on node %u of %zu", what, mn, m->node, s->node_count);
        CHECK(m->material == -1 || (m->material >= 0 && (size_t)m->material < s->material_count),
              "%s: mesh %s has material %d of %zu", what, mn, m->material, s->material_count);
        CHECK(m->vertex_count == 0 || m->positions, "%s: mesh %s has no positions", what, mn);
        CHECK(m->triangle_count == 0 || m->indices, "%s: mesh %s has no indices", what, mn);
        size_t bad = 0;
        for (size_t k = 0; m->indices && k < 3 * m->triangle_count; k++)
            if (m->indices[k] >= m->vertex_count) bad++;
        CHECK(bad == 0, "%s: mesh %s: %zu indices >= %u vertices", what, mn, bad, m->vertex_count);
        if (m->skin < 0) continue;
        /* skinned: on the root, four joints and weights per vertex, weights >= 0 summing to 1 */
        const ra_skin *sk = skin_of(s, m, what);
        if (!sk) continue;
        size_t bad_w = 0, bad_j = 0;
        for (uint32_t v = 0; v < m->vertex_count; v++) {
            double sum = 0;
            for (size_t q = 0; q < 4; q++) {
                float w = m->weights[4 * (size_t)v + q];
                if (!(w >= 0)) bad_w++;
                if (w > 0 && m->joints[4 * (size_t)v + q] >= sk->joint_count) bad_j++;
                sum += w;
            }
            if (!(fabs(sum - 1) <= 1e-5)) bad_w++;
        }
        CHECK(bad_w == 0, "%s: mesh %s: %zu vertices whose weights are negative or do not sum to 1", what, mn, bad_w);
        CHECK(bad_j == 0, "%s: mesh %s: %zu weights on joints past the skin's %zu", what, mn, bad_j, sk->joint_count);
    }
    for (size_t i = 0; i < s->skin_count; i++)
        for (size_t j = 0; j < s->skins[i].joint_count; j++)
            CHECK(s->skins[i].joints[j] < s->node_count, "%s: skin %zu joint %zu is node %u of %zu", what, i, j,
                  s->skins[i].joints[j], s->node_count);
    for (size_t i = 0; i < s->material_count; i++) {
        const ra_material *m = &s->materials[i];
        CHECK(m->name && m->name[0], "%s: material %zu has no name", what, i);
        CHECK(m->texture == -1 || (m->texture >= 0 && (size_t)m->texture < s->texture_count),
              "%s: material %zu has texture %d of %zu", what, i, m->texture, s->texture_count);
    }
    for (size_t i = 0; i < s->texture_count; i++) {
        const ra_texture *t = &s->textures[i];
        CHECK(t->name && t->name[0], "%s: texture %zu has no name", what, i);
        CHECK((size_t)t->width * t->height == 0 || t->rgba, "%s: texture %zu has no pixels", what, i);
    }
}

static void run_fixture(const char *name)
{
    fx_file fx;
    if (!fx_open(g_dir, name, &fx)) return;
    char line[4096];
    ra_error e;
    ra_document *doc = NULL;
    const ra_format *det = ra_format_detect(fx.data, fx.size, NULL);
    if (fx.not_detected) {
        CHECK(det == NULL || strcmp(det->id, "niff"), "%s: taken for NIFF by content", name);
        ra_status st = load(fx.data, fx.size, fx.path, NULL, &doc, &e);
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        CHECK(st != RA_OK && strstr(msg, "not a Nintendo 64 NIFF"), "%s: must be refused with a clear message: %s",
              name, msg);
        if (doc) ra_document_free(doc);
        g_checks++;
        fx_close(&fx);
        return;
    }
    if (fx.err_off < 0) CHECK(det && !strcmp(det->id, "niff"), "%s: detected as %s", name, det ? det->id : "nothing");
    doc = fx_load_or_refuse(&fx, name, "niff", &g_checks);
    if (!doc) {
        fx_close(&fx);
        return;
    }
    const ra_scene *s = &doc->scene;
    int expects = fx.expects;
    bool has_duration = false, has_meshes = false;
    while (fgets(line, sizeof line, fx.txt)) {
        line[strcspn(line, "\r\n")] = 0;
        char word[64];
        if (fx_check_common_line(doc, line, name)) {
            has_duration = has_duration || !strncmp(line, "expect-duration ", 16);
        } else if (sscanf(line, "expect-version %63s", word) == 1) {
            const ra_meta *m = ra_meta_get(&s->meta, "niff.version");
            CHECK(m && strtoul(m->u.s, NULL, 16) == strtoul(word, NULL, 16), "%s: version %s, expected %s", name,
                  m ? m->u.s : "?", word);
        } else if (!strncmp(line, "expect-pose ", 12)) {
            check_pose(doc, line, name);
        } else if (!strncmp(line, "expect-camera ", 14)) {
            check_camera_line(s, line, name);
        } else if (!strncmp(line, "expect-meshes ", 14)) {
            has_meshes = true;
            check_count(line + 14, s->mesh_count, "meshes", name);
        } else if (!strncmp(line, "expect-materials ", 17)) {
            check_count(line + 17, s->material_count, "materials", name);
        } else if (!strncmp(line, "expect-textures ", 16)) {
            check_count(line + 16, s->texture_count, "textures", name);
        } else if (!strncmp(line, "expect-mesh ", 12)) {
            check_mesh_line(s, line, name);
        } else if (!strncmp(line, "expect-triangle ", 16)) {
            check_triangle_line(s, line, name);
        } else if (!strncmp(line, "expect-material ", 16)) {
            check_material_line(s, line, name);
        } else if (!strncmp(line, "expect-texture ", 15)) {
            check_texture_line(s, line, name);
        } else if (!strncmp(line, "expect-texel ", 13)) {
            check_texel_line(s, line, name);
        } else if (!strncmp(line, "expect-skin ", 12)) {
            check_skin_line(s, line, name);
        } else if (!strncmp(line, "expect-skinned ", 15)) {
            check_skinned_line(s, line, name);
        } else {
            continue;
        }
        expects++;
    }
    if (!has_duration) CHECK(s->animation_count == 0, "%s: an animation nobody expected", name);
    if (!has_meshes)
        CHECK(s->mesh_count == 0 && s->material_count == 0 && s->texture_count == 0,
              "%s: %zu meshes, %zu materials, %zu textures nobody expected", name, s->mesh_count, s->material_count,
              s->texture_count);
    check_geometry_invariants(s, name);
    CHECK(expects >= 4, "%s: its description has only %d expectations", name, expects);
    g_checks += expects;
    fx_check_semantics(doc, name, 1.0 / 60, duration_of(doc) + 1e-9, TOL, &g_stats);
    ra_document_free(doc);
    fx_check_roundtrip(fx.data, fx.size, NULL, name);
    fx_close(&fx);
}

/* ---- files from our writer ------------------------------------------------------------------------------ */
static const uint32_t physical[] = {0x00010000, 0x00100000, 0x000e0000, 0x000f0000, 0x00020000, 0x00030000, 0x00040000,
                                    0x00080000, 0x00050000, 0x00060000, 0x00070000, 0x00090000, 0x000a0000, 0x000b0000,
                                    0x00120000, 0x000c0000, 0x000d0000, 0x00130000, 0x00110000, 0x00200000, 0x00210000,
                                    0x00220000, 0x00280000, 0x00230000, 0x00240000, 0x00250000, 0x00260000, 0x00270000};

/* Every list of the version, in physical order; the unparsed ones empty. */
static void make_lists(ra_arena *ar, niff_file *f)
{
    uint32_t n = niff_is_v2(f->version) ? 28 : 19;
    f->lists = ra_arena_array(ar, n, sizeof *f->lists);
    f->list_count = n;
    f->scene.name_index = NIFF_NONE;
    for (uint32_t i = 0; i < n; i++) {
        niff_list *l = &f->lists[i];
        l->tag = physical[i];
        l->parsed = l->tag == NIFF_TAG_SCENE_LIST || l->tag == NIFF_TAG_OBJ_LIST || l->tag == NIFF_TAG_CAM_LIST ||
                    l->tag == NIFF_TAG_ANIM_LIST || l->tag == NIFF_TAG_NAME_LIST;
        if (l->parsed) continue;
        bool two = l->tag == 0x00050000 || l->tag == 0x00060000; /* Color and Vector lists: two counts */
        uint32_t sz = two ? 28 : 24, words[7] = {l->tag, sz, sz, 0, 0, 0, 0};
        l->raw.size = sz;
        l->raw.data = ra_arena_alloc(ar, sz);
        for (uint32_t k = 0; k < sz / 4; k++) {
            uint8_t *p = l->raw.data + 4 * k;
            p[0] = (uint8_t)(words[k] >> 24), p[1] = (uint8_t)(words[k] >> 16), p[2] = (uint8_t)(words[k] >> 8);
            p[3] = (uint8_t)words[k];
        }
    }
}

static niff_obj *new_obj(niff_obj *o, uint32_t name, uint32_t group)
{
    memset(o, 0, sizeof *o);
    o->name_index = name;
    o->state = NIFF_OBJ_ACTIVE;
    o->parent_link = o->shape_link = o->mat_link = o->coll_link = NIFF_NONE;
    o->anim_link = group;
    return o;
}

static void random_trs(niff_anim *a, uint32_t tag)
{
    a->tag = tag;
    for (int c = 0; c < 3; c++) {
        a->t[c] = (float)fx_frand(-4, 4);
        a->r[c] = (float)fx_frand(-3.5, 3.5);
        a->s[c] = (float)fx_frand(0.7, 1.4);
    }
}

/* b = a moved by a moderate random step (a pose a few frames later) */
static void nudge(niff_anim *b, const niff_anim *a)
{
    for (int c = 0; c < 3; c++) {
        b->t[c] = a->t[c] + (float)fx_frand(-2, 2);
        b->r[c] = a->r[c] + (float)fx_frand(-1.2, 1.2);
        b->s[c] = (float)fmax(0.5, a->s[c] + fx_frand(-0.2, 0.2));
    }
}

static const uint32_t orders[6] = {0x00010203, 0x00010302, 0x00020103, 0x00030102, 0x00020301, 0x00030201};

/* A random scene: a tree of objects with every kind of AnimGroup, and cameras. */
static void random_file(ra_arena *ar, niff_file *f, bool v2, uint32_t nobj)
{
    memset(f, 0, sizeof *f);
    f->version = v2 ? 0x02010200 : 0x05000100;
    make_lists(ar, f);
    f->obj_count = nobj;
    f->objs = ra_arena_array(ar, nobj, sizeof *f->objs);
    f->group_count = nobj;
    f->groups = ra_arena_array(ar, nobj, sizeof *f->groups);
    f->name_count = nobj + 2;
    f->names = ra_arena_array(ar, f->name_count, sizeof *f->names);
    for (uint32_t i = 0; i < f->name_count; i++) {
        f->names[i].header_size = 16;
        f->names[i].text = ra_arena_printf(ar, i < nobj ? "obj_%u" : "Cam%u", i < nobj ? i : i - nobj);
    }
    int32_t *parent = ra_arena_array(ar, nobj, sizeof *parent);
    bool *bb_free = ra_arena_array(ar, nobj, sizeof *bb_free); /* no billboard at or above it */
    uint32_t *kids = ra_arena_array(ar, nobj, sizeof *kids);
    f->scene.obj.v = ra_arena_array(ar, nobj, sizeof(uint32_t));
    for (uint32_t i = 0; i < nobj; i++) {
        parent[i] = i && fx_rnd() % 4 ? (int32_t)(fx_rnd() % i) : -1;
        niff_group *g = &f->groups[i];
        memset(g, 0, sizeof *g);
        g->header_size = 48;
        g->name_index = NIFF_NONE;
        g->rot_order = orders[fx_rnd() % 6];
        g->loop = fx_rnd() % 4 == 0 ? 2 : 0;
        int kind = (int)(fx_rnd() % (v2 ? 6 : 5));
        bool may_bb = parent[i] < 0 || bb_free[parent[i]];
        if (kind == 4 && (!may_bb || i < 2)) kind = 1;
        bb_free[i] = (parent[i] < 0 || bb_free[parent[i]]) && kind != 4;
        if (kind == 0) { /* STATIC */
            g->type = NIFF_ANIM_STATIC;
            g->anim_num = 1;
            g->anims = ra_arena_array(ar, 1, sizeof *g->anims);
            random_trs(&g->anims[0], fx_rnd() % 2 ? NIFF_TAG_ANIM_STATIC : NIFF_TAG_ANIM_CONST);
        } else if (kind == 1) { /* FULL */
            g->type = NIFF_ANIM_FULL;
            g->anim_num = 2 + fx_rnd() % 10;
            g->frame_rate = 2;
            g->anims = ra_arena_array(ar, g->anim_num, sizeof *g->anims);
            random_trs(&g->anims[0], NIFF_TAG_ANIM_FULL);
            for (uint32_t k = 1; k < g->anim_num; k++) {
                g->anims[k] = g->anims[k - 1];
                for (int c = 0; c < 3; c++) {
                    g->anims[k].t[c] += (float)fx_frand(-1, 1);
                    g->anims[k].r[c] += (float)fx_frand(-0.8, 0.8);
                }
            }
        } else if (kind == 2 || kind == 3) { /* KEY */
            static const uint32_t interps[5] = {0, 1, 2, 4, 6};
            g->type = NIFF_ANIM_KEY;
            g->anim_num = 2 + fx_rnd() % 5;
            g->anims = ra_arena_array(ar, g->anim_num, sizeof *g->anims);
            uint32_t key = kind == 3 ? 3 : 0;
            for (uint32_t k = 0; k < g->anim_num; k++) {
                random_trs(&g->anims[k], NIFF_TAG_ANIM_KEY);
                if (k) nudge(&g->anims[k], &g->anims[k - 1]);
                g->anims[k].key = key;
                g->anims[k].interp = interps[fx_rnd() % 5];
                key += 2 + fx_rnd() % 8;
                g->anims[k].next_key = k + 1 < g->anim_num ? key : NIFF_NONE;
            }
        } else if (kind == 4) { /* BILLBOARD: targets outside every billboard's subtree */
            g->type = NIFF_ANIM_BILLBOARD;
            g->anim_num = 1;
            g->anims = ra_arena_array(ar, 1, sizeof *g->anims);
            g->anims[0].tag = NIFF_TAG_ANIM_BILLBOARD;
            uint32_t a = fx_rnd() % i, b = fx_rnd() % i;
            while (!bb_free[a]) a = (a + 1) % i;
            while (!bb_free[b] || b == a) b = (b + 1) % i;
            g->anims[0].lookat_obj = a;
            g->anims[0].upper_obj = b;
        } else { /* NIFF 2 channels */
            g->type = NIFF_ANIM_STATIC;
            g->has_channels = true;
            niff_channels *ch = &g->ch;
            int rot = (int)(fx_rnd() % 3); /* Euler, axis-angle, orientation XY */
            int used[4] = {rot == 0   ? NIFF_CH_ROTATE_X
                           : rot == 1 ? NIFF_CH_ROTATE_AXIS
                                      : NIFF_CH_ORIENTATION_XY,
                           rot == 0 ? NIFF_CH_ROTATE_Z : -1, NIFF_CH_TRANSLATION, NIFF_CH_CLASSICAL_SCALE};
            for (int u = 0; u < 4; u++) {
                if (used[u] < 0) continue;
                int c = used[u];
                ch->use |= 1u << c;
                ch->count[c] = 1 + fx_rnd() % 5;
                ch->keys[c] = ra_arena_array(ar, ch->count[c], sizeof(niff_chkey));
                uint32_t key = 0;
                for (uint32_t k = 0; k < ch->count[c]; k++) {
                    niff_chkey *kk = &ch->keys[c][k];
                    kk->interp = fx_rnd() % 4;
                    kk->key = key;
                    uint32_t gap = fx_rnd() % 8; /* equal frames too */
                    key += gap;
                    for (int v = 0; v < niff_channel_values[c]; v++) {
                        double base = k ? kk[-1].v[v] : c == NIFF_CH_CLASSICAL_SCALE ? 1 : fx_frand(-3, 3);
                        kk->v[v] =
                            (float)(base + (c == NIFF_CH_CLASSICAL_SCALE ? fx_frand(-0.2, 0.2) : fx_frand(-1, 1)));
                        kk->d[v] = (float)fx_frand(-0.2, 0.2);
                    }
                    if (c == NIFF_CH_ORIENTATION_XY) kk->v[4] += 2; /* y away from x */
                }
            }
        }
        new_obj(&f->objs[i], i, fx_rnd() % 9 ? i : NIFF_NONE);
        if (fx_rnd() % 7 == 0 && i > 0 && f->objs[i].anim_link != NIFF_NONE &&
            f->groups[i - 1].type != NIFF_ANIM_BILLBOARD)
            f->objs[i].anim_link = i - 1; /* two objects share a group */
        if (parent[i] < 0) f->scene.obj.v[f->scene.obj.n++] = i;
        else kids[parent[i]]++;
    }
    for (uint32_t i = 0; i < nobj; i++) f->objs[i].child.v = ra_arena_array(ar, kids[i], sizeof(uint32_t));
    for (uint32_t i = 0; i < nobj; i++)
        if (parent[i] >= 0) f->objs[parent[i]].child.v[f->objs[parent[i]].child.n++] = i;
    for (uint32_t i = 0; i < nobj; i++) {
        niff_obj *o = &f->objs[i];
        if (!o->child.n || fx_rnd() % 3) continue;
        /* these links as LODs */
        o->lod_num = o->child.n;
        o->lod_link = o->child.v;
        o->lod_dist = ra_arena_array(ar, o->lod_num, sizeof(float));
        o->child.n = 0;
    }
    f->cam_count = 2;
    f->cams = ra_arena_array(ar, 2, sizeof *f->cams);
    for (uint32_t c = 0; c < 2; c++) {
        niff_cam *cam = &f->cams[c];
        cam->name_index = nobj + c;
        cam->near_clip = 1;
        cam->far_clip = 1000;
        cam->fovy = (float)fx_frand(30, 80);
        cam->aspect = 1.333f;
        cam->eye_obj = fx_rnd() % nobj;
        cam->lookat_obj = (cam->eye_obj + 1 + fx_rnd() % (nobj - 1)) % nobj;
        cam->up_obj = c ? NIFF_NONE : fx_rnd() % nobj;
    }
}

/* Pose against playback inside every frame (30 frames per second), at
 * seven fractions of it that stay clear of the frame boundaries, where the
 * game's loops wrap and its steps jump (the baked keys jump within 0.1 ms
 * before them).  The bakers place keys between frames either by verifying
 * a piece at its quarter points or, for FULL and linear KEY groups, by a
 * bound over the whole piece (bake_span_pieces); this samples between those
 * keys, where a wrong bound would show.  And 0.3 ms either side of every
 * frame boundary, past the jump's two keys: where the bake takes a boundary
 * for continuous (bake_continuous: one key there, none 0.1 ms either side),
 * a step it missed would show as a ramp over the piece before it. */
static long g_dense_instants;
static double g_dense_worst;
static void check_between_frames(const ra_document *doc, const char *what, double tol)
{
    static const double frac[9] = {0.11, 0.23, 0.37, 0.52, 0.68, 0.81, 0.93, -0.009, 0.009};
    const ra_scene *s = &doc->scene;
    ra_mat4 *pw = malloc(s->node_count * sizeof *pw), *kw = malloc(s->node_count * sizeof *kw);
    double worst = 0, worst_t = 0;
    const char *worst_node = "";
    for (size_t a = 0; a < s->animation_count; a++) {
        double frames = s->animations[a].duration * 30;
        for (double f = 0; f < frames; f++)
            for (int k = 0; k < 9 && f + frac[k] < frames; k++) {
                if (f + frac[k] < 0) continue;
                double t = (f + frac[k]) / 30;
                fx_pose_and_playback(doc, a, t, pw, kw);
                for (size_t n = 0; n < s->node_count; n++) {
                    double d = ra_m4_max_abs_diff(&pw[n], &kw[n]);
                    if (d > worst) worst = d, worst_t = t, worst_node = s->nodes[n].name;
                }
                g_dense_instants++;
            }
    }
    CHECK(worst <= tol, "%s: between frames pose and playback differ by %g (allowed %g) at %g s on %s", what, worst,
          tol, worst_t, worst_node);
    if (worst > g_dense_worst) g_dense_worst = worst;
    free(pw);
    free(kw);
}

static void write_read_check(const niff_file *f, const char *what, bool semantics)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(niff_write(f, &w, &e) == RA_OK, "%s: write: %s", what, e.msg);
    const ra_format *det = ra_format_detect(w.data, w.size, NULL);
    CHECK(det && !strcmp(det->id, "niff"), "%s: our output is detected as NIFF", what);
    ra_document *doc = NULL;
    if (load(w.data, w.size, what, NULL, &doc, &e) != RA_OK) {
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        CHECK(0, "%s: load: %s", what, msg);
    } else {
        CHECK(ra_scene_check(&doc->scene, &e) == RA_OK, "%s: scene invariants: %s", what, e.msg);
        /* random chains reach tens of units from the origin, and the baker's
         * tolerances are relative to the values: 3e-4 there */
        if (semantics) fx_check_semantics(doc, what, 1.0 / 60, duration_of(doc) + 1e-9, 3 * TOL, &g_stats);
        if (semantics) check_between_frames(doc, what, 3 * TOL);
        ra_document_free(doc);
    }
    fx_check_roundtrip(w.data, w.size, NULL, what);
    ra_writer_free(&w);
}

static void random_files(int count)
{
    for (int i = 0; i < count; i++) {
        ra_arena *ar = ra_arena_create(0);
        niff_file f;
        char what[64];
        snprintf(what, sizeof what, "random file %d", i);
        random_file(ar, &f, i % 2 == 1, 3 + fx_rnd() % 12);
        write_read_check(&f, what, true);
        if (getenv("NIFF_DUMP") && atoi(getenv("NIFF_DUMP")) == i) {
            ra_writer w;
            ra_writer_init(&w);
            ra_error e;
            niff_write(&f, &w, &e);
            ra_write_file("/tmp/niff_dump.niff", w.data, w.size, &e);
            ra_writer_free(&w);
        }
        ra_arena_destroy(ar);
    }
}

/* The size: 100 objects x 300 FULL frames, imported exactly. */
static void big_full(void)
{
    ra_arena *ar = ra_arena_create(0);
    niff_file f;
    memset(&f, 0, sizeof f);
    f.version = 0x05000100;
    make_lists(ar, &f);
    uint32_t n = 100, frames = 300;
    f.obj_count = f.group_count = f.name_count = n;
    f.objs = ra_arena_array(ar, n, sizeof *f.objs);
    f.groups = ra_arena_array(ar, n, sizeof *f.groups);
    f.names = ra_arena_array(ar, n, sizeof *f.names);
    f.scene.obj.v = ra_arena_array(ar, 1, sizeof(uint32_t));
    f.scene.obj.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        f.names[i].header_size = 16;
        f.names[i].text = ra_arena_printf(ar, "joint%03u", i);
        new_obj(&f.objs[i], i, i);
        if (i + 1 < n && i % 10 != 9) { /* ten chains of ten */
            f.objs[i].child.n = 1;
            f.objs[i].child.v = ra_arena_array(ar, 1, sizeof(uint32_t));
            f.objs[i].child.v[0] = i + 1;
        }
        niff_group *g = &f.groups[i];
        g->header_size = 48;
        g->name_index = NIFF_NONE;
        g->type = NIFF_ANIM_FULL;
        g->rot_order = 0x00010203;
        g->anim_num = frames + 1;
        g->anims = ra_arena_array(ar, frames + 1, sizeof *g->anims);
        for (uint32_t k = 0; k <= frames; k++) {
            niff_anim *a = &g->anims[k];
            double ph = 2 * RA_PI * (k % frames) / frames;
            a->tag = NIFF_TAG_ANIM_FULL;
            a->t[0] = i % 10 ? 1.0f : (float)(i / 10);
            a->t[1] = (float)(0.2 * sin(ph + i));
            a->r[0] = (float)(0.4 * sin(ph + 0.3 * i));
            a->r[1] = (float)(0.6 * cos(ph + 0.1 * i));
            a->r[2] = (float)(0.3 * sin(2 * ph));
            a->s[0] = a->s[1] = a->s[2] = 1;
        }
    }
    uint32_t *roots = ra_arena_array(ar, 10, sizeof(uint32_t));
    for (uint32_t r = 0; r < 10; r++) roots[r] = 10 * r;
    f.scene.obj.v = roots;
    f.scene.obj.n = 10;
    write_read_check(&f, "100 objects x 300 FULL frames", true);
    ra_arena_destroy(ar);
}

/* ---- hostile files ---------------------------------------------------------------------------------------- */
static void expect_refused(const niff_file *f, const char *what, ra_status code, const char *field_name)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    niff_write(f, &w, &e);
    ra_document *doc = NULL;
    ra_status st = load(w.data, w.size, what, NULL, &doc, &e);
    char msg[512];
    ra_error_format(&e, msg, sizeof msg);
    CHECK(st == code && !strcmp(e.field, field_name), "%s: refused with %s in %s: %s", what, ra_status_name(code),
          field_name, msg);
    if (doc) ra_document_free(doc);
    ra_writer_free(&w);
}

/* f written into w (initialised here; ra_writer_free it). */
static void write_niff(const niff_file *f, ra_writer *w)
{
    ra_writer_init(w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(niff_write(f, w, &e) == RA_OK, "write: %s", e.msg);
}

/* Anims that do not fit their AnimGroup's type: refused at the Anim's
 * offset; an unknown KEY interpolation: played as linear, with a warning.
 * The reader summarises each group's tags (niff_group.anim_tags) so the
 * scene reads the Anims again only then: each case is one Anim in a group
 * whose others fit. */
static bool has_warning(const ra_document *doc, const char *text)
{
    for (size_t i = 0; i < doc->scene.warning_count; i++)
        if (strstr(doc->scene.warnings[i].msg, text)) return true;
    return false;
}

static void anim_tags(void)
{
    ra_arena *ar = ra_arena_create(0);
    niff_file f;
    int full = -1, key = -1, bb = -1;
    for (uint32_t seed = 1; seed < 200 && (full < 0 || key < 0 || bb < 0); seed++) {
        fx_rng = seed;
        random_file(ar, &f, false, 12);
        full = key = bb = -1;
        for (uint32_t i = 0; i < f.group_count; i++) {
            const niff_group *g = &f.groups[i];
            if (g->type == NIFF_ANIM_FULL && g->anim_num >= 3 && full < 0) full = (int)i;
            if (g->type == NIFF_ANIM_KEY && g->anim_num >= 3 && key < 0) key = (int)i;
            if (g->type == NIFF_ANIM_BILLBOARD && bb < 0) bb = (int)i;
        }
    }
    CHECK(full >= 0 && key >= 0 && bb >= 0, "anim_tags: a random file with FULL, KEY and BILLBOARD groups");
    if (full < 0 || key < 0 || bb < 0) {
        ra_arena_destroy(ar);
        return;
    }
    struct {
        int group;
        uint32_t anim, tag, interp;
        const char *what;
        const char *warning; /* NULL: refused */
    } cases[] = {
        {full, 1, NIFF_TAG_ANIM_KEY, 0, "a KEY Anim in a FULL group", NULL},
        {full, 2, NIFF_TAG_ANIM_BILLBOARD, 0, "a BILLBOARD Anim in a FULL group", NULL},
        {key, 1, NIFF_TAG_ANIM_FULL, 0, "a FULL Anim in a KEY group", NULL},
        {bb, 0, NIFF_TAG_ANIM_CONST, 0, "a CONST Anim in a BILLBOARD group", NULL},
        {key, 2, NIFF_TAG_ANIM_KEY, 3, "a KEY Anim of interpolation 3", "unknown KEY interpolation"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        niff_anim *a = &f.groups[cases[c].group].anims[cases[c].anim];
        const niff_anim save = *a;
        a->tag = cases[c].tag;
        if (cases[c].tag == NIFF_TAG_ANIM_KEY) a->interp = cases[c].interp;
        ra_writer w;
        write_niff(&f, &w);
        ra_error e;
        ra_document *doc = NULL;
        ra_status st = load(w.data, w.size, cases[c].what, NULL, &doc, &e);
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        if (cases[c].warning) {
            CHECK(st == RA_OK && has_warning(doc, cases[c].warning), "%s: loads with the warning \"%s\" (%s)",
                  cases[c].what, cases[c].warning, msg);
        } else {
            /* the offset names the Anim: its tag word is the one written */
            bool at =
                st == RA_ERR_BAD_VALUE && e.offset + 4 <= w.size && ra_load_u32be(w.data + e.offset) == cases[c].tag;
            CHECK(at && !strcmp(e.field, "anim_tag") && strstr(e.msg, "holds an Anim with the tag"),
                  "%s: refused at the Anim's tag: %s", cases[c].what, msg);
        }
        if (doc) ra_document_free(doc);
        ra_writer_free(&w);
        *a = save;
    }
    /* and the file as made loads without either */
    ra_writer w;
    write_niff(&f, &w);
    ra_error e;
    ra_document *doc = NULL;
    CHECK(load(w.data, w.size, "anim_tags", NULL, &doc, &e) == RA_OK && !has_warning(doc, "KEY interpolation"),
          "anim_tags: the unchanged file loads without an interpolation warning");
    if (doc) ra_document_free(doc);
    ra_writer_free(&w);
    ra_arena_destroy(ar);
}

/* The AnimList's groups are read as jobs (niff_read_run), on several
 * threads from threads=2 on: the model and scene are those of one thread,
 * and of two broken groups the earlier one is reported, as reading in file
 * order does. */
static void parallel_read(void)
{
    ra_arena *ar = ra_arena_create(0);
    niff_file f;
    fx_rng = 77;
    random_file(ar, &f, true, 16);
    ra_writer w;
    write_niff(&f, &w);
    ra_error e;
    char *dumps[3][2] = {{NULL}};
    static const char *const threads[3] = {"1", "2", "4"};
    uint64_t first = 0, second = 0; /* the anim_size words of two groups' Anims */
    for (int t = 0; t < 3; t++) {
        ra_document *doc = NULL;
        ra_status st = fx_load_opt(w.data, w.size, "parallel_read", false, "threads", threads[t], &doc, &e);
        CHECK(st == RA_OK, "parallel_read: loads with threads=%s", threads[t]);
        if (st == RA_OK) {
            for (int k = 0; k < 2; k++) {
                size_t n = 0;
                if (ra_document_dump(doc, k ? RA_DUMP_SOURCE : RA_DUMP_SCENE, &dumps[t][k], &n, &e) != RA_OK)
                    dumps[t][k] = NULL;
            }
            const niff_file *m = doc->model;
            for (uint32_t g = 0; g < m->group_count; g++)
                if (m->groups[g].anim_num > 1) {
                    if (!first && g >= 3) first = m->groups[g].anims[1].offset + 8;
                    else if (first && !second && g >= 9) second = m->groups[g].anims[0].offset + 8;
                }
        }
        if (doc) ra_document_free(doc);
    }
    for (int k = 0; k < 2; k++) {
        CHECK(dumps[0][k] && dumps[1][k] && dumps[2][k] && !strcmp(dumps[0][k], dumps[1][k]) &&
                  !strcmp(dumps[0][k], dumps[2][k]),
              "parallel_read: the same %s with 1, 2 and 4 threads", k ? "model (dump --source)" : "scene");
        for (int t = 0; t < 3; t++) ra_string_free(dumps[t][k]);
    }
    CHECK(first && second, "parallel_read: two groups with Anims");
    ra_error errs[3];
    for (int t = 0; first && second && t < 3; t++) {
        uint8_t keep[2][4];
        memcpy(keep[0], w.data + first, 4);
        memcpy(keep[1], w.data + second, 4);
        static const uint8_t seven[4] = {0, 0, 0, 7}, six[4] = {0, 0, 0, 6};
        memcpy(w.data + first, seven, 4);
        memcpy(w.data + second, six, 4);
        ra_document *doc = NULL;
        ra_status st = fx_load_opt(w.data, w.size, "parallel_read", false, "threads", threads[t], &doc, &errs[t]);
        memcpy(w.data + first, keep[0], 4);
        memcpy(w.data + second, keep[1], 4);
        CHECK(st == RA_ERR_BAD_VALUE && errs[t].offset == first && !strcmp(errs[t].field, "anim_size"),
              "parallel_read: threads=%s reports the first broken group (at %llu): %s at %llu", threads[t],
              (unsigned long long)first, errs[t].field, (unsigned long long)errs[t].offset);
        if (doc) ra_document_free(doc);
    }
    if (first && second)
        CHECK(!strcmp(errs[0].msg, errs[1].msg) && !strcmp(errs[0].msg, errs[2].msg),
              "parallel_read: the same message with 1, 2 and 4 threads");
    ra_writer_free(&w);
    ra_arena_destroy(ar);
}

/* Each group's breakpoints of one period are made as jobs (plan_periods),
 * which stop making them once they hold more than the whole budget; the
 * groups are then taken in order.  Groups that turn 240 quarter turns
 * between frames (each such step is cut 240 times) run past the budget
 * after a few: every thread count refuses the file at the same group (that
 * the jobs give the scene of one thread: parallel_bake). */
static void breakpoint_budget(void)
{
    ra_arena *ar = ra_arena_create(0);
    niff_file f;
    fx_rng = 5;
    random_file(ar, &f, false, 12);
    for (uint32_t i = 0; i < f.group_count; i++) {
        niff_group *g = &f.groups[i];
        g->type = NIFF_ANIM_FULL;
        g->loop = 0;
        g->anim_num = 24;
        g->anims = ra_arena_array(ar, g->anim_num, sizeof *g->anims);
        for (uint32_t k = 0; k < g->anim_num; k++) {
            random_trs(&g->anims[k], NIFF_TAG_ANIM_FULL);
            g->anims[k].r[0] = (float)(k * 240 * RA_PI / 2);
            g->anims[k].r[1] = g->anims[k].r[2] = 0;
        }
    }
    ra_writer w;
    write_niff(&f, &w);
    static const char *const threads[3] = {"1", "2", "4"};
    ra_error errs[3];
    for (int t = 0; t < 3; t++) {
        ra_document *doc = NULL;
        ra_status st = fx_load_opt(w.data, w.size, "breakpoint_budget", false, "threads", threads[t], &doc, &errs[t]);
        CHECK(st == RA_ERR_LIMIT && !strcmp(errs[t].field, "anim_loop"),
              "breakpoint_budget: threads=%s refuses the file (too many keys): %s", threads[t], errs[t].msg);
        if (doc) ra_document_free(doc);
    }
    for (int t = 1; t < 3; t++)
        CHECK(errs[t].offset == errs[0].offset && !strcmp(errs[t].msg, errs[0].msg),
              "breakpoint_budget: threads=%s names the group threads=1 does (%llu, %llu)", threads[t],
              (unsigned long long)errs[t].offset, (unsigned long long)errs[0].offset);
    ra_writer_free(&w);
    ra_arena_destroy(ar);
}

/* w's bytes loaded as NIFF with word over the 4 bytes at off, which are put
 * back (the document keeps no pointer into them) */
static ra_status load_with_word(ra_writer *w, size_t off, const uint8_t word[4], const char *name, ra_document **doc,
                                ra_error *e)
{
    uint8_t save[4];
    memcpy(save, w->data + off, 4);
    memcpy(w->data + off, word, 4);
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "format", "niff");
    ra_status st = load(w->data, w->size, name, &o, doc, e);
    memcpy(w->data + off, save, 4);
    return st;
}

static void hostile(void)
{
    ra_arena *ar = ra_arena_create(0);
    niff_file f;
    /* a chain of 300 objects: deeper than max_depth (256) */
    memset(&f, 0, sizeof f);
    f.version = 0x05000100;
    make_lists(ar, &f);
    f.obj_count = 300;
    f.objs = ra_arena_array(ar, 300, sizeof *f.objs);
    for (uint32_t i = 0; i < 300; i++) {
        new_obj(&f.objs[i], NIFF_NONE, NIFF_NONE);
        if (i + 1 < 300) {
            f.objs[i].child.n = 1;
            f.objs[i].child.v = ra_arena_array(ar, 1, sizeof(uint32_t));
            f.objs[i].child.v[0] = i + 1;
        }
    }
    f.scene.obj.v = ra_arena_array(ar, 1, sizeof(uint32_t));
    f.scene.obj.n = 1;
    expect_refused(&f, "300-deep tree", RA_ERR_LIMIT, "obj_child_link");
    /* a cycle below the root, and a cycle that no root reaches */
    f.objs[299].child.n = 1;
    f.objs[299].child.v = ra_arena_array(ar, 1, sizeof(uint32_t));
    f.objs[299].child.v[0] = 100;
    f.objs[99].child.n = 0;
    expect_refused(&f, "unreached cycle", RA_ERR_BAD_VALUE, "obj_child_link");

    /* a billboard that looks at its own child */
    random_file(ar, &f, false, 3);
    for (uint32_t i = 0; i < 3; i++) f.objs[i].child.n = f.objs[i].lod_num = 0;
    f.scene.obj.n = 1;
    f.scene.obj.v[0] = 0;
    f.objs[0].child.n = 1;
    f.objs[0].child.v = ra_arena_array(ar, 1, sizeof(uint32_t));
    f.objs[0].child.v[0] = 1;
    f.objs[0].anim_link = 0;
    f.groups[0].type = NIFF_ANIM_BILLBOARD;
    f.groups[0].anim_num = 1;
    f.groups[0].has_channels = false;
    f.groups[0].anims = ra_arena_array(ar, 1, sizeof(niff_anim));
    f.groups[0].anims[0].tag = NIFF_TAG_ANIM_BILLBOARD;
    f.groups[0].anims[0].lookat_obj = 1;
    f.groups[0].anims[0].upper_obj = 2;
    f.objs[1].anim_link = NIFF_NONE;
    expect_refused(&f, "billboard looking at its child", RA_ERR_BAD_VALUE, "lookat_obj_index");

    /* a loop played 2^32-1 times */
    f.groups[0].type = NIFF_ANIM_KEY;
    f.groups[0].anim_num = 2;
    f.groups[0].loop = 0xFFFFFFFEu;
    f.groups[0].anims = ra_arena_array(ar, 2, sizeof(niff_anim));
    random_trs(&f.groups[0].anims[0], NIFF_TAG_ANIM_KEY);
    random_trs(&f.groups[0].anims[1], NIFF_TAG_ANIM_KEY);
    f.groups[0].anims[0].next_key = 1;
    f.groups[0].anims[1].key = 1;
    f.groups[0].anims[1].next_key = NIFF_NONE;
    expect_refused(&f, "a loop played 4 billion times", RA_ERR_LIMIT, "anim_loop");
    ra_arena_destroy(ar);

    /* counts of 0xFFFFFFFF in every count field of a written file */
    ar = ra_arena_create(0);
    fx_rng = 99;
    random_file(ar, &f, true, 4);
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    niff_write(&f, &w, &e);
    long refused = 0;
    for (size_t off = 0; off + 4 <= w.size; off += 4) {
        ra_document *doc = NULL;
        if (load_with_word(&w, off, (const uint8_t *)"\xFF\xFF\xFF\xFF", "ff", &doc, &e) == RA_OK) {
            CHECK(ra_scene_check(&doc->scene, &e) == RA_OK, "0xFFFFFFFF at %zu: a broken scene: %s", off, e.msg);
            ra_document_free(doc);
        } else {
            refused++;
            CHECK(e.format && e.field[0], "0xFFFFFFFF at %zu: the error names format and field", off);
        }
    }
    CHECK(refused > 50, "only %ld of the 0xFFFFFFFF words were refused", refused);
    ra_writer_free(&w);
    ra_arena_destroy(ar);

    /* a quiet NaN (big-endian 7FC00000) in every word of a file with every
     * kind of Anim and channel: each float that must be finite is refused
     * with its own field and byte offset, the floats read in runs included */
    static const char *const finite_fields[] = {"translate", "rotate_axis", "scale", "channel value",
                                                "channel differential"};
    long hits[5] = {0};
    ar = ra_arena_create(0);
    fx_rng = 9; /* 12 objects, 4.6 KB: every field below is hit, the loads take 0.07 s */
    random_file(ar, &f, true, 12);
    ra_writer_init(&w);
    ra_error_clear(&e);
    niff_write(&f, &w, &e);
    for (size_t off = 0; off + 4 <= w.size; off += 4) {
        ra_document *doc = NULL;
        if (load_with_word(&w, off, (const uint8_t *)"\x7F\xC0\x00\x00", "nan", &doc, &e) != RA_OK &&
            strstr(e.msg, "not a finite number")) {
            int k = 0;
            while (k < 5 && strcmp(e.field, finite_fields[k])) k++;
            CHECK(k < 5 && e.offset == off, "NaN at %zu: refused in %s at byte %llu", off, e.field,
                  (unsigned long long)e.offset);
            if (k < 5) hits[k]++;
        }
        ra_document_free(doc);
    }
    for (int k = 0; k < 5; k++) CHECK(hits[k] > 0, "no NaN was refused in %s", finite_fields[k]);
    ra_writer_free(&w);
    ra_arena_destroy(ar);
}

static bool is_fixture(const char *n)
{
    const char *x = strrchr(n, '.');
    return x && (!strcmp(x, ".niff") || !strcmp(x, ".nif"));
}

/* d loaded (as name) with the big-endian words value[0..nw) written at where[0..nw), which are put
 * back afterwards (the document keeps no pointer into the bytes) */
static ra_status load_patched(uint8_t *d, size_t n, const char *name, const uint64_t *where, const uint32_t *value,
                              size_t nw, ra_document **doc, ra_error *e)
{
    uint8_t keep[8][4];
    if (nw > 8) return RA_ERR_LIMIT;
    for (size_t w = 0; w < nw; w++) {
        uint8_t *q = d + where[w];
        memcpy(keep[w], q, 4);
        q[0] = (uint8_t)(value[w] >> 24), q[1] = (uint8_t)(value[w] >> 16), q[2] = (uint8_t)(value[w] >> 8),
        q[3] = (uint8_t)value[w];
    }
    ra_status st = load(d, n, name, NULL, doc, e);
    for (size_t w = 0; w < nw; w++) memcpy(d + where[w], keep[w], 4);
    return st;
}

/* A fixture's bytes (ra_free them) and its load; NULL (nothing to free) when either fails. */
static uint8_t *slurp_load(const char *name, size_t *n, ra_document **doc)
{
    ra_error e;
    uint8_t *d = fx_slurp(g_dir, name, n);
    *doc = NULL;
    CHECK(d && load(d, *n, name, NULL, doc, &e) == RA_OK, "%s: %s", name, d ? e.msg : "not read");
    if (!*doc) {
        ra_free(d);
        return NULL;
    }
    return d;
}

/* A Tex whose image is in another file (the SDK's TexList page: tex_img_index
 * 0xFFFFFFFF): textures.niff with that word written into each used Tex in turn
 * loads; the Mat that used it is untextured and names it in its metadata, a
 * warning says so, and every other material keeps its texture. */
static void external_textures(void)
{
    size_t n = 0;
    ra_error e;
    ra_document *doc = NULL;
    uint8_t *d = slurp_load("textures.niff", &n, &doc);
    if (!d) return;
    /* each material's texture name, and each Tex's tex_img_index offset */
    enum {
        MAXM = 16
    };
    char mat[MAXM][64], tex[MAXM][64];
    size_t nm = doc->scene.material_count < MAXM ? doc->scene.material_count : MAXM;
    for (size_t i = 0; i < nm; i++) {
        const ra_material *m = &doc->scene.materials[i];
        snprintf(mat[i], sizeof mat[i], "%s", m->name);
        snprintf(tex[i], sizeof tex[i], "%s", m->texture >= 0 ? doc->scene.textures[m->texture].name : "");
    }
    const niff_file *f = niff_document_file(doc);
    uint32_t ntex = f->geo.tex_count < MAXM ? f->geo.tex_count : MAXM;
    uint64_t at[MAXM], toff[MAXM];
    char tname[MAXM][64];
    for (uint32_t t = 0; t < ntex; t++) {
        at[t] = f->geo.texs[t].area;     /* the TexDataArea: 24 tex_img_index (still) */
        toff[t] = f->geo.texs[t].offset; /* the Tex: 32 tex_anim */
        const uint32_t ni = f->geo.texs[t].name_index;
        snprintf(tname[t], sizeof tname[t], "%s", ni < f->name_count && f->names[ni].text ? f->names[ni].text : "");
    }
    size_t textures = doc->scene.texture_count;
    ra_document_free(doc);
    int tried = 0;
    /* variant 0: tex_img_index NONE; variant 1: an animated Tex (tex_anim FLIPBOOK) of no image: its
     * TexDataArea's scale_num, offset_num and img_num (the still area's tile_w, tile_h, offset_x) 0 */
    for (uint32_t vt = 0; vt < 2 * ntex; vt++) {
        uint32_t t = vt % ntex, variant = vt / ntex;
        size_t user = SIZE_MAX; /* the material that shows Tex t */
        for (size_t i = 0; i < nm; i++)
            if (tname[t][0] && !strcmp(tex[i], tname[t])) user = i;
        /* the words written (offset, value) and what they held */
        const uint64_t where[2][4] = {{at[t] + 24}, {toff[t] + 32, at[t] + 8, at[t] + 12, at[t] + 16}};
        const uint32_t value[2][4] = {{0xFFFFFFFFu}, {1, 0, 0, 0}};
        const uint32_t words = variant ? 4 : 1;
        if (user == SIZE_MAX || at[t] + 28 > n || toff[t] + 36 > n) continue;
        ra_status st = load_patched(d, n, "textures.niff", where[variant], value[variant], words, &doc, &e);
        tried++;
        CHECK(st == RA_OK, "Tex %u external (%s): refused (%s)", t, variant ? "animated" : "NONE", e.msg);
        if (st != RA_OK) continue;
        const ra_scene *s = &doc->scene;
        bool warned = false;
        for (size_t w = 0; w < s->warning_count; w++) warned = warned || strstr(s->warnings[w].msg, "another file");
        CHECK(warned && s->texture_count == textures - 1, "Tex %u external: %zu textures (want %zu), warned %d", t,
              s->texture_count, textures - 1, warned);
        for (size_t i = 0; i < nm && i < s->material_count; i++) {
            const ra_material *m = &s->materials[i];
            const ra_meta *x = ra_meta_get(&m->meta, "niff.external_texture");
            const char *now = m->texture >= 0 ? s->textures[m->texture].name : "";
            if (i == user)
                CHECK(!strcmp(m->name, mat[i]) && m->texture == -1 && x && !strcmp(x->u.s, tname[t]),
                      "Tex %u external: material %s untextured, naming %s", t, mat[i], tname[t]);
            else
                CHECK(!strcmp(m->name, mat[i]) && !strcmp(now, tex[i]) && !x, "Tex %u external: material %s keeps %s",
                      t, mat[i], tex[i]);
        }
        ra_document_free(doc);
    }
    CHECK(tried >= 14, "textures.niff: %d used Texs made external, two ways", tried);
    ra_free(d);
}

/* An animated colour-indexed Tex of no image here (its images in another file) has no palette
 * arrays: ci_palette.niff's Texs with use_color_palette 1, each in turn made animated (tex_anim 1,
 * scale_num, offset_num and img_num 0) with its Nintendo extension cut to the 20 bytes before the
 * arrays (the 8 bytes after it now a user extension, 0xFFFFFFFF), load with the Tex external and
 * neither palette word read (both stay 0). */
static void palette_arrays_skipped(void)
{
    size_t n = 0;
    ra_document *doc = NULL;
    uint8_t *d = slurp_load("ci_palette.niff", &n, &doc);
    if (!d) return;
    const niff_file *f = niff_document_file(doc);
    enum {
        MAXT = 16
    };
    uint64_t off[MAXT], area[MAXT];
    uint32_t nt = 0;
    for (uint32_t t = 0; t < f->geo.tex_count && nt < MAXT; t++)
        if (f->geo.texs[t].use_palette && f->geo.texs[t].anim == 0) {
            off[nt] = f->geo.texs[t].offset, area[nt] = f->geo.texs[t].area;
            nt++;
        }
    ra_document_free(doc);
    CHECK(nt >= 4, "ci_palette.niff: %u colour-indexed Texs", nt);
    for (uint32_t k = 0; k < nt; k++) {
        uint64_t ae = area[k] + 28; /* the still TexDataArea is 28 bytes; the extension follows */
        const uint64_t where[8] = {off[k] + 32, area[k] + 8, area[k] + 12, area[k] + 16,
                                   off[k] + 44, off[k] + 48, ae + 20,      ae + 24};
        const uint32_t value[8] = {1, 0, 0, 0, 20, 8, 0xFFFFFFFFu, 0xFFFFFFFFu};
        if (ae + 28 > n) continue;
        ra_error e;
        ra_status st = load_patched(d, n, "ci_palette.niff", where, value, 8, &doc, &e);
        CHECK(st == RA_OK, "Tex at %llu animated without images: refused (%s)", (unsigned long long)off[k], e.msg);
        if (st != RA_OK) continue;
        f = niff_document_file(doc);
        const niff_tex *t = NULL;
        for (uint32_t i = 0; i < f->geo.tex_count; i++)
            if (f->geo.texs[i].offset == off[k]) t = &f->geo.texs[i];
        CHECK(t && t->external && t->use_palette && t->palette_index == 0 && t->tlut_bank == 0,
              "Tex at %llu: external %d, palette words %u %u (the arrays were read)", (unsigned long long)off[k],
              t ? t->external : -1, t ? t->palette_index : 0, t ? t->tlut_bank : 0);
        ra_document_free(doc);
    }
    ra_free(d);
}

/* LOD levels (docs/formats/niff.md §3): static.niff's house links house_lod
 * as LOD level 0 at distance 50; the level is placed below it like a child,
 * with node metadata saying which level it is, and one warning that every
 * level is shown. */
static void lod_levels(void)
{
    size_t n = 0;
    ra_document *doc = NULL;
    uint8_t *d = slurp_load("static.niff", &n, &doc);
    if (!d) return;
    const ra_scene *s = &doc->scene;
    const ra_node *lod = NULL, *house = NULL;
    for (size_t i = 0; i < s->node_count; i++) {
        if (!strcmp(s->nodes[i].name, "house_lod")) lod = &s->nodes[i];
        if (!strcmp(s->nodes[i].name, "house")) house = &s->nodes[i];
    }
    const ra_meta *lv = lod ? ra_meta_get(&lod->meta, "niff.lod_level") : NULL;
    const ra_meta *ds = lod ? ra_meta_get(&lod->meta, "niff.lod_distance") : NULL;
    CHECK(lod && house && lod->parent == (int32_t)(house - s->nodes), "static.niff: house_lod below house");
    CHECK(lv && lv->type == RA_META_INT && lv->u.i == 0 && ds && ds->type == RA_META_DOUBLE && ds->u.d == 50,
          "static.niff: house_lod's niff.lod_level 0 and niff.lod_distance 50");
    CHECK(house && !ra_meta_get(&house->meta, "niff.lod_level"), "static.niff: house is no LOD level");
    bool warned = false;
    for (size_t i = 0; i < s->warning_count; i++)
        warned |= strstr(s->warnings[i].msg, "1 object(s) are LOD levels") != NULL;
    CHECK(warned, "static.niff: the LOD warning");
    /* house's LOD link written as 2 (door, one of its children): door is placed by the child link,
     * followed first, so it is no LOD level and nothing warns */
    const niff_file *f = niff_document_file(doc);
    const niff_obj *h = f->obj_count ? &f->objs[0] : NULL;
    uint64_t at = h && h->lod_num == 1 ? h->offset + 88 + 4ull * h->lod_num : 0;
    const uint32_t two = 2;
    ra_document_free(doc);
    doc = NULL;
    ra_error e;
    CHECK(at && load_patched(d, n, "static.niff", &at, &two, 1, &doc, &e) == RA_OK, "LOD link to a child: %s",
          at ? e.msg : "house has no LOD link");
    if (doc) {
        bool any = false, warn = false;
        for (size_t i = 0; i < doc->scene.node_count; i++)
            any |= ra_meta_get(&doc->scene.nodes[i].meta, "niff.lod_level") != NULL;
        for (size_t i = 0; i < doc->scene.warning_count; i++)
            warn |= strstr(doc->scene.warnings[i].msg, "LOD levels") != NULL;
        CHECK(!any && !warn, "LOD link to a child: no node is a LOD level (%d), no warning (%d)", any, warn);
        ra_document_free(doc);
    }
    ra_free(d);
}

/* Material sources and the texture (docs/formats/niff.md §9): textures.niff's
 * Mat 0 takes its Tex while its colour or alpha types name TEX0 (0x8, alpha
 * 0x80000) and goes without it when they name PRIM alone; the other Mats keep
 * theirs.  (mat_sources.niff covers the colours and the prim colour.) */
static void mat_texture_source(void)
{
    size_t n = 0;
    ra_document *doc = NULL;
    uint8_t *d = slurp_load("textures.niff", &n, &doc);
    if (!d) return;
    const niff_file *f = niff_document_file(doc);
    uint64_t at = f->geo.mat_count ? f->geo.mats[0].offset : 0;
    const size_t textured = doc->scene.texture_count;
    ra_document_free(doc);
    CHECK(at && textured >= 2, "textures.niff: Mat 0 at %llu, %zu textures", (unsigned long long)at, textured);
    const struct {
        uint32_t color, alpha;
        bool tex;
    } cases[] = {{0x4, 0x40000, false}, {0x8, 0x40000, true}, {0x4, 0x80000, true}, {0xFFFFFFFFu, 0, true}};
    for (size_t k = 0; at && k < sizeof cases / sizeof *cases; k++) {
        const uint64_t where[2] = {at + 24, at + 32};
        const uint32_t value[2] = {cases[k].color, cases[k].alpha};
        ra_error e;
        ra_status st = load_patched(d, n, "textures.niff", where, value, 2, &doc, &e);
        CHECK(st == RA_OK, "Mat 0 types 0x%x / 0x%x: %s", value[0], value[1], e.msg);
        if (st != RA_OK) continue;
        const ra_material *m = NULL; /* the scene material of Mat 0 */
        for (size_t i = 0; i < doc->scene.material_count; i++) {
            const ra_meta *mi = ra_meta_get(&doc->scene.materials[i].meta, "niff.mat_index");
            if (mi && mi->u.i == 0) m = &doc->scene.materials[i];
        }
        CHECK(m && (m->texture >= 0) == cases[k].tex && doc->scene.texture_count == textured - !cases[k].tex,
              "Mat 0 types 0x%x / 0x%x: texture %d (expected %s), %zu textures", value[0], value[1],
              m ? m->texture : -9, cases[k].tex ? "one" : "none", doc->scene.texture_count);
        ra_document_free(doc);
    }
    ra_free(d);
}

/* The header's list sizes (*_list_num_byte): the specification says 0
 * does not occur, and the format page says a reader accepts it anyway.
 * geometry.niff with each present list's header size written as 0 loads
 * as it was (the same nodes, meshes and materials); written 4 bytes off, it
 * is refused at that word (field list_num_byte). */
static void header_list_sizes(void)
{
    size_t n = 0;
    ra_document *doc = NULL;
    uint8_t *d = slurp_load("geometry.niff", &n, &doc);
    if (!d) return;
    const size_t nodes = doc->scene.node_count, meshes = doc->scene.mesh_count, mats = doc->scene.material_count;
    ra_document_free(doc);
    int zeroed = 0;
    for (uint64_t at = 16; at < 92; at += 4) {
        uint32_t v = (uint32_t)d[at] << 24 | (uint32_t)d[at + 1] << 16 | (uint32_t)d[at + 2] << 8 | d[at + 3];
        if (!v) continue;
        ra_error e;
        const uint32_t zero = 0, off = v + 4;
        ra_status st = load_patched(d, n, "geometry.niff", &at, &zero, 1, &doc, &e);
        CHECK(st == RA_OK && doc->scene.node_count == nodes && doc->scene.mesh_count == meshes &&
                  doc->scene.material_count == mats,
              "list size at %llu written 0: loads as before (%s)", (unsigned long long)at, st == RA_OK ? "" : e.msg);
        if (st == RA_OK) ra_document_free(doc);
        st = load_patched(d, n, "geometry.niff", &at, &off, 1, &doc, &e);
        CHECK(st == RA_ERR_BAD_VALUE && !strcmp(e.field, "list_num_byte") && e.offset == at,
              "list size at %llu written %u: refused at it (%s)", (unsigned long long)at, off, e.msg);
        if (st == RA_OK) ra_document_free(doc);
        zeroed++;
    }
    CHECK(zeroed >= 10, "geometry.niff: %d list sizes in its header", zeroed);
    ra_free(d);
}

/* A Shape's cull bits (shape_type & 0x30): geometry.niff's plane_shape (0x05, drawn double-sided)
 * written as CULL_FRONT (0x25) shows its back faces: single-sided, each triangle's corners in the
 * order 0, 2, 1 (told by position: the vertices are numbered in order of first use); as CULL_BOTH
 * (0x35) single-sided in its own order, with a warning.  Every other mesh stays as it was. */
static void cull_bits(void)
{
    size_t n = 0;
    ra_error e;
    ra_document *ref = NULL;
    uint8_t *d = slurp_load("geometry.niff", &n, &ref);
    if (!d) return;
    const niff_file *f = niff_document_file(ref);
    const uint32_t shape = 1;
    CHECK(f->geo.shape_count > shape && f->geo.shapes[shape].type == 0x05, "geometry.niff: shape 1 of type 0x05");
    uint64_t at = f->geo.shapes[shape].offset + 16; /* shape_type */
    for (int v = 0; v < 2 && f->geo.shape_count > shape && at + 4 <= n; v++) {
        const uint32_t type = v ? 0x35 : 0x25;
        ra_document *doc = NULL;
        ra_status st = load_patched(d, n, "geometry.niff", &at, &type, 1, &doc, &e);
        CHECK(st == RA_OK, "shape_type 0x%02X: refused (%s)", type, e.msg);
        if (st != RA_OK) continue;
        const ra_scene *a = &ref->scene, *b = &doc->scene;
        CHECK(a->mesh_count == b->mesh_count, "shape_type 0x%02X: %zu meshes, expected %zu", type, b->mesh_count,
              a->mesh_count);
        size_t ours = 0, corners = 0;
        for (size_t m = 0; m < a->mesh_count && m < b->mesh_count; m++) {
            const ra_mesh *x = &a->meshes[m], *y = &b->meshes[m];
            const ra_meta *si = ra_meta_get(&x->meta, "niff.shape_index");
            bool mine = si && si->u.i == (int64_t)shape, rev = mine && !v;
            ours += mine;
            CHECK(x->triangle_count == y->triangle_count && x->vertex_count == y->vertex_count,
                  "shape_type 0x%02X: mesh %s changed size", type, x->name);
            if (x->material >= 0 && y->material >= 0)
                CHECK(b->materials[y->material].double_sided == (mine ? false : a->materials[x->material].double_sided),
                      "shape_type 0x%02X: mesh %s double-sided %d", type, x->name,
                      b->materials[y->material].double_sided);
            for (size_t t = 0; t < x->triangle_count && t < y->triangle_count; t++)
                for (size_t c = 0; c < 3; c++, corners++) {
                    const float *p = &x->positions[3 * (size_t)x->indices[3 * t + c]];
                    const float *q = &y->positions[3 * (size_t)y->indices[3 * t + (rev && c ? 3 - c : c)]];
                    CHECK(!memcmp(p, q, 3 * sizeof *p), "shape_type 0x%02X: mesh %s triangle %zu corner %zu", type,
                          x->name, t, c);
                }
        }
        CHECK(ours > 0 && corners > 0, "shape_type 0x%02X: the shape's meshes found", type);
        bool warned = false;
        for (size_t w = 0; w < b->warning_count; w++) warned = warned || strstr(b->warnings[w].msg, "cull both faces");
        CHECK(warned == (v == 1), "shape_type 0x%02X: CULL_BOTH warning %d", type, warned);
        ra_document_free(doc);
    }
    ra_document_free(ref);
    ra_free(d);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_niff FIXTURE_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    int fixtures = fx_for_each_file(g_dir, is_fixture, run_fixture);
    CHECK(fixtures >= 34, "only %d fixtures", fixtures);
    external_textures();
    cull_bits();
    palette_arrays_skipped();
    header_list_sizes();
    mat_texture_source();
    lod_levels();
    printf("fixtures: %d, expectations: %ld, pose/playback instants: %ld (worst %.3g)\n", fixtures, g_checks,
           g_stats.instants, g_stats.worst);
    fx_rng = 4242;
    clock_t c0 = clock();
    random_files(60);
    clock_t c1 = clock();
    big_full();
    clock_t c2 = clock();
    hostile();
    anim_tags();
    parallel_read();
    breakpoint_budget();
    printf("cpu s: random %.2f, big %.2f, hostile and the rest %.2f\n", (double)(c1 - c0) / CLOCKS_PER_SEC,
           (double)(c2 - c1) / CLOCKS_PER_SEC, (double)(clock() - c2) / CLOCKS_PER_SEC);
    printf("pose/playback instants with random and big files: %ld (worst %.3g); between frames: %ld (worst %.3g)\n",
           g_stats.instants, g_stats.worst, g_dense_instants, g_dense_worst);
    return ra_test_finish("test_niff");
}
