/* Homeworld (1999) .big archives ("RBF1.23", little-endian): the table of
 * contents, the encrypted names, the LZSS codec of compressed entries, and the
 * listing of the .mad mesh animations inside.  docs/formats/homeworld.md §9.
 *
 *   char[7] "RBF1.23", s32 numFiles, s32 flags (bit 0: TOC sorted by CRC)
 *   numFiles x 32 bytes {u32 crc1, u32 crc2, u16 nameLength, 2 pad,
 *                        u32 storedLength, u32 realLength, u32 offset,
 *                        u32 timeStamp, u8 compressionType, 3 pad}
 *   at offset: nameLength encrypted name bytes, a NUL, storedLength bytes
 * The Remastered collection's file has 36-byte entries (a u32 after
 * timeStamp): taken when the 32-byte reading does not validate.  Names are
 * decrypted with mask 0xD5, each plain byte the next byte's mask.
 * compressionType 1 is Nelson & Gailly's LZSS (MSB-first bits, a 4096-byte
 * ring written from position 1; flag 1 + 8 bits a literal, flag 0 + 12-bit
 * ring position (0 = end) + 4 bits L: L + 2 bytes copied). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "retroanim/ra_archive_internal.h"

#define FMT "homeworld_big"
#define BIG_MAGIC "RBF1.23"
#define BIG_HEADER 15u
#define BIG_MASK 0xD5u
#define BIG_SORTED 1u
#define RING 4096u
#define REMASTER_FILES 13887 /* the one count the game reads as 36-byte entries */

typedef struct big_entry {
    uint32_t crc1, crc2, stored, real, offset, stamp;
    uint16_t name_length;
    uint8_t type;         /* 0 stored, 1 LZSS */
    size_t toc;           /* archive offset of its TOC entry */
    size_t data;          /* of its stored bytes (after the name and its NUL) */
    char *name;           /* decrypted, as stored ('\' separators) */
    char *path;           /* the same with '/' */
    const uint8_t *bytes; /* the payload, once asked for */
    int64_t geo;          /* a .mad: the entry of its ship's .geo/.peo, or -1 */
} big_entry;

typedef struct big {
    big_entry *e;
    size_t count;
    size_t stride; /* 32, or 36 (Remastered) */
    /* the .geo/.peo entries by their file name without the extension, lower
     * case: the map gives the first entry + 1, geo_next the next (-1: none),
     * in entry order */
    ra_strmap geo_stems;
    int64_t *geo_next;
} big;

static bool big_detect(const uint8_t *data, size_t size) { return size >= 7 && memcmp(data, BIG_MAGIC, 7) == 0; }

static const char *big_lookalike(const uint8_t *data, size_t size)
{
    if (size >= 8 && memcmp(data, "_ARCHIVE", 8) == 0)
        return "this is a Homeworld 2 .big (\"_ARCHIVE\"), not a Homeworld (1999) \"RBF1.23\" archive";
    return NULL;
}

/* ---- the table of contents ------------------------------------------------------------------------ */
/* n entries of `stride` bytes, every field checked (a wrong stride fails one of them). */
static ra_status read_toc(ra_archive *ar, big *b, size_t n, size_t stride, ra_error *err)
{
    const uint8_t *d = ar->data;
    size_t size = ar->size, toc_end = BIG_HEADER + n * stride; /* n * stride <= size: checked by the caller */
    for (size_t i = 0; i < n; i++) {
        big_entry *e = &b->e[i];
        size_t at = BIG_HEADER + i * stride;
        const uint8_t *p = d + at;
        memset(e, 0, sizeof *e);
        e->toc = at;
        e->crc1 = ra_load_u32le(p);
        e->crc2 = ra_load_u32le(p + 4);
        e->name_length = (uint16_t)(p[8] | p[9] << 8);
        e->stored = ra_load_u32le(p + 12);
        e->real = ra_load_u32le(p + 16);
        e->offset = ra_load_u32le(p + 20);
        e->stamp = ra_load_u32le(p + 24);
        e->type = p[stride - 4];
        if (e->type > 1)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + stride - 4, "entry.compressionType",
                           "entry %zu: compression type %u (0 stored, 1 LZSS)", i, e->type);
        if (e->offset < toc_end || !ra_range_ok(size, e->offset, (uint64_t)e->name_length + 1))
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 20, "entry.offset",
                           "entry %zu: its %u-byte name and NUL at %u are not between the TOC's end (%zu) and the "
                           "file's end (%zu)",
                           i, e->name_length, e->offset, toc_end, size);
        if (d[e->offset + e->name_length] != 0)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, e->offset + e->name_length, "entry.name",
                           "entry %zu: no NUL after its %u-byte name", i, e->name_length);
        e->data = (size_t)e->offset + e->name_length + 1;
        if (!ra_range_ok(size, e->data, e->stored))
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, at + 12, "entry.storedLength",
                           "entry %zu: %u stored bytes at %zu run past the end of the file (%zu bytes)", i, e->stored,
                           e->data, size);
        e->name = ra_arena_array_uninit(ar->arena, (size_t)e->name_length + 1, 1);
        e->path = ra_arena_array_uninit(ar->arena, (size_t)e->name_length + 1, 1);
        if (!e->name || !e->path) return ra_fail_nomem(err, FMT);
        unsigned mask = BIG_MASK;
        for (size_t k = 0; k < e->name_length; k++) {
            unsigned c = d[e->offset + k] ^ mask; /* the mask is the previous plain byte */
            mask = c;
            e->name[k] = (char)c;
            e->path[k] = c == '\\' ? '/' : (char)c;
        }
        e->name[e->name_length] = e->path[e->name_length] = '\0';
    }
    b->count = n;
    b->stride = stride;
    return RA_OK;
}

