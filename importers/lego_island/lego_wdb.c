/* LEGO Island WORLD.WDB reader: the directory, the texture and part indexes
 * (built lazily, source by source, names and offsets only) and the ROIs
 * decoded into meshes (docs/formats/lego_island.md, "WORLD.WDB").
 *
 * Every read goes through a cursor over the file that ends where the blob
 * being read ends, so an offset or count that leaves its blob is refused
 * with the field and the byte offset.  A refusal is as small as the engine
 * allows (docs §12.2): a mesh whose corners cannot be built is left out
 * and a texture or part list that cannot be read is skipped, each with a
 * warning; the directory, a truncated blob and out of memory are errors. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "retroanim/lego_wdb.h"

#define FMT "lego_wdb"
#define ROI_MIN_BYTES 53u  /* name length, sphere, box, material length, sharedLods, numChildren */
#define MESH_MIN_BYTES 27u /* two u16, numTexIdx, colour, alpha, four u8, two name lengths */
#define TEX_MIN_BYTES 16u  /* name length, width, height, palette count */
#define REF_MIN_BYTES 12u  /* name length, data length, data offset */
#define MAX_NAME 1024u     /* longest name accepted */

/* where the lazy indexes look next (docs: textures and parts global first,
 * then the preferred world, then the others) */
typedef struct tex_entry {
    const char *name;
    uint64_t image_at; /* the image used (a '^' pair's second) */
    int32_t decoded;   /* index into textures, -1 not yet */
} tex_entry;

typedef struct part_entry {
    const char *name;
    uint64_t blob_end;
    uint64_t lods_at; /* the first LOD */
    uint32_t lod_count;
    const char *source; /* "global" or the world's name */
} part_entry;

struct lego_wdb_set {
    const uint8_t *data;
    size_t size;
    ra_arena *ar;
    ra_error *err;  /* of the call in progress */
    ra_scene *warn; /* where warnings go, or NULL */
    lego_wdb_dir dir;
    int64_t prefer; /* preferred world, -1 */
    ra_strmap tex_map, part_map;
    tex_entry *tex;
    size_t tex_count, tex_cap;
    part_entry *parts;
    size_t part_count, part_cap;
    size_t tex_step, part_step; /* the next source to index */
    /* the world holding the next world step of each (its position in
     * world_at's order) and the step its sources start at: steps only go
     * forward, so each is found from the last one's (a walk from the first
     * world per step made W worlds cost W^2) */
    size_t tex_k, tex_base, part_k, part_base;
    lego_wdb_texture *textures;
    size_t texture_count, texture_cap;
    const char **roots;     /* each model's root ROI name ("" unreadable), NULL not read yet */
    bool roi_lods_read;     /* roi_lods_map built */
    ra_strmap roi_lods_map; /* ROI name -> roi_lods + 1: model ROIs with LODs of their own */
    part_entry *roi_lods;
    size_t roi_lods_count, roi_lods_cap;
};

static bool nomem(lego_wdb_set *w) { return ra_fail_nomem(w->err, FMT) == RA_OK; }

/* A failure that leaves the rest readable: w->err becomes a warning about
 * `what` and is cleared; false when it was out of memory (kept). */
static bool tolerate(lego_wdb_set *w, const char *what)
{
    if (w->err->code == RA_ERR_NO_MEMORY) return false;
    if (w->warn) {
        char msg[RA_ERROR_TEXT_MAX];
        ra_error_format(w->err, msg, sizeof msg);
        ra_scene_warn(w->warn, "%s: %s", what, msg);
    }
    ra_error_clear(w->err);
    return true;
}

/* A cursor over the file that ends at `end`, placed at `at`. */
static void cursor_at(lego_wdb_set *w, ra_cursor *c, uint64_t at, uint64_t end)
{
    ra_cursor_init(c, w->data, (size_t)(end <= w->size ? end : w->size), FMT, w->err);
    c->pos = (size_t)(at <= c->size ? at : c->size);
}

/* u32 length + bytes: lower-cased, trailing NULs dropped, in the arena. */
static bool read_name(lego_wdb_set *w, ra_cursor *c, const char **out, const char *field)
{
    uint32_t n;
    if (!ra_rd_u32le(c, &n, field)) return false;
    if (n > MAX_NAME) return ra_cursor_fail(c, RA_ERR_LIMIT, c->pos - 4, field, "name of %u bytes", n);
    const uint8_t *p = ra_cursor_take(c, n, field);
    if (!p) return false;
    while (n && p[n - 1] == 0) n--;
    char *s = ra_arena_strndup(w->ar, (const char *)p, n);
    if (!s) return nomem(w);
    if (strcmp(field, "model.presenter") != 0) /* a class name: kept as written */
        for (char *q = s; *q; q++) *q = (char)tolower((unsigned char)*q);
    *out = s;
    return true;
}

/* ---- directory ---------------------------------------------------------------------------------- */
static bool read_ref(lego_wdb_set *w, ra_cursor *c, lego_wdb_ref *r, uint32_t world, bool model)
{
    r->at = c->pos;
    r->world = world;
    r->model = model;
    if (!read_name(w, c, &r->name, model ? "model.name" : "part.name")) return false;
    ra_rd_u32le(c, &r->size, model ? "model.data_length" : "part.data_length");
    if (!ra_rd_u32le(c, &r->offset, model ? "model.data_offset" : "part.data_offset")) return false;
    if (!ra_range_ok(w->size, r->offset, r->size))
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, model ? "model.data_offset" : "part.data_offset",
                              "blob of %u bytes at %u runs past the end of the file (%zu bytes)", r->size, r->offset,
                              w->size);
    if (!model) return true;
    if (!read_name(w, c, &r->presenter, "model.presenter")) return false;
    for (int i = 0; i < 3; i++) ra_rd_f32le(c, &r->location[i], "model.location");
    for (int i = 0; i < 3; i++) ra_rd_f32le(c, &r->direction[i], "model.direction");
    for (int i = 0; i < 3; i++) ra_rd_f32le(c, &r->up[i], "model.up");
    return ra_rd_u8(c, &r->visible, "model.visible");
}

static bool read_block(ra_cursor *c, uint64_t *at, uint64_t *size, const char *field)
{
    uint32_t n;
    if (!ra_rd_u32le(c, &n, field)) return false;
    *at = c->pos;
    *size = n;
    return ra_rd_skip(c, n, field);
}

