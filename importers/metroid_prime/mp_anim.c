/* Metroid Prime ANIM reader, writer and encoder: bytes <-> mp_anim.
 * docs/formats/metroid_prime.md §2 (version 0), §3 (version 2 and its
 * bitstream), §3.6 (Prime 2, the Echoes demo, metaforce's PC version 3). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mp_internal.h"

#define FMT "metroid_anim"
#define MP_MAX_EMPTY_FRAMES (1u << 20)
/* decoded keys (channels x keys) one load may hold: zero-width Prime 2
 * channels cost no bitstream bytes, so the file size does not bound them */
#define MP_MAX_DECODED_KEYS ((uint64_t)1 << 26)

static const char *const g_layout_names[] = {"", "v0-mp1", "v0-mp2", "v2-mp1", "v2-mp2", "v2-demo", "v3-pc"};

const char *mp_layout_name(mp_layout l) { return (l >= MP_V0_MP1 && l <= MP_V3_PC) ? g_layout_names[l] : "unknown"; }

bool mp_layout_from_name(const char *name, mp_layout *out)
{
    for (int l = MP_V0_MP1; l <= MP_V3_PC; l++)
        if (strcmp(name, g_layout_names[l]) == 0) {
            *out = (mp_layout)l;
            return true;
        }
    return false;
}

static bool is_v0(mp_layout l) { return l == MP_V0_MP1 || l == MP_V0_MP2; }

/* ---- value decoding (docs/formats/metroid_prime.md §3.2 step 4), shared by the reader and the encoder ---- */
static double rot_scale(uint32_t rot_div) { return RA_PI / (2.0 * (double)rot_div); }

double mp_rotation_quantum(uint32_t rot_div) { return rot_scale(rot_div ? rot_div : 0x7FFF); }

static bool vec_in_float_range(ra_vec3 v)
{
    return fabs(v.x) <= FLT_MAX && fabs(v.y) <= FLT_MAX && fabs(v.z) <= FLT_MAX;
}

/* Version 2/3: what mp_key_rot needs to decode the quantized rotations; the
 * values are decoded when read.  With more rotation keys than a table of
 * sines has entries, sin(q * step) of every table entry (the same call, the
 * same results). */
static bool prepare_decode(mp_anim *a, ra_arena *ar)
{
    a->rot_step = rot_scale(a->rot_div);
    a->rot_sin = NULL;
    size_t rot_keys = 0;
    for (size_t c = 0; c < a->channel_count; c++) rot_keys += a->channels[c].has_rot ? a->key_count : 0;
    if (rot_keys <= MP_SIN_HALF) return true;
    double *v = ra_arena_array_uninit(ar, 2 * MP_SIN_HALF + 1, sizeof *v);
    if (!v) return false;
    for (int32_t q = -MP_SIN_HALF; q <= MP_SIN_HALF; q++) v[q + MP_SIN_HALF] = sin(q * a->rot_step);
    a->rot_sin = v;
    return true;
}

/* ---- reader ---------------------------------------------------------------------------------- */
typedef struct rd {
    ra_cursor c;
    ra_arena *arena;
    mp_anim *a;
    ra_read_runner run; /* the bitstream's channels decoded as jobs */
    void *run_ctx;
    unsigned parts; /* in this many (the threads run will use) */
} rd;

static bool rd_finite(rd *r, float *v, const char *field)
{
    size_t at = r->c.pos;
    if (!ra_rd_f32be(&r->c, v, field)) return false;
    if (!isfinite(*v)) return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, field, "not a finite number");
    return true;
}

static bool read_u8_table(rd *r, uint32_t *count, uint8_t **out, const char *count_field, const char *field)
{
    if (!ra_rd_u32be(&r->c, count, count_field)) return false;
    if (!ra_cursor_check_count(&r->c, *count, 1, field)) return false;
    *out = ra_arena_array(r->arena, *count, 1);
    if (!*out) return ra_cursor_nomem(&r->c);
    return ra_rd_bytes(&r->c, *out, *count, field);
}

static bool read_float_array(rd *r, uint32_t expected, uint32_t *count, float **out, unsigned per, const char *field)
{
    size_t at = r->c.pos;
    if (!ra_rd_u32be(&r->c, count, field)) return false;
    if (*count != expected) {
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, field, "holds %u elements, the channel maps need %u", *count,
                              expected);
    }
    if (!ra_cursor_check_count(&r->c, *count, 4u * per, field)) return false;
    *out = ra_arena_bulk_memdup(r->arena, NULL, (size_t)*count * per, sizeof(float)); /* filled below */
    if (!*out) return ra_cursor_nomem(&r->c);
    for (size_t i = 0; i < (size_t)*count * per; i++)
        if (!rd_finite(r, &(*out)[i], field)) return false;
    return true;
}

/* Counts the entries of a map that are not 0xFF and checks they are compact
 * indices below that count. */
static bool check_compact(rd *r, const uint8_t *map, uint32_t n, size_t map_off, uint32_t *used, const char *field)
{
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++) u += map[i] != 0xFF;
    for (uint32_t i = 0; i < n; i++)
        if (map[i] != 0xFF && map[i] >= u) {
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, map_off + i, field,
                                  "entry %u points at element %u, only %u exist", i, map[i], u);
        }
    *used = u;
    return true;
}

/* the tracks' k keys, each filled by the caller (bulk: the scene's keys are baked from them) */
static bool alloc_channel_keys(rd *r, mp_channel *ch, uint32_t k)
{
    ra_arena *ar = r->arena;
    if (ch->has_rot && !(ch->rot = ra_arena_bulk_memdup(ar, NULL, k, sizeof *ch->rot))) return ra_cursor_nomem(&r->c);
    if (ch->has_trans && !(ch->trans = ra_arena_bulk_memdup(ar, NULL, k, sizeof *ch->trans)))
        return ra_cursor_nomem(&r->c);
    if (ch->has_scale && !(ch->scale = ra_arena_bulk_memdup(ar, NULL, k, sizeof *ch->scale)))
        return ra_cursor_nomem(&r->c);
    return true;
}

static ra_vec3 vec_at(const float *arr, size_t i) { return ra_v3(arr[3 * i], arr[3 * i + 1], arr[3 * i + 2]); }

