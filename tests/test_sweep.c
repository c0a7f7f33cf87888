/* Corruption sweep: every prefix of every fixture, and every single-byte
 * change (+1, -1, 0x00, 0xFF) of every byte, either loads (read, the bytes
 * freed, then the scene built, as the Assimp importer does; and then the scene
 * passes ra_scene_check and can be posed) or fails with a format, a message
 * and an offset inside the file.  NIFF (big-endian) and Homeworld (little-
 * endian) files are made of 4-byte words: there the changes go to each
 * word's top and bottom byte (every field gets 0x00/0xFF at the top, +1/-1 at
 * the bottom), and the prefixes end on every even byte.  Keys are baked
 * coarsely (key_tolerance=1e-3, sample_rate=10): the sweep is about reading
 * and scene building, not the baker's precision.  A fixture above SWEEP_WHOLE
 * bytes (lego_island/deep.ani: 128 copies of one node layout) is swept on its
 * first and last SWEEP_EDGE bytes, where its header, first nodes and end are.  Run under ASan/UBSan in CI: no crash, no
 * leak, no undefined behaviour. */
#include <string.h>

#include "ra_fixture.h"

static long g_cases, g_loaded, g_failed;

static void one(const uint8_t *d, size_t n, bool body, const char *name, size_t at, int kind)
{
    ra_options o;
    ra_options_init(&o);
    if (body) ra_options_add(&o, "format", "lego_ani_body");
    /* only keys the format declares: an undeclared one refuses the load before the bytes are read */
    const ra_format *f = body ? ra_format_find("lego_ani_body") : ra_format_detect(d, n, name);
    static const char *const kv[][2] = {
        {"cinf", "none"}, /* no file system search per case */
        {"key_tolerance", "1e-3"},
        {"sample_rate", "10"},
    };
    for (size_t k = 0; f && k < sizeof kv / sizeof kv[0]; k++)
        if (ra_option_find(f, kv[k][0])) ra_options_add(&o, kv[k][0], kv[k][1]);
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = NULL;
    /* as the Assimp importer loads: read, drop the bytes, bake.  The copy is
     * scribbled over and freed in between, so a document that kept a pointer
     * into the file's bytes reads garbage or (under ASan) freed memory. */
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, d, n);
    ra_status st = ra_document_read(copy, n, name, &o, &doc, &e);
    memset(copy, 0xA5, n);
    free(copy);
    if (st == RA_OK && (st = ra_document_build_scene(doc, &e)) != RA_OK) {
        ra_document_free(doc);
        doc = NULL;
    }
    g_cases++;
    if (st == RA_OK) {
        g_loaded++;
        ra_mat4 *w = malloc((doc->scene.node_count ? doc->scene.node_count : 1) * sizeof *w);
        for (size_t a = 0; a < (doc->scene.animation_count ? doc->scene.animation_count : 1); a++) {
            double dur = a < doc->scene.animation_count ? doc->scene.animations[a].duration : 0;
            for (int k = 0; k <= 4; k++) {
                ra_error e2;
                ra_error_clear(&e2);
                ra_document_pose(doc, a, dur * k / 4, w, &e2);
            }
        }
        free(w);
        ra_document_free(doc);
        return;
    }
    g_failed++;
    CHECK(doc == NULL, "%s: failed load returned a document", name);
    CHECK(e.msg[0] && e.format && e.format[0], "%s (%d at %zu): failure without a message", name, kind, at);
    CHECK(e.offset == RA_NO_OFFSET || e.offset <= n, "%s (%d at %zu): error offset %llu outside %zu bytes", name, kind,
          at, (unsigned long long)e.offset, n);
}

#define SWEEP_WHOLE 8192
#define SWEEP_EDGE 512

static bool swept(size_t i, size_t size) { return size <= SWEEP_WHOLE || i < SWEEP_EDGE || i >= size - SWEEP_EDGE; }

/* 0: bytes; 1: big-endian words (NIFF); 2: little-endian words (Homeworld) */
static int word_format(const char *nm)
{
    const char *x = strrchr(nm, '.');
    if (x && (!strcmp(x, ".niff") || !strcmp(x, ".nif"))) return 1;
    return x && !strcmp(x, ".mad") ? 2 : 0;
}

static void sweep_file(const uint8_t *data, size_t size, const char *path, const char *nm, bool body)
{
    (void)path;
    int wf = word_format(nm);
    bool words = wf != 0;
    size_t top = wf == 2 ? 3 : 0; /* the byte that gets 0x00 and 0xFF; the other end gets +1 and -1 */
    /* every prefix, in a buffer of exactly that size so ASan sees overreads */
    for (size_t n = 0; n < size; n += words ? 2 : 1) {
        if (!swept(n, size)) continue;
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, data, n);
        one(p, n, body, nm, n, 0);
        free(p);
    }
    uint8_t *m = malloc(size);
    for (size_t i = 0; i < size; i++) {
        if (!swept(i, size)) continue;
        static const int kinds[4] = {1, -1, 0x100, 0x1FF};
        for (int k = 0; k < 4; k++) {
            if (words && (i % 4 == 1 || i % 4 == 2 || (i % 4 == top) != (k >= 2))) continue;
            memcpy(m, data, size);
            if (kinds[k] == 0x100) m[i] = 0;
            else if (kinds[k] == 0x1FF) m[i] = 0xFF;
            else m[i] = (uint8_t)(m[i] + kinds[k]);
            one(m, size, body, nm, i, kinds[k]);
        }
    }
    free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_sweep FIXTURE_DIR\n");
        return 2;
    }
    int files = fx_for_each_fixture(argc - 1, argv + 1, sweep_file);
    CHECK(files >= 10 * (argc - 1), "fixtures found: %d", files);
    printf("files: %d, sweep cases: %ld (loaded %ld, refused %ld)\n", files, g_cases, g_loaded, g_failed);
    return ra_test_finish("test_sweep");
}
