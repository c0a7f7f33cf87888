/* Checks shared by the per-format fixture tests: pose-vs-playback
 * semantics, byte-identical round trips and `expect-pose` lines. */
#ifndef RA_FIXTURE_H
#define RA_FIXTURE_H

#include <dirent.h>
#include <string.h>

#include "ra_test.h"
#include "retroanim/ra_document.h"

/* The bytes of DIR/NAME (ra_free them); a file that cannot be read ends the test program (exit 2). */
static inline uint8_t *fx_slurp(const char *dir, const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint8_t *d = NULL;
    ra_error e;
    ra_error_clear(&e);
    if (ra_read_file(path, &d, n, &e) != RA_OK) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    return d;
}

typedef struct fx_stats {
    double worst;       /* largest pose/playback difference seen */
    double worst_ratio; /* largest difference / allowed difference seen */
    long instants;      /* instants compared */
} fx_stats;

/* At one instant: the game's pose (pw) and the keys' playback (kw) of every
 * node, world matrices into the two arrays (node_count each). */
static inline void fx_pose_and_playback(const ra_document *doc, size_t anim, double t, ra_mat4 *pw, ra_mat4 *kw)
{
    ra_error e;
    ra_error_clear(&e);
    ra_document_pose(doc, anim, t, pw, &e);
    ra_scene_sample_world(&doc->scene, anim, t, kw);
}

/* The reference evaluator (pose) of animation `anim` against its keys played
 * back as Assimp consumers play them, at t = 0, dt, 2dt, ... up to t_end
 * inclusive.  Each node's difference may reach tol, or node_tol(doc, anim,
 * node) when given (formats that sample a curve state their sampling error). */
static inline void fx_check_semantics_ex(const ra_document *doc, size_t anim, const char *what, double dt, double t_end,
                                         double tol,
                                         double (*node_tol)(const ra_document *doc, size_t anim, size_t node),
                                         fx_stats *stats)
{
    const ra_scene *s = &doc->scene;
    ra_mat4 *pw = (ra_mat4 *)malloc(s->node_count * sizeof *pw), *kw = (ra_mat4 *)malloc(s->node_count * sizeof *kw);
    double *allowed = (double *)malloc(s->node_count * sizeof *allowed);
    for (size_t n = 0; n < s->node_count; n++) allowed[n] = node_tol ? node_tol(doc, anim, n) : tol;
    double worst = 0, worst_t = 0, worst_allowed = tol, worst_ratio = 0;
    const char *worst_node = "";
    long steps = (long)floor(t_end / dt + 1e-9);
    for (long i = 0; i <= steps; i++) {
        double t = fmin((double)i * dt, t_end);
        fx_pose_and_playback(doc, anim, t, pw, kw);
        for (size_t n = 0; n < s->node_count; n++) {
            double d = ra_m4_max_abs_diff(&pw[n], &kw[n]);
            double r = d / allowed[n];
            if (d > worst) worst = d;
            if (!(r <= worst_ratio)) {
                worst_ratio = r;
                worst_allowed = allowed[n];
                worst_node = s->nodes[n].name;
                worst_t = t;
            }
        }
        stats->instants++;
    }
    CHECK(worst_ratio <= 1, "%s: animation %zu: pose and playback differ by %g (allowed %g) at %g s on %s", what, anim,
          worst_ratio * worst_allowed, worst_allowed, worst_t, worst_node);
    if (worst > stats->worst) stats->worst = worst;
    if (worst_ratio > stats->worst_ratio) stats->worst_ratio = worst_ratio;
    free(allowed);
    free(pw);
    free(kw);
}

static inline void fx_check_semantics(const ra_document *doc, const char *what, double dt, double t_end, double tol,
                                      fx_stats *stats)
{
    fx_check_semantics_ex(doc, 0, what, dt, t_end, tol, NULL, stats);
}