/* Why a name must not be a path under an output folder, or NULL. */
static const char *unsafe(const big_entry *e)
{
    const char *s = e->path;
    size_t n = e->name_length;
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)s[k] < 32 || s[k] == 127) return "has control characters";
    if (n && s[0] == '/') return "is an absolute path";
    if (n >= 2 && ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z') && s[1] == ':') return "starts with a drive letter";
    for (size_t k = 0; k < n;) {
        size_t len = strcspn(s + k, "/");
        if (len == 2 && s[k] == '.' && s[k + 1] == '.') return "climbs out of its folder (..)";
        k += len + 1;
    }
    return NULL;
}

/* The game's CRC check of a name (docs/formats/homeworld.md §9): lower case, '\' separators, no repeated
 * separator; crc1 over the first half, crc2 over the second (the shipped tool leaves an odd length's last
 * character out, HomeworldSDL's does not: either matches). */
static bool crc_ok(const big_entry *e, char *buf)
{
    size_t n = 0;
    for (size_t k = 0; k < e->name_length; k++) {
        char c = e->name[k] == '/' ? '\\' : e->name[k];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c == '\\' && n && buf[n - 1] == '\\') continue;
        buf[n++] = c;
    }
    size_t half = n / 2;
    const Bytef *p = (const Bytef *)buf;
    uint32_t c1 = (uint32_t)crc32(0, p, (uInt)half);
    uint32_t shipped = (uint32_t)crc32(0, p + half, (uInt)half), fixed = (uint32_t)crc32(0, p + half, (uInt)(n - half));
    return c1 == e->crc1 && (e->crc2 == shipped || e->crc2 == fixed);
}

static bool is_mad(const big_entry *e)
{
    const char *x = e->name + e->name_length - (e->name_length >= 4 ? 4 : 0);
    return e->name_length >= 4 && x[0] == '.' && (x[1] | 32) == 'm' && (x[2] | 32) == 'a' && (x[3] | 32) == 'd';
}

/* e's name ends with ext (".geo"), in any case. */
static bool has_ext(const big_entry *e, const char *ext)
{
    size_t n = strlen(ext);
    return e->name_length > n && !strncasecmp(e->path + e->name_length - n, ext, n);
}

static bool is_geo(const big_entry *e) { return has_ext(e, ".geo") || has_ext(e, ".peo"); }

/* a and b name the same entry: any case, '\' or '/' separators. */
static bool same_path(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = *a == '\\' ? '/' : tolower((unsigned char)*a), y = *b == '\\' ? '/' : tolower((unsigned char)*b);
        if (x != y) return false;
        if (!x) return true;
    }
}

static size_t depth(const char *path)
{
    size_t d = 0;
    for (; *path; path++) d += *path == '/';
    return d;
}

/* s[0, n) in lower case (ASCII, as strncasecmp compares), in the arena; NULL
 * when s holds a NUL there (such a name matches none) or out of memory
 * (*nomem) */
