/* LEGO Island .ani: the hand-made fixtures (expectations in their .txt),
 * byte-identical round trips, and the semantics check: at every millisecond
 * the reference evaluator (pose) and the baked keys played back as Assimp
 * consumers play them agree within 1e-4, in both coordinate frames, for the
 * fixtures and for files our writer generates at random. */
#include <math.h>
#include <string.h>

#include "ra_fixture.h"
#include "retroanim/lego_ani.h"
#include "retroanim/lego_wdb.h"

#define TOL 1e-4

static char g_dir[1024];
#define NAME_MAX_LEN 255

static ra_status load(const uint8_t *d, size_t n, const char *name, const char *coords, bool body, ra_document **doc,
                      ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    if (coords) ra_options_add(&o, "coords", coords);
    if (body) ra_options_add(&o, "format", "lego_ani_body");
    ra_error_clear(e);
    return ra_document_load(d, n, name, &o, doc, e);
}

static fx_stats g_stats;

/* pose vs consumer playback of the keys, every ms from 0 to duration + 50 ms */
static void check_semantics(const ra_document *doc, const char *what)
{
    const ra_scene *s = &doc->scene;
    double dur = s->animation_count ? s->animations[0].duration : 0;
    fx_check_semantics(doc, what, 0.001, floor(dur * 1000) / 1000 + 0.05, TOL, &g_stats);
}

static void check_roundtrip(const uint8_t *d, size_t n, bool body, const char *what)
{
    ra_options o;
    ra_options_init(&o);
    if (body) ra_options_add(&o, "format", "lego_ani_body");
    fx_check_roundtrip(d, n, &o, what);
}

/* tiny parser for [[t,v],[t,v]] */
static int visible_at(const char *json, double t)
{
    int vis = 1; /* visible before the first key */
    const char *p = json;
    double kt;
    int kv;
    while ((p = strchr(p, '[')) != NULL) {
        if (sscanf(p, "[%lf,%d]", &kt, &kv) == 2) {
            if (kt <= t + 1e-12) vis = kv != 0;
        }
        p++;
    }
    return vis;
}

static void run_fixture(const char *name)
{
    bool body = strstr(name, ".anb") != NULL;
    fx_file fx;
    if (!fx_open(g_dir, name, &fx)) return;
    const uint8_t *data = fx.data;
    size_t size = fx.size;
    FILE *f = fx.txt;
    int expects = fx.expects;
    char line[2048];
    ra_error e;
    ra_document *doc = NULL;
    if (fx.err_off >= 0) {
        ra_status st = load(data, size, name, NULL, body, &doc, &e);
        fx_check_refused(&fx, st, &e, name, "lego_ani");
        if (doc) ra_document_free(doc);
        fx_close(&fx);
        return;
    }
    if (load(data, size, name, NULL, body, &doc, &e) != RA_OK) {
        CHECK(0, "%s: load failed: %s", name, e.msg);
        fx_close(&fx);
        return;
    }
    const ra_scene *s = &doc->scene;
    while (fgets(line, sizeof line, f)) {
        double t;
        long n;
        char node[256];
        if (sscanf(line, "expect-nodes %ld", &n) == 1) {
            expects++;
            CHECK((long)(s->node_count - 1 - s->camera_count) == n, "%s: %zu nodes, expected %ld", name,
                  s->node_count - 1 - s->camera_count, n);
        } else if (sscanf(line, "expect-duration %lf", &t) == 1) {
            expects++;
            CHECK(s->animation_count == 1, "%s: one animation", name);
            if (s->animation_count) CHECK_NEAR(s->animations[0].duration, t, 1e-9, name);
        } else if (fx_check_pose_line(doc, line, name, TOL)) {
            expects++;
        } else if (strncmp(line, "expect-visible ", 15) == 0) {
            expects++;
            int want;
            char *pt = strstr(line, "t="), *pn = strstr(line, "node=");
            t = atof(pt + 2);
            if (sscanf(pn + 5, "%255s %d", node, &want) != 2) {
                CHECK(0, "%s: malformed line %s", name, line);
                continue;
            }
            int32_t idx = ra_scene_find_node(s, node);
            const ra_meta *m = idx >= 0 ? ra_meta_get(&s->nodes[idx].meta, "lego.visibility") : NULL;
            CHECK(m && m->type == RA_META_STRING, "%s: %s has visibility metadata", name, node);
            if (m) CHECK(visible_at(m->u.s, t) == want, "%s: visibility of %s at %g", name, node, t);
        }
    }
    CHECK(expects >= 3, "%s: its description has only %d expectations", name, expects);
    check_semantics(doc, name);
    ra_document_free(doc);
    /* the native frame must agree with itself too */
    if (load(data, size, name, "native", body, &doc, &e) == RA_OK) {
        check_semantics(doc, name);
        ra_document_free(doc);
    } else {
        CHECK(0, "%s: native load failed: %s", name, e.msg);
    }
    check_roundtrip(data, size, body, name);
    fx_close(&fx);
}

