/* moment.c — see moment.h. */
#include "moment.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "budget_notes.h"
#include "units.h"
#include "sweep.h"

int gl_parse_duration(const char *s, int64_t *ns)
{
    static const struct {
        const char *unit;
        double mul;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    if (*s == '+')
        s++;
    if (!(*s >= '0' && *s <= '9') && *s != '.')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            double x = v * units[i].mul;
            if (x > 9.2e18)
                return -1;
            *ns = (int64_t)(x + 0.5);
            return 0;
        }
    return -1;
}

/* "12" -> 12; anything else -1 */
static const char *plural(long n)
{
    return n == 1 ? "" : "s";
}

static long whole(const char *s)
{
    if (!*s || strlen(s) > 12)
        return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    return atol(s);
}

static const char *ordinal(long n, char *buf, size_t sz)
{
    const char *suf = "th";
    if (n % 100 < 11 || n % 100 > 13)
        suf = n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
    snprintf(buf, sz, "%ld%s", n, suf);
    return buf;
}

static int at_event(struct gl_run *r, int64_t seq, struct gl_moment *m, char *err, size_t errsz)
{
    int64_t max = gl_event_max(r);
    if (seq < 1 || seq > max || gl_event_ts(r, seq, &m->ts_ns)) {
        snprintf(err, errsz, "%s: there is no event #%lld (events are numbered 1 to %lld)", r->path, (long long)seq,
                 (long long)max);
        return -1;
    }
    m->seq = seq;
    return 0;
}

static int at_oom(struct gl_run *r, long nth, struct gl_moment *m, char *err, size_t errsz)
{
    long k = 0;
    for (size_t i = 0; i < r->nfails; i++) {
        if (r->fails[i].op != GL_OP_OOM || gl_fail_absorbed(r, i) || ++k != nth)
            continue;
        m->seq = r->fails[i].seq;
        m->ts_ns = r->fails[i].ts_ns;
        char o[32];
        snprintf(m->desc, sizeof m->desc, "just before the %s out-of-memory failure", ordinal(nth, o, sizeof o));
        return 0;
    }
    if (k == 0)
        snprintf(err, errsz, "%s: the run has no out-of-memory failure", r->path);
    else
        snprintf(err, errsz, "%s: the run has %ld out-of-memory failure%s, not %ld", r->path, k, plural(k),
                 nth);
    return -1;
}

/* The first event inside (push, pop) where live device memory (all
 * devices) is highest; the push itself when nothing changed inside. */
static int range_peak(const struct gl_run *r, const struct gl_annot *x, struct gl_moment *m)
{
    struct gl_sweep sw;
    if (gl_sweep_build(r, &sw, gl_sweep_counted))
        return -1;
    int64_t live = 0, best = -1, end = x->end_seq ? x->end_seq : INT64_MAX;
    m->seq = x->seq;
    m->ts_ns = x->ts_ns;
    for (size_t i = 0; i < sw.n; i++) {
        const struct gl_alloc *a = gl_sweep_alloc(r, sw.ev[i]);
        int64_t seq = gl_sweep_seq(r, sw.ev[i]);
        live += gl_sweep_is_free(sw.ev[i]) ? -(int64_t)a->size : (int64_t)a->size;
        if (seq >= end)
            break;
        if (seq > x->seq && live > best) {
            best = live;
            m->seq = seq;
            m->ts_ns = gl_sweep_ts(r, sw.ev[i]);
        }
    }
    gl_sweep_free(&sw);
    return 0;
}

static int at_label(struct gl_run *r, const struct gl_annots *an, const char *label, long nth, struct gl_moment *m,
                    char *err, size_t errsz)
{
    long k = 0;
    for (size_t i = 0; i < an->n; i++) {
        const struct gl_annot *x = &an->v[i];
        if (strcmp(x->label, label) || ++k != nth)
            continue;
        char o[32], occ[80] = "";
        if (nth > 1)
            snprintf(occ, sizeof occ, " (its %s occurrence)", ordinal(nth, o, sizeof o));
        if (x->op == GL_OP_MARK) {
            m->seq = x->seq;
            m->ts_ns = x->ts_ns;
            snprintf(m->desc, sizeof m->desc, "mark '%.120s'%s", label, occ);
            return 0;
        }
        if (range_peak(r, x, m)) {
            snprintf(err, errsz, "%s: out of memory", r->path);
            return -1;
        }
        snprintf(m->desc, sizeof m->desc, "the highest point inside range '%.120s'%s", label, occ);
        return 0;
    }
    if (k) {
        snprintf(err, errsz, "%s: only %ld mark%s or range%s labelled '%.200s', not %ld", r->path, k, plural(k),
                 plural(k), label, nth);
        return -1;
    }
    int w = snprintf(err, errsz, "%s: no mark or range labelled '%.200s'", r->path, label);
    /* name a few labels that do exist, so a typo is easy to see */
    size_t shown = 0;
    for (size_t i = 0; i < an->n && shown < 4 && w > 0 && (size_t)w < errsz; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = !strcmp(an->v[j].label, an->v[i].label);
        if (dup)
            continue;
        int n = snprintf(err + w, errsz - (size_t)w, "%s'%.40s'", shown ? ", " : " (labels in this run: ",
                         an->v[i].label);
        if (n < 0)
            break;
        w += n;
        shown++;
    }
    if (shown && w > 0 && (size_t)w + 2 < errsz)
        snprintf(err + w, errsz - (size_t)w, "%s)", shown == 4 ? ", …" : "");
    else if (!an->n && w > 0 && (size_t)w < errsz)
        snprintf(err + w, errsz - (size_t)w, " (the run has no marks or ranges)");
    return -1;
}

