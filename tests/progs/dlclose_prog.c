/* dlclose_prog.c — loads the CUDA runtime with dlopen, allocates and frees
 * through dlsym'd pointers, unloads it, loads it again (maybe elsewhere)
 * and does it again: 3 pairs per round, 2 rounds. Not linked to cudart. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);

static int round_trip(void)
{
    void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 1;
    malloc_fn m = (malloc_fn)dlsym(h, "cudaMalloc");
    free_fn f = (free_fn)dlsym(h, "cudaFree");
    if (!m || !f)
        return 2;
    for (int i = 0; i < 3; i++) {
        void *p = NULL;
        if (m(&p, 4096 * (size_t)(i + 1)))
            return 3;
        f(p);
    }
    return dlclose(h) ? 4 : 0;
}

int main(void)
{
    int a = round_trip();
    int b = round_trip();
    printf("dlclose_prog: %d %d\n", a, b);
    return a || b;
}
