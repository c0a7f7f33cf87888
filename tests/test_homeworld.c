/* Homeworld .mad: the fixtures of test_models/homeworld (made by
 * make_fixtures.py from docs/formats/homeworld.md, independently of this
 * project's code), random files from our writer, a 200-object x 500-key
 * file, and hostile files.
 *
 * Sampling error.  The scene samples the game's TCB spline at sample_rate Hz
 * (h = 1/rate between samples at most) plus every key time, and consumers
 * play the samples linearly (slerp for rotations).  Between two samples the
 * linear error of a curve f is at most h^2/8 max|f''|.  So, per node and
 * animation, the test allows
 *     h^2/8 * ( |x''| + |y''| + |z''|  +  |h''| + |p''| + |b''| + (|h'| + |p'| + |b'|)^2 ) + 1e-6
 * with each maximum taken over the window: the translation's error is bounded
 * by its second derivative, the rotation's by the angular acceleration, which
 * the angles' second derivatives and the products of their rates bound.  A
 * matrix entry moves no more than the rotation angle or the translation.
 * At 60 Hz a wing fold of 0.8 rad over a second allows about 1e-4; the test
 * prints the worst ratio of difference to allowance it saw. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <float.h>
#include <string.h>
#include <time.h>

#include "ra_fixture.h"
#include "retroanim/homeworld.h"

#define TOL 1e-4
#define FMT "homeworld_mad"
static const char *g_dir;
static long g_checks;
static fx_stats g_stats;
static double g_sample_worst; /* check_samples_exact's largest difference */
static long g_sample_keys;

static ra_status load(const uint8_t *d, size_t n, const char *name, const ra_options *o, ra_document **doc, ra_error *e)
{
    ra_error_clear(e);
    return ra_document_load(d, n, name, o, doc, e);
}

static double rate_of(const ra_document *doc)
{
    const ra_meta *m = ra_meta_get(&doc->scene.meta, "homeworld.sample_rate");
    return m ? m->u.d : 60;
}

/* Largest |f'| and |f''| of channel c over [a, b], exactly: in each key
 * segment f is a cubic, so f'' is linear (largest at an end) and f' is
 * quadratic (largest at an end or where f'' crosses zero). */
static void curve_maxima(const hw_object *o, int c, double a, double b, double *m1, double *m2)
{
    *m1 = *m2 = 0;
    for (int32_t i = 1; i + 2 < o->key_count; i++) {
        double t0 = fmax(o->times[i], a), t1 = fmin(o->times[i + 1], b);
        if (!(t0 < t1)) continue;
        double p1, p2, q1, q2; /* f', f'' at the segment's (clipped) ends, from inside it */
        hw_spline(o, c, t0, false, &p1, &p2, NULL);
        hw_spline(o, c, t1, true, &q1, &q2, NULL);
        *m1 = fmax(*m1, fmax(fabs(p1), fabs(q1)));
        *m2 = fmax(*m2, fmax(fabs(p2), fabs(q2)));
        if (p2 * q2 < 0) {
            double d1, d2;
            hw_spline(o, c, t0 + (t1 - t0) * p2 / (p2 - q2), false, &d1, &d2, NULL);
            *m1 = fmax(*m1, fabs(d1));
        }
    }
}

/* the sampling error allowed for a node's own curves in animation anim (see the top of the file) */
static double own_tol(const ra_document *doc, size_t anim, size_t node)
{
    const hw_mad *m = hw_document_mad(doc);
    if (!m || node == 0 || node >= doc->scene.node_count || anim >= (size_t)m->animation_count) return 1e-6;
    /* the node's object: node - 1 without a .geo, else the object of the node's name */
    const hw_object *o = node <= (size_t)m->object_count ? &m->objects[node - 1] : NULL;
    if (doc->scene.node_count != (size_t)m->object_count + 1) { /* with a .geo */
        /* a .geo object sharing a bound name (a twin) has its node named NAME#k, unique */
        const char *name = doc->scene.nodes[node].name, *hash = strrchr(name, '#');
        o = NULL;
        for (int32_t j = 0; j < m->object_count && !o; j++)
            if (!strcmp(m->objects[j].name, name) || (hash && strlen(m->objects[j].name) == (size_t)(hash - name) &&
                                                      !strncmp(m->objects[j].name, name, (size_t)(hash - name))))
                o = &m->objects[j];
        if (!o) return 1e-6;
    }
    const hw_animation *a = &m->animations[anim];
    if (!(o->animation_bits >> anim & 1u)) return 1e-6;
    double m1[HW_CHANNELS], m2[HW_CHANNELS];
    for (int c = 0; c < HW_CHANNELS; c++) curve_maxima(o, c, a->start, a->end, &m1[c], &m2[c]);
    double h = 1.0 / rate_of(doc), rates = m1[HW_H] + m1[HW_P] + m1[HW_B];
    double acc = m2[HW_X] + m2[HW_Y] + m2[HW_Z] + m2[HW_H] + m2[HW_P] + m2[HW_B] + rates * rates;
    return h * h / 8 * acc + 1e-6;
}

/* With a .geo an animated parent carries its children: a node also inherits
 * each ancestor's sampling error, its rotation part scaled by the lever arm
 * from the ancestor to the node (taken twice over, the largest seen at 33
 * instants of the window: the arm moves when the chain between animates). */
static double sampling_tol(const ra_document *doc, size_t anim, size_t node)
{
    double tol = own_tol(doc, anim, node);
    const ra_scene *s = &doc->scene;
    const hw_mad *m = hw_document_mad(doc);
    if (!m || node == 0 || node >= s->node_count || anim >= s->animation_count ||
        s->node_count == (size_t)m->object_count + 1 || s->nodes[node].parent <= 0)
        return tol;
    ra_mat4 *w = malloc(s->node_count * sizeof *w);
    if (!w) return tol;
    for (int32_t p = s->nodes[node].parent; p > 0; p = s->nodes[p].parent) {
        double up = own_tol(doc, anim, (size_t)p) - 1e-6, lever = 0;
        if (up <= 0) continue;
        for (int k = 0; k <= 32; k++) {
            ra_error e;
            ra_error_clear(&e);
            if (ra_document_pose(doc, anim, s->animations[anim].duration * k / 32, w, &e) != RA_OK) continue;
            double dx = w[node].m[0][3] - w[p].m[0][3], dy = w[node].m[1][3] - w[p].m[1][3],
                   dz = w[node].m[2][3] - w[p].m[2][3];
            lever = fmax(lever, sqrt(dx * dx + dy * dy + dz * dz));
        }
        tol += up * (1 + 2 * lever);
    }
    free(w);
    return tol;
}

/* every animation, pose against playback every dt up to its end (a loop
 * starts over just after it) */
static void check_all_semantics(const ra_document *doc, const char *what, double dt)
{
    for (size_t a = 0; a < doc->scene.animation_count; a++)
        fx_check_semantics_ex(doc, a, what, dt, doc->scene.animations[a].duration, TOL, sampling_tol, &g_stats);
}

static void check_anim_line(const ra_document *doc, const char *line, const char *what)
{
    char v[64];
    const ra_scene *s = &doc->scene;
    size_t a = fx_field(line, "index", v, sizeof v) ? (size_t)atol(v) : (size_t)-1;
    CHECK(a < s->animation_count, "%s: no animation %zu", what, a);
    if (a >= s->animation_count) return;
    const ra_animation *an = &s->animations[a];
    const char *pn = strstr(line, " name=");
    CHECK(pn && !strcmp(an->name, pn + 6), "%s: animation %zu is named '%s', expected '%s'", what, a, an->name,
          pn ? pn + 6 : "?");
    if (fx_field(line, "duration", v, sizeof v)) CHECK_NEAR(an->duration, atof(v), 1e-6, what);
    if (fx_field(line, "channels", v, sizeof v))
        CHECK(an->channel_count == (size_t)atol(v), "%s: animation %zu has %zu channels, expected %s", what, a,
              an->channel_count, v);
    if (fx_field(line, "loop", v, sizeof v)) {
        ra_behaviour b = atoi(v) ? RA_BEHAVIOUR_REPEAT : RA_BEHAVIOUR_DEFAULT;
        for (size_t c = 0; c < an->channel_count; c++)
            CHECK(an->channels[c].pre_state == b && an->channels[c].post_state == b, "%s: animation %zu behaviour",
                  what, a);
    }
}

