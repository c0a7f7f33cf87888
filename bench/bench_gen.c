/* Benchmark inputs (not a test): writes one large file of a format with the
 * project's own writers.
 *
 *   bench_gen FORMAT NODES KEYS OUT
 *
 * FORMAT is lego | metroid | wog | niff | homeworld.  NODES is the nodes
 * (LEGO nodes, Metroid bones, World of Goo actors, NIFF objects, Homeworld
 * objects) and KEYS the keys of each track (LEGO keys per track, Metroid
 * frames, World of Goo keys per channel, NIFF FULL frames, Homeworld keys).
 * The motion is smooth (sines with per-node phases), as a game's would be;
 * key times are irregular where the format allows it.  Metroid also writes
 * the skeleton beside OUT (same stem, .cinf).  Deterministic: the same
 * arguments give the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/homeworld.h"
#include "retroanim/lego_ani.h"
#include "retroanim/metroid_anim.h"
#include "retroanim/niff.h"
#include "retroanim/wog.h"

static uint32_t g_rng = 12345;
static double frand(double lo, double hi)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(g_rng >> 8) / (double)(1u << 24);
}

static void die(const char *what, const ra_error *e)
{
    fprintf(stderr, "bench_gen: %s: %s\n", what, e ? e->msg : "out of memory");
    exit(1);
}

/* The smooth test motion: component c of node i at phase ph (radians). */
static double wave(uint32_t i, int c, double ph, double amp)
{
    return amp * sin(ph * (1 + c % 3) + 0.37 * i + 1.3 * c);
}

/* ---- LEGO Island: a root with NODES/10 chains of 10, keys at irregular ms ---- */
static void gen_lego(ra_arena *ar, uint32_t nodes, uint32_t keys, ra_writer *w, ra_error *e)
{
    if (keys > 0xFFFF) die("LEGO tracks hold at most 65535 keys", NULL);
    lego_ani a;
    memset(&a, 0, sizeof a);
    a.has_header = true;
    a.magic = LEGO_ANI_MAGIC;
    a.bounding_radius = 10;
    a.val3 = 1;
    uint32_t *times = ra_arena_array(ar, keys, sizeof *times);
    uint32_t t = 0;
    for (uint32_t k = 0; k < keys; k++) times[k] = t, t += 20 + (uint32_t)frand(0, 40);
    a.duration = (int32_t)times[keys - 1];
    lego_node *all = ra_arena_array(ar, nodes + 1, sizeof *all);
    if (!times || !all) die("lego", NULL);
    a.root = (lego_node){0};
    a.root.name = ra_arena_strndup(ar, "root", 4);
    a.root.name_len = 4;
    for (uint32_t i = 0; i < nodes; i++) {
        lego_node *n = &all[i];
        char name[32];
        int len = snprintf(name, sizeof name, "node%05u", i);
        n->name = ra_arena_strndup(ar, name, (size_t)len);
        n->name_len = (uint32_t)len;
        n->num_trans = n->num_rot = n->num_scale = (uint16_t)keys;
        n->trans = ra_arena_array(ar, keys, sizeof *n->trans);
        n->rot = ra_arena_array(ar, keys, sizeof *n->rot);
        n->scale = ra_arena_array(ar, keys, sizeof *n->scale);
        if (!n->name || !n->trans || !n->rot || !n->scale) die("lego", NULL);
        for (uint32_t k = 0; k < keys; k++) {
            double ph = times[k] * 0.002;
            n->trans[k] = (lego_trans_key){times[k], (float)(1 + wave(i, 0, ph, 0.3)), (float)wave(i, 1, ph, 0.3),
                                           (float)wave(i, 2, ph, 0.3)};
            ra_quat q = ra_q_from_euler_xyz(wave(i, 3, ph, 0.8), wave(i, 4, ph, 0.8), wave(i, 5, ph, 0.8));
            n->rot[k] =
                (lego_rot_key){times[k] | (LEGO_FLAG_ACTIVE << 24), (float)q.w, (float)q.x, (float)q.y, (float)q.z};
            float s = (float)(1 + wave(i, 6, ph, 0.1));
            n->scale[k] = (lego_trans_key){times[k] | (LEGO_FLAG_ACTIVE << 24), s, s, s};
        }
    }
    /* chains of ten under the root: node 10c is a child of the root, 10c+j of 10c+j-1 */
    uint32_t chains = (nodes + 9) / 10;
    a.root.num_children = chains;
    a.root.children = ra_arena_array(ar, chains, sizeof(lego_node));
    for (uint32_t c = chains; c-- > 0;) {
        uint32_t first = 10 * c, last = first + 10 < nodes ? first + 10 : nodes;
        for (uint32_t j = last - 1; j > first; j--) {
            all[j - 1].num_children = 1;
            all[j - 1].children = ra_arena_alloc(ar, sizeof(lego_node));
            *all[j - 1].children = all[j];
        }
        a.root.children[c] = all[first];
    }
    a.node_count = (size_t)nodes + 1;
    if (lego_ani_write(&a, w, e) != RA_OK) die("lego write", e);
}

