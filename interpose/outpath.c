/* outpath.c — output file naming (see outpath.h). */
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *gl_rank_from_env(void)
{
    const char *r = getenv("RANK");
    if (!r || !*r)
        r = getenv("LOCAL_RANK");
    if (!r || !*r)
        r = "0";
    return r;
}

static int put(char *out, size_t outsz, size_t *n, const char *s)
{
    size_t len = strlen(s);
    if (*n + len >= outsz)
        return -1;
    memcpy(out + *n, s, len);
    *n += len;
    out[*n] = 0;
    return 0;
}

int gl_expand_pattern(const char *pattern, pid_t pid, const char *host, const char *rank, char *out,
                      size_t outsz)
{
    size_t n = 0;
    char buf[32];
    if (outsz == 0)
        return -1;
    out[0] = 0;
    for (const char *p = pattern; *p; p++) {
        int rc;
        if (p[0] == '%' && p[1]) {
            p++;
            switch (*p) {
            case 'p':
                snprintf(buf, sizeof buf, "%ld", (long)pid);
                rc = put(out, outsz, &n, buf);
                break;
            case 'h':
                rc = put(out, outsz, &n, host);
                break;
            case 'r':
                rc = put(out, outsz, &n, rank);
                break;
            case '%':
                rc = put(out, outsz, &n, "%");
                break;
            default:
                buf[0] = '%';
                buf[1] = *p;
                buf[2] = 0;
                rc = put(out, outsz, &n, buf);
                break;
            }
        } else {
            buf[0] = *p;
            buf[1] = 0;
            rc = put(out, outsz, &n, buf);
        }
        if (rc)
            return -1;
    }
    return 0;
}

int gl_in_directory(char *path, size_t sz, pid_t pid)
{
    size_t len = strlen(path);
    struct stat st;
    if (len == 0 || (path[len - 1] != '/' && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))))
        return 0;
    int w = snprintf(path + len, sz - len, "%sgpuledger-%ld.db", path[len - 1] == '/' ? "" : "/", (long)pid);
    if (w < 0 || (size_t)w >= sz - len) {
        path[len] = 0;
        return -1;
    }
    return 0;
}

int gl_create_exclusive(const char *path, char *chosen, size_t chosensz)
{
    size_t len = strlen(path);
    const char *ext = NULL;
    if (len > 3 && !strcmp(path + len - 3, ".db"))
        ext = path + len - 3;
    for (int i = 0; i < 1000; i++) {
        int w;
        if (i == 0)
            w = snprintf(chosen, chosensz, "%s", path);
        else if (ext)
            w = snprintf(chosen, chosensz, "%.*s.%d.db", (int)(ext - path), path, i);
        else
            w = snprintf(chosen, chosensz, "%s.%d", path, i);
        if (w < 0 || (size_t)w >= chosensz) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(chosen, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}
