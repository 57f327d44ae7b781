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

void *gl_driver_sym(const char *name)
{
    static void *driver;
    void *p = gl_real_next(name);
    if (p)
        return p;
    void *h = __atomic_load_n(&driver, __ATOMIC_ACQUIRE);
    if (!h) {
        /* the reference is kept: pointers into it stay valid for the run */
        h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            return NULL;
        void *expect = NULL;
        if (!__atomic_compare_exchange_n(&driver, &expect, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            dlclose(h), h = expect;
    }
    return gl_real_dlsym ? gl_real_dlsym(h, name) : NULL;
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
