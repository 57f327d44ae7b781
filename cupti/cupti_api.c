/* cupti_api.c — the libcupti in use: its functions, taken with dlsym
 * (never linked), and what the CUPTI side shares (active, time offset). */
#include <dlfcn.h>

#include "cupti_internal.h"

struct gl_cupti_api gl_cupti;
int gl_cupti_active;
int64_t gl_cupti_ts_offset;

const char *gl_cupti_error(CUptiResult r)
{
    const char *s = NULL;
    if (gl_cupti.getResultString)
        gl_cupti.getResultString(r, &s);
    return s ? s : "unknown CUPTI error";
}

#define SYM(field, name) (*(void **)&gl_cupti.field = dlsym(h, name)) != NULL

int gl_cupti_load(void *h)
{
    return SYM(getVersion, "cuptiGetVersion") && SYM(getResultString, "cuptiGetResultString") &&
           SYM(subscribe, "cuptiSubscribe") && SYM(unsubscribe, "cuptiUnsubscribe") &&
           SYM(enableCallback, "cuptiEnableCallback") &&
           SYM(activityRegisterCallbacks, "cuptiActivityRegisterCallbacks") &&
           SYM(activityEnable, "cuptiActivityEnable") && SYM(activityFlushAll, "cuptiActivityFlushAll") &&
           SYM(activityFlushPeriod, "cuptiActivityFlushPeriod") &&
           SYM(activityGetNextRecord, "cuptiActivityGetNextRecord") &&
           SYM(activityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords") &&
           SYM(getTimestamp, "cuptiGetTimestamp");
}
