/* Homeworld .mad reader and writer: bytes <-> hw_mad, nothing else.
 * The reader follows every stored offset (hand-made files need not use the
 * exporter's contiguous layout); the writer writes that layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/homeworld.h"

#define FMT "homeworld_mad"

#define NO_NUL UINT32_MAX

/* the six path arrays' names, as errors give them */
static const char *const pname[HW_CHANNELS] = {"x", "y", "z", "h", "p", "b"};

/* Each name is checked and measured in O(1) from `len_at`: the length of the
 * string starting at every offset of the block (NO_NUL when no NUL follows
 * inside it), built once, since many records may point into one long run. */
static ra_status read_name(const hw_mad *m, const uint32_t *len_at, uint32_t name_off, uint64_t field_off,
                           const char *field, const char **out, uint32_t *len, ra_error *err)
{
    if ((int64_t)name_off < m->string_block_length && len_at[name_off] != NO_NUL) {
        *out = (const char *)m->strings + name_off;
        *len = len_at[name_off];
        return RA_OK;
    }
    return ra_fail(err, RA_ERR_BAD_VALUE, FMT, field_off, field,
                   (int64_t)name_off >= m->string_block_length
                       ? "name offset %u is outside the %d-byte string block"
                       : "the name at string offset %u runs off the end of the %d-byte string block",
                   name_off, m->string_block_length);
}

/* n floats at off (range checked by the caller), each finite */
static ra_status read_floats(const uint8_t *data, uint32_t off, size_t n, size_t stride, float *out, size_t out_stride,
                             const char *field, ra_error *err)
{
    for (size_t i = 0; i < n; i++) {
        float f = ra_load_f32le(data + off + i * stride);
        if (!isfinite(f))
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, (uint64_t)off + i * stride, field, "%s is not a finite number",
                           field);
        out[i * out_stride] = f;
    }
    return RA_OK;
}

static ra_status read_object(const uint8_t *data, size_t size, uint64_t rec, ra_arena *arena, hw_mad *m,
                             const uint32_t *len_at, hw_object *o, uint64_t *keys_left, ra_error *err)
{
    ra_cursor c;
    ra_cursor_init(&c, data, size, FMT, err);
    c.pos = (size_t)rec;
    ra_rd_u32le(&c, &o->name_offset, "object.name");
    ra_rd_u16le(&c, &o->name_crc, "object.nameCRC");
    ra_rd_bytes(&c, o->pad, 2, "object.pad");
    ra_rd_u32le(&c, &o->animation_bits, "object.animationBits");
    ra_rd_s32le(&c, &o->key_count, "object.nKeyframes");
    ra_rd_u32le(&c, &o->times_offset, "object.times");
    ra_rd_u32le(&c, &o->tcb_offset, "object.parameters");
    for (int i = 0; i < HW_CHANNELS; i++) ra_rd_u32le(&c, &o->path_offset[i], "object.path");
    if (!ra_cursor_ok(&c)) return err->code;
    ra_status st = read_name(m, len_at, o->name_offset, rec, "object.name", &o->name, &o->name_length, err);
    if (st != RA_OK) return st;
    if (o->key_count < 0)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, rec + 12, "object.nKeyframes", "nKeyframes is %d",
                       (int)o->key_count);
    uint64_t n = (uint64_t)o->key_count;
    if (!ra_range_ok(size, o->times_offset, 4 * n))
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, rec + 16, "object.times",
                       "the times array (%llu keys at offset %u) runs past the end of the file", (unsigned long long)n,
                       o->times_offset);
    if (!ra_range_ok(size, o->tcb_offset, 12 * n))
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, rec + 20, "object.parameters",
                       "the TCB array (%llu keys at offset %u) runs past the end of the file", (unsigned long long)n,
                       o->tcb_offset);
    for (int i = 0; i < HW_CHANNELS; i++)
        if (!ra_range_ok(size, o->path_offset[i], 4 * n))
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, rec + 24 + 4 * (unsigned)i, "object.path",
                           "the %s array (%llu keys at offset %u) runs past the end of the file", pname[i],
                           (unsigned long long)n, o->path_offset[i]);
    /* Arrays may overlap or be shared (nothing forbids it), but all objects'
     * keys together may not need more than HW_MAD_MAX_SHARING times the
     * file's bytes: that bounds what sharing can make this reader allocate. */
    if (40 * n > *keys_left)
        return ra_fail(err, RA_ERR_LIMIT, FMT, rec + 12, "object.nKeyframes",
                       "the objects' key arrays add up to more than %u times the file's size (arrays shared by "
                       "many objects)",
                       HW_MAD_MAX_SHARING);
    *keys_left -= 40 * n;
    /* bulk (the scene's keys are baked from them), every element read by read_object_keys */
    o->times = ra_arena_bulk_memdup(arena, NULL, n, sizeof *o->times);
    o->tcb = ra_arena_bulk_memdup(arena, NULL, n, sizeof *o->tcb);
    bool ok = o->times && o->tcb;
    for (int i = 0; i < HW_CHANNELS; i++)
        ok &= (o->path[i] = ra_arena_bulk_memdup(arena, NULL, n, sizeof(float))) != NULL;
    if (!ok) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, rec, "object", "out of memory (memory_limit)");
    return RA_OK;
}

