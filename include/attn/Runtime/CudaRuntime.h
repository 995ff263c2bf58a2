/*===- CudaRuntime.h - the C API of attn-mlir's CUDA runtime ------*- C -*-===*\
|*                                                                            *|
|* Part of attn-mlir, an MLIR-based attention compiler.                       *|
|*                                                                            *|
|* libattn_cuda_runtime (lib/Runtime/CudaRuntime.cpp) is the only code that   *|
|* calls the CUDA driver API. Code compiled by --attn-cuda-pipeline calls its *|
|* `mgpu*` entry points (the names and signatures upstream MLIR's             *|
|* gpu-to-llvm lowering emits); drivers such as attn-run and the Python       *|
|* package call the `attnCuda*` functions below to manage device memory and   *|
|* to time kernels. Every failing driver call is reported with the call's     *|
|* name and CUDA's error name and string; the first failure since the last    *|
|* attnCudaClearError() stays readable through attnCudaGetError().            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_CUDARUNTIME_H
#define ATTN_RUNTIME_CUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Initialises the driver and makes device `ordinal`'s primary context
 * current. Returns 0 on success; otherwise the error is recorded. */
int attnCudaInit(int ordinal);

/* The device's name and compute capability (major * 10 + minor). */
int attnCudaDeviceInfo(char *name, size_t nameSize, int *capability);

/* The first error recorded since the last attnCudaClearError(), or NULL. */
const char *attnCudaGetError(void);
void attnCudaClearError(void);

/* Device memory. attnCudaMalloc returns NULL on failure. */
void *attnCudaMalloc(size_t bytes);
int attnCudaFree(void *device);
int attnCudaCopyToDevice(void *device, const void *host, size_t bytes);
int attnCudaCopyToHost(void *host, const void *device, size_t bytes);
/* Fills `bytes` (a multiple of 4) with the 32-bit pattern `word`. */
int attnCudaFill32(void *device, uint32_t word, size_t bytes);

/* The stream compiled code runs on: every generated function enqueues its
 * work there and synchronises it before returning. NULL selects the
 * runtime's own stream (created on first use). */
void attnCudaSetStream(void *stream);
void *attnCudaGetStream(void);

/* Milliseconds between two points on the current stream, measured with
 * CUDA events: attnCudaTimerStart(), run work, attnCudaTimerStop(). */
int attnCudaTimerStart(void);
int attnCudaTimerStop(float *milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_CUDARUNTIME_H */
