/* cupti_internal.h — the CUPTI side of libgpuledger.so. libcupti is never
 * linked: it is found at run time (the copy the process already has, if
 * any) and its functions are taken with dlsym, so the library loads and
 * works without CUPTI, and a fake libcupti can drive it in tests. */
#ifndef GL_CUPTI_INTERNAL_H
#define GL_CUPTI_INTERNAL_H

#include <cupti.h>

struct gl_cupti_api {
    CUptiResult (*getVersion)(uint32_t *);
    CUptiResult (*getResultString)(CUptiResult, const char **);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*enableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult (*activityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*activityEnable)(CUpti_ActivityKind);
    CUptiResult (*activityFlushAll)(uint32_t);
    CUptiResult (*activityFlushPeriod)(uint32_t);
    CUptiResult (*activityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*activityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*getTimestamp)(uint64_t *);
};

extern struct gl_cupti_api gl_cupti;
extern int gl_cupti_active;        /* subscribed and callbacks enabled */
extern int64_t gl_cupti_ts_offset; /* add to a CUPTI timestamp: CLOCK_MONOTONIC ns */

/* cupti_api.c */
const char *gl_cupti_error(CUptiResult r);
/* Take every function from the libcupti handle h: 1, or 0 if one is missing. */
int gl_cupti_load(void *h);

/* cupti_callbacks.c */
void CUPTIAPI gl_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *cbdata);
/* The callback ids we enable, per domain (terminated by 0). */
extern const CUpti_CallbackId gl_cupti_driver_cbids[];
extern const CUpti_CallbackId gl_cupti_runtime_cbids[];

/* cupti_activity.c */
int gl_cupti_activity_start(void);
void gl_cupti_activity_flush(void);

#endif