/* ---- Metroid Prime: version 2 (Prime 1), every frame keyed, and its CINF ---- */
static void gen_metroid(ra_arena *ar, uint32_t bones, uint32_t frames, ra_writer *w, ra_writer *cinf_w, ra_error *e)
{
    mp_encode_track *tr = ra_arena_array(ar, bones, sizeof *tr);
    uint32_t *fr = ra_arena_array(ar, frames, sizeof *fr);
    if (!tr || !fr) die("metroid", NULL);
    for (uint32_t k = 0; k < frames; k++) fr[k] = k;
    for (uint32_t b = 0; b < bones; b++) {
        ra_quat *q = ra_arena_array(ar, frames, sizeof *q);
        ra_vec3 *p = ra_arena_array(ar, frames, sizeof *p);
        if (!q || !p) die("metroid", NULL);
        for (uint32_t k = 0; k < frames; k++) {
            double ph = k / 30.0;
            q[k] = ra_q_from_euler_xyz(wave(b, 0, ph, 0.7), wave(b, 1, ph, 0.7), wave(b, 2, ph, 0.7));
            p[k] = (ra_vec3){wave(b, 3, ph, 0.2), 0.5 + wave(b, 4, ph, 0.2), wave(b, 5, ph, 0.2)};
        }
        tr[b] = (mp_encode_track){3 + b, q, p, NULL};
    }
    mp_encode_params prm;
    memset(&prm, 0, sizeof prm);
    prm.layout = MP_V2_MP1;
    prm.interval = 1.0f / 30;
    prm.root_bone = 3;
    prm.looping = true;
    prm.frames = fr;
    prm.key_count = frames;
    prm.pad_to = 32;
    mp_anim a;
    if (mp_anim_encode(&prm, tr, bones, ar, &a, e) != RA_OK) die("metroid encode", e);
    if (mp_anim_write(&a, w, e) != RA_OK) die("metroid write", e);

    /* the skeleton: bone 3 the root, then chains of ten */
    mp_cinf c;
    memset(&c, 0, sizeof c);
    c.game = 1;
    c.bone_count = c.build_count = c.name_count = bones;
    c.bones = ra_arena_array(ar, bones, sizeof *c.bones);
    c.build_order = ra_arena_array(ar, bones, sizeof(uint32_t));
    c.names = ra_arena_array(ar, bones, sizeof(char *));
    c.name_ids = ra_arena_array(ar, bones, sizeof(uint32_t));
    if (!c.bones || !c.build_order || !c.names || !c.name_ids) die("cinf", NULL);
    for (uint32_t b = 0; b < bones; b++) {
        mp_bone *bo = &c.bones[b];
        bo->id = 3 + b;
        bo->parent = b == 0 ? MP_NO_PARENT : b % 10 == 1 ? 3 : 3 + b - 1;
        bo->pos[0] = (float)(b % 10) * 0.1f, bo->pos[1] = (float)(b / 10) * 0.3f, bo->pos[2] = 0;
        c.build_order[b] = 3 + b;
        c.names[b] = ra_arena_printf(ar, "bone%03u", b);
        c.name_ids[b] = 3 + b;
    }
    for (uint32_t b = 0; b < bones; b++) { /* links: the parent, then the children */
        mp_bone *bo = &c.bones[b];
        uint32_t *l = ra_arena_array(ar, bones + 1, sizeof(uint32_t)), n = 0;
        if (!l) die("cinf", NULL);
        l[n++] = bo->parent;
        for (uint32_t k = 0; k < bones; k++)
            if (c.bones[k].parent == bo->id) l[n++] = c.bones[k].id;
        bo->links = l, bo->link_count = n;
    }
    if (mp_cinf_write(&c, cinf_w, e) != RA_OK) die("cinf write", e);
}

