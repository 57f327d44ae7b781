/* grow.h — the one "make room for one more element" helper of the model's
 * loaders: doubles *cap (from first) until n + 1 elements of size sz fit. */
#ifndef GL_REPORT_GROW_H
#define GL_REPORT_GROW_H

#include <stdlib.h>

/* Grow *v (of *cap elements of size sz) to hold n + 1; 0, or -1 when out of
 * memory (then *v and *cap are unchanged). */
static inline int gl_grow(void **v, size_t *cap, size_t n, size_t sz, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    void *nv = realloc(*v, nc * sz);
    if (!nv)
        return -1;
    *v = nv;
    *cap = nc;
    return 0;
}

#endif
