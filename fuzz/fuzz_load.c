/* libFuzzer harness: one format's read + to_scene (ra_document_load with the
 * format forced), then the scene invariants, poses at both ends and the
 * middle of every animation, and the source dump.  Built once per format
 * with RA_FUZZ_FORMATS, a comma-separated list of format ids that each input
 * is loaded as (see fuzz/CMakeLists.txt).  The load limits are the
 * defaults except memory_limit (64 MiB: a hostile file must not need more). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/ra_document.h"

#ifndef RA_FUZZ_FORMATS
#error "RA_FUZZ_FORMATS must name the formats to load"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load_as(const uint8_t *data, size_t size, const char *format)
{
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "format", format);
    ra_options_add(&o, "memory_limit", "67108864");
    /* no file system search for a CINF; only where the format declares the key (else every load is refused) */
    if (ra_option_find(ra_format_find(format), "cinf")) ra_options_add(&o, "cinf", "none");
    /* nor for a Metroid character's model and skin */
    if (ra_option_find(ra_format_find(format), "cmdl")) ra_options_add(&o, "cmdl", "none");
    if (ra_option_find(ra_format_find(format), "cskr")) ra_options_add(&o, "cskr", "none");
    /* nor for a LEGO Island WORLD.WDB beside an animation */
    if (ra_option_find(ra_format_find(format), "wdb")) ra_options_add(&o, "wdb", "none");
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = NULL;
    ra_status st = ra_document_load(data, size, "fuzz", &o, &doc, &e);
    if (st != RA_OK) {
        /* a refusal must say what and where */
        if (doc || !e.msg[0] || !e.format) abort();
        if (e.offset != RA_NO_OFFSET && e.offset > size) abort();
        return;
    }
    ra_error ce;
    ra_error_clear(&ce);
    if (ra_scene_check(&doc->scene, &ce) != RA_OK) {
        fprintf(stderr, "scene invariant broken: %s\n", ce.msg);
        abort();
    }
    const ra_scene *s = &doc->scene;
    ra_mat4 *w = malloc((s->node_count ? s->node_count : 1) * sizeof *w);
    if (!w) abort();
    size_t na = s->animation_count ? s->animation_count : 1;
    for (size_t a = 0; a < na; a++) {
        double d = a < s->animation_count ? s->animations[a].duration : 0;
        for (int k = 0; k <= 2; k++) {
            ra_error pe;
            ra_error_clear(&pe);
            ra_document_pose(doc, a, d * k / 2, w, &pe);
            ra_scene_sample_world(s, a, d * k / 2, w);
        }
    }
    free(w);
    ra_document_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char formats[] = RA_FUZZ_FORMATS;
    for (char *f = strtok(formats, ","); f; f = strtok(NULL, ",")) load_as(data, size, f);
    return 0;
}