/* ---- World of Goo: a movie of NODES image actors, KEYS keys per channel ---- */
static void gen_wog(ra_arena *ar, uint32_t actors, uint32_t keys, ra_writer *w, ra_error *e)
{
    wog_movie m;
    memset(&m, 0, sizeof m);
    m.num_actors = actors;
    m.actors = ra_arena_array(ar, actors, sizeof *m.actors);
    m.anims = ra_arena_array(ar, actors, sizeof *m.anims);
    static const char table[16] = "\0IMAGE_GOOBALL\0";
    m.strings_size = 16;
    m.strings = ra_arena_alloc(ar, 16);
    if (!m.actors || !m.anims || !m.strings) die("wog", NULL);
    memcpy(m.strings, table, 16);
    float *times = ra_arena_array(ar, keys, sizeof *times);
    if (!times) die("wog", NULL);
    double t = 0;
    for (uint32_t k = 0; k < keys; k++) times[k] = (float)t, t += (1 + (int)frand(0, 4)) / 64.0;
    m.length = times[keys - 1];
    for (uint32_t i = 0; i < actors; i++) {
        m.actors[i] = (wog_actor){WOG_ACTOR_IMAGE, 1, 0, 0, -1, -1, 0, (float)(i % 7)};
        wog_anim *a = &m.anims[i];
        memset(a, 0, sizeof *a);
        a->num_frames = keys;
        a->frame_times = times;
        a->has_transform = 1;
        a->has_alpha = 1;
        a->num_transforms = 3;
        a->transform_types = ra_arena_array(ar, 3, sizeof(int32_t));
        a->xform = ra_arena_array(ar, 3, sizeof *a->xform);
        a->keys = ra_arena_array(ar, (size_t)keys * 4, sizeof *a->keys);
        if (!a->transform_types || !a->xform || !a->keys) die("wog", NULL);
        wog_frames *ch[4] = {&a->xform[0], &a->xform[1], &a->xform[2], &a->alpha};
        for (int c = 0; c < 4; c++) {
            if (c < 3) a->transform_types[c] = c; /* scale, rotate, translate */
            ch[c]->present = true;
            ch[c]->slot = ra_arena_array(ar, keys, sizeof(int32_t));
            if (!ch[c]->slot) die("wog", NULL);
            for (uint32_t k = 0; k < keys; k++) {
                double ph = times[k] * 2;
                wog_keyframe *kf = &a->keys[a->key_count];
                *kf = (wog_keyframe){-1, -1, -1, -1, -1, k + 1 < keys ? (int32_t)k + 1 : -1, 0, WOG_INTERP_LINEAR};
                if (c == 0) kf->x = (float)(1 + wave(i, 0, ph, 0.2)), kf->y = (float)(1 + wave(i, 1, ph, 0.2));
                if (c == 1) kf->angle = (float)wave(i, 2, ph, 90);
                if (c == 2) kf->x = (float)wave(i, 3, ph, 300), kf->y = (float)wave(i, 4, ph, 200);
                if (c == 3) kf->alpha = (int32_t)(128 + wave(i, 5, ph, 127));
                ch[c]->slot[k] = (int32_t)a->key_count++;
            }
        }
        a->color.present = a->sound.present = true;
        a->strings_size = 1;
        a->strings = ra_arena_alloc(ar, 1);
        if (!a->strings) die("wog", NULL);
        a->strings[0] = 0;
    }
    if (wog_movie_write(&m, WOG_LAYOUT_BINLTL, w, e) != RA_OK) die("wog write", e);
}

/* ---- NIFF 1: NODES objects (chains of ten) with KEYS FULL frames each ---- */
static const uint32_t niff_physical[19] = {0x00010000, 0x00100000, 0x000e0000, 0x000f0000, 0x00020000,
                                           0x00030000, 0x00040000, 0x00080000, 0x00050000, 0x00060000,
                                           0x00070000, 0x00090000, 0x000a0000, 0x000b0000, 0x00120000,
                                           0x000c0000, 0x000d0000, 0x00130000, 0x00110000};

