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

#endif