static char *lower_key(ra_arena *a, const char *s, size_t n, bool *nomem)
{
    if (memchr(s, 0, n)) return NULL;
    char *k = ra_arena_strndup(a, s, n);
    if (!k) return *nomem = true, NULL;
    for (char *q = k; *q; q++) *q = (char)tolower((unsigned char)*q);
    return k;
}

/* The .geo/.peo entries of one file name that a .mad considers: each .mad
 * looks at every one of its name (the game has a few per ship: its LODs in
 * each race's folder), so a crafted archive of many .mads and many
 * geometries of one name cost their product. */
#define BIG_GEO_PER_NAME 256

/* b->geo_stems and b->geo_next; false when out of memory.  Built last entry
 * first, so that each chain runs in entry order; then each chain is cut
 * after its first BIG_GEO_PER_NAME entries (*cut: the entries left out). */
static bool index_geo(ra_arena *a, big *b, size_t *cut)
{
    size_t geos = 0;
    for (size_t i = 0; i < b->count; i++) geos += is_geo(&b->e[i]);
    b->geo_next = ra_arena_array_uninit(a, b->count ? b->count : 1, sizeof *b->geo_next);
    if (!b->geo_next || !ra_strmap_init(&b->geo_stems, a, geos)) return false;
    bool nomem = false;
    for (size_t i = b->count; i-- > 0;) {
        const big_entry *g = &b->e[i];
        b->geo_next[i] = -1;
        if (!is_geo(g)) continue;
        const char *base = strrchr(g->path, '/');
        base = base ? base + 1 : g->path;
        size_t bn = strlen(base);
        char *key = bn >= 4 ? lower_key(a, base, bn - 4, &nomem) : NULL;
        if (nomem) return false;
        if (!key) continue;
        uint32_t *head = ra_strmap_slot(&b->geo_stems, key);
        if (!head) return false;
        b->geo_next[i] = (int64_t)*head - 1;
        *head = (uint32_t)i + 1;
    }
    *cut = 0;
    for (size_t k = 0; k < b->geo_stems.cap; k++) {
        if (!b->geo_stems.keys[k]) continue;
        int64_t i = (int64_t)b->geo_stems.values[k] - 1;
        for (size_t n = 1; i >= 0 && n < BIG_GEO_PER_NAME; n++) i = b->geo_next[i];
        if (i < 0) continue;
        for (int64_t j = b->geo_next[i]; j >= 0; j = b->geo_next[j]) ++*cut;
        b->geo_next[i] = -1;
    }
    return true;
}

/* The entry --option geo names (the same for every .mad; -1: "none", or a
 * file on disk, which the .mad's reader opens). */
static int64_t named_geo_entry(const big *b, const char *opt)
{
    if (!strcmp(opt, "none")) return -1;
    for (size_t i = 0; i < b->count; i++)
        if (same_path(b->e[i].path, opt)) return (int64_t)i;
    return -1;
}

/* The ship geometry of the .mad entry m without --option geo: the .geo/.peo
 * with the .mad's stem (any case) in the .mad's folder or below it (the game's
 * LOD folders, R1/Probe/Rl0/LOD0/Probe.peo: the .lod script that names them is
 * not read), the shallowest, then the first path in byte order (LOD0 before
 * LOD1), a .geo before its .peo.  -1: none (*nomem set when out of memory). */
static int64_t find_geo_entry(ra_arena *a, const big *b, const big_entry *m, bool *nomem)
{
    const char *slash = strrchr(m->path, '/');
    size_t dir = slash ? (size_t)(slash - m->path) + 1 : 0, stem = m->name_length - 4 - dir;
    /* the candidates: the .geo/.peo entries of the .mad's file name (any case) */
    const char *key = lower_key(a, m->path + dir, stem, nomem);
    const uint32_t *head = key ? ra_strmap_get(&b->geo_stems, key) : NULL;
    int64_t best = -1;
    for (int64_t i = head ? (int64_t)*head - 1 : -1; i >= 0; i = b->geo_next[i]) {
        const big_entry *g = &b->e[i];
        if (g->name_length < dir + stem + 4 || strncasecmp(g->path, m->path, dir)) continue;
        const char *base = strrchr(g->path, '/');
        base = base ? base + 1 : g->path;
        if ((size_t)(base - g->path) < dir || strlen(base) != stem + 4 || strncasecmp(base, m->path + dir, stem))
            continue;
        if (best >= 0) {
            const big_entry *o = &b->e[best];
            size_t dg = depth(g->path), dob = depth(o->path);
            int c = strncasecmp(g->path, o->path, g->name_length - 4);
            if (dg > dob || (dg == dob && (c > 0 || (c == 0 && has_ext(g, ".peo"))))) continue;
        }
        best = i;
    }
    return best;
}

