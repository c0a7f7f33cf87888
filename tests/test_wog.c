/* World of Goo anim/movie: the fixtures of test_models/world_of_goo (made by
 * make_fixtures.py from the spec, independently of this project), then
 * random files from our writer in all four layouts.
 *
 * Per fixture: every expect-* line of its description (hand-computed poses
 * within 1e-4, alpha/colour/sound keys and actor fields exactly, error
 * offsets), pose against consumer playback of the baked keys every 1/120 s
 * (also with flip_y, transform_order=reverse and coords=native), a
 * byte-identical write(read(file)), and the same model written in the other
 * three layouts reading back to the same poses. */
#include <string.h>

#include "ra_fixture.h"
#include "retroanim/wog.h"

#define TOL 1e-4
static const char *g_dir;

static ra_status load_opts(const uint8_t *d, size_t n, const char *name, const ra_options *o, ra_document **doc,
                           ra_error *e)
{
    ra_error_clear(e);
    return ra_document_load(d, n, name, o, doc, e);
}

/* ---- node metadata: "[[t, v, "x"], ...]" rows --------------------------------------------------------- */
typedef struct row {
    char tok[3][128];
    int n;
} row;

/* Parses a JSON array of flat arrays of numbers and strings (no escapes in
 * the strings these tests use).  Returns the row count or -1. */
static int parse_rows(const char *s, row *rows, int max)
{
    int nr = 0;
    while (*s == ' ') s++;
    if (*s++ != '[') return -1;
    for (;;) {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ']') return nr;
        if (*s++ != '[' || nr >= max) return -1;
        row *r = &rows[nr++];
        r->n = 0;
        for (;;) {
            while (*s == ' ' || *s == ',') s++;
            if (*s == ']') {
                s++;
                break;
            }
            if (r->n >= 3) return -1;
            char *o = r->tok[r->n++];
            size_t k = 0;
            if (*s == '"') {
                s++;
                while (*s && *s != '"' && k < 127) o[k++] = *s++;
                if (*s++ != '"') return -1;
            } else {
                while (*s && *s != ',' && *s != ']' && k < 127) o[k++] = *s++;
            }
            o[k] = 0;
        }
    }
}

static const char *node_meta_string(const ra_scene *s, const char *node, const char *key)
{
    int32_t i = ra_scene_find_node(s, node);
    if (i < 0) return NULL;
    const ra_meta *m = ra_meta_get(&s->nodes[i].meta, key);
    return m && m->type == RA_META_STRING ? m->u.s : NULL;
}

static double node_meta_double(const ra_scene *s, const char *node, const char *key)
{
    int32_t i = ra_scene_find_node(s, node);
    const ra_meta *m = i >= 0 ? ra_meta_get(&s->nodes[i].meta, key) : NULL;
    return m && m->type == RA_META_DOUBLE ? m->u.d : NAN;
}

/* expect-alpha / expect-color / expect-sound: the k-th line of a node and
 * kind matches the k-th row of its metadata list. */
typedef struct key_cursor {
    char node[128];
    char kind[16];
    int next;
} key_cursor;

static void check_key_line(const ra_scene *s, const char *line, const char *what, key_cursor *cur, int ncur)
{
    char kind[16] = "", node[128], t[64], v[128] = "", interp[16] = "";
    sscanf(line, "expect-%15s", kind);
    if (!fx_field(line, "node", node, sizeof node) || !fx_field(line, "t", t, sizeof t)) {
        CHECK(0, "%s: malformed %s", what, line);
        return;
    }
    bool sound = !strcmp(kind, "sound");
    fx_field(line, sound ? "id" : "value", v, sizeof v);
    fx_field(line, "interp", interp, sizeof interp);
    int k = 0;
    for (int i = 0; i < ncur; i++)
        if (!strcmp(cur[i].node, node) && !strcmp(cur[i].kind, kind)) k = cur[i].next++;
    char key[32];
    snprintf(key, sizeof key, "wog.%s", kind);
    const char *json = node_meta_string(s, node, key);
    CHECK(json != NULL, "%s: node %s has no %s", what, node, key);
    if (!json) return;
    row rows[64];
    int n = parse_rows(json, rows, 64);
    CHECK(n > k, "%s: %s of %s has %d rows, want row %d: %s", what, key, node, n, k, json);
    if (n <= k) return;
    const row *r = &rows[k];
    CHECK_NEAR(strtod(r->tok[0], NULL), (double)(float)strtod(t, NULL), 1e-7, what);
    CHECK(!strcmp(r->tok[1], v), "%s: %s row %d of %s is %s, expected %s", what, key, k, node, r->tok[1], v);
    if (!sound)
        CHECK(!strcmp(r->tok[2], interp), "%s: %s row %d interpolation %s, expected %s", what, key, k, r->tok[2],
              interp);
}

static void check_actor_line(const ra_scene *s, const char *line, const char *what)
{
    char node[128], v[128];
    if (!fx_field(line, "node", node, sizeof node)) {
        CHECK(0, "%s: malformed %s", what, line);
        return;
    }
    static const char *const strs[][2] = {{"type", "wog.actorType"},
                                          {"image", "wog.image"},
                                          {"label", "wog.label"},
                                          {"font", "wog.font"},
                                          {"justification", "wog.justification"}};
    for (int i = 0; i < 5; i++) {
        if (!fx_field(line, strs[i][0], v, sizeof v)) continue;
        const char *got = node_meta_string(s, node, strs[i][1]);
        CHECK(got && !strcmp(got, v), "%s: %s %s is '%s', expected '%s'", what, node, strs[i][1], got ? got : "(none)",
              v);
    }
    static const char *const nums[][2] = {
        {"depth", "wog.depth"}, {"maxWidth", "wog.maxWidth"}, {"wrapWidth", "wog.wrapWidth"}};
    for (int i = 0; i < 3; i++)
        if (fx_field(line, nums[i][0], v, sizeof v))
            CHECK_NEAR(node_meta_double(s, node, nums[i][1]), strtod(v, NULL), 1e-6, what);
}

static double duration_of(const ra_document *doc)
{
    return doc->scene.animation_count ? doc->scene.animations[0].duration : 0;
}

/* An expect-pose line.  Past the end of a looping animation the baked keys
 * hold their last value (a player that loops the clip starts over), so
 * there the pose is checked at t and both pose and playback at t modulo the
 * duration. */
