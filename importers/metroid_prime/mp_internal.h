/* Metroid Prime: helpers the ANIM, CINF and scene code share (not public). */
#ifndef RETROANIM_MP_INTERNAL_H
#define RETROANIM_MP_INTERNAL_H

#include "retroanim/metroid_anim.h"

/* Only 0xFF bytes (the padding PAK extraction leaves). */
bool mp_is_padding(const uint8_t *p, size_t n);

#endif
