/* state.h — process-wide recorder state (state.c) shared by recorder.c,
 * writer.c, lifecycle.c, the samplers and CUPTI (not for wrappers), and
 * gl_warn. */
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

enum gl_writer_state {
    GL_WRITER_NONE = 0,    /* not started (yet, or again in a fork child) */
    GL_WRITER_RUNNING = 1, /* starting or running */
    GL_WRITER_DONE = 2,    /* finished, or could not start */
};

/* A question about what was recorded (ask.c) on its way to the writer. */
enum gl_ask_state {
    GL_ASK_IDLE = 0,
    GL_ASK_ASKED = 1,    /* waiting for the writer */
    GL_ASK_TAKEN = 2,    /* the writer is answering it */
    GL_ASK_ANSWERED = 3, /* the answer is in the question */
};
struct gl_question;

struct gl_state {
    struct gl_config cfg;
    struct gl_queue queue;
    _Atomic int phase;
    _Atomic int writer_state;   /* enum gl_writer_state */
    _Atomic int stop;           /* writer: finish and close */
    _Atomic uint64_t flush_req, flush_done;
    _Atomic int checkpoint_req; /* with a flush: also checkpoint the WAL (before an exec) */
    pthread_mutex_t ask_lock;     /* one question at a time (taken by askers only) */
    _Atomic int ask_state;        /* enum gl_ask_state */
    struct gl_question *question; /* while asked or taken */
    _Atomic uint64_t truncated; /* events whose stack was cut at the depth limit */
    _Atomic uint64_t late;      /* events after shutdown, not recorded */
    _Atomic uint64_t congested; /* a full-queue wait timed out: 1 + the slots consumed then (0: none) */
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

/* One line "gpuledger: ..." on the stderr the process started with (or
 * nowhere), errno untouched. */
void gl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* writer.c */
int gl_writer_start(void);

#endif
