/* real.h — finding the real functions behind our wrappers. dlsym itself is
 * wrapped (dlsym_tramp.S), so the real one is found with dlvsym and every
 * lookup of ours goes through it directly. */
#ifndef GL_REAL_H
#define GL_REAL_H

typedef void *(*gl_dlsym_fn)(void *, const char *);
extern gl_dlsym_fn gl_real_dlsym;

/* Resolve the real dlsym; safe to call many times, from any thread. */
void gl_real_init(void);
/* dlsym(RTLD_NEXT, name) as seen from libgpuledger, bypassing our hooks. */
void *gl_real_next(const char *name);
/* A function of the CUDA driver that gpuledger calls itself (the real one,
 * also of a name it wraps; such a call of ours is made inside a wrapped
 * call, so it is not recorded): from the libcuda.so.1 already loaded (cudart loads it
 * RTLD_LOCAL, out of RTLD_NEXT's reach). NULL if the driver is not loaded. */
void *gl_driver_sym(const char *name);
/* The driver's cuMemGetInfo_v2, looked up once found (asked at every
 * usage sample, a failing lookup allocated on the caller's thread: the
 * host allocator calls of a loop depended on how many samples fell in
 * it), or NULL while the driver is not loaded. */
void *gl_driver_mem_info(void);

#endif