/* write(read(bytes)) == bytes */
static inline void fx_check_roundtrip(const uint8_t *d, size_t n, const ra_options *o, const char *what)
{
    ra_document *doc = NULL;
    ra_error e;
    ra_error_clear(&e);
    if (ra_document_read(d, n, what, o, &doc, &e) != RA_OK) {
        CHECK(0, "%s: read failed: %s", what, e.msg);
        return;
    }
    ra_writer w;
    ra_writer_init(&w);
    CHECK(doc->format->write(doc, &w, &e) == RA_OK, "%s: write", what);
    CHECK(w.size == n && memcmp(w.data, d, n) == 0, "%s: write(read(file)) is not byte-identical (%zu vs %zu bytes)",
          what, w.size, n);
    ra_writer_free(&w);
    ra_document_free(doc);
}

/* "expect-pose [anim=<i>] t=<s> node=<name> world=<16 numbers>": pose
 * matches the hand-computed world matrix within tol and playback of the
 * baked keys within play_tol[node][anim] (play_tol NULL: tol as well; formats
 * that sample a curve state their sampling error).  Returns false when the
 * line is not an expect-pose line. */
static inline bool fx_check_pose_line_ex(const ra_document *doc, const char *line, const char *what, double tol,
                                         double (*play_tol)(const ra_document *doc, size_t anim, size_t node))
{
    if (strncmp(line, "expect-pose ", 12) != 0) return false;
    const ra_scene *s = &doc->scene;
    const char *pa = strstr(line, " anim="), *pt = strstr(line, " t="), *pn = strstr(line, " node="),
               *pm = strstr(line, " world=");
    if (!pt || !pn || !pm || pm <= pn) {
        CHECK(0, "%s: malformed line %s", what, line);
        return true;
    }
    size_t anim = pa && pa < pt ? (size_t)atol(pa + 6) : 0;
    double t = atof(pt + 3);
    char node[256];
    size_t len = (size_t)(pm - (pn + 6));
    if (len >= sizeof node) len = sizeof node - 1;
    memcpy(node, pn + 6, len);
    node[len] = 0;
    ra_mat4 want;
    char *q = (char *)pm + 7;
    for (int k = 0; k < 16; k++) {
        want.m[k / 4][k % 4] = strtod(q, &q);
        if (*q == ',') q++;
    }
    int32_t idx = ra_scene_find_node(s, node);
    CHECK(idx >= 0, "%s: no node named '%s'", what, node);
    if (idx < 0) return true;
    ra_mat4 *world = (ra_mat4 *)malloc(s->node_count * sizeof *world);
    ra_error e;
    ra_error_clear(&e);
    ra_document_pose(doc, anim, t, world, &e);
    double d = ra_m4_max_abs_diff(&world[idx], &want);
    CHECK(d <= tol, "%s: pose of %s at %g s of animation %zu differs from the hand-computed matrix by %g", what, node,
          t, anim, d);
    if (anim < s->animation_count) {
        double pt_tol = play_tol ? play_tol(doc, anim, (size_t)idx) : tol;
        ra_scene_sample_world(s, anim, t, world);
        d = ra_m4_max_abs_diff(&world[idx], &want);
        CHECK(d <= pt_tol,
              "%s: playback of %s at %g s of animation %zu differs from the hand-computed matrix by %g "
              "(allowed %g)",
              what, node, t, anim, d, pt_tol);
    }
    free(world);
    return true;
}

static inline bool fx_check_pose_line(const ra_document *doc, const char *line, const char *what, double tol)
{
    return fx_check_pose_line_ex(doc, line, what, tol, NULL);
}

/* "name=value" of a space-separated expect line (value up to the next space) */
static inline bool fx_field(const char *line, const char *name, char *out, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", name);
    const char *p = strstr(line, pat);
    if (!p) return false;
    p += strlen(pat);
    size_t n = strcspn(p, " ");
    if (n >= size) n = size - 1;
    memcpy(out, p, n);
    out[n] = 0;
    return true;
}

/* The expect lines every format shares: expect-format ID, expect-nodes N
 * (all scene nodes, the root included), expect-duration SECONDS (one
 * animation).  Returns false when the line is none of them. */
