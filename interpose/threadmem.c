/* threadmem.c — the free lists of per-thread tables (threadmem.h). A
 * table is mapped once and then passes from thread to thread: a program
 * that makes many short threads pays no mmap/munmap per thread, and the
 * memory is bounded by the most threads alive at once. */
#include "threadmem.h"

#include <string.h>
#include <sys/mman.h>

void *gl_threadmem_get(struct gl_threadmem *m, void (*on_exit)(void *))
{
    /* the key is made by the first caller (each pool has one destructor) */
    pthread_mutex_lock(&m->lock);
    if (!m->key_ok && pthread_key_create(&m->key, on_exit) == 0)
        m->key_ok = 1;
    void *t = m->free;
    if (t)
        m->free = *(void **)t;
    int key_ok = m->key_ok;
    pthread_mutex_unlock(&m->lock);
    if (!key_ok) {
        if (t)
            gl_threadmem_put(m, t);
        return NULL;
    }
    if (t) {
        memset(t, 0, m->size);
    } else {
        t = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t == MAP_FAILED)
            return NULL;
    }
    if (pthread_setspecific(m->key, t) != 0) {
        gl_threadmem_put(m, t);
        return NULL;
    }
    return t;
}

void gl_threadmem_put(struct gl_threadmem *m, void *table)
{
    pthread_mutex_lock(&m->lock);
    *(void **)table = m->free;
    m->free = table;
    pthread_mutex_unlock(&m->lock);
}
