/* threadmem.h — per-thread tables (the unwinder's and the Python code
 * memos) kept for the next thread when a thread ends, instead of an mmap
 * at each thread's first event and an munmap at its exit (threadmem.c). */
#ifndef GL_THREADMEM_H
#define GL_THREADMEM_H

#include <pthread.h>
#include <stddef.h>

struct gl_threadmem {
    size_t size;          /* bytes of one table */
    pthread_mutex_t lock; /* taken at a thread's first event and at its exit only */
    void *free;           /* tables of threads that ended: a list through their first word */
    pthread_key_t key;    /* gives the table back at the thread's exit */
    int key_ok;
};

#define GL_THREADMEM_INIT(bytes)                                                                                  \
    {.size = (bytes), .lock = PTHREAD_MUTEX_INITIALIZER}

/* A zeroed table for this thread, given back when it ends (via a
 * pthread key whose destructor is `on_exit`, which must call
 * gl_threadmem_put), or NULL. */
void *gl_threadmem_get(struct gl_threadmem *m, void (*on_exit)(void *));
void gl_threadmem_put(struct gl_threadmem *m, void *table);

#endif
