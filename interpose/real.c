/* real.c — see real.h. */
#include "real.h"

#include <dlfcn.h>
#include <link.h>
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

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        *(unsigned long long *)data = info->dlpi_adds + 1;
    return 1; /* the first object is enough: the counters are the loader's */
}

/* How many objects the loader has loaded so far, plus one (0: unknown). A
 * few ns: the loader's counter, under its list lock (never the lock a
 * dlopen holds while it reads files). */
static unsigned long long loads(void)
{
    unsigned long long n = 0;
    dl_iterate_phdr(first_object, &n);
    return n;
}

void *gl_driver_sym(const char *name)
{
    static void *driver;
    /* loads() when the driver was last found absent (0: never): until
     * something else is loaded it cannot be there, and asking dlopen again
     * searches the library path (20-100 us, at every gpuledger_mark of a
     * program that has not used CUDA yet, or never does) */
    static unsigned long long absent_at;
    /* the driver's own, once its handle is known: a dlsym that finds the
     * name allocates nothing, one that fails (RTLD_NEXT past a driver
     * loaded RTLD_LOCAL) allocates its error, on the caller's thread */
    void *h = __atomic_load_n(&driver, __ATOMIC_ACQUIRE);
    void *p = h && gl_real_dlsym ? gl_real_dlsym(h, name) : NULL;
    if (p)
        return p;
    p = gl_real_next(name);
    if (p)
        return p;
    if (!h) {
        unsigned long long now = loads();
        if (now && __atomic_load_n(&absent_at, __ATOMIC_RELAXED) == now)
            return NULL;
        /* the real dlopen (no trampoline: only a name already loaded is
         * asked for); the reference is kept, so pointers into the driver
         * stay valid for the run */
        typedef void *(*dlopen_fn)(const char *, int);
        dlopen_fn real = (dlopen_fn)__atomic_load_n(&gl_real_dlopen, __ATOMIC_ACQUIRE);
        if (!real)
            real = (dlopen_fn)gl_resolve_dlopen();
        h = real ? real("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) : NULL;
        if (!h) {
            /* read before the dlopen: a load under way then holds the
             * loader's lock, so this dlopen saw it finished, or it counts
             * after `now` */
            __atomic_store_n(&absent_at, now, __ATOMIC_RELAXED);
            return NULL;
        }
        void *expect = NULL;
        if (!__atomic_compare_exchange_n(&driver, &expect, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            h = expect; /* another thread's reference: both stay */
    }
    return gl_real_dlsym ? gl_real_dlsym(h, name) : NULL;
}

void *gl_driver_mem_info(void)
{
    static void *cached;
    void *p = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!p) {
        p = gl_driver_sym("cuMemGetInfo_v2");
        if (p)
            __atomic_store_n(&cached, p, __ATOMIC_RELEASE);
    }
    return p;
}
