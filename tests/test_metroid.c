#define _POSIX_C_SOURCE 200809L
/* Metroid Prime ANIM + CINF: the hand-made fixtures (expectations in their
 * .txt), byte-identical round trips, the encoder (decode(encode(keys)) within
 * the quantization bound, encode(decode(file)) == file), the skeleton search,
 * and the semantics check: at every frame and half frame the reference
 * evaluator (pose) and the keys played back as Assimp consumers play them
 * agree within 1e-4. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ra_fixture.h"
#include "retroanim/metroid_anim.h"

#define TOL 1e-4
#define KEY_TOL 1e-5

static char g_dir[1024];
static fx_stats g_stats;
static int g_reencoded;

static ra_status load_opts(const uint8_t *d, size_t n, const char *name, const ra_options *o, ra_document **doc,
                           ra_error *e)
{
    ra_error_clear(e);
    return ra_document_load(d, n, name, o, doc, e);
}

static void check_frames(const ra_document *doc, const char *what)
{
    const mp_anim *a = mp_document_anim(doc);
    double iv = a ? a->interval : 1.0 / 30;
    double dur = doc->scene.animation_count ? doc->scene.animations[0].duration : 0;
    fx_check_semantics(doc, what, iv / 2, dur + iv, TOL, &g_stats);
}

/* channel of a bone id in the model */
static const mp_channel *channel_of(const mp_anim *a, uint32_t id)
{
    for (size_t c = 0; c < a->channel_count; c++)
        if (a->channels[c].bone_id == id) return &a->channels[c];
    return NULL;
}

static int parse_list(const char *p, double *v, int n)
{
    int k = 0;
    char *q = (char *)p;
    while (k < n) {
        v[k++] = strtod(q, &q);
        if (*q != ',') break;
        q++;
    }
    return k;
}

static void check_key_line(const ra_document *doc, const char *line, const char *name)
{
    const mp_anim *a = mp_document_anim(doc);
    unsigned bone, key, frame;
    if (sscanf(line, "expect-key bone=%u key=%u frame=%u", &bone, &key, &frame) != 3) {
        CHECK(0, "%s: malformed line %s", name, line);
        return;
    }
    const mp_channel *ch = a ? channel_of(a, bone) : NULL;
    CHECK(ch != NULL, "%s: no channel for bone %u", name, bone);
    if (!ch || key >= a->key_count) {
        CHECK(0, "%s: bone %u has no key %u", name, bone, key);
        return;
    }
    CHECK(a->key_frames[key] == frame, "%s: key %u of bone %u at frame %u, expected %u", name, key, bone,
          a->key_frames[key], frame);
    const char *r = strstr(line, "rot="), *p = strstr(line, "pos="), *s = strstr(line, "scale=");
    double v[4];
    CHECK((r != NULL) == ch->has_rot, "%s: bone %u rotation presence", name, bone);
    CHECK((p != NULL) == ch->has_trans, "%s: bone %u translation presence", name, bone);
    CHECK((s != NULL) == ch->has_scale, "%s: bone %u scale presence", name, bone);
    char what[320];
    snprintf(what, sizeof what, "%.200s bone %u key %u", name, bone, key);
    if (r && ch->has_rot && parse_list(r + 4, v, 4) == 4) {
        ra_quat q = mp_key_rot(a, ch, key);
        CHECK_NEAR(q.w, v[0], KEY_TOL, what);
        CHECK_NEAR(q.x, v[1], KEY_TOL, what);
        CHECK_NEAR(q.y, v[2], KEY_TOL, what);
        CHECK_NEAR(q.z, v[3], KEY_TOL, what);
    }
    if (p && ch->has_trans && parse_list(p + 4, v, 3) == 3) {
        ra_vec3 t = mp_key_trans(a, ch, key);
        CHECK_NEAR(t.x, v[0], KEY_TOL, what);
        CHECK_NEAR(t.y, v[1], KEY_TOL, what);
        CHECK_NEAR(t.z, v[2], KEY_TOL, what);
    }
    if (s && ch->has_scale && parse_list(s + 6, v, 3) == 3) {
        ra_vec3 sc = mp_key_scale(a, ch, key);
        CHECK_NEAR(sc.x, v[0], KEY_TOL, what);
        CHECK_NEAR(sc.y, v[1], KEY_TOL, what);
        CHECK_NEAR(sc.z, v[2], KEY_TOL, what);
    }
}

static void check_meta_line(const ra_scene *s, const char *line, const char *name)
{
    char key[128], val[256];
    if (sscanf(line, "expect-meta %127[^=]=%255s", key, val) != 2) {
        CHECK(0, "%s: malformed line %s", name, line);
        return;
    }
    const ra_meta *m = ra_meta_get(&s->meta, key);
    CHECK(m != NULL, "%s: no scene metadata %s", name, key);
    if (!m) return;
    switch (m->type) {
    case RA_META_BOOL: CHECK(m->u.b == (atoi(val) != 0), "%s: %s is %d, expected %s", name, key, m->u.b, val); break;
    case RA_META_INT:
        CHECK(m->u.i == atoll(val), "%s: %s is %lld, expected %s", name, key, (long long)m->u.i, val);
        break;
    case RA_META_DOUBLE: CHECK_NEAR(m->u.d, atof(val), 1e-6, key); break;
    case RA_META_STRING: CHECK(strcmp(m->u.s, val) == 0, "%s: %s is %s, expected %s", name, key, m->u.s, val); break;
    default: CHECK(0, "%s: %s has an unexpected type", name, key);
    }
}

