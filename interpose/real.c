/* real.c — see real.h. */
#include "real.h"

#include <dlfcn.h>
#include <stddef.h>

gl_dlsym_fn gl_real_dlsym;

__attribute__((no_sanitize("address", "undefined", "thread"))) void gl_real_init(void)
{
    if (__atomic_load_n(&gl_real_dlsym, __ATOMIC_ACQUIRE))
        return;
    gl_dlsym_fn f = (gl_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f)
        f = (gl_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&gl_real_dlsym, f, __ATOMIC_RELEASE);
}

void *gl_real_next(const char *name)
{
    gl_real_init();
    if (!gl_real_dlsym)
        return NULL;
    return gl_real_dlsym(RTLD_NEXT, name);
}

/* Called from the dlopen trampoline the first time: the real dlopen. */
__attribute__((visibility("hidden"))) void *gl_real_dlopen;

__attribute__((visibility("hidden"))) void *gl_resolve_dlopen(void)
{
    void *f = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
    if (!f)
        f = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
    __atomic_store_n(&gl_real_dlopen, f, __ATOMIC_RELEASE);
    return f;
}

void *gl_driver_sym(const char *name)
{
    static void *driver;
    void *p = gl_real_next(name);
    if (p)
        return p;
    void *h = __atomic_load_n(&driver, __ATOMIC_ACQUIRE);
    if (!h) {
        /* the real dlopen (no trampoline: only a name already loaded is
         * asked for); the reference is kept, so pointers into the driver
         * stay valid for the run */
        typedef void *(*dlopen_fn)(const char *, int);
        dlopen_fn real = (dlopen_fn)__atomic_load_n(&gl_real_dlopen, __ATOMIC_ACQUIRE);
        if (!real)
            real = (dlopen_fn)gl_resolve_dlopen();
        h = real ? real("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) : NULL;
        if (!h)
            return NULL;
        void *expect = NULL;
        if (!__atomic_compare_exchange_n(&driver, &expect, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            h = expect; /* another thread's reference: both stay */
    }
    return gl_real_dlsym ? gl_real_dlsym(h, name) : NULL;
}
