/* launcher_link.c — the library's side of launcher_link.h: one datagram,
 * sent from the writer thread (its own descriptor table, fdtable.c), so
 * the socket is never a descriptor the program could close or reuse. A
 * launcher busy elsewhere is waited for up to a second; then the fact is
 * dropped (the launcher's closing lines are then less complete, the
 * program is not delayed longer). */
#include "launcher_link.h"

#include <errno.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

void gl_link_tell(const char *manifest, char kind, const char *text)
{
    struct sockaddr_un a;
    socklen_t alen;
    if (gl_link_addr(manifest, &a, &alen) != 0)
        return;
    char msg[GL_LINK_MAX];
    size_t n = strlen(text);
    if (n > sizeof msg - 1)
        n = sizeof msg - 1;
    msg[0] = kind;
    memcpy(msg + 1, text, n);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    struct timespec nap = {0, 1000000};
    for (int tries = 0; tries < 1000; tries++) {
        if (sendto(fd, msg, n + 1, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&a, alen) >= 0)
            break;
        if (errno != EAGAIN && errno != EINTR)
            break; /* ECONNREFUSED: no launcher (any more) */
        nanosleep(&nap, NULL);
    }
    close(fd);
}
