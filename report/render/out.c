/* out.c — see out.h. */
#include "out.h"
#include "stack_text.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void frame_line(FILE *f, const char *indent, int i, const char *name)
{
    fprintf(f, "%s%2d  ", indent, i);
    gl_text_str(f, name);
    fputc('\n', f);
}

void gl_print_frame_list(FILE *f, const struct gl_stack *st, const char *indent)
{
    char buf[1024];
    if (!st->n) {
        fprintf(f, "%s(no stack recorded)\n", indent);
        return;
    }
    /* up to 8 native frames from the first interesting one, then (when
     * there are Python frames further out) up to 16 Python-led frames */
    int k = gl_first_interesting(st), py = gl_first_python(st, k), shown = 0;
    if (k)
        fprintf(f, "%s    [%d allocator frame%s]\n", indent, k, gl_s((uint64_t)k));
    int i = k;
    for (; i < st->n && shown < 8 && (py < 0 || i < py); i++, shown++)
        frame_line(f, indent, i, gl_frame_name(&st->f[i], buf, sizeof buf));
    if (py > i) {
        fprintf(f, "%s    [%d native frame%s]\n", indent, py - i, gl_s((uint64_t)(py - i)));
        i = py;
    }
    int limit = i + (py >= 0 ? 16 : 0);
    for (; i < st->n && i < limit; i++)
        frame_line(f, indent, i, gl_frame_name(&st->f[i], buf, sizeof buf));
    if (i < st->n)
        fprintf(f, "%s    [%d more frame%s]\n", indent, st->n - i, gl_s((uint64_t)(st->n - i)));
}

void gl_print_chain(FILE *f, const struct gl_stack *st, int max, int must)
{
    /* the op, the innermost user frame and the outermost (stack_text.h),
     * and `must`: the frame that tells this row from the others */
    (void)max;
    char buf[4096];
    gl_text_str(f, gl_stack_chain(st, must, buf, sizeof buf));
}

const char *gl_s(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void gl_print_skipped(FILE *f, const struct gl_run *r)
{
    if (!r->nskipped)
        return;
    fputs("gpuledger: ", f);
    gl_text_str(f, r->path);
    fprintf(f, ": %" PRId64 " row%s skipped, breaking an invariant:", r->nskipped, gl_s((uint64_t)r->nskipped));
    const char *sep = " ";
    for (int k = 0; k < GL_SKIP_COUNT; k++) {
        if (!r->skipped[k])
            continue;
        fprintf(f, "%s%s: %" PRId64, sep, gl_skip_reason((enum gl_skip)k), r->skipped[k]);
        if (k != GL_SKIP_RUN_END)
            fprintf(f, " (first seq %" PRId64 ")", r->skipped_first_seq[k]);
        sep = "; ";
    }
    fputc('\n', f);
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

FILE *gl_open_out(const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "gpuledger: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

void gl_close_out(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
    else
        fflush(stdout);
}

int gl_parse_size(const char *s, unsigned long long *out)
{
    /* digits, an optional fraction, an optional binary unit: no sign,
     * exponent, hex, nan or inf; below 2^63, taken exactly */
    const char *p = s;
    unsigned long long whole = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (whole > (ULLONG_MAX - 9) / 10)
            return -1;
        whole = whole * 10 + (unsigned)(*p - '0');
    }
    double frac = 0, scale = 1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (scale < 1e15) { /* further digits are below a byte */
                frac = frac * 10 + (*p - '0');
                scale *= 10;
            }
    if (!digits)
        return -1;
    static const char units[] = "KMGT";
    int c = *p & ~0x20; /* upper case */
    const char *u = c ? strchr(units, c) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if (u)
        p++;
    if (*p == 'i' || *p == 'B')
        p++;
    if (*p == 'B')
        p++;
    if (*p || whole >= (1ULL << 63) >> shift)
        return -1;
    unsigned long long v = (whole << shift) + (unsigned long long)(frac / scale * (double)(1ULL << shift) + 0.5);
    if (v >= 1ULL << 63)
        return -1;
    *out = v;
    return 0;
}

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
