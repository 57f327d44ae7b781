/* run_watch.h — what `gpuledger run` learns while its command runs, and
 * the closing lines it prints (see run_watch.c). */
#ifndef GL_RUN_WATCH_H
#define GL_RUN_WATCH_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct gl_fact {
    char kind; /* GL_LINK_DB, GL_LINK_FAIL (launcher_link.h) */
    pid_t pid; /* the process that said it (from the kernel) */
    char *text;
};

struct gl_watch {
    int sock;       /* abstract datagram socket, -1 if none could be made */
    char name[80];  /* its GPULEDGER_MANIFEST value, "@gpuledger-run-…" */
    struct gl_fact *facts;
    size_t nfacts, cap;
};

/* Bind the socket (close-on-exec: the command does not inherit it). 0, or
 * -1 (then the closing lines cannot name databases). */
int gl_watch_open(struct gl_watch *w);
/* Take every fact waiting on the socket. */
void gl_watch_drain(struct gl_watch *w);
void gl_watch_close(struct gl_watch *w);

/* What the run ended with, for the closing lines. */
struct gl_run_end {
    const char *cmd;  /* argv[0] of the command */
    int disabled;     /* GPULEDGER_DISABLE was set */
    const char *pattern;  /* GPULEDGER_OUTPUT, or the default */
    /* the line said for one database (the verb's: `summary`'s line) */
    int (*summary)(FILE *f, const char *path);
};
/* After the command's own process has ended: one line per database (and
 * whether its process still runs), per process that could not record, and
 * what else is true: background processes still running, recording
 * disabled, recording impossible here, or no CUDA memory call seen. */
void gl_watch_report(struct gl_watch *w, const struct gl_run_end *end);

#endif