/* Version 0 after the 100-entry bone map (docs/formats/metroid_prime.md §2); `mp2` selects the layout. */
static bool read_v0_body(rd *r, bool mp2)
{
    mp_anim *a = r->a;
    uint32_t k = a->key_count;
    uint32_t nchan = 0, nrot = 0, ntrans = 0, nscale = 0;
    if (!mp2) {
        size_t map_off = r->c.pos + 4;
        if (!read_u8_table(r, &a->rot_map_count, &a->rot_map, "rotation_channel_count", "translation_map"))
            return false;
        nchan = nrot = a->rot_map_count;
        if (!check_compact(r, a->rot_map, nchan, map_off, &ntrans, "translation_map")) return false;
        if (!read_float_array(r, (uint32_t)((uint64_t)nrot * k > UINT32_MAX ? UINT32_MAX : nrot * k),
                              &a->rot_array_count, &a->rot_array, 4, "rotation_keys"))
            return false;
        if (!read_float_array(r, (uint32_t)((uint64_t)ntrans * k > UINT32_MAX ? UINT32_MAX : ntrans * k),
                              &a->trans_array_count, &a->trans_array, 3, "translation_keys"))
            return false;
        a->has_evnt = true;
        if (!ra_rd_u32be(&r->c, &a->evnt_id, "evnt_id")) return false;
    } else {
        size_t off_r = r->c.pos + 4;
        if (!read_u8_table(r, &a->rot_map_count, &a->rot_map, "rotation_map_count", "rotation_map")) return false;
        size_t off_t = r->c.pos + 4;
        if (!read_u8_table(r, &a->trans_map_count, &a->trans_map, "translation_map_count", "translation_map"))
            return false;
        size_t off_s = r->c.pos + 4;
        if (!read_u8_table(r, &a->scale_map_count, &a->scale_map, "scale_map_count", "scale_map")) return false;
        if (!check_compact(r, a->rot_map, a->rot_map_count, off_r, &nrot, "rotation_map") ||
            !check_compact(r, a->trans_map, a->trans_map_count, off_t, &ntrans, "translation_map") ||
            !check_compact(r, a->scale_map, a->scale_map_count, off_s, &nscale, "scale_map"))
            return false;
        nchan = a->rot_map_count;
        if (a->trans_map_count > nchan) nchan = a->trans_map_count;
        if (a->scale_map_count > nchan) nchan = a->scale_map_count;
#define MUL(n) ((uint64_t)(n)*k > UINT32_MAX ? UINT32_MAX : (uint32_t)((n)*k))
        if (!read_float_array(r, MUL(nscale), &a->scale_array_count, &a->scale_array, 3, "scale_keys") ||
            !read_float_array(r, MUL(nrot), &a->rot_array_count, &a->rot_array, 4, "rotation_keys") ||
            !read_float_array(r, MUL(ntrans), &a->trans_array_count, &a->trans_array, 3, "translation_keys"))
            return false;
#undef MUL
    }
    /* channels: one per bone the bone map animates, in bone id order */
    size_t n = 0;
    for (uint32_t b = 0; b < a->map_count; b++)
        if (a->bone_map[b] != 0xFF) {
            if (a->bone_map[b] >= nchan) {
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, 0x20 + b, "bone_map",
                                      "bone %u maps to channel %u, only %u exist", b, a->bone_map[b], nchan);
            }
            n++;
        }
    a->channel_count = n;
    a->channels = ra_arena_array(r->arena, n, sizeof *a->channels);
    if (!a->channels) return ra_cursor_nomem(&r->c);
    n = 0;
    for (uint32_t b = 0; b < a->map_count; b++) {
        uint8_t c = a->bone_map[b];
        if (c == 0xFF) continue;
        mp_channel *ch = &a->channels[n++];
        ch->bone_id = b;
        uint8_t ri = mp2 ? (c < a->rot_map_count ? a->rot_map[c] : 0xFF) : c;
        uint8_t ti = mp2 ? (c < a->trans_map_count ? a->trans_map[c] : 0xFF) : a->rot_map[c];
        uint8_t si = mp2 && c < a->scale_map_count ? a->scale_map[c] : 0xFF;
        ch->has_rot = ri != 0xFF;
        ch->has_trans = ti != 0xFF;
        ch->has_scale = si != 0xFF;
        if (!alloc_channel_keys(r, ch, k)) return false;
        /* a channel without tracks reads nothing (the frame count may be unbacked) */
        for (uint32_t j = 0; (ch->has_rot || ch->has_trans || ch->has_scale) && j < k; j++) {
            if (ch->has_rot) {
                const float *q = &a->rot_array[4 * ((size_t)ri * k + j)];
                ch->rot[j] = ra_q(q[0], q[1], q[2], q[3]);
            }
            if (ch->has_trans) ch->trans[j] = vec_at(a->trans_array, (size_t)ti * k + j);
            if (ch->has_scale) ch->scale[j] = vec_at(a->scale_array, (size_t)si * k + j);
        }
    }
    /* with no key array the frame count is not backed by any bytes */
    if (nrot + ntrans + nscale == 0 && k > MP_MAX_EMPTY_FRAMES)
        return ra_cursor_fail(&r->c, RA_ERR_LIMIT, 0x14, "frame_count", "frame count without any key data above %u",
                              (unsigned)MP_MAX_EMPTY_FRAMES);
    a->key_frames = ra_arena_array(r->arena, k, sizeof *a->key_frames);
    if (!a->key_frames) return ra_cursor_nomem(&r->c);
    for (uint32_t j = 0; j < k; j++) a->key_frames[j] = j;
    return true;
}

static bool read_v0(rd *r, bool mp2)
{
    mp_anim *a = r->a;
    a->layout = mp2 ? MP_V0_MP2 : MP_V0_MP1;
    size_t at;
    ra_rd_u32be(&r->c, &a->version, "version");
    at = r->c.pos;
    if (!ra_rd_f32be(&r->c, &a->duration, "duration")) return false;
    if (!(a->duration >= 0) || !isfinite(a->duration))
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "duration", "not a finite time >= 0");
    ra_rd_u32be(&r->c, &a->duration_state, "duration_state");
    at = r->c.pos;
    if (!ra_rd_f32be(&r->c, &a->interval, "interval")) return false;
    if (!(a->interval > 0) || !isfinite(a->interval))
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "interval", "not a finite time > 0");
    ra_rd_u32be(&r->c, &a->interval_state, "interval_state");
    ra_rd_u32be(&r->c, &a->key_count, "frame_count");
    ra_rd_u32be(&r->c, &a->root_bone, "root_bone");
    at = r->c.pos;
    if (!ra_rd_u32be(&r->c, &a->map_count, "bone_map_count")) return false;
    if (a->map_count != MP_BONE_SLOTS)
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "bone_map_count", "must be %u", (unsigned)MP_BONE_SLOTS);
    a->bone_map = ra_arena_array(r->arena, a->map_count, 1);
    if (!a->bone_map) return ra_cursor_nomem(&r->c);
    if (!ra_rd_bytes(&r->c, a->bone_map, a->map_count, "bone_map")) return false;
    return read_v0_body(r, mp2);
}

static uint32_t popcount32(uint32_t v)
{
    uint32_t n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

static bool read_quant(rd *r, mp_quant *q, bool pc, const char *field)
{
    if (pc) {
        uint32_t v;
        size_t at = r->c.pos;
        if (!ra_rd_u32be(&r->c, &v, field)) return false;
        q->init = (int32_t)(v & 0xFFFFFF00u) / 256; /* arithmetic: the top 24 bits, signed */
        q->bits = (uint8_t)(v & 0xFF);
        if (q->bits > MP_MAX_BITS) return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + 3, field, "bit width above 32");
        return true;
    }
    int16_t init = 0;
    ra_rd_s16be(&r->c, &init, field);
    size_t at = r->c.pos;
    if (!ra_rd_u8(&r->c, &q->bits, field)) return false;
    q->init = init;
    if (q->bits > MP_MAX_BITS) return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, field, "bit width above 32");
    return true;
}

static bool read_count(rd *r, uint32_t *v, bool wide, const char *field)
{
    if (wide) return ra_rd_u32be(&r->c, v, field);
    uint16_t s;
    if (!ra_rd_u16be(&r->c, &s, field)) return false;
    *v = s;
    return true;
}

/* LSB-first bits over big-endian words (docs/formats/metroid_prime.md §3.1),
 * read by position: the 64 bits from word pos/32 on, shifted down by pos%32,
 * hold the next 33 bits or more, so a field of up to 32 bits takes two word
 * loads, a shift and a mask, with no branch on how many bits are buffered
 * (zeros past the stream's end). */
typedef struct bits {
    const uint8_t *p;
    size_t words;
} bits;

static inline uint32_t word_at(const bits *b, size_t i) { return i < b->words ? ra_load_u32be(b->p + 4 * i) : 0; }

/* inside: words pos/32 and the next are known to be in the stream (then
 * one 64-bit big-endian load, its halves swapped, is the two words) */
static inline uint64_t window(const bits *b, uint64_t pos, bool inside)
{
    size_t i = (size_t)(pos >> 5);
    uint64_t w;
    if (inside) {
        const uint8_t *q = b->p + 4 * i;
        uint64_t be = (uint64_t)q[0] << 56 | (uint64_t)q[1] << 48 | (uint64_t)q[2] << 40 | (uint64_t)q[3] << 32 |
                      (uint64_t)q[4] << 24 | (uint64_t)q[5] << 16 | (uint64_t)q[6] << 8 | q[7];
        w = be << 32 | be >> 32;
    } else {
        w = (uint64_t)word_at(b, i) | (uint64_t)word_at(b, i + 1) << 32;
    }
    return w >> (pos & 31);
}