/* An object's keys, into the arrays read_object made for them: every value
 * finite, the real keys in time order. */
static ra_status read_object_keys(const uint8_t *data, hw_object *o, ra_error *err)
{
    uint64_t n = (uint64_t)o->key_count;
    ra_status st;
    if ((st = read_floats(data, o->times_offset, n, 4, o->times, 1, "time", err)) != RA_OK) return st;
    for (uint64_t k = 0; k < n; k++) { /* in key order: tension, continuity, bias */
        static const char *const tn[3] = {"tension", "continuity", "bias"};
        float *dst[3] = {&o->tcb[k].tension, &o->tcb[k].continuity, &o->tcb[k].bias};
        for (int i = 0; i < 3; i++)
            if ((st = read_floats(data, (uint32_t)(o->tcb_offset + 12 * k + 4 * (uint64_t)i), 1, 4, dst[i], 1, tn[i],
                                  err)) != RA_OK)
                return st;
    }
    for (int i = 0; i < HW_CHANNELS; i++)
        if ((st = read_floats(data, o->path_offset[i], n, 4, o->path[i], 1, pname[i], err)) != RA_OK) return st;
    /* real keys (1 .. n-2) in time order; the phantoms may be anywhere */
    for (uint64_t k = 2; k + 1 < n; k++)
        if (o->times[k] < o->times[k - 1])
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, o->times_offset + 4 * k, "time",
                           "key %llu's time %.9g s is earlier than the key before it (%.9g s)", (unsigned long long)k,
                           o->times[k], o->times[k - 1]);
    return RA_OK;
}

static ra_status read_records(const uint8_t *data, size_t size, ra_arena *arena, hw_mad *m, const uint32_t *len_at,
                              ra_error *err, ra_read_runner run, void *run_ctx);

ra_status hw_mad_read(const uint8_t *data, size_t size, ra_arena *arena, hw_mad *m, ra_error *err)
{
    return hw_mad_read_run(data, size, arena, m, err, NULL, NULL);
}

