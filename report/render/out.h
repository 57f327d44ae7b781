/* out.h — small output helpers shared by the verbs: a stack as a list of
 * frames or a chain on one line, time and size formatting, opening -o FILE,
 * parsing sizes.
 * Escaping text for each format is escape.h's job. */
#ifndef GL_OUT_H
#define GL_OUT_H

#include <stdio.h>

#include "escape.h"
#include "frames.h"
#include "units.h"

/* The frames of a stack, one a line after `indent`: allocator plumbing
 * folded, a few native frames, then the Python frames. */
void gl_print_frame_list(FILE *f, const struct gl_stack *st, const char *indent);
/* "a <- b <- c" with at most `max` frames, allocator plumbing skipped; and
 * frame `must` too when it is not among them ("... <- m <- ..."; -1: none),
 * so rows of a table that share their first frames still read apart
 * (gl_stacks_distinct). */
void gl_print_chain(FILE *f, const struct gl_stack *st, int max, int must);
/* Why a recording is unfinished (gl_run.unfinished), for every verb to say
 * it the same way: "the recording did not finish (killed, ...)". */
#define GL_UNFINISHED_TEXT "the recording did not finish (killed, disk full, or still running)"
/* What the bytes live at the end of r are: "never freed", or for an
 * unfinished recording "live when the recording stopped". */
const char *gl_unfreed_words(const struct gl_run *r);
/* One line on f naming the rows of r that were skipped because they break
 * an invariant (nothing when there are none):
 * "gpuledger: FILE: 3 rows skipped, breaking an invariant: REASON: N (first
 * seq S); ..." */
void gl_print_skipped(FILE *f, const struct gl_run *r);
/* Open -o FILE (or stdout for NULL / "-"); prints an error and returns NULL.
 * A regular file (or a new one) is written to a temporary beside it, which
 * becomes it only when gl_close_out finds every write done; anything else
 * that exists (/dev/null, a pipe) is written as it is. */
FILE *gl_open_out(const char *path);
/* Finish what gl_open_out opened (discard: drop it, the file left as it
 * was): 0, or -1 after one line on stderr when a write or the close failed
 * (ENOSPC, EFBIG, EIO; then no partial file is left). */
int gl_close_out(FILE *f, int discard);
/* Flush stdout: 0, or -1 after one line on stderr (said once) when a
 * write to it failed (`> /dev/full`). */
int gl_check_stdout(void);
/* Parse "123", "64K", "1.5M", "2G", "1TiB", "2 MiB" (binary units) into bytes, below
 * 2^63; 0 on success, -1 for anything else (nan, inf, 1e3, -1, 0x10). Defined
 * in interpose/config.c: one parser for the report's options and
 * GPULEDGER_BUDGET (config.h). */
int gl_parse_size(const char *s, unsigned long long *out);

#endif