/* One quantized component: where its bits start within a key's, the mask
 * of its bits and its sign bit (0 and 0 for a width of 0: no bits, the
 * value 0).  Every key has the same layout, so each field's position is the
 * key's plus a constant: the fields of a key are loaded independently, not
 * one after another along a running position. */
typedef struct qfield {
    uint64_t at;
    uint32_t mask, sign;
} qfield;

/* the field of width q at *bit, which moves past it */
static qfield field_at(uint64_t *bit, unsigned q)
{
    qfield f = {*bit, q >= 32 ? 0xFFFFFFFFu : (1u << q) - 1, q ? 1u << (q - 1) : 0};
    *bit += q;
    return f;
}

/* the field of the key whose bits start at key, sign-extended to 32 bits: (x ^ sign) - sign */
static inline uint32_t get_field(const bits *b, uint64_t key, const qfield *f, bool inside)
{
    uint32_t x = (uint32_t)window(b, key + f->at, inside) & f->mask;
    return (x ^ f->sign) - f->sign;
}

static int32_t wrap_add(int32_t a, uint32_t d)
{
    uint32_t s = (uint32_t)a + d;
    int32_t r;
    memcpy(&r, &s, sizeof r);
    return r;
}

/* The first non-zero key count of the descriptors (Kb) and where it is. */
typedef struct first_count {
    uint32_t count;
    size_t off;
    bool set;
} first_count;

/* One track of a descriptor: its key count, then its three quantized
 * components when the count is non-zero (or always: a Prime 1 rotation).
 * `wide` selects version 3's 32-bit fields. */
static bool read_track_desc(rd *r, uint32_t *count, bool *has, mp_quant *q, bool wide, bool always, first_count *kb,
                            const char *count_field, const char *field)
{
    size_t at = r->c.pos;
    if (!read_count(r, count, wide, count_field)) return false;
    *has = always || *count != 0;
    if (*count && !kb->set) *kb = (first_count){*count, at, true};
    for (int i = 0; *has && i < 3; i++)
        if (!read_quant(r, &q[i], wide, field)) return false;
    return true;
}

static uint64_t delta_bits(const mp_quant *q) { return (uint64_t)q[0].bits + q[1].bits + q[2].bits; }

/* A channel as the bitstream loop reads it, in a few bytes: where each
 * track's accumulators are (NULL: the track is absent) and its fields. */
typedef struct dchannel {
    uint8_t *wneg;   /* NULL: no rotation */
    uint64_t wbit;   /* the rotation's w sign bit within a key's bits */
    int32_t *acc[3]; /* the tracks present of rotation, translation, scale */
    qfield f[3][3];  /* their fields */
    unsigned tracks; /* how many are present */
} dchannel;

/* Key j of every channel, whose bits start at key: its accumulators = key
 * j-1's plus the deltas read from the stream.  inside: the key's bits and
 * the word after them are in the stream (no bounds check per word). */
static inline void read_key(const bits *bs, uint64_t key, const dchannel *dc, uint32_t n, uint32_t j, bool inside)
{
    for (uint32_t c = 0; c < n; c++) {
        const dchannel *d = &dc[c];
        if (d->wneg) d->wneg[j] = (uint8_t)(window(bs, key + d->wbit, inside) & 1);
        for (unsigned t = 0; t < d->tracks; t++) {
            int32_t *acc = d->acc[t] + 3 * (size_t)j;
            const qfield *f = d->f[t];
            uint32_t d0 = get_field(bs, key, &f[0], inside), d1 = get_field(bs, key, &f[1], inside),
                     d2 = get_field(bs, key, &f[2], inside);
            acc[0] = wrap_add(acc[-3], d0);
            acc[1] = wrap_add(acc[-2], d1);
            acc[2] = wrap_add(acc[-1], d2);
        }
    }
}

/* read_key for a key inside the stream, compiled on its own so that no
 * field tests `inside` */
static void read_key_inside(const bits *bs, uint64_t key, const dchannel *dc, uint32_t n, uint32_t j)
{
    read_key(bs, key, dc, n, j, true);
}

/* The bitstream's keys 1.. of a run of channels per job: the channels'
 * accumulators are apart and every field's position is known, so the
 * channels are decoded independently (ra_read_job).  One run per thread:
 * each job walks the whole stream, taking its channels' bits of every key,
 * so more runs than threads would only load the stream's lines more often
 * (16 runs on 2 threads took 23-42 ms on the x16 bench file, 2 runs 22-23). */
#define DECODE_JOBS 16
typedef struct decode_jobs {
    bits bs;
    const dchannel *dc;
    uint32_t first[DECODE_JOBS + 1]; /* job i decodes channels first[i] .. first[i + 1] - 1 */
    uint32_t keys;
    uint64_t bits_per_key;
} decode_jobs;

static ra_status decode_job(void *ctx, size_t i, ra_arena *arena, ra_error *err)
{
    (void)arena;
    (void)err;
    const decode_jobs *dj = ctx;
    const dchannel *dc = dj->dc + dj->first[i];
    uint32_t n = dj->first[i + 1] - dj->first[i];
    uint64_t key = 0, bpk = dj->bits_per_key;
    for (uint32_t j = 1; j < dj->keys; j++, key += bpk) {
        if ((key + bpk) / 32 + 2 <= dj->bs.words) read_key_inside(&dj->bs, key, dc, n, j);
        else read_key(&dj->bs, key, dc, n, j, false);
    }
    return RA_OK;
}

/* Splits the channels into at most `parts` (1 to DECODE_JOBS) runs of about
 * equal fields; the number of jobs. */
static size_t plan_decode(decode_jobs *dj, uint32_t channels, unsigned parts)
{
    if (parts < 1) parts = 1;
    if (parts > DECODE_JOBS) parts = DECODE_JOBS;
    uint64_t total = 0, sum = 0;
    for (uint32_t c = 0; c < channels; c++) total += 1 + 3 * dj->dc[c].tracks;
    size_t n = 0;
    dj->first[0] = 0;
    for (uint32_t c = 0; c < channels; c++) {
        sum += 1 + 3 * dj->dc[c].tracks;
        /* a run ends once it reaches its share of the fields */
        if (c + 1 == channels || sum * parts >= total * (n + 1)) dj->first[++n] = c + 1;
    }
    return n;
}

