/* The archive readers' shared internals (not public). */
#ifndef RETROANIM_ARCHIVE_INTERNAL_H
#define RETROANIM_ARCHIVE_INTERNAL_H

#include "retroanim/ra_archive.h"

/* A new item at the end of ar->items (zeroed, meta empty); NULL when out of memory. */
ra_archive_item *ra_archive_add(ra_archive *ar);
/* A line in ar->warnings; false when out of memory. */
bool ra_archive_warn(ra_archive *ar, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* LEGO Island .SI (lego_si.c) */
bool ra_si_detect(const uint8_t *data, size_t size);
ra_status ra_si_open(ra_archive *ar, const ra_options *opt, ra_error *err);
ra_status ra_si_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);

/* Metroid Prime .pak (mp_pak.c) */
bool ra_pak_detect(const uint8_t *data, size_t size);
ra_status ra_pak_open(ra_archive *ar, const ra_options *opt, ra_error *err);
ra_status ra_pak_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
ra_status ra_pak_skeleton(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);

#endif
