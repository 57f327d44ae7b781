/* model_vmm.h — which device each VMM mapping is on. A cuMemMap names a
 * physical handle, not a device, so its event has device -1; the device is
 * that of the cuMemCreate that made the handle (the latest one before the
 * map). For exports that place memory by address (memory_viz). */
#ifndef GL_MODEL_VMM_H
#define GL_MODEL_VMM_H

#include "model.h"
#include "u64map.h"

/* out: map event seq -> device + 1. 0, or -1 (out of memory). */
int gl_map_devices(struct gl_run *r, struct gl_u64map *out);

#endif