/* A name for a warning: control characters as '?', at most 200 bytes. */
static void printable(const big_entry *e, char *out, size_t cap)
{
    size_t n = e->name_length < cap - 1 ? e->name_length : cap - 1;
    for (size_t k = 0; k < n; k++) out[k] = (unsigned char)e->path[k] < 32 || e->path[k] == 127 ? '?' : e->path[k];
    out[n] = '\0';
}

static ra_status add_item(ra_archive *ar, big_entry *e, size_t i)
{
    ra_arena *a = ar->arena;
    ra_archive_item *it = ra_archive_add(ar);
    if (!it) return RA_ERR_NO_MEMORY;
    const char *slash = strrchr(e->path, '/');
    it->id = (uint32_t)i;
    it->name = ra_arena_strndup(a, e->path, (size_t)e->name_length - 4); /* without ".mad" */
    it->kind = "mad";
    it->format = "homeworld_mad";
    it->extension = "mad";
    it->offset = e->data;
    it->stored_size = e->stored;
    it->size = e->real;
    it->compressed = e->type == 1;
    it->group = slash ? ra_arena_strndup(a, e->path, (size_t)(slash - e->path)) : "";
    it->priv = e;
    it->has_skeleton = e->geo >= 0;
    it->skeleton_id = e->geo >= 0 ? (uint32_t)e->geo : 0;
    const big *b = ar->impl;
    /* the entries' paths are the arena's: referenced, as the keys; big.geo only with a geometry */
    ra_meta meta[7];
    size_t n = 0;
    meta[n++] = (ra_meta){"big.path", RA_META_STRING, {.s = e->path}};
    if (e->geo >= 0) meta[n++] = (ra_meta){"big.geo", RA_META_STRING, {.s = b->e[e->geo].path}};
    meta[n++] = (ra_meta){"big.compression", RA_META_STRING, {.s = e->type ? "lzss" : "stored"}};
    meta[n++] = (ra_meta){"big.timestamp", RA_META_INT, {.i = e->stamp}};
    meta[n++] = (ra_meta){"big.crc1", RA_META_INT, {.i = e->crc1}};
    meta[n++] = (ra_meta){"big.crc2", RA_META_INT, {.i = e->crc2}};
    meta[n++] = (ra_meta){"big.name_offset", RA_META_INT, {.i = e->offset}};
    return it->name && it->group && ra_meta_add_refs(a, &it->meta, meta, n) ? RA_OK : RA_ERR_NO_MEMORY;
}