/* expect-mesh name=<mesh> node=<node> vertices=<N> triangles=<M> material=<name> (the .geo's meshes) */
static void check_mesh_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", node[256] = "", mat[256] = "", nv[32] = "", nt[32] = "";
    bool ok = fx_field(line, "name", name, sizeof name) && fx_field(line, "node", node, sizeof node) &&
              fx_field(line, "material", mat, sizeof mat) && fx_field(line, "vertices", nv, sizeof nv) &&
              fx_field(line, "triangles", nt, sizeof nt);
    CHECK(ok, "%s: malformed %s", what, line);
    const ra_mesh *m = NULL;
    for (size_t i = 0; ok && i < s->mesh_count; i++)
        if (!strcmp(s->meshes[i].name, name)) m = &s->meshes[i];
    CHECK(m != NULL, "%s: no mesh %s", what, name);
    if (!m) return;
    CHECK(m->node < s->node_count && !strcmp(s->nodes[m->node].name, node), "%s: mesh %s not on %s", what, name, node);
    CHECK(m->vertex_count == (uint32_t)atol(nv) && m->triangle_count == (size_t)atol(nt),
          "%s: mesh %s has %u vertices, %zu triangles", what, name, m->vertex_count, m->triangle_count);
    CHECK(m->material >= 0 && (size_t)m->material < s->material_count && !strcmp(s->materials[m->material].name, mat),
          "%s: mesh %s material", what, name);
    CHECK(m->normals && m->uvs, "%s: mesh %s has normals and UVs", what, name);
}

static bool has_warning(const ra_scene *s, const char *text)
{
    for (size_t i = 0; i < s->warning_count; i++)
        if (strstr(s->warnings[i].msg, text)) return true;
    return false;
}

static void check_rest_line(const ra_document *doc, const char *line, const char *what)
{
    const ra_scene *s = &doc->scene;
    const char *pn = strstr(line, " node="), *pm = strstr(line, " world=");
    if (!pn || !pm) {
        CHECK(0, "%s: malformed %s", what, line);
        return;
    }
    char node[256];
    size_t len = (size_t)(pm - (pn + 6));
    snprintf(node, sizeof node, "%.*s", (int)(len < 255 ? len : 255), pn + 6);
    int32_t i = ra_scene_find_node(s, node);
    CHECK(i >= 0, "%s: no node %s", what, node);
    if (i < 0) return;
    ra_mat4 want, got = i ? ra_m4_mul(&s->nodes[0].transform, &s->nodes[i].transform) : s->nodes[0].transform;
    char *q = (char *)pm + 7;
    for (int k = 0; k < 16; k++) {
        want.m[k / 4][k % 4] = strtod(q, &q);
        if (*q == ',') q++;
    }
    double d = ra_m4_max_abs_diff(&got, &want);
    CHECK(d <= TOL, "%s: rest of %s differs by %g", what, node, d);
}

/* write(read(file)): byte-identical for a file in the exporter's layout, the same model otherwise */
static void check_write(const fx_file *fx, bool canonical, const char *name)
{
    if (canonical) {
        fx_check_roundtrip(fx->data, fx->size, NULL, name);
        return;
    }
    ra_document *a = NULL, *b = NULL;
    ra_error e;
    ra_error_clear(&e);
    if (ra_document_read(fx->data, fx->size, name, NULL, &a, &e) != RA_OK) return;
    ra_writer w;
    ra_writer_init(&w);
    CHECK(a->format->write(a, &w, &e) == RA_OK, "%s: write", name);
    CHECK(ra_document_read(w.data, w.size, name, NULL, &b, &e) == RA_OK, "%s: re-read", name);
    if (b) {
        const hw_mad *x = a->model, *y = b->model;
        CHECK(y->canonical, "%s: our writer's layout is the exporter's", name);
        bool same = x->object_count == y->object_count && x->animation_count == y->animation_count;
        for (int32_t j = 0; same && j < x->object_count; j++) {
            const hw_object *p = &x->objects[j], *q = &y->objects[j];
            size_t n = (size_t)p->key_count;
            same = !strcmp(p->name, q->name) && p->key_count == q->key_count &&
                   p->animation_bits == q->animation_bits && !memcmp(p->times, q->times, 4 * n) &&
                   !memcmp(p->tcb, q->tcb, 12 * n);
            for (int c = 0; same && c < HW_CHANNELS; c++) same = !memcmp(p->path[c], q->path[c], 4 * n);
        }
        for (int32_t i = 0; same && i < x->animation_count; i++)
            same = !strcmp(x->animations[i].name, y->animations[i].name) &&
                   x->animations[i].start == y->animations[i].start && x->animations[i].end == y->animations[i].end &&
                   x->animations[i].flags == y->animations[i].flags;
        CHECK(same, "%s: written in the exporter's layout, it reads back to the same model", name);
        ra_document_free(b);
    }
    ra_writer_free(&w);
    ra_document_free(a);
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
        CHECK(det == NULL, "%s: taken for %s by content", name, det ? det->id : "");
        ra_status st = load(fx.data, fx.size, fx.path, NULL, &doc, &e);
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        CHECK(st != RA_OK && strstr(msg, "Homeworld 2"), "%s: must be refused with a clear message: %s", name, msg);
        if (doc) ra_document_free(doc);
        g_checks++;
        fx_close(&fx);
        return;
    }
    if (fx.err_off < 0) CHECK(det && !strcmp(det->id, FMT), "%s: detected as %s", name, det ? det->id : "nothing");
    doc = fx_load_or_refuse(&fx, name, FMT, &g_checks);
    if (!doc) {
        fx_close(&fx);
        return;
    }
    const ra_scene *s = &doc->scene;
    int expects = fx.expects, canonical = -1;
    long n;
    while (fgets(line, sizeof line, fx.txt)) {
        line[strcspn(line, "\r\n")] = 0;
        if (fx_check_common_line(doc, line, name)) {
        } else if (sscanf(line, "expect-animations %ld", &n) == 1) {
            CHECK((long)s->animation_count == n, "%s: %zu animations, expected %ld", name, s->animation_count, n);
        } else if (!strncmp(line, "expect-anim ", 12)) {
            check_anim_line(doc, line, name);
        } else if (!strncmp(line, "expect-pose ", 12)) {
            fx_check_pose_line_ex(doc, line, name, TOL, sampling_tol);
        } else if (!strncmp(line, "expect-mesh ", 12)) {
            check_mesh_line(s, line, name);
        } else if (sscanf(line, "expect-meshes %ld", &n) == 1) {
            CHECK((long)s->mesh_count == n, "%s: %zu meshes, expected %ld", name, s->mesh_count, n);
        } else if (!strncmp(line, "expect-rest ", 12)) {
            check_rest_line(doc, line, name);
        } else if (!strncmp(line, "expect-warning ", 15)) {
            CHECK(has_warning(s, line + 15), "%s: no warning containing '%s'", name, line + 15);
        } else if (sscanf(line, "expect-canonical %d", &canonical) == 1) {
            const hw_mad *m = hw_document_mad(doc);
            CHECK(m && m->canonical == (canonical == 1), "%s: canonical layout %d, expected %d", name,
                  m ? m->canonical : -1, canonical);
        } else {
            continue;
        }
        expects++;
    }
    CHECK(expects >= 8, "%s: its description has only %d expectations", name, expects);
    CHECK(canonical >= 0, "%s: no expect-canonical line", name);
    g_checks += expects;
    ra_error se;
    ra_error_clear(&se);
    CHECK(ra_scene_check(s, &se) == RA_OK, "%s: scene invariants: %s", name, se.msg);
    check_all_semantics(doc, name, 1.0 / 240);
    ra_document_free(doc);
    check_write(&fx, canonical == 1, name);
    fx_close(&fx);
}

