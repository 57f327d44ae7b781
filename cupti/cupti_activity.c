/* cupti_activity.c — CUPTI activity records (GPULEDGER_CUPTI_ACTIVITY=1):
 * MEMORY2 records give module/static memory (__device__ globals) that no
 * API call shows. Records of other memory kinds duplicate what the
 * callbacks and wrappers already recorded and are ignored. Buffers are
 * recycled; records CUPTI dropped are counted into run.dropped_events. */
#include <stdlib.h>
#include <string.h>

#include "cupti_internal.h"
#include "recorder.h"
#include "state.h"

#define BUF_SIZE (1u << 20)
#define NBUF 8

static uint8_t *free_bufs[NBUF];
static int nfree;
static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER; /* CUPTI's threads only, never the app's hot path */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&buf_lock);
    uint8_t *b = nfree ? free_bufs[--nfree] : NULL;
    pthread_mutex_unlock(&buf_lock);
    if (!b)
        b = aligned_alloc(8, BUF_SIZE);
    *buffer = b;
    *size = b ? BUF_SIZE : 0;
    *max_records = 0;
}

static void take(const CUpti_ActivityMemory4 *m)
{
    if (m->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC)
        return;
    int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    struct gl_call c = {
        .api = alloc ? GL_API_cupti_static : GL_API_cupti_static_free,
        .device = (int)m->deviceId,
        .addr = m->address,
        .size = m->bytes,
    };
    gl_record_at(&c, (uint64_t)((int64_t)m->timestamp + gl_cupti_ts_offset));
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    /* May run inside gl_cupti_shutdown (already guarded) or on CUPTI's own
     * thread: record whenever the recorder is on. */
    gl_enter();
    int on = atomic_load(&gl_st.phase) == GL_PHASE_RECORDING;
    while (on && gl_cupti.activityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY2)
            take((const CUpti_ActivityMemory4 *)rec);
    gl_leave();
    size_t dropped = 0;
    if (gl_cupti.activityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&gl_st.queue.dropped, dropped);
    pthread_mutex_lock(&buf_lock);
    if (nfree < NBUF) {
        free_bufs[nfree++] = buffer;
        buffer = NULL;
    }
    pthread_mutex_unlock(&buf_lock);
    free(buffer);
}

int gl_cupti_activity_start(void)
{
    CUptiResult r = gl_cupti.activityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r == CUPTI_SUCCESS)
        r = gl_cupti.activityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
    if (r != CUPTI_SUCCESS) {
        gl_warn("CUPTI activity records unavailable (%s): module/static memory is not recorded", gl_cupti_error(r));
        return -1;
    }
    gl_cupti.activityFlushPeriod(500);
    return 0;
}

void gl_cupti_activity_flush(void)
{
    if (gl_st.cfg.cupti_activity && gl_cupti.activityFlushAll)
        gl_cupti.activityFlushAll(1);
}
