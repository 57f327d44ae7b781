/* model_devmem.c — the device's own size, from device_samples (what
 * cudaMemGetInfo said at start-up, loaded with the tables): how much room
 * growth has. */
#include "model_devmem.h"

uint64_t gl_run_device_total(struct gl_run *r, int device)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->nfree_samples; i++)
        if (r->free_samples[i].device == device && r->free_samples[i].total_bytes > total)
            total = r->free_samples[i].total_bytes;
    return total;
}
