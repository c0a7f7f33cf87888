/* Baking on several threads gives the scene of one thread: every fixture
 * (and every file given by path, such as bench_gen's larger files) is loaded
 * with the option threads=1, 2 and 5, and the scenes' dumps (nodes, keys to
 * the last bit, metadata, warnings in order) must be equal byte for byte
 * (threads=5 with free_bulk_early: the workers free the model's records as
 * the jobs that read them end).
 * A file that fails must fail the same way (status, field, byte offset,
 * message).  Then the limits that the workers share: with a small
 * max_samples and max_keys each file must fail (or load) with the same
 * status whatever the threads, the errors naming their field; with a small
 * memory_limit it loads or runs out of memory (each worker's arena has its
 * own partly used blocks, so near the limit one count may pass and another
 * not).  Run under ThreadSanitizer in CI. */
#include <sys/stat.h>

#include "ra_fixture.h"
#include "retroanim/wog.h"

static long g_files, g_loaded, g_compared_bytes, g_compared_src, g_limit_cases;

typedef struct outcome {
    ra_status st;
    ra_error err;
    char *dump; /* malloc'd JSON of the scene; NULL when the load failed */
    size_t size;
    char *src; /* and of the model the reader made (its source dump), where kept */
    size_t src_size;
} outcome;

static void outcome_free(outcome *o)
{
    free(o->dump);
    free(o->src);
}

/* The automatic key angle from the channels' reach worked out on the
 * load's threads (ra_document_key_passes, keys left as they are with
 * defer_key_cut) is the one worked out on this thread: for the scene as
 * loaded, then with NaN translations in some channels (skipped by both), a
 * channel of NaN alone and a node's translation NaN. */
static double angle_on_threads(ra_document *doc, const char *path)
{
    ra_arena *tmp = ra_arena_create(0);
    uint8_t *fine = NULL;
    ra_error e;
    ra_error_clear(&e);
    doc->defer_key_cut = true;
    doc->key_cut_angle = -1;
    ra_status st = tmp ? ra_document_key_passes(doc, true, HUGE_VAL, tmp, &fine, &e) : RA_ERR_NO_MEMORY;
    CHECK(st == RA_OK, "%s: key passes: %s", path, e.msg);
    ra_arena_destroy(tmp);
    return doc->key_cut_angle;
}
static bool same_angle(double a, double b) { return a == b || (a != a && b != b); }
static void check_reach(ra_document *doc, const char *path)
{
    ra_scene *s = &doc->scene;
    double many = angle_on_threads(doc, path), one = ra_scene_auto_key_angle(s);
    CHECK(many > 0 && same_angle(many, one), "%s: key angle %.17g on the load's threads, %.17g on one", path, many,
          one);
    size_t ci = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++, ci++) {
            ra_channel *ch = &s->animations[a].channels[c];
            if (ci % 3 == 1 && ch->position_count) ch->position[0].v.x = NAN;
            for (size_t k = 0; ci % 5 == 2 && k < ch->position_count; k++) ch->position[k].v.y = NAN;
        }
    if (s->node_count > 1) s->nodes[1].transform.m[0][3] = NAN;
    many = angle_on_threads(doc, path), one = ra_scene_auto_key_angle(s);
    CHECK(same_angle(many, one), "%s: with NaN keys, key angle %.17g on the load's threads, %.17g on one", path, many,
          one);
}

static outcome load_with(const uint8_t *d, size_t n, const char *path, bool body, const char *threads, const char *key,
                         const char *value, bool early)
{
    ra_options o;
    ra_options_init(&o);
    if (body) ra_options_add(&o, "format", "lego_ani_body");
    ra_options_add(&o, "threads", threads);
    if (key) ra_options_add(&o, key, value);
    outcome r = {0};
    ra_error_clear(&r.err);
    ra_document *doc = NULL;
    r.st = fx_load_with(d, n, path, &o, early, &doc, &r.err);
    if (r.st != RA_OK) return r;
    ra_writer w;
    ra_writer_init(&w);
    ra_json j;
    ra_json_init_buffer(&j, &w, false);
    ra_scene_dump_json(&doc->scene, &j);
    CHECK(!w.failed, "%s: dump out of memory", path);
    r.dump = (char *)w.data;
    r.size = w.size;
    /* the model the reader made (some readers decode on the threads),
     * where the bake has not freed its bulk arrays (early) */
    if (!early && doc->format->dump_source) {
        ra_writer_init(&w);
        ra_json_init_buffer(&j, &w, false);
        doc->format->dump_source(doc, &j);
        CHECK(!w.failed, "%s: source dump out of memory", path);
        r.src = (char *)w.data;
        r.src_size = w.size;
    }
    if (strcmp(threads, "1")) check_reach(doc, path);
    ra_document_free(doc);
    return r;
}