static bool read_directory(lego_wdb_set *w)
{
    ra_cursor c;
    cursor_at(w, &c, 0, w->size);
    lego_wdb_dir *d = &w->dir;
    int32_t nw;
    if (!ra_rd_s32le(&c, &nw, "num_worlds")) return false;
    if (nw < 0) return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, 0, "num_worlds", "%d worlds", nw);
    if (!ra_cursor_check_count(&c, (uint64_t)nw, 12, "num_worlds")) return false;
    d->world_count = (uint32_t)nw;
    d->worlds = ra_arena_array(w->ar, d->world_count, sizeof *d->worlds);
    if (!d->worlds) return nomem(w);
    size_t pcap = 0, mcap = 0;
    for (uint32_t i = 0; i < d->world_count; i++) {
        lego_wdb_world *wd = &d->worlds[i];
        if (!read_name(w, &c, &wd->name, "world.name")) return false;
        int32_t n;
        if (!ra_rd_s32le(&c, &n, "world.num_parts")) return false;
        if (n < 0 || !ra_cursor_check_count(&c, (uint64_t)n, REF_MIN_BYTES, "world.num_parts"))
            return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, c.pos - 4, "world.num_parts", "%d parts", n);
        wd->first_part = (uint32_t)d->part_count;
        wd->part_count = (uint32_t)n;
        if (!ra_arena_reserve(w->ar, (void **)&d->parts, &pcap, d->part_count + (size_t)n, sizeof *d->parts, 16))
            return nomem(w);
        for (int32_t k = 0; k < n; k++)
            if (!read_ref(w, &c, &d->parts[d->part_count++], i, false)) return false;
        if (!ra_rd_s32le(&c, &n, "world.num_models")) return false;
        if (n < 0 || !ra_cursor_check_count(&c, (uint64_t)n, REF_MIN_BYTES + 41, "world.num_models"))
            return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, c.pos - 4, "world.num_models", "%d models", n);
        wd->first_model = (uint32_t)d->model_count;
        wd->model_count = (uint32_t)n;
        if (!ra_arena_reserve(w->ar, (void **)&d->models, &mcap, d->model_count + (size_t)n, sizeof *d->models, 16))
            return nomem(w);
        for (int32_t k = 0; k < n; k++)
            if (!read_ref(w, &c, &d->models[d->model_count++], i, true)) return false;
    }
    return read_block(&c, &d->textures_at, &d->textures_size, "global_textures_size") &&
           read_block(&c, &d->parts_at, &d->parts_size, "global_parts_size");
}

/* ---- texture index ---------------------------------------------------------------------------------- */
/* Skips one image, checking its header: its offset in *at. */
static bool skip_image(ra_cursor *c, uint64_t *at)
{
    *at = c->pos;
    uint32_t wd = 0, ht = 0, pc = 0;
    ra_rd_u32le(c, &wd, "image.width");
    ra_rd_u32le(c, &ht, "image.height");
    if (!ra_rd_u32le(c, &pc, "image.palette_count")) return false;
    if (wd > 65535 || ht > 65535) /* an empty image is read, and left out when used */
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, *at, "image.width", "image of %u x %u pixels", wd, ht);
    if (pc > 256)
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, "image.palette_count", "%u palette entries", pc);
    return ra_rd_skip(c, 3u * pc, "image.palette") && ra_rd_skip(c, (size_t)wd * ht, "image.pixels");
}

static bool add_texture_entry(lego_wdb_set *w, const char *name, uint64_t image_at, bool overwrite)
{
    uint32_t *slot = ra_strmap_slot(&w->tex_map, name);
    if (!slot) return nomem(w);
    if (*slot) {
        if (overwrite && w->tex[*slot - 1].decoded < 0) w->tex[*slot - 1].image_at = image_at;
        return true;
    }
    if (!ra_arena_reserve(w->ar, (void **)&w->tex, &w->tex_cap, w->tex_count + 1, sizeof *w->tex, 16)) return nomem(w);
    w->tex[w->tex_count] = (tex_entry){name, image_at, -1};
    *slot = (uint32_t)++w->tex_count;
    return true;
}

/* A texture list at `at` inside [.., end): kind 0 global (overwrite, no '^'
 * pairs), 1 part blob ('^' pairs), 2 model blob (skipTextures, '^' pairs). */
static bool index_texture_list(lego_wdb_set *w, uint64_t at, uint64_t end, int kind)
{
    ra_cursor c;
    cursor_at(w, &c, at, end);
    uint32_t n, skip = 0;
    if (!ra_rd_u32le(&c, &n, "textures.count")) return false;
    if (kind == 2 && !ra_rd_u32le(&c, &skip, "textures.skip")) return false;
    if (!ra_cursor_check_count(&c, n, TEX_MIN_BYTES, "textures.count")) return false;
    for (uint32_t i = 0; i < n; i++) {
        const char *name = NULL;
        uint64_t img = 0;
        if (!read_name(w, &c, &name, "texture.name") || !skip_image(&c, &img)) return false;
        if (kind && name[0] == '^') {
            name++; /* the default game shows the second image */
            if (!skip_image(&c, &img)) return false;
        }
        if (!skip && !add_texture_entry(w, name, img, kind == 0)) return false;
    }
    return true;
}

/* The offset of a part or model blob's texture list (blob-relative u32 at +rel). */
static bool blob_texture_list(lego_wdb_set *w, uint64_t start, uint64_t end, size_t rel, uint64_t *at)
{
    ra_cursor c;
    cursor_at(w, &c, start + rel, end);
    uint32_t off;
    if (!ra_rd_u32le(&c, &off, "texture_info_offset")) return false;
    if (off > end - start)
        return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, c.pos - 4, "texture_info_offset",
                              "offset %u past the blob's %llu bytes", off, (unsigned long long)(end - start));
    *at = start + off;
    return true;
}

/* World order of the lazy indexes: the preferred world first. */
static uint32_t world_at(const lego_wdb_set *w, size_t k)
{
    if (w->prefer < 0) return (uint32_t)k;
    if (k == 0) return (uint32_t)w->prefer;
    return (uint32_t)(k <= (size_t)w->prefer ? k - 1 : k);
}

/* Indexes the next texture source; false at the end or on an error. */
static bool index_next_textures(lego_wdb_set *w)
{
    const lego_wdb_dir *d = &w->dir;
    size_t step = w->tex_step++;
    if (step == 0) return index_texture_list(w, d->textures_at, d->textures_at + d->textures_size, 0);
    if (step == 1) {
        uint64_t at = 0;
        if (!d->parts_size) return true;
        return blob_texture_list(w, d->parts_at, d->parts_at + d->parts_size, 0, &at) &&
               index_texture_list(w, at, d->parts_at + d->parts_size, 1);
    }
    step -= 2;
    for (; w->tex_k < d->world_count; w->tex_k++) {
        const lego_wdb_world *wd = &d->worlds[world_at(w, w->tex_k)];
        size_t n = (size_t)wd->part_count + wd->model_count;
        if (step - w->tex_base >= n) {
            w->tex_base += n;
            continue;
        }
        step -= w->tex_base;
        const lego_wdb_ref *r = step < wd->part_count ? &d->parts[wd->first_part + step]
                                                      : &d->models[wd->first_model + step - wd->part_count];
        uint64_t at = 0, end = (uint64_t)r->offset + r->size;
        return blob_texture_list(w, r->offset, end, r->model ? 4 : 0, &at) &&
               index_texture_list(w, at, end, r->model ? 2 : 1);
    }
    w->tex_step--;
    return false;
}