static bool read_v2(rd *r)
{
    mp_anim *a = r->a;
    mp_layout l = a->layout;
    size_t at;
    ra_rd_u32be(&r->c, &a->version, "version");
    ra_rd_u32be(&r->c, &a->scratch_size, "scratch_size");
    if (l == MP_V2_MP2) {
        ra_rd_u16be(&r->c, &a->mp2_tag, "mp2_tag");
    } else {
        if (l != MP_V2_DEMO) {
            a->has_evnt = true;
            ra_rd_u32be(&r->c, &a->evnt_id, "evnt_id");
        }
        ra_rd_u32be(&r->c, &a->unk_0c, "unknown_1");
    }
    at = r->c.pos;
    if (!ra_rd_f32be(&r->c, &a->duration, "duration")) return false;
    if (!(a->duration >= 0) || !isfinite(a->duration))
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "duration", "not a finite time >= 0");
    at = r->c.pos;
    if (!ra_rd_f32be(&r->c, &a->interval, "interval")) return false;
    if (!(a->interval > 0) || !isfinite(a->interval))
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "interval", "not a finite time > 0");
    ra_rd_u32be(&r->c, &a->root_bone, "root_bone");
    ra_rd_u32be(&r->c, &a->looping, "looping");
    at = r->c.pos;
    if (!ra_rd_u32be(&r->c, &a->rot_div, "rotation_divisor")) return false;
    if (a->rot_div == 0) return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "rotation_divisor", "must not be 0");
    if (!rd_finite(r, &a->trans_mult, "translation_multiplier")) return false;
    if (l == MP_V2_MP2 && !rd_finite(r, &a->scale_mult, "scale_multiplier")) return false;
    ra_rd_u32be(&r->c, &a->header_channels, "channel_count");
    ra_rd_u32be(&r->c, &a->unk_2c, "unknown_2");
    at = r->c.pos;
    if (!ra_rd_u32be(&r->c, &a->bitmap_bits, "key_bitmap_bits")) return false;
    if (a->bitmap_bits == 0)
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "key_bitmap_bits",
                              "the key bitmap must cover at least frame 0");
    uint32_t nwords = (uint32_t)(((uint64_t)a->bitmap_bits + 31) / 32);
    if (!ra_cursor_check_count(&r->c, nwords, 4, "key_bitmap")) return false;
    a->bitmap = ra_arena_array(r->arena, nwords, sizeof *a->bitmap);
    if (!a->bitmap) return ra_cursor_nomem(&r->c);
    size_t bitmap_off = r->c.pos;
    uint64_t keys = 0;
    for (uint32_t i = 0; i < nwords; i++) {
        ra_rd_u32be(&r->c, &a->bitmap[i], "key_bitmap");
        uint32_t w = a->bitmap[i];
        if (i == nwords - 1 && a->bitmap_bits % 32) w &= (1u << (a->bitmap_bits % 32)) - 1;
        keys += popcount32(w);
    }
    if (!ra_cursor_ok(&r->c)) return false;
    if (!(a->bitmap[0] & 1))
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, bitmap_off + 3, "key_bitmap",
                              "frame 0 has no key (bit 0 clear)");
    if (l != MP_V2_MP2) ra_rd_u32be(&r->c, &a->channel_count_dup, "channel_count_2");
    if (!ra_rd_u32be(&r->c, &a->desc_count, "descriptor_count")) return false;
    bool pc = l == MP_V3_PC;
    size_t min_desc = l == MP_V2_MP2 ? 7 : pc ? 24 : 17;
    if (!ra_cursor_check_count(&r->c, a->desc_count, min_desc, "descriptor")) return false;
    a->channel_count = a->desc_count;
    a->channels = ra_arena_array(r->arena, a->desc_count, sizeof *a->channels);
    if (!a->channels) return ra_cursor_nomem(&r->c);

    first_count kb = {0, 0, false};
    uint64_t bits_per_key = 0;
    for (uint32_t c = 0; c < a->desc_count; c++) {
        mp_channel *ch = &a->channels[c];
        if (l == MP_V2_MP2) {
            uint8_t id = 0;
            ra_rd_u8(&r->c, &id, "descriptor.bone_id");
            ch->bone_id = id;
        } else {
            ra_rd_u32be(&r->c, &ch->bone_id, "descriptor.bone_id");
        }
        if (!read_track_desc(r, &ch->rot_count, &ch->has_rot, ch->rq, pc, l != MP_V2_MP2, &kb,
                             "descriptor.rotation_key_count", "descriptor.rotation") ||
            !read_track_desc(r, &ch->trans_count, &ch->has_trans, ch->tq, pc, false, &kb,
                             "descriptor.translation_key_count", "descriptor.translation") ||
            (l == MP_V2_MP2 && !read_track_desc(r, &ch->scale_count, &ch->has_scale, ch->sq, false, false, &kb,
                                                "descriptor.scale_key_count", "descriptor.scale")))
            return false;
        uint32_t counts[3] = {ch->rot_count, ch->trans_count, ch->scale_count};
        for (int i = 0; i < 3; i++)
            if (kb.set && counts[i] && counts[i] != kb.count) {
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, kb.off, "descriptor.key_count",
                                      "channel %u holds %u keys, channel 0 %u", c, counts[i], kb.count);
            }
        if (ch->has_rot) bits_per_key += 1u + delta_bits(ch->rq);
        if (ch->has_trans) bits_per_key += delta_bits(ch->tq);
        if (ch->has_scale) bits_per_key += delta_bits(ch->sq);
    }
    if (!kb.set) kb.count = (uint32_t)(keys ? keys - 1 : 0); /* every count 0: a single-key pose */
    else if ((uint64_t)kb.count + 1 != keys) {
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, kb.off, "descriptor.key_count",
                              "%u keys after the first need %llu keyed frames, the key bitmap marks %llu", kb.count,
                              (unsigned long long)kb.count + 1, (unsigned long long)keys);
    }
    if ((uint64_t)a->desc_count * (kb.count + 1ull) > MP_MAX_DECODED_KEYS)
        return ra_cursor_fail(&r->c, RA_ERR_LIMIT, kb.off, "descriptor.key_count",
                              "channels x keys above %u decoded keys", (unsigned)MP_MAX_DECODED_KEYS);
    a->key_count = kb.count + 1;
    a->key_frames = ra_arena_array(r->arena, a->key_count, sizeof *a->key_frames);
    if (!a->key_frames) return ra_cursor_nomem(&r->c);
    for (uint32_t f = 0, j = 0; f < a->bitmap_bits && j < a->key_count; f++)
        if (a->bitmap[f >> 5] >> (f & 31) & 1) a->key_frames[j++] = f;

    /* the bitstream: its whole length is checked before it is read */
    uint64_t total_bits = kb.count && bits_per_key > UINT64_MAX / kb.count ? UINT64_MAX - 31 : bits_per_key * kb.count;
    uint64_t nbytes = (total_bits + 31) / 32 * 4;
    a->bitstream_offset = r->c.pos;
    if (!ra_range_ok(r->c.size, r->c.pos, nbytes)) {
        return ra_cursor_fail(&r->c, RA_ERR_TRUNCATED, r->c.pos, "bitstream",
                              "truncated: %llu bits per key x %u keys need %llu bytes, %zu left",
                              (unsigned long long)bits_per_key, kb.count, (unsigned long long)nbytes,
                              ra_cursor_left(&r->c));
    }
    a->bitstream_size = (size_t)nbytes;
    bits bs = {r->c.data + r->c.pos, (size_t)(nbytes / 4)};
    ra_rd_skip(&r->c, (size_t)nbytes, "bitstream");

    uint32_t k = a->key_count;
    for (uint32_t c = 0; c < a->desc_count; c++) {
        mp_channel *ch = &a->channels[c];
        /* every element is written below (key 0 from init, the others from
         * the stream); bulk: the scene's keys are baked from them */
        if (ch->has_rot && (!(ch->qrot = ra_arena_bulk_memdup(r->arena, NULL, (size_t)k * 3, sizeof(int32_t))) ||
                            !(ch->wneg = ra_arena_bulk_memdup(r->arena, NULL, k, 1))))
            return ra_cursor_nomem(&r->c);
        if (ch->has_rot) ch->wneg[0] = 0;
        if (ch->has_trans && !(ch->qtrans = ra_arena_bulk_memdup(r->arena, NULL, (size_t)k * 3, sizeof(int32_t))))
            return ra_cursor_nomem(&r->c);
        if (ch->has_scale && !(ch->qscale = ra_arena_bulk_memdup(r->arena, NULL, (size_t)k * 3, sizeof(int32_t))))
            return ra_cursor_nomem(&r->c);
        for (int i = 0; i < 3; i++) {
            if (ch->has_rot) ch->qrot[i] = ch->rq[i].init;
            if (ch->has_trans) ch->qtrans[i] = ch->tq[i].init;
            if (ch->has_scale) ch->qscale[i] = ch->sq[i].init;
        }
    }
    dchannel *dc = ra_malloc((a->desc_count ? a->desc_count : 1) * sizeof *dc);
    if (!dc) return ra_cursor_nomem(&r->c);
    /* a key's fields in stream order: per channel the w sign bit, then the
     * rotation's, translation's and scale's three deltas (those present) */
    uint64_t bit = 0;
    for (uint32_t c = 0; c < a->desc_count; c++) {
        const mp_channel *ch = &a->channels[c];
        dchannel *d = &dc[c];
        *d = (dchannel){ch->has_rot ? ch->wneg : NULL, bit, {NULL}, {{{0}}}, 0};
        if (ch->has_rot) bit++;
        int32_t *acc[3] = {ch->has_rot ? ch->qrot : NULL, ch->has_trans ? ch->qtrans : NULL,
                           ch->has_scale ? ch->qscale : NULL};
        const mp_quant *q[3] = {ch->rq, ch->tq, ch->sq};
        for (int t = 0; t < 3; t++) {
            if (!acc[t]) continue;
            d->acc[d->tracks] = acc[t];
            for (int i = 0; i < 3; i++) d->f[d->tracks][i] = field_at(&bit, q[t][i].bits);
            d->tracks++;
        }
    }
    /* bit is now bits_per_key again, summed field by field */
    decode_jobs dj = {bs, dc, {0}, k, bits_per_key};
    size_t jobs = k > 1 ? plan_decode(&dj, a->desc_count, r->parts) : 0;
    ra_status st = r->run(r->run_ctx, jobs, (double)(k - 1) * a->desc_count, decode_job, &dj, RA_OK, NULL, r->c.err);
    ra_free(dc);
    if (st != RA_OK) return false;
    if (!prepare_decode(a, r->arena)) return ra_cursor_nomem(&r->c);
    /* |q x mult| <= 2^31 |mult| (rounding is monotonic, and 2^31 |mult| is
     * exact): every key is within the float range unless a multiplier
     * exceeds FLT_MAX / 2^31 */
    bool in_range =
        2147483648.0 * fabs((double)a->trans_mult) <= FLT_MAX && 2147483648.0 * fabs((double)a->scale_mult) <= FLT_MAX;
    for (uint32_t c = 0; !in_range && c < a->desc_count; c++)
        for (uint32_t j = 0; j < k; j++) {
            const mp_channel *ch = &a->channels[c];
            if ((ch->has_trans && !vec_in_float_range(mp_key_trans(a, ch, j))) ||
                (ch->has_scale && !vec_in_float_range(mp_key_scale(a, ch, j))))
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, a->bitstream_offset, "bitstream",
                                      "a decoded translation or scale exceeds the float range");
        }
    return ra_cursor_ok(&r->c);
}

