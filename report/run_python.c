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

#ifndef GL_SOURCE_PYDIR
#define GL_SOURCE_PYDIR ""
#endif
#ifndef GL_DATADIR
#define GL_DATADIR "/usr/local/share"
#endif

static int has_package(const char *dir)
{
    char p[2 * PATH_MAX];
    snprintf(p, sizeof p, "%s/gpuledger/_boot/sitecustomize.py", dir);
    return access(p, R_OK) == 0;
}

/* The directory holding the gpuledger package: GPULEDGER_PYTHONPATH, the
 * source tree next to the build (or the one it was built from), or the
 * installed copy. */
static int find_pydir(char *out, size_t sz)
{
    const char *env = getenv("GPULEDGER_PYTHONPATH");
    if (env && *env) {
        snprintf(out, sz, "%s", env);
        return has_package(out) ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    const char *cands[] = {"/../../python", "/../share/gpuledger/python"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char c[PATH_MAX + 64];
        snprintf(c, sizeof c, "%s%s", exe, cands[i]);
        if (has_package(c) && realpath(c, out))
            return 0;
    }
    const char *fixed[] = {GL_SOURCE_PYDIR, GL_DATADIR "/gpuledger/python"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i][0] && has_package(fixed[i])) {
            snprintf(out, sz, "%s", fixed[i]);
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