/* ---- random files from our writer ---------------------------------------------------- */
static double frand(double lo, double hi) { return lo + (hi - lo) * (fx_rnd() % 100000) / 100000.0; }

/* Every other random file is "plain": no duplicate times, no hold flags,
 * unit quaternions, so that most of its nodes take to_scene's direct path
 * (keys as they are) rather than the baker; the others exercise both. */
static bool g_plain;

static uint32_t rand_times(uint32_t *t, uint16_t n)
{
    uint32_t cur = fx_rnd() % 3 == 0 ? 0 : fx_rnd() % 300;
    for (uint16_t i = 0; i < n; i++) {
        t[i] = cur;
        cur += fx_rnd() % 5 == 0 && !g_plain ? 0 : 1 + fx_rnd() % 400; /* some duplicate times */
    }
    return cur;
}

static void rand_trans(ra_arena *a, lego_trans_key **k, uint16_t *n, double lo, double hi)
{
    *n = (uint16_t)(fx_rnd() % 5);
    *k = ra_arena_array(a, *n, sizeof **k);
    uint32_t t[8];
    rand_times(t, *n);
    for (uint16_t i = 0; i < *n; i++) {
        uint32_t fl = fx_rnd() % 4 == 0 ? 0 : LEGO_FLAG_ACTIVE;
        (*k)[i].raw = t[i] | fl << 24;
        (*k)[i].x = (float)frand(lo, hi);
        (*k)[i].y = (float)frand(lo, hi);
        (*k)[i].z = (float)frand(lo, hi);
    }
}

static void rand_node(ra_arena *a, lego_node *nd, int depth, int *count)
{
    static const char *names[] = {"BODY", "HEAD", "ARM-RT", "*PEPPER", "-HELP", "", "RD", "HEAD"};
    const char *nm = names[fx_rnd() % 8];
    nd->name_len = (uint32_t)strlen(nm);
    nd->name = ra_arena_strndup(a, nm, nd->name_len);
    rand_trans(a, &nd->trans, &nd->num_trans, -2, 2);
    rand_trans(a, &nd->scale, &nd->num_scale, 0.5, 1.5);
    nd->num_rot = (uint16_t)(fx_rnd() % 6);
    nd->rot = ra_arena_array(a, nd->num_rot, sizeof *nd->rot);
    uint32_t t[8];
    rand_times(t, nd->num_rot);
    for (uint16_t i = 0; i < nd->num_rot; i++) {
        uint32_t fl = LEGO_FLAG_ACTIVE;
        uint32_t r = fx_rnd() % 10;
        if (r == 0 && !g_plain) fl |= LEGO_FLAG_SKIP;
        if (r == 1) fl |= LEGO_FLAG_NEGATE;
        ra_quat q = ra_q_normalize(ra_q(frand(-1, 1), frand(-1, 1), frand(-1, 1), frand(-1, 1)));
        double sc = fx_rnd() % 4 == 0 && !g_plain ? 1.7 : 1.0; /* non-unit quaternions are legal */
        nd->rot[i].raw = t[i] | fl << 24;
        nd->rot[i].w = (float)(q.w * sc);
        nd->rot[i].x = (float)(q.x * sc);
        nd->rot[i].y = (float)(q.y * sc);
        nd->rot[i].z = (float)(q.z * sc);
    }
    nd->num_morph = (uint16_t)(fx_rnd() % 3);
    nd->morph = ra_arena_array(a, nd->num_morph, sizeof *nd->morph);
    rand_times(t, nd->num_morph);
    for (uint16_t i = 0; i < nd->num_morph; i++) {
        nd->morph[i].raw = t[i];
        nd->morph[i].visible = (uint8_t)(fx_rnd() % 2);
    }
    (*count)++;
    nd->num_children = depth < 3 ? fx_rnd() % 3 : 0;
    nd->children = ra_arena_array(a, nd->num_children, sizeof *nd->children);
    for (uint32_t i = 0; i < nd->num_children; i++) rand_node(a, &nd->children[i], depth + 1, count);
}

