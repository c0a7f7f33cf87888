/* LEGO Island: the meshes of WORLD.WDB attached to the nodes of an .ani
 * (docs/formats/lego_island.md, "Binding an animation to WORLD.WDB").
 *
 * Each actor of the animation gets its ROI as the engine makes it: a
 * character assembled from the tables (type 2), an automatic ROI from a
 * part's LOD list (types 3 and 4), or a model of the WDB (the others).  The
 * nodes then bind ROIs by name: at the top level against the actors' ROIs
 * (which then become the context of the nodes below), below that anywhere
 * in the context ROI's subtree (the context stays: the animation's tree is
 * deeper than the ROI's), else as a top-level ROI again; a name starting
 * '-' binds nothing.  A bound ROI's meshes hang on its node in their stored
 * local coordinates (the animation replaces the ROI's whole transform); a
 * ROI of a bound actor that no node binds stays where it was, its static
 * world baked into its vertices on RootNode. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "retroanim/lego_wdb.h"

#define FMT "lego_ani"

/* The world of an SI script (the game's RegisterWorlds with its script names). */
static const char *world_of_script(const char *stem)
{
    static const struct {
        const char *script, *world;
    } map[] = {{"isle", "ACT1"},     {"act2main", "ACT2"}, {"act3", "ACT3"},      {"hospital", "HOSP"},
               {"police", "POLICE"}, {"garage", "GMAIN"},  {"infomain", "IMAIN"}, {"copter", "BLDH"},
               {"dunecar", "BLDD"},  {"jetski", "BLDJ"},   {"racecar", "BLDR"},   {"carrace", "RACC"},
               {"jetrace", "RACJ"}};
    for (size_t i = 0; stem && i < sizeof map / sizeof map[0]; i++)
        if (!lego_stricmp(map[i].script, stem)) return map[i].world;
    return NULL;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* The regular file (want_dir: the folder) in folder dir named name in any
 * case, the first in byte order where several spellings are there (a
 * case-sensitive file system), as dir/NAME in the arena; NULL when none (or
 * out of memory: *nomem).  *unlisted: dir could not be listed. */
static char *find_nocase(ra_arena *ar, const char *dir, const char *name, bool want_dir, bool *unlisted, bool *nomem)
{
    const ra_folder *d = ra_folder_open(dir);
    *unlisted = d == NULL;
    if (!d) return NULL;
    char *best = NULL;
    const char *best_name = NULL;
    for (size_t i = ra_folder_find(d, name, strlen(name)); i != SIZE_MAX; i = ra_folder_find_next(d, i)) {
        if (best_name && strcmp(d->names[i], best_name) >= 0) continue;
        char *p = ra_arena_printf(ar, "%s/%s", dir, d->names[i]);
        if (!p) {
            *nomem = true;
            break;
        }
        struct stat st;
        if (stat(p, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
            best = p, best_name = d->names[i];
    }
    ra_folder_close(d);
    return *nomem ? NULL : best;
}

/* WORLD.WDB (any case) in folder in; where in cannot be listed, its upper,
 * lower and capitalised spellings are tried.  NULL when none (or out of
 * memory: *nomem). */
static char *wdb_in(ra_arena *ar, const char *in, bool *nomem)
{
    static const char *const names[] = {"WORLD.WDB", "world.wdb", "World.wdb"};
    bool unlisted = false;
    char *p = find_nocase(ar, in, "world.wdb", false, &unlisted, nomem);
    for (size_t n = 0; !p && !*nomem && unlisted && n < sizeof names / sizeof names[0]; n++) {
        if (!(p = ra_arena_printf(ar, "%s/%s", in, names[n]))) return *nomem = true, NULL;
        if (!file_exists(p)) p = NULL;
    }
    return p;
}

/* WORLD.WDB where the game keeps it, from the file's folder: the folder
 * itself, then up to three folders up, each as DIR/WORLD.WDB and
 * DIR/DATA/WORLD.WDB, the names in any case (looked up in the folders'
 * listings; where a folder cannot be listed, DATA, data and Data and the
 * upper, lower and capitalised WDB names are tried).  A game install has
 * LEGO/SCRIPTS/ISLE/ISLE.SI and LEGO/DATA/WORLD.WDB.  NULL when none (or
 * out of memory: *nomem). */
static char *search_wdb(ra_arena *ar, const char *file, bool *nomem)
{
    static const char *const subs[] = {"DATA", "data", "Data"};
    const char *slash = file ? strrchr(file, '/') : NULL;
    const char *bslash = file ? strrchr(file, '\\') : NULL;
    if (bslash && (!slash || bslash > slash)) slash = bslash;
    char *dir = slash ? ra_arena_strndup(ar, file, (size_t)(slash - file)) : ra_arena_strndup(ar, ".", 1);
    if (!dir) return *nomem = true, NULL;
    for (int up = 0; up < 4; up++) {
        char *p = wdb_in(ar, dir, nomem);
        if (p || *nomem) return p;
        bool unlisted = false;
        char *data = find_nocase(ar, dir, "data", true, &unlisted, nomem);
        if (data && (p = wdb_in(ar, data, nomem))) return p;
        for (size_t s = 0; !*nomem && unlisted && s < sizeof subs / sizeof subs[0]; s++) {
            if (!(data = ra_arena_printf(ar, "%s/%s", dir, subs[s]))) return *nomem = true, NULL;
            if ((p = wdb_in(ar, data, nomem))) return p;
        }
        if (*nomem || !(dir = ra_arena_printf(ar, "%s/..", dir))) return *nomem = true, NULL;
    }
    return NULL;
}

/* The stem of a path, lower-cased (the SI script's name). */
static char *stem_of(ra_arena *ar, const char *path)
{
    if (!path) return NULL;
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    size_t n = strcspn(b, ".");
    char *s = ra_arena_strndup(ar, b, n);
    if (s)
        for (char *q = s; *q; q++) *q = (char)tolower((unsigned char)*q);
    return s;
}

typedef struct actor_roi {
    const char *key; /* the name nodes bind it by */
    lego_wdb_roi *roi;
    const char *source; /* "character", "part NAME", "model NAME" */
} actor_roi;

typedef struct binder {
    ra_document *doc;
    lego_wdb_set *w;
    ra_arena *ar;
    ra_error *err;
    actor_roi *actors;
    size_t actor_count;
    uint32_t max_depth;
    ra_strmap by_name; /* lower-cased actor key or ROI name -> actor + 1 */
} binder;

static char *lower_dup(ra_arena *ar, const char *s, bool trim_digits, bool trim_underscores)
{
    size_t n = strlen(s);
    while (trim_digits && n && (isdigit((unsigned char)s[n - 1]) || (trim_underscores && s[n - 1] == '_'))) n--;
    char *d = ra_arena_strndup(ar, s, n);
    if (d)
        for (char *q = d; *q; q++) *q = (char)tolower((unsigned char)*q);
    return d;
}

/* A model of the WDB by name, placed; RA_OK with *out NULL when none. */
static ra_status model_roi(binder *b, const char *name, lego_wdb_roi **out, const char **source)
{
    *out = NULL;
    int64_t mi = lego_wdb_find_model(b->w, name);
    if (mi == -2) return ra_fail_nomem(b->err, FMT);
    if (mi < 0) return RA_OK;
    ra_status st = lego_wdb_model(b->w, (size_t)mi, b->max_depth, out, b->err);
    if (st == RA_OK) *source = ra_arena_printf(b->ar, "model %s", name);
    return st != RA_OK ? st : *source ? RA_OK : ra_fail_nomem(b->err, FMT);
}

/* An automatic ROI: the LOD list of the part named part, under the ROI name roi_name. */
static ra_status part_roi(binder *b, const char *part, const char *roi_name, lego_wdb_roi **out, const char **source)
{
    ra_status st = lego_wdb_part(b->w, part, out, b->err);
    if (st != RA_OK || !*out) return st;
    (*out)->name = roi_name;
    *source = ra_arena_printf(b->ar, "part %s", part);
    return *source ? RA_OK : ra_fail_nomem(b->err, FMT);
}

/* The ROI of one actor entry (docs: "Which ROI each actor entry uses"). */
static ra_status actor(binder *b, const lego_actor *ac, actor_roi *out)
{
    const char *n = ac->name;
    lego_wdb_roi *r = NULL;
    const char *src = NULL;
    ra_status st = RA_OK;
    char *key = NULL;
    if (ac->type == 2) {
        key = lower_dup(b->ar, n[0] == '*' ? n + 1 : n, false, false);
        if (!key) return ra_fail_nomem(b->err, FMT);
        st = lego_wdb_character(b->w, key, &r, b->err);
        src = "character";
    } else if (ac->type == 3 || ac->type == 4) {
        key = lower_dup(b->ar, n[0] ? n + 1 : n, false, false); /* the engine drops the first character */
        char *part = key ? lower_dup(b->ar, key, ac->type == 3, true) : NULL;
        if (!part) return ra_fail_nomem(b->err, FMT);
        st = part_roi(b, part, key, &r, &src);
        if (st == RA_OK && !r) st = model_roi(b, key, &r, &src);
    } else {
        key = lower_dup(b->ar, n[0] == '*' ? n + 1 : n, false, false);
        if (!key) return ra_fail_nomem(b->err, FMT);
        st = model_roi(b, key, &r, &src);
        if (st == RA_OK && !r) {
            char *part = lower_dup(b->ar, key, true, true);
            if (!part) return ra_fail_nomem(b->err, FMT);
            st = part_roi(b, part, key, &r, &src);
        }
    }
    if (st != RA_OK) return st;
    out->key = key;
    out->roi = r;
    out->source = src;
    if (!r)
        ra_scene_warn(&b->doc->scene, "actor %s (type %u): %s in the WDB; its nodes stay without a mesh", n, ac->type,
                      ac->type == 2 ? "not a character of the game's tables, or its parts are missing"
                                    : "no model or part of that name");
    return RA_OK;
}

/* The actor ROI a top-level node of this name binds (its key or its ROI's
 * name, any case; the first actor wins), or NULL; *nomem on failure. */
static actor_roi *top_level(binder *b, const char *name, bool *nomem)
{
    char *k = lower_dup(b->ar, name, false, false);
    if (!k) return *nomem = true, NULL;
    const uint32_t *v = ra_strmap_get(&b->by_name, k);
    return v && *v ? &b->actors[*v - 1] : NULL;
}

static bool index_actors(binder *b)
{
    if (!ra_strmap_init(&b->by_name, b->ar, 2 * b->actor_count + 1)) return false;
    for (size_t i = 0; i < b->actor_count; i++) {
        if (!b->actors[i].roi) continue;
        const char *names[2] = {b->actors[i].key, b->actors[i].roi->name};
        for (int k = 0; k < 2; k++) {
            char *n = lower_dup(b->ar, names[k], false, false);
            uint32_t *v = n ? ra_strmap_slot(&b->by_name, n) : NULL;
            if (!v) return false;
            if (!*v) *v = (uint32_t)(i + 1);
        }
    }
    return true;
}

/* Every ROI of the actors' trees, numbered in pre-order (for the binder table). */
typedef struct roi_slot {
    const lego_wdb_roi *roi;
    int64_t node; /* the binding node, -1 */
    size_t actor;
} roi_slot;

static size_t tree_size(const lego_wdb_roi *r, uint32_t depth)
{
    size_t n = 1;
    for (uint32_t i = 0; depth <= RA_MAX_DEPTH_LIMIT && i < r->child_count; i++)
        n += tree_size(&r->children[i], depth + 1);
    return n;
}

static void tree_fill(lego_wdb_roi *r, size_t actor, roi_slot *out, size_t *n, uint32_t depth)
{
    r->tag = *n;
    out[(*n)++] = (roi_slot){r, -1, actor};
    for (uint32_t i = 0; depth <= RA_MAX_DEPTH_LIMIT && i < r->child_count; i++)
        tree_fill(&r->children[i], actor, out, n, depth + 1);
}

static roi_slot *slot_of(roi_slot *slots, size_t n, const lego_wdb_roi *r)
{
    return r->tag < n && slots[r->tag].roi == r ? &slots[r->tag] : NULL;
}

static ra_status bind_all(binder *b, const lego_ani *a, const lego_node *const *node_of, bool native)
{
    ra_document *doc = b->doc;
    ra_scene *s = &doc->scene;
    ra_error *err = b->err;
    b->actors = ra_arena_array(b->ar, a->num_actors, sizeof *b->actors);
    if (!b->actors) return ra_fail_nomem(err, FMT);
    for (uint32_t i = 0; i < a->num_actors; i++) {
        if (!a->actors[i].name_len || !a->actors[i].name[0]) continue;
        actor_roi *out = &b->actors[b->actor_count];
        ra_status st = actor(b, &a->actors[i], out);
        if (st == RA_ERR_NO_MEMORY || err->code == RA_ERR_NO_MEMORY) return ra_fail_nomem(err, FMT);
        if (st != RA_OK) { /* this actor's ROI cannot be made: it has none, the others still bind */
            char msg[RA_ERROR_TEXT_MAX];
            ra_error_format(err, msg, sizeof msg);
            ra_scene_warn(s, "actor %s (type %u): %s: its nodes stay without a mesh", a->actors[i].name,
                          a->actors[i].type, msg);
            ra_error_clear(err);
            const char *n = a->actors[i].name;
            out->key = lower_dup(b->ar, n[0] == '*' ? n + 1 : n, false, false);
            if (!out->key) return ra_fail_nomem(err, FMT);
            out->roi = NULL;
            out->source = NULL;
        }
        b->actor_count++;
    }
    if (!index_actors(b)) return ra_fail_nomem(err, FMT);
    size_t nslots = 0;
    for (size_t i = 0; i < b->actor_count; i++)
        if (b->actors[i].roi) nslots += tree_size(b->actors[i].roi, 0);
    roi_slot *slots = ra_arena_array(b->ar, nslots ? nslots : 1, sizeof *slots);
    lego_wdb_roi **ctx = ra_arena_array(b->ar, s->node_count, sizeof *ctx);
    if (!slots || !ctx) return ra_fail_nomem(err, FMT);
    size_t k = 0;
    for (size_t i = 0; i < b->actor_count; i++)
        if (b->actors[i].roi) tree_fill(b->actors[i].roi, i, slots, &k, 0);
    /* the nodes in pre-order: each binds against its context (the ROI of the nearest bound ancestor) */
    size_t rebound = 0;
    uint64_t budget = LEGO_WDB_SEARCH_BUDGET;
    for (size_t i = 0; i < s->node_count; i++) {
        const lego_node *nd = node_of[i];
        int32_t p = s->nodes[i].parent;
        lego_wdb_roi *pc = p >= 0 ? ctx[p] : NULL;
        ctx[i] = pc;
        if (!nd || !nd->name || !nd->name[0] || nd->name[0] == '-') continue;
        const char *name = nd->name[0] == '*' ? nd->name + 1 : nd->name;
        lego_wdb_roi *r = pc ? lego_wdb_find_roi(pc, name, 0, &budget) : NULL;
        bool top = false; /* only a top-level ROI becomes its children's context */
        if (!r) {
            bool nomem = false;
            actor_roi *ar = top_level(b, name, &nomem);
            if (nomem) return ra_fail_nomem(err, FMT);
            r = ar ? ar->roi : NULL;
            top = r != NULL;
        }
        if (!r) continue;
        roi_slot *sl = slot_of(slots, nslots, r);
        if (!sl) continue;
        if (sl->node >= 0) rebound++;
        sl->node = (int64_t)i; /* the last binder in pre-order wins, as the engine's last write */
        if (top) ctx[i] = r;
        if (!ra_meta_set_string(b->ar, &s->nodes[i].meta, "lego.roi", r->name) ||
            !ra_meta_set_string(b->ar, &s->nodes[i].meta, "lego.roi_source", b->actors[sl->actor].source) ||
            (r->prefix_share && !ra_meta_set_string(b->ar, &s->nodes[i].meta, "lego.lod_note", LEGO_PREFIX_SHARE_NOTE)))
            return ra_fail_nomem(err, FMT);
    }
    if (rebound) ra_scene_warn(s, "%zu ROI(s) bound by several nodes: the mesh follows the last one", rebound);
    if (!budget) ra_scene_warn(s, "too many nodes and ROIs to bind them all: some nodes stay without a mesh");
    /* the meshes: bound ROIs on their node; the others of a bound actor at their static world */
    bool *actor_bound = ra_arena_array(b->ar, b->actor_count ? b->actor_count : 1, sizeof *actor_bound);
    if (!actor_bound) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].node >= 0) actor_bound[slots[i].actor] = true;
    lego_mesh_out *o = lego_mesh_out_new(s, b->w, native);
    if (!o) return ra_fail_nomem(err, FMT);
    size_t still = 0, bound = 0, shared = 0;
    char names[400] = "";
    for (size_t i = 0; i < nslots; i++) {
        const roi_slot *sl = &slots[i];
        if (!actor_bound[sl->actor]) continue;
        if (sl->roi->prefix_share && shared++ < 8) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", sl->roi->name);
        }
        ra_status st;
        if (sl->node >= 0) {
            bound++;
            st = lego_mesh_out_roi(o, sl->roi, (uint32_t)sl->node, NULL, err);
        } else {
            if (sl->roi->mesh_count) still++;
            st = lego_mesh_out_roi(o, sl->roi, 0, &sl->roi->world, err);
        }
        if (st != RA_OK) return st;
    }
    for (size_t i = 0; i < b->actor_count; i++)
        if (b->actors[i].roi && !actor_bound[i])
            ra_scene_warn(s, "actor %s: no node binds its ROI; left out", b->actors[i].key);
    if (still)
        ra_scene_warn(s, "%zu ROI(s) with geometry bound by no node stay at their static pose (on RootNode)", still);
    if (shared) ra_scene_warn(s, "ROI(s) %s%s: " LEGO_PREFIX_SHARE_NOTE, names, shared > 8 ? ", ..." : "");
    ra_status st = lego_mesh_out_finish(o, err);
    if (st != RA_OK) return st;
    return ra_meta_set_int(b->ar, &s->meta, "lego.wdb.bound_rois", (int64_t)bound) ? RA_OK : ra_fail_nomem(err, FMT);
}