/* ---- files from our writer ------------------------------------------------------------------------------ */
/* A file as LWExport writes one: `nobj` objects with keys on frames of a
 * 30 fps timeline, `nanim` windows on it (in time order unless shuffled),
 * phantom keys as docs/formats/homeworld.md §1 says, bits for the windows
 * an object has keys at both ends of.  every_frame: each object keys every
 * frame. */
static void random_mad(ra_arena *ar, hw_mad *m, int nobj, int frames, int nanim, bool shuffle, bool every_frame)
{
    memset(m, 0, sizeof *m);
    m->version = HW_MAD_VERSION;
    m->fps = 30;
    m->animation_count = nanim;
    m->object_count = nobj;
    m->animations = ra_arena_array(ar, (size_t)nanim, sizeof *m->animations);
    m->objects = ra_arena_array(ar, (size_t)nobj, sizeof *m->objects);
    int *ws = ra_arena_array(ar, (size_t)nanim, sizeof *ws), *we = ra_arena_array(ar, (size_t)nanim, sizeof *we);
    /* windows: consecutive pieces of the timeline, some with a gap */
    int at = 0, span = frames / nanim;
    for (int a = 0; a < nanim; a++) {
        ws[a] = at;
        we[a] = a + 1 == nanim ? frames : at + 1 + (int)(fx_rnd() % (uint32_t)span);
        at = we[a] + (fx_rnd() % 3 == 0 ? 1 + (int)(fx_rnd() % 3) : 0);
        if (at >= frames) at = frames - 1;
        if (ws[a] > we[a]) ws[a] = we[a];
    }
    if (shuffle)
        for (int a = nanim - 1; a > 0; a--) {
            int b = (int)(fx_rnd() % (uint32_t)(a + 1)), t = ws[a];
            ws[a] = ws[b], ws[b] = t, t = we[a], we[a] = we[b], we[b] = t;
        }
    float length = 0;
    for (int a = 0; a < nanim; a++) {
        hw_animation *an = &m->animations[a];
        an->name = ra_arena_printf(ar, a % 3 == 1 ? "Anim%dLoop" : "Anim%d", a);
        an->start = (float)ws[a] / 30.0f;
        an->end = (float)we[a] / 30.0f;
        an->flags = a % 3 == 1 ? HW_MAD_FLAG_LOOP : 0;
        length += an->end - an->start;
    }
    m->length = length;
    float phantom_end = hw_mad_phantom_end(m);
    char *used = ra_arena_array(ar, (size_t)frames + 1, 1);
    for (int j = 0; j < nobj; j++) {
        hw_object *o = &m->objects[j];
        o->name = ra_arena_printf(ar, "Part%02d", j);
        memset(used, 0, (size_t)frames + 1);
        int nk = 0;
        for (int f = 0; f <= frames; f++) {
            bool on = every_frame || fx_rnd() % 5 == 0;
            for (int a = 0; a < nanim; a++) /* most objects key the windows' ends */
                if ((f == ws[a] || f == we[a]) && (j + a) % 4 != 3) on = true;
            if (on) used[f] = 1, nk++;
        }
        if (nk < 2) used[0] = used[frames] = 1, nk = 2;
        nk = 0;
        for (int f = 0; f <= frames; f++) nk += used[f];
        float *times = ra_arena_array(ar, (size_t)nk, sizeof(float)), *vals[HW_CHANNELS];
        hw_tcb *tcb = ra_arena_array(ar, (size_t)nk, sizeof *tcb);
        for (int c = 0; c < HW_CHANNELS; c++) vals[c] = ra_arena_array(ar, (size_t)nk, sizeof(float));
        size_t k = 0;
        double v[HW_CHANNELS] = {0};
        for (int c = 0; c < HW_CHANNELS; c++) v[c] = fx_frand(-3, 3);
        for (int f = 0; f <= frames; f++) {
            if (!used[f]) continue;
            times[k] = (float)f / 30.0f;
            for (int c = 0; c < HW_CHANNELS; c++) {
                v[c] += c < 3 ? fx_frand(-4, 4) : fx_frand(-0.6, 0.6);
                vals[c][k] = (float)v[c];
            }
            tcb[k].tension = (float)fx_frand(-1, 1); /* one call per statement: the same stream with every compiler */
            tcb[k].continuity = (float)fx_frand(-1, 1);
            tcb[k].bias = (float)fx_frand(-1, 1);
            k++;
        }
        CHECK(hw_object_set_keys(o, ar, (size_t)nk, times, tcb, (const float *const *)vals, phantom_end), "keys");
        for (int a = 0; a < nanim; a++)
            if (used[ws[a]] && used[we[a]]) o->animation_bits |= 1u << a;
    }
    hw_mad_set_strings(m, ar);
}

static uint8_t *write_mad(const hw_mad *m, size_t *size)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(hw_mad_write(m, &w, &e) == RA_OK, "write: %s", e.msg);
    *size = w.size;
    return w.data;
}

/* At every real key inside a window the pose is the key itself (the spline interpolates its keys). */
static void check_keys_hit(const ra_document *doc, const char *what)
{
    const hw_mad *m = hw_document_mad(doc);
    const ra_scene *s = &doc->scene;
    ra_mat4 *w = malloc(s->node_count * sizeof *w);
    double worst = 0;
    for (int32_t a = 0; a < m->animation_count; a++) {
        const hw_animation *an = &m->animations[a];
        for (int32_t j = 0; j < m->object_count; j++) {
            const hw_object *o = &m->objects[j];
            if (!(o->animation_bits >> a & 1u)) continue;
            for (int32_t k = 1; k + 1 < o->key_count; k++) {
                if (o->times[k] < an->start || o->times[k] > an->end) continue;
                ra_error e;
                ra_error_clear(&e);
                ra_document_pose(doc, (size_t)a, (double)o->times[k] - an->start, w, &e);
                /* root Rz(+90) * (y, z, -x) */
                ra_vec3 want = {-o->path[HW_Z][k], o->path[HW_Y][k], -o->path[HW_X][k]};
                const ra_mat4 *g = &w[j + 1];
                worst = fmax(
                    worst, fmax(fabs(g->m[0][3] - want.x), fmax(fabs(g->m[1][3] - want.y), fabs(g->m[2][3] - want.z))));
            }
        }
    }
    CHECK(worst <= 1e-9, "%s: the pose at a key time is not the key's position (off by %g)", what, worst);
    free(w);
}

/* Every sample is the game's transform at its instant, to rounding: each
 * key of a node hanging from the root, played at its own time, against the
 * pose there (the checks above allow the sampling error between keys, which
 * would hide an error in the samples themselves).  Loaded with
 * max_key_angle=179, so that no key is inserted on the slerp between
 * samples; space and coords: the frame's options (NULL: the default). */
