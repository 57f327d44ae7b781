/* ask.c — gpuledger_checkpoint, _usage, _live_stacks, _stack_text
 * (gpuledger.h): questions about what this process has recorded. Each is
 * handed to the writer thread (gl_st.question), which answers it from the
 * store once everything queued before it is written (store/answers.c);
 * the asking thread waits, up to 10 s. One question at a time; nothing
 * here runs on a wrapped call's path. */
#include <time.h>

#include "answers.h"
#include "gpuledger.h"
#include "recorder.h"
#include "state.h"

#define ASK_TIMEOUT_NS 10000000000ULL

static _Atomic uint64_t checkpoints;

/* 0 with the answer in q, or -1 (not recording, no writer, no answer in time). */
static int ask(struct gl_question *q)
{
    if (atomic_load(&gl_st.phase) != GL_PHASE_RECORDING)
        return -1;
    if (atomic_load(&gl_st.writer_state) == GL_WRITER_NONE && gl_writer_start() != 0)
        return -1;
    pthread_mutex_lock(&gl_st.ask_lock);
    gl_st.question = q;
    atomic_store(&gl_st.ask_state, GL_ASK_ASKED);
    struct timespec nap = {0, 200000};
    uint64_t waited = 0;
    int state, late = 0;
    while ((state = atomic_load(&gl_st.ask_state)) != GL_ASK_ANSWERED) {
        int gone = atomic_load(&gl_st.writer_state) != GL_WRITER_RUNNING;
        late = waited > ASK_TIMEOUT_NS;
        if (state == GL_ASK_ASKED && (gone || late)) {
            int expect = GL_ASK_ASKED; /* withdraw it, unless the writer took it meanwhile */
            if (atomic_compare_exchange_strong(&gl_st.ask_state, &expect, GL_ASK_IDLE))
                break;
        }
        nanosleep(&nap, NULL);
        waited += 200000;
    }
    int rc = state == GL_ASK_ANSWERED ? 0 : -1;
    atomic_store(&gl_st.ask_state, GL_ASK_IDLE);
    gl_st.question = NULL;
    pthread_mutex_unlock(&gl_st.ask_lock);
    if (rc && late)
        gl_warn("no answer from the writer thread within 10 s (gpuledger_checkpoint/_usage); the program runs on");
    return rc;
}

GL_EXPORT uint64_t gpuledger_checkpoint(void)
{
    uint64_t id = atomic_fetch_add(&checkpoints, 1) + 1;
    struct gl_question q = {.what = GL_QUESTION_CHECKPOINT, .checkpoint = id};
    return ask(&q) == 0 && q.rc == 0 ? id : 0;
}

GL_EXPORT int gpuledger_usage(uint64_t checkpoint, int layer, struct gpuledger_usage *out)
{
    struct gl_usage u = {0};
    struct gl_question q = {.what = GL_QUESTION_USAGE, .checkpoint = checkpoint, .layer = layer - 1, .usage = &u};
    if (!out || ask(&q) || q.rc)
        return -1;
    *out = (struct gpuledger_usage){
        .live_bytes = u.live,
        .start_bytes = u.start,
        .peak_bytes = u.peak,
        .new_live_bytes = u.new_live,
        .new_live_count = u.new_count,
        .allocated_bytes = u.allocated,
        .allocations = u.allocs,
        .frees = u.frees,
        .layer = u.layer + 1,
    };
    return 0;
}

GL_EXPORT int gpuledger_live_stacks(uint64_t checkpoint, int layer, int when, struct gpuledger_stack_bytes *out,
                                    int max)
{
    _Static_assert(sizeof(struct gl_stack_bytes) == sizeof(struct gpuledger_stack_bytes), "same layout");
    _Static_assert((int)GPULEDGER_NOW == (int)GL_ASK_NOW && (int)GPULEDGER_AT_PEAK == (int)GL_ASK_AT_PEAK, "same numbers");
    _Static_assert(GPULEDGER_FRAMES_PYTHON == GL_ASK_PYTHON_ONLY, "same flag");
    struct gl_question q = {.what = GL_QUESTION_STACKS, .checkpoint = checkpoint, .layer = layer - 1, .when = when,
                            .stacks = (struct gl_stack_bytes *)(void *)out, .max = max};
    if (!out || max <= 0)
        return -1;
    return ask(&q) ? -1 : q.rc;
}

GL_EXPORT int gpuledger_stack_text(uint64_t stack_id, int flags, char *buf, size_t bufsz)
{
    struct gl_question q = {.what = GL_QUESTION_STACK_TEXT, .stack_id = stack_id, .flags = flags, .text = buf,
                            .textsz = bufsz};
    if (!buf || !bufsz)
        return -1;
    buf[0] = 0;
    return ask(&q) ? -1 : q.rc;
}
