/* Allocation failure: every allocation of a load fails in turn.  For each
 * fixture that loads, the load is first counted (N heap calls, nothing live
 * after ra_document_free), then run N times with the k-th allocation made to
 * fail (k = 1..N).  Each must end in RA_ERR_NO_MEMORY with the format and a
 * message, return no document, and leave no block of the library's heap
 * live; ASan's leak checker watches the same in the sanitizer build.  Every
 * fixture is loaded so twice: as ra_document_load does, and with
 * free_bulk_early (the Assimp importer's and the CLI convert's way, where the
 * bake frees the model's records as it goes). */
#include <string.h>

#include "ra_fixture.h"

static long g_files, g_runs, g_early_runs;
static uint64_t g_most;
static char g_most_name[256];

static ra_status load(const uint8_t *d, size_t n, const char *path, bool body, bool early, ra_document **doc,
                      ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    if (body) ra_options_add(&o, "format", "lego_ani_body");
    return fx_load_with(d, n, path, &o, early, doc, e);
}

static void check_load(const uint8_t *d, size_t n, const char *path, const char *nm, bool body, bool early)
{
    ra_document *doc;
    ra_error e;
    ra_heap_reset();
    ra_status st = load(d, n, path, body, early, &doc, &e);
    ra_document_free(doc);
    ra_heap_stats h = ra_heap_get();
    CHECK(h.live_blocks == 0 && h.live_bytes == 0, "%s: %lld blocks (%lld bytes) live after the load was freed", nm,
          (long long)h.live_blocks, (long long)h.live_bytes);
    if (st != RA_OK) return; /* the refused fixtures: their error paths are the sweep's */
    g_files += !early;
    uint64_t total = h.allocations;
    if (total > g_most) {
        g_most = total;
        snprintf(g_most_name, sizeof g_most_name, "%s", nm);
    }
    long bad = 0;
    for (uint64_t k = 1; k <= total; k++) {
        ra_heap_reset();
        ra_heap_fail_nth(k);
        st = load(d, n, path, body, early, &doc, &e);
        h = ra_heap_get();
        g_runs++;
        g_early_runs += early;
        bool clean = st == RA_ERR_NO_MEMORY && doc == NULL && e.msg[0] && e.format && h.failures == 1;
        if (doc) ra_document_free(doc);
        h = ra_heap_get();
        if (!clean || h.live_blocks != 0) {
            if (bad++ < 3) {
                char msg[512];
                ra_error_format(&e, msg, sizeof msg);
                CHECK(0, "%s: allocation %llu of %llu failed: status %s, document %s, %lld blocks live after: %s", nm,
                      (unsigned long long)k, (unsigned long long)total, ra_status_name(st), doc ? "returned" : "none",
                      (long long)h.live_blocks, msg);
            }
        }
    }
    CHECK(bad == 0, "%s%s: %ld of %llu failed allocations handled badly", nm, early ? " (free_bulk_early)" : "", bad,
          (unsigned long long)total);
    printf("%-28s %5llu allocations%s, each failed in turn: %s\n", nm, (unsigned long long)total,
           early ? " (free_bulk_early)" : "", bad ? "FAIL" : "ok");
}

static void check_file(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    check_load(d, n, path, nm, body, false);
    check_load(d, n, path, nm, body, true);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_alloc FIXTURE_DIR...\n");
        return 2;
    }
    fx_for_each_fixture(argc - 1, argv + 1, check_file);
    CHECK(g_files >= 40, "only %ld fixtures loaded", g_files);
    CHECK(g_early_runs > 0, "no load with free_bulk_early");
    printf("fixtures: %ld loaded; %ld loads with one allocation failed (%ld of them with free_bulk_early); most "
           "allocations in one load: %llu (%s)\n",
           g_files, g_runs, g_early_runs, (unsigned long long)g_most, g_most_name);
    return ra_test_finish("test_alloc");
}