static void check_samples_exact(const uint8_t *d, size_t size, const char *space, const char *coords, const char *what)
{
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "max_key_angle", "179");
    if (space) ra_options_add(&o, "space", space);
    if (coords) ra_options_add(&o, "coords", coords);
    ra_document *doc = NULL;
    ra_error e;
    if (load(d, size, what, &o, &doc, &e) != RA_OK) {
        CHECK(0, "%s: load with max_key_angle=179: %s", what, e.msg);
        return;
    }
    const ra_scene *s = &doc->scene;
    ra_mat4 *w = malloc(s->node_count * sizeof *w);
    const ra_mat4 *root = &s->nodes[0].transform;
    double worst = 0;
    long keys = 0;
    for (size_t a = 0; w && a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++) {
            const ra_channel *ch = &s->animations[a].channels[c];
            if (s->nodes[ch->node].parent != 0) continue;
            for (size_t k = 0; k < ch->rotation_count + ch->position_count; k++) {
                bool rot = k < ch->rotation_count;
                double t = rot ? ch->rotation[k].t : ch->position[k - ch->rotation_count].t;
                ra_error_clear(&e);
                if (ra_document_pose(doc, a, t, w, &e) != RA_OK) continue;
                const ra_mat4 *g = &w[ch->node];
                ra_mat4 local = rot ? ra_m4_from_quat(ch->rotation[k].q)
                                    : ra_m4_translation(ch->position[k - ch->rotation_count].v);
                ra_mat4 x = ra_m4_mul(root, &local);
                for (int i = 0; i < 3; i++)
                    for (int j = rot ? 0 : 3; j < (rot ? 3 : 4); j++) worst = fmax(worst, fabs(x.m[i][j] - g->m[i][j]));
                keys++;
            }
        }
    g_sample_worst = fmax(g_sample_worst, worst);
    g_sample_keys += keys;
    CHECK(keys > 0 && worst <= 1e-12, "%s: %ld keys; a key differs from the pose at its own time by %g", what, keys,
          worst);
    free(w);
    ra_document_free(doc);
}

static void write_read_check(const hw_mad *m, const char *what, double dt)
{
    size_t size;
    uint8_t *d = write_mad(m, &size);
    ra_document *doc = NULL;
    ra_error e;
    if (load(d, size, what, NULL, &doc, &e) != RA_OK) {
        CHECK(0, "%s: load: %s", what, e.msg);
        free(d);
        return;
    }
    CHECK(hw_document_mad(doc)->canonical, "%s: the writer's layout is the exporter's", what);
    CHECK(doc->scene.animation_count == (size_t)m->animation_count, "%s: one animation per record", what);
    ra_error se;
    ra_error_clear(&se);
    CHECK(ra_scene_check(&doc->scene, &se) == RA_OK, "%s: scene invariants: %s", what, se.msg);
    check_keys_hit(doc, what);
    check_all_semantics(doc, what, dt);
    ra_document_free(doc);
    check_samples_exact(d, size, NULL, NULL, what);
    fx_check_roundtrip(d, size, NULL, what);
    free(d);
}

static void random_files(int count)
{
    for (int i = 0; i < count; i++) {
        ra_arena *ar = ra_arena_create(0);
        hw_mad m;
        int nanim = 1 + (int)(fx_rnd() % 5);
        int nobj = 1 + (int)(fx_rnd() % 6); /* drawn one per statement: argument order is unspecified */
        int frames = 20 + (int)(fx_rnd() % 100);
        random_mad(ar, &m, nobj, frames, nanim, i % 3 == 2, false);
        char what[64];
        snprintf(what, sizeof what, "random%d.mad", i);
        write_read_check(&m, what, 1.0 / 240);
        ra_arena_destroy(ar);
    }
}

/* The other frames: space=lightwave (mirrored and as stored), coords=native.
 * Every one is checked for pose vs playback (pose builds matrices by a basis
 * change, the scene quaternions by their own formulas), and their worlds are
 * the default's under the fixed change of frame. */
