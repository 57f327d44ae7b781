/* hooks_dl.c — dlclose: code that goes away takes its unwind rules with it.
 * The unwinder caches one rule per return address (unwind.c); after a
 * library is unloaded another may be mapped at the same addresses, so every
 * cached rule is forgotten (and read again on first use). */
#include <dlfcn.h>

#include "recorder.h"
#include "unwind.h"

typedef int (*dlclose_fn)(void *);

GL_EXPORT int dlclose(void *handle)
{
    static dlclose_fn real;
    dlclose_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (dlclose_fn)dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.34");
        if (!f)
            f = (dlclose_fn)dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.2.5");
        if (!f)
            return -1;
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    int r = f(handle);
    gl_unwind_invalidate();
    return r;
}
