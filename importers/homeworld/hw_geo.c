/* Homeworld ship geometry (.geo / .peo, "RMF97ba" / "RMF99ba"): the reader.
 * Spec: docs/formats/homeworld.md §5.  Every pointer field is a byte offset
 * from the file's start; object links point at object records (68 + 112 i). */
#include <math.h>
#include <string.h>

#include "retroanim/homeworld.h"

#define FMT "homeworld_geo"

static uint32_t u32(const uint8_t *d, size_t o) { return ra_load_u32le(d + o); }
static uint16_t u16(const uint8_t *d, size_t o) { return (uint16_t)(d[o] | d[o + 1] << 8); }
static float f32(const uint8_t *d, size_t o) { return ra_load_f32le(d + o); }

/* A NUL-terminated string at off (0: none) */
static ra_status name_at(const uint8_t *d, size_t size, uint32_t off, size_t at, const char *field, ra_arena *ar,
                         const char **out, ra_error *err)
{
    *out = NULL;
    if (!off) return RA_OK;
    if (off >= size) return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, field, "string offset %u is past the file", off);
    const uint8_t *end = memchr(d + off, 0, size - off);
    if (!end) return ra_fail(err, RA_ERR_TRUNCATED, FMT, at, field, "the string at %u has no NUL", off);
    *out = ra_arena_strndup(ar, (const char *)d + off, (size_t)(end - (d + off)));
    return *out ? RA_OK : ra_fail_nomem(err, FMT);
}

/* count records of `rec` bytes at off lie inside the file */
static ra_status span(size_t size, uint32_t off, int64_t count, size_t rec, size_t at, const char *field, ra_error *err)
{
    if (count < 0) return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, field, "negative count %lld", (long long)count);
    if (count == 0) return RA_OK;
    if (off < HW_GEO_HEADER_SIZE || off > size || (uint64_t)count > (size - off) / rec)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, at, field,
                       "%lld records of %zu bytes at %u run past the %zu-byte file", (long long)count, rec, off, size);
    return RA_OK;
}

/* an object link: 0 or 68 + 112 i with i < n; -1 for none */
static ra_status link_at(uint32_t v, uint32_t n, size_t at, const char *field, int32_t *out, ra_error *err)
{
    *out = -1;
    if (!v) return RA_OK;
    if (v < HW_GEO_HEADER_SIZE || (v - HW_GEO_HEADER_SIZE) % HW_GEO_OBJECT_SIZE ||
        (v - HW_GEO_HEADER_SIZE) / HW_GEO_OBJECT_SIZE >= n)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, field, "%u is not an object record (68 + 112 i, i < %u)", v, n);
    *out = (int32_t)((v - HW_GEO_HEADER_SIZE) / HW_GEO_OBJECT_SIZE);
    return RA_OK;
}

/* Objects whose three lists are one earlier object's (the same offsets and
 * counts: a part instanced by its writer) share its decoded arrays, found by
 * a hash of the six words.  Returns the earlier object, or -1 after noting
 * object i as the first of its lists. */
typedef struct list_set {
    uint32_t (*key)[6]; /* per object */
    int32_t *slot;      /* object index, -1: empty */
    size_t mask;
} list_set;

static int32_t same_lists(list_set *ls, uint32_t i)
{
    const uint32_t *k = ls->key[i];
    uint64_t h = 1469598103934665603ull;
    for (int w = 0; w < 6; w++) h = (h ^ k[w]) * 1099511628211ull;
    for (size_t at = (size_t)(h ^ h >> 29) & ls->mask;; at = (at + 1) & ls->mask) {
        int32_t j = ls->slot[at];
        if (j < 0) {
            ls->slot[at] = (int32_t)i;
            return -1;
        }
        if (!memcmp(ls->key[j], k, sizeof ls->key[j])) return j;
    }
}

