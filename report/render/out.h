/* out.h — small output helpers shared by the verbs: a stack as a list of
 * frames or a chain on one line, time and size formatting, opening -o FILE,
 * parsing sizes.
 * Escaping text for each format is escape.h's job. */
#ifndef GL_OUT_H
#define GL_OUT_H

#include <stdio.h>

#include "escape.h"
#include "frames.h"

/* The frames of a stack, one a line after `indent`: allocator plumbing
 * folded, a few native frames, then the Python frames. */
void gl_print_frame_list(FILE *f, const struct gl_stack *st, const char *indent);
/* "a <- b <- c" with at most `max` frames, allocator plumbing skipped; and
 * frame `must` too when it is not among them ("... <- m <- ..."; -1: none),
 * so rows of a table that share their first frames still read apart
 * (gl_stacks_distinct). */
void gl_print_chain(FILE *f, const struct gl_stack *st, int max, int must);
/* "1.50 GiB" style, into buf. */
const char *gl_fmt_bytes(uint64_t bytes, char *buf, size_t sz);
/* "s" for a count other than 1 ("1 hole", "3 holes"), "" for 1. */
const char *gl_s(uint64_t n);
/* One line on f naming the rows of r that were skipped because they break
 * an invariant (nothing when there are none):
 * "gpuledger: FILE: 3 rows skipped, breaking an invariant: REASON: N (first
 * seq S); ..." */
void gl_print_skipped(FILE *f, const struct gl_run *r);
/* Seconds since the start of the run: "+1.234s", or "+0.012345s" (µs)
 * when the whole run is shorter than a second. */
const char *gl_fmt_rel(const struct gl_run *r, int64_t ns, char *buf, size_t sz);
/* The run's length the same way, "1.234 s" / "0.012345 s". */
const char *gl_fmt_span(const struct gl_run *r, char *buf, size_t sz);
/* Open -o FILE (or stdout for NULL / "-"); prints an error and returns NULL. */
FILE *gl_open_out(const char *path);
void gl_close_out(FILE *f);
/* Parse "123", "64K", "1.5M", "2G", "1TiB" (binary units) into bytes, below
 * 2^63; 0 on success, -1 for anything else (nan, inf, 1e3, -1, 0x10). */
int gl_parse_size(const char *s, unsigned long long *out);

#endif
