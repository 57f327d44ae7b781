/* state.h — process-wide recorder state shared by recorder.c, writer.c and
 * lifecycle.c (not for wrappers). */
#ifndef GL_STATE_H
#define GL_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "queue.h"

enum gl_phase {
    GL_PHASE_OFF = 0,       /* not initialised yet */
    GL_PHASE_RECORDING = 1, /* events are queued */
    GL_PHASE_DISABLED = 2,  /* turned off (config, or a failure): pass-through */
    GL_PHASE_STOPPED = 3,   /* shut down at exit */
};

struct gl_state {
    struct gl_config cfg;
    struct gl_queue queue;
    _Atomic int phase;
    _Atomic int writer_state;   /* 0 none, 1 starting/running, 2 finished */
    _Atomic int stop;           /* writer: finish and close */
    _Atomic uint64_t flush_req, flush_done;
    _Atomic uint64_t truncated; /* events whose stack was cut at the depth limit */
    _Atomic uint64_t late;      /* events after shutdown, not recorded */
    _Atomic int congested;      /* the last full-queue wait timed out */
    _Atomic int paused;         /* gpuledger_set_recording(0): calls pass through unrecorded */
    _Atomic int exit_code;      /* -1 unknown */
    _Atomic int exit_signal;    /* 0 none */
    pthread_t writer;
    /* Held by the writer while it is inside SQLite or the loader, and by a
     * thread calling fork (atfork prepare): a fork child must never inherit
     * those half-taken. Never taken on the hot path. */
    pthread_mutex_t fork_lock;
    _Atomic int fork_pending;   /* a fork waits for fork_lock: the writer steps aside */
    uint64_t start_ns;
    int pid;                    /* getpid() at start-up / after fork */
    char db_path[4096];
};

extern struct gl_state gl_st;

/* writer.c */
int gl_writer_start(void);

#endif
