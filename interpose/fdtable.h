/* fdtable.h — the writer thread's own descriptor table (see fdtable.c). */
#ifndef GL_FDTABLE_H
#define GL_FDTABLE_H

#include <stddef.h>

/* Called by the writer thread before it opens anything: from here on the
 * thread has a descriptor table of its own, empty but for placeholders at
 * 0, 1 and 2. Returns 0, or -1 with the reason in why (then nothing
 * changed and the thread must not open files the program could reach). */
int gl_fd_leave_shared(char *why, size_t whysz);

/* 1 on a thread that left the shared table (its fd 2 is not stderr). */
int gl_fd_private(void);

#endif