static void check_pose(const ra_document *doc, const char *line, const char *what)
{
    const char *pt = strstr(line, "t=");
    double t = pt ? atof(pt + 2) : 0, dur = duration_of(doc);
    if (!(dur > 0 && t > dur)) {
        fx_check_pose_line(doc, line, what, TOL);
        return;
    }
    char buf[2048];
    snprintf(buf, sizeof buf, "expect-pose t=%.17g %s", fmod(t, dur), strstr(line, "node="));
    fx_check_pose_line(doc, buf, what, TOL);
    const ra_scene *s = &doc->scene;
    ra_mat4 *a = malloc(s->node_count * sizeof *a), *b = malloc(s->node_count * sizeof *b);
    ra_error e;
    ra_document_pose(doc, 0, t, a, &e);
    ra_document_pose(doc, 0, fmod(t, dur), b, &e);
    double worst = 0;
    for (size_t i = 0; i < s->node_count; i++) worst = fmax(worst, ra_m4_max_abs_diff(&a[i], &b[i]));
    CHECK(worst <= 1e-9, "%s: the pose at %g s is not the pose at %g s (%g)", what, t, fmod(t, dur), worst);
    free(a);
    free(b);
}

/* "expect-pose-with KEY=VALUE t=..." under that option */
static void check_pose_with(const uint8_t *d, size_t n, const char *path, const char *line, const char *what)
{
    char opt[128];
    if (sscanf(line, "expect-pose-with %127s", opt) != 1 || !strchr(opt, '=')) {
        CHECK(0, "%s: malformed %s", what, line);
        return;
    }
    char *eq = strchr(opt, '=');
    *eq = 0;
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, opt, eq + 1);
    ra_document *doc;
    ra_error e;
    if (load_opts(d, n, path, &o, &doc, &e) != RA_OK) {
        CHECK(0, "%s: load with %s=%s failed: %s", what, opt, eq + 1, e.msg);
        return;
    }
    char buf[2048];
    snprintf(buf, sizeof buf, "expect-pose %s", strstr(line, "t="));
    check_pose(doc, buf, what);
    ra_document_free(doc);
}

/* The model written in every layout reads back to the same poses, and the
 * writer's output is stable (write(read(write(m))) == write(m)). */
static void check_layouts(const ra_document *doc, const char *what)
{
    const wog_file *f = wog_document_file(doc);
    double dur = duration_of(doc);
    ra_mat4 *w0 = malloc(doc->scene.node_count * sizeof *w0), *w1 = malloc(doc->scene.node_count * sizeof *w1);
    for (int l = 0; l < WOG_LAYOUT_COUNT; l++) {
        ra_writer w;
        ra_writer_init(&w);
        ra_error e;
        ra_error_clear(&e);
        ra_status st = f->is_movie ? wog_movie_write(&f->movie, (wog_layout)l, &w, &e)
                                   : wog_anim_write(&f->anim, (wog_layout)l, &w, &e);
        CHECK(st == RA_OK, "%s: write as %s", what, wog_layout_name((wog_layout)l));
        ra_document *d2;
        char name[256];
        snprintf(name, sizeof name, "%s", doc->filename);
        if (load_opts(w.data, w.size, name, NULL, &d2, &e) != RA_OK) {
            CHECK(0, "%s: the %s copy does not load: %s", what, wog_layout_name((wog_layout)l), e.msg);
            ra_writer_free(&w);
            continue;
        }
        const ra_meta *lm = ra_meta_get(&d2->scene.meta, "wog.layout");
        CHECK(lm && !strcmp(lm->u.s, wog_layout_name((wog_layout)l)), "%s: the %s copy is detected as %s", what,
              wog_layout_name((wog_layout)l), lm ? lm->u.s : "?");
        CHECK(d2->scene.node_count == doc->scene.node_count, "%s: node count of the %s copy", what,
              wog_layout_name((wog_layout)l));
        double worst = 0;
        for (int k = 0; k <= 40 && d2->scene.node_count == doc->scene.node_count; k++) {
            double t = dur * k / 40.0;
            ra_document_pose(doc, 0, t, w0, &e);
            ra_document_pose(d2, 0, t, w1, &e);
            for (size_t i = 0; i < doc->scene.node_count; i++) worst = fmax(worst, ra_m4_max_abs_diff(&w0[i], &w1[i]));
        }
        CHECK(worst == 0, "%s: the %s copy poses differently (%g)", what, wog_layout_name((wog_layout)l), worst);
        ra_writer w2;
        ra_writer_init(&w2);
        d2->format->write(d2, &w2, &e);
        CHECK(w2.size == w.size && !memcmp(w.data, w2.data, w.size), "%s: the %s copy does not round-trip", what,
              wog_layout_name((wog_layout)l));
        ra_writer_free(&w2);
        ra_document_free(d2);
        ra_writer_free(&w);
    }
    free(w0);
    free(w1);
}

static long g_checks;
static fx_stats g_stats;