ra_status lego_wdb_bind(ra_document *doc, const lego_ani *a, const lego_node *const *node_of, bool native,
                        ra_error *err)
{
    const char *opt = ra_options_get(&doc->options, "wdb");
    if (opt && !strcmp(opt, "none")) return RA_OK;
    ra_arena *ar = doc->arena;
    const char *base = doc->archive_filename ? doc->archive_filename : doc->filename;
    const char *path = opt;
    if (!path) {
        if (doc->in_archive && !doc->archive_filename) return RA_OK;
        bool nomem = false;
        path = search_wdb(ar, base, &nomem);
        if (nomem) return ra_fail_nomem(err, FMT);
        if (!path) return RA_OK; /* no WDB: the animation alone, as always */
    }
    ra_file_bytes f;
    ra_error e;
    ra_error_clear(&e);
    if (ra_file_bytes_get(path, ra_max_file_size(&doc->options), &f, &e) != RA_OK) {
        if (e.code == RA_ERR_NO_MEMORY) return ra_fail_nomem(err, FMT);
        if (opt) return ra_fail_wrap(err, &e, FMT, RA_NO_OFFSET, "wdb", "%s", path);
        /* found beside the file but not loadable (unreadable, over max_file_size): the animation alone, and why */
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        ra_scene_warn(&doc->scene, "%s: not used: %s", path, msg);
        return RA_OK;
    }
    const char *world = doc->archive_filename ? world_of_script(stem_of(ar, doc->archive_filename)) : NULL;
    binder b = {doc, NULL, ar, &e, NULL, 0, LEGO_DEFAULT_MAX_DEPTH, {0}};
    ra_scene *s = &doc->scene;
    size_t meshes = s->mesh_count, materials = s->material_count, textures = s->texture_count;
    ra_status st = lego_wdb_open(f.data, f.size, ar, world, s, &b.w, &e);
    if (st == RA_OK) st = bind_all(&b, a, node_of, native);
    if (b.w) lego_wdb_close(b.w);
    ra_file_bytes_free(&f);
    if (st != RA_OK) {
        if (e.code == RA_ERR_NO_MEMORY) return ra_fail_nomem(err, FMT);
        if (opt) return ra_fail_wrap(err, &e, FMT, RA_NO_OFFSET, "wdb", "%s", path);
        /* a WDB found beside the file that cannot be read: the animation alone, and why */
        s->mesh_count = meshes, s->material_count = materials, s->texture_count = textures;
        char msg[512];
        ra_error_format(&e, msg, sizeof msg);
        ra_scene_warn(s, "%s: not used: %s", path, msg);
        return RA_OK;
    }
    ra_meta_list *md = &doc->scene.meta;
    bool ok =
        ra_meta_set_string(ar, md, "lego.wdb", path) && (!world || ra_meta_set_string(ar, md, "lego.wdb.world", world));
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}
