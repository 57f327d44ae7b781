/* holes_allocator.c — hole density of PyTorch's caching allocator (see
 * analysis.h, gl_holes_allocator): its free blocks inside its segments are
 * its holes. The recorder samples them as its replay of the allocator goes
 * (allocator_samples: at most every 20 ms per device, at every
 * out-of-memory and at the end); the fragmentation figures and the worst moment come from
 * the same arithmetic as every other hole report (freemap.h). */
#include <stdlib.h>

#include "analysis.h"
#include "freemap.h"
#include "model_blocks.h"

static struct gl_hole_stat stat_of(const struct gl_alloc_sample *s)
{
    struct gl_hole_stat h = {.seq = s->seq,
                             .ts_ns = s->ts_ns,
                             .reserved = s->reserved,
                             .live = s->active, /* blocks in use, freed ones still waiting for a stream too */
                             .free = s->cached_free,
                             .largest_free = s->largest_hole,
                             .holes = s->holes,
                             /* block bytes beyond the request: rounding, and remainders kept unsplit */
                             .unused_bytes = s->active > s->requested ? (int64_t)(s->active - s->requested) : 0};
    struct gl_free_stats fs = {.free = h.free, .largest_free = h.largest_free};
    gl_free_ratios(&fs);
    h.external_fragmentation = fs.external_fragmentation;
    h.largest_free_ratio = fs.largest_free_ratio;
    if (h.live && h.unused_bytes > 0) /* as heaps count it */
        h.internal_fragmentation = (double)h.unused_bytes / (double)h.live;
    return h;
}

static int worse(const struct gl_alloc_sample *a, const struct gl_alloc_sample *b)
{
    struct gl_free_stats x = {.free = a->cached_free, .largest_free = a->largest_hole, .holes = a->holes};
    struct gl_free_stats y = {.free = b->cached_free, .largest_free = b->largest_hole, .holes = b->holes};
    return gl_free_worse(&x, &y);
}

int gl_holes_allocator(struct gl_run *r, int device, struct gl_pool_holes *ph)
{
    struct gl_alloc_sample *s;
    size_t n, worst = 0;
    if (gl_run_allocator_samples(r, device, &s, &n))
        return -1;
    if (!n) {
        free(s);
        return 0;
    }
    for (size_t i = 1; i < n; i++)
        if (worse(&s[i], &s[worst]))
            worst = i;
    /* the series: GL_HOLE_SAMPLES + 1 samples evenly by index (all of them
     * when there are fewer), the worst one among them */
    size_t max = GL_HOLE_SAMPLES + 1 < n ? GL_HOLE_SAMPLES + 1 : n;
    ph->series = calloc(max + 1, sizeof *ph->series);
    if (!ph->series) {
        free(s);
        return -1;
    }
    size_t prev = n;
    for (size_t k = 0; k < max; k++) {
        size_t i = max == n ? k : k * (n - 1) / (max - 1);
        if (prev < worst && worst < i) { /* the worst fell between two points */
            ph->worst_index = ph->nseries;
            ph->series[ph->nseries++] = stat_of(&s[worst]);
        }
        if (i == worst)
            ph->worst_index = ph->nseries;
        ph->series[ph->nseries++] = stat_of(&s[i]);
        prev = i;
    }
    ph->what = GL_HOLES_ALLOCATOR;
    ph->pool = 0;
    ph->device = device;
    ph->regions = n;
    ph->worst = stat_of(&s[worst]);
    ph->end = stat_of(&s[n - 1]);
    free(s);
    return 1;
}
