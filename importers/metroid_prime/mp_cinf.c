/* Metroid Prime CINF (skeleton) reader and writer, and the search for the
 * skeleton that belongs to an ANIM file.  docs/formats/metroid_prime.md §5. */
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_internal.h"

#define FMT "metroid_cinf"

#define BONE_MIN_MP1 24u /* id, parent, position, link count */
#define BONE_MIN_MP2 56u /* + two quaternions */

static bool oom(ra_cursor *c, const char *field)
{
    return ra_cursor_fail(c, RA_ERR_NO_MEMORY, c->pos, field, "out of memory (memory_limit)");
}

static bool rd_floats(ra_cursor *c, float *f, int n, const char *field)
{
    for (int i = 0; i < n; i++) {
        size_t at = c->pos;
        if (!ra_rd_f32be(c, &f[i], field)) return false;
        if (!isfinite(f[i])) return ra_cursor_fail(c, RA_ERR_BAD_VALUE, at, field, "not a finite number");
    }
    return true;
}

static bool rd_ids(ra_cursor *c, ra_arena *ar, uint32_t *count, uint32_t **out, const char *count_field,
                   const char *field)
{
    if (!ra_rd_u32be(c, count, count_field)) return false;
    if (!ra_cursor_check_count(c, *count, 4, field)) return false;
    *out = ra_arena_array(ar, *count, sizeof **out);
    if (!*out) return oom(c, field);
    for (uint32_t i = 0; i < *count; i++) ra_rd_u32be(c, &(*out)[i], field);
    return ra_cursor_ok(c);
}

_Static_assert(offsetof(mp_bone, id) == 0 && offsetof(mp_channel, bone_id) == 0, "ids lead their records");

bool mp_is_padding(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xFF) return false;
    return true;
}

/* Parent links must not loop (docs/formats/metroid_prime.md §5: parent 2 or
 * an id not in the file is a root).  Fails at the first bone, in file order,
 * that lies on a cycle. */
static bool check_cycles(ra_cursor *c, ra_arena *ar, const mp_cinf *k)
{
    uint32_t n = k->bone_count;
    ra_id_slot *t = ra_sorted_ids(ar, k->bones, n, sizeof *k->bones);
    uint8_t *state = ra_arena_array(ar, n, 1); /* 0 new, 1 on the current walk, 2 done */
    uint32_t *walk = ra_arena_array(ar, n, sizeof *walk);
    if (!t || !state || !walk) return oom(c, "bone");
    int64_t first = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (state[i]) continue;
        uint32_t len = 0;
        int64_t cur = i;
        while (cur >= 0 && state[cur] == 0) {
            state[cur] = 1;
            walk[len++] = (uint32_t)cur;
            cur = mp_bone_parent(k, t, (size_t)cur);
            /* a duplicate id is not the bone the link names: only the first counts */
        }
        if (cur >= 0 && state[cur] == 1) {
            /* the cycle is the part of the walk from cur on */
            bool on = false;
            for (uint32_t w = 0; w < len; w++) {
                if (walk[w] == (uint32_t)cur) on = true;
                if (on && (first < 0 || walk[w] < first)) first = walk[w];
            }
        }
        for (uint32_t w = 0; w < len; w++) state[walk[w]] = 2;
    }
    if (first >= 0) {
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, k->bones[first].offset, "bone.parent",
                              "parent links of bone %u form a cycle", k->bones[first].id);
    }
    return true;
}

ra_status mp_cinf_read(const uint8_t *data, size_t size, int game_hint, ra_arena *ar, mp_cinf *out, ra_error *err)
{
    memset(out, 0, sizeof *out);
    ra_cursor c;
    ra_cursor_init(&c, data, size, FMT, err);
    if (!ra_rd_u32be(&c, &out->bone_count, "bone_count")) return err->code;
    int game = game_hint;
    if (!game) {
        /* the u32 after the first bone's position: a link count in Prime 1,
         * a quaternion's w (0.0 or a float's bits, > 100) in Prime 2 */
        game = 1;
        if (out->bone_count && size >= 28) {
            uint32_t v = ra_load_u32be(data + 24);
            if (v == 0 || v > 100) game = 2;
        }
    }
    out->game = game;
    if (!ra_cursor_check_count(&c, out->bone_count, game == 2 ? BONE_MIN_MP2 : BONE_MIN_MP1, "bone")) return err->code;
    out->bones = ra_arena_array(ar, out->bone_count, sizeof *out->bones);
    if (!out->bones) return oom(&c, "bone"), err->code;
    for (uint32_t i = 0; i < out->bone_count; i++) {
        mp_bone *b = &out->bones[i];
        b->offset = c.pos;
        ra_rd_u32be(&c, &b->id, "bone.id");
        ra_rd_u32be(&c, &b->parent, "bone.parent");
        if (!rd_floats(&c, b->pos, 3, "bone.position")) return err->code;
        if (game == 2 && (!rd_floats(&c, b->rot_model, 4, "bone.rotation") ||
                          !rd_floats(&c, b->rot_local, 4, "bone.local_rotation")))
            return err->code;
        if (!rd_ids(&c, ar, &b->link_count, &b->links, "bone.link_count", "bone.links")) return err->code;
    }
    if (!rd_ids(&c, ar, &out->build_count, &out->build_order, "build_order_count", "build_order")) return err->code;
    if (!ra_rd_u32be(&c, &out->name_count, "name_count")) return err->code;
    if (!ra_cursor_check_count(&c, out->name_count, 5, "name")) return err->code;
    out->names = ra_arena_array(ar, out->name_count, sizeof *out->names);
    out->name_ids = ra_arena_array(ar, out->name_count, sizeof *out->name_ids);
    if (!out->names || !out->name_ids) return oom(&c, "name"), err->code;
    for (uint32_t i = 0; i < out->name_count; i++) {
        const uint8_t *p = c.data + c.pos;
        const uint8_t *nul = memchr(p, 0, ra_cursor_left(&c));
        if (!nul)
            return ra_cursor_fail(&c, RA_ERR_TRUNCATED, c.pos, "name", "bone name without its closing NUL"), err->code;
        if (!ra_rd_str(&c, ar, (size_t)(nul - p), &out->names[i], "name")) return err->code;
        ra_rd_skip(&c, 1, "name");
        ra_rd_u32be(&c, &out->name_ids[i], "name.bone_id");
    }
    if (!ra_cursor_ok(&c)) return err->code;
    out->trailing_size = ra_cursor_left(&c);
    if (out->trailing_size) {
        out->trailing = ra_arena_alloc(ar, out->trailing_size);
        if (!out->trailing) return oom(&c, "trailing"), err->code;
        ra_rd_bytes(&c, out->trailing, out->trailing_size, "trailing");
    }
    check_cycles(&c, ar, out);
    return err->code;
}

