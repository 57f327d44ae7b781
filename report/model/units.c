/* units.c — values as a person reads them, into a caller's buffer: bytes
 * ("1.50 GiB"), plurals, times since the run's start. Pure formatting,
 * no output: analysis/ (the verdicts, the diagnosis) and render/ share it. */
#include "units.h"

#include <stdio.h>

const char *gl_fmt_bytes(uint64_t bytes, char *buf, size_t sz)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, sz, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, sz, "%.2f %s", v, unit[u]);
    return buf;
}

const char *gl_s(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* digits after the point: µs when the whole run is shorter than a second */
static int digits(const struct gl_run *r)
{
    return gl_ns_since(r->last_ns, r->first_ns) < 1000000000 ? 6 : 3;
}

const char *gl_fmt_rel(const struct gl_run *r, int64_t ns, char *buf, size_t sz)
{
    snprintf(buf, sz, "+%.*fs", digits(r), (double)gl_ns_since(ns, r->first_ns) / 1e9);
    return buf;
}

const char *gl_fmt_span(const struct gl_run *r, char *buf, size_t sz)
{
    snprintf(buf, sz, "%.*f s", digits(r), (double)(r->last_ns - r->first_ns) / 1e9);
    return buf;
}