static void spaces(void)
{
    ra_arena *ar = ra_arena_create(0);
    hw_mad m;
    random_mad(ar, &m, 4, 60, 3, false, false);
    size_t size;
    uint8_t *d = write_mad(&m, &size);
    static const char *const opts[4][2] = {
        {"ship", "converted"}, {"ship", "native"}, {"lightwave", "converted"}, {"lightwave", "native"}};
    ra_document *doc[4] = {0};
    for (int k = 0; k < 4; k++) {
        ra_options o;
        ra_options_init(&o);
        ra_options_add(&o, "space", opts[k][0]);
        ra_options_add(&o, "coords", opts[k][1]);
        ra_error e;
        CHECK(load(d, size, "spaces.mad", &o, &doc[k], &e) == RA_OK, "space=%s coords=%s: %s", opts[k][0], opts[k][1],
              e.msg);
        if (doc[k]) check_all_semantics(doc[k], opts[k][0], 1.0 / 240);
        check_samples_exact(d, size, opts[k][0], opts[k][1], "spaces.mad");
    }
    /* P: LightWave -> ship; F mirrors Z; R: the default root */
    const ra_mat4 P = {{{0, 1, 0, 0}, {0, 0, 1, 0}, {-1, 0, 0, 0}, {0, 0, 0, 1}}};
    const ra_mat4 F = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, 1}}};
    const ra_mat4 R = {{{0, -1, 0, 0}, {1, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
    ra_mat4 pt = ra_m4_transpose(&P), rt = ra_m4_transpose(&R), fp = ra_m4_mul(&F, &pt);
    ra_mat4 to[4], from[4]; /* world_k = to[k] * world_0 * from[k] */
    to[0] = from[0] = ra_m4_identity();
    to[1] = rt, from[1] = ra_m4_identity();
    to[2] = ra_m4_mul(&fp, &rt), from[2] = ra_m4_transpose(&fp);
    to[3] = ra_m4_mul(&pt, &rt), from[3] = P;
    if (doc[0] && doc[1] && doc[2] && doc[3]) {
        size_t nn = doc[0]->scene.node_count;
        ra_mat4 *w0 = malloc(nn * sizeof *w0), *wk = malloc(nn * sizeof *wk);
        double worst = 0;
        for (size_t a = 0; a < 3; a++)
            for (double t = 0; t <= doc[0]->scene.animations[a].duration; t += 0.05) {
                ra_error e;
                ra_document_pose(doc[0], a, t, w0, &e);
                for (int k = 1; k < 4; k++) {
                    ra_document_pose(doc[k], a, t, wk, &e);
                    for (size_t n = 1; n < nn; n++) {
                        ra_mat4 x = ra_m4_mul(&w0[n], &from[k]), y = ra_m4_mul(&to[k], &x);
                        worst = fmax(worst, ra_m4_max_abs_diff(&y, &wk[n]));
                    }
                }
            }
        CHECK(worst < 1e-9, "the four frames are one pose under fixed changes of frame (off by %g)", worst);
        free(w0);
        free(wk);
    }
    for (int k = 0; k < 4; k++)
        if (doc[k]) ra_document_free(doc[k]);
    free(d);
    ra_arena_destroy(ar);
}

/* The 200 objects x 500 keys, written by our writer. */
static void big_file(void)
{
    ra_arena *ar = ra_arena_create(0);
    hw_mad m;
    random_mad(ar, &m, 200, 499, 4, false, true);
    size_t size;
    uint8_t *d = write_mad(&m, &size);
    clock_t c0 = clock();
    ra_document *doc = NULL;
    ra_error e;
    CHECK(load(d, size, "big.mad", NULL, &doc, &e) == RA_OK, "big.mad: %s", e.msg);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    if (doc) {
        size_t keys = 0;
        for (size_t a = 0; a < doc->scene.animation_count; a++)
            for (size_t c = 0; c < doc->scene.animations[a].channel_count; c++)
                keys += doc->scene.animations[a].channels[c].position_count +
                        doc->scene.animations[a].channels[c].rotation_count;
        printf("big.mad: %zu bytes, 200 objects x 500 keys, loaded in %.3f s CPU, %zu keys\n", size, secs, keys);
        CHECK(doc->scene.node_count == 201 && doc->scene.animation_count == 4, "big.mad: nodes and animations");
        check_all_semantics(doc, "big.mad", 1.0 / 60);
        ra_document_free(doc);
    }
    fx_check_roundtrip(d, size, NULL, "big.mad");
    free(d);
    ra_arena_destroy(ar);
}

/* Every object node's homeworld.tcb text ("-" where it has none), each
 * followed by "|"; *with: the nodes with one, *after: those after a node
 * without */
static char *tcb_texts(const ra_scene *s, size_t *with, size_t *after)
{
    ra_writer w;
    ra_writer_init(&w);
    *with = *after = 0;
    bool cut = false;
    for (size_t i = 1; i < s->node_count; i++) {
        const ra_meta *t = ra_meta_get(&s->nodes[i].meta, "homeworld.tcb");
        if (t) ra_wr_bytes(&w, t->u.s, strlen(t->u.s)), ++*with, *after += cut;
        cut |= !t;
        ra_wr_bytes(&w, t ? "|" : "-|", t ? 1 : 2);
    }
    ra_wr_bytes(&w, "", 1);
    CHECK(!w.failed, "tcb texts: out of memory");
    return (char *)w.data;
}

/* TCB lists past the 16 MiB metadata budget: in object order, the texts
 * that fit what is left are kept (a later short one after a cut long one),
 * with a warning, and one thread keeps the same texts as two (which make
 * them all at once).  Keys every frame for 28,000 frames; the
 * bake samples the 30 frames of the one window. */
static void tcb_budget(void)
{
    ra_arena *ar = ra_arena_create(0);
    hw_mad m;
    random_mad(ar, &m, 27, 30, 1, false, true);
    for (int j = 0; j < m.object_count; j++) {
        hw_object *o = &m.objects[j];
        /* 28,001 keys (7,001 for every third object); the window's keys are random_mad's */
        int nk = j % 3 == 2 ? 7001 : 28001;
        float *times = ra_arena_array(ar, (size_t)nk, sizeof(float)), *vals[HW_CHANNELS];
        hw_tcb *tcb = ra_arena_array(ar, (size_t)nk, sizeof *tcb);
        for (int c = 0; c < HW_CHANNELS; c++) vals[c] = ra_arena_array(ar, (size_t)nk, sizeof(float));
        for (int k = 0; k < nk; k++) {
            times[k] = (float)k / 30.0f;
            int src = k < o->key_count - 2 ? k + 1 : o->key_count - 2; /* the real keys: past the phantom */
            for (int c = 0; c < HW_CHANNELS; c++) vals[c][k] = o->path[c][src];
            tcb[k].tension = (float)fx_frand(-1, 1);
            tcb[k].continuity = (float)fx_frand(-1, 1);
            tcb[k].bias = (float)fx_frand(-1, 1);
        }
        CHECK(hw_object_set_keys(o, ar, (size_t)nk, times, tcb, (const float *const *)vals, times[nk - 1] + 1), "keys");
    }
    size_t size;
    uint8_t *d = write_mad(&m, &size);
    char *text[2] = {NULL, NULL};
    size_t with[2] = {0, 0}, after[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        ra_document *doc = NULL;
        ra_error e;
        CHECK(fx_load_opt(d, size, "tcb.mad", false, "threads", t ? "2" : "1", &doc, &e) == RA_OK,
              "tcb.mad (%d threads): %s", t + 1, e.msg);
        if (!doc) continue;
        CHECK(has_warning(&doc->scene, "TCB lists exceed 16 MiB"), "tcb.mad: no warning of the cut");
        text[t] = tcb_texts(&doc->scene, &with[t], &after[t]);
        ra_document_free(doc);
    }
    if (text[0] && text[1]) {
        size_t n = strlen(text[0]);
        CHECK(!strcmp(text[0], text[1]), "tcb.mad: one thread and two keep other TCB texts");
        /* about 40 bytes a key: some objects fit, some do not, and a short one after a cut long one does */
        CHECK(with[0] > 5 && with[0] < 27 && after[0] > 0 && n > (8u << 20) && n <= (16u << 20) + 2 * 27,
              "tcb.mad: %zu objects keep their TCB text (%zu after one without), %zu bytes", with[0], after[0], n);
        printf("tcb.mad: %zu bytes, %zu of 27 objects keep their TCB text (%zu after one without; %zu bytes)\n", size,
               with[0], after[0], n);
    }
    free(text[0]);
    free(text[1]);
    free(d);
    ra_arena_destroy(ar);
}

/* ---- hostile files -------------------------------------------------------------------------------------- */
static void expect_refused(const uint8_t *d, size_t n, const ra_options *o, const char *what, ra_status code,
                           const char *field)
{
    ra_document *doc = NULL;
    ra_error e;
    clock_t c0 = clock();
    ra_status st = load(d, n, what, o, &doc, &e);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    char msg[512];
    ra_error_format(&e, msg, sizeof msg);
    CHECK(st == code && !strcmp(e.field, field), "%s: expected %s at %s, got %s: %s", what, ra_status_name(code), field,
          ra_status_name(st), msg);
    CHECK(secs < 1.0, "%s: took %.2f s", what, secs);
    if (doc) ra_document_free(doc);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* The objects' keys are read as jobs (hw_mad_read_run) after their
 * records: with 1, 2 and 4 threads the model and scene are the same, and
 * of a bad key and a bad record the one met first in file order is
 * reported, whichever comes first. */
static void parallel_read(void)
{
    ra_arena *ar = ra_arena_create(0);
    hw_mad m;
    fx_rng = 31;
    random_mad(ar, &m, 12, 30, 1, false, false);
    size_t size;
    uint8_t *d = write_mad(&m, &size);
    static const char *const threads[3] = {"1", "2", "4"};
    char *dumps[3][2] = {{NULL}};
    uint64_t rec[12] = {0}, x1[12] = {0}; /* object records; each object's second x value */
    for (int t = 0; t < 3; t++) {
        ra_document *doc = NULL;
        ra_error e;
        CHECK(fx_load_opt(d, size, "parallel.mad", false, "threads", threads[t], &doc, &e) == RA_OK,
              "parallel.mad (threads=%s): %s", threads[t], e.msg);
        if (!doc) continue;
        for (int k = 0; k < 2; k++) {
            size_t n = 0;
            if (ra_document_dump(doc, k ? RA_DUMP_SOURCE : RA_DUMP_SCENE, &dumps[t][k], &n, &e) != RA_OK)
                dumps[t][k] = NULL;
        }
        const hw_mad *rm = doc->model;
        for (int j = 0; j < 12 && j < rm->object_count; j++) {
            rec[j] = rm->objects_offset + (uint64_t)HW_MAD_OBJECT_SIZE * (uint64_t)j;
            x1[j] = rm->objects[j].path_offset[0] + 4;
        }
        ra_document_free(doc);
    }
    for (int k = 0; k < 2; k++) {
        CHECK(dumps[0][k] && dumps[1][k] && dumps[2][k] && !strcmp(dumps[0][k], dumps[1][k]) &&
                  !strcmp(dumps[0][k], dumps[2][k]),
              "parallel.mad: the same %s with 1, 2 and 4 threads", k ? "model (dump --source)" : "scene");
        for (int t = 0; t < 3; t++) ra_string_free(dumps[t][k]);
    }
    /* {word to make NaN, nKeyframes to make -1, the field and offset expected} */
    const struct {
        uint64_t nan_at, neg_at;
        const char *field;
        uint64_t offset;
    } cases[2] = {{x1[3], rec[7] + 12, "x", x1[3]}, {x1[5], rec[2] + 12, "object.nKeyframes", rec[2] + 12}};
    for (int c = 0; c < 2 && rec[11]; c++)
        for (int t = 0; t < 3; t++) {
            uint8_t keep[2][4];
            memcpy(keep[0], d + cases[c].nan_at, 4);
            memcpy(keep[1], d + cases[c].neg_at, 4);
            put32(d + cases[c].nan_at, 0x7FC00000u);
            put32(d + cases[c].neg_at, 0xFFFFFFFFu);
            ra_document *doc = NULL;
            ra_error e;
            ra_status st = fx_load_opt(d, size, "parallel.mad", false, "threads", threads[t], &doc, &e);
            CHECK(st == RA_ERR_BAD_VALUE && !strcmp(e.field, cases[c].field) && e.offset == cases[c].offset,
                  "parallel.mad case %d, threads=%s: %s at %llu expected, got %s at %llu (%s)", c, threads[t],
                  cases[c].field, (unsigned long long)cases[c].offset, e.field, (unsigned long long)e.offset, e.msg);
            if (doc) ra_document_free(doc);
            memcpy(d + cases[c].nan_at, keep[0], 4);
            memcpy(d + cases[c].neg_at, keep[1], 4);
        }
    CHECK(rec[11] != 0, "parallel.mad: twelve objects read");
    free(d);
    ra_arena_destroy(ar);
}

static void hostile(void)
{
    ra_arena *ar = ra_arena_create(0);
    hw_mad m;
    random_mad(ar, &m, 3, 40, 2, false, false);
    size_t size;
    uint8_t *d = write_mad(&m, &size);
    /* option values */
    static const char *const bad[][2] = {{"sample_rate", "0"}, {"sample_rate", "-5"}, {"sample_rate", "1e9"},
                                         {"space", "maya"},    {"coords", "zup"},     {"max_samples", "0"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ra_options o;
        ra_options_init(&o);
        ra_options_add(&o, bad[i][0], bad[i][1]);
        expect_refused(d, size, &o, bad[i][0], RA_ERR_USAGE, bad[i][0]);
    }
    /* a window of a million seconds needs 60 million samples: refused by the sample budget */
    uint8_t *h = malloc(size);
    memcpy(h, d, size);
    float big = 1e6f;
    uint32_t bits;
    memcpy(&bits, &big, 4);
    put32(h + 40 + 16 * 1 + 8, bits);
    expect_refused(h, size, NULL, "1e6 s window", RA_ERR_LIMIT, "max_samples");
    /* angles of 1e30 radians: the rotation is noise, every pair of samples
     * turns more than 90 degrees; halving is bounded, the budget refuses */
    memcpy(h, d, size);
    {
        const hw_object *o = &m.objects[0];
        uint32_t off = 40 + 16 * 2 + 48 * 3; /* object 0's arrays */
        float huge = 1e30f;
        memcpy(&bits, &huge, 4);
        for (int32_t k = 2; k < o->key_count - 1; k += 2)
            put32(h + off + (16 + 12) * (uint32_t)o->key_count + 4 * (uint32_t)k, bits);
        ra_document *doc = NULL;
        ra_error e;
        clock_t c0 = clock();
        ra_status st = load(h, size, "huge angles", NULL, &doc, &e);
        double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
        CHECK(st == RA_OK || st == RA_ERR_LIMIT, "huge angles: %s", e.msg);
        CHECK(secs < 1.0, "huge angles: took %.2f s", secs);
        if (doc) {
            ra_error se;
            ra_error_clear(&se);
            CHECK(ra_scene_check(&doc->scene, &se) == RA_OK, "huge angles: scene invariants: %s", se.msg);
            ra_document_free(doc);
        }
    }
    /* Objects pointing at one object's arrays: a few load; 4000 of them need
     * 4000 x 40 x 43 bytes, about 32 times the 216 KB file, past the 8x
     * allowance (an allocation multiplier) and are refused. */
    {
        hw_mad one;
        random_mad(ar, &one, 1, 40, 1, false, true); /* keys on all 41 frames: 43 with the phantoms */
        for (int count = 3; count <= 4000; count += 3997) {
            hw_mad o = one;
            o.object_count = count;
            o.objects = ra_arena_array(ar, (size_t)count, sizeof *o.objects);
            for (int j = 0; j < count; j++) {
                o.objects[j] = one.objects[0];
                o.objects[j].name = ra_arena_printf(ar, "o%d", j);
                if (j) o.objects[j].key_count = 0; /* no arrays of its own */
            }
            hw_mad_set_strings(&o, ar);
            size_t n2;
            uint8_t *d2 = write_mad(&o, &n2);
            uint32_t obj0 = 40 + 16 * 1; /* aim objects 1.. at object 0's arrays */
            for (int j = 1; j < count; j++) memcpy(d2 + obj0 + 48 * j + 12, d2 + obj0 + 12, 36);
            if (count == 3) {
                ra_document *doc = NULL;
                ra_error e;
                CHECK(load(d2, n2, "3 shared", NULL, &doc, &e) == RA_OK, "3 objects sharing arrays: %s", e.msg);
                if (doc) ra_document_free(doc);
            } else {
                expect_refused(d2, n2, NULL, "shared arrays", RA_ERR_LIMIT, "object.nKeyframes");
            }
            free(d2);
        }
    }
    /* Findings of the hostile-input review, kept as regressions. */
    /* many objects whose names all start inside one long run of letters:
     * names are measured once and cut at 1000 bytes, so this stays linear */
    {
        hw_mad o;
        memset(&o, 0, sizeof o);
        o.version = HW_MAD_VERSION, o.fps = 30, o.object_count = 3000;
        o.objects = ra_arena_array(ar, 3000, sizeof *o.objects);
        o.string_block_length = 200000;
        o.strings = ra_arena_array(ar, 200001, 1);
        memset(o.strings, 'a', 199999);
        for (int j = 0; j < 3000; j++) o.objects[j].name_offset = (uint32_t)j;
        size_t n2;
        uint8_t *d2 = write_mad(&o, &n2);
        ra_document *doc = NULL;
        ra_error e;
        clock_t c0 = clock();
        CHECK(load(d2, n2, "long names", NULL, &doc, &e) == RA_OK, "long names: %s", e.msg);
        double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
        CHECK(secs < 1.0, "long names: %.2f s", secs);
        if (doc) {
            size_t longest = 0;
            for (size_t i = 0; i < doc->scene.node_count; i++) {
                size_t len = strlen(doc->scene.nodes[i].name);
                if (len > longest) longest = len;
            }
            CHECK(longest <= 1000 + 8 && ra_arena_used(doc->arena) < 64u << 20,
                  "long names: names cut (longest %zu), %zu bytes of arena", longest, ra_arena_used(doc->arena));
            ra_document_free(doc);
        }
        free(d2);
    }
    /* a NaN continuity at key 0 is reported before a NaN tension at key 3 (key order) */
    {
        memcpy(h, d, size);
        const hw_object *o = &m.objects[0];
        uint32_t tcb = 40 + 16 * 2 + 48 * 3 + 4 * (uint32_t)o->key_count;
        put32(h + tcb + 4, 0x7FC00000u), put32(h + tcb + 36, 0x7FC00000u);
        ra_document *doc = NULL;
        ra_error e;
        CHECK(load(h, size, "tcb order", NULL, &doc, &e) != RA_OK && e.offset == tcb + 4 &&
                  !strcmp(e.field, "continuity"),
              "tcb order: error at %llu (%s), expected %u", (unsigned long long)e.offset, e.field, tcb + 4);
        if (doc) ra_document_free(doc);
    }
    /* extreme tension/continuity/bias: finite keys, a curve far past float range: 0 there, nothing infinite */
    {
        memcpy(h, d, size);
        const hw_object *o = &m.objects[0];
        uint32_t tcb = 40 + 16 * 2 + 48 * 3 + 4 * (uint32_t)o->key_count;
        for (int32_t k = 0; k < o->key_count; k++) {
            float v[3] = {-3e38f, 3e38f, 3e38f};
            for (int i = 0; i < 3; i++)
                memcpy(&bits, &v[i], 4), put32(h + tcb + 12 * (uint32_t)k + 4 * (uint32_t)i, bits);
        }
        ra_document *doc = NULL;
        ra_error e;
        CHECK(load(h, size, "extreme tcb", NULL, &doc, &e) == RA_OK, "extreme tcb: %s", e.msg);
        if (doc) {
            double big_v = 0;
            for (size_t a = 0; a < doc->scene.animation_count; a++)
                for (size_t c = 0; c < doc->scene.animations[a].channel_count; c++) {
                    const ra_channel *ch = &doc->scene.animations[a].channels[c];
                    for (size_t k = 0; k < ch->position_count; k++)
                        big_v = fmax(big_v, fmax(fabs(ch->position[k].v.x),
                                                 fmax(fabs(ch->position[k].v.y), fabs(ch->position[k].v.z))));
                }
            CHECK(big_v <= FLT_MAX, "extreme tcb: a key of %g does not fit a float", big_v);
            ra_document_free(doc);
        }
    }
    /* a step 0.15 ms after a window's start: the start keeps the value at 0 */
    {
        hw_mad o;
        memset(&o, 0, sizeof o);
        o.version = HW_MAD_VERSION, o.fps = 30, o.object_count = 1, o.animation_count = 1;
        o.animations = ra_arena_array(ar, 1, sizeof *o.animations);
        o.objects = ra_arena_array(ar, 1, sizeof *o.objects);
        o.animations[0] = (hw_animation){.name = "Go", .start = 0, .end = 1};
        o.objects[0].name = "Part";
        o.objects[0].animation_bits = 1;
        const float t[4] = {0, 0.00015f, 0.00015f, 1}, x0[4] = {0, 0, 10, 10}, zero[4] = {0};
        const hw_tcb tcb[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
        const float *vals[HW_CHANNELS] = {x0, zero, zero, zero, zero, zero};
        CHECK(hw_object_set_keys(&o.objects[0], ar, 4, t, tcb, vals, hw_mad_phantom_end(&o)), "keys");
        hw_mad_set_strings(&o, ar);
        size_t n2;
        uint8_t *d2 = write_mad(&o, &n2);
        ra_document *doc = NULL;
        ra_error e;
        CHECK(load(d2, n2, "early step", NULL, &doc, &e) == RA_OK, "early step: %s", e.msg);
        if (doc) {
            const ra_channel *ch = &doc->scene.animations[0].channels[0];
            CHECK(ch->position[0].t == 0 && ch->position[0].v.z == 0 && ch->position[1].v.z == -10,
                  "early step: keys (%g, %g), (%g, %g)", ch->position[0].t, ch->position[0].v.z, ch->position[1].t,
                  ch->position[1].v.z);
            ra_document_free(doc);
        }
        free(d2);
    }
    /* counts and offsets at their extremes */
    static const struct {
        uint32_t off, value;
        ra_status code;
        const char *field;
    } words[] = {
        {12, 0x80000000u, RA_ERR_BAD_VALUE, "stringBlockLength"},
        {12, 0x7FFFFFF0u, RA_ERR_TRUNCATED, "stringBlockLength"},
        {28, 0x7FFFFFFFu, RA_ERR_TRUNCATED, "objPath"},
        {32, 0xFFFFFFF0u, RA_ERR_TRUNCATED, "objPath"},
        {36, 0xFFFFFFFFu, RA_ERR_BAD_VALUE, "nAnimations"},
        {36, 0x7FFFFFFFu, RA_ERR_BAD_VALUE, "nAnimations"},
        {40 + 32 + 12, 0x7FFFFFFFu, RA_ERR_TRUNCATED, "object.times"},
        {40 + 32 + 16, 0xFFFFFFFCu, RA_ERR_TRUNCATED, "object.times"},
        {40 + 32 + 20, 0xFFFFFFFCu, RA_ERR_TRUNCATED, "object.parameters"},
        {40 + 32 + 44, 0xFFFFFFFCu, RA_ERR_TRUNCATED, "object.path"},
        {40, 0xFFFFFFFFu, RA_ERR_BAD_VALUE, "animation.name"},
        {40 + 4, 0x7FC00000u, RA_ERR_BAD_VALUE, "animation.startTime"},
        {40 + 8, 0xFF800000u, RA_ERR_BAD_VALUE, "animation.endTime"},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        memcpy(h, d, size);
        put32(h + words[i].off, words[i].value);
        char what[64];
        snprintf(what, sizeof what, "word %u = 0x%08x", words[i].off, words[i].value);
        expect_refused(h, size, NULL, what, words[i].code, words[i].field);
    }
    /* stringBlock outside the file: the 32-bit game reads the file's last stringBlockLength bytes
     * whatever the field says, and so does the reader then (the names as before, a warning) */
    memcpy(h, d, size);
    put32(h + 16, 0xFFFFFFFFu);
    ra_document *ref = NULL, *far = NULL;
    ra_error e;
    CHECK(load(d, size, "names.mad", NULL, &ref, &e) == RA_OK, "names.mad: %s", e.msg);
    CHECK(load(h, size, "far.mad", NULL, &far, &e) == RA_OK, "stringBlock 0xFFFFFFFF: %s", e.msg);
    if (ref && far) {
        bool same =
            ref->scene.node_count == far->scene.node_count && ref->scene.animation_count == far->scene.animation_count;
        for (size_t i = 0; same && i < ref->scene.node_count; i++)
            same = !strcmp(ref->scene.nodes[i].name, far->scene.nodes[i].name);
        for (size_t i = 0; same && i < ref->scene.animation_count; i++)
            same = !strcmp(ref->scene.animations[i].name, far->scene.animations[i].name);
        CHECK(same, "stringBlock 0xFFFFFFFF: the same node and animation names");
        CHECK(has_warning(&far->scene, "lies outside the file"), "stringBlock 0xFFFFFFFF: the warning");
    }
    if (ref) ra_document_free(ref);
    if (far) ra_document_free(far);
    free(h);
    free(d);
    ra_arena_destroy(ar);
}

/* ---- the ship's geometry given with --option geo= ------------------------------------------------------- */
static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* Loads DIR/mad with --option geo=VALUE (value NULL: no option). */
static ra_status load_with_geo(const char *mad, const char *value, ra_document **doc, ra_error *e)
{
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", g_dir, mad);
    uint8_t *d = NULL;
    size_t n = 0;
    ra_error_clear(e);
    ra_status st = ra_read_file(path, &d, &n, e);
    if (st != RA_OK) return st;
    ra_options o;
    ra_options_init(&o);
    if (value) ra_options_add(&o, "geo", value);
    st = load(d, n, path, &o, doc, e);
    free(d);
    return st;
}

/* Flat shading: geo_ship.geo's Hull has one triangle of material 0 (flags
 * MDF_2Sided, no MDF_Smoothing), its face normal (0,0,1) and every corner's
 * vertex normal (0,0,2).  With the vertex normal made (1,0,0), the corners
 * take the face normal (the game draws the material flat); with
 * MDF_Smoothing added to the material, the vertex normal. */
static void geo_flat_shading(void)
{
    size_t n = 0;
    uint8_t *geo = fx_slurp(g_dir, "geo_ship.geo", &n);
    /* material 0's flags (68 + 112 * 4 objects, +24) and Hull's vertex normal
     * (its lists from 580: one 40-byte triangle, three 16-byte vertices, the face normal) */
    const size_t flags_at = 68 + 112 * 4 + 24, vnormal_at = 580 + 40 + 3 * 16 + 16;
    float v[3] = {0, 0, 0};
    if (geo && n > vnormal_at + 12) memcpy(v, geo + vnormal_at, sizeof v); /* little-endian host (the CI's) */
    CHECK(geo && n > vnormal_at + 12 && geo[flags_at] == 8 && v[0] == 0 && v[1] == 0 && v[2] == 2,
          "geo_ship.geo: material 0's flags 8 and Hull's vertex normal (0,0,2) where expected");
    if (!geo || n <= vnormal_at + 12) {
        free(geo);
        return;
    }
    const float x[3] = {1, 0, 0};
    memcpy(geo + vnormal_at, x, sizeof x);
    char dir[] = "/tmp/ra_hw_flat_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/flat.geo", dir);
    for (int smooth = 0; smooth < 2; smooth++) {
        geo[flags_at] = (uint8_t)(smooth ? 8 | 2 : 8);
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(geo, 1, n, f) == n && fclose(f) == 0, "%s written", path);
        ra_document *doc = NULL;
        ra_error e;
        CHECK(load_with_geo("geo_ship.mad", path, &doc, &e) == RA_OK, "flat.geo (smoothing %d): %s", smooth, e.msg);
        const ra_mesh *me = NULL;
        for (size_t i = 0; doc && i < doc->scene.mesh_count; i++)
            if (!strcmp(doc->scene.meshes[i].name, "Hull.material0")) me = &doc->scene.meshes[i];
        CHECK(me && me->vertex_count == 3, "flat.geo (smoothing %d): Hull's mesh", smooth);
        const float want[3] = {smooth ? 1.0f : 0.0f, 0, smooth ? 0.0f : 1.0f};
        for (uint32_t c = 0; me && c < me->vertex_count; c++)
            CHECK(me->normals[3 * c] == want[0] && me->normals[3 * c + 1] == want[1] &&
                      me->normals[3 * c + 2] == want[2],
                  "flat.geo (smoothing %d): corner %u normal (%g, %g, %g), expected (%g, %g, %g)", smooth, c,
                  me->normals[3 * c], me->normals[3 * c + 1], me->normals[3 * c + 2], want[0], want[1], want[2]);
        ra_document_free(doc);
    }
    remove(path);
    remove(dir);
    free(geo);
}

/* A broken .geo (no .mad of its stem): geo_ship.mad with --option geo=<it>
 * is refused at its expect-error-offset, naming homeworld_geo. */
static bool is_geo_alone(const char *n)
{
    size_t l = strlen(n);
    if (l < 5 || strcmp(n + l - 4, ".geo")) return false;
    char mad[2400];
    snprintf(mad, sizeof mad, "%s/%.*s.mad", g_dir, (int)(l - 4), n);
    return !file_exists(mad);
}

static void run_geo_fixture(const char *name)
{
    fx_file fx;
    if (!fx_open(g_dir, name, &fx)) return;
    CHECK(fx.err_off >= 0, "%s: a .geo without a .mad is a broken one (expect-error-offset)", name);
    ra_document *doc = NULL;
    ra_error e;
    ra_status st = load_with_geo("geo_ship.mad", fx.path, &doc, &e);
    fx_check_refused(&fx, st, &e, name, "homeworld_geo");
    g_checks++;
    if (doc) ra_document_free(doc);
    fx_close(&fx);
}

/* geo=PATH: a .geo under another stem gives the hierarchy (geo_sibling.mad,
 * whose own sibling is broken, with geo_ship.geo poses as geo_ship.mad);
 * geo=none: the flat load, as with the broken sibling but without its warning. */
static void geo_options(void)
{
    char ship_geo[2400];
    snprintf(ship_geo, sizeof ship_geo, "%s/geo_ship.geo", g_dir);
    ra_document *ref = NULL, *other = NULL, *none = NULL, *sib = NULL;
    ra_error e;
    CHECK(load_with_geo("geo_ship.mad", NULL, &ref, &e) == RA_OK, "geo_ship.mad: %s", e.msg);
    CHECK(load_with_geo("geo_sibling.mad", ship_geo, &other, &e) == RA_OK, "geo=%s: %s", ship_geo, e.msg);
    CHECK(load_with_geo("geo_ship.mad", "none", &none, &e) == RA_OK, "geo=none: %s", e.msg);
    CHECK(load_with_geo("geo_sibling.mad", NULL, &sib, &e) == RA_OK, "geo_sibling.mad: %s", e.msg);
    if (ref && other && none && sib) {
        const ra_scene *a = &ref->scene, *b = &other->scene, *c = &none->scene, *d = &sib->scene;
        CHECK(b->node_count == a->node_count && b->mesh_count == a->mesh_count && a->mesh_count == 2,
              "geo=PATH: %zu nodes, %zu meshes (expected %zu, %zu)", b->node_count, b->mesh_count, a->node_count,
              a->mesh_count);
        CHECK(!has_warning(b, "could not be read"), "geo=PATH: the broken sibling was not read");
        CHECK(c->node_count == d->node_count && c->node_count == 4 && c->mesh_count == 0,
              "geo=none: flat, %zu nodes, %zu meshes", c->node_count, c->mesh_count);
        CHECK(!has_warning(c, "could not be read") && has_warning(d, "could not be read"),
              "geo=none reads no geometry; the broken sibling warns");
        double worst_ab = 0, worst_cd = 0;
        for (double t = 0; t <= 1.0; t += 1.0 / 16) {
            ra_mat4 wa[16], wb[16], wc[16], wd[16];
            if (a->node_count > 16 || c->node_count > 16) break;
            ra_document_pose(ref, 0, t, wa, &e), ra_document_pose(other, 0, t, wb, &e);
            ra_document_pose(none, 0, t, wc, &e), ra_document_pose(sib, 0, t, wd, &e);
            for (size_t n = 0; n < a->node_count && n < b->node_count; n++)
                worst_ab = fmax(worst_ab, ra_m4_max_abs_diff(&wa[n], &wb[n]));
            for (size_t n = 0; n < c->node_count && n < d->node_count; n++)
                worst_cd = fmax(worst_cd, ra_m4_max_abs_diff(&wc[n], &wd[n]));
        }
        CHECK(worst_ab == 0 && worst_cd == 0, "geo=PATH poses as the sibling (off by %g); geo=none as flat (off by %g)",
              worst_ab, worst_cd);
        g_checks += 7;
    }
    if (ref) ra_document_free(ref);
    if (other) ra_document_free(other);
    if (none) ra_document_free(none);
    if (sib) ra_document_free(sib);
}

static bool is_fixture(const char *n)
{
    size_t l = strlen(n);
    return l > 4 && !strcmp(n + l - 4, ".mad");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_homeworld FIXTURE_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    int fixtures = fx_for_each_file(g_dir, is_fixture, run_fixture);
    CHECK(fixtures >= 15, "only %d fixtures", fixtures);
    int geos = fx_for_each_file(g_dir, is_geo_alone, run_geo_fixture);
    CHECK(geos >= 5, "only %d broken .geo fixtures", geos);
    geo_options();
    geo_flat_shading();
    printf("broken .geo fixtures: %d\n", geos);
    printf("fixtures: %d, expectations: %ld, pose/playback instants: %ld (worst %.3g, worst share of the allowed "
           "sampling error %.3g)\n",
           fixtures, g_checks, g_stats.instants, g_stats.worst, g_stats.worst_ratio);
    fx_rng = 9090;
    clock_t c0 = clock();
    random_files(60);
    spaces();
    clock_t c1 = clock();
    big_file();
    tcb_budget();
    parallel_read();
    clock_t c2 = clock();
    hostile();
    printf("cpu s: random %.2f, big %.2f, hostile %.2f\n", (double)(c1 - c0) / CLOCKS_PER_SEC,
           (double)(c2 - c1) / CLOCKS_PER_SEC, (double)(clock() - c2) / CLOCKS_PER_SEC);
    printf("pose/playback instants with random and big files: %ld (worst %.3g, worst share of the allowed "
           "sampling error %.3g)\n",
           g_stats.instants, g_stats.worst, g_stats.worst_ratio);
    printf("samples against the pose at their own instants: %ld keys, worst %.3g\n", g_sample_keys, g_sample_worst);
    return ra_test_finish("test_homeworld");
}