static void run_fixture(const char *name)
{
    fx_file fx;
    if (!fx_open(g_dir, name, &fx)) return;
    const char *fmt = strstr(name, ".movie.") ? "wog_movie" : "wog_anim";
    char line[4096];
    ra_error e;
    ra_document *doc = NULL;
    if (fx.not_detected) {
        const ra_format *f = ra_format_detect(fx.data, fx.size, name);
        CHECK(f == NULL, "%s: claimed by %s", name, f ? f->id : "");
        CHECK(ra_format_by_extension(name) == NULL, "%s: its extension is claimed", name);
        CHECK(load_opts(fx.data, fx.size, fx.path, NULL, &doc, &e) != RA_OK && !strcmp(e.format, "retroanim"),
              "%s: must be refused as no supported format", name);
        g_checks++;
        fx_close(&fx);
        return;
    }
    /* detection by content alone, without the name */
    const ra_format *det = ra_format_detect(fx.data, fx.size, NULL);
    if (fx.err_off < 0 || fx.size >= 64)
        CHECK(det && !strcmp(det->id, fmt), "%s: detected as %s", name, det ? det->id : "nothing");
    doc = fx_load_or_refuse(&fx, name, fmt, &g_checks);
    if (!doc) {
        fx_close(&fx);
        return;
    }
    const ra_scene *s = &doc->scene;
    key_cursor cur[32];
    int ncur = 0;
    int expects = fx.expects;
    while (fgets(line, sizeof line, fx.txt)) {
        line[strcspn(line, "\r\n")] = 0;
        char word[64];
        if (fx_check_common_line(doc, line, name)) {
        } else if (sscanf(line, "expect-layout %63s", word) == 1) {
            const ra_meta *m = ra_meta_get(&s->meta, "wog.layout");
            CHECK(m && !strcmp(m->u.s, word), "%s: layout %s, expected %s", name, m ? m->u.s : "?", word);
        } else if (!strncmp(line, "expect-pose ", 12)) {
            check_pose(doc, line, name);
        } else if (!strncmp(line, "expect-pose-with ", 17)) {
            check_pose_with(fx.data, fx.size, fx.path, line, name);
        } else if (!strncmp(line, "expect-alpha ", 13) || !strncmp(line, "expect-color ", 13) ||
                   !strncmp(line, "expect-sound ", 13)) {
            char node[128], kind[16] = "";
            sscanf(line, "expect-%15s", kind);
            if (fx_field(line, "node", node, sizeof node)) {
                int i = 0;
                while (i < ncur && (strcmp(cur[i].node, node) || strcmp(cur[i].kind, kind))) i++;
                if (i == ncur && ncur < 32) {
                    snprintf(cur[i].node, sizeof cur[i].node, "%s", node);
                    snprintf(cur[i].kind, sizeof cur[i].kind, "%s", kind);
                    cur[i].next = 0;
                    ncur++;
                }
            }
            check_key_line(s, line, name, cur, ncur);
        } else if (!strncmp(line, "expect-actor ", 13)) {
            check_actor_line(s, line, name);
        } else {
            continue;
        }
        expects++;
    }
    /* every keyed alpha/colour/sound row was expected */
    for (int i = 0; i < ncur; i++) {
        char key[32];
        snprintf(key, sizeof key, "wog.%s", cur[i].kind);
        row rows[64];
        const char *json = node_meta_string(s, cur[i].node, key);
        CHECK(json && parse_rows(json, rows, 64) == cur[i].next, "%s: %s of %s has rows nobody expected", name, key,
              cur[i].node);
    }
    CHECK(expects >= 5, "%s: its description has only %d expectations", name, expects);
    g_checks += expects;
    fx_check_semantics(doc, name, 1.0 / 120, duration_of(doc) + 1.0 / 240, TOL, &g_stats);
    check_layouts(doc, name);
    ra_document_free(doc);
    static const char *const variants[][2] = {{"flip_y", "true"}, {"transform_order", "reverse"}, {"coords", "native"}};
    for (int v = 0; v < 3; v++) {
        ra_options o;
        ra_options_init(&o);
        ra_options_add(&o, variants[v][0], variants[v][1]);
        if (load_opts(fx.data, fx.size, fx.path, &o, &doc, &e) != RA_OK) {
            CHECK(0, "%s: %s=%s: %s", name, variants[v][0], variants[v][1], e.msg);
            continue;
        }
        fx_check_semantics(doc, name, 1.0 / 120, duration_of(doc), TOL, &g_stats);
        ra_document_free(doc);
    }
    fx_check_roundtrip(fx.data, fx.size, NULL, name);
    fx_close(&fx);
}

/* ---- random files from our writer ---------------------------------------------------------------------- */

/* Fills the channel's slots: keyed with probability 1/2 (at least one key),
 * chained, each key owning only its channel's fields. */
static void random_frames(ra_arena *ar, wog_anim *a, wog_frames *f, int kind, uint32_t *kcap)
{
    f->present = true;
    f->slot = ra_arena_array(ar, a->num_frames, sizeof *f->slot);
    int32_t last = -1;
    for (uint32_t j = 0; j < a->num_frames; j++) {
        f->slot[j] = -1;
        if (fx_rnd() % 2 && !(j + 1 == a->num_frames && last < 0)) continue;
        if (a->key_count == *kcap) {
            a->keys = ra_arena_grow(ar, a->keys, a->key_count, *kcap * 2, sizeof *a->keys);
            *kcap *= 2;
        }
        wog_keyframe *k = &a->keys[a->key_count];
        *k = (wog_keyframe){-1, -1, -1, -1, -1, -1, 0, fx_rnd() % 4 ? WOG_INTERP_LINEAR : WOG_INTERP_NONE};
        if (kind == WOG_XFORM_SCALE) k->x = (float)fx_frand(-2, 3), k->y = (float)fx_frand(-2, 3);
        if (kind == WOG_XFORM_TRANSLATE) k->x = (float)fx_frand(-500, 500), k->y = (float)fx_frand(-500, 500);
        if (kind == WOG_XFORM_ROTATE)
            k->angle = (float)(fx_rnd() % 5 == 0 ? fx_frand(-2000, 2000) : fx_frand(-200, 200));
        if (kind == 3) k->alpha = (int32_t)(fx_rnd() % 256);
        if (kind == 4) k->color = (int32_t)fx_rnd();
        if (kind == 5) k->sound_str_idx = fx_rnd() % 2 ? 1 : 7;
        if (last >= 0) a->keys[f->slot[last]].next_frame_index = (int32_t)j;
        f->slot[j] = (int32_t)a->key_count++;
        last = (int32_t)j;
    }
}

static void random_anim(ra_arena *ar, wog_anim *a, bool canonical)
{
    memset(a, 0, sizeof *a);
    a->num_frames = 1 + fx_rnd() % 12;
    a->frame_times = ra_arena_array(ar, a->num_frames, sizeof *a->frame_times);
    /* Times on a 1/64 s grid: a step is baked as a 0.1 ms ramp before it,
     * and the 1/120 s samples of the semantics check then never fall inside
     * one (they meet a step either exactly or at least 1 ms away). */
    float t = fx_rnd() % 3 ? 0 : (float)(fx_rnd() % 32) / 64;
    for (uint32_t j = 0; j < a->num_frames; j++) {
        a->frame_times[j] = t;
        t += fx_rnd() % 6 ? (float)(1 + fx_rnd() % 64) / 64 : 0; /* the odd duplicate time */
    }
    a->has_transform = fx_rnd() % 8 != 0;
    a->num_transforms = canonical ? 3 : fx_rnd() % 5;
    a->transform_types = ra_arena_array(ar, a->num_transforms, sizeof *a->transform_types);
    for (uint32_t i = 0; i < a->num_transforms; i++)
        a->transform_types[i] = canonical ? (int32_t)i : (int32_t)(fx_rnd() % 3);
    uint32_t kcap = 16;
    a->keys = ra_arena_array(ar, kcap, sizeof *a->keys);
    a->xform = ra_arena_array(ar, a->num_transforms, sizeof *a->xform);
    for (uint32_t i = 0; a->has_transform && i < a->num_transforms; i++)
        random_frames(ar, a, &a->xform[i], a->transform_types[i], &kcap);
    if (!a->has_transform) a->xform = NULL;
    a->has_alpha = fx_rnd() % 2, a->has_color = fx_rnd() % 2, a->has_sound = fx_rnd() % 3 == 0;
    a->alpha.present = a->color.present = a->sound.present = true;
    if (a->has_alpha) random_frames(ar, a, &a->alpha, 3, &kcap);
    if (a->has_color) random_frames(ar, a, &a->color, 4, &kcap);
    if (a->has_sound) random_frames(ar, a, &a->sound, 5, &kcap);
    static const char table[16] = "\0SND_A\0SND_BB\0\0";
    a->strings_size = 16;
    a->strings = ra_arena_alloc(ar, 16);
    memcpy(a->strings, table, 16);
}

