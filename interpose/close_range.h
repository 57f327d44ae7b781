/* close_range.h — close_range(2) where the C library's headers predate it
 * (Linux 5.9): its system call number and the flag that gives the caller
 * a descriptor table of its own. For fdtable.c (the writer thread's
 * table), the launcher's check that the kernel allows it (report/run/
 * run_watch.c) and the test program that refuses it (tests/progs/noshare.c). */
#ifndef GL_CLOSE_RANGE_H
#define GL_CLOSE_RANGE_H

#include <sys/syscall.h>

#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

#endif
