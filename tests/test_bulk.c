/* ra_document_free_bulk on every fixture of every format (archives too):
 * the scene must not point into the model's bulk arrays (the keys as
 * stored), which the Assimp importer frees before it copies the scene out.
 * For each fixture that loads: the scene's JSON dump before and after the
 * bulk is freed is byte-identical (under AddressSanitizer a scene pointer
 * into a freed chunk is a use-after-free here), the arena shrinks by the
 * bulk's bytes, pose, the source dump and another bake are refused with a
 * usage error, and freeing twice is harmless.  Each format with bulk arrays
 * (LEGO Island, Metroid Prime, World of Goo, Homeworld, NIFF) must free
 * some on its fixtures.
 *
 * The same file baked with free_bulk_early (the bake frees each bulk array
 * after the last job that reads it: NIFF's AnimGroup records, Metroid
 * Prime's bone keys, also inside archives), on one thread and on two, must
 * give the same dump (under AddressSanitizer a job reading records freed
 * too soon is a use-after-free) and leave no bulk array in the arena. */
#include <string.h>

#include "ra_fixture.h"

#define FORMATS 16
static struct {
    const char *id;
    long files;
    size_t freed;
} g_fmt[FORMATS];
static long g_files;

static void tally(const char *id, size_t freed)
{
    for (int i = 0; i < FORMATS; i++) {
        if (!g_fmt[i].id) g_fmt[i].id = id;
        if (strcmp(g_fmt[i].id, id) != 0) continue;
        g_fmt[i].files++;
        g_fmt[i].freed += freed;
        return;
    }
    CHECK(false, "more than %d formats", FORMATS);
}

static size_t freed_by(const char *id)
{
    for (int i = 0; i < FORMATS && g_fmt[i].id; i++)
        if (!strcmp(g_fmt[i].id, id)) return g_fmt[i].freed;
    return 0;
}

static void check_file(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    ra_document *doc = NULL;
    if (fx_load_opt(d, n, path, body, NULL, NULL, &doc, NULL) != RA_OK) return; /* the refused fixtures */
    g_files++;
    ra_error e;
    char *before = NULL, *after = NULL;
    size_t nb = 0, na = 0;
    CHECK(ra_document_dump(doc, 0, &before, &nb, &e) == RA_OK, "%s: dump", nm);
    size_t used = ra_arena_used(doc->arena);
    ra_document_free_bulk(doc);
    size_t left = ra_arena_used(doc->arena);
    ra_document_free_bulk(doc); /* again: nothing more */
    CHECK(ra_arena_used(doc->arena) == left, "%s: a second free_bulk changed the arena", nm);
    CHECK(left <= used, "%s: the arena grew from %zu to %zu bytes", nm, used, left);
    tally(doc->format->id, used - left);
    CHECK(ra_document_dump(doc, 0, &after, &na, &e) == RA_OK, "%s: dump after free_bulk", nm);
    CHECK(before && after && na == nb && memcmp(before, after, nb) == 0,
          "%s: the scene's dump changed when the bulk was freed (%zu -> %zu bytes)", nm, nb, na);
    ra_string_free(after);
    for (int threads = 1; threads <= 2; threads++) {
        ra_options o;
        ra_options_init(&o);
        if (body) ra_options_add(&o, "format", "lego_ani_body");
        ra_options_add(&o, "threads", threads == 1 ? "1" : "2");
        ra_document *early = NULL;
        CHECK(fx_load_with(d, n, path, &o, true, &early, &e) == RA_OK,
              "%s: load with free_bulk_early, %d thread(s): %s", nm, threads, e.msg);
        if (!early) continue;
        CHECK(early->bulk_freed, "%s: the bulk is not freed after a bake with free_bulk_early", nm);
        ra_key_chunks *kept = ra_arena_take_bulk(early->arena);
        CHECK(kept && ra_key_chunks_left(kept) == 0,
              "%s: a bake with free_bulk_early left %zu bulk chunk(s) in the arena", nm, ra_key_chunks_left(kept));
        ra_key_chunks_free(kept);
        char *e_dump = NULL;
        size_t ne = 0;
        CHECK(ra_document_dump(early, 0, &e_dump, &ne, &e) == RA_OK, "%s: dump (free_bulk_early)", nm);
        CHECK(e_dump && ne == nb && memcmp(before, e_dump, nb) == 0,
              "%s: the scene baked with free_bulk_early (%d thread(s)) differs (%zu -> %zu bytes)", nm, threads, nb,
              ne);
        ra_string_free(e_dump);
        ra_document_free(early);
    }
    ra_string_free(before);

    /* what needs the model is refused, with a usage error */
    ra_mat4 *w = malloc((doc->scene.node_count ? doc->scene.node_count : 1) * sizeof *w);
    if (doc->format->pose && w)
        CHECK(ra_document_pose(doc, 0, 0.0, w, &e) == RA_ERR_USAGE, "%s: pose after free_bulk: %s", nm, e.msg);
    free(w);
    char *src = NULL;
    if (doc->format->dump_source)
        CHECK(ra_document_dump(doc, RA_DUMP_SOURCE, &src, NULL, &e) == RA_ERR_USAGE && !src,
              "%s: source dump after free_bulk", nm);
    ra_string_free(src);
    CHECK(ra_document_build_scene(doc, &e) == RA_ERR_USAGE, "%s: a second bake after free_bulk", nm);
    ra_document_free(doc);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_bulk FIXTURE_DIR...\n");
        return 2;
    }
    fx_for_each_fixture(argc - 1, argv + 1, check_file);
    CHECK(g_files >= 50, "only %ld fixtures loaded", g_files);
    static const char *const with_bulk[] = {"lego_ani",  "metroid_anim",  "wog_anim",
                                            "wog_movie", "homeworld_mad", "niff"};
    for (size_t i = 0; i < sizeof with_bulk / sizeof *with_bulk; i++)
        CHECK(freed_by(with_bulk[i]) > 0, "%s: no bulk bytes freed on any fixture", with_bulk[i]);
    for (int i = 0; i < FORMATS && g_fmt[i].id; i++)
        printf("%-16s %3ld fixtures, %8zu bulk bytes freed\n", g_fmt[i].id, g_fmt[i].files, g_fmt[i].freed);
    printf("fixtures: %ld loaded\n", g_files);
    return ra_test_finish("test_bulk");
}