/* The key lists' metadata budget (16 MiB plus 8 bytes per byte of the file)
 * is for the whole text: an animation whose every slot names one key with a
 * long sound id (aliasing slots, the reason for the budget) loads with k - 1
 * slots and is refused with k, the first count whose list passes the budget
 * (its last entry crossing it: a check before each entry alone let it
 * through, and the budget then wrapped). */
typedef struct sound_list {
    ra_writer w; /* the file */
    size_t text; /* its sound list's bytes: [[0,"S..."],[1,"S..."],...] */
} sound_list;

/* the bytes of entry j of the list, [j,"S..."] */
static size_t sound_entry(uint32_t j, size_t id_len) { return (size_t)snprintf(NULL, 0, "%u", j) + id_len + 5; }

/* an animation of `slots` slots, each naming one key with a sound id of id_len bytes */
static void sound_anim(ra_arena *ar, wog_anim *ap, uint32_t slots, size_t id_len)
{
    wog_anim a;
    memset(&a, 0, sizeof a);
    a.num_frames = slots;
    a.frame_times = ra_arena_array(ar, slots, sizeof *a.frame_times);
    for (uint32_t j = 0; j < slots; j++) a.frame_times[j] = (float)j;
    a.transform_types = ra_arena_array(ar, 0, sizeof *a.transform_types);
    a.has_sound = 1;
    a.alpha.present = a.color.present = a.sound.present = true;
    a.sound.slot = ra_arena_array(ar, slots, sizeof *a.sound.slot); /* every slot: key 0 */
    a.keys = ra_arena_array(ar, 1, sizeof *a.keys);
    a.keys[0] = (wog_keyframe){-1, -1, -1, -1, -1, -1, 1, WOG_INTERP_NONE};
    a.key_count = 1;
    a.strings_size = (uint32_t)id_len + 2;
    a.strings = ra_arena_alloc(ar, a.strings_size);
    memset(a.strings + 1, 'S', id_len);
    *ap = a;
}

/* the anim file (actors 0) or a movie of that many actors, each playing an
 * animation of its own (written apart, so not shared) */
static void sound_list_make_n(sound_list *sl, uint32_t actors, uint32_t slots, size_t id_len)
{
    ra_arena *ar = ra_arena_create(0);
    wog_anim a;
    sound_anim(ar, &a, slots, id_len);
    ra_writer_init(&sl->w);
    ra_error e;
    if (!actors) {
        CHECK(wog_anim_write(&a, WOG_LAYOUT_BINLTL, &sl->w, &e) == RA_OK, "sound list: write: %s", e.msg);
    } else {
        wog_movie m;
        memset(&m, 0, sizeof m);
        m.length = (float)slots;
        m.num_actors = actors;
        m.actors = ra_arena_array(ar, actors, sizeof *m.actors);
        m.anims = ra_arena_array(ar, actors, sizeof *m.anims);
        for (uint32_t i = 0; i < actors; i++) m.anims[i] = a, m.actors[i].depth = (float)i;
        CHECK(wog_movie_write(&m, WOG_LAYOUT_BINLTL, &sl->w, &e) == RA_OK, "sound movie: write: %s", e.msg);
    }
    sl->text = 2 + (size_t)(slots - 1); /* the brackets and commas */
    for (uint32_t j = 0; j < slots; j++) sl->text += sound_entry(j, id_len);
    ra_arena_destroy(ar);
}
static void sound_list_make(sound_list *sl, uint32_t slots, size_t id_len) { sound_list_make_n(sl, 0, slots, id_len); }