int gl_moment_resolve(struct gl_run *r, const struct gl_annots *an, const char *when, struct gl_moment *m,
                      char *err, size_t errsz)
{
    memset(m, 0, sizeof *m);
    snprintf(m->when, sizeof m->when, "%s", when ? when : "");
    int64_t ns;
    if (!when || !*when) {
        snprintf(err, errsz, "--at wants a moment: #N, a time like 3.2s, oom, or a mark or range label");
        return -1;
    }
    if (!strncmp(when, "label:", 6))
        return at_label(r, an, when + 6, 1, m, err, errsz);
    if (when[0] == '#') {
        long n = whole(when + 1);
        if (n < 0) {
            snprintf(err, errsz, "--at '%.200s': want #N with N an event number", when);
            return -1;
        }
        return at_event(r, n, m, err, errsz);
    }
    if (!strcmp(when, "oom"))
        return at_oom(r, 1, m, err, errsz);
    if (!strncmp(when, "oom@", 4)) {
        long n = whole(when + 4);
        if (n < 1) {
            snprintf(err, errsz, "--at '%.200s': want oom@N with N = 1, 2, …", when);
            return -1;
        }
        return at_oom(r, n, m, err, errsz);
    }
    if (!gl_parse_duration(when, &ns)) {
        m->asked_ns = r->first_ns + ns;
        m->seq = gl_event_before(r, m->asked_ns);
        if (!m->seq || gl_event_ts(r, m->seq, &m->ts_ns))
            m->ts_ns = r->first_ns;
        snprintf(m->desc, sizeof m->desc, m->seq ? "the last event at or before %.100s" : "before any event (%.100s)",
                 when);
        return 0;
    }
    /* LABEL or LABEL@N */
    char label[512];
    snprintf(label, sizeof label, "%s", when);
    long nth = 1;
    char *at = strrchr(label, '@');
    if (at && whole(at + 1) >= 1) {
        nth = whole(at + 1);
        *at = 0;
    }
    return at_label(r, an, label, nth, m, err, errsz);
}

int gl_moment_lookup(const char *when, struct gl_load *what)
{
    struct gl_lookup lk = {0};
    int64_t ns;
    if (!when || !*when || !strncmp(when, "label:", 6) || !strcmp(when, "oom") || !strncmp(when, "oom@", 4))
        return 0;
    if (when[0] == '#') {
        long n = whole(when + 1);
        if (n < 0)
            return 0;
        lk.kind = GL_LOOKUP_EVENT;
        lk.arg = n;
    } else if (!gl_parse_duration(when, &ns)) {
        lk.kind = GL_LOOKUP_BEFORE;
        lk.arg = ns;
    } else {
        return 0;
    }
    if (what->nlookups == GL_MAX_LOOKUPS)
        return -1;
    what->lookups[what->nlookups++] = lk;
    return 0;
}

int gl_moment_at(struct gl_run *r, const char *when, struct gl_moment *m, char *err, size_t errsz)
{
    struct gl_annots an;
    if (gl_annots_load(r, &an, err, errsz))
        return -1;
    int rc = gl_moment_resolve(r, &an, when, m, err, errsz);
    gl_annots_free(&an);
    if (rc && when && when[0] == '#' && whole(when + 1) > 0) { /* no such event: one an aggregated step folded? */
        struct gl_moment folded = *m;
        folded.seq = whole(when + 1);
        (void)gl_budget_moment_check(r, &folded, err, errsz); /* says so in err, else err stays */
        return -1;
    }
    if (!rc)
        rc = gl_budget_moment_check(r, m, err, errsz); /* inside an aggregated step: refused */
    return rc;
}