/* encode(decode(file)) with the file's own parameters */
static void reencode(const ra_document *doc, const uint8_t *d, size_t n, const char *name)
{
    const mp_anim *a = mp_document_anim(doc);
    if (!a || a->version == 0) return;
    ra_arena *ar = ra_arena_create(0);
    mp_encode_track *t = ra_arena_array(ar, a->channel_count, sizeof *t);
    for (size_t c = 0; c < a->channel_count; c++) {
        /* the decoded keys, which the encoder takes as arrays */
        const mp_channel *ch = &a->channels[c];
        ra_quat *rot = ch->has_rot ? ra_arena_array(ar, a->key_count, sizeof *rot) : NULL;
        ra_vec3 *tr = ch->has_trans ? ra_arena_array(ar, a->key_count, sizeof *tr) : NULL;
        ra_vec3 *sc = ch->has_scale ? ra_arena_array(ar, a->key_count, sizeof *sc) : NULL;
        for (uint32_t j = 0; j < a->key_count; j++) {
            if (rot) rot[j] = mp_key_rot(a, ch, j);
            if (tr) tr[j] = mp_key_trans(a, ch, j);
            if (sc) sc[j] = mp_key_scale(a, ch, j);
        }
        t[c] = (mp_encode_track){ch->bone_id, rot, tr, sc};
    }
    mp_encode_params p = {a->layout,  a->interval,   a->duration,   a->root_bone, a->looping != 0, a->evnt_id,
                          a->rot_div, a->trans_mult, a->scale_mult, true,         a->key_frames,   a->key_count,
                          0};
    mp_anim out;
    ra_error e;
    ra_error_clear(&e);
    if (mp_anim_encode(&p, t, a->channel_count, ar, &out, &e) == RA_OK) {
        out.trailing = a->trailing;
        out.trailing_size = a->trailing_size;
        ra_writer w;
        ra_writer_init(&w);
        mp_anim_write(&out, &w, &e);
        bool same = w.size == n && memcmp(w.data, d, n) == 0;
        if (same) g_reencoded++;
        else printf("  note: %s is not reproduced by encode(decode(file)) (%zu vs %zu bytes)\n", name, w.size, n);
        ra_writer_free(&w);
    } else {
        printf("  note: %s cannot be re-encoded: %s\n", name, e.msg);
    }
    ra_arena_destroy(ar);
}

static bool has_anim_partner(const char *cinf)
{
    char stem[512];
    snprintf(stem, sizeof stem, "%.*s", (int)(strrchr(cinf, '.') - cinf), cinf);
    const char *ext[] = {"anim", "ANIM", "cmdl", "CMDL"}; /* a model's skeleton: test_mp_models */
    for (int i = 0; i < 4; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/%s.%s", g_dir, stem, ext[i]);
        struct stat st;
        if (stat(p, &st) == 0) return true;
    }
    return false;
}