static void meta_budget_edge(void)
{
    const size_t id_len = 1000, budget0 = (size_t)16 << 20; /* a sound id has at most 1024 bytes */
    /* the file grows by the same bytes per slot: the first count whose list passes the budget, worked out */
    sound_list a, b;
    sound_list_make(&a, 1000, id_len);
    sound_list_make(&b, 1001, id_len);
    size_t per = b.w.size - a.w.size, file0 = a.w.size - 1000 * per;
    ra_writer_free(&a.w);
    ra_writer_free(&b.w);
    uint32_t k = 0;
    size_t text = 1; /* k entries: 2 brackets, k - 1 commas (1 + k) and the entries */
    while (k < 100000) {
        text += sound_entry(k, id_len) + 1;
        k++;
        if (text > budget0 + 8 * (file0 + per * k)) break;
    }
    for (uint32_t n = k - 1; n <= k; n++) {
        sound_list sl;
        sound_list_make(&sl, n, id_len);
        size_t budget = budget0 + 8 * sl.w.size;
        CHECK((sl.text > budget) == (n == k), "%u slots: %zu bytes of list, budget %zu", n, sl.text, budget);
        ra_document *doc = NULL;
        ra_error e;
        ra_status st = load_opts(sl.w.data, sl.w.size, "s.anim.binltl", NULL, &doc, &e);
        if (n < k) {
            CHECK(st == RA_OK, "%u slots (%zu bytes of list, budget %zu): %s", n, sl.text, budget, e.msg);
            int32_t node = doc ? ra_scene_find_node(&doc->scene, "s") : -1;
            const ra_meta *m = node >= 0 ? ra_meta_get(&doc->scene.nodes[node].meta, "wog.sound") : NULL;
            CHECK(m && m->type == RA_META_STRING && strlen(m->u.s) == sl.text,
                  "%u slots: the list has %zu bytes, not %zu", n, m && m->type == RA_META_STRING ? strlen(m->u.s) : 0,
                  sl.text);
        } else {
            CHECK(st == RA_ERR_LIMIT && !strcmp(e.field, "wog.sound"),
                  "%u slots (%zu bytes of list, budget %zu): %s, field '%s', not refused at wog.sound", n, sl.text,
                  budget, ra_status_name(st), e.field);
        }
        ra_document_free(doc);
        ra_writer_free(&sl.w);
    }
    printf("metadata budget: %u slots of a %zu-byte sound id load, %u are refused\n", k - 1, id_len, k);

    /* a movie's lists are made on the load's threads and charged in actor
     * order: actors whose lists are each under the budget, all of them over
     * it, fail as on one thread (at the first list past what is left), and
     * two of them load with their whole lists */
    uint32_t slots = 11000;
    for (uint32_t actors = 2; actors <= 3; actors++) {
        sound_list sl;
        sound_list_make_n(&sl, actors, slots, id_len);
        size_t budget = budget0 + 8 * sl.w.size;
        CHECK(actors == 2 ? 2 * sl.text <= budget : 3 * sl.text > budget && sl.text <= budget,
              "%u actors' lists of %zu bytes against the budget %zu: not the case this test needs", actors, sl.text,
              budget);
        ra_error first;
        ra_status first_st = RA_OK;
        static const char *const threads[] = {"1", "2", "3"};
        for (int t = 0; t < 3; t++) {
            ra_document *doc = NULL;
            ra_error e;
            ra_status st = fx_load_opt(sl.w.data, sl.w.size, "s.movie.binltl", false, "threads", threads[t], &doc, &e);
            if (actors == 2) {
                CHECK(st == RA_OK, "2 actors of %u slots, threads=%s: %s", slots, threads[t], e.msg);
                for (uint32_t i = 0; doc && i < doc->scene.node_count; i++) {
                    const ra_meta *m = ra_meta_get(&doc->scene.nodes[i].meta, "wog.sound");
                    if (m)
                        CHECK(m->type == RA_META_STRING && strlen(m->u.s) == sl.text,
                              "threads=%s: a list of %zu bytes, not %zu", threads[t],
                              m->type == RA_META_STRING ? strlen(m->u.s) : 0, sl.text);
                }
            } else {
                CHECK(st == RA_ERR_LIMIT && !strcmp(e.field, "wog.sound"),
                      "3 actors of %u slots, threads=%s: %s, field '%s', not refused at wog.sound", slots, threads[t],
                      ra_status_name(st), e.field);
                if (t == 0) first = e, first_st = st;
                else
                    CHECK(st == first_st && !strcmp(e.msg, first.msg), "threads=%s: '%s', threads=1: '%s'", threads[t],
                          e.msg, first.msg);
            }
            ra_document_free(doc);
        }
        ra_writer_free(&sl.w);
    }
}

static void random_files(int count)
{
    long files = 0;
    for (int it = 0; it < count; it++) {
        ra_arena *ar = ra_arena_create(0);
        bool movie = it % 3 == 2, canonical = it % 2 == 0;
        wog_movie m;
        wog_anim a;
        memset(&m, 0, sizeof m);
        if (movie) {
            m.num_actors = 1 + fx_rnd() % 4;
            m.actors = ra_arena_array(ar, m.num_actors, sizeof *m.actors);
            m.anims = ra_arena_array(ar, m.num_actors, sizeof *m.anims);
            static const char table[28] = "\0IMAGE_A\0$TEXT_B\0FONT_C\0\0\0\0";
            m.strings_size = 28;
            m.strings = ra_arena_alloc(ar, 28);
            memcpy(m.strings, table, 28);
            for (uint32_t i = 0; i < m.num_actors; i++) {
                bool text = fx_rnd() % 2;
                int32_t just =
                    (int32_t)(fx_rnd() % 3); /* one draw per statement: the same stream with every compiler */
                float depth = (float)(fx_rnd() % 3);
                m.actors[i] = (wog_actor){
                    text, text ? 0 : 1, text ? 9 : 0, text ? 17 : 0, text ? 300.f : -1.f, text ? 200.f : -1.f,
                    just, depth};
                random_anim(ar, &m.anims[i], canonical);
            }
            m.length = (float)(32 + fx_rnd() % 700) / 64;
        } else {
            random_anim(ar, &a, canonical);
        }
        for (int l = 0; l < WOG_LAYOUT_COUNT; l++) {
            char name[64];
            snprintf(name, sizeof name, "random%d.%s.%s", it, movie ? "movie" : "anim", wog_layout_name((wog_layout)l));
            ra_writer w;
            ra_writer_init(&w);
            ra_error e;
            ra_error_clear(&e);
            CHECK((movie ? wog_movie_write(&m, (wog_layout)l, &w, &e) : wog_anim_write(&a, (wog_layout)l, &w, &e)) ==
                      RA_OK,
                  "%s: write", name);
            ra_document *doc;
            if (getenv("WOG_DUMP_DIR")) {
                char p[512];
                snprintf(p, sizeof p, "%s/%s", getenv("WOG_DUMP_DIR"), name);
                ra_write_file(p, w.data, w.size, &e);
            }
            /* content alone decides the format and layout */
            if (load_opts(w.data, w.size, NULL, NULL, &doc, &e) != RA_OK) {
                CHECK(0, "%s: does not load: %s (at %llu)", name, e.msg, (unsigned long long)e.offset);
            } else {
                CHECK(!strcmp(doc->format->id, movie ? "wog_movie" : "wog_anim"), "%s: format %s", name,
                      doc->format->id);
                const ra_meta *lm = ra_meta_get(&doc->scene.meta, "wog.layout");
                CHECK(lm && !strcmp(lm->u.s, wog_layout_name((wog_layout)l)), "%s: layout %s", name,
                      lm ? lm->u.s : "?");
                if (l == 0) {
                    fx_check_semantics(doc, name, 1.0 / 120, duration_of(doc), TOL, &g_stats);
                    ra_document_free(doc);
                    ra_options o;
                    ra_options_init(&o);
                    ra_options_add(&o, "transform_order", "reverse");
                    ra_options_add(&o, "flip_y", "true");
                    if (load_opts(w.data, w.size, NULL, &o, &doc, &e) == RA_OK)
                        fx_check_semantics(doc, name, 1.0 / 60, duration_of(doc), TOL, &g_stats);
                    else {
                        CHECK(0, "%s: reverse/flip: %s", name, e.msg);
                        doc = NULL;
                    }
                }
                ra_document_free(doc);
                fx_check_roundtrip(w.data, w.size, NULL, name);
                files++;
            }
            ra_writer_free(&w);
        }
        ra_arena_destroy(ar);
    }
    printf("random writer files: %ld (all four layouts), round-tripped and played back\n", files);
}