static ra_status finish(rd *r, ra_error *err)
{
    mp_anim *a = r->a;
    a->trailing_size = ra_cursor_left(&r->c);
    if (a->trailing_size) {
        a->trailing = ra_arena_alloc(r->arena, a->trailing_size);
        if (!a->trailing) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, r->c.pos, "trailing", "out of memory");
        ra_rd_bytes(&r->c, a->trailing, a->trailing_size, "trailing");
    }
    return err->code;
}

/* Version 2 layout from the header (docs/formats/metroid_prime.md §3.6): 0x0101 at 0x08 is Prime 2;
 * 1 at 0x0C is Prime 1 (and the PC version 3); 1 at 0x08 is the demo layout. */
static mp_layout guess_v2_layout(const uint8_t *d, size_t n, uint32_t version)
{
    if (version == 3) return MP_V3_PC;
    /* 1 at 0x0C first: in a Prime 2 file those bytes would be a denormal interval */
    if (n >= 16 && d[12] == 0 && d[13] == 0 && d[14] == 0 && d[15] == 1) return MP_V2_MP1;
    if (n >= 10 && d[8] == 0x01 && d[9] == 0x01) return MP_V2_MP2;
    if (n >= 12 && d[8] == 0 && d[9] == 0 && d[10] == 0 && d[11] == 1) return MP_V2_DEMO;
    return MP_V2_MP1;
}

ra_status mp_anim_read(const uint8_t *data, size_t size, mp_layout layout_hint, ra_arena *arena, mp_anim *out,
                       ra_error *err)
{
    return mp_anim_read_run(data, size, layout_hint, arena, out, err, NULL, NULL, 1);
}

ra_status mp_anim_read_run(const uint8_t *data, size_t size, mp_layout layout_hint, ra_arena *arena, mp_anim *out,
                           ra_error *err, ra_read_runner run, void *run_ctx, unsigned parts)
{
    memset(out, 0, sizeof *out);
    if (!run) { /* on this thread, as one run */
        run = ra_read_run_serial;
        run_ctx = arena;
        parts = 1;
    }
    rd r = {{0}, arena, out, run, run_ctx, parts};
    ra_cursor_init(&r.c, data, size, FMT, err);
    uint32_t version;
    if (!ra_rd_u32be(&r.c, &version, "version")) return err->code;
    r.c.pos = 0;
    if (version != 0 && version != 2 && version != 3)
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "version", "version %u is not an ANIM version (0, 2 or 3)",
                       version);
    if (layout_hint) {
        bool ok = (version == 0) == is_v0(layout_hint) && (version == 3) == (layout_hint == MP_V3_PC);
        if (!ok)
            return ra_fail(err, RA_ERR_USAGE, FMT, 0, "layout", "layout %s does not fit a version %u file",
                           mp_layout_name(layout_hint), version);
    }
    if (version == 0) {
        if (layout_hint == MP_V0_MP1 || layout_hint == MP_V0_MP2) {
            read_v0(&r, layout_hint == MP_V0_MP2);
            return finish(&r, err);
        }
        /* docs/formats/metroid_prime.md §2: no field tells the games apart; the
         * Prime 2 parse is taken when it succeeds and leaves nothing but 0xFF
         * padding. */
        ra_error e2;
        ra_error_clear(&e2);
        rd r2 = {{0}, arena, out, NULL, NULL, 1};
        ra_cursor_init(&r2.c, data, size, FMT, &e2);
        if (read_v0(&r2, true) && mp_is_padding(data + r2.c.pos, size - r2.c.pos)) return finish(&r2, err);
        /* out of memory decides nothing about the layout: it is the answer (the Prime 1 parse would
         * report the Prime 2 file's fields as bad values instead) */
        if (e2.code == RA_ERR_NO_MEMORY) return ra_fail_nomem(err, FMT);
        memset(out, 0, sizeof *out);
        read_v0(&r, false);
        return finish(&r, err);
    }
    out->layout = layout_hint ? layout_hint : guess_v2_layout(data, size, version);
    read_v2(&r);
    return finish(&r, err);
}

/* ---- writer ------------------------------------------------------------------------------------ */
static void wr_floats(ra_writer *w, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) ra_wr_f32be(w, f[i]);
}

static void wr_table(ra_writer *w, const uint8_t *t, uint32_t n)
{
    ra_wr_u32be(w, n);
    ra_wr_bytes(w, t, n);
}