static void run_fixture(const char *name)
{
    bool cinf = strstr(name, ".cinf") || strstr(name, ".CINF");
    fx_file fx;
    if (!fx_open(g_dir, name, &fx)) return;
    const uint8_t *data = fx.data;
    size_t size = fx.size;
    const char *path = fx.path;
    FILE *f = fx.txt;
    int expects = fx.expects;
    char line[2048];
    ra_error e;
    ra_options o;
    ra_options_init(&o);
    ra_document *doc = NULL;
    if (fx.err_off >= 0) {
        ra_status st = load_opts(data, size, path, &o, &doc, &e);
        fx_check_refused(&fx, st, &e, name, cinf ? "metroid_cinf" : "metroid_anim");
        if (doc) ra_document_free(doc);
        fx_close(&fx);
        return;
    }
    if (load_opts(data, size, path, &o, &doc, &e) != RA_OK) {
        CHECK(0, "%s: load failed: %s", name, e.msg);
        fx_close(&fx);
        return;
    }
    const ra_scene *s = &doc->scene;
    while (fgets(line, sizeof line, f)) {
        double t;
        long n;
        line[strcspn(line, "\r\n")] = 0;
        if (sscanf(line, "expect-nodes %ld", &n) == 1) {
            expects++;
            CHECK((long)(s->node_count - 1) == n, "%s: %zu nodes, expected %ld", name, s->node_count - 1, n);
        } else if (sscanf(line, "expect-duration %lf", &t) == 1) {
            expects++;
            CHECK(s->animation_count == 1, "%s: one animation", name);
            if (s->animation_count) CHECK_NEAR(s->animations[0].duration, t, 1e-6, name);
        } else if (fx_check_pose_line(doc, line, name, TOL)) {
            expects++;
        } else if (strncmp(line, "expect-key ", 11) == 0) {
            expects++;
            check_key_line(doc, line, name);
        } else if (strncmp(line, "expect-meta ", 12) == 0) {
            expects++;
            check_meta_line(s, line, name);
        }
    }
    CHECK(expects >= 3, "%s: its description has only %d expectations", name, expects);
    if (s->animation_count) {
        check_frames(doc, name);
        reencode(doc, data, size, name);
    }
    /* the CINF the ANIM found round-trips too */
    const mp_cinf *k = mp_document_cinf(doc);
    if (k && !cinf) {
        ra_writer w;
        ra_writer_init(&w);
        CHECK(mp_cinf_write(k, &w, &e) == RA_OK, "%s: cinf write", name);
        const ra_meta *m = ra_meta_get(&s->meta, "metroid.skeleton");
        uint8_t *cd;
        size_t cn;
        if (m && ra_read_file(m->u.s, &cd, &cn, &e) == RA_OK) {
            CHECK(cn == w.size && memcmp(cd, w.data, cn) == 0, "%s: the skeleton does not round-trip", name);
            ra_free(cd);
        }
        ra_writer_free(&w);
    }
    ra_document_free(doc);
    /* the other settings agree with themselves too */
    const char *variants[][2] = {{"coords", "native"}, {"root_motion", "strip"}};
    for (int v = 0; v < 2 && !cinf; v++) {
        ra_options_init(&o);
        ra_options_add(&o, variants[v][0], variants[v][1]);
        if (load_opts(data, size, path, &o, &doc, &e) == RA_OK) {
            check_frames(doc, name);
            ra_document_free(doc);
        } else {
            CHECK(0, "%s: %s=%s load failed: %s", name, variants[v][0], variants[v][1], e.msg);
        }
    }
    ra_options_init(&o);
    fx_check_roundtrip(data, size, &o, name);
    fx_close(&fx);
}

/* ---- the encoder on random keys ------------------------------------------------------------------ */

static ra_vec3 rand_vec(double lo, double hi)
{
    double x = fx_frand(lo, hi), y = fx_frand(lo, hi), z = fx_frand(lo, hi);
    return ra_v3(x, y, z);
}

static ra_quat rand_quat(void)
{
    double w = fx_frand(-1, 1);
    ra_vec3 v = rand_vec(-1, 1);
    return ra_q_normalize(ra_q(w, v.x, v.y, v.z));
}

typedef struct gen {
    ra_arena *ar;
    mp_encode_params p;
    mp_encode_track *t;
    size_t n;
} gen;

/* Random keys of one layout: smooth paths with the odd jump. */
static void make_keys(gen *g, mp_layout l, size_t bones, uint32_t keys, bool skip_frames)
{
    g->ar = ra_arena_create(0);
    memset(&g->p, 0, sizeof g->p);
    g->p.layout = l;
    g->p.interval = 1.0f / 30;
    g->p.root_bone = MP_ROOT_BONE;
    g->p.looping = fx_rnd() % 2;
    g->p.evnt_id = fx_rnd();
    uint32_t *fr = ra_arena_array(g->ar, keys, sizeof *fr);
    uint32_t f = 0;
    bool v0 = l == MP_V0_MP1 || l == MP_V0_MP2;
    for (uint32_t j = 0; j < keys; j++) {
        fr[j] = f;
        f += (!v0 && skip_frames && fx_rnd() % 3 == 0) ? 1 + fx_rnd() % 4 : 1;
    }
    g->p.frames = fr;
    g->p.key_count = keys;
    g->n = bones;
    g->t = ra_arena_array(g->ar, bones, sizeof *g->t);
    bool mp2 = l == MP_V0_MP2 || l == MP_V2_MP2;
    for (size_t b = 0; b < bones; b++) {
        ra_quat *q = ra_arena_array(g->ar, keys, sizeof *q);
        ra_vec3 *tr = ra_arena_array(g->ar, keys, sizeof *tr), *sc = ra_arena_array(g->ar, keys, sizeof *sc);
        /* one random number per statement: argument evaluation order differs between compilers */
        ra_quat cur = rand_quat();
        ra_vec3 pos = rand_vec(-3, 3);
        for (uint32_t j = 0; j < keys; j++) {
            ra_vec3 axis = rand_vec(-1, 1);
            axis.z = 1;
            double ang = fx_frand(-0.3, 0.3);
            cur = fx_rnd() % 17 == 0 ? rand_quat() : ra_q_normalize(ra_q_mul(cur, ra_q_axis_angle(axis, ang)));
            q[j] = cur;
            pos = ra_v3_add(pos, rand_vec(-0.2, 0.2));
            tr[j] = pos;
            sc[j] = rand_vec(0.5, 2);
        }
        bool has_rot = !mp2 || fx_rnd() % 4 != 0;
        g->t[b] = (mp_encode_track){(uint32_t)(b * 3 + 3) % 100, has_rot ? q : NULL, fx_rnd() % 3 ? tr : NULL,
                                    mp2 && fx_rnd() % 2 ? sc : NULL};
        if (mp2 && !g->t[b].rot && !g->t[b].trans && !g->t[b].scale) g->t[b].trans = tr;
    }
}