/* An empty .ani with a header, as the generated files start. */
static void ani_init(lego_ani *ani)
{
    memset(ani, 0, sizeof *ani);
    ani->has_header = true;
    ani->magic = LEGO_ANI_MAGIC;
    ani->bounding_radius = 3;
    ani->val3 = 1;
}

static void random_files(int count)
{
    for (int it = 0; it < count; it++) {
        g_plain = it % 2 == 1;
        ra_arena *a = ra_arena_create(0);
        lego_ani ani;
        ani_init(&ani);
        ani.num_actors = 2;
        ani.actors = ra_arena_array(a, 2, sizeof *ani.actors);
        ani.actors[0] = (lego_actor){2, ra_arena_strndup(a, "RD", 2), 2};
        ani.actors[1] = (lego_actor){7, ra_arena_strndup(a, "*PEPPER", 7), 4};
        ani.duration = (int32_t)(fx_rnd() % 1500);
        if (fx_rnd() % 2) {
            ani.parse_scene = 1;
            ani.camera = ra_arena_alloc(a, sizeof *ani.camera);
            rand_trans(a, &ani.camera->pos, &ani.camera->num_pos, -5, 5);
            rand_trans(a, &ani.camera->target, &ani.camera->num_target, -5, 5);
            ani.camera->num_roll = (uint16_t)(fx_rnd() % 3);
            ani.camera->roll = ra_arena_array(a, ani.camera->num_roll, sizeof *ani.camera->roll);
            uint32_t t[8];
            rand_times(t, ani.camera->num_roll);
            for (uint16_t i = 0; i < ani.camera->num_roll; i++)
                ani.camera->roll[i] = (lego_rotz_key){t[i], (float)frand(-3, 3)};
        }
        int nodes = 0;
        rand_node(a, &ani.root, 0, &nodes);
        ani.node_count = (size_t)nodes;
        ra_writer w;
        ra_writer_init(&w);
        ra_error e;
        ra_error_clear(&e);
        CHECK(lego_ani_write(&ani, &w, &e) == RA_OK, "write random %d", it);
        char what[64];
        snprintf(what, sizeof what, "random file %d", it);
        ra_document *doc = NULL;
        if (load(w.data, w.size, what, NULL, false, &doc, &e) == RA_OK) {
            int before = ra_t_fail;
            check_semantics(doc, what);
            if (ra_t_fail != before) {
                /* keep the failing file for a look: retroanim dump --source */
                char out[96];
                snprintf(out, sizeof out, "failed_random_%d.ani", it);
                ra_write_file(out, w.data, w.size, &e);
                fprintf(stderr, "  written to %s\n", out);
            }
            ra_document_free(doc);
        } else {
            CHECK(0, "%s: load failed: %s", what, e.msg);
        }
        check_roundtrip(w.data, w.size, false, what);
        ra_writer_free(&w);
        ra_arena_destroy(a);
    }
}

/* Keys out of time order: the engine scans from key 0 while the next key's
 * time is <= t; the importer finds the same key through the track's record
 * keys.  Its pose (native frame) is compared with lego_node_matrix, which
 * runs the engine's scan itself, at every ms and at every key's time, for a
 * node whose three tracks are shuffled (with repeated times); then the
 * baked keys against the pose. */
/* ani made a file of one node BODY with nt, nr and ns keys (arrays in a,
 * zeroed) and the header's duration. */
static lego_node *body_ani(ra_arena *a, lego_ani *ani, int32_t duration, uint16_t nt, uint16_t nr, uint16_t ns)
{
    ani_init(ani);
    ani->duration = duration;
    ani->node_count = 1;
    lego_node *nd = &ani->root;
    nd->name_len = 4;
    nd->name = ra_arena_strndup(a, "BODY", 4);
    nd->num_trans = nt, nd->num_rot = nr, nd->num_scale = ns;
    nd->trans = ra_arena_array(a, nt, sizeof *nd->trans);
    nd->rot = ra_arena_array(a, nr, sizeof *nd->rot);
    nd->scale = ra_arena_array(a, ns, sizeof *nd->scale);
    return nd;
}

