/* capture_gate.h — gpuledger's own CUDA calls never meet a stream capture.
 *
 * While a stream captures a graph, CUDA refuses "potentially unsafe" calls
 * (cuda_runtime_api.h, cudaThreadExchangeStreamCaptureMode: it names
 * cudaMalloc) and invalidates the capture: a thread in the default mode
 * (cudaStreamCaptureModeGlobal) may make none while it captures itself, nor
 * while any other thread has a capture begun in global mode. On the H200 a
 * pool query gpuledger made after a captured cudaMallocAsync invalidated
 * the program's capture. So every query gpuledger makes on its own account
 * that is not a capture query — the stream-ordered pool and device samples
 * (cuMemPoolGetAttribute, cuMemGetInfo), the graph pool's
 * (cuDeviceGetGraphMemAttribute), an array's real size (a probe array), the
 * process figure's driver fallbacks (cuMemGetInfo, cuDeviceGetPCIBusId) —
 * passes this gate, and is skipped while any capture is in progress in the
 * process, whatever its mode.
 *
 * The wrappers of cuStreamBeginCapture* count a capture before the real
 * call and wait for queries already past the gate; cuStreamEndCapture's
 * count it out after. So no own query overlaps a capture (a Dekker pair:
 * sequentially consistent count, then check, on both sides).
 *
 * What gpuledger still calls during a capture, none of which a capture
 * forbids: cuStreamGetCaptureInfo on the application's own stream (how a
 * captured allocation is told from a real one; on the legacy stream CUDA
 * answers with an error and leaves the capture alone), the current device
 * and context (cuCtxGetDevice, cuCtxGetCurrent, cudaGetDevice: PyTorch
 * makes them inside its captures), the graph's nodes at instantiation
 * (host-side objects), and NVML (no CUDA call). */
#ifndef GL_CAPTURE_GATE_H
#define GL_CAPTURE_GATE_H

#include <stdatomic.h>

/* Captures in progress in the process, as far as the wrappers saw (read
 * with one relaxed load on the hot path: graph_mem.h). */
extern _Atomic int gl_captures;

/* Before the real cuStreamBeginCapture*: count the capture, then wait
 * (bounded) for own queries already under way. */
void gl_capture_opening(void);
/* After a begin that failed, or after cuStreamEndCapture* of a stream that
 * was capturing. */
void gl_capture_closed(void);

/* Before an own query: 1 if it may run (then gl_own_call_end after it), 0
 * if a capture is in progress (skip it). */
int gl_own_call_begin(void);
void gl_own_call_end(void);

/* In a fork child: no query, nor capture, is under way there. */
void gl_capture_gate_after_fork(void);

#endif