static int32_t decode_texture(lego_wdb_set *w, tex_entry *t)
{
    if (t->decoded >= 0) return t->decoded;
    ra_cursor c;
    cursor_at(w, &c, t->image_at, w->size);
    uint32_t wd = 0, ht = 0, pc = 0;
    ra_rd_u32le(&c, &wd, "image.width");
    ra_rd_u32le(&c, &ht, "image.height");
    ra_rd_u32le(&c, &pc, "image.palette_count");
    const uint8_t *pal = ra_cursor_take(&c, 3u * pc, "image.palette");
    const uint8_t *px = ra_cursor_take(&c, (size_t)wd * ht, "image.pixels");
    if (!pal || !px) return -2; /* checked when indexed */
    if (!wd || !ht) {
        if (w->warn)
            ra_scene_warn(w->warn, "texture '%s' (image at byte %llu): image.width: %u x %u pixels: left out", t->name,
                          (unsigned long long)t->image_at, wd, ht);
        return -1;
    }
    if (!ra_arena_reserve(w->ar, (void **)&w->textures, &w->texture_cap, w->texture_count + 1, sizeof *w->textures,
                          16)) {
        nomem(w);
        return -2;
    }
    uint8_t *rgba = ra_arena_array_uninit(w->ar, (size_t)wd * ht, 4);
    if (!rgba) {
        nomem(w);
        return -2;
    }
    for (size_t i = 0; i < (size_t)wd * ht; i++) {
        uint8_t k = px[i];
        /* an index past the palette is undefined in the engine: black */
        rgba[4 * i] = k < pc ? pal[3 * k] : 0;
        rgba[4 * i + 1] = k < pc ? pal[3 * k + 1] : 0;
        rgba[4 * i + 2] = k < pc ? pal[3 * k + 2] : 0;
        rgba[4 * i + 3] = 255;
    }
    w->textures[w->texture_count] = (lego_wdb_texture){t->name, wd, ht, rgba};
    t->decoded = (int32_t)w->texture_count;
    return (int32_t)w->texture_count++;
}

/* The decoded texture named name: its index, -1 when no source has it, -2 on an error. */
static int32_t find_texture(lego_wdb_set *w, const char *name)
{
    for (;;) {
        const uint32_t *slot = ra_strmap_get(&w->tex_map, name);
        if (slot && *slot) return decode_texture(w, &w->tex[*slot - 1]);
        if (index_next_textures(w)) continue;
        if (w->err->code == RA_OK) return -1;
        /* a texture list that cannot be read: its textures are left out, the next list is tried */
        if (!tolerate(w, "a texture list is left out")) return -2;
    }
}

/* ---- part index ---------------------------------------------------------------------------------- */
/* The parts of a part blob: names, LOD counts, where each one's LODs are. */
static bool index_part_blob(lego_wdb_set *w, uint64_t start, uint64_t end, const char *source)
{
    ra_cursor c;
    cursor_at(w, &c, start + 4, end);
    uint32_t n;
    if (!ra_rd_u32le(&c, &n, "parts.num_rois")) return false;
    if (!ra_cursor_check_count(&c, n, 12, "parts.num_rois")) return false;
    for (uint32_t i = 0; i < n; i++) {
        part_entry pe = {NULL, end, 0, 0, source};
        uint32_t next;
        if (!read_name(w, &c, &pe.name, "part.roi_name")) return false;
        ra_rd_u32le(&c, &pe.lod_count, "part.num_lods");
        if (!ra_rd_u32le(&c, &next, "part.roi_info_offset")) return false;
        pe.lods_at = c.pos;
        if (next > end - start || start + next < c.pos)
            return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, c.pos - 4, "part.roi_info_offset",
                                  "offset %u outside the part's LODs", next);
        pe.blob_end = start + next; /* the LODs end where the next part starts */
        uint32_t *slot = ra_strmap_slot(&w->part_map, pe.name);
        if (!slot) return nomem(w);
        if (!*slot) { /* the first registered wins */
            if (!ra_arena_reserve(w->ar, (void **)&w->parts, &w->part_cap, w->part_count + 1, sizeof *w->parts, 16))
                return nomem(w);
            w->parts[w->part_count] = pe;
            *slot = (uint32_t)++w->part_count;
        }
        c.pos = (size_t)(start + next);
    }
    return true;
}

static bool index_next_parts(lego_wdb_set *w)
{
    const lego_wdb_dir *d = &w->dir;
    size_t step = w->part_step++;
    /* the global parts, then the preferred world's, then the other worlds' (LoadWorld registers the global
     * parts first; LegoPartPresenter::Store skips a name already registered) */
    if (step == 0) return !d->parts_size || index_part_blob(w, d->parts_at, d->parts_at + d->parts_size, "global");
    step -= 1;
    for (; w->part_k < d->world_count; w->part_k++) {
        const lego_wdb_world *wd = &d->worlds[world_at(w, w->part_k)];
        if (step - w->part_base >= wd->part_count) {
            w->part_base += wd->part_count;
            continue;
        }
        step -= w->part_base;
        const lego_wdb_ref *r = &d->parts[wd->first_part + step];
        return index_part_blob(w, r->offset, (uint64_t)r->offset + r->size, wd->name);
    }
    w->part_step--;
    return false;
}

/* The part entry named name, NULL when none (or on an error: w->err). */
static const part_entry *find_part(lego_wdb_set *w, const char *name)
{
    for (;;) {
        const uint32_t *slot = ra_strmap_get(&w->part_map, name);
        if (slot && *slot) return &w->parts[*slot - 1];
        if (index_next_parts(w)) continue;
        if (w->err->code == RA_OK) return NULL;
        /* a part blob that cannot be read further: its other parts are left out */
        if (!tolerate(w, "a part blob is left out")) return NULL;
    }
}

/* ---- LODs and meshes ---------------------------------------------------------------------------- */
static bool starts_inh(const char *s) { return s && strncmp(s, "inh", 3) == 0; } /* names are lower-cased */

typedef struct lod_head {
    uint32_t flags, mesh_count, nv, nn;
    int32_t nuv;
    uint64_t pos_at, nrm_at, uv_at, meshes_at;
} lod_head;

/* A name skipped (a LOD walked, not decoded): nothing allocated. */
static bool skip_name(ra_cursor *c, const char *field)
{
    uint32_t n;
    if (!ra_rd_u32le(c, &n, field)) return false;
    if (n > MAX_NAME) return ra_cursor_fail(c, RA_ERR_LIMIT, c->pos - 4, field, "name of %u bytes", n);
    return ra_rd_skip(c, n, field);
}

/* A mesh whose bytes were read but whose corners the engine cannot build
 * as they are: left out (no vertices) with a warning naming the field and
 * its byte, as spec rule "refuse the mesh, not the load" says. */
static bool refuse_mesh(lego_wdb_mesh *out, ra_scene *warn, uint64_t mesh_at, uint64_t at, const char *field,
                        const char *fmt, ...)
{
    out->vertex_count = out->triangle_count = 0;
    out->positions = out->normals = out->uvs = NULL;
    out->indices = NULL;
    if (!warn) return true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ra_scene_warn(warn, "mesh at byte %llu: %s at byte %llu: %s: the mesh is left out", (unsigned long long)mesh_at,
                  field, (unsigned long long)at, msg);
    return true;
}