static inline bool fx_check_common_line(const ra_document *doc, const char *line, const char *name)
{
    const ra_scene *s = &doc->scene;
    char word[64];
    double t;
    long n;
    if (sscanf(line, "expect-format %63s", word) == 1) {
        CHECK(!strcmp(doc->format->id, word), "%s: format %s, expected %s", name, doc->format->id, word);
    } else if (sscanf(line, "expect-nodes %ld", &n) == 1) {
        CHECK((long)s->node_count == n, "%s: %zu nodes, expected %ld", name, s->node_count, n);
    } else if (sscanf(line, "expect-duration %lf", &t) == 1) {
        CHECK(s->animation_count == 1, "%s: one animation", name);
        if (s->animation_count) CHECK_NEAR(s->animations[0].duration, t, 1e-6, name);
    } else {
        return false;
    }
    return true;
}

/* A fixture and its description: the data file DIR/NAME and DIR/<stem>.txt,
 * whose expect-error-offset line (if any) is read up front. */
typedef struct fx_file {
    char path[2400];
    uint8_t *data;
    size_t size;
    FILE *txt;
    long err_off;      /* -1: the file must load */
    bool not_detected; /* expect-not-detected: no format may take it */
    int expects;       /* expect-* lines counted so far */
} fx_file;

static inline bool fx_open(const char *dir, const char *name, fx_file *f)
{
    memset(f, 0, sizeof *f);
    f->err_off = -1;
    char txt[2400];
    snprintf(f->path, sizeof f->path, "%s/%.255s", dir, name);
    snprintf(txt, sizeof txt, "%s/%.*s.txt", dir, (int)(strrchr(name, '.') - name) & 0xff, name);
    ra_error e;
    ra_error_clear(&e);
    if (ra_read_file(f->path, &f->data, &f->size, &e) != RA_OK) {
        CHECK(0, "cannot read %s", f->path);
        return false;
    }
    f->txt = fopen(txt, "r");
    CHECK(f->txt != NULL, "fixture %s has no description %s", name, txt);
    if (!f->txt) {
        free(f->data);
        return false;
    }
    char line[2048];
    while (fgets(line, sizeof line, f->txt)) {
        if (sscanf(line, "expect-error-offset %ld", &f->err_off) == 1) f->expects++;
        else if (!strncmp(line, "expect-not-detected", 19)) f->not_detected = true;
    }
    rewind(f->txt);
    return true;
}

static inline void fx_close(fx_file *f)
{
    if (f->txt) fclose(f->txt);
    free(f->data);
    f->txt = NULL;
    f->data = NULL;
}

/* A broken fixture: the load failed at the expected byte, naming the format
 * and a field. */
static inline void fx_check_refused(const fx_file *f, ra_status st, const ra_error *e, const char *name,
                                    const char *format)
{
    char msg[512];
    ra_error_format(e, msg, sizeof msg);
    CHECK(st != RA_OK, "%s must fail to load", name);
    CHECK(e->offset == (uint64_t)f->err_off, "%s: error at byte %llu, expected %ld (%s)", name,
          (unsigned long long)e->offset, f->err_off, msg);
    CHECK(e->format && strcmp(e->format, format) == 0 && e->field[0], "%s: error names format and field: %s", name,
          msg);
}

/* Loads a fixture by its path.  A broken one (expect-error-offset) must fail
 * at that byte naming `format` (one check counted in *checks); a valid one
 * must load.  Returns the document of a valid fixture (the caller frees it),
 * NULL when there is nothing more to check. */
static inline ra_document *fx_load_or_refuse(const fx_file *f, const char *name, const char *format, long *checks)
{
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = NULL;
    ra_status st = ra_document_load(f->data, f->size, f->path, NULL, &doc, &e);
    if (f->err_off >= 0) {
        fx_check_refused(f, st, &e, name, format);
        if (doc) ra_document_free(doc);
        (*checks)++;
        return NULL;
    }
    if (st != RA_OK) {
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        CHECK(0, "%s: load failed: %s", name, msg);
        return NULL;
    }
    return doc;
}

/* xorshift32 for the writer round-trip tests: reproducible (a test sets
 * fx_rng to its seed), the same on every machine. */