static void write_v0(const mp_anim *a, ra_writer *w)
{
    ra_wr_u32be(w, 0);
    ra_wr_f32be(w, a->duration);
    ra_wr_u32be(w, a->duration_state);
    ra_wr_f32be(w, a->interval);
    ra_wr_u32be(w, a->interval_state);
    ra_wr_u32be(w, a->key_count);
    ra_wr_u32be(w, a->root_bone);
    wr_table(w, a->bone_map, a->map_count);
    if (a->layout == MP_V0_MP1) {
        wr_table(w, a->rot_map, a->rot_map_count);
        ra_wr_u32be(w, a->rot_array_count);
        wr_floats(w, a->rot_array, (size_t)a->rot_array_count * 4);
        ra_wr_u32be(w, a->trans_array_count);
        wr_floats(w, a->trans_array, (size_t)a->trans_array_count * 3);
        ra_wr_u32be(w, a->evnt_id);
    } else {
        wr_table(w, a->rot_map, a->rot_map_count);
        wr_table(w, a->trans_map, a->trans_map_count);
        wr_table(w, a->scale_map, a->scale_map_count);
        ra_wr_u32be(w, a->scale_array_count);
        wr_floats(w, a->scale_array, (size_t)a->scale_array_count * 3);
        ra_wr_u32be(w, a->rot_array_count);
        wr_floats(w, a->rot_array, (size_t)a->rot_array_count * 4);
        ra_wr_u32be(w, a->trans_array_count);
        wr_floats(w, a->trans_array, (size_t)a->trans_array_count * 3);
    }
}

/* LSB-first bit packer into big-endian words. */
typedef struct packer {
    ra_writer *w;
    uint64_t acc;
    unsigned n;
} packer;

static void put_bits(packer *p, uint32_t v, unsigned q)
{
    if (!q) return;
    uint64_t m = q == 32 ? 0xFFFFFFFFull : ((1ull << q) - 1);
    p->acc |= ((uint64_t)v & m) << p->n;
    p->n += q;
    while (p->n >= 32) {
        ra_wr_u32be(p->w, (uint32_t)p->acc);
        p->acc >>= 32;
        p->n -= 32;
    }
}

/* the deltas from key j-1 to key j, each in its width (two's complement, wrapping) */
static void put_deltas(packer *p, const int32_t *acc, uint32_t j, const mp_quant *q)
{
    for (uint32_t i = 0; i < 3; i++) put_bits(p, (uint32_t)acc[3 * j + i] - (uint32_t)acc[3 * (j - 1) + i], q[i].bits);
}

static void flush_bits(packer *p)
{
    if (p->n) ra_wr_u32be(p->w, (uint32_t)p->acc);
    p->acc = 0;
    p->n = 0;
}

static void wr_count(ra_writer *w, uint32_t v, bool wide)
{
    if (wide) ra_wr_u32be(w, v);
    else ra_wr_u16be(w, (uint16_t)v);
}

static void wr_quant(ra_writer *w, const mp_quant *q, bool pc)
{
    if (pc) {
        ra_wr_u32be(w, ((uint32_t)q->init << 8) | q->bits);
    } else {
        ra_wr_u16be(w, (uint16_t)(int16_t)q->init);
        ra_wr_u8(w, q->bits);
    }
}

/* the twin of read_track_desc */
static void write_track_desc(ra_writer *w, uint32_t count, bool has, const mp_quant *q, bool wide)
{
    wr_count(w, count, wide);
    for (int i = 0; has && i < 3; i++) wr_quant(w, &q[i], wide);
}

static void write_v2(const mp_anim *a, ra_writer *w)
{
    mp_layout l = a->layout;
    bool pc = l == MP_V3_PC;
    ra_wr_u32be(w, a->version);
    ra_wr_u32be(w, a->scratch_size);
    if (l == MP_V2_MP2) {
        ra_wr_u16be(w, a->mp2_tag);
    } else {
        if (l != MP_V2_DEMO) ra_wr_u32be(w, a->evnt_id);
        ra_wr_u32be(w, a->unk_0c);
    }
    ra_wr_f32be(w, a->duration);
    ra_wr_f32be(w, a->interval);
    ra_wr_u32be(w, a->root_bone);
    ra_wr_u32be(w, a->looping);
    ra_wr_u32be(w, a->rot_div);
    ra_wr_f32be(w, a->trans_mult);
    if (l == MP_V2_MP2) ra_wr_f32be(w, a->scale_mult);
    ra_wr_u32be(w, a->header_channels);
    ra_wr_u32be(w, a->unk_2c);
    ra_wr_u32be(w, a->bitmap_bits);
    for (uint64_t i = 0; i < ((uint64_t)a->bitmap_bits + 31) / 32; i++) ra_wr_u32be(w, a->bitmap[i]);
    if (l != MP_V2_MP2) ra_wr_u32be(w, a->channel_count_dup);
    ra_wr_u32be(w, a->desc_count);
    for (size_t c = 0; c < a->channel_count; c++) {
        const mp_channel *ch = &a->channels[c];
        if (l == MP_V2_MP2) ra_wr_u8(w, (uint8_t)ch->bone_id);
        else ra_wr_u32be(w, ch->bone_id);
        write_track_desc(w, ch->rot_count, ch->has_rot, ch->rq, pc);
        write_track_desc(w, ch->trans_count, ch->has_trans, ch->tq, pc);
        if (l == MP_V2_MP2) write_track_desc(w, ch->scale_count, ch->has_scale, ch->sq, false);
    }
    packer p = {w, 0, 0};
    for (uint32_t j = 1; j < a->key_count; j++)
        for (size_t c = 0; c < a->channel_count; c++) {
            const mp_channel *ch = &a->channels[c];
            if (ch->has_rot) {
                put_bits(&p, ch->wneg[j], 1);
                put_deltas(&p, ch->qrot, j, ch->rq);
            }
            if (ch->has_trans) put_deltas(&p, ch->qtrans, j, ch->tq);
            if (ch->has_scale) put_deltas(&p, ch->qscale, j, ch->sq);
        }
    flush_bits(&p);
}

ra_status mp_anim_write(const mp_anim *a, ra_writer *w, ra_error *err)
{
    if (is_v0(a->layout)) write_v0(a, w);
    else write_v2(a, w);
    if (a->trailing_size) ra_wr_bytes(w, a->trailing, a->trailing_size);
    if (w->failed) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory writing the file");
    return RA_OK;
}

/* ---- encoder (docs/formats/metroid_prime.md §3.3) ------------------------------------------------ */

static bool all_finite_vec(const ra_vec3 *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(v[i].x) || !isfinite(v[i].y) || !isfinite(v[i].z)) return false;
    return true;
}

/* Quantization multiplier: the largest |first value| or |step| maps to the
 * largest initial value the descriptor holds. */
static float choose_mult(const mp_encode_track *t, size_t n, uint32_t k, bool scale, double limit)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        const ra_vec3 *v = scale ? t[i].scale : t[i].trans;
        if (!v) continue;
        m = ra_fmax(m, ra_fmax(fabs(v[0].x), ra_fmax(fabs(v[0].y), fabs(v[0].z))));
        for (uint32_t j = 1; j < k; j++)
            m = ra_fmax(
                m, ra_fmax(fabs(v[j].x - v[j - 1].x), ra_fmax(fabs(v[j].y - v[j - 1].y), fabs(v[j].z - v[j - 1].z))));
    }
    double mult = m / limit * (1.0 + 1e-6);
    return mult < FLT_EPSILON ? FLT_EPSILON : (float)mult;
}

/* x, y, z are stored as angles (asin) and w is rebuilt from the unit norm, so
 * rounding each component alone leaves w far off where it is small (keys near
 * a half turn: representable quaternions thin out as |w| -> 0).  The encoder
 * therefore tries the rounded integers and their neighbours within 2, and for
 * |w| < 0.1 also solves one component for the norm while the other two range
 * over +-12; the triple whose rebuilt quaternion is closest to q wins (the
 * rounded triple on a tie, so decoded keys re-encode to themselves). */
#define ROT_WIDE 12
typedef struct rot_fit {
    double comp[3], aw, s, best;
    int32_t div, k[3];
} rot_fit;

static void rot_try(rot_fit *f, const int64_t *k)
{
    double e = 0, n2 = 0;
    for (int i = 0; i < 3; i++) {
        if (k[i] > f->div || k[i] < -f->div) return;
        double x = sin((double)k[i] * f->s);
        e += (x - f->comp[i]) * (x - f->comp[i]);
        n2 += x * x;
    }
    if (n2 > 1) return; /* would decode to a non-unit quaternion (w clamped to 0) */
    double w = sqrt(1 - n2);
    e += (w - f->aw) * (w - f->aw);
    if (e < f->best) {
        f->best = e;
        for (int i = 0; i < 3; i++) f->k[i] = (int32_t)k[i];
    }
}