/* One mesh: walked (out NULL) or decoded. */
static bool read_mesh(lego_wdb_set *w, ra_cursor *c, const lod_head *h, lego_wdb_mesh *out, ra_scene *warn)
{
    uint64_t at = c->pos;
    uint16_t np = 0, nmv = 0;
    ra_rd_u16le(c, &np, "mesh.num_polys");
    if (!ra_rd_u16le(c, &nmv, "mesh.num_mesh_verts")) return false;
    const uint8_t *poly = ra_cursor_take(c, 12u * np, "mesh.poly_indices");
    uint32_t ntex;
    if (!poly || !ra_rd_u32le(c, &ntex, "mesh.num_tex_indices")) return false;
    uint64_t tex_at = c->pos;
    const uint8_t *texi = ntex ? ra_cursor_take(c, 12u * np, "mesh.tex_indices") : NULL;
    uint8_t rgb[3] = {0, 0, 0}, shading = 0, shiny = 0, unused = 0, alias = 0;
    float alpha = 0;
    for (int i = 0; i < 3; i++) ra_rd_u8(c, &rgb[i], "mesh.color");
    ra_rd_f32le(c, &alpha, "mesh.alpha");
    ra_rd_u8(c, &shading, "mesh.shading");
    ra_rd_u8(c, &shiny, "mesh.shiny");
    ra_rd_u8(c, &unused, "mesh.unused");
    ra_rd_u8(c, &alias, "mesh.use_alias");
    if (!out) return skip_name(c, "mesh.texture_name") && skip_name(c, "mesh.material_name");
    const char *tname = NULL, *mname = NULL;
    if (!read_name(w, c, &tname, "mesh.texture_name") || !read_name(w, c, &mname, "mesh.material_name")) return false;
    memset(out, 0, sizeof *out);
    out->texture = -1;
    out->texture_name = tname;
    out->material_name = mname;
    out->shading = shading;
    out->shiny = shiny;
    out->inh = starts_inh(tname) || starts_inh(mname);
    /* the corners: creates in the first pass, faces in the second */
    bool use_uv = texi && h->nuv > 0;
    uint32_t creates = 0, bad_uv = 0;
    for (uint32_t i = 0; i < 3u * np; i++) {
        uint32_t v = ra_load_u32le(poly + 4 * i);
        if (!(v & 0x80000000u)) {
            if ((v & 0xFFFFu) >= nmv)
                return refuse_mesh(out, warn, at, at + 4 + 4ull * i, "mesh.poly_indices",
                                   "corner %u reuses vertex %u of %u", i, v & 0xFFFFu, nmv);
            continue;
        }
        uint64_t fat = at + 4 + 4ull * i;
        if ((v & 0xFFFFu) >= h->nv)
            return refuse_mesh(out, warn, at, fat, "mesh.poly_indices", "corner %u: position %u of %u", i, v & 0xFFFFu,
                               h->nv);
        if (((v >> 16) & 0x7FFFu) >= h->nn)
            return refuse_mesh(out, warn, at, fat, "mesh.poly_indices", "corner %u: normal %u of %u", i,
                               (v >> 16) & 0x7FFFu, h->nn);
        if (use_uv && ra_load_u32le(texi + 4 * i) >= (uint32_t)h->nuv && !bad_uv++ && warn)
            ra_scene_warn(
                warn,
                "mesh at byte %llu: mesh.tex_indices at byte %llu: corner %u: texture coordinate %u of %d: UV (0, 0)",
                (unsigned long long)at, (unsigned long long)(tex_at + 4ull * i), i, ra_load_u32le(texi + 4 * i),
                h->nuv);
        creates++;
    }
    if (creates != nmv)
        return refuse_mesh(out, warn, at, at + 2, "mesh.num_mesh_verts",
                           "%u vertices declared, %u created by the corners", nmv, creates);
    ra_arena *ar = w->ar;
    out->vertex_count = nmv;
    out->triangle_count = np;
    out->positions = ra_arena_array_uninit(ar, 3u * (size_t)nmv + 1, sizeof(float));
    out->normals = ra_arena_array_uninit(ar, 3u * (size_t)nmv + 1, sizeof(float));
    out->uvs = use_uv ? ra_arena_array(ar, 2u * (size_t)nmv + 1, sizeof(float)) : NULL;
    out->indices = ra_arena_array_uninit(ar, 3u * (size_t)np + 1, sizeof(uint32_t));
    if (!out->positions || !out->normals || (use_uv && !out->uvs) || !out->indices) return nomem(w);
    const uint8_t *base = w->data;
    uint32_t k = 0;
    for (uint32_t i = 0; i < 3u * np; i++) {
        uint32_t v = ra_load_u32le(poly + 4 * i);
        if (!(v & 0x80000000u)) continue;
        const uint8_t *p = base + h->pos_at + 12ull * (v & 0xFFFFu);
        const uint8_t *n = base + h->nrm_at + 12ull * ((v >> 16) & 0x7FFFu);
        for (int q = 0; q < 3; q++) {
            out->positions[3 * k + (uint32_t)q] = ra_load_f32le(p + 4 * q);
            out->normals[3 * k + (uint32_t)q] = ra_load_f32le(n + 4 * q);
        }
        uint32_t ti = use_uv ? ra_load_u32le(texi + 4 * i) : 0;
        if (use_uv && ti < (uint32_t)h->nuv) { /* else (0, 0): the arena's zeros */
            const uint8_t *u = base + h->uv_at + 8ull * ti;
            out->uvs[2 * k] = ra_load_f32le(u);
            out->uvs[2 * k + 1] = ra_load_f32le(u + 4);
        }
        out->indices[i] = k++;
    }
    for (uint32_t i = 0; i < 3u * np; i++) {
        uint32_t v = ra_load_u32le(poly + 4 * i);
        if (!(v & 0x80000000u)) out->indices[i] = v & 0xFFFFu; /* checked above */
    }
    /* the file's material */
    if (tname[0]) {
        out->color[0] = out->color[1] = out->color[2] = out->color[3] = 1;
        out->texture = find_texture(w, tname);
        if (out->texture == -2) return false;
        if (out->texture < 0) {
            out->missing_tex = true;
            out->color[1] = 0; /* magenta, the engine's colour for a name it does not know */
            if (warn) ra_scene_warn(warn, "texture '%s' is not in the WDB: its meshes are magenta", tname);
        }
    } else if (alias) {
        uint8_t c3[3] = {255, 0, 255};
        lego_alias_color(mname, c3);
        for (int q = 0; q < 3; q++) out->color[q] = (float)(c3[q] / 255.0);
        out->color[3] = 1;
    } else {
        for (int q = 0; q < 3; q++) out->color[q] = (float)(rgb[q] / 255.0);
        out->color[3] = alpha > 0 && alpha < 1 ? alpha : 1; /* <= 0 (and NaN) is opaque */
    }
    return true;
}

static bool read_lod_head(ra_cursor *c, lod_head *h)
{
    memset(h, 0, sizeof *h);
    if (!ra_rd_u32le(c, &h->flags, "lod.flags")) return false;
    if (h->flags & LEGO_LOD_SKIP) return true;
    if (!ra_rd_u32le(c, &h->mesh_count, "lod.num_meshes")) return false;
    if (!h->mesh_count) return true;
    uint32_t counts = 0;
    ra_rd_u32le(c, &counts, "lod.counts");
    if (!ra_rd_s32le(c, &h->nuv, "lod.num_uvs")) return false;
    if (h->nuv < 0) return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, "lod.num_uvs", "%d", h->nuv);
    h->nv = counts & 0x7FFFu;
    h->nn = (counts >> 17) & 0x7FFFu;
    h->pos_at = c->pos;
    if (!ra_rd_skip(c, 12u * h->nv, "lod.positions")) return false;
    h->nrm_at = c->pos;
    if (!ra_rd_skip(c, 12u * h->nn, "lod.normals")) return false;
    h->uv_at = c->pos;
    if (!ra_rd_skip(c, 8u * (size_t)h->nuv, "lod.uvs")) return false;
    h->meshes_at = c->pos;
    return ra_cursor_check_count(c, h->mesh_count, MESH_MIN_BYTES, "lod.num_meshes");
}

