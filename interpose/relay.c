/* relay.c — the writer thread's lines, printed by a program thread.
 *
 * The writer has a descriptor table of its own (fdtable.c), without the
 * program's stderr; holding a copy of it would keep a pipe open after the
 * program closed it. So what the writer has to say (cannot create the
 * database, writing failed, the closing "wrote …" line) waits here and is
 * printed by the next program thread that passes by: a wrapped call once
 * recording has stopped or failed, a flush before exec, the end of the
 * process. One writer puts, any thread prints; lines beyond the room are
 * counted and that count is printed instead. */
#include "relay.h"
#include "errout.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RELAY_LINES 16
#define RELAY_LINE 1024

static char lines[RELAY_LINES][RELAY_LINE];
static size_t lens[RELAY_LINES];
static _Atomic unsigned put_count, printed_count, lost;
static atomic_flag printing = ATOMIC_FLAG_INIT;

void gl_relay_put(const char *line, size_t len)
{
    unsigned p = atomic_load_explicit(&put_count, memory_order_relaxed);
    if (p - atomic_load_explicit(&printed_count, memory_order_acquire) >= RELAY_LINES) {
        atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
        return;
    }
    if (len > RELAY_LINE)
        len = RELAY_LINE;
    memcpy(lines[p % RELAY_LINES], line, len);
    lens[p % RELAY_LINES] = len;
    atomic_store_explicit(&put_count, p + 1, memory_order_release);
}

int gl_relay_pending(void)
{
    return atomic_load_explicit(&put_count, memory_order_relaxed) !=
               atomic_load_explicit(&printed_count, memory_order_relaxed) ||
           atomic_load_explicit(&lost, memory_order_relaxed);
}

static void say(const char *s, size_t n)
{
    gl_stderr_write(s, n);
}

void gl_relay_flush(void)
{
    if (atomic_flag_test_and_set_explicit(&printing, memory_order_acquire))
        return;
    int saved = errno;
    unsigned done = atomic_load_explicit(&printed_count, memory_order_relaxed);
    while (done != atomic_load_explicit(&put_count, memory_order_acquire)) {
        say(lines[done % RELAY_LINES], lens[done % RELAY_LINES]);
        atomic_store_explicit(&printed_count, ++done, memory_order_release);
    }
    unsigned n = atomic_exchange_explicit(&lost, 0, memory_order_relaxed);
    if (n) {
        char buf[96];
        int len = snprintf(buf, sizeof buf, "gpuledger: %u more lines from the writer were not kept\n", n);
        if (len > 0)
            say(buf, (size_t)len);
    }
    errno = saved;
    atomic_flag_clear_explicit(&printing, memory_order_release);
}