static void quantize_rot(ra_quat q, double s, int32_t div, int32_t *out)
{
    rot_fit f = {{q.x, q.y, q.z}, fabs(q.w), s, INFINITY, div, {0, 0, 0}};
    int64_t base[3];
    for (int i = 0; i < 3; i++) {
        double v = f.comp[i] > 1 ? 1 : f.comp[i] < -1 ? -1 : f.comp[i];
        base[i] = (int64_t)nearbyint(asin(v) / s);
    }
    static const int order[5] = {0, -1, 1, -2, 2}; /* the rounded value first */
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 5; c++) {
                int64_t k[3] = {base[0] + order[a], base[1] + order[b], base[2] + order[c]};
                rot_try(&f, k);
            }
    if (f.aw < 0.1) {
        for (int solve = 0; solve < 3; solve++) {
            int o1 = (solve + 1) % 3, o2 = (solve + 2) % 3;
            for (int d1 = -ROT_WIDE; d1 <= ROT_WIDE; d1++)
                for (int d2 = -ROT_WIDE; d2 <= ROT_WIDE; d2++) {
                    int64_t k[3];
                    k[o1] = base[o1] + d1;
                    k[o2] = base[o2] + d2;
                    double x1 = sin((double)k[o1] * s), x2 = sin((double)k[o2] * s);
                    double r2 = 1 - f.aw * f.aw - x1 * x1 - x2 * x2;
                    double z = copysign(sqrt(r2 > 0 ? r2 : 0), f.comp[solve]);
                    int64_t kz = (int64_t)nearbyint(asin(z > 1 ? 1 : z < -1 ? -1 : z) / s);
                    for (int dz = -1; dz <= 1; dz++) {
                        k[solve] = kz + dz;
                        rot_try(&f, k);
                    }
                }
        }
    }
    for (int i = 0; i < 3; i++) out[i] = f.k[i];
}

static uint8_t bits_for(const int32_t *q, uint32_t k, uint32_t comp)
{
    unsigned b = 1;
    for (uint32_t j = 1; j < k; j++) {
        int64_t d = (int64_t)q[3 * j + comp] - q[3 * (j - 1) + comp];
        while (b < 32 && (d < -((int64_t)1 << (b - 1)) || d > ((int64_t)1 << (b - 1)) - 1)) b++;
    }
    return (uint8_t)b;
}

static bool quantize_vec(const ra_vec3 *v, uint32_t k, float mult, int32_t *q, double init_limit)
{
    for (uint32_t j = 0; j < k; j++) {
        double c[3] = {v[j].x / mult, v[j].y / mult, v[j].z / mult};
        for (uint32_t i = 0; i < 3; i++) {
            double r = nearbyint(c[i]);
            if (!(fabs(r) <= 2147483647.0)) return false;
            if (j == 0 && fabs(r) > init_limit) return false;
            q[3 * j + i] = (int32_t)r;
        }
    }
    return true;
}

/* One translation or scale track: finite keys, quantized with `mult`, and its
 * three components' first values and bit widths. */
static ra_status encode_vec(ra_arena *ar, const ra_vec3 *v, uint32_t k, float mult, double init_limit, int32_t **q,
                            mp_quant out[3], const char *what, const char *mult_field, ra_error *err)
{
    if (!all_finite_vec(v, k))
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, what, "%s keys must be finite", what);
    *q = ra_arena_array(ar, (size_t)k * 3, sizeof(int32_t));
    if (!*q) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    if (!quantize_vec(v, k, mult, *q, init_limit))
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, mult_field,
                       "%ss do not fit the quantization (multiplier too small)", what);
    for (uint32_t i = 0; i < 3; i++) out[i] = (mp_quant){(*q)[i], bits_for(*q, k, i)};
    return RA_OK;
}

static ra_status encode_v0(const mp_encode_params *p, const mp_encode_track *t, size_t n, ra_arena *ar, mp_anim *a,
                           ra_error *err)
{
    uint32_t k = p->key_count;
    for (uint32_t j = 0; j < k; j++)
        if (p->frames[j] != j)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "frames",
                           "version 0 keys every frame: frames must be 0..K-1");
    if (n > 0xFF)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "tracks", "version 0 holds at most 255 channels");
    if ((uint64_t)n * k > UINT32_MAX)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "key_count",
                       "channels x frames exceed the u32 array counts");
    bool mp2 = p->layout == MP_V0_MP2;
    a->duration = p->duration > 0 ? p->duration : (float)k * p->interval;
    a->map_count = MP_BONE_SLOTS;
    a->bone_map = ra_arena_array(ar, MP_BONE_SLOTS, 1);
    a->rot_map = ra_arena_array(ar, n, 1);
    a->trans_map = mp2 ? ra_arena_array(ar, n, 1) : NULL;
    a->scale_map = mp2 ? ra_arena_array(ar, n, 1) : NULL;
    a->rot_array = ra_arena_array(ar, n * k, 4 * sizeof(float));
    a->trans_array = ra_arena_array(ar, n * k, 3 * sizeof(float));
    a->scale_array = ra_arena_array(ar, n * k, 3 * sizeof(float));
    if (!a->bone_map || !a->rot_map || (mp2 && (!a->trans_map || !a->scale_map)) || !a->rot_array || !a->trans_array ||
        !a->scale_array)
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    memset(a->bone_map, 0xFF, MP_BONE_SLOTS);
    a->rot_map_count = (uint32_t)n;
    if (mp2) a->trans_map_count = a->scale_map_count = (uint32_t)n;
    uint32_t nr = 0, nt = 0, ns = 0;
    for (size_t c = 0; c < n; c++) {
        if (t[c].bone_id >= MP_BONE_SLOTS)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "bone_id", "version 0 bone ids must be below %u",
                           (unsigned)MP_BONE_SLOTS);
        if (a->bone_map[t[c].bone_id] != 0xFF)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "bone_id", "two tracks for the same bone");
        if (!mp2 && (!t[c].rot || t[c].scale))
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "tracks",
                           "Prime 1 version 0 needs a rotation on every channel and has no scale");
        a->bone_map[t[c].bone_id] = (uint8_t)c;
        if (t[c].rot) {
            for (uint32_t j = 0; j < k; j++) {
                float *q = &a->rot_array[4 * ((size_t)nr * k + j)];
                q[0] = (float)t[c].rot[j].w, q[1] = (float)t[c].rot[j].x, q[2] = (float)t[c].rot[j].y,
                q[3] = (float)t[c].rot[j].z;
            }
            if (mp2) a->rot_map[c] = (uint8_t)nr;
            nr++;
        } else if (mp2) {
            a->rot_map[c] = 0xFF;
        }
        uint8_t *tm = mp2 ? &a->trans_map[c] : &a->rot_map[c];
        if (t[c].trans) {
            for (uint32_t j = 0; j < k; j++) {
                float *v = &a->trans_array[3 * ((size_t)nt * k + j)];
                v[0] = (float)t[c].trans[j].x, v[1] = (float)t[c].trans[j].y, v[2] = (float)t[c].trans[j].z;
            }
            *tm = (uint8_t)nt++;
        } else {
            *tm = 0xFF;
        }
        if (mp2) {
            if (t[c].scale) {
                for (uint32_t j = 0; j < k; j++) {
                    float *v = &a->scale_array[3 * ((size_t)ns * k + j)];
                    v[0] = (float)t[c].scale[j].x, v[1] = (float)t[c].scale[j].y, v[2] = (float)t[c].scale[j].z;
                }
                a->scale_map[c] = (uint8_t)ns++;
            } else {
                a->scale_map[c] = 0xFF;
            }
        }
    }
    a->rot_array_count = nr * k;
    a->trans_array_count = nt * k;
    a->scale_array_count = ns * k;
    a->has_evnt = !mp2;
    a->evnt_id = mp2 ? 0 : p->evnt_id;
    return RA_OK;
}

