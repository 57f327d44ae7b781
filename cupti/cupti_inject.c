/* cupti_inject.c — InitializeInjection (the CUDA_INJECTION64_PATH entry,
 * called by the driver at cuInit), finding libcupti, the version check,
 * and the subscription. Every failure degrades to interposition alone,
 * with one line saying what is lost. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cupti_internal.h"
#include "recorder.h"
#include "stack.h"
#include "state.h"

static CUpti_SubscriberHandle subscriber;

/* The libcupti already in the process (PyTorch loads its own), else the
 * one named by GPULEDGER_CUPTI_LIB, else the toolkit's. */
static void *find_libcupti(void)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    for (size_t i = 0; i < 3; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (h)
            return h;
    }
    if (gl_st.cfg.cupti_lib)
        return dlopen(gl_st.cfg.cupti_lib, RTLD_NOW | RTLD_LOCAL);
    static const char *const paths[] = {"libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
                                        "/usr/local/cuda/lib64/libcupti.so.13"};
    for (size_t i = 0; i < 4; i++) {
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

/* Frames of libcupti and libcuda sit above our callback: cut them. */
static void skip_module_of(const void *fn)
{
    uintptr_t lo, hi;
    if (fn && gl_code_range_of(fn, &lo, &hi) == 0)
        gl_stack_add_skip_range(lo, hi);
}

/* What CUPTI is used for. Callbacks take CUPTI's single subscriber slot
 * (torch.profiler then loses its CUDA events) and cost microseconds per
 * call; they only add something when our symbol hooks are not live (the
 * library was loaded by the driver alone, through CUDA_INJECTION64_PATH).
 * Activity records (module memory) need no subscriber. */
static void start(void)
{
    int callbacks = gl_st.cfg.cupti == GL_CUPTI_ON || (gl_st.cfg.cupti == GL_CUPTI_AUTO && !gl_st.cfg.preloaded);
    if (!callbacks && !gl_st.cfg.cupti_activity)
        return; /* nothing to do: say nothing, load nothing */
    void *h = find_libcupti();
    if (!h) {
        gl_warn("CUPTI not found (set GPULEDGER_CUPTI_LIB); recording through symbol interposition only: "
                "static-cudart programs may be partly seen");
        return;
    }
    if (!gl_cupti_load(h)) {
        gl_warn("this libcupti lacks functions gpuledger needs; recording through symbol interposition only");
        return;
    }
    uint32_t version = 0;
    gl_cupti.getVersion(&version);
    if (version / 10000 != CUPTI_API_VERSION / 10000)
        gl_warn("CUPTI API version %u, built for %u: trying anyway; if callbacks fail, interposition goes on",
                version, (unsigned)CUPTI_API_VERSION);
    uint64_t t = 0;
    if (gl_cupti.getTimestamp(&t) == CUPTI_SUCCESS)
        gl_cupti_ts_offset = (int64_t)gl_now_ns() - (int64_t)t;
    if (!callbacks) {
        gl_cupti_active = 1;
        gl_cupti_activity_start();
        return;
    }
    CUptiResult r = gl_cupti.subscribe(&subscriber, (CUpti_CallbackFunc)gl_cupti_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            gl_warn("another tool already uses CUPTI (a profiler?); gpuledger goes on with symbol interposition "
                    "only: calls made by a statically linked cudart outside dlsym/cuGetProcAddress are not seen");
        else
            gl_warn("cannot subscribe to CUPTI (%s); recording through symbol interposition only", gl_cupti_error(r));
        return;
    }
    for (const CUpti_CallbackId *id = gl_cupti_driver_cbids; *id; id++)
        gl_cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, *id);
    for (const CUpti_CallbackId *id = gl_cupti_runtime_cbids; *id; id++)
        gl_cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, *id);
    skip_module_of((const void *)gl_cupti.subscribe);
    skip_module_of(dlsym(RTLD_DEFAULT, "cuInit"));
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda) {
        skip_module_of(dlsym(cuda, "cuInit"));
        dlclose(cuda);
    }
    gl_cupti_active = 1;
    if (gl_st.cfg.cupti_activity)
        gl_cupti_activity_start();
}

/* Called by the CUDA driver (cuInit) when CUDA_INJECTION64_PATH names us.
 * Returning 1 tells the driver the injection succeeded: always, since a
 * failure here must never stop the program. */
GL_EXPORT int InitializeInjection(void)
{
    static int done;
    gl_init();
    if (done || gl_st.cfg.cupti == GL_CUPTI_OFF || atomic_load(&gl_st.phase) != GL_PHASE_RECORDING)
        return 1;
    done = 1;
    gl_enter(); /* nothing CUPTI does while starting is recorded */
    start();
    gl_leave();
    return 1;
}

/* At exit: deliver what CUPTI still buffers (lifecycle.c calls this). */
void gl_cupti_shutdown(void)
{
    if (!gl_cupti_active)
        return;
    gl_enter();
    gl_cupti_activity_flush();
    gl_leave();
}