/* ---- hand-made regressions ------------------------------------------------------------------------------- */
/* An actor's metadata names only its type's strings: scene.movie's text
 * actor 0 (at 20) given image index 33 and its image actor 1 (at 52) label
 * index 1 and font index 22 (the Python exporter leaves unused fields at 0,
 * its first string) keep image, label and font as before. */
static void actor_fields(void)
{
    fx_file fx;
    if (!fx_open(g_dir, "scene.movie.binltl", &fx)) {
        CHECK(0, "scene.movie.binltl not read");
        return;
    }
    uint8_t *d = fx.data;
    const struct {
        size_t at;
        uint32_t v;
    } w[3] = {{20 + 4, 33}, {52 + 8, 1}, {52 + 12, 22}};
    for (int k = 0; k < 3; k++) CHECK(ra_load_u32le(d + w[k].at) == 0, "scene.movie: field at %zu is 0", w[k].at);
    for (int k = 0; k < 3; k++) {
        const uint8_t b[4] = {(uint8_t)w[k].v, 0, 0, 0};
        memcpy(d + w[k].at, b, 4);
    }
    ra_document *doc = NULL;
    ra_error e;
    CHECK(load_opts(d, fx.size, "f.movie.binltl", NULL, &doc, &e) == RA_OK, "actor fields: %s", e.msg);
    const char *want[6][3] = {{"actor00_TEXT_CHAPTER1_TITLE", "wog.image", ""},
                              {"actor00_TEXT_CHAPTER1_TITLE", "wog.label", "$TEXT_CHAPTER1_TITLE"},
                              {"actor00_TEXT_CHAPTER1_TITLE", "wog.font", "FONT_TITLE"},
                              {"actor01_IMAGE_MOVIE_BG", "wog.image", "IMAGE_MOVIE_BG"},
                              {"actor01_IMAGE_MOVIE_BG", "wog.label", ""},
                              {"actor01_IMAGE_MOVIE_BG", "wog.font", ""}};
    for (int k = 0; doc && k < 6; k++) {
        const char *v = node_meta_string(&doc->scene, want[k][0], want[k][1]);
        CHECK(v && !strcmp(v, want[k][2]), "actor fields: %s %s = %s, expected \"%s\"", want[k][0], want[k][1],
              v ? v : "(none)", want[k][2]);
    }
    if (doc) ra_document_free(doc);
    fx_close(&fx);
}

/* A sound key whose soundStrIdx is -1, "not set" (world_of_goo.md's sentinel; the
 * Python exporter writes such a hold key at a movie's end): scene.movie's
 * sound key (slot 1 of actor 1, at 828; its soundStrIdx at +24 is 1) so
 * written loads, its row without a sound id; -2 is still refused there. */
static void sound_not_set(void)
{
    fx_file fx;
    if (!fx_open(g_dir, "scene.movie.binltl", &fx)) {
        CHECK(0, "scene.movie.binltl not read");
        return;
    }
    uint8_t *d = fx.data;
    const size_t at = 828 + 24;
    CHECK(fx.size > at + 4 && ra_load_u32le(d + at) == 1, "scene.movie: the sound key's soundStrIdx 1 at %zu", at);
    ra_document *doc = NULL;
    ra_error e;
    memset(d + at, 0xFF, 4);
    CHECK(load_opts(d, fx.size, "s.movie.binltl", NULL, &doc, &e) == RA_OK, "soundStrIdx -1: %s", e.msg);
    const char *json = doc ? node_meta_string(&doc->scene, "actor01_IMAGE_MOVIE_BG", "wog.sound") : NULL;
    CHECK(json && !strcmp(json, "[[0.75,\"\"]]"), "soundStrIdx -1: wog.sound %s", json ? json : "(none)");
    if (doc) ra_document_free(doc);
    doc = NULL;
    d[at] = 0xFE;
    CHECK(load_opts(d, fx.size, "s.movie.binltl", NULL, &doc, &e) != RA_OK && e.offset == at &&
              !strcmp(e.field, "keyframe.soundStrIdx"),
          "soundStrIdx -2: refused at %zu (%s at %llu)", at, e.msg, (unsigned long long)e.offset);
    if (doc) ra_document_free(doc);
    fx_close(&fx);
}

/* Keyframes off the 4-byte grid (docs/formats/world_of_goo.md §1): the old
 * <-> new converter packs its string table without padding, so what follows
 * it lies anywhere.  rot_1rps.anim.binltl (binltl: header pointers at 0x20
 * mXformFrames, 0x24 alpha, 0x28 colour, 0x2C sound; its keyframes last) with
 * 3 bytes put before its first keyframe and every keyframe pointer moved by
 * 3 plays as before, with one warning naming the offsets read as they are. */
static void unaligned_keys(const uint8_t *d, size_t n)
{
    uint32_t nt = ra_load_u32le(d + 0x10), nf = ra_load_u32le(d + 0x14);
    /* the pointer arrays of keyframe pointers: one per transform entry, then alpha, colour and sound */
    uint32_t arrays[16 + 3], na = 0;
    uint32_t xf = ra_load_u32le(d + 0x20);
    for (uint32_t t = 0; xf && t < nt && t < 16; t++) arrays[na++] = ra_load_u32le(d + xf + 4 * t);
    for (uint32_t c = 0; c < 3; c++)
        if (ra_load_u32le(d + 0x24 + 4 * c)) arrays[na++] = ra_load_u32le(d + 0x24 + 4 * c);
    uint32_t kmin = (uint32_t)n;
    for (uint32_t a = 0; a < na; a++)
        for (uint32_t f = 0; f < nf; f++) {
            uint32_t k = ra_load_u32le(d + arrays[a] + 4 * f);
            if (k && k < kmin) kmin = k;
        }
    CHECK(na >= 1 && kmin < n && kmin % 4 == 0, "rot_1rps: %u keyframe arrays, first keyframe at %u", na, kmin);
    if (!(na >= 1 && kmin < n)) return;
    uint8_t *u = calloc(n + 3, 1);
    memcpy(u, d, kmin);
    memcpy(u + kmin + 3, d + kmin, n - kmin);
    for (uint32_t a = 0; a < na; a++)
        for (uint32_t f = 0; f < nf; f++) {
            uint32_t k = ra_load_u32le(u + arrays[a] + 4 * f);
            if (k >= kmin) {
                const uint8_t b[4] = {(uint8_t)(k + 3), (uint8_t)((k + 3) >> 8), (uint8_t)((k + 3) >> 16),
                                      (uint8_t)((k + 3) >> 24)};
                memcpy(u + arrays[a] + 4 * f, b, 4);
            }
        }
    ra_document *ref = NULL, *doc = NULL;
    ra_error e;
    CHECK(load_opts(d, n, "a.anim.binltl", NULL, &ref, &e) == RA_OK, "rot_1rps: %s", e.msg);
    CHECK(load_opts(u, n + 3, "u.anim.binltl", NULL, &doc, &e) == RA_OK, "keyframes off the grid: %s", e.msg);
    if (ref && doc) {
        double worst = 0;
        for (int i = 0; i <= 40; i++) {
            ra_mat4 wa[8], wb[8];
            double t = i * 0.05;
            bool ok = ref->scene.node_count <= 8 && doc->scene.node_count == ref->scene.node_count &&
                      ra_document_pose(ref, 0, t, wa, &e) == RA_OK && ra_document_pose(doc, 0, t, wb, &e) == RA_OK;
            CHECK(ok, "keyframes off the grid: pose at %g", t);
            for (size_t k = 0; ok && k < doc->scene.node_count; k++) {
                double dd = ra_m4_max_abs_diff(&wa[k], &wb[k]);
                if (dd > worst) worst = dd;
            }
        }
        CHECK(worst == 0, "keyframes off the grid: poses differ by %g", worst);
        bool warned = false;
        for (size_t i = 0; i < doc->scene.warning_count; i++)
            warned |= strstr(doc->scene.warnings[i].msg, "3 offset(s) are not a multiple of 4") != NULL;
        CHECK(warned, "keyframes off the grid: the warning");
    }
    if (ref) ra_document_free(ref);
    if (doc) ra_document_free(doc);
    free(u);
}