static bool same_error(const outcome *a, const outcome *b)
{
    return a->st == b->st && a->err.offset == b->err.offset && !strcmp(a->err.field, b->err.field) &&
           !strcmp(a->err.msg, b->err.msg);
}

/* A World of Goo movie's animations are read on the load's threads: with a
 * keyframe of two of them made wrong (interpolation 7, or nextFrameIndex
 * going back) it must fail with threads=2 and 5 as with one thread, with the
 * error of the first of the two in the movie's order. */
static long g_movie_errors;
static void check_movie_errors(const uint8_t *d, size_t n, const char *path, const char *nm)
{
    int layout = wog_sniff_layout(d, n, true);
    ra_arena *ar = ra_arena_create(0);
    wog_movie mv;
    ra_error e;
    ra_error_clear(&e);
    uint8_t *m = malloc(n);
    CHECK(ar && m && layout >= 0, "%s: cannot set up", nm);
    if (!ar || !m || layout < 0 || wog_movie_read(d, n, (wog_layout)layout, ar, &mv, &e) != RA_OK) {
        CHECK(false, "%s: wog_movie_read fails: %s", nm, e.msg);
        free(m);
        ra_arena_destroy(ar);
        return;
    }
    /* the actors whose animation is read (not shared with an earlier one) and has keys */
    uint32_t *own = malloc(((size_t)mv.num_actors + 1) * sizeof *own), nown = 0;
    for (uint32_t i = 0; own && i < mv.num_actors; i++) {
        bool shared = false;
        for (uint32_t p = 0; p < i && !shared; p++) shared = mv.anims[p].offset == mv.anims[i].offset;
        if (!shared && mv.anims[i].key_count) own[nown++] = i;
    }
    for (uint32_t c = 0; own && c < 24 && nown >= 2; c++) {
        uint32_t lo = c % (nown - 1), hi = lo + 1 + (c * 7) % (nown - 1 - lo);
        memcpy(m, d, n);
        uint32_t which[2] = {own[lo], own[hi]};
        for (int w = 0; w < 2; w++) {
            const wog_anim *a = &mv.anims[which[w]];
            uint64_t at = wog_key_offset(a, (c + (uint32_t)w) % a->key_count);
            uint32_t v = (c + (uint32_t)w) % 2 ? 7u : 0xFFFFFFF9u; /* interpolation 7 / nextFrameIndex -7 */
            memcpy(m + at + ((c + (uint32_t)w) % 2 ? 28 : 20), &v, 4);
        }
        outcome one = load_with(m, n, path, false, "1", NULL, NULL, false);
        CHECK(one.st != RA_OK, "%s with keys of actors %u and %u made wrong: loads", nm, which[0], which[1]);
        for (int t = 0; t < 2; t++) {
            outcome many = load_with(m, n, path, false, t ? "5" : "2", NULL, NULL, false);
            CHECK(same_error(&one, &many),
                  "%s with keys of actors %u and %u made wrong: threads=1 fails with '%s' (%s), threads=%s with '%s' "
                  "(%s)",
                  nm, which[0], which[1], one.err.msg, one.err.field, t ? "5" : "2", many.err.msg, many.err.field);
            outcome_free(&many);
        }
        if (one.st != RA_OK) g_movie_errors++;
        outcome_free(&one);
    }
    free(own);
    free(m);
    ra_arena_destroy(ar);
}

