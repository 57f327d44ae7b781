/* fake_internal.h — shared state of the fake CUDA driver (libcuda.so.1 for
 * tests): device memory accounting, the allocation registry, failure
 * injection. Host memory stands in for device memory. */
#ifndef FAKE_INTERNAL_H
#define FAKE_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_MAX_DEVICES 8
#define FAKE_ALIGN 256

int fake_device_count(void);
int fake_current_device(void);

/* Account `size` bytes on device `dev`; returns CUDA_ERROR_OUT_OF_MEMORY if
 * the device (FAKECUDA_MEM_BYTES, default 16 GiB) is full, or an injected
 * error (FAKECUDA_FAIL_ALLOC=N[,M...], FAKECUDA_FAIL_CODE). */
CUresult fake_charge(int dev, size_t size);
void fake_uncharge(int dev, size_t size);
size_t fake_used(int dev);
size_t fake_total(void);

/* Registry of live allocations made through the classic API (address ->
 * size, device, kind) so that frees are validated and a reset frees all. */
enum fake_kind { FAKE_DEVICE = 1, FAKE_MANAGED, FAKE_HOST };
void fake_registry_add(uintptr_t addr, size_t size, int dev, int kind, void *base);
/* Returns 1 and the record if found (and removes it). */
int fake_registry_take(uintptr_t addr, int kind, size_t *size, int *dev, void **base);
/* Free every registered allocation of `dev`; returns how many. */
int fake_registry_reset(int dev);

/* Pools (fake_pool.c). */
CUresult fake_pool_alloc(CUmemoryPool pool, size_t size, CUdeviceptr *out);
CUresult fake_pool_free(CUdeviceptr ptr);
CUresult fake_pool_sync_all(void);
CUmemoryPool fake_default_pool(int dev);

/* Memory the process holds outside any allocation API (what nvidia-smi
 * shows beyond the allocations): a context's fixed overhead, charged when a
 * device's primary context is first retained (FAKECUDA_CONTEXT_BYTES,
 * default 300 MiB), and the local-memory reservation made by the first
 * launch on a device (FAKECUDA_LOCALMEM_BYTES, default 64 MiB). Neither
 * counts toward out-of-memory; both show in cuMemGetInfo and fake NVML. */
size_t fake_overhead(int dev);
void fake_first_launch(int dev);

/* Graphs (fake_graph.c): a stream-ordered call on a capturing stream adds
 * a node instead (returns 1, *r the result); a free of a graph allocation
 * left live by a launch (returns 1 if ptr was one). */
int fake_capture_alloc(CUstream s, size_t size, CUdeviceptr *out, CUresult *r);
int fake_capture_free(CUstream s, CUdeviceptr ptr, CUresult *r);
int fake_graph_free(CUdeviceptr ptr);
/* Stream capture's rules (fake_graph.c): before a potentially unsafe call,
 * CUDA_SUCCESS or the error it fails with (what: its name, for
 * FAKECUDA_DEBUG); work on a capturing stream (returns 1, *r
 * CUDA_SUCCESS or CUDA_ERROR_STREAM_CAPTURE_INVALIDATED); a synchronisation
 * of a capturing stream (returns 1, *r the error: it invalidates). */
CUresult fake_capture_unsafe(const char *what);
int fake_capture_stream(CUstream s, CUresult *r);
int fake_capture_sync(CUstream s, CUresult *r);
#define FAKE_UNSAFE(name)                                                                          \
    do {                                                                                           \
        CUresult unsafe_ = fake_capture_unsafe(name);                                              \
        if (unsafe_ != CUDA_SUCCESS)                                                               \
            return unsafe_;                                                                        \
    } while (0)

/* CUPTI driver callbacks around an API function (a no-op until a tool
 * subscribes through the fake libcupti). */
void fake_cupti_site(uint32_t cbid, const char *name, void *params, int site, void *ret);
#define FAKE_CUPTI_SITE(cbid, name, params, site, ret) fake_cupti_site(cbid, name, params, site, ret)

#endif
