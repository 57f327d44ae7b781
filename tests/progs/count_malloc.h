/* count_malloc.h — included once by a test program (nomalloc.c, pyembed.c):
 * the program's own malloc/calloc/realloc/free (an executable's definitions
 * come before every shared library's, LD_PRELOAD included), counting the
 * calls made on a thread while its `counting` flag is set. Under ASan the
 * sanitizer owns malloc: nothing is defined and the count stays 0. */
#ifndef COUNT_MALLOC_H
#define COUNT_MALLOC_H

#include <stddef.h>

static __thread int counting;
static __thread long count;

#ifndef __SANITIZE_ADDRESS__
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

void *malloc(size_t n)
{
    count += counting;
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    count += counting;
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    count += counting;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    count += counting && p;
    __libc_free(p);
}
#endif

#endif
