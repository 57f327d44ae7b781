/* fake_cupti.c — a fake libcupti.so.13 for tests: one subscriber, callback
 * enabling per id, and activity buffers filled with synthetic MEMORY2
 * records at flush. The fake driver calls it around its API functions
 * (fakecuda_set_cupti_dispatch), as the real driver drives CUPTI.
 * FAKECUPTI_BUSY=1 makes cuptiSubscribe fail as if another tool held CUPTI;
 * FAKECUPTI_DROPPED=N reports N dropped activity records. */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static CUpti_CallbackFunc callback;
static void *cb_userdata;
static unsigned char enabled[2][1024]; /* [driver, runtime][cbid] */
static CUpti_BuffersCallbackRequestFunc buf_req;
static CUpti_BuffersCallbackCompleteFunc buf_done;
static int memory2_on;
static uint32_t next_correlation = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define MAXREC 256
static CUpti_ActivityMemory4 pending[MAXREC];
static int npending;

CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                              : "fake CUPTI error";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *t = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + 1000000000ULL; /* a different epoch */
    return CUPTI_SUCCESS;
}

/* Called by the fake driver around each API function it implements. */
static void dispatch(int domain, uint32_t cbid, int site, const char *name, void *params, void *ret)
{
    int d = domain == CUPTI_CB_DOMAIN_DRIVER_API ? 0 : 1;
    if (!callback || cbid >= 1024 || !enabled[d][cbid])
        return;
    static __thread uint32_t corr;
    if (site == CUPTI_API_ENTER)
        corr = __atomic_fetch_add(&next_correlation, 1, __ATOMIC_RELAXED);
    CUpti_CallbackData cb;
    memset(&cb, 0, sizeof cb);
    cb.callbackSite = (CUpti_ApiCallbackSite)site;
    cb.functionName = name;
    cb.functionParams = params;
    cb.functionReturnValue = ret;
    cb.correlationId = corr;
    callback(cb_userdata, (CUpti_CallbackDomain)domain, cbid, &cb);
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc fn, void *userdata)
{
    const char *busy = getenv("FAKECUPTI_BUSY");
    if (busy && *busy == '1')
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    callback = fn;
    cb_userdata = userdata;
    *sub = (CUpti_SubscriberHandle)&callback;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void (*set)(void *) = h ? (void (*)(void *))dlsym(h, "fakecuda_set_cupti_dispatch") : NULL;
    if (set)
        set((void *)dispatch);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
    (void)sub;
    callback = NULL;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain,
                                CUpti_CallbackId cbid)
{
    (void)sub;
    if (cbid < 1024 && (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API))
        enabled[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 0 : 1][cbid] = (unsigned char)enable;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
    buf_req = req;
    buf_done = done;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_MEMORY2)
        memory2_on = 1;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    (void)ms;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&lock);
    if (!npending || !buf_req || !buf_done) {
        pthread_mutex_unlock(&lock);
        return CUPTI_SUCCESS;
    }
    uint8_t *buf = NULL;
    size_t size = 0, maxrec = 0;
    buf_req(&buf, &size, &maxrec);
    size_t valid = 0;
    for (int i = 0; i < npending && valid + sizeof pending[0] <= size; i++) {
        memcpy(buf + valid, &pending[i], sizeof pending[0]);
        valid += sizeof pending[0];
    }
    npending = 0;
    pthread_mutex_unlock(&lock);
    buf_done(NULL, 0, buf, size, valid);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + sizeof(CUpti_ActivityMemory4) : buffer;
    if (next + sizeof(CUpti_ActivityMemory4) > buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(void *)next;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx;
    (void)stream;
    static int reported;
    const char *d = getenv("FAKECUPTI_DROPPED");
    *dropped = d && !reported ? (size_t)atoi(d) : 0;
    reported = 1;
    return CUPTI_SUCCESS;
}

/* Test hook: a MEMORY2 record as the driver would produce for module
 * memory (kind DEVICE_STATIC), delivered at the next flush. */
void fakecupti_add_static(uint64_t addr, uint64_t bytes, int release)
{
    pthread_mutex_lock(&lock);
    if (memory2_on && npending < MAXREC) {
        CUpti_ActivityMemory4 *m = &pending[npending++];
        memset(m, 0, sizeof *m);
        m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
        m->memoryOperationType =
            release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        m->address = addr;
        m->bytes = bytes;
        cuptiGetTimestamp(&m->timestamp);
        m->deviceId = 0;
    }
    pthread_mutex_unlock(&lock);
}