/* n LODs at c: walks them all, decodes the last one with meshes into roi. */
static bool read_lods(lego_wdb_set *w, ra_cursor *c, uint32_t n, lego_wdb_roi *roi, ra_scene *warn)
{
    roi->lod_count = n;
    if (!ra_cursor_check_count(c, n, 4, "num_lods")) return false;
    uint64_t best = 0;
    bool found = false;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t at = c->pos;
        lod_head h;
        if (!read_lod_head(c, &h)) return false;
        for (uint32_t m = 0; m < h.mesh_count; m++)
            if (!read_mesh(w, c, &h, NULL, NULL)) return false;
        if (h.mesh_count) {
            best = at;
            found = true;
            roi->lod_used = i;
        }
    }
    if (!found) return true;
    uint64_t end = c->pos;
    c->pos = (size_t)best;
    lod_head h;
    if (!read_lod_head(c, &h)) return false;
    roi->meshes = ra_arena_array(w->ar, h.mesh_count, sizeof *roi->meshes);
    if (!roi->meshes) return nomem(w);
    roi->mesh_count = h.mesh_count;
    for (uint32_t m = 0; m < h.mesh_count; m++)
        if (!read_mesh(w, c, &h, &roi->meshes[m], warn)) return false;
    c->pos = (size_t)end;
    return true;
}

/* The LOD list of a part into roi (a fresh copy: each ROI colours its own). */
static bool part_lods(lego_wdb_set *w, const part_entry *p, lego_wdb_roi *roi, ra_scene *warn)
{
    ra_cursor c;
    cursor_at(w, &c, p->lods_at, p->blob_end);
    roi->lod_source = p->name;
    return read_lods(w, &c, p->lod_count, roi, warn);
}

/* ---- ROI materials (the "inh" meshes only) ---------------------------------------------------------- */
/* The ROI's colourOrTexture, or a character slot's: "t_NAME" puts texture
 * NAME on the textured inh meshes and white on the untextured ones; another
 * string is a colour alias for the untextured inh meshes. */
static bool apply_material(lego_wdb_set *w, lego_wdb_roi *roi, const char *mat, bool texture, ra_scene *warn)
{
    if (!mat || !*mat) return true;
    int32_t tex = -1;
    uint8_t rgb[3] = {255, 0, 255};
    if (texture) {
        tex = find_texture(w, mat);
        if (tex == -2) return false;
        if (tex < 0 && warn)
            ra_scene_warn(warn, "texture '%s' (ROI %s) is not in the WDB: left as it is", mat, roi->name);
    } else if (!lego_alias_color(mat, rgb) && warn) {
        ra_scene_warn(warn, "colour '%s' (ROI %s) is not a known alias: magenta, as the engine shows it", mat,
                      roi->name);
    }
    for (uint32_t i = 0; i < roi->mesh_count; i++) {
        lego_wdb_mesh *m = &roi->meshes[i];
        if (!m->inh) continue;
        bool textured = m->texture_name && m->texture_name[0];
        if (texture) {
            if (textured && tex >= 0) {
                m->texture = tex;
                m->missing_tex = false;
                m->color[0] = m->color[1] = m->color[2] = m->color[3] = 1;
            } else if (!textured && tex >= 0) { /* SetLodColor(1, 1, 1) only when the texture was found */
                m->color[0] = m->color[1] = m->color[2] = m->color[3] = 1;
            }
        } else if (!textured) {
            for (int q = 0; q < 3; q++) m->color[q] = (float)(rgb[q] / 255.0);
            m->color[3] = 1;
        }
    }
    return true;
}

static bool apply_roi_material(lego_wdb_set *w, lego_wdb_roi *roi, ra_scene *warn)
{
    const char *m = roi->material;
    if (!m || !*m) return true;
    if (m[0] == 't' && m[1] == '_') return apply_material(w, roi, m + 2, true, warn);
    return apply_material(w, roi, m, false, warn);
}

/* ---- ROIs of a model --------------------------------------------------------------------------------- */
/* The name without trailing decimal digits (and '_' too when underscores). */
static char *trim_name(ra_arena *ar, const char *name, bool underscores)
{
    size_t n = strlen(name);
    while (n && (isdigit((unsigned char)name[n - 1]) || (underscores && name[n - 1] == '_'))) n--;
    char *s = ra_arena_strndup(ar, name, n);
    if (s)
        for (char *q = s; *q; q++) *q = (char)tolower((unsigned char)*q);
    return s;
}

/* Where model mi's root ROI record starts (after the embedded animation,
 * read in scratch memory without its trailing bytes), or 0 when the blob
 * cannot be read that far: the file's bytes are read with an error of
 * their own (a broken model is refused when it is converted); out of
 * memory sets *oom. */
static uint64_t model_rois_at(lego_wdb_set *w, size_t mi, bool *oom)
{
    const lego_wdb_ref *ref = &w->dir.models[mi];
    ra_error e;
    ra_error_clear(&e);
    ra_cursor c;
    ra_cursor_init(&c, w->data, (size_t)ref->offset + ref->size, FMT, &e);
    c.pos = ref->offset;
    uint32_t version = 0;
    if (!ra_rd_u32le(&c, &version, "model.version") || version != LEGO_WDB_MODEL_VERSION ||
        !ra_rd_skip(&c, 8, "model.header"))
        return 0;
    ra_arena *tmp = ra_arena_create(0);
    if (!tmp) return *oom = true, 0;
    lego_ani a;
    size_t at = c.pos;
    bool ok = lego_ani_read_ex(w->data + at, c.size - at, true, LEGO_DEFAULT_MAX_DEPTH, tmp, &a, false, &e) == RA_OK;
    ra_arena_destroy(tmp);
    if (e.code == RA_ERR_NO_MEMORY) *oom = true;
    return ok ? at + (c.size - at - a.trailing_size) : 0;
}

/* Walks a ROI record without decoding it: registers (first wins) every ROI
 * with LODs of its own under its name.  False when the record cannot be read. */