/* decode(encode(keys)) within the bound of the quantization */
static void check_decoded(const gen *g, const mp_anim *a, const char *what)
{
    bool v0 = a->version == 0;
    double worst_q = 0, worst_t = 0;
    for (size_t c = 0; c < g->n; c++) {
        const mp_channel *ch = channel_of(a, g->t[c].bone_id);
        CHECK(ch != NULL, "%s: bone %u lost", what, g->t[c].bone_id);
        if (!ch) continue;
        for (uint32_t j = 0; j < a->key_count; j++) {
            if (g->t[c].rot) {
                ra_quat in = ra_q_normalize(g->t[c].rot[j]), out = mp_key_rot(a, ch, j);
                if (ra_q_dot(in, out) < 0) in = ra_q_neg(in);
                /* w is rebuilt from the unit norm; the encoder keeps the whole quaternion close */
                worst_q = fmax(worst_q, fmax(fabs(in.w - out.w),
                                             fmax(fabs(in.x - out.x), fmax(fabs(in.y - out.y), fabs(in.z - out.z)))));
            }
            if (g->t[c].trans) {
                ra_vec3 d = ra_v3_sub(g->t[c].trans[j], mp_key_trans(a, ch, j));
                worst_t = fmax(worst_t, fmax(fabs(d.x), fmax(fabs(d.y), fabs(d.z))) / (v0 ? 1 : a->trans_mult));
            }
        }
    }
    CHECK(worst_q <= (v0 ? 1e-6 : 1e-3), "%s: a quaternion component is off by %g", what, worst_q);
    CHECK(worst_t <= (v0 ? 1e-5 : 0.5001), "%s: translation off by %g (in quanta)", what, worst_t);
}

static void random_encodes(int count)
{
    static const mp_layout layouts[] = {MP_V0_MP1, MP_V0_MP2, MP_V2_MP1, MP_V2_MP2, MP_V2_DEMO, MP_V3_PC};
    for (int it = 0; it < count; it++) {
        mp_layout l = layouts[it % 6];
        gen g;
        uint32_t nb = 1 + fx_rnd() % 6,
                 nf = 2 + fx_rnd() % 20; /* one draw per declarator: argument order is unspecified */
        make_keys(&g, l, nb, nf, fx_rnd() % 2);
        g.p.pad_to = fx_rnd() % 2 ? 32 : 0;
        char what[96];
        snprintf(what, sizeof what, "random %s file %d", mp_layout_name(l), it);
        mp_anim a;
        ra_error e;
        ra_error_clear(&e);
        if (mp_anim_encode(&g.p, g.t, g.n, g.ar, &a, &e) != RA_OK) {
            CHECK(0, "%s: encode failed: %s", what, e.msg);
            ra_arena_destroy(g.ar);
            continue;
        }
        ra_writer w;
        ra_writer_init(&w);
        CHECK(mp_anim_write(&a, &w, &e) == RA_OK, "%s: write", what);
        ra_document *doc = NULL;
        ra_options o;
        ra_options_init(&o);
        ra_options_add(&o, "cinf", "none");
        if (load_opts(w.data, w.size, what, &o, &doc, &e) == RA_OK) {
            const mp_anim *d = mp_document_anim(doc);
            CHECK(d && d->layout == l, "%s: read back as %s", what, d ? mp_layout_name(d->layout) : "?");
            if (d && d->layout == l) {
                check_decoded(&g, d, what);
                reencode(doc, w.data, w.size, what);
            }
            check_frames(doc, what);
            ra_document_free(doc);
        } else {
            CHECK(0, "%s: load failed: %s", what, e.msg);
        }
        ra_options_init(&o);
        fx_check_roundtrip(w.data, w.size, &o, what);
        ra_writer_free(&w);
        ra_arena_destroy(g.ar);
    }
}

/* The acceptance case: 60 bones, 300 frames, version 2; every frame of
 * the imported keys (as a consumer plays them) within 1e-3 of the input. */
