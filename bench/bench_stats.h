/* bench_stats.h — what the benchmark programs share: the median of a
 * series, and the `--deep D1,D2,...` list of stack depths. Header-only:
 * each bench is one translation unit. */
#ifndef GL_BENCH_STATS_H
#define GL_BENCH_STATS_H

#include <stdlib.h>
#include <string.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1] (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "0,20,60" into depths[] (at most max); returns how many. */
static inline int bench_parse_depths(char *list, int *depths, int max)
{
    int n = 0;
    for (char *t = strtok(list, ","); t && n < max; t = strtok(NULL, ","))
        depths[n++] = atoi(t);
    return n;
}

#endif