ra_status hw_mad_read_run(const uint8_t *data, size_t size, ra_arena *arena, hw_mad *m, ra_error *err,
                          ra_read_runner run, void *run_ctx)
{
    memset(m, 0, sizeof *m);
    if (!run) { /* in order on this thread */
        run = ra_read_run_serial;
        run_ctx = arena;
    }
    if (size >= 11 && !memcmp(data, "FORM", 4) && !memcmp(data + 8, "MAD", 3))
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "identifier",
                       "this is a Homeworld 2 .mad (IFF FORM 'MAD '), not a Homeworld (1999) 'Mellonn' mesh animation");
    ra_cursor c;
    ra_cursor_init(&c, data, size, FMT, err);
    uint8_t ident[8];
    if (!ra_rd_bytes(&c, ident, 8, "identifier")) return err->code;
    if (memcmp(ident, HW_MAD_IDENT, 8) != 0)
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "identifier", "identifier is not \"Mellonn\"");
    ra_rd_f32le(&c, &m->version, "version");
    ra_rd_s32le(&c, &m->string_block_length, "stringBlockLength");
    ra_rd_u32le(&c, &m->string_block_offset, "stringBlock");
    ra_rd_f32le(&c, &m->length, "length");
    ra_rd_f32le(&c, &m->fps, "framesPerSecond");
    ra_rd_s32le(&c, &m->object_count, "nObjects");
    ra_rd_u32le(&c, &m->objects_offset, "objPath");
    ra_rd_s32le(&c, &m->animation_count, "nAnimations");
    if (!ra_cursor_ok(&c)) return err->code;
    if (m->string_block_length < 0)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 12, "stringBlockLength", "stringBlockLength is %d",
                       (int)m->string_block_length);
    if (m->object_count < 0)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 28, "nObjects", "nObjects is %d", (int)m->object_count);
    if (m->animation_count < 0 || m->animation_count > HW_MAD_MAX_ANIMATIONS)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 36, "nAnimations", "nAnimations is %d (0 to %d allowed)",
                       (int)m->animation_count, HW_MAD_MAX_ANIMATIONS);
    uint64_t na = (uint64_t)m->animation_count, no = (uint64_t)m->object_count;
    if (!ra_range_ok(size, HW_MAD_HEADER_SIZE, HW_MAD_ANIM_SIZE * na))
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, 36, "nAnimations",
                       "%llu animation records run past the end of the file", (unsigned long long)na);
    /* the 32-bit game reads the file's last stringBlockLength bytes whatever stringBlock says; the
     * 64-bit port reads at stringBlock.  An offset outside the file: the last bytes, as the first does */
    uint64_t sb_at = m->string_block_offset;
    if (!ra_range_ok(size, sb_at, (uint64_t)m->string_block_length)) {
        if ((uint64_t)m->string_block_length > size)
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, 12, "stringBlockLength",
                           "the string block (%d bytes) is longer than the file", (int)m->string_block_length);
        sb_at = size - (uint64_t)m->string_block_length;
        m->strings_from_tail = true;
    }
    if (!ra_range_ok(size, m->objects_offset, HW_MAD_OBJECT_SIZE * no))
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, 32, "objPath",
                       "%llu object records at offset %u run past the end of the file", (unsigned long long)no,
                       m->objects_offset);
    m->strings = ra_arena_array(arena, (size_t)m->string_block_length + 1, 1);
    m->animations = ra_arena_array(arena, na, sizeof *m->animations);
    m->objects = ra_arena_array(arena, no, sizeof *m->objects);
    if (!m->strings || !m->animations || !m->objects)
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, 0, "", "out of memory");
    memcpy(m->strings, data + sb_at, (size_t)m->string_block_length);
    size_t sbl = (size_t)m->string_block_length;
    uint32_t *len_at = ra_malloc((sbl + 1) * sizeof *len_at);
    if (!len_at) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, 0, "", "out of memory");
    len_at[sbl] = NO_NUL;
    for (size_t i = sbl; i-- > 0;)
        len_at[i] = !m->strings[i] ? 0 : len_at[i + 1] == NO_NUL ? NO_NUL : len_at[i + 1] + 1;
    ra_status st = read_records(data, size, arena, m, len_at, err, run, run_ctx);
    ra_free(len_at);
    return st;
}

/* The objects' keys, read as jobs (after their records, in order). */
typedef struct key_jobs {
    const uint8_t *data;
    hw_object *objects;
} key_jobs;

static ra_status key_job(void *ctx, size_t j, ra_arena *arena, ra_error *err)
{
    (void)arena;
    const key_jobs *kj = ctx;
    return read_object_keys(kj->data, &kj->objects[j], err);
}