static void big_file(void)
{
    gen g;
    fx_rng = 777; /* the same keys whatever ran before */
    make_keys(&g, MP_V2_MP1, 60, 300, false);
    for (size_t b = 0; b < g.n; b++) g.t[b].bone_id = (uint32_t)b + 3;
    mp_anim a;
    ra_error e;
    ra_error_clear(&e);
    CHECK(mp_anim_encode(&g.p, g.t, g.n, g.ar, &a, &e) == RA_OK, "60x300 encode: %s", e.msg);
    ra_writer w;
    ra_writer_init(&w);
    mp_anim_write(&a, &w, &e);
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "cinf", "none");
    ra_options_add(&o, "coords", "native");
    ra_document *doc = NULL;
    double worst = 0, worst_m = 0, worst_half = 0;
    long near_half = 0;
    if (load_opts(w.data, w.size, "big.anim", &o, &doc, &e) == RA_OK) {
        const ra_scene *s = &doc->scene;
        for (uint32_t j = 0; j < 300; j++) {
            double t = j * (double)g.p.interval;
            for (size_t b = 0; b < g.n; b++) {
                char nm[32];
                snprintf(nm, sizeof nm, "bone_%u", g.t[b].bone_id);
                int32_t idx = ra_scene_find_node(s, nm);
                if (idx < 0) {
                    CHECK(0, "big file: no node %s", nm);
                    continue;
                }
                ra_mat4 got = ra_scene_sample_local(s, 0, (uint32_t)idx, t);
                ra_vec3 tr = g.t[b].trans ? g.t[b].trans[j] : ra_v3(0, 0, 0);
                ra_mat4 want = ra_m4_compose(tr, g.t[b].rot[j], ra_v3(1, 1, 1));
                worst_m = fmax(worst_m, ra_m4_max_abs_diff(&got, &want));
                ra_vec3 gt, gs;
                ra_quat gq, wq = ra_q_normalize(g.t[b].rot[j]);
                ra_m4_decompose(&got, &gt, &gq, &gs);
                if (ra_q_dot(gq, wq) < 0) gq = ra_q_neg(gq);
                double dq =
                    fmax(fmax(fabs(gq.w - wq.w), fabs(gq.x - wq.x)), fmax(fabs(gq.y - wq.y), fabs(gq.z - wq.z)));
                if (fabs(wq.w) < 0.01) {
                    /* within ~1 degree of a half turn the format's rebuilt w limits the precision */
                    worst_half = fmax(worst_half, dq);
                    near_half++;
                } else {
                    worst = fmax(worst, dq);
                }
                worst = fmax(worst, fmax(fabs(gt.x - tr.x), fmax(fabs(gt.y - tr.y), fabs(gt.z - tr.z))));
            }
        }
        ra_document_free(doc);
    } else {
        CHECK(0, "big file: load failed: %s", e.msg);
    }
    CHECK(worst <= 1e-3, "60 bones x 300 frames: imported keys differ from the input by %g", worst);
    CHECK(worst_half <= 4e-3, "60 bones x 300 frames: keys near a half turn differ by %g", worst_half);
    printf("60 bones x 300 frames (%zu bytes): worst difference from the input keys %.3g (quaternion and translation "
           "components; %ld keys within 1 degree of a half turn: %.3g), %.3g in local matrix elements\n",
           w.size, worst, near_half, worst_half, worst_m);
    ra_writer_free(&w);
    ra_arena_destroy(g.ar);
}

/* ---- regressions from review ------------------------------------------------------------------------ */
static ra_status load_bytes(const ra_writer *w, ra_document **doc, ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "cinf", "none");
    return load_opts(w->data, w->size, "regression.anim", &o, doc, e);
}

static void regressions(void)
{
    ra_error e;
    ra_document *doc = NULL;
    /* a version 0 file whose frame count no key array backs */
    ra_writer w;
    ra_writer_init(&w);
    uint32_t head[] = {0, 0x3F800000u, 0, 0x3D088889u, 0, 0xFFFFFFFFu, 3, 100};
    for (size_t i = 0; i < 8; i++) ra_wr_u32be(&w, head[i]);
    for (int i = 0; i < 100; i++) ra_wr_u8(&w, 0xFF);
    for (int i = 0; i < 4; i++) ra_wr_u32be(&w, 0); /* R, quat count, vec count, EVNT */
    CHECK(load_bytes(&w, &doc, &e) == RA_ERR_LIMIT && e.offset == 0x14, "v0 frame count 0xFFFFFFFF without keys: %s",
          e.msg);
    ra_writer_free(&w);

    /* an EVNT id starting with 01 01 is still Prime 1; a Prime 2 channel without tracks; a
     * version 0 duration past the last frame holds frame 0 */
    gen g;
    fx_rng = 99;
    make_keys(&g, MP_V2_MP1, 2, 5, true);
    g.p.evnt_id = 0x0101ABCDu;
    mp_anim a;
    ra_error_clear(&e);
    CHECK(mp_anim_encode(&g.p, g.t, g.n, g.ar, &a, &e) == RA_OK, "encode: %s", e.msg);
    ra_writer_init(&w);
    mp_anim_write(&a, &w, &e);
    CHECK(load_bytes(&w, &doc, &e) == RA_OK && mp_document_anim(doc)->layout == MP_V2_MP1, "EVNT 0x0101ABCD: %s",
          e.msg);
    if (doc) ra_document_free(doc);
    doc = NULL;
    ra_writer_free(&w);
    ra_arena_destroy(g.ar);

    make_keys(&g, MP_V2_MP2, 3, 5, true);
    g.t[1].rot = NULL, g.t[1].trans = NULL, g.t[1].scale = NULL;
    ra_error_clear(&e);
    CHECK(mp_anim_encode(&g.p, g.t, g.n, g.ar, &a, &e) == RA_OK, "encode: %s", e.msg);
    ra_writer_init(&w);
    mp_anim_write(&a, &w, &e);
    CHECK(load_bytes(&w, &doc, &e) == RA_OK, "Prime 2 channel without tracks: %s", e.msg);
    if (doc) ra_document_free(doc);
    doc = NULL;
    ra_writer_free(&w);
    ra_arena_destroy(g.ar);

    make_keys(&g, MP_V0_MP1, 2, 3, false);
    g.p.duration = 10 * g.p.interval;
    ra_error_clear(&e);
    CHECK(mp_anim_encode(&g.p, g.t, g.n, g.ar, &a, &e) == RA_OK, "encode: %s", e.msg);
    ra_writer_init(&w);
    mp_anim_write(&a, &w, &e);
    if (load_bytes(&w, &doc, &e) == RA_OK) {
        check_frames(doc, "v0 duration past the frames");
        ra_document_free(doc);
    } else {
        CHECK(0, "v0 duration past the frames: %s", e.msg);
    }
    ra_writer_free(&w);
    ra_arena_destroy(g.ar);
}

