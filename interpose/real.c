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
