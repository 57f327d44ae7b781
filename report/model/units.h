/* units.h — values as a person reads them, into a caller's buffer
 * (units.c): shared by analysis/ and render/ (out.h includes it). */
#ifndef GL_UNITS_H
#define GL_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* "1.50 GiB" style, into buf. */
const char *gl_fmt_bytes(uint64_t bytes, char *buf, size_t sz);
/* "s" for a count other than 1 ("1 hole", "3 holes"), "" for 1. */
const char *gl_s(uint64_t n);
/* Seconds since the start of the run: "+1.234s", or "+0.012345s" (µs)
 * when the whole run is shorter than a second. */
const char *gl_fmt_rel(const struct gl_run *r, int64_t ns, char *buf, size_t sz);
/* The run's length the same way, "1.234 s" / "0.012345 s". */
const char *gl_fmt_span(const struct gl_run *r, char *buf, size_t sz);

#endif