/* ---- the skeleton search ------------------------------------------------------------------------------- */
static void copy_file(const char *from, const char *to)
{
    uint8_t *d;
    size_t n;
    ra_error e;
    ra_error_clear(&e);
    if (ra_read_file(from, &d, &n, &e) == RA_OK) {
        ra_write_file(to, d, n, &e);
        ra_free(d);
    }
}

static const char *skeleton_source(const char *anim, const char *opt_cinf)
{
    static char src[64];
    uint8_t *d;
    size_t n;
    ra_error e;
    ra_error_clear(&e);
    snprintf(src, sizeof src, "(load failed)");
    if (ra_read_file(anim, &d, &n, &e) != RA_OK) return src;
    ra_options o;
    ra_options_init(&o);
    if (opt_cinf) ra_options_add(&o, "cinf", opt_cinf);
    ra_document *doc = NULL;
    if (load_opts(d, n, anim, &o, &doc, &e) == RA_OK) {
        const ra_meta *m = ra_meta_get(&doc->scene.meta, "metroid.skeleton_source");
        snprintf(src, sizeof src, "%s", m ? m->u.s : "?");
        ra_document_free(doc);
    } else {
        snprintf(src, sizeof src, "error: %.50s", e.msg);
    }
    ra_free(d);
    return src;
}

static void skeleton_search(void)
{
    char tmp[] = "/tmp/ra_mp_XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char src[2048], a1[2048], c1[2048], c2[2048];
    snprintf(src, sizeof src, "%s/v2_mp1.anim", g_dir);
    snprintf(a1, sizeof a1, "%s/walk.anim", tmp);
    copy_file(src, a1);
    CHECK(strcmp(skeleton_source(a1, NULL), "none") == 0, "no CINF in the folder: %s", skeleton_source(a1, NULL));
    snprintf(src, sizeof src, "%s/v2_mp1.cinf", g_dir);
    snprintf(c1, sizeof c1, "%s/other.cinf", tmp);
    copy_file(src, c1);
    CHECK(strcmp(skeleton_source(a1, NULL), "folder") == 0, "the only CINF: %s", skeleton_source(a1, NULL));
    snprintf(c2, sizeof c2, "%s/walk.Cinf", tmp);
    copy_file(src, c2);
    CHECK(strcmp(skeleton_source(a1, NULL), "sibling") == 0, "the sibling: %s", skeleton_source(a1, NULL));
    unlink(c2);
    snprintf(c2, sizeof c2, "%s/third.CINF", tmp);
    copy_file(src, c2);
    CHECK(strcmp(skeleton_source(a1, NULL), "none") == 0, "two CINFs, none named like the ANIM: %s",
          skeleton_source(a1, NULL));
    /* the sibling among many (the search stops looking at the others once
     * two are found: the sibling is still seen wherever the listing puts it) */
    char many[24][2100];
    for (int k = 0; k < 24; k++) {
        snprintf(many[k], sizeof many[k], k ? "%s/extra%02d.cinf" : "%s/walk.cinf", tmp, k);
        copy_file(src, many[k]);
    }
    CHECK(strcmp(skeleton_source(a1, NULL), "sibling") == 0, "the sibling among 26 CINFs: %s",
          skeleton_source(a1, NULL));
    for (int k = 0; k < 24; k++) unlink(many[k]);
    /* a folder named like a CINF is not one: other.cinf stays the only CINF */
    unlink(c2);
    char dirlike[2100];
    snprintf(dirlike, sizeof dirlike, "%s/dir.cinf", tmp);
    CHECK(mkdir(dirlike, 0700) == 0, "mkdir %s", dirlike);
    CHECK(strcmp(skeleton_source(a1, NULL), "folder") == 0, "the only CINF beside a folder named .cinf: %s",
          skeleton_source(a1, NULL));
    rmdir(dirlike);
    copy_file(src, c2);
    CHECK(strcmp(skeleton_source(a1, c2), "option") == 0, "cinf=PATH: %s", skeleton_source(a1, c2));
    CHECK(strcmp(skeleton_source(a1, "none"), "none") == 0, "cinf=none: %s", skeleton_source(a1, "none"));
    char missing[2100];
    snprintf(missing, sizeof missing, "%s/missing.cinf", tmp);
    CHECK(strncmp(skeleton_source(a1, missing), "error", 5) == 0, "cinf=missing path must fail");
    unlink(a1);
    unlink(c1);
    unlink(c2);
    rmdir(tmp);
}