static ra_status read_records(const uint8_t *data, size_t size, ra_arena *arena, hw_mad *m, const uint32_t *len_at,
                              ra_error *err, ra_read_runner run, void *run_ctx)
{
    ra_cursor c;
    ra_cursor_init(&c, data, size, FMT, err);
    c.pos = HW_MAD_HEADER_SIZE;
    uint64_t na = (uint64_t)m->animation_count, no = (uint64_t)m->object_count;

    for (uint64_t a = 0; a < na; a++) {
        hw_animation *an = &m->animations[a];
        uint64_t rec = HW_MAD_HEADER_SIZE + HW_MAD_ANIM_SIZE * a;
        ra_rd_u32le(&c, &an->name_offset, "animation.name");
        ra_rd_f32le(&c, &an->start, "animation.startTime");
        ra_rd_f32le(&c, &an->end, "animation.endTime");
        ra_rd_u32le(&c, &an->flags, "animation.flags");
        if (!ra_cursor_ok(&c)) return err->code;
        ra_status st = read_name(m, len_at, an->name_offset, rec, "animation.name", &an->name, &an->name_length, err);
        if (st != RA_OK) return st;
        if (!isfinite(an->start))
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, rec + 4, "animation.startTime",
                           "startTime is not a finite number");
        if (!isfinite(an->end))
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, rec + 8, "animation.endTime", "endTime is not a finite number");
        if (an->end < an->start)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, rec + 8, "animation.endTime",
                           "animation '%.60s' ends (%.9g s) before it starts (%.9g s)", an->name, an->end, an->start);
    }

    uint64_t keys_left = HW_MAD_MAX_SHARING * (uint64_t)size;
    uint64_t expect = HW_MAD_HEADER_SIZE + HW_MAD_ANIM_SIZE * na + HW_MAD_OBJECT_SIZE * no;
    m->canonical = m->objects_offset == HW_MAD_HEADER_SIZE + HW_MAD_ANIM_SIZE * na;
    /* Every object's record (and the arrays for its keys) in order, then
     * their keys as jobs: those of the objects before a record that fails
     * (whose error comes after theirs, as reading in order meets them). */
    ra_error late_err;
    ra_error_clear(&late_err);
    ra_status late = RA_OK;
    uint64_t read = 0;
    double work = 0;
    for (; read < no; read++) {
        hw_object *o = &m->objects[read];
        late = read_object(data, size, m->objects_offset + HW_MAD_OBJECT_SIZE * read, arena, m, len_at, o, &keys_left,
                           &late_err);
        if (late != RA_OK) break;
        uint64_t n = (uint64_t)o->key_count;
        work += (double)n;
        bool contiguous = o->times_offset == expect && o->tcb_offset == expect + 4 * n;
        for (int i = 0; i < HW_CHANNELS; i++) contiguous &= o->path_offset[i] == expect + (16 + 4 * (uint64_t)i) * n;
        m->canonical &= contiguous;
        expect += 40 * n;
    }
    key_jobs kj = {data, m->objects};
    ra_status st = run(run_ctx, (size_t)read, work, key_job, &kj, late, &late_err, err);
    if (st != RA_OK) return st;
    m->canonical &= m->string_block_offset == expect && expect + (uint64_t)m->string_block_length == size;
    return RA_OK;
}

float hw_mad_phantom_end(const hw_mad *m)
{
    return (m->animation_count > 0 ? m->animations[m->animation_count - 1].end : 0.0f) + 1.0f;
}

bool hw_object_set_keys(hw_object *o, ra_arena *arena, size_t n_real, const float *times, const hw_tcb *tcb,
                        const float *const values[HW_CHANNELS], float phantom_end)
{
    if (n_real < 1 || n_real > INT32_MAX - 2) return false;
    size_t n = n_real + 2;
    o->times = ra_arena_array(arena, n, sizeof *o->times);
    o->tcb = ra_arena_array(arena, n, sizeof *o->tcb);
    bool ok = o->times && o->tcb;
    for (int c = 0; c < HW_CHANNELS; c++) ok &= (o->path[c] = ra_arena_array(arena, n, sizeof(float))) != NULL;
    if (!ok) return false;
    o->key_count = (int32_t)n;
    memcpy(o->times + 1, times, n_real * sizeof *times);
    memcpy(o->tcb + 1, tcb, n_real * sizeof *tcb);
    o->times[0] = -1.0f, o->times[n - 1] = phantom_end;
    o->tcb[0] = tcb[0], o->tcb[n - 1] = tcb[n_real - 1];
    for (int c = 0; c < HW_CHANNELS; c++) {
        memcpy(o->path[c] + 1, values[c], n_real * sizeof(float));
        o->path[c][0] = values[c][0], o->path[c][n - 1] = values[c][n_real - 1];
    }
    return true;
}

/* copies *name to s + *at and points the record's name fields there */
static void pack_name(uint8_t *s, size_t *at, const char **name, uint32_t *offset, uint32_t *length)
{
    size_t n = strlen(*name) + 1;
    memcpy(s + *at, *name, n);
    *offset = (uint32_t)*at;
    *name = (const char *)s + *at;
    *length = (uint32_t)(n - 1);
    *at += n;
}

