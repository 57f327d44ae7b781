/* outpath.h — turning the GPULEDGER_OUTPUT pattern into a file name, and
 * creating that file without ever destroying an existing one. */
#ifndef GL_OUTPATH_H
#define GL_OUTPATH_H

#include <stddef.h>
#include <sys/types.h>

/* Expand %p (pid), %h (host name), %r (rank: RANK, else LOCAL_RANK, else 0),
 * %% (a percent sign). Other %x sequences are kept as written.
 * Returns 0, or -1 if the result does not fit in outsz. */
int gl_expand_pattern(const char *pattern, pid_t pid, const char *host, const char *rank, char *out,
                      size_t outsz);

/* If the expanded `path` names a directory (one that exists, or any path
 * ending in '/'), the database goes inside it: append "gpuledger-PID.db".
 * Returns 0, or -1 (path unchanged) if that does not fit in sz. */
int gl_in_directory(char *path, size_t sz, pid_t pid);

/* Rank from the environment, as %r expands it. */
const char *gl_rank_from_env(void);

/* Create `path` exclusively. If it exists already, try "stem.1.db",
 * "stem.2.db", … (up to 999). On success the name used is in `chosen` and the
 * (empty, closed) file exists, mode 0600 less the umask (it will hold the
 * command line, host name and paths; SQLite gives -wal and -shm the same
 * mode); returns 0. Returns -1 with errno set on
 * failure. */
int gl_create_exclusive(const char *path, char *chosen, size_t chosensz);

#endif
