/* run_python.c — what `gpuledger run` prepares for a job's Python processes
 * and for PyTorch: the gpuledger Python package and its sitecustomize on
 * PYTHONPATH (in a Python process that imports torch, it attaches to
 * PyTorch's caching allocator and registers the identity hooks), and the
 * --torch mode (blocks, tensors, segments). */
#include "run_python.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

#ifndef GL_SOURCE_PYDIR
#define GL_SOURCE_PYDIR ""
#endif
#ifndef GL_PYDIR
#define GL_PYDIR "/usr/local/lib/python3/site-packages"
#endif

static int has_package(const char *dir)
{
    char p[2 * PATH_MAX];
    snprintf(p, sizeof p, "%s/gpuledger/_boot/sitecustomize.py", dir);
    return access(p, R_OK) == 0;
}

/* The directory holding the gpuledger package: GPULEDGER_PYTHONPATH, the
 * source tree of a build directory inside it, the installed copy (paths.h),
 * or the source tree it was built from. */
static int find_pydir(char *out, size_t sz)
{
    const char *env = getenv("GPULEDGER_PYTHONPATH");
    if (env && *env) {
        snprintf(out, sz, "%s", env);
        return has_package(out) ? 0 : -1;
    }
    char exe[PATH_MAX], c[PATH_MAX + 64];
    gl_exe_dir(exe, sizeof exe);
    snprintf(c, sizeof c, "%s/../../python", exe); /* build/report/gpuledger */
    if (has_package(c) && realpath(c, out))
        return 0;
    const char *probe = "/gpuledger/_boot/sitecustomize.py";
    if (gl_find_installed(GL_PYDIR, probe + 1, out, sz) == 0) {
        out[strlen(out) - strlen(probe)] = 0;
        return 0;
    }
    if (GL_SOURCE_PYDIR[0] && has_package(GL_SOURCE_PYDIR)) {
        snprintf(out, sz, "%s", GL_SOURCE_PYDIR);
        return 0;
    }
    return -1;
}

int gl_run_set_pythonpath(int quiet)
{
    char dir[PATH_MAX];
    if (find_pydir(dir, sizeof dir)) {
        if (!quiet)
            fprintf(stderr, "gpuledger run: the gpuledger Python package was not found (set GPULEDGER_PYTHONPATH "
                            "to the directory holding gpuledger/); Python jobs get no PyTorch integration\n");
        return 0;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = 2 * strlen(dir) + 32 + (old ? strlen(old) : 0);
    char *v = malloc(len);
    if (!v)
        return -1;
    snprintf(v, len, "%s/gpuledger/_boot:%s%s%s", dir, dir, old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv("PYTHONPATH", v, 1);
    free(v);
    return rc;
}

/* PYTORCH_CUDA_ALLOC_CONF with backend:cudaMallocAsync, keeping the
 * user's other settings (and replacing a backend they set). */
static int set_async_backend(void)
{
    const char *old = getenv("PYTORCH_CUDA_ALLOC_CONF");
    char buf[4096] = "backend:cudaMallocAsync";
    if (old && *old) {
        char *copy = strdup(old), *save = NULL;
        if (!copy)
            return -1;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ')
                tok++;
            if (!strncmp(tok, "backend", 7))
                continue;
            size_t used = strlen(buf);
            snprintf(buf + used, sizeof buf - used, ",%s", tok);
        }
        free(copy);
    }
    return setenv("PYTORCH_CUDA_ALLOC_CONF", buf, 1);
}

int gl_run_set_torch_mode(const char *mode)
{
    if (strcmp(mode, "blocks") && strcmp(mode, "tensors") && strcmp(mode, "segments")) {
        fprintf(stderr, "gpuledger run: --torch wants 'blocks', 'tensors' or 'segments', not '%s'\n", mode);
        return -1;
    }
    if (!strcmp(mode, "tensors") && set_async_backend())
        return -1;
    return setenv("GPULEDGER_TORCH", mode, 1);
}
