/* relay.h — lines the writer thread has to say, said by a program thread
 * (see relay.c). */
#ifndef GL_RELAY_H
#define GL_RELAY_H

#include <stddef.h>

/* Keep one line (with its newline) for a program thread to print. */
void gl_relay_put(const char *line, size_t len);
/* Print the lines kept so far on stderr. Any thread, async-signal-safe; a
 * call that finds another printing returns at once. */
void gl_relay_flush(void);
/* 1 if lines are waiting (a cheap check before gl_relay_flush). */
int gl_relay_pending(void);

#endif
