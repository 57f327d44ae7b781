/* fake_nvml.c — a fake libnvidia-ml.so.1 for tests: the figures nvidia-smi
 * would show, taken from the fake driver loaded in the same process.
 *  - devices: FAKECUDA_DEVICES (default 2), listed in the opposite order of
 *    CUDA's (NVML index i is CUDA device n-1-i; bus ids as the fake
 *    driver's cuDeviceGetPCIBusId gives them), so a tool must map by bus id;
 *  - this process's figure on a device: its allocations plus the context
 *    and local-memory overhead (fakecuda_process_used), listed only once
 *    the fake driver is loaded and the figure is not 0;
 *  - FAKENVML_OTHER_BYTES: another process (pid 1) using that many bytes on
 *    every device, in the device's used figure too;
 *  - FAKENVML_HIDE_PIDS=1: the process list holds no entry for this pid (a
 *    container whose pids the driver does not see);
 *  - FAKENVML_FAIL_INIT=1: nvmlInit fails (no usable driver). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
       NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7 };

typedef struct nvmlDevice_st {
    int index;
} *nvmlDevice_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

#define MAXDEV 8
static struct nvmlDevice_st devs[MAXDEV];
static int initialised;

static int count(void)
{
    const char *s = getenv("FAKECUDA_DEVICES");
    int n = s ? atoi(s) : 2;
    return n < 1 ? 1 : n > MAXDEV ? MAXDEV : n;
}

static unsigned long long env_u64(const char *name)
{
    const char *s = getenv(name);
    return s ? strtoull(s, NULL, 10) : 0;
}

/* This process's bytes on NVML device d (0 until the fake driver is loaded). */
static unsigned long long ours(const struct nvmlDevice_st *d)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    size_t (*used)(int) = h ? (size_t(*)(int))dlsym(h, "fakecuda_process_used") : NULL;
    unsigned long long v = used ? used(count() - 1 - d->index) : 0;
    if (h)
        dlclose(h);
    return v;
}

static int valid(nvmlDevice_t d)
{
    return initialised && d && d >= devs && d < devs + count();
}

nvmlReturn_t nvmlInit_v2(void)
{
    if (env_u64("FAKENVML_FAIL_INIT"))
        return NVML_ERROR_UNINITIALIZED;
    for (int i = 0; i < MAXDEV; i++)
        devs[i].index = i;
    initialised = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    initialised = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == NVML_SUCCESS ? "Success" : "fake NVML error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    *n = (unsigned)count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if (!d || i >= (unsigned)count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *d = &devs[i];
    return NVML_SUCCESS;
}

/* "0000:11:00.0" or "00000000:11:00.0": bus 0x10 + CUDA device. */
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    const char *colon = bus ? strchr(bus, ':') : NULL;
    if (!colon || !d)
        return NVML_ERROR_INVALID_ARGUMENT;
    int cuda_dev = (int)strtol(colon + 1, NULL, 16) - 0x10;
    if (cuda_dev < 0 || cuda_dev >= count())
        return NVML_ERROR_NOT_FOUND;
    *d = &devs[count() - 1 - cuda_dev];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    if (!valid(d) || !m)
        return NVML_ERROR_INVALID_ARGUMENT;
    const char *s = getenv("FAKECUDA_MEM_BYTES");
    m->total = s ? strtoull(s, NULL, 10) : 16ULL << 30;
    m->used = ours(d) + env_u64("FAKENVML_OTHER_BYTES");
    m->free = m->used < m->total ? m->total - m->used : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *infos)
{
    if (!valid(d) || !n)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlProcessInfo_t list[2];
    unsigned k = 0;
    unsigned long long mine = ours(d), other = env_u64("FAKENVML_OTHER_BYTES");
    if (other)
        list[k++] = (nvmlProcessInfo_t){1, other, 0xffffffffu, 0xffffffffu};
    if (mine && !env_u64("FAKENVML_HIDE_PIDS"))
        list[k++] = (nvmlProcessInfo_t){(unsigned)getpid(), mine, 0xffffffffu, 0xffffffffu};
    unsigned room = *n;
    *n = k;
    if (room < k || (k && !infos))
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(infos, list, k * sizeof *list);
    return NVML_SUCCESS;
}