ra_status hw_geo_read(const uint8_t *d, size_t size, ra_arena *ar, hw_geo *g, ra_error *err)
{
    memset(g, 0, sizeof *g);
    if (size < HW_GEO_HEADER_SIZE)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, 0, "header", "%zu bytes: shorter than the 68-byte header", size);
    if (memcmp(d, "RMF97ba", 8) && memcmp(d, "RMF99ba", 8))
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "identifier", "not \"RMF97ba\" or \"RMF99ba\"");
    g->version = u32(d, 8);
    uint32_t npub = u32(d, 24), nloc = u32(d, 28), oloc = u32(d, 36), nobj = u32(d, 40);
    if ((uint64_t)npub + nloc > HW_GEO_MAX_COUNT)
        return ra_fail(err, RA_ERR_LIMIT, FMT, 24, "nPublicMaterials", "%u + %u materials", npub, nloc);
    g->material_count = npub + nloc;
    ra_status rs = span(size, oloc, g->material_count, HW_GEO_MATERIAL_SIZE, 36, "oLocalMaterial", err);
    if (rs == RA_OK) rs = span(size, HW_GEO_HEADER_SIZE, nobj, HW_GEO_OBJECT_SIZE, 40, "nPolygonObjects", err);
    if (rs != RA_OK) return rs;
    if (nobj > HW_GEO_MAX_COUNT) return ra_fail(err, RA_ERR_LIMIT, FMT, 40, "nPolygonObjects", "%u objects", nobj);
    g->object_count = nobj;
    g->materials = ra_arena_array(ar, g->material_count ? g->material_count : 1, sizeof *g->materials);
    g->objects = ra_arena_array(ar, nobj ? nobj : 1, sizeof *g->objects);
    if (!g->materials || !g->objects) return ra_fail_nomem(err, FMT);
    for (uint32_t i = 0; i < g->material_count; i++) {
        size_t at = oloc + (size_t)i * HW_GEO_MATERIAL_SIZE;
        hw_geo_material *m = &g->materials[i];
        m->ambient = u32(d, at + 4), m->diffuse = u32(d, at + 8), m->specular = u32(d, at + 12);
        m->flags = u16(d, at + 24);
        rs = name_at(d, size, u32(d, at), at, "material.oName", ar, &m->name, err);
        if (rs == RA_OK) rs = name_at(d, size, u32(d, at + 20), at + 20, "material.oTexture", ar, &m->texture, err);
        if (rs != RA_OK) return rs;
    }
    /* lists may be shared: an object whose lists are all another's takes its arrays; what other
     * overlaps make the reader decode is bounded */
    double decoded = 0;
    list_set ls = {ra_arena_array(ar, nobj ? nobj : 1, sizeof *ls.key), NULL, 0};
    size_t cap = 16;
    while (cap < 2 * (size_t)nobj) cap *= 2;
    ls.slot = ra_arena_array(ar, cap, sizeof *ls.slot);
    ls.mask = cap - 1;
    if (!ls.key || !ls.slot) return ra_fail_nomem(err, FMT);
    memset(ls.slot, 0xFF, cap * sizeof *ls.slot);
    for (uint32_t i = 0; i < nobj; i++) {
        size_t at = HW_GEO_HEADER_SIZE + (size_t)i * HW_GEO_OBJECT_SIZE;
        hw_geo_object *o = &g->objects[i];
        o->offset = (uint32_t)at;
        rs = name_at(d, size, u32(d, at), at, "object.oName", ar, &o->name, err);
        if (rs != RA_OK) return rs;
        o->flags = d[at + 4];
        int32_t nv = (int32_t)u32(d, at + 8), nfn = (int32_t)u32(d, at + 12), nvn = (int32_t)u32(d, at + 16),
                np = (int32_t)u32(d, at + 20);
        if (nfn < 0 || nvn < 0)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 12, "nFaceNormals", "negative normal count");
        int64_t nn = (int64_t)nfn + nvn;
        rs = span(size, u32(d, at + 24), nv, 16, at + 24, "oVertexList", err);
        if (rs == RA_OK) rs = span(size, u32(d, at + 28), nn, 16, at + 28, "oNormalList", err);
        if (rs == RA_OK) rs = span(size, u32(d, at + 32), np, 40, at + 32, "oPolygonList", err);
        if (rs == RA_OK) rs = link_at(u32(d, at + 36), nobj, at + 36, "oMother", &o->mother, err);
        if (rs == RA_OK) rs = link_at(u32(d, at + 40), nobj, at + 40, "oDaughter", &o->daughter, err);
        if (rs == RA_OK) rs = link_at(u32(d, at + 44), nobj, at + 44, "oSister", &o->sister, err);
        if (rs != RA_OK) return rs;
        for (int k = 0; k < 16; k++) {
            float v = f32(d, at + 48 + 4 * (size_t)k);
            if (!isfinite(v))
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 48 + 4 * (size_t)k, "localMatrix", "not finite");
            o->local.m[k % 4][k / 4] = v; /* column-major on disk */
        }
        o->vertex_count = nv, o->normal_count = (int32_t)nn, o->polygon_count = np;
        const uint32_t key[6] = {u32(d, at + 24), (uint32_t)nv,    u32(d, at + 28),
                                 (uint32_t)nn,    u32(d, at + 32), (uint32_t)np};
        memcpy(ls.key[i], key, sizeof key);
        int32_t same = same_lists(&ls, i);
        if (same >= 0) { /* (checked when they were decoded: every index is bound by these counts) */
            o->vertices = g->objects[same].vertices;
            o->normals = g->objects[same].normals;
            o->polygons = g->objects[same].polygons;
            continue;
        }
        decoded += 16.0 * nv + 16.0 * (double)nn + 40.0 * np;
        if (decoded > (double)size * HW_MAD_MAX_SHARING + 4096)
            return ra_fail(err, RA_ERR_LIMIT, FMT, at, "oVertexList",
                           "overlapping lists multiply the data past %u times the file", HW_MAD_MAX_SHARING);
        o->vertices = ra_arena_array(ar, nv ? (size_t)nv : 1, sizeof *o->vertices);
        o->normals = ra_arena_array(ar, nn ? (size_t)nn : 1, sizeof *o->normals);
        o->polygons = ra_arena_array(ar, np ? (size_t)np : 1, sizeof *o->polygons);
        if (!o->vertices || !o->normals || !o->polygons) return ra_fail_nomem(err, FMT);
        for (int32_t k = 0; k < nn; k++) {
            size_t p = u32(d, at + 28) + 16 * (size_t)k;
            for (int c = 0; c < 3; c++) {
                o->normals[k].n[c] = f32(d, p + 4 * (size_t)c);
                if (!isfinite(o->normals[k].n[c]))
                    return ra_fail(err, RA_ERR_BAD_VALUE, FMT, p + 4 * (size_t)c, "normal", "not finite");
            }
        }
        for (int32_t k = 0; k < nv; k++) {
            size_t p = u32(d, at + 24) + 16 * (size_t)k;
            hw_geo_vertex *v = &o->vertices[k];
            for (int c = 0; c < 3; c++) {
                v->p[c] = f32(d, p + 4 * (size_t)c);
                if (!isfinite(v->p[c]))
                    return ra_fail(err, RA_ERR_BAD_VALUE, FMT, p + 4 * (size_t)c, "vertex", "not finite");
            }
            v->normal = (int32_t)u32(d, p + 12);
            if (v->normal >= nn || v->normal < -1 || (v->normal == 0xFFFF && nn <= 0xFFFF)) v->normal = -1;
        }
        for (int32_t k = 0; k < np; k++) {
            size_t p = u32(d, at + 32) + 40 * (size_t)k;
            hw_geo_polygon *q = &o->polygons[k];
            for (int c = 0; c < 3; c++) {
                q->v[c] = u16(d, p + 4 + 2 * (size_t)c);
                if (q->v[c] >= nv)
                    return ra_fail(err, RA_ERR_BAD_VALUE, FMT, p + 4 + 2 * (size_t)c, "polygon.iV",
                                   "vertex %u of an object with %d", q->v[c], nv);
                q->st[c][0] = f32(d, p + 12 + 8 * (size_t)c);
                q->st[c][1] = f32(d, p + 16 + 8 * (size_t)c);
                if (!isfinite(q->st[c][0]) || !isfinite(q->st[c][1]))
                    return ra_fail(err, RA_ERR_BAD_VALUE, FMT, p + 12 + 8 * (size_t)c, "polygon.st", "not finite");
            }
            q->face_normal = (int32_t)u32(d, p);
            if (q->face_normal < 0 || q->face_normal >= nn)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, p, "polygon.iFaceNormal", "normal %d of %lld",
                               q->face_normal, (long long)nn);
            q->material = u16(d, p + 10);
            if (q->material >= g->material_count)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, p + 10, "polygon.iMaterial", "material %u of %u",
                               q->material, g->material_count);
        }
    }
    /* the tree from oMother: no cycle, bounded depth */
    for (uint32_t i = 0; i < nobj; i++) {
        int32_t at = g->objects[i].mother;
        uint32_t depth = 0;
        while (at >= 0) {
            if (++depth > HW_GEO_MAX_DEPTH || at == (int32_t)i)
                return ra_fail(err, depth > HW_GEO_MAX_DEPTH ? RA_ERR_LIMIT : RA_ERR_BAD_VALUE, FMT,
                               g->objects[i].offset + 36, "oMother",
                               depth > HW_GEO_MAX_DEPTH ? "the hierarchy is deeper than %u"
                                                        : "the hierarchy has a cycle%.0u",
                               HW_GEO_MAX_DEPTH);
            at = g->objects[at].mother;
        }
    }
    return RA_OK;
}