static bool walk_roi_lods(lego_wdb_set *w, ra_cursor *c, uint64_t blob, const char *source, uint32_t depth)
{
    if (depth > LEGO_DEFAULT_MAX_DEPTH) return false;
    uint32_t n, m, nl, end, nc;
    uint8_t shared;
    const uint8_t *p;
    if (!ra_rd_u32le(c, &n, "roi.name") || n > MAX_NAME || !(p = ra_cursor_take(c, n, "roi.name"))) return false;
    if (!ra_rd_skip(c, 40, "roi.bounds") || !ra_rd_u32le(c, &m, "roi.color_or_texture") || m > MAX_NAME ||
        !ra_rd_skip(c, m, "roi.color_or_texture") || !ra_rd_u8(c, &shared, "roi.shared_lods"))
        return false;
    if (!shared) {
        if (!ra_rd_u32le(c, &nl, "roi.num_lods")) return false;
        if (nl) {
            if (!ra_rd_u32le(c, &end, "roi.lod_end_offset") || blob + end > c->size || blob + end < c->pos)
                return false;
            while (n && p[n - 1] == 0) n--;
            char *name = ra_arena_strndup(w->ar, (const char *)p, n);
            if (!name) return nomem(w);
            for (char *q = name; *q; q++) *q = (char)tolower((unsigned char)*q);
            uint32_t *slot = ra_strmap_slot(&w->roi_lods_map, name);
            if (!slot) return nomem(w);
            if (!*slot) {
                if (!ra_arena_reserve(w->ar, (void **)&w->roi_lods, &w->roi_lods_cap, w->roi_lods_count + 1,
                                      sizeof *w->roi_lods, 16))
                    return nomem(w);
                w->roi_lods[w->roi_lods_count] = (part_entry){name, blob + end, c->pos, nl, source};
                *slot = (uint32_t)++w->roi_lods_count;
            }
            c->pos = (size_t)(blob + end);
        }
    }
    if (!ra_rd_u32le(c, &nc, "roi.num_children") || !ra_cursor_check_count(c, nc, ROI_MIN_BYTES, "roi.num_children"))
        return false;
    for (uint32_t i = 0; i < nc; i++)
        if (!walk_roi_lods(w, c, blob, source, depth + 1)) return false;
    return true;
}

/* The LOD list registered under name by a model ROI with LODs of its own
 * (LegoROI::Read registers them in the ViewLODListManager that sharedLods
 * looks in): the preferred world's models first, then the others', each
 * in directory order, first wins.  NULL when none (or out of memory: w->err). */
static const part_entry *model_roi_lods(lego_wdb_set *w, const char *name)
{
    const lego_wdb_dir *d = &w->dir;
    if (!w->roi_lods_read) {
        w->roi_lods_read = true;
        if (!ra_strmap_init(&w->roi_lods_map, w->ar, 64)) return nomem(w), NULL;
        for (size_t k = 0; k < d->world_count; k++) {
            const lego_wdb_world *wd = &d->worlds[world_at(w, k)];
            for (uint32_t i = 0; i < wd->model_count; i++) {
                size_t mi = wd->first_model + i;
                bool oom = false;
                uint64_t at = model_rois_at(w, mi, &oom);
                if (oom) return nomem(w), NULL;
                if (!at) continue;
                const lego_wdb_ref *ref = &d->models[mi];
                ra_error e;
                ra_error_clear(&e);
                ra_cursor c;
                ra_cursor_init(&c, w->data, (size_t)ref->offset + ref->size, FMT, &e);
                c.pos = (size_t)at;
                walk_roi_lods(w, &c, ref->offset, wd->name, 0); /* a model that cannot be walked is skipped */
                if (w->err->code != RA_OK || e.code == RA_ERR_NO_MEMORY) return nomem(w), NULL;
            }
        }
    }
    const uint32_t *slot = w->roi_lods_map.cap ? ra_strmap_get(&w->roi_lods_map, name) : NULL;
    return slot && *slot ? &w->roi_lods[*slot - 1] : NULL;
}

static bool read_roi(lego_wdb_set *w, ra_cursor *c, uint64_t blob, lego_wdb_roi *roi, uint32_t depth,
                     uint32_t max_depth, ra_scene *warn)
{
    if (depth > max_depth)
        return ra_cursor_fail(c, RA_ERR_LIMIT, c->pos, "roi", "ROIs nested deeper than max_depth (%u)", max_depth);
    memset(roi, 0, sizeof *roi);
    roi->world = roi->local = ra_m4_identity();
    if (!read_name(w, c, &roi->name, "roi.name")) return false;
    if (!ra_rd_skip(c, 40, "roi.bounds")) return false;
    if (!read_name(w, c, &roi->material, "roi.color_or_texture")) return false;
    uint8_t shared;
    if (!ra_rd_u8(c, &shared, "roi.shared_lods")) return false;
    if (shared) {
        char *key = trim_name(w->ar, roi->name, false);
        if (!key) return nomem(w);
        const part_entry *p = find_part(w, key);
        if (!p && w->err->code != RA_OK) return false;
        if (!p) p = model_roi_lods(w, key); /* a model ROI's own list, registered under its name */
        if (!p && w->err->code != RA_OK) return false;
        if (!p) {
            if (warn)
                ra_scene_warn(warn, "ROI %s shares the LOD list '%s', which no part or model ROI holds: no geometry",
                              roi->name, key);
        } else {
            ra_cursor keep = *c;
            if (!part_lods(w, p, roi, warn)) return false;
            *c = keep;
        }
    } else {
        uint32_t n;
        if (!ra_rd_u32le(c, &n, "roi.num_lods")) return false;
        if (n) {
            uint32_t end;
            if (!ra_rd_u32le(c, &end, "roi.lod_end_offset")) return false;
            uint64_t at = c->pos - 4;
            if (!read_lods(w, c, n, roi, warn)) return false;
            if (blob + end > c->size || blob + end < at + 4) { /* the LODs were walked: go on after them */
                if (warn)
                    ra_scene_warn(warn,
                                  "ROI %s: roi.lod_end_offset at byte %llu: offset %u outside the model: the "
                                  "children are read after the LODs",
                                  roi->name, (unsigned long long)at, end);
            } else {
                c->pos = (size_t)(blob + end);
            }
            roi->prefix_share =
                !strncmp(roi->name, "bike", 4) || !strncmp(roi->name, "moto", 4) || !strncmp(roi->name, "haus", 4);
        }
    }
    if (!apply_roi_material(w, roi, warn)) return false;
    uint32_t nc;
    if (!ra_rd_u32le(c, &nc, "roi.num_children")) return false;
    if (!ra_cursor_check_count(c, nc, ROI_MIN_BYTES, "roi.num_children")) return false;
    roi->children = ra_arena_array(w->ar, nc, sizeof *roi->children);
    if (!roi->children) return nomem(w);
    roi->child_count = nc;
    for (uint32_t i = 0; i < nc; i++)
        if (!read_roi(w, c, blob, &roi->children[i], depth + 1, max_depth, warn)) return false;
    return true;
}

/* LegoROI::FindChildROI: the ROI itself, then all its direct children,
 * then each child's subtree the same way; names compared case-insensitively
 * (an empty name matches nothing).  *budget counts the ROIs compared: a
 * hostile model of many nodes and ROIs stops being posed instead of taking
 * quadratic time. */
lego_wdb_roi *lego_wdb_find_roi(lego_wdb_roi *r, const char *name, uint32_t depth, uint64_t *budget)
{
    if (!*budget) return NULL;
    --*budget;
    if (r->name[0] && !lego_stricmp(r->name, name)) return r;
    if (depth > RA_MAX_DEPTH_LIMIT) return NULL;
    for (uint32_t i = 0; i < r->child_count; i++) {
        if (!*budget) return NULL;
        --*budget;
        if (r->children[i].name[0] && !lego_stricmp(r->children[i].name, name)) return &r->children[i];
    }
    for (uint32_t i = 0; i < r->child_count; i++) {
        lego_wdb_roi *f = lego_wdb_find_roi(&r->children[i], name, depth + 1, budget);
        if (f) return f;
    }
    return NULL;
}

