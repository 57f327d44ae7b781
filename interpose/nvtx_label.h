/* nvtx_label.h — NVTX messages as gpuledger labels, shared by the core
 * module (nvtx_inject.c: marks and ranges) and the memory module
 * (nvtx_mem.c: heap and region names). */
#ifndef GL_NVTX_LABEL_H
#define GL_NVTX_LABEL_H

#include <wchar.h>

#define GL_NVTX_LABEL_MAX 256

/* A wide string as UTF-8 into buf (GL_NVTX_LABEL_MAX bytes), without
 * allocating; returns buf. */
const char *gl_nvtx_from_wide(const wchar_t *w, char *buf);

#endif
