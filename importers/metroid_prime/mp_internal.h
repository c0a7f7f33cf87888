/* Metroid Prime: helpers the ANIM, CINF and scene code share (not public). */
#ifndef RETROANIM_MP_INTERNAL_H
#define RETROANIM_MP_INTERNAL_H

#include "retroanim/metroid_anim.h"

/* Ids with their positions, sorted by (id, position), to find the first
 * item with an id in log time. */
typedef struct mp_id_slot { uint32_t id, index; } mp_id_slot;

/* n items of `stride` bytes, each starting with its uint32 id (mp_bone,
 * mp_channel, a plain id array).  NULL when out of memory. */
mp_id_slot *mp_sorted_ids(ra_arena *ar, const void *items, size_t n, size_t stride);
/* Position of the first item with this id, or -1. */
int64_t mp_find_id(const mp_id_slot *t, size_t n, uint32_t id);

/* Only 0xFF bytes (the padding PAK extraction leaves). */
bool mp_is_padding(const uint8_t *p, size_t n);

#endif
