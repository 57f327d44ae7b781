/* annotate.c — gpuledger_mark / gpuledger_range_push / _pop (gpuledger.h):
 * an event whose slot carries its label instead of a stack; and
 * gpuledger_set_recording / gpuledger_recording, the pause switch. */
#include <string.h>

#include "gpuledger.h"
#include "recorder.h"
#include "state.h"
#include "usage.h"

static void label_event(int api, const char *label)
{
    if (!gl_enter()) {
        gl_leave();
        return;
    }
    struct gl_call c = {.api = api, .device = -1};
    struct gl_claim cl;
    gl_claim_label(&cl, &c, label ? label : "");
    gl_publish(&cl, 0);
    gl_leave();
}

GL_EXPORT void gpuledger_mark(const char *label)
{
    gl_sample_pools_at_mark(); /* the pools' cache as the step ends, before its mark */
    label_event(GL_API_gpuledger_mark, label);
    gl_usage_at_mark(); /* the process's own figure at each step */
}

GL_EXPORT void gpuledger_range_push(const char *label)
{
    label_event(GL_API_gpuledger_range_push, label);
}

GL_EXPORT void gpuledger_range_pop(void)
{
    label_event(GL_API_gpuledger_range_pop, NULL);
}

GL_EXPORT int gpuledger_set_recording(int on)
{
    return !atomic_exchange(&gl_st.paused, !on);
}

GL_EXPORT int gpuledger_recording(void)
{
    return atomic_load(&gl_st.phase) == GL_PHASE_RECORDING && !atomic_load(&gl_st.paused);
}