/* ani written into w (initialised here; ra_writer_free it). */
static void write_ani(const lego_ani *ani, ra_writer *w, const char *what)
{
    ra_writer_init(w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(lego_ani_write(ani, w, &e) == RA_OK, "%s: written: %s", what, e.msg);
}

/* The camera where the engine leaves its matrix as it was (lego_island.md §4: hold
 * the previous orientation): position keys (0,0,0) at 0 and 2000 ms and
 * (0,4,0) at 1000 ms, the target (3,0,0) at 0 and (0,0,0) at 1000 and 2000
 * ms.  At 1000 ms the camera looks straight down: it keeps the orientation
 * of the instant just before, at its own position.  A camera whose target
 * is its position from the start has no earlier orientation: the identity,
 * at its position (before: the identity at the origin). */
static void camera_hold(void)
{
    for (int from_start = 0; from_start < 2; from_start++) {
        ra_arena *a = ra_arena_create(0);
        lego_ani ani;
        lego_node *nd = body_ani(a, &ani, 2000, 1, 0, 0);
        nd->trans[0] = (lego_trans_key){0 | LEGO_FLAG_ACTIVE << 24, 0, 0, 0};
        ani.parse_scene = 1;
        lego_camera *cam = ani.camera = ra_arena_alloc(a, sizeof *ani.camera);
        cam->num_pos = 3, cam->num_target = from_start ? 1 : 3, cam->num_roll = 0;
        cam->pos = ra_arena_array(a, 3, sizeof *cam->pos);
        cam->target = ra_arena_array(a, 3, sizeof *cam->target);
        const uint32_t t[3] = {0, 1000, 2000};
        for (int i = 0; i < 3; i++) {
            uint32_t raw = t[i] | LEGO_FLAG_ACTIVE << 24;
            cam->pos[i] = (lego_trans_key){raw, 0, i == 1 ? 4.0f : 0.0f, 0};
            cam->target[i] = (lego_trans_key){raw, from_start || i ? 0.0f : 3.0f, from_start ? 4.0f : 0.0f, 0};
        }
        ra_writer w;
        write_ani(&ani, &w, "camera hold");
        ra_error e;
        ra_document *doc = NULL;
        CHECK(load(w.data, w.size, "cam.ani", "native", false, &doc, &e) == RA_OK, "camera hold: %s", e.msg);
        if (doc) {
            size_t nn = doc->scene.node_count, ci = nn - 1; /* the camera's node is the last */
            ra_mat4 at[8], before[8];
            bool ok = nn <= 8 && doc->scene.camera_count == 1 &&
                      ra_document_pose(doc, 0, from_start ? 0.5 : 1.0, at, &e) == RA_OK &&
                      ra_document_pose(doc, 0, from_start ? 0.5 : 1.0 - 1e-6, before, &e) == RA_OK;
            CHECK(ok, "camera hold (%s): poses", from_start ? "from the start" : "one instant");
            if (ok) {
                const ra_mat4 *m = &at[ci];
                double y = m->m[1][3];
                CHECK(fabs(y - (from_start ? 2.0 : 4.0)) < 1e-9 && fabs(m->m[0][3]) < 1e-12 && fabs(m->m[2][3]) < 1e-12,
                      "camera hold: at its own position (y %g)", y);
                double worst = 0; /* the rotation part against the one held */
                ra_mat4 id = ra_m4_identity();
                const ra_mat4 *want = from_start ? &id : &before[ci];
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(m->m[r][c] - want->m[r][c]));
                CHECK(worst < 1e-5, "camera hold (%s): orientation off by %g",
                      from_start ? "from the start" : "one instant", worst);
            }
            ra_document_free(doc);
        }
        ra_writer_free(&w);
        ra_arena_destroy(a);
    }
    /* degenerate over several keys: position keys (10,10,0) at 0, (0,10,0) at 1000, (0,5,0) at 2000,
     * (0,3,0) at 3000 ms, the target (0,0,0) at 0 and 3000: straight down from 1000 ms on, the
     * orientation of just before 1000 ms held at every later instant */
    ra_arena *a = ra_arena_create(0);
    lego_ani ani;
    lego_node *nd = body_ani(a, &ani, 3000, 1, 0, 0);
    nd->trans[0] = (lego_trans_key){0 | LEGO_FLAG_ACTIVE << 24, 0, 0, 0};
    ani.parse_scene = 1;
    lego_camera *cam = ani.camera = ra_arena_alloc(a, sizeof *ani.camera);
    cam->num_pos = 4, cam->num_target = 2, cam->num_roll = 0;
    cam->pos = ra_arena_array(a, 4, sizeof *cam->pos);
    cam->target = ra_arena_array(a, 2, sizeof *cam->target);
    const float px[4] = {10, 0, 0, 0}, py[4] = {10, 10, 5, 3};
    for (uint32_t i = 0; i < 4; i++)
        cam->pos[i] = (lego_trans_key){(1000 * i) | LEGO_FLAG_ACTIVE << 24, px[i], py[i], 0};
    cam->target[0] = (lego_trans_key){0 | LEGO_FLAG_ACTIVE << 24, 0, 0, 0};
    cam->target[1] = (lego_trans_key){3000 | LEGO_FLAG_ACTIVE << 24, 0, 0, 0};
    ra_writer w;
    write_ani(&ani, &w, "camera hold over keys");
    ra_error e;
    ra_document *doc = NULL;
    CHECK(load(w.data, w.size, "cam.ani", "native", false, &doc, &e) == RA_OK, "camera hold over keys: %s", e.msg);
    size_t nn = doc ? doc->scene.node_count : 0;
    ra_mat4 ref[8], at[8];
    if (doc && nn <= 8 && ra_document_pose(doc, 0, 0.999999, ref, &e) == RA_OK) {
        const double ts[5] = {1.0, 1.5, 2.0, 2.5, 3.0};
        for (int k = 0; k < 5; k++) {
            double worst = 0;
            bool ok = ra_document_pose(doc, 0, ts[k], at, &e) == RA_OK;
            for (int r = 0; ok && r < 3; r++)
                for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(at[nn - 1].m[r][c] - ref[nn - 1].m[r][c]));
            CHECK(ok && worst < 1e-9, "camera hold over keys: at %g s the orientation is off by %g", ts[k], worst);
        }
    } else {
        CHECK(0, "camera hold over keys: the pose just before 1 s");
    }
    if (doc) ra_document_free(doc);
    ra_writer_free(&w);
    ra_arena_destroy(a);
}

