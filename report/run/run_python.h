/* run_python.h — `gpuledger run`'s preparation of Python jobs and of
 * PyTorch (run_python.c). */
#ifndef GL_RUN_PYTHON_H
#define GL_RUN_PYTHON_H

/* Put the gpuledger package (and its sitecustomize) first on PYTHONPATH.
 * Not finding it is one line (unless quiet) and 0; -1 only on out of memory. */
int gl_run_set_pythonpath(int quiet);
/* --torch MODE: blocks (PyTorch's caching allocator, every tensor block an
 * event), tensors (the cudaMallocAsync backend: every tensor a CUDA
 * allocation), segments (the allocator's segments only). Sets
 * GPULEDGER_TORCH (and PYTORCH_CUDA_ALLOC_CONF for tensors). -1 after a
 * one-line message on a bad mode. */
int gl_run_set_torch_mode(const char *mode);

#endif