static void gen_niff(ra_arena *ar, uint32_t n, uint32_t frames, ra_writer *w, ra_error *e)
{
    niff_file f;
    memset(&f, 0, sizeof f);
    f.version = 0x05000100;
    f.list_count = 19;
    f.lists = ra_arena_array(ar, 19, sizeof *f.lists);
    if (!f.lists) die("niff", NULL);
    f.scene.name_index = NIFF_NONE;
    for (uint32_t i = 0; i < 19; i++) { /* every list of NIFF 1; the ones not parsed empty */
        niff_list *l = &f.lists[i];
        l->tag = niff_physical[i];
        l->parsed = l->tag == NIFF_TAG_SCENE_LIST || l->tag == NIFF_TAG_OBJ_LIST || l->tag == NIFF_TAG_CAM_LIST ||
                    l->tag == NIFF_TAG_ANIM_LIST || l->tag == NIFF_TAG_NAME_LIST;
        if (l->parsed) continue;
        bool two = l->tag == 0x00050000 || l->tag == 0x00060000; /* Color and Vector lists: two counts */
        uint32_t sz = two ? 28 : 24, words[7] = {l->tag, sz, sz, 0, 0, 0, 0};
        l->raw.size = sz;
        l->raw.data = ra_arena_alloc(ar, sz);
        if (!l->raw.data) die("niff", NULL);
        for (uint32_t k = 0; k < sz / 4; k++)
            for (uint32_t b = 0; b < 4; b++) l->raw.data[4 * k + b] = (uint8_t)(words[k] >> (24 - 8 * b));
    }
    f.obj_count = f.group_count = f.name_count = n;
    f.objs = ra_arena_array(ar, n, sizeof *f.objs);
    f.groups = ra_arena_array(ar, n, sizeof *f.groups);
    f.names = ra_arena_array(ar, n, sizeof *f.names);
    uint32_t chains = (n + 9) / 10;
    f.scene.obj.v = ra_arena_array(ar, chains, sizeof(uint32_t));
    f.scene.obj.n = chains;
    if (!f.objs || !f.groups || !f.names || !f.scene.obj.v) die("niff", NULL);
    for (uint32_t c = 0; c < chains; c++) f.scene.obj.v[c] = 10 * c;
    for (uint32_t i = 0; i < n; i++) {
        f.names[i].header_size = 16;
        f.names[i].text = ra_arena_printf(ar, "joint%05u", i);
        niff_obj *o = &f.objs[i];
        o->name_index = i;
        o->state = NIFF_OBJ_ACTIVE;
        o->parent_link = o->shape_link = o->mat_link = o->coll_link = NIFF_NONE;
        o->anim_link = i;
        if (i + 1 < n && i % 10 != 9) {
            o->child.n = 1;
            o->child.v = ra_arena_array(ar, 1, sizeof(uint32_t));
            if (!o->child.v) die("niff", NULL);
            o->child.v[0] = i + 1;
        }
        niff_group *g = &f.groups[i];
        g->header_size = 48;
        g->name_index = NIFF_NONE;
        g->type = NIFF_ANIM_FULL;
        g->frame_rate = 30;
        g->rot_order = 0x00010203;
        g->anim_num = frames;
        g->anims = ra_arena_array(ar, frames, sizeof *g->anims);
        if (!g->anims) die("niff", NULL);
        for (uint32_t k = 0; k < frames; k++) {
            niff_anim *an = &g->anims[k];
            double ph = k / 30.0;
            an->tag = NIFF_TAG_ANIM_FULL;
            an->t[0] = i % 10 ? 1.0f : (float)(i / 10);
            an->t[1] = (float)wave(i, 0, ph, 0.2);
            for (int c = 0; c < 3; c++) an->r[c] = (float)wave(i, 1 + c, ph, 0.6);
            an->s[0] = an->s[1] = an->s[2] = 1;
        }
    }
    if (niff_write(&f, w, e) != RA_OK) die("niff write", e);
}