/* Visibility keys alone (lego_island.md: a LegoHideAnimPresenter's kind of file):
 * BODY with no translation, rotation or scale keys and three morph keys
 * (shown at 0, hidden at 500 ms, shown at 1500 ms; header duration 2000)
 * gives one animation of 2 s with one constant channel on BODY at its rest
 * and the visibility track; before, no animation at all. */
static void visibility_only(void)
{
    ra_arena *a = ra_arena_create(0);
    lego_ani ani;
    lego_node *nd = body_ani(a, &ani, 2000, 0, 0, 0);
    nd->num_morph = 3;
    nd->morph = ra_arena_array(a, 3, sizeof *nd->morph);
    const uint32_t t[3] = {0, 500, 1500};
    for (int i = 0; i < 3; i++) nd->morph[i] = (lego_morph_key){t[i] | LEGO_FLAG_ACTIVE << 24, (uint8_t)(i != 1)};
    ra_writer w;
    write_ani(&ani, &w, "visibility only");
    ra_error e;
    ra_document *doc = NULL;
    CHECK(load(w.data, w.size, "hide.ani", NULL, false, &doc, &e) == RA_OK, "visibility only: %s", e.msg);
    if (doc) {
        const ra_scene *sc = &doc->scene;
        const ra_animation *an = sc->animation_count == 1 ? &sc->animations[0] : NULL;
        CHECK(an && fabs(an->duration - 2.0) < 1e-12 && an->channel_count == 1 && an->visibility_count == 1,
              "visibility only: %zu animation(s), duration %g, %zu channel(s), %zu visibility track(s)",
              sc->animation_count, an ? an->duration : -1, an ? an->channel_count : 0, an ? an->visibility_count : 0);
        if (an && an->channel_count == 1 && an->visibility_count == 1) {
            const ra_channel *ch = &an->channels[0];
            const ra_vis_track *vt = &an->visibility[0];
            ra_mat4 rest = sc->nodes[1].transform,
                    held = ra_m4_compose(ch->position[0].v, ch->rotation[0].q, ch->scaling[0].v);
            CHECK(ch->node == 1 && !strcmp(sc->nodes[1].name, "BODY") && ch->position_count == 1 &&
                      ch->rotation_count == 1 && ch->scaling_count == 1 && ra_m4_max_abs_diff(&rest, &held) < 1e-12,
                  "visibility only: the channel holds BODY at rest");
            CHECK(vt->node == 1 && vt->count == 3 && vt->keys[0].visible && !vt->keys[1].visible &&
                      vt->keys[2].visible && fabs(vt->keys[1].t - 0.5) < 1e-12 && fabs(vt->keys[2].t - 1.5) < 1e-12,
                  "visibility only: BODY shown, hidden at 0.5 s, shown at 1.5 s");
        }
        ra_document_free(doc);
    }
    /* the same keys out of time order (1500 before 500): kept as node metadata only, no animation */
    nd->morph[1].raw = 1500 | LEGO_FLAG_ACTIVE << 24, nd->morph[2].raw = 500 | LEGO_FLAG_ACTIVE << 24;
    ra_writer_free(&w);
    write_ani(&ani, &w, "visibility out of order");
    doc = NULL;
    CHECK(load(w.data, w.size, "hide.ani", NULL, false, &doc, &e) == RA_OK && doc->scene.animation_count == 0,
          "visibility keys out of order alone: no animation (%s)", e.msg);
    if (doc) ra_document_free(doc);
    ra_writer_free(&w);
    ra_arena_destroy(a);
}