/* an ANIM, or a CINF that no ANIM or CMDL of the folder takes as its skeleton */
static bool is_fixture(const char *n)
{
    const char *dot = strrchr(n, '.');
    if (!dot) return false;
    bool anim = !strcmp(dot, ".anim") || !strcmp(dot, ".ANIM");
    bool cinf = !strcmp(dot, ".cinf") || !strcmp(dot, ".CINF");
    return anim || (cinf && !has_anim_partner(n));
}

/* root_motion=strip leaves the root-motion bone at rest and every other
 * channel as it was: bone 3 in a Prime 1 file, the header's root bone in a
 * Prime 2 one (v2_mp2's is bone 0, v0_mp2's bone 3). */
static size_t animated_bones(const ra_document *doc, uint32_t *ids, size_t cap)
{
    size_t n = 0;
    const ra_animation *an = doc->scene.animation_count ? &doc->scene.animations[0] : NULL;
    for (size_t c = 0; an && c < an->channel_count && n < cap; c++) {
        const ra_meta *m = ra_meta_get(&doc->scene.nodes[an->channels[c].node].meta, "metroid.bone_id");
        ids[n++] = m ? (uint32_t)m->u.i : UINT32_MAX;
    }
    return n;
}

static void root_motion_strip(void)
{
    const struct {
        const char *anim, *cinf;
        uint32_t root;
    } cases[] = {{"upper.ANIM", "upper.CINF", 3}, {"v2_mp2.anim", "v2_mp2.cinf", 0}, {"v0_mp2.anim", "v0_mp2.cinf", 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[1200], cinf[1200];
        snprintf(path, sizeof path, "%s/%s", g_dir, cases[k].anim);
        snprintf(cinf, sizeof cinf, "%s/%s", g_dir, cases[k].cinf);
        size_t n = 0;
        uint8_t *d = NULL;
        ra_error e;
        CHECK(ra_read_file(path, &d, &n, &e) == RA_OK, "%s: read", path);
        uint32_t kept[64], stripped[64];
        size_t nk = 0, ns = 0;
        for (int strip = 0; strip < 2 && d; strip++) {
            ra_options o;
            ra_options_init(&o);
            ra_options_add(&o, "cinf", cinf);
            ra_options_add(&o, "root_motion", strip ? "strip" : "keep");
            ra_document *doc = NULL;
            CHECK(load_opts(d, n, path, &o, &doc, &e) == RA_OK, "%s: load (%s)", cases[k].anim, e.msg);
            if (!doc) continue;
            if (strip) ns = animated_bones(doc, stripped, 64);
            else nk = animated_bones(doc, kept, 64);
            ra_document_free(doc);
        }
        size_t o = 0;
        bool had_root = false, same = true;
        for (size_t i = 0; i < nk; i++) {
            if (kept[i] == cases[k].root) {
                had_root = true;
                continue;
            }
            same = same && o < ns && stripped[o] == kept[i];
            o++;
        }
        CHECK(had_root && same && o == ns, "%s: strip leaves bone %u alone at rest (%zu channels kept, %zu stripped)",
              cases[k].anim, cases[k].root, nk, ns);
        ra_free(d);
    }
    /* hero.anim animates no bone 3: the strip says it stripped nothing */
    char path[1200];
    snprintf(path, sizeof path, "%s/hero.anim", g_dir);
    size_t n = 0;
    uint8_t *d = NULL;
    ra_error e;
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "root_motion", "strip");
    ra_document *doc = NULL;
    CHECK(ra_read_file(path, &d, &n, &e) == RA_OK && load_opts(d, n, path, &o, &doc, &e) == RA_OK, "hero.anim: %s",
          e.msg);
    bool warned = false;
    for (size_t w = 0; doc && w < doc->scene.warning_count; w++)
        warned = warned || strstr(doc->scene.warnings[w].msg, "nothing is stripped");
    CHECK(warned, "hero.anim with root_motion=strip: no warning that nothing was stripped");
    ra_document_free(doc);
    ra_free(d);
}