static void check_file(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    static const char *const threads[] = {"2", "5"};
    g_files++;
    outcome one = load_with(d, n, path, body, "1", NULL, NULL, false);
    if (one.st == RA_OK) g_loaded++;
    if (one.st == RA_OK && strstr(path, ".movie.")) check_movie_errors(d, n, path, nm);
    for (int t = 0; t < 2; t++) {
        outcome many = load_with(d, n, path, body, threads[t], NULL, NULL, t == 1);
        if (one.st == RA_OK) {
            CHECK(many.st == RA_OK, "%s: loads with threads=1, fails with threads=%s: %s", nm, threads[t],
                  many.err.msg);
            CHECK(many.dump && many.size == one.size && !memcmp(many.dump, one.dump, one.size),
                  "%s: the scene with threads=%s differs from threads=1 (%zu / %zu bytes of dump)", nm, threads[t],
                  many.size, one.size);
            g_compared_bytes += (long)one.size;
            if (one.src && many.src) {
                CHECK(many.src_size == one.src_size && !memcmp(many.src, one.src, one.src_size),
                      "%s: the model read with threads=%s differs from threads=1 (%zu / %zu bytes of source dump)", nm,
                      threads[t], many.src_size, one.src_size);
                g_compared_src++;
            }
        } else {
            CHECK(same_error(&one, &many), "%s: threads=1 fails with '%s' (%s), threads=%s with '%s' (%s)", nm,
                  one.err.msg, one.err.field, threads[t], many.err.msg, many.err.field);
        }
        outcome_free(&many);
    }
    outcome_free(&one);
    if (one.st != RA_OK) return;
    /* the shared limits, tight enough that the bigger files exceed them */
    static const char *const lim[][2] = {{"max_samples", "300"}, {"max_keys", "60"}, {"memory_limit", "65536"}};
    for (int l = 0; l < 3; l++) {
        outcome a = load_with(d, n, path, body, "1", lim[l][0], lim[l][1], false);
        outcome b = load_with(d, n, path, body, "4", lim[l][0], lim[l][1], true);
        if (l < 2)
            CHECK(a.st == b.st, "%s: %s=%s gives '%s' with threads=1, '%s' with threads=4", nm, lim[l][0], lim[l][1],
                  ra_status_name(a.st), ra_status_name(b.st));
        else /* each worker's arena has its own partly used blocks: near the limit either may pass */
            CHECK((a.st == RA_OK || a.st == RA_ERR_NO_MEMORY) && (b.st == RA_OK || b.st == RA_ERR_NO_MEMORY),
                  "%s: memory_limit=%s gives '%s' with threads=1, '%s' with threads=4", nm, lim[l][1],
                  ra_status_name(a.st), ra_status_name(b.st));
        if (a.st == RA_OK && b.st == RA_OK)
            CHECK(a.size == b.size && !memcmp(a.dump, b.dump, a.size), "%s: %s=%s: scenes differ", nm, lim[l][0],
                  lim[l][1]);
        if (l < 2 && a.st == RA_ERR_LIMIT) {
            g_limit_cases++;
            CHECK(!strcmp(a.err.field, lim[l][0]) && !strcmp(b.err.field, lim[l][0]),
                  "%s: %s exceeded names '%s' with threads=1, '%s' with threads=4", nm, lim[l][0], a.err.field,
                  b.err.field);
        }
        outcome_free(&a);
        outcome_free(&b);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_parallel FIXTURE_DIR_OR_FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            fx_for_each_fixture(1, &argv[i], check_file);
            continue;
        }
        uint8_t *data;
        size_t size;
        ra_error e;
        ra_error_clear(&e);
        CHECK(ra_read_file(argv[i], &data, &size, &e) == RA_OK, "cannot read %s", argv[i]);
        if (e.code != RA_OK) continue;
        check_file(data, size, argv[i], argv[i], false);
        free(data);
    }
    CHECK(g_loaded >= 40, "only %ld files loaded", g_loaded);
    CHECK(g_compared_src >= 40, "only %ld models compared", g_compared_src);
    CHECK(g_limit_cases >= 10, "only %ld files ran past max_samples or max_keys", g_limit_cases);
    CHECK(g_movie_errors >= 40, "only %ld changed movies failed to load", g_movie_errors);
    printf("parallel bake: %ld files, %ld loaded; %ld bytes of scene dump equal with threads=1, 2 and 5, %ld models "
           "with threads=1 and 2; %ld limit cases; %ld changed movies failing alike\n",
           g_files, g_loaded, g_compared_bytes, g_compared_src, g_limit_cases, g_movie_errors);
    return ra_test_finish("test_parallel");
}