static ra_status big_open(ra_archive *ar, const ra_options *opt, ra_error *err)
{
    const uint8_t *d = ar->data;
    size_t size = ar->size;
    if (size < BIG_HEADER)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, size < 11 ? 7 : 11, size < 11 ? "numFiles" : "flags",
                       "the header needs 15 bytes, the file has %zu", size);
    int32_t files = (int32_t)ra_load_u32le(d + 7);
    uint32_t flags = ra_load_u32le(d + 11);
    if (files < 0) return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 7, "numFiles", "numFiles is %d", files);
    size_t n = (size_t)files;
    if ((uint64_t)n * 32 > size - BIG_HEADER)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, 7, "numFiles",
                       "%zu entries of 32 bytes need %llu bytes after the header, the file has %zu", n,
                       (unsigned long long)n * 32, size - BIG_HEADER);
    ra_arena *a = ar->arena;
    big *b = ra_arena_alloc(a, sizeof *b);
    if (!b || !(b->e = ra_arena_array_uninit(a, n ? n : 1, sizeof *b->e))) return ra_fail_nomem(err, FMT);
    ar->impl = b;
    /* 32-byte entries, or the Remastered 36 when those do not validate (that one count first, as the game does) */
    size_t first = files == REMASTER_FILES ? 36 : 32, second = first == 32 ? 36 : 32;
    ra_error e1, e2;
    ra_error_clear(&e1);
    ra_error_clear(&e2);
    ra_status st = read_toc(ar, b, n, first, &e1);
    if (st != RA_OK && st != RA_ERR_NO_MEMORY && (uint64_t)n * second <= size - BIG_HEADER)
        st = read_toc(ar, b, n, second, &e2);
    if (st != RA_OK) {
        const ra_error *e = st == RA_ERR_NO_MEMORY ? (e2.code == RA_ERR_NO_MEMORY ? &e2 : &e1) : &e1;
        if (err) *err = *e;
        return e->code;
    }
    /* what the game would stumble on: a name whose CRCs do not match it, a TOC flagged sorted that is not */
    size_t longest = 0, bad_crc = 0, first_bad = 0, unsorted = SIZE_MAX, mads = 0, lzss = 0;
    for (size_t i = 0; i < n; i++) longest = b->e[i].name_length > longest ? b->e[i].name_length : longest;
    char *buf = ra_arena_array_uninit(a, longest + 1, 1);
    if (!buf) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < n; i++) {
        const big_entry *e = &b->e[i];
        if (!crc_ok(e, buf) && !bad_crc++) first_bad = i;
        if (i && unsorted == SIZE_MAX && (flags & BIG_SORTED) &&
            (e->crc1 < e[-1].crc1 || (e->crc1 == e[-1].crc1 && e->crc2 < e[-1].crc2)))
            unsorted = i;
        lzss += e->type == 1;
    }
    char shown[208];
    bool ok = true;
    if (bad_crc) {
        printable(&b->e[first_bad], shown, sizeof shown);
        ok = ra_archive_warn(ar,
                             "the CRCs of %zu entr%s do not match the name (the first: entry %zu, %s): the game "
                             "would not find them by name",
                             bad_crc, bad_crc == 1 ? "y" : "ies", first_bad, shown);
    }
    if (ok && unsorted != SIZE_MAX)
        ok = ra_archive_warn(ar,
                             "the TOC is flagged sorted but entry %zu is out of CRC order: the game's binary "
                             "search would miss entries",
                             unsorted);
    /* the .mad entries are the items; a name that would leave an output folder is not listed */
    const char *geo_opt = ra_options_get(opt, "geo");
    const bool named = geo_opt && *geo_opt;
    const int64_t named_geo = named ? named_geo_entry(b, geo_opt) : -1;
    size_t cut = 0;
    if (!named && !index_geo(a, b, &cut)) return ra_fail_nomem(err, FMT);
    if (ok && cut)
        ok = ra_archive_warn(ar,
                             "%zu .geo/.peo entries are not considered for pairing: a file name has more than %d "
                             "(the first %d in entry order are)",
                             cut, BIG_GEO_PER_NAME, BIG_GEO_PER_NAME);
    bool nomem = false;
    for (size_t i = 0; ok && i < n; i++) {
        big_entry *e = &b->e[i];
        if (!is_mad(e)) continue;
        mads++;
        const char *why = unsafe(e);
        if (why) {
            printable(e, shown, sizeof shown);
            ok = ra_archive_warn(ar, "entry %zu (%s) is not listed: its name %s", i, shown, why);
            continue;
        }
        e->geo = named ? named_geo : find_geo_entry(a, b, e, &nomem);
        if (nomem) return ra_fail_nomem(err, FMT);
        if (e->geo >= 0 && unsafe(&b->e[e->geo])) e->geo = -1; /* extract writes it beside the .mad */
        if (add_item(ar, e, i) != RA_OK) return ra_fail_nomem(err, FMT);
    }
    ok = ok && ra_meta_set_string(a, &ar->meta, "big.version", "1.23") &&
         ra_meta_set_int(a, &ar->meta, "big.files", (int64_t)n) && ra_meta_set_int(a, &ar->meta, "big.flags", flags) &&
         ra_meta_set_bool(a, &ar->meta, "big.sorted", (flags & BIG_SORTED) != 0) &&
         ra_meta_set_int(a, &ar->meta, "big.entry_size", (int64_t)b->stride) &&
         ra_meta_set_int(a, &ar->meta, "big.lzss_files", (int64_t)lzss) &&
         ra_meta_set_int(a, &ar->meta, "big.mad_files", (int64_t)mads) &&
         ra_meta_set_int(a, &ar->meta, "big.other_files", (int64_t)(n - mads));
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}

/* ---- LZSS ------------------------------------------------------------------------------------------- */
typedef struct bit_in {
    const uint8_t *p;
    uint64_t bits, pos;
} bit_in;

static bool take(bit_in *b, unsigned count, unsigned *v)
{
    if (b->bits - b->pos < count) return false;
    unsigned x = 0;
    for (unsigned k = 0; k < count; k++, b->pos++)
        x = x << 1 | ((unsigned)b->p[b->pos >> 3] >> (7 - (b->pos & 7)) & 1u);
    *v = x;
    return true;
}