/* What the reader notes of each key track as it fills it (lego_node's
 * keys_in_order, last_key_ms, rot_zero), in place of the scene reading every
 * key again, one track at a time: a track out of time order (the pose is
 * still the engine's scan, and a warning says so), a zero rotation key (a
 * warning), keys past the header's duration (the scene's duration covers
 * them, and a warning). */
static void reader_notes(void)
{
    static const char *const tracks[3] = {"translation", "rotation", "scale"};
    for (int c = 0; c < 10; c++) {
        int track = c % 3, what = c < 3   ? 0
                                  : c < 6 ? 1
                                  : c < 9 ? 2
                                          : 3; /* 0 order, 1 late, 2 zero (rotation), 3 none */
        if (what == 2 && track != 1) continue;
        ra_arena *a = ra_arena_create(0);
        lego_ani ani;
        lego_node *nd = body_ani(a, &ani, 1000, 11, 11, 11);
        for (uint32_t i = 0; i < 11; i++) {
            uint32_t raw = (100 * i) | LEGO_FLAG_ACTIVE << 24;
            nd->trans[i] = (lego_trans_key){raw, (float)i, 0.5f * (float)i, 1};
            nd->scale[i] = (lego_trans_key){raw, 1 + 0.1f * (float)i, 1, 1};
            ra_quat q = ra_q_axis_angle(ra_v3(0, 0, 1), 0.2 * i);
            nd->rot[i] = (lego_rot_key){raw, (float)q.w, (float)q.x, (float)q.y, (float)q.z};
        }
        uint32_t *raw3 = track == 0 ? &nd->trans[3].raw : track == 1 ? &nd->rot[3].raw : &nd->scale[3].raw;
        uint32_t *raw10 = track == 0 ? &nd->trans[10].raw : track == 1 ? &nd->rot[10].raw : &nd->scale[10].raw;
        if (what == 0) *raw3 = 650 | LEGO_FLAG_ACTIVE << 24; /* after keys 4, 5 and 6 */
        if (what == 1) *raw10 = 2500 | LEGO_FLAG_ACTIVE << 24;
        if (what == 2) nd->rot[5].w = 0, nd->rot[5].z = 0;
        ra_writer w;
        write_ani(&ani, &w, "reader notes");
        ra_error e;
        ra_document *doc = NULL;
        char what_s[80];
        snprintf(what_s, sizeof what_s, "reader notes, %s, %s", tracks[track],
                 what == 0   ? "out of order"
                 : what == 1 ? "past the duration"
                 : what == 2 ? "zero key"
                             : "plain");
        if (load(w.data, w.size, what_s, "native", false, &doc, &e) == RA_OK) {
            const ra_scene *sc = &doc->scene;
            bool order_w = false, zero_w = false, late_w = false;
            for (size_t i = 0; i < sc->warning_count; i++) {
                order_w |= strstr(sc->warnings[i].msg, "not in time order") != NULL;
                zero_w |= strstr(sc->warnings[i].msg, "zero rotation quaternion") != NULL;
                late_w |= strstr(sc->warnings[i].msg, "keys run to 2500 ms") != NULL;
            }
            CHECK(order_w == (what == 0) && zero_w == (what == 2) && late_w == (what == 1),
                  "%s: warnings of order %d, zero key %d, late keys %d", what_s, order_w, zero_w, late_w);
            double dur = sc->animation_count ? sc->animations[0].duration : -1; /* seconds */
            CHECK(fabs(dur - (what == 1 ? 2.5 : 1.0)) < 1e-9, "%s: duration %.9g s", what_s, dur);
            int32_t body = ra_scene_find_node(sc, "BODY");
            ra_mat4 *world = ra_malloc(sc->node_count * sizeof *world);
            double worst = 0;
            for (uint32_t ms = 0; body >= 0 && world && ms <= 2600; ms += 25) {
                ra_document_pose(doc, 0, ms / 1000.0, world, &e);
                ra_mat4 want = lego_node_matrix(nd, ms, true);
                for (int r = 0; r < 4; r++)
                    for (int k = 0; k < 4; k++) worst = fmax(worst, fabs(world[body].m[r][k] - want.m[r][k]));
            }
            CHECK(body >= 0 && worst <= 1e-12, "%s: the pose is the engine's at 105 instants (worst %.3g)", what_s,
                  worst);
            ra_free(world);
            ra_document_free(doc);
        } else {
            CHECK(false, "%s: loads: %s", what_s, e.msg);
        }
        ra_writer_free(&w);
        ra_arena_destroy(a);
    }
}

