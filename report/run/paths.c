/* paths.c — see paths.h. */
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GL_PREFIX
#define GL_PREFIX "/usr/local"
#endif

void gl_exe_dir(char *out, size_t sz)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    snprintf(out, sz, "%s", exe);
}

int gl_find_installed(const char *dir, const char *leaf, char *out, size_t sz)
{
    size_t np = strlen(GL_PREFIX);
    char exe[PATH_MAX], cand[2 * PATH_MAX], real[PATH_MAX];
    gl_exe_dir(exe, sizeof exe);
    if (exe[0] && !strncmp(dir, GL_PREFIX, np) && (dir[np] == '/' || !dir[np])) {
        snprintf(cand, sizeof cand, "%s/..%s/%s", exe, dir + np, leaf);
        if (access(cand, F_OK) == 0 && realpath(cand, real) && strlen(real) < sz) {
            snprintf(out, sz, "%s", real);
            return 0;
        }
    }
    snprintf(cand, sizeof cand, "%s/%s", dir, leaf);
    if (access(cand, F_OK) != 0 || strlen(cand) >= sz)
        return -1;
    snprintf(out, sz, "%s", cand);
    return 0;
}