/* e's stream into out[e->real]: every token checked before it writes (docs/formats/homeworld.md §9). */
static ra_status lzss_expand(ra_archive *ar, const big_entry *e, uint8_t *out, ra_error *err)
{
    uint8_t ring[RING];
    memset(ring, 0, sizeof ring);
    bit_in b = {ar->data + e->data, (uint64_t)e->stored * 8, 0};
    size_t o = 0, real = e->real;
    unsigned cur = 1, flag = 0, v = 0, len = 0;
    for (;;) {
        uint64_t at = e->data + b.pos / 8; /* the byte the token starts in */
        if (!take(&b, 1, &flag) || !take(&b, flag ? 8 : 12, &v) || (!flag && v && !take(&b, 4, &len)))
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, at, "data",
                           "%s: the LZSS stream ends before its end marker (%u stored bytes, %zu of %zu bytes out)",
                           e->path, e->stored, o, real);
        if (flag) {
            if (o == real)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, "data",
                               "%s: an LZSS literal after all %zu bytes of realLength", e->path, real);
            out[o++] = ring[cur] = (uint8_t)v;
            cur = (cur + 1) & (RING - 1);
            continue;
        }
        if (v == 0) break; /* the end marker */
        len += 2;
        if (v > o) /* ring positions 1..o hold bytes (all of them once 4095 are out) */
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, "data",
                           "%s: an LZSS copy from ring position %u, where nothing was written yet (%zu bytes out)",
                           e->path, v, o);
        if (len > real - o)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, "data",
                           "%s: an LZSS copy of %u bytes at output byte %zu passes realLength (%zu)", e->path, len, o,
                           real);
        for (unsigned k = 0; k < len; k++) {
            uint8_t c = ring[(v + k) & (RING - 1)];
            out[o++] = ring[cur] = c;
            cur = (cur + 1) & (RING - 1);
        }
    }
    if (o != real)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, e->toc + 16, "entry.realLength",
                       "%s: the LZSS stream gives %zu bytes, realLength says %zu", e->path, o, real);
    uint64_t used = (b.pos + 7) / 8;
    if (used < e->stored && !ra_archive_warn(ar, "%s: %llu bytes after its LZSS end marker", e->path,
                                             (unsigned long long)(e->stored - used)))
        return ra_fail_nomem(err, FMT);
    return RA_OK;
}

static ra_status entry_payload(ra_archive *ar, big_entry *e, const uint8_t **data, size_t *size, ra_error *err)
{
    if (!e->bytes) {
        if (e->type == 0) {
            if (e->stored != e->real)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, e->toc + 16, "entry.realLength",
                               "%s: stored (not compressed) with %u bytes, realLength says %u", e->path, e->stored,
                               e->real);
            e->bytes = ar->data + e->data;
        } else {
            /* at most 17 bytes out of 17 bits */
            if ((uint64_t)e->real > (uint64_t)e->stored * 8)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, e->toc + 16, "entry.realLength",
                               "%s: realLength %u from %u bytes of LZSS: more than LZSS can give", e->path, e->real,
                               e->stored);
            uint8_t *out = ra_arena_array_uninit(ar->arena, e->real ? e->real : 1, 1);
            if (!out)
                return ra_fail(err, RA_ERR_NO_MEMORY, FMT, e->toc + 16, "entry.realLength",
                               "%s expands to %u bytes: over the memory limit (memory_limit)", e->path, e->real);
            ra_status st = lzss_expand(ar, e, out, err);
            if (st != RA_OK) return st;
            e->bytes = out;
        }
    }
    *data = e->bytes;
    *size = e->real;
    return RA_OK;
}

static ra_status big_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    big *b = ar->impl;
    return entry_payload(ar, &b->e[(const big_entry *)ar->items[i].priv - b->e], data, size, err);
}

/* The ship's .geo/.peo of item i (has_skeleton), as the Metroid pak gives a CINF. */
static ra_status big_geo(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    big *b = ar->impl;
    return entry_payload(ar, &b->e[ar->items[i].skeleton_id], data, size, err);
}

static const char *big_geo_path(const ra_archive *ar, size_t i)
{
    const big *b = ar->impl;
    return b->e[ar->items[i].skeleton_id].path;
}

const ra_archive_kind ra_archive_big = {"homeworld_big", big_detect,    big_open,    big_payload,
                                        big_geo,         big_lookalike, big_geo_path};