/* The embedded animation at t = 0 (ApplyChildAnimationTransformation): a
 * node binds a ROI under its parent's ROI (or else under the model's root)
 * and gives it world = parent world . local; a node that binds nothing ends
 * the descent.  world holds A(r), identity where no node reaches. */
static void pose_embedded(lego_wdb_roi *root, const lego_node *nd, lego_wdb_roi *parent, uint32_t depth,
                          uint64_t *budget)
{
    if (depth > RA_MAX_DEPTH_LIMIT || !nd->name) return;
    lego_wdb_roi *r = parent ? lego_wdb_find_roi(parent, nd->name, 0, budget) : NULL;
    if (!r) r = lego_wdb_find_roi(root, nd->name, 0, budget);
    if (!r) return;
    ra_mat4 l = lego_node_matrix(nd, 0, true);
    r->world = parent ? ra_m4_mul(&parent->world, &l) : l;
    for (uint32_t i = 0; i < nd->num_children; i++) pose_embedded(root, &nd->children[i], r, depth + 1, budget);
}

/* world = m . A(r) for the whole tree; local relative to the parent. */
static void place(lego_wdb_roi *r, const ra_mat4 *m, const ra_mat4 *parent_inv, uint32_t depth)
{
    r->world = ra_m4_mul(m, &r->world);
    r->local = parent_inv ? ra_m4_mul(parent_inv, &r->world) : r->world;
    ra_mat4 inv;
    if (!ra_m4_invert_affine(&r->world, &inv)) inv = ra_m4_identity();
    if (depth > RA_MAX_DEPTH_LIMIT) return;
    for (uint32_t i = 0; i < r->child_count; i++) place(&r->children[i], m, &inv, depth + 1);
}

ra_mat4 lego_local_transform(const float pos[3], const float dir[3], const float up[3])
{
    ra_vec3 d = ra_v3(dir[0], dir[1], dir[2]), u = ra_v3(up[0], up[1], up[2]);
    double ld = ra_v3_len(d);
    if (ld > 0) d = ra_v3_scale(d, 1 / ld);
    ra_vec3 right = ra_v3_cross(u, d);
    double lr = ra_v3_len(right);
    if (!(lr > 0)) return ra_m4_translation(ra_v3(pos[0], pos[1], pos[2]));
    right = ra_v3_scale(right, 1 / lr);
    ra_vec3 u2 = ra_v3_cross(d, right);
    return ra_m4_from_columns(right, u2, d, ra_v3(pos[0], pos[1], pos[2]));
}

ra_status lego_wdb_model(lego_wdb_set *w, size_t model, uint32_t max_depth, lego_wdb_roi **out, ra_error *err)
{
    w->err = err;
    *out = NULL;
    const lego_wdb_ref *ref = &w->dir.models[model];
    uint64_t start = ref->offset, end = start + ref->size;
    ra_cursor c;
    cursor_at(w, &c, start, end);
    uint32_t version = 0, tex_off = 0, nroi = 0;
    if (!ra_rd_u32le(&c, &version, "model.version")) return err->code;
    if (version != LEGO_WDB_MODEL_VERSION)
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, start, "model.version", "model %s: version %u, expected %d",
                       ref->name, version, LEGO_WDB_MODEL_VERSION);
    ra_rd_u32le(&c, &tex_off, "model.texture_info_offset");
    if (!ra_rd_u32le(&c, &nroi, "model.num_rois")) return err->code;
    /* the embedded animation (a body-only LegoAnim), in scratch memory */
    ra_arena *tmp = ra_arena_create(0);
    if (!tmp) return ra_fail_nomem(err, FMT);
    lego_ani a;
    ra_error e;
    ra_error_clear(&e);
    size_t anim_at = c.pos;
    if (lego_ani_read_ex(w->data + anim_at, c.size - anim_at, true, max_depth, tmp, &a, false, &e) != RA_OK) {
        ra_arena_destroy(tmp);
        if (e.code == RA_ERR_NO_MEMORY) return ra_fail_nomem(err, FMT);
        return ra_fail_wrap(err, &e, FMT, e.offset == RA_NO_OFFSET ? RA_NO_OFFSET : anim_at + e.offset,
                            "model.animation", "model %s", ref->name);
    }
    c.pos = anim_at + (c.size - anim_at - a.trailing_size);
    lego_wdb_roi *root = ra_arena_alloc(w->ar, sizeof *root);
    if (!root) {
        ra_arena_destroy(tmp);
        return ra_fail_nomem(err, FMT);
    }
    if (!read_roi(w, &c, start, root, 0, max_depth, w->warn)) {
        ra_arena_destroy(tmp);
        return err->code;
    }
    uint64_t budget = LEGO_WDB_SEARCH_BUDGET;
    pose_embedded(root, &a.root, NULL, 0, &budget);
    ra_arena_destroy(tmp);
    if (!budget && w->warn)
        ra_scene_warn(w->warn,
                      "model %s: its animation names too many ROIs to bind them all: the rest stay at identity",
                      ref->name);
    /* placement: W(r) = P . A_root^-1 . A(r) (column vectors) */
    ra_mat4 p = lego_local_transform(ref->location, ref->direction, ref->up), inv;
    if (!ra_m4_invert_affine(&root->world, &inv)) inv = ra_m4_identity();
    ra_mat4 m = ra_m4_mul(&p, &inv);
    place(root, &m, NULL, 0);
    *out = root;
    return RA_OK;
}

ra_status lego_wdb_part(lego_wdb_set *w, const char *name, lego_wdb_roi **out, ra_error *err)
{
    w->err = err;
    *out = NULL;
    const part_entry *p = find_part(w, name);
    if (!p) return err->code;
    lego_wdb_roi *r = ra_arena_alloc(w->ar, sizeof *r);
    if (!r) return ra_fail_nomem(err, FMT);
    r->name = p->name;
    r->material = "";
    r->world = r->local = ra_m4_identity();
    if (!part_lods(w, p, r, w->warn)) return err->code;
    *out = r;
    return RA_OK;
}

const char *lego_wdb_part_source(lego_wdb_set *w, const char *name)
{
    const uint32_t *slot = ra_strmap_get(&w->part_map, name);
    return slot && *slot ? w->parts[*slot - 1].source : NULL;
}

/* The root ROI's name of model mi (lower-cased), "" when the blob cannot
 * be read that far (a broken model is skipped here, refused when it is
 * converted), NULL out of memory. */
static const char *model_root_name(lego_wdb_set *w, size_t mi)
{
    const lego_wdb_ref *ref = &w->dir.models[mi];
    bool oom = false;
    uint64_t at = model_rois_at(w, mi, &oom);
    if (oom) return NULL;
    ra_error e;
    ra_error_clear(&e);
    ra_cursor c;
    ra_cursor_init(&c, w->data, (size_t)ref->offset + ref->size, FMT, &e);
    c.pos = (size_t)at;
    uint32_t n = 0;
    const uint8_t *p = NULL;
    if (!at || !ra_rd_u32le(&c, &n, "roi.name") || n > MAX_NAME || !(p = ra_cursor_take(&c, n, "roi.name"))) return "";
    while (n && p[n - 1] == 0) n--;
    char *name = ra_arena_strndup(w->ar, (const char *)p, n);
    if (name)
        for (char *q = name; *q; q++) *q = (char)tolower((unsigned char)*q);
    return name;
}

