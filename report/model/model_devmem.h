/* model_devmem.h — the device's total memory as the recording saw it. */
#ifndef GL_MODEL_DEVMEM_H
#define GL_MODEL_DEVMEM_H

#include <stdint.h>

#include "model.h"

/* Bytes of device memory `device` has (device_samples.total); 0: not known. */
uint64_t gl_run_device_total(struct gl_run *r, int device);

#endif
