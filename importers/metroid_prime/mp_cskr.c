/* Metroid Prime 1/2 CSKR (skin rules).  docs/formats/metroid_prime.md §13.3.
 *
 *   u32 rule count
 *   per rule: u32 weight count, that many {u32 CINF bone id, f32 weight},
 *             u32 vertex count (the next that many CMDL positions use it)
 *   footer (Prime 1: point and normal counts; Prime 2: envelope sets), not read
 * The game keeps at most three weights per rule, in file order. */
#include <math.h>
#include <string.h>

#include "mp_internal.h"

#define FMT "metroid_cskr"

ra_status mp_cskr_read(const uint8_t *data, size_t size, ra_arena *ar, mp_cskr *out, ra_error *err)
{
    memset(out, 0, sizeof *out);
    ra_cursor c;
    ra_cursor_init(&c, data, size, FMT, err);
    if (!ra_rd_u32be(&c, &out->rule_count, "rule_count")) return err->code;
    /* a rule is at least a weight count and a vertex count */
    if (!ra_cursor_check_count(&c, out->rule_count, 8, "rule_count")) return err->code;
    out->rules = ra_arena_array(ar, out->rule_count, sizeof *out->rules);
    if (!out->rules) return ra_fail_nomem(err, FMT);
    for (uint32_t r = 0; r < out->rule_count; r++) {
        mp_skin_rule *rule = &out->rules[r];
        rule->offset = c.pos;
        if (!ra_rd_u32be(&c, &rule->weight_count, "rule.weight_count")) return err->code;
        if ((uint64_t)rule->weight_count * 8 + 4 > ra_cursor_left(&c))
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, rule->offset, "rule.weight_count",
                           "rule %u: %u weights (%llu bytes) and a vertex count, %zu bytes left", r, rule->weight_count,
                           (unsigned long long)rule->weight_count * 8, ra_cursor_left(&c) + 4);
        for (uint32_t k = 0; k < rule->weight_count; k++) {
            uint32_t id = 0;
            float w = 0;
            size_t at = c.pos;
            ra_rd_u32be(&c, &id, "rule.bone_id");
            ra_rd_f32be(&c, &w, "rule.weight");
            if (!isfinite(w))
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 4, "rule.weight", "rule %u: weight %u is not finite", r,
                               k);
            if (k >= MP_RULE_WEIGHTS) { /* the game reads no further */
                out->dropped++;
                continue;
            }
            uint32_t u = 0;
            while (u < rule->used && rule->bone[u] != id) u++;
            if (u == rule->used) {
                rule->bone[u] = id;
                rule->weight[u] = 0;
                rule->bone_offset[u] = at;
                rule->used++;
            }
            rule->weight[u] += w;
        }
        if (!ra_rd_u32be(&c, &rule->vertex_count, "rule.vertex_count")) return err->code;
        out->vertices += rule->vertex_count;
    }
    out->footer_size = ra_cursor_left(&c);
    return RA_OK;
}