bool hw_mad_set_strings(hw_mad *m, ra_arena *arena)
{
    size_t total = 0;
    for (int32_t a = 0; a < m->animation_count; a++) total += strlen(m->animations[a].name) + 1;
    for (int32_t j = 0; j < m->object_count; j++) total += strlen(m->objects[j].name) + 1;
    if (total > INT32_MAX) return false;
    uint8_t *s = ra_arena_array(arena, total + 1, 1);
    if (!s) return false;
    size_t at = 0;
    for (int32_t a = 0; a < m->animation_count; a++) {
        hw_animation *an = &m->animations[a];
        pack_name(s, &at, &an->name, &an->name_offset, &an->name_length);
    }
    for (int32_t j = 0; j < m->object_count; j++) {
        hw_object *o = &m->objects[j];
        pack_name(s, &at, &o->name, &o->name_offset, &o->name_length);
    }
    m->strings = s;
    m->string_block_length = (int32_t)total;
    return true;
}

ra_status hw_mad_write(const hw_mad *m, ra_writer *w, ra_error *err)
{
    if (m->animation_count < 0 || m->animation_count > HW_MAD_MAX_ANIMATIONS || m->object_count < 0 ||
        m->string_block_length < 0)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, RA_NO_OFFSET, "header", "counts out of range");
    uint64_t na = (uint64_t)m->animation_count, no = (uint64_t)m->object_count;
    uint64_t at = HW_MAD_HEADER_SIZE + HW_MAD_ANIM_SIZE * na + HW_MAD_OBJECT_SIZE * no;
    uint64_t objects_at = HW_MAD_HEADER_SIZE + HW_MAD_ANIM_SIZE * na, body = at;
    for (uint64_t j = 0; j < no; j++) {
        const hw_object *o = &m->objects[j];
        if (o->key_count < 0 || (o->key_count && (!o->times || !o->tcb)))
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, RA_NO_OFFSET, "object.nKeyframes",
                           "an object's keys are missing");
        for (int i = 0; i < HW_CHANNELS; i++)
            if (o->key_count && !o->path[i])
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, RA_NO_OFFSET, "object.path", "an object's keys are missing");
        at += 40 * (uint64_t)o->key_count;
    }
    if (at + (uint64_t)m->string_block_length > UINT32_MAX)
        return ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "", "the file would exceed 4 GiB (32-bit offsets)");
    ra_wr_bytes(w, HW_MAD_IDENT, 8);
    ra_wr_f32le(w, m->version);
    ra_wr_u32le(w, (uint32_t)m->string_block_length);
    ra_wr_u32le(w, (uint32_t)at);
    ra_wr_f32le(w, m->length);
    ra_wr_f32le(w, m->fps);
    ra_wr_u32le(w, (uint32_t)m->object_count);
    ra_wr_u32le(w, (uint32_t)objects_at);
    ra_wr_u32le(w, (uint32_t)m->animation_count);
    for (uint64_t a = 0; a < na; a++) {
        const hw_animation *an = &m->animations[a];
        ra_wr_u32le(w, an->name_offset);
        ra_wr_f32le(w, an->start);
        ra_wr_f32le(w, an->end);
        ra_wr_u32le(w, an->flags);
    }
    for (uint64_t j = 0; j < no; j++) {
        const hw_object *o = &m->objects[j];
        uint64_t n = (uint64_t)o->key_count;
        ra_wr_u32le(w, o->name_offset);
        ra_wr_u16le(w, o->name_crc);
        ra_wr_bytes(w, o->pad, 2);
        ra_wr_u32le(w, o->animation_bits);
        ra_wr_u32le(w, (uint32_t)o->key_count);
        ra_wr_u32le(w, (uint32_t)body);
        ra_wr_u32le(w, (uint32_t)(body + 4 * n));
        for (int i = 0; i < HW_CHANNELS; i++) ra_wr_u32le(w, (uint32_t)(body + (16 + 4 * (uint64_t)i) * n));
        body += 40 * n;
    }
    for (uint64_t j = 0; j < no; j++) {
        const hw_object *o = &m->objects[j];
        size_t n = (size_t)o->key_count;
        for (size_t k = 0; k < n; k++) ra_wr_f32le(w, o->times[k]);
        for (size_t k = 0; k < n; k++) {
            ra_wr_f32le(w, o->tcb[k].tension);
            ra_wr_f32le(w, o->tcb[k].continuity);
            ra_wr_f32le(w, o->tcb[k].bias);
        }
        for (int i = 0; i < HW_CHANNELS; i++)
            for (size_t k = 0; k < n; k++) ra_wr_f32le(w, o->path[i][k]);
    }
    ra_wr_bytes(w, m->strings, (size_t)m->string_block_length);
    return w->failed ? ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory writing") : RA_OK;
}