static void out_of_order(void)
{
    ra_arena *a = ra_arena_create(0);
    lego_ani ani;
    lego_node *nd = body_ani(a, &ani, 3000, 300, 120, 60);
    for (uint16_t i = 0; i < nd->num_trans; i++) {
        uint32_t t = (uint32_t)(fx_rnd() % 3000), fl = fx_rnd() % 5 ? LEGO_FLAG_ACTIVE : 0;
        nd->trans[i] = (lego_trans_key){t | fl << 24, (float)frand(-2, 2), (float)frand(-2, 2), (float)frand(-2, 2)};
    }
    for (uint16_t i = 0; i < nd->num_scale; i++)
        nd->scale[i] = (lego_trans_key){(uint32_t)(fx_rnd() % 3000) | LEGO_FLAG_ACTIVE << 24, (float)frand(0.5, 1.5),
                                        (float)frand(0.5, 1.5), (float)frand(0.5, 1.5)};
    for (uint16_t i = 0; i < nd->num_rot; i++) {
        ra_quat q = ra_q_normalize(ra_q(frand(-1, 1), frand(-1, 1), frand(-1, 1), frand(-1, 1)));
        nd->rot[i] = (lego_rot_key){(uint32_t)(fx_rnd() % 3000) | LEGO_FLAG_ACTIVE << 24, (float)q.w, (float)q.x,
                                    (float)q.y, (float)q.z};
    }
    nd->trans[7].raw = nd->trans[3].raw; /* a repeated time */
    ra_writer w;
    write_ani(&ani, &w, "out of order");
    ra_error e;
    ra_document *doc = NULL;
    if (load(w.data, w.size, "out_of_order", "native", false, &doc, &e) == RA_OK) {
        const ra_scene *sc = &doc->scene;
        int32_t body = ra_scene_find_node(sc, "BODY");
        ra_mat4 *world = ra_malloc(sc->node_count * sizeof *world);
        size_t compared = 0, off = 0;
        for (int pass = 0; body >= 0 && world && pass < 2; pass++) {
            uint32_t n = pass ? nd->num_trans : 3100;
            for (uint32_t k = 0; k < n; k++) {
                double ms = pass ? (double)lego_key_time(nd->trans[k].raw) : (double)k;
                ra_document_pose(doc, 0, ms / 1000.0, world, &e);
                ra_mat4 want = lego_node_matrix(nd, ms, true);
                double d = 0;
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++) d = fmax(d, fabs(world[body].m[r][c] - want.m[r][c]));
                off += d > 1e-12;
                compared++;
            }
        }
        CHECK(body >= 0 && compared == 3100u + nd->num_trans && off == 0,
              "out of order: the pose is the engine's scan at %zu instants (%zu off by more than 1e-12)", compared,
              off);
        ra_free(world);
        check_semantics(doc, "out of order");
        bool warned = false;
        for (size_t i = 0; i < sc->warning_count; i++) warned |= strstr(sc->warnings[i].msg, "time order") != NULL;
        CHECK(warned, "out of order: a warning says the keys are not in time order");
        ra_document_free(doc);
    } else {
        CHECK(0, "out of order: load failed: %s", e.msg);
    }
    ra_writer_free(&w);
    ra_arena_destroy(a);
}

