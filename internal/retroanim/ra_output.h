/* retroanim — files written whole or not at all.
 *
 * ra_outfile_open creates a temporary file beside the target (".NAME.retroanim-tmp-XXXXXX"
 * in the target's folder); every write is checked; ra_outfile_commit flushes it
 * to disk and renames it over the target, ra_outfile_abort removes it.  The
 * target is never touched before the commit, so a failure (full disk, a
 * killed process) leaves it as it was. */
#ifndef RETROANIM_RA_OUTPUT_H
#define RETROANIM_RA_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ra_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ra_outfile {
    FILE *fp;
    char *tmp;  /* the temporary file's path (ra_malloc'd) */
    char *path; /* the target's path (ra_malloc'd) */
    int error;  /* errno of the first failed write, 0 if none */
    int slot;   /* the temporary file's slot for ra_outfile_remove_all_temporary, or -1 */
} ra_outfile;

ra_status ra_outfile_open(ra_outfile *o, const char *path, ra_error *err);
bool ra_outfile_write(ra_outfile *o, const void *data, size_t n);
/* Flushes, syncs and closes the temporary file, then renames it over the
 * target.  On failure the temporary file is removed and the target is left
 * as it was.  Either way o is released. */
ra_status ra_outfile_commit(ra_outfile *o, ra_error *err);
void ra_outfile_abort(ra_outfile *o);
/* Overwrites n bytes at offset (already written) and goes back to the end, for
 * formats whose headers hold sizes known only later (FBX).  Fails like a write
 * (o->error) when the output cannot seek. */
bool ra_outfile_patch(ra_outfile *o, uint64_t offset, const void *data, size_t n);
/* Removes every temporary file still open (async-signal-safe: for a SIGINT or
 * SIGTERM handler, which then exits). */
void ra_outfile_remove_all_temporary(void);

#ifdef __cplusplus
}
#endif
#endif