static void regressions(void)
{
    /* layout names, the string table lookup, the extensions */
    CHECK(wog_layout_from_name("binuni") == WOG_LAYOUT_BINUNI && wog_layout_from_name("x") == -1, "layout names");
    static const uint8_t t[] = "\0AB\0C";
    CHECK(wog_string(t, 5, 1) && !strcmp(wog_string(t, 5, 1), "AB"), "string 1");
    CHECK(wog_string(t, 5, 4) == NULL, "a string without its NUL inside the table");
    CHECK(wog_string(t, 5, -1) == NULL && wog_string(t, 5, 5) == NULL, "indices outside the table");
    CHECK(ra_format_by_extension("x.png.binltl") == NULL, ".png.binltl is not ours");
    CHECK(ra_format_by_extension("X.ANIM.BINLTL") == ra_format_find("wog_anim"), "uppercase anim.binltl");
    CHECK(ra_format_by_extension("y.movie.binuni") == ra_format_find("wog_movie"), "movie.binuni");

    ra_error e;
    ra_document *doc = NULL;
    fx_file fx;
    /* a 64-bit pointer cut in half fails at the pointer's first byte (review) */
    if (fx_open(g_dir, "xform64.anim.binltl64", &fx)) {
        CHECK(load_opts(fx.data, 44, "t.anim.binltl64", NULL, &doc, &e) != RA_OK && e.offset == 40,
              "64-bit pointer truncated at 44: error at %llu", (unsigned long long)e.offset);
        fx_close(&fx);
    }
    if (fx_open(g_dir, "rot_1rps.anim.binltl", &fx)) {
        uint8_t *d = fx.data;
        unaligned_keys(d, fx.size);
        /* keys back to back keep one offset; keys in another order keep each
         * (dump --source prints them): the first two swapped, bytes and
         * pointers, play the same and report where each now lies */
        {
            ra_document *packed = NULL, *swapped = NULL;
            CHECK(load_opts(d, fx.size, "p.anim.binltl", NULL, &packed, &e) == RA_OK, "rot_1rps loads: %s", e.msg);
            uint8_t *s = malloc(fx.size), tmp[WOG_KEYFRAME_SIZE];
            memcpy(s, d, fx.size);
            uint32_t k0 = ra_load_u32le(s + 72), k1 = ra_load_u32le(s + 76);
            memcpy(tmp, s + k0, sizeof tmp);
            memcpy(s + k0, s + k1, sizeof tmp);
            memcpy(s + k1, tmp, sizeof tmp);
            memcpy(s + 72, d + 76, 4);
            memcpy(s + 76, d + 72, 4);
            CHECK(load_opts(s, fx.size, "q.anim.binltl", NULL, &swapped, &e) == RA_OK, "swapped keys load: %s", e.msg);
            if (packed && swapped) {
                const wog_anim *pa = &wog_document_file(packed)->anim, *sa = &wog_document_file(swapped)->anim;
                CHECK(!pa->key_offset && pa->key_count == 3, "back to back: no offset array (%u keys)", pa->key_count);
                for (uint32_t k = 0; k < pa->key_count; k++)
                    CHECK(wog_key_offset(pa, k) == 124 + 32 * k, "packed key %u at %llu", k,
                          (unsigned long long)wog_key_offset(pa, k));
                CHECK(sa->key_offset && sa->key_count == 3, "swapped: the offsets kept");
                CHECK(wog_key_offset(sa, 0) == k1 && wog_key_offset(sa, 1) == k0 && wog_key_offset(sa, 2) == 188,
                      "swapped offsets %llu %llu %llu", (unsigned long long)wog_key_offset(sa, 0),
                      (unsigned long long)wog_key_offset(sa, 1), (unsigned long long)wog_key_offset(sa, 2));
                const ra_channel *pc = &packed->scene.animations[0].channels[0],
                                 *sc = &swapped->scene.animations[0].channels[0];
                bool same = pc->rotation_count == sc->rotation_count;
                for (size_t i = 0; same && i < pc->rotation_count; i++)
                    same = !memcmp(&pc->rotation[i], &sc->rotation[i], sizeof pc->rotation[i]);
                CHECK(same, "swapped keys play the same (%zu and %zu rotation keys)", pc->rotation_count,
                      sc->rotation_count);
            }
            ra_document_free(packed);
            ra_document_free(swapped);
            /* a slot naming a key read before is that key, not a new one:
             * while the keys lie back to back (found by their place: slot
             * 2 takes slot 1's key) and once they do not (found by the map,
             * which the first key out of order started with the keys before
             * it: slot 2 takes slot 0's key).  That key's chain then ends
             * (-1: the reader refuses a chain going back). */
            for (int order = 0; order < 2; order++) {
                uint8_t *base = order ? s : d, keep[8];
                uint32_t from = order ? 72 : 76, k = ra_load_u32le(base + from);
                memcpy(keep, base + 80, 4);
                memcpy(keep + 4, base + k + 20, 4);
                memcpy(base + 80, base + from, 4);
                memset(base + k + 20, 0xFF, 4);
                ra_document *al = NULL;
                CHECK(load_opts(base, fx.size, "a.anim.binltl", NULL, &al, &e) == RA_OK, "aliased slot loads: %s",
                      e.msg);
                if (al) {
                    const wog_anim *aa = &wog_document_file(al)->anim;
                    CHECK(aa->key_count == 2 && aa->xform[0].slot[0] == 0 && aa->xform[0].slot[1] == 1 &&
                              aa->xform[0].slot[2] == (order ? 0 : 1),
                          "aliased slot (%s): %u keys, slots %d %d %d", order ? "swapped" : "in order", aa->key_count,
                          aa->xform[0].slot[0], aa->xform[0].slot[1], aa->xform[0].slot[2]);
                }
                ra_document_free(al);
                memcpy(base + 80, keep, 4);
                memcpy(base + k + 20, keep + 4, 4);
            }
            free(s);
        }
        /* a sound id longer than any resource name is refused, not copied per key */
        ra_document *ok = NULL;
        CHECK(load_opts(d, fx.size, "r.anim.binltl", NULL, &ok, &e) == RA_OK, "rot_1rps loads");
        if (ok) {
            wog_file *f = (wog_file *)wog_document_file(ok);
            wog_anim *a = &f->anim;
            a->has_sound = 1;
            a->sound.present = true;
            a->sound.slot = ra_arena_array(ok->arena, 3, sizeof *a->sound.slot);
            a->sound.slot[0] = a->sound.slot[1] = -1, a->sound.slot[2] = 2; /* a copy of the last ROTATE key */
            a->strings_size = 2000;
            a->strings = ra_arena_alloc(ok->arena, 2001);
            memset(a->strings + 1, 'S', 1998);
            a->keys[2].sound_str_idx = 1;
            ra_writer w;
            ra_writer_init(&w);
            wog_anim_write(a, WOG_LAYOUT_BINLTL, &w, &e);
            CHECK(load_opts(w.data, w.size, "s.anim.binltl", NULL, &doc, &e) != RA_OK &&
                      strcmp(e.field, "keyframe.soundStrIdx") == 0,
                  "a 1998-byte sound id: %s", e.msg);
            ra_writer_free(&w);
            ra_document_free(ok);
        }
        fx_close(&fx);
    }
    if (fx_open(g_dir, "scene.movie.binltl", &fx)) {
        /* two actors sharing one animation: read once, the same keys on both nodes */
        uint8_t *d = fx.data;
        uint32_t pp = ra_load_u32le(d + 12);
        memcpy(d + pp + 4, d + pp, 4);
        if (load_opts(d, fx.size, "shared.movie.binltl", NULL, &doc, &e) == RA_OK) {
            const wog_file *f = wog_document_file(doc);
            CHECK(f->movie.anims[0].keys == f->movie.anims[1].keys, "a shared animation is read once");
            const ra_animation *an = &doc->scene.animations[0];
            CHECK(an->channel_count == 2 && an->channels[0].rotation == an->channels[1].rotation,
                  "actors sharing an animation share its keys");
            fx_check_semantics(doc, "shared.movie", 1.0 / 120, 4.0, TOL, &g_stats);
            ra_document_free(doc);
        } else {
            CHECK(0, "shared animation: %s", e.msg);
        }
        /* the second animation starting 8 bytes after the first: refused at its ppAnims entry */
        uint32_t a0 = ra_load_u32le(d + pp);
        uint8_t b[4] = {(uint8_t)(a0 + 8), (uint8_t)((a0 + 8) >> 8), (uint8_t)((a0 + 8) >> 16),
                        (uint8_t)((a0 + 8) >> 24)};
        memcpy(d + pp + 4, b, 4);
        CHECK(load_opts(d, fx.size, "ovl.movie.binltl", NULL, &doc, &e) != RA_OK && e.offset == pp,
              "overlapping animations: %s at %llu (want %u)", e.msg, (unsigned long long)e.offset, pp);
        fx_close(&fx);
    }
    /* a movie without actors, and a 64-bit animation without its types table, by content alone */
    for (int l = 0; l < WOG_LAYOUT_COUNT; l++) {
        static uint8_t table[4];
        wog_movie m = {2.5f, 0, NULL, NULL, table, 4, 0};
        ra_writer w;
        ra_writer_init(&w);
        wog_movie_write(&m, (wog_layout)l, &w, &e);
        CHECK(load_opts(w.data, w.size, NULL, NULL, &doc, &e) == RA_OK && !strcmp(doc->format->id, "wog_movie") &&
                  !strcmp(ra_meta_get(&doc->scene.meta, "wog.layout")->u.s, wog_layout_name((wog_layout)l)),
              "a movie without actors (%s) is recognised: %s", wog_layout_name((wog_layout)l), e.msg);
        ra_document_free(doc);
        ra_writer_free(&w);
        float times[2] = {0, 1};
        wog_anim a;
        memset(&a, 0, sizeof a);
        a.num_frames = 2;
        a.frame_times = times;
        a.null_ptrs = 1u << WOG_PTR_TYPES;
        a.strings = table, a.strings_size = 4;
        ra_writer_init(&w);
        wog_anim_write(&a, (wog_layout)l, &w, &e);
        CHECK(load_opts(w.data, w.size, NULL, NULL, &doc, &e) == RA_OK && !strcmp(doc->format->id, "wog_anim") &&
                  !strcmp(ra_meta_get(&doc->scene.meta, "wog.layout")->u.s, wog_layout_name((wog_layout)l)),
              "an animation without transforms (%s) is recognised: %s", wog_layout_name((wog_layout)l), e.msg);
        ra_document_free(doc);
        ra_writer_free(&w);
    }
}

/* the layouts' extensions: .binltl, .binltl64, .binuni, .binbig */
static bool is_fixture(const char *n)
{
    const char *x = strrchr(n, '.');
    return x && strncmp(x, ".bin", 4) == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_wog FIXTURE_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    fx_rng = 777;
    int fixtures = fx_for_each_file(g_dir, is_fixture, run_fixture);
    CHECK(fixtures >= 17, "only %d fixtures", fixtures);
    printf("fixtures: %d, expectations: %ld, pose/playback instants: %ld (worst %.3g)\n", fixtures, g_checks,
           g_stats.instants, g_stats.worst);
    random_files(150);
    regressions();
    meta_budget_edge();
    sound_not_set();
    actor_fields();
    return ra_test_finish("test_wog");
}
