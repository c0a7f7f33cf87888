/* The archive readers' shared helpers (ra_archive_internal.h): items and
 * warnings of an ra_archive, in its arena.  Every archive kind's reader uses
 * these; the listing API (importers/archive/archive.c) walks the kinds. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "retroanim/ra_archive_internal.h"

ra_archive_item *ra_archive_add(ra_archive *ar)
{
    if (ar->count == ar->item_cap) {
        size_t cap = ar->item_cap ? 2 * ar->item_cap : 8;
        ra_archive_item *g = ra_arena_grow(ar->arena, ar->items, ar->count, cap, sizeof *g);
        if (!g) return NULL;
        ar->items = g;
        ar->item_cap = cap;
    }
    ra_archive_item *it = &ar->items[ar->count++];
    memset(it, 0, sizeof *it);
    it->group = "";
    return it;
}

bool ra_archive_warn(ra_archive *ar, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (ar->warning_count == ar->warning_cap) { /* doubling: one more each time copied them all */
        size_t cap = ar->warning_cap ? 2 * ar->warning_cap : 8;
        char **g = ra_arena_grow(ar->arena, ar->warnings, ar->warning_count, cap, sizeof *g);
        if (!g) return false;
        ar->warnings = g;
        ar->warning_cap = cap;
    }
    char **g = ar->warnings;
    return (g[ar->warning_count] = ra_arena_strndup(ar->arena, buf, strlen(buf))) != NULL && ++ar->warning_count;
}
