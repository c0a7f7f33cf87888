/* World of Goo anim.binltl (BinImageAnimation) and movie.binltl (BinMovie):
 * the format model, field for field.  Spec: docs/formats/world_of_goo.md.
 *
 * Four byte layouts share one model: binltl (32-bit little-endian offsets),
 * binbig (the same, big-endian), binltl64 (64-bit offsets, Linux 64-bit
 * build) and binuni (64-bit offsets behind an 8-byte magic, the 1.5 release).
 * Every pointer in the file is a byte offset (0 = null); inside a movie, the
 * pointers of an embedded animation are relative to that animation's start. */
#ifndef RETROANIM_WOG_H
#define RETROANIM_WOG_H

#include "ra_document.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wog_layout {
    WOG_LAYOUT_BINLTL = 0, /* 32-bit LE, no magic */
    WOG_LAYOUT_BINBIG,     /* 32-bit BE, no magic */
    WOG_LAYOUT_BINLTL64,   /* 64-bit LE offsets, no magic */
    WOG_LAYOUT_BINUNI,     /* 64-bit LE offsets, "BINUNIAN" / "BINUNIMO" magic */
    WOG_LAYOUT_COUNT
} wog_layout;

const char *wog_layout_name(wog_layout l);
/* -1 when the name is unknown */
int wog_layout_from_name(const char *name);

enum {
    WOG_XFORM_SCALE = 0,
    WOG_XFORM_ROTATE = 1,
    WOG_XFORM_TRANSLATE = 2
};
enum {
    WOG_INTERP_NONE = 0,
    WOG_INTERP_LINEAR = 1
};
enum {
    WOG_ACTOR_IMAGE = 0,
    WOG_ACTOR_TEXT = 1
};

/* The header's seven pointers, in file order (bit i of wog_anim.null_ptrs). */
enum {
    WOG_PTR_TYPES,
    WOG_PTR_TIMES,
    WOG_PTR_XFORM,
    WOG_PTR_ALPHA,
    WOG_PTR_COLOR,
    WOG_PTR_SOUND,
    WOG_PTR_STRINGS
};

/* More transform entries than any writer emits (2D Boy files hold 3). */
#define WOG_MAX_TRANSFORMS 16

#define WOG_KEYFRAME_SIZE 32u /* a keyframe's bytes in the file, in every layout */
typedef struct wog_keyframe { /* 32 bytes in every layout */
    float x, y, angle;
    int32_t alpha, color, next_frame_index, sound_str_idx, interpolation;
} wog_keyframe;

/* One channel's keyframe pointer array, ptr[num_frames]. */
typedef struct wog_frames {
    bool present;  /* the array's own pointer is non-null */
    int32_t *slot; /* num_frames entries: index into wog_anim.keys or -1 for a
                      null slot; NULL when the array was not read (its channel
                      flag is 0): the writer then writes it all null */
} wog_frames;

typedef struct wog_anim {
    int32_t has_color, has_alpha, has_sound, has_transform; /* 0 or 1 */
    uint32_t num_transforms, num_frames;
    uint8_t null_ptrs;        /* bit WOG_PTR_*: that header pointer is 0 */
    int32_t *transform_types; /* num_transforms (NULL if the pointer is null) */
    float *frame_times;       /* num_frames, seconds */
    wog_frames *xform;        /* num_transforms arrays (NULL if not read) */
    wog_frames alpha, color, sound;
    wog_keyframe *keys;   /* distinct keyframes, in the order first referenced */
    uint64_t *key_offset; /* absolute offset of each in the source (for messages), or NULL when key k
                             lies at key_base + WOG_KEYFRAME_SIZE k (the keys back to back in the order first
                             referenced, as 2D Boy's files lay them out): wog_key_offset */
    uint64_t key_base;
    uint32_t key_count;
    uint8_t *strings; /* the string table as stored (NUL-terminated names back to back) */
    uint32_t strings_size;
    uint64_t offset;    /* absolute start in the source file (0 standalone) */
    uint32_t unaligned; /* pointers that are not a multiple of 4 (a converter's; accepted) */
} wog_anim;

typedef struct wog_actor { /* 32 bytes in every layout */
    int32_t type, image_idx, label_idx, font_idx;
    float label_max_width, label_wrap_width;
    int32_t justification; /* left 0, center 1, right 2 */
    float depth;
} wog_actor;

typedef struct wog_movie {
    float length; /* seconds */
    uint32_t num_actors;
    wog_actor *actors;
    wog_anim *anims; /* one per actor, in actor order */
    uint8_t *strings;
    uint32_t strings_size;
    uint32_t unaligned; /* the movie's own pointers that are not a multiple of 4 (its animations count theirs) */
} wog_movie;

typedef struct wog_file {
    wog_layout layout;
    bool is_movie;
    wog_anim anim;   /* !is_movie */
    wog_movie movie; /* is_movie */
} wog_file;

/* The absolute offset of key k of a in its source. */
uint64_t wog_key_offset(const wog_anim *a, uint32_t k);

/* Longest name (sound, image, text, font id) accepted: real ids are short. */
#define WOG_MAX_STRING 1024

/* The string at byte `idx` of a table, or NULL when idx is outside it, the
 * string is not NUL-terminated inside it or is longer than WOG_MAX_STRING. */
const char *wog_string(const uint8_t *table, uint32_t size, int64_t idx);

/* The layout of a file by its content (magic, byte order, pointer width);
 * -1 when it looks like neither.  movie selects the header to test. */
int wog_sniff_layout(const uint8_t *data, size_t size, bool movie);

/* Read a standalone animation or a movie in the given layout.  `format` names
 * the format in errors. */
ra_status wog_anim_read(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, wog_anim *out,
                        ra_error *err);
ra_status wog_movie_read(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, wog_movie *out,
                         ra_error *err);
/* wog_movie_read with its animations read as jobs (ra_read_runner; run
 * NULL: ra_read_run_serial in the movie's arena).  The late error is the
 * movie's found after the animations the jobs read. */
ra_status wog_movie_read_run(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, wog_movie *out,
                             ra_error *err, ra_read_runner run, void *run_ctx);
/* Write in the canonical order of 2D Boy's files (docs/formats/world_of_goo.md §1, §2). */
ra_status wog_anim_write(const wog_anim *a, wog_layout layout, ra_writer *w, ra_error *err);
ra_status wog_movie_write(const wog_movie *m, wog_layout layout, ra_writer *w, ra_error *err);

/* For callers holding a document of format wog_anim / wog_movie (NULL otherwise). */
const wog_file *wog_document_file(const ra_document *doc);

#ifdef __cplusplus
}
#endif
#endif
