/* errout.h — where gpuledger's own lines go: fd 2 while it is still the
 * file it was when the library loaded, else nowhere (errout.c). */
#ifndef GL_ERROUT_H
#define GL_ERROUT_H

#include <stddef.h>

/* At load: note which file fd 2 is. */
void gl_stderr_remember(void);
/* Write to fd 2 if it is still the file it was at load (else nothing,
 * -1); errno untouched. */
int gl_stderr_write(const char *s, size_t n);

#endif