static bool is_fixture(const char *n)
{
    size_t l = strlen(n);
    return l > 4 && (strcmp(n + l - 4, ".ani") == 0 || strcmp(n + l - 4, ".anb") == 0);
}

/* The public API's own way in: load a file, the accessors, dump to a string. */
static void public_api(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/hierarchy.ani", g_dir);
    ra_error e;
    ra_document *doc = NULL;
    CHECK(ra_document_load_file(path, NULL, &doc, &e) == RA_OK, "load_file: %s", e.msg);
    if (!doc) return;
    CHECK(strcmp(ra_format_id(ra_document_format(doc)), "lego_ani") == 0, "format accessor");
    const ra_scene *s = ra_document_scene(doc);
    CHECK(s && s->node_count == 5 && s->animation_count == 1, "scene accessor");
    char *text = NULL, *compact = NULL, *source = NULL;
    size_t n = 0, nc = 0;
    CHECK(ra_document_dump(doc, RA_DUMP_SCENE, &text, &n, &e) == RA_OK && text && strlen(text) == n, "dump: %s", e.msg);
    CHECK(ra_document_dump(doc, RA_DUMP_SCENE | RA_DUMP_COMPACT, &compact, &nc, &e) == RA_OK && compact, "compact");
    CHECK(ra_document_dump(doc, RA_DUMP_SOURCE, &source, NULL, &e) == RA_OK && source, "source dump");
    CHECK(text && strstr(text, "\"format\": \"lego_ani\"") && strstr(text, "\"nodes\""), "dump holds the scene");
    CHECK(compact && nc < n && strchr(compact, '\n') == compact + nc - 1, "compact dump is one line");
    ra_string_free(text);
    ra_string_free(compact);
    ra_string_free(source);
    ra_document_free(doc);
    /* a document without a scene has no scene dump; an unknown option is refused by name */
    size_t size = 0;
    uint8_t *d = NULL;
    CHECK(ra_read_file(path, &d, &size, &e) == RA_OK && ra_document_read(d, size, path, NULL, &doc, &e) == RA_OK,
          "read: %s", e.msg);
    CHECK(ra_document_dump(doc, RA_DUMP_SCENE, &text, NULL, &e) == RA_ERR_USAGE && !text, "no scene, no dump");
    ra_document_free(doc);
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "max_key_angel", "2");
    ra_error_clear(&e);
    CHECK(ra_document_load(d, size, path, &o, &doc, &e) == RA_ERR_USAGE && !doc &&
              strcmp(e.field, "max_key_angel") == 0,
          "unknown option: %s", e.msg);
    ra_free(d);
    CHECK(ra_document_load_file("/nonexistent/x.ani", NULL, &doc, &e) == RA_ERR_IO && !doc, "missing file");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_lego FIXTURE_DIR\n");
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    fx_rng = 12345;
    int fixtures = fx_for_each_file(g_dir, is_fixture, run_fixture);
    CHECK(fixtures >= 10, "expected the LEGO fixtures, found %d", fixtures);
    const char *rn = getenv("RA_RANDOM_FILES");
    random_files(rn ? atoi(rn) : 200);
    public_api();
    out_of_order();
    reader_notes();
    visibility_only();
    camera_hold();
    printf("fixtures: %d, milliseconds compared: %ld, worst pose/playback difference: %.3g\n", fixtures,
           g_stats.instants, g_stats.worst);
    return ra_test_finish("test_lego");
}