ra_status mp_cinf_write(const mp_cinf *k, ra_writer *w, ra_error *err)
{
    ra_wr_u32be(w, k->bone_count);
    for (uint32_t i = 0; i < k->bone_count; i++) {
        const mp_bone *b = &k->bones[i];
        ra_wr_u32be(w, b->id);
        ra_wr_u32be(w, b->parent);
        for (int j = 0; j < 3; j++) ra_wr_f32be(w, b->pos[j]);
        if (k->game == 2) {
            for (int j = 0; j < 4; j++) ra_wr_f32be(w, b->rot_model[j]);
            for (int j = 0; j < 4; j++) ra_wr_f32be(w, b->rot_local[j]);
        }
        ra_wr_u32be(w, b->link_count);
        for (uint32_t j = 0; j < b->link_count; j++) ra_wr_u32be(w, b->links[j]);
    }
    ra_wr_u32be(w, k->build_count);
    for (uint32_t i = 0; i < k->build_count; i++) ra_wr_u32be(w, k->build_order[i]);
    ra_wr_u32be(w, k->name_count);
    for (uint32_t i = 0; i < k->name_count; i++) {
        ra_wr_bytes(w, k->names[i], strlen(k->names[i]) + 1);
        ra_wr_u32be(w, k->name_ids[i]);
    }
    if (k->trailing_size) ra_wr_bytes(w, k->trailing, k->trailing_size);
    if (w->failed) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory writing the file");
    return RA_OK;
}

const char *mp_cinf_bone_name(const mp_cinf *k, uint32_t id)
{
    for (uint32_t i = 0; i < k->name_count; i++)
        if (k->name_ids[i] == id) return k->names[i];
    return NULL;
}

/* ---- finding the skeleton of an ANIM ------------------------------------------------------------ */
bool mp_find_cinf(const char *anim_path, char *out, size_t out_size, bool *sibling)
{
    *sibling = false;
    char dir[4096], key[4096 + 8], path[4096];
    const char *base;
    size_t stem_len;
    if (!ra_path_parts(anim_path, dir, sizeof dir, &base, &stem_len) || stem_len + 6 > sizeof key) return false;
    memcpy(key, base, stem_len);
    memcpy(key + stem_len, ".cinf", 6);
    const ra_folder *d = ra_folder_open(dir);
    if (!d) return false;
    /* the sibling: STEM.cinf, the stem as the ANIM has it, the extension in
     * any case, the first regular one in listing order (looked up through
     * the listing's index: a scan per ANIM made a batch over a dumped pak
     * quadratic) */
    bool found = false;
    for (size_t i = stem_len ? ra_folder_find(d, key, stem_len + 5) : SIZE_MAX; !found && i != SIZE_MAX;
         i = ra_folder_find_next(d, i))
        found = !strncmp(d->names[i], base, stem_len) && ra_regular_in(dir, d->names[i], path, sizeof path) &&
                strlen(path) < out_size;
    /* else the folder's only CINF, where it has one regular file named
     * *.cinf (any case); counting stops at two */
    char only[4096] = "";
    size_t cinf_count = 0;
    for (size_t i = found ? SIZE_MAX : ra_folder_find_ext(d, "cinf", 4); cinf_count < 2 && i != SIZE_MAX;
         i = ra_folder_find_ext_next(d, i))
        if (ra_regular_in(dir, d->names[i], path, sizeof path) && ++cinf_count == 1)
            memcpy(only, path, strlen(path) + 1);
    ra_folder_close(d);
    if (found) {
        memcpy(out, path, strlen(path) + 1);
        return *sibling = true;
    }
    if (cinf_count == 1 && strlen(only) < out_size) {
        strcpy(out, only);
        return true;
    }
    return false;
}