/* ---- Homeworld: NODES objects with KEYS keys on one timeline, 4 animations ---- */
static void gen_homeworld(ra_arena *ar, uint32_t nobj, uint32_t keys, ra_writer *w, ra_error *e)
{
    hw_mad m;
    memset(&m, 0, sizeof m);
    m.version = HW_MAD_VERSION;
    m.fps = 30;
    m.animation_count = 4;
    m.object_count = (int32_t)nobj;
    m.animations = ra_arena_array(ar, 4, sizeof *m.animations);
    m.objects = ra_arena_array(ar, nobj, sizeof *m.objects);
    if (!m.animations || !m.objects) die("homeworld", NULL);
    /* keys every 2 frames: the timeline is 2*(keys-1) frames, cut in four windows */
    uint32_t span = 2 * (keys - 1);
    for (int a = 0; a < 4; a++) {
        hw_animation *an = &m.animations[a];
        an->name = ra_arena_printf(ar, a % 2 ? "Anim%dLoop" : "Anim%d", a);
        an->start = (float)(span * (uint32_t)a / 4) / 30.0f;
        an->end = (float)(span * (uint32_t)(a + 1) / 4) / 30.0f;
        an->flags = a % 2 ? HW_MAD_FLAG_LOOP : 0;
        m.length += an->end - an->start;
    }
    float phantom_end = hw_mad_phantom_end(&m);
    float *times = ra_arena_array(ar, keys, sizeof(float)), *vals[HW_CHANNELS];
    hw_tcb *tcb = ra_arena_array(ar, keys, sizeof *tcb);
    for (int c = 0; c < HW_CHANNELS; c++) vals[c] = ra_arena_array(ar, keys, sizeof(float));
    if (!times || !tcb || !vals[HW_CHANNELS - 1]) die("homeworld", NULL);
    for (uint32_t k = 0; k < keys; k++) times[k] = (float)(2 * k) / 30.0f, tcb[k] = (hw_tcb){0, 0, 0};
    for (uint32_t j = 0; j < nobj; j++) {
        hw_object *o = &m.objects[j];
        o->name = ra_arena_printf(ar, "Part%04u", j);
        for (uint32_t k = 0; k < keys; k++) {
            double ph = times[k];
            for (int c = 0; c < HW_CHANNELS; c++) vals[c][k] = (float)wave(j, c, ph, c < 3 ? 20 : 0.5);
        }
        if (!hw_object_set_keys(o, ar, keys, times, tcb, (const float *const *)vals, phantom_end))
            die("homeworld", NULL);
        o->animation_bits = 0xF;
    }
    if (!hw_mad_set_strings(&m, ar)) die("homeworld", NULL);
    if (hw_mad_write(&m, w, e) != RA_OK) die("homeworld write", e);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bench_gen lego|metroid|wog|niff|homeworld NODES KEYS OUT\n");
        return 2;
    }
    const char *fmt = argv[1], *out = argv[4];
    long nodes = atol(argv[2]), keys = atol(argv[3]);
    if (nodes < 1 || keys < 2 || nodes > 100000 || keys > 1000000) {
        fprintf(stderr, "bench_gen: NODES must be 1..100000 and KEYS 2..1000000\n");
        return 2;
    }
    ra_arena *ar = ra_arena_create(0);
    ra_writer w, cw;
    ra_writer_init(&w);
    ra_writer_init(&cw);
    ra_error e;
    ra_error_clear(&e);
    if (!strcmp(fmt, "lego")) gen_lego(ar, (uint32_t)nodes, (uint32_t)keys, &w, &e);
    else if (!strcmp(fmt, "metroid")) gen_metroid(ar, (uint32_t)nodes, (uint32_t)keys, &w, &cw, &e);
    else if (!strcmp(fmt, "wog")) gen_wog(ar, (uint32_t)nodes, (uint32_t)keys, &w, &e);
    else if (!strcmp(fmt, "niff")) gen_niff(ar, (uint32_t)nodes, (uint32_t)keys, &w, &e);
    else if (!strcmp(fmt, "homeworld")) gen_homeworld(ar, (uint32_t)nodes, (uint32_t)keys, &w, &e);
    else {
        fprintf(stderr, "bench_gen: unknown format '%s'\n", fmt);
        return 2;
    }
    if (ra_write_file(out, w.data, w.size, &e) != RA_OK) die(out, &e);
    if (cw.size) { /* the Metroid skeleton: OUT with its extension replaced by .cinf */
        char path[4096];
        const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
        size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : strlen(out);
        if (stem + 6 > sizeof path) die("path too long", NULL);
        snprintf(path, sizeof path, "%.*s.cinf", (int)stem, out);
        if (ra_write_file(path, cw.data, cw.size, &e) != RA_OK) die(path, &e);
    }
    ra_writer_free(&w);
    ra_writer_free(&cw);
    ra_arena_destroy(ar);
    return 0;
}