/* Parent ids (docs/formats/metroid_prime.md §5): a skeleton of four bones in
 * a chain, written by mp_cinf_write.  Prime 2 numbers bones from 0, so the
 * chain 0 <- 1 <- 2 <- 3 has bone 3's parent id 2, a bone (before: read as
 * "no parent", and bone 3 hung from RootNode); a root whose parent is an id
 * no bone has stays a root.  Prime 1's chain 3 <- 4 <- 5 <- 6 with the root's
 * parent 2 (no bone) and then the root naming itself: a root either way; a
 * Prime 2 root whose parent id 2 names its own descendant is a cycle. */
static ra_status load_chain(int game, const uint32_t ids[4], const uint32_t parents[4], ra_document **doc, ra_error *e)
{
    mp_bone b[4];
    uint32_t links[4][2];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 4; i++) {
        b[i].id = ids[i], b[i].parent = parents[i];
        b[i].pos[2] = (float)i;
        b[i].rot_model[0] = b[i].rot_local[0] = 1;
        links[i][0] = parents[i], links[i][1] = ids[i < 3 ? i + 1 : i];
        b[i].link_count = i < 3 ? 2 : 1, b[i].links = links[i];
    }
    uint32_t build[4] = {ids[0], ids[1], ids[2], ids[3]};
    mp_cinf k = {game, 4, b, 4, build, 0, NULL, NULL, 0, NULL};
    ra_writer w;
    ra_writer_init(&w);
    ra_status st = mp_cinf_write(&k, &w, e);
    if (st == RA_OK) st = load_opts(w.data, w.size, game == 2 ? "chain_mp2.cinf" : "chain_mp1.cinf", NULL, doc, e);
    ra_writer_free(&w);
    return st;
}

/* the name of node i's parent node, "" for none */
static const char *parent_name(const ra_scene *s, const char *node)
{
    for (size_t i = 0; i < s->node_count; i++)
        if (!strcmp(s->nodes[i].name, node)) return s->nodes[i].parent >= 0 ? s->nodes[s->nodes[i].parent].name : "";
    return "(no such node)";
}

static void cinf_parents(void)
{
    ra_document *doc = NULL;
    ra_error e;
    const uint32_t mp2_ids[4] = {0, 1, 2, 3}, mp2_par[4] = {0xFFFFFFFFu, 0, 1, 2};
    CHECK(load_chain(2, mp2_ids, mp2_par, &doc, &e) == RA_OK, "Prime 2 chain: %s", e.msg);
    if (doc) {
        const ra_scene *s = &doc->scene;
        const char *want[4][2] = {
            {"bone_0", "RootNode"}, {"bone_1", "bone_0"}, {"bone_2", "bone_1"}, {"bone_3", "bone_2"}};
        for (int i = 0; i < 4; i++)
            CHECK(!strcmp(parent_name(s, want[i][0]), want[i][1]), "Prime 2 chain: %s hangs from %s, expected %s",
                  want[i][0], parent_name(s, want[i][0]), want[i][1]);
        ra_document_free(doc);
    }
    const uint32_t mp1_ids[4] = {3, 4, 5, 6};
    for (int self = 0; self < 2; self++) {
        const uint32_t mp1_par[4] = {self ? 3u : 2u, 3, 4, 5};
        doc = NULL;
        CHECK(load_chain(1, mp1_ids, mp1_par, &doc, &e) == RA_OK, "Prime 1 chain (root's parent %u): %s", mp1_par[0],
              e.msg);
        if (!doc) continue;
        const ra_scene *s = &doc->scene;
        CHECK(!strcmp(parent_name(s, "bone_3"), "RootNode") && !strcmp(parent_name(s, "bone_6"), "bone_5"),
              "Prime 1 chain (root's parent %u): bone_3 under %s, bone_6 under %s", mp1_par[0],
              parent_name(s, "bone_3"), parent_name(s, "bone_6"));
        ra_document_free(doc);
    }
    const uint32_t loop_par[4] = {2, 0, 1, 2};
    doc = NULL;
    ra_status st = load_chain(2, mp2_ids, loop_par, &doc, &e);
    CHECK(st == RA_ERR_BAD_VALUE && !strcmp(e.field, "bone.parent"),
          "Prime 2 root naming its descendant 2 as parent: refused as a cycle (%s)", st == RA_OK ? "loaded" : e.msg);
    if (doc) ra_document_free(doc);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_metroid FIXTURE_DIR\n");
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    fx_rng = 4242;
    int fixtures = fx_for_each_file(g_dir, is_fixture, run_fixture);
    CHECK(fixtures >= 14, "expected the Metroid fixtures, found %d", fixtures);
    const char *rn = getenv("RA_RANDOM_FILES");
    random_encodes(rn ? atoi(rn) : 240);
    big_file();
    regressions();
    skeleton_search();
    root_motion_strip();
    cinf_parents();
    printf("fixtures: %d, instants compared: %ld, worst pose/playback difference: %.3g, files re-encoded exactly: %d\n",
           fixtures, g_stats.instants, g_stats.worst, g_reencoded);
    return ra_test_finish("test_metroid");
}