/* Model mi of world wd by directory name (by_root false) or root ROI name. */
static int64_t find_in_world(lego_wdb_set *w, uint32_t world, const char *name, bool by_root)
{
    const lego_wdb_dir *d = &w->dir;
    const lego_wdb_world *wd = &d->worlds[world];
    for (uint32_t i = 0; i < wd->model_count; i++) {
        size_t mi = wd->first_model + i;
        const char *n = d->models[mi].name;
        if (by_root) {
            if (!w->roots[mi]) w->roots[mi] = model_root_name(w, mi);
            n = w->roots[mi];
            if (!n) return -2; /* out of memory */
        }
        if (n[0] && !lego_stricmp(n, name)) return (int64_t)mi;
    }
    return -1;
}

int64_t lego_wdb_find_model(lego_wdb_set *w, const char *name)
{
    const lego_wdb_dir *d = &w->dir;
    if (!d->model_count) return -1;
    if (!w->roots && !(w->roots = ra_arena_array(w->ar, d->model_count, sizeof *w->roots))) return -2;
    /* the preferred world by directory name, then by root ROI name (how the
     * engine finds a scene ROI), then the other worlds the same way */
    if (w->prefer >= 0)
        for (int by_root = 0; by_root < 2; by_root++) {
            int64_t mi = find_in_world(w, (uint32_t)w->prefer, name, by_root);
            if (mi != -1) return mi;
        }
    for (int by_root = 0; by_root < 2; by_root++)
        for (uint32_t k = 0; k < d->world_count; k++) {
            if ((int64_t)k == w->prefer) continue;
            int64_t mi = find_in_world(w, k, name, by_root);
            if (mi != -1) return mi;
        }
    return -1;
}

/* ---- characters ------------------------------------------------------------------------------------ */
ra_status lego_wdb_character(lego_wdb_set *w, const char *name, lego_wdb_roi **out, ra_error *err)
{
    w->err = err;
    *out = NULL;
    const lego_character *ch = NULL;
    for (size_t i = 0; i < lego_character_count && !ch; i++)
        if (!lego_stricmp(lego_characters[i].name, name)) ch = &lego_characters[i];
    if (!ch) return RA_OK;
    lego_wdb_roi *root = ra_arena_alloc(w->ar, sizeof *root);
    lego_wdb_roi *kids = ra_arena_array(w->ar, 10, sizeof *kids);
    char *rname = ra_arena_strndup(w->ar, name, strlen(name));
    if (!root || !kids || !rname) return ra_fail_nomem(err, FMT);
    for (char *q = rname; *q; q++) *q = (char)tolower((unsigned char)*q);
    root->name = rname;
    root->material = "";
    root->world = root->local = ra_m4_identity();
    root->children = kids;
    root->child_count = 10;
    for (int i = 0; i < 10; i++) {
        const lego_actor_lod *al = &lego_actor_lods[i + 1];
        lego_wdb_roi *k = &kids[i];
        k->name = al->name;
        k->material = "";
        k->world = k->local = lego_local_transform(al->position, al->direction, al->up);
        const char *part = i == 0 ? ch->body_part : i == 1 ? ch->hat_part : al->part;
        const part_entry *p = find_part(w, part);
        if (!p && err->code != RA_OK) return err->code;
        if (!p) {
            if (w->warn)
                ra_scene_warn(w->warn, "character %s: part '%s' is not in the WDB: %s has no geometry", rname, part,
                              al->name);
            continue;
        }
        if (!part_lods(w, p, k, w->warn)) return err->code;
        const char *mat;
        bool tex;
        switch (i) {
        case 0:
            mat = ch->chest;
            tex = strcmp(ch->body_part, "body") != 0; /* the plain body takes a colour */
            break;
        case 1: mat = ch->hat_color, tex = false; break;
        case 2: mat = ch->infogron, tex = false; break;
        case 3: mat = ch->face, tex = true; break;
        case 4:
        case 5: mat = ch->arm[i - 4], tex = false; break;
        case 6:
        case 7: mat = ch->claw[i - 6], tex = false; break;
        default: mat = ch->leg[i - 8], tex = false; break;
        }
        if (!apply_material(w, k, mat, tex, w->warn)) return err->code;
    }
    *out = root;
    return RA_OK;
}

/* ---- the set ----------------------------------------------------------------------------------------- */
ra_status lego_wdb_open(const uint8_t *data, size_t size, ra_arena *arena, const char *prefer_world, ra_scene *warn,
                        lego_wdb_set **out, ra_error *err)
{
    *out = NULL;
    lego_wdb_set *w = ra_arena_alloc(arena, sizeof *w);
    if (!w) return ra_fail_nomem(err, FMT);
    w->data = data;
    w->size = size;
    w->ar = arena;
    w->err = err;
    w->warn = warn;
    w->prefer = -1;
    if (!ra_strmap_init(&w->tex_map, arena, 64) || !ra_strmap_init(&w->part_map, arena, 64))
        return ra_fail_nomem(err, FMT);
    if (!read_directory(w)) return err->code;
    for (uint32_t i = 0; prefer_world && i < w->dir.world_count; i++)
        if (!lego_stricmp(w->dir.worlds[i].name, prefer_world)) w->prefer = i;
    *out = w;
    return RA_OK;
}

void lego_wdb_prefer_world(lego_wdb_set *w, int64_t world)
{
    if (w->tex_step == 0 && w->part_step == 0) w->prefer = world;
}

const lego_wdb_dir *lego_wdb_directory(const lego_wdb_set *w) { return &w->dir; }

const lego_wdb_texture *lego_wdb_textures(const lego_wdb_set *w, size_t *count)
{
    *count = w->texture_count;
    return w->textures;
}

void lego_wdb_close(lego_wdb_set *w)
{
    w->data = NULL;
    w->size = 0;
}

/* Every texture name of every source, for `list`: indexes them all. */
ra_status lego_wdb_all_textures(lego_wdb_set *w, const char *const **names, size_t *count, ra_error *err)
{
    w->err = err;
    while (index_next_textures(w)) {
    }
    if (err->code != RA_OK) return err->code;
    const char **v = ra_arena_array(w->ar, w->tex_count, sizeof *v);
    if (!v) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < w->tex_count; i++) v[i] = w->tex[i].name;
    *names = v;
    *count = w->tex_count;
    return RA_OK;
}

/* Every part of the global block (names), for `list`. */
ra_status lego_wdb_all_parts(lego_wdb_set *w, const char *const **names, const char *const **sources, size_t *count,
                             ra_error *err)
{
    w->err = err;
    while (index_next_parts(w)) {
    }
    if (err->code != RA_OK) return err->code;
    const char **v = ra_arena_array(w->ar, w->part_count, sizeof *v);
    const char **s = ra_arena_array(w->ar, w->part_count, sizeof *s);
    if (!v || !s) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < w->part_count; i++) v[i] = w->parts[i].name, s[i] = w->parts[i].source;
    *names = v;
    *sources = s;
    *count = w->part_count;
    return RA_OK;
}