static uint32_t fx_rng = 1;
static inline uint32_t fx_rnd(void)
{
    fx_rng ^= fx_rng << 13;
    fx_rng ^= fx_rng >> 17;
    fx_rng ^= fx_rng << 5;
    return fx_rng;
}
/* uniform in [lo, hi], in steps of (hi - lo) / 1e6 */
static inline double fx_frand(double lo, double hi) { return lo + (hi - lo) * (fx_rnd() % 1000001) / 1000000.0; }

static int fx_cmp_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Runs `run` on every file of `dir` that `accept` takes, in name order;
 * returns how many ran. */
static inline int fx_for_each_file(const char *dir, bool (*accept)(const char *name), void (*run)(const char *name))
{
    DIR *d = opendir(dir);
    CHECK(d != NULL, "fixture directory %s", dir);
    if (!d) return 0;
    typedef char fx_name[256];
    fx_name *names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strlen(de->d_name) >= sizeof(fx_name) || !accept(de->d_name)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            fx_name *nn = (fx_name *)realloc(names, cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        snprintf(names[n++], sizeof(fx_name), "%s", de->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, fx_cmp_name);
    for (size_t i = 0; i < n; i++) run(names[i]);
    free(names);
    return (int)n;
}

/* A file of a known format, or a LEGO animation body (.anb, no header to detect). */
static inline bool fx_is_body(const char *name)
{
    size_t l = strlen(name);
    return l > 4 && strcmp(name + l - 4, ".anb") == 0;
}
static inline bool fx_is_fixture(const char *name)
{
    return fx_is_body(name) || (strchr(name, '.') && ra_format_by_extension(name));
}

/* Loads a fixture's bytes as the tests do (a .anb as a LEGO body), with one
 * more option KEY=VALUE when key is not NULL; the error into e (NULL: not
 * kept). */
static inline ra_status fx_load_opt(const uint8_t *d, size_t n, const char *path, bool body, const char *key,
                                    const char *value, ra_document **doc, ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    if (body) ra_options_add(&o, "format", "lego_ani_body");
    if (key) ra_options_add(&o, key, value);
    ra_error own;
    if (!e) e = &own;
    ra_error_clear(e);
    *doc = NULL;
    return ra_document_load(d, n, path, &o, doc, e);
}

/* Loads with the options o as ra_document_load does or, with early, as the
 * Assimp importer and the CLI's convert do (free_bulk_early set between the
 * read and the bake: the bake may free the model's arrays as it goes);
 * *doc is NULL on failure. */
static inline ra_status fx_load_with(const uint8_t *d, size_t n, const char *path, const ra_options *o, bool early,
                                     ra_document **doc, ra_error *e)
{
    ra_error_clear(e);
    *doc = NULL;
    ra_status st = ra_document_read(d, n, path, o, doc, e);
    if (st == RA_OK) {
        (*doc)->free_bulk_early = early;
        st = ra_document_build_scene(*doc, e);
    }
    if (st != RA_OK) {
        ra_document_free(*doc);
        *doc = NULL;
    }
    return st;
}

typedef void (*fx_bytes_fn)(const uint8_t *data, size_t size, const char *path, const char *name, bool body);
static const char *fx_walk_dir;
static fx_bytes_fn fx_walk_fn;
static inline void fx_walk_one(const char *name)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", fx_walk_dir, name);
    uint8_t *data;
    size_t size;
    ra_error e;
    ra_error_clear(&e);
    ra_status st = ra_read_file(path, &data, &size, &e);
    CHECK(st == RA_OK, "cannot read %s", path);
    if (st != RA_OK) return;
    fx_walk_fn(data, size, path, name, fx_is_body(name));
    ra_free(data);
}

/* Runs `run` on the bytes of every file of `dir` that `accept` takes, in name
 * order; returns how many ran. */
static inline int fx_for_each_bytes(const char *dir, bool (*accept)(const char *name), fx_bytes_fn run)
{
    fx_walk_fn = run;
    fx_walk_dir = dir;
    return fx_for_each_file(dir, accept, fx_walk_one);
}

/* The same for every fixture of every directory. */
static inline int fx_for_each_fixture(int ndirs, char **dirs, fx_bytes_fn run)
{
    int files = 0;
    for (int i = 0; i < ndirs; i++) files += fx_for_each_bytes(dirs[i], fx_is_fixture, run);
    return files;
}

#endif
