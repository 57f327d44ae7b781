/* countshim.c — libcountshim.so, a user's own interposer of cudaMalloc and
 * cudaFree, written the usual way: the real function found lazily with
 * dlsym(RTLD_NEXT, …) inside the call, every call counted. At exit it
 * prints "countshim: N cudaMalloc, M cudaFree" on stderr. Preloaded next
 * to libgpuledger.so, in either order, both must see every call and
 * nothing may recurse (a guard turns a recursion into exit 99). */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static _Atomic long mallocs, frees;
static __thread int depth;

static void recursion(const char *fn)
{
    fprintf(stderr, "countshim: %s called itself through dlsym(RTLD_NEXT)\n", fn);
    _exit(99);
}

__attribute__((visibility("default"))) cudaError_t cudaMalloc(void **p, size_t n)
{
    if (depth)
        recursion("cudaMalloc");
    cudaError_t (*real)(void **, size_t) = (cudaError_t(*)(void **, size_t))dlsym(RTLD_NEXT, "cudaMalloc");
    if (!real)
        return cudaErrorUnknown;
    atomic_fetch_add(&mallocs, 1);
    depth++;
    cudaError_t r = real(p, n);
    depth--;
    return r;
}

__attribute__((visibility("default"))) cudaError_t cudaFree(void *p)
{
    if (depth)
        recursion("cudaFree");
    cudaError_t (*real)(void *) = (cudaError_t(*)(void *))dlsym(RTLD_NEXT, "cudaFree");
    if (!real)
        return cudaErrorUnknown;
    atomic_fetch_add(&frees, 1);
    depth++;
    cudaError_t r = real(p);
    depth--;
    return r;
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "countshim: %ld cudaMalloc, %ld cudaFree\n", atomic_load(&mallocs), atomic_load(&frees));
}