static ra_status encode_v2(const mp_encode_params *p, const mp_encode_track *t, size_t n, ra_arena *ar, mp_anim *a,
                           ra_error *err)
{
    mp_layout l = p->layout;
    bool pc = l == MP_V3_PC, mp2 = l == MP_V2_MP2;
    uint32_t k = p->key_count, kb = k - 1;
    uint32_t last = p->frames[k - 1];
    if (!pc && kb > 0xFFFF)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "key_count",
                       "the 16-bit key counts of this layout hold at most 65536 keys");
    if (last > 0x7FFFFFFEu) return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "frames", "frame number too large");
    double init_limit = pc ? 8388607.0 : 32767.0;
    a->duration = p->duration > 0 ? p->duration : (float)last * p->interval;
    a->rot_div = p->rot_div ? p->rot_div : pc ? 0x7FFFFF : 0x7FFF;
    if (a->rot_div > (pc ? 0x7FFFFFu : 0x7FFFu))
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "rot_div",
                       "the rotation divisor must fit the initial values (0x7FFF, or 0x7FFFFF for version 3)");
    a->trans_mult = p->trans_mult > 0 ? p->trans_mult : choose_mult(t, n, k, false, init_limit);
    a->scale_mult = mp2 ? (p->scale_mult > 0 ? p->scale_mult : choose_mult(t, n, k, true, init_limit)) : 0;
    a->looping = p->looping;
    a->has_evnt = l == MP_V2_MP1 || pc;
    a->evnt_id = a->has_evnt ? p->evnt_id : 0;
    a->unk_0c = mp2 ? 0 : 1;
    a->mp2_tag = mp2 ? 0x0101 : 0;
    a->unk_2c = 1;
    a->bitmap_bits = last + 1;
    a->bitmap = ra_arena_array(ar, (a->bitmap_bits + 31u) / 32u, sizeof(uint32_t));
    a->channels = ra_arena_array(ar, n, sizeof *a->channels);
    if (!a->bitmap || !a->channels) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    for (uint32_t j = 0; j < k; j++) a->bitmap[p->frames[j] >> 5] |= 1u << (p->frames[j] & 31);
    a->channel_count = n;
    a->header_channels = a->desc_count = a->channel_count_dup = (uint32_t)n;
    if (mp2) a->channel_count_dup = 0;
    double s = rot_scale(a->rot_div);
    for (size_t c = 0; c < n; c++) {
        mp_channel *ch = &a->channels[c];
        ch->bone_id = t[c].bone_id;
        if (mp2 && t[c].bone_id > 0xFF)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "bone_id", "Prime 2 bone ids are one byte");
        if (!mp2 && !t[c].rot)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "tracks",
                           "Prime 1 layouts need a rotation on every channel");
        if (!mp2 && t[c].scale)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "tracks",
                           "only the Prime 2 layout has scale channels");
        if (kb == 0 && (t[c].trans || t[c].scale || (mp2 && t[c].rot)))
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "key_count",
                           "a single-key file cannot mark its optional channels (key count 0 means absent)");
        ch->has_rot = t[c].rot != NULL;
        ch->has_trans = t[c].trans != NULL;
        ch->has_scale = t[c].scale != NULL;
        ch->rot_count = ch->has_rot ? kb : 0;
        ch->trans_count = ch->has_trans ? kb : 0;
        ch->scale_count = ch->has_scale ? kb : 0;
        if (ch->has_rot) {
            ch->qrot = ra_arena_array(ar, (size_t)k * 3, sizeof(int32_t));
            ch->wneg = ra_arena_array(ar, k, 1);
            if (!ch->qrot || !ch->wneg) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
            ra_quat prev = ra_q_identity();
            for (uint32_t j = 0; j < k; j++) {
                ra_quat q = ra_q_normalize(t[c].rot[j]);
                if (!isfinite(q.w) || !isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z))
                    return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "rotation",
                                   "rotation keys must be finite and non-zero");
                if (j == 0 ? (q.w < 0 || (q.w == 0 && signbit(q.w))) : (!p->keep_signs && ra_q_dot(prev, q) < 0))
                    q = ra_q_neg(q);
                prev = q;
                ch->wneg[j] = j > 0 && signbit(q.w);
                quantize_rot(q, s, (int32_t)a->rot_div, &ch->qrot[3 * j]);
            }
            for (uint32_t i = 0; i < 3; i++) ch->rq[i] = (mp_quant){ch->qrot[i], bits_for(ch->qrot, k, i)};
        }
        ra_status vs = RA_OK;
        if (ch->has_trans)
            vs = encode_vec(ar, t[c].trans, k, a->trans_mult, init_limit, &ch->qtrans, ch->tq, "translation",
                            "trans_mult", err);
        if (vs == RA_OK && ch->has_scale)
            vs = encode_vec(ar, t[c].scale, k, a->scale_mult, init_limit, &ch->qscale, ch->sq, "scale", "scale_mult",
                            err);
        if (vs != RA_OK) return vs;
    }
    if (!prepare_decode(a, ar)) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    return RA_OK;
}

ra_status mp_anim_encode(const mp_encode_params *p, const mp_encode_track *t, size_t n, ra_arena *ar, mp_anim *a,
                         ra_error *err)
{
    memset(a, 0, sizeof *a);
    if (p->layout < MP_V0_MP1 || p->layout > MP_V3_PC)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "layout", "unknown layout");
    if (!p->key_count || !p->frames || p->frames[0] != 0)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "frames", "frames must start with frame 0");
    for (uint32_t j = 1; j < p->key_count; j++)
        if (p->frames[j] <= p->frames[j - 1])
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "frames", "frames must increase");
    if (!(p->interval > 0) || !isfinite(p->interval))
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "interval", "interval must be > 0");
    a->layout = p->layout;
    a->version = is_v0(p->layout) ? 0 : p->layout == MP_V3_PC ? 3 : 2;
    a->interval = p->interval;
    a->root_bone = p->root_bone;
    a->key_count = p->key_count;
    a->key_frames = ra_arena_array(ar, p->key_count, sizeof *a->key_frames);
    if (!a->key_frames) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    memcpy(a->key_frames, p->frames, p->key_count * sizeof *p->frames);
    ra_status st = is_v0(p->layout) ? encode_v0(p, t, n, ar, a, err) : encode_v2(p, t, n, ar, a, err);
    if (st != RA_OK) return st;
    /* one write gives the size (the scratch size is the byte count after the
     * version field, then the optional 0xFF padding) and, for version 0, the
     * bytes the decoded view is read back from, the way the reader fills it */
    ra_writer w;
    ra_writer_init(&w);
    st = mp_anim_write(a, &w, err);
    size_t body = w.size;
    if (st == RA_OK && is_v0(p->layout)) {
        mp_anim tmp;
        st = mp_anim_read(w.data, w.size, p->layout, ar, &tmp, err);
        a->channels = tmp.channels;
        a->channel_count = tmp.channel_count;
    }
    ra_writer_free(&w);
    if (st != RA_OK) return st;
    if (!is_v0(p->layout)) a->scratch_size = (uint32_t)(body - 4);
    if (p->pad_to > 1 && body % p->pad_to) {
        a->trailing_size = p->pad_to - body % p->pad_to;
        a->trailing = ra_arena_alloc(ar, a->trailing_size);
        if (!a->trailing) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
        memset(a->trailing, 0xFF, a->trailing_size);
    }
    return RA_OK;
}
