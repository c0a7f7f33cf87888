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

#include "retroanim/homeworld.h"
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

/* "homeworld_geo": the ship geometry reader alone (a .geo only comes beside a
 * .mad, so no format loads it on its own); a refusal must say what and
 * where, and what it accepts must keep every index inside its lists. */
static void load_geo(const uint8_t *data, size_t size)
{
    ra_arena *ar = ra_arena_create(64u << 20);
    if (!ar) abort();
    hw_geo g;
    ra_error e;
    ra_error_clear(&e);
    if (hw_geo_read(data, size, ar, &g, &e) != RA_OK) {
        if (!e.msg[0] || !e.format || (e.offset != RA_NO_OFFSET && e.offset > size)) abort();
        ra_arena_destroy(ar);
        return;
    }
    for (uint32_t i = 0; i < g.object_count; i++) {
        const hw_geo_object *o = &g.objects[i];
        if (o->mother >= (int32_t)g.object_count) abort();
        for (int32_t k = 0; k < o->polygon_count; k++) {
            const hw_geo_polygon *q = &o->polygons[k];
            if (q->material >= g.material_count || q->face_normal < 0 || q->face_normal >= o->normal_count) abort();
            for (int c = 0; c < 3; c++) {
                if (q->v[c] >= o->vertex_count) abort();
                int32_t n = o->vertices[q->v[c]].normal;
                if (n >= o->normal_count || (n >= 0 && !(o->normals[n].n[0] == o->normals[n].n[0]))) abort();
            }
        }
    }
    ra_arena_destroy(ar);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char formats[] = RA_FUZZ_FORMATS;
    for (char *f = strtok(formats, ","); f; f = strtok(NULL, ","))
        if (!strcmp(f, "homeworld_geo")) load_geo(data, size);
        else load_as(data, size, f);
    return 0;
}
