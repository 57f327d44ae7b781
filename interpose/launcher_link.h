/* launcher_link.h — how a recorded process tells `gpuledger run` what it
 * did. The launcher binds an abstract AF_UNIX datagram socket (no file
 * anywhere: it is gone with the launcher, however that ends) and names it
 * in GPULEDGER_MANIFEST as "@name"; each process's writer sends one
 * datagram per fact: a kind byte, then text. The launcher learns the
 * sender's pid and uid from the kernel (SO_PASSCRED). */
#ifndef GL_LAUNCHER_LINK_H
#define GL_LAUNCHER_LINK_H

#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#define GL_LINK_DB 'D'   /* text: the database's absolute path */
#define GL_LINK_FAIL 'F' /* text: why this process records nothing */
#define GL_LINK_MAX 8192 /* the largest datagram */

/* The socket address for GPULEDGER_MANIFEST's value; 0, or -1 if the value
 * is not "@name" (name 1..100 bytes). */
static inline int gl_link_addr(const char *value, struct sockaddr_un *a, socklen_t *len)
{
    size_t n = value && value[0] == '@' ? strlen(value + 1) : 0;
    if (n == 0 || n > sizeof a->sun_path - 2)
        return -1;
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, value + 1, n); /* sun_path[0] = 0: abstract */
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    return 0;
}

/* Send one fact (library side; the writer thread, whose descriptors the
 * program cannot reach). A launcher that is gone or never was: nothing. */
void gl_link_tell(const char *manifest, char kind, const char *text);

#endif
