//===- ParallelFor.h - compiled loops on the host's threads -*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The parallel-for a host installs into compiled CPU code with
// attn_set_parallel_for (docs/CpuABI.md), as the Python package and
// attn-run do. Until a host binds it to an OpenMP runtime already in the
// process (the one torch runs its own ops on, attnParallelBindOpenMP), it
// declines every loop and the compiled code runs it on its own OpenMP
// runtime, as without the hook. Bound, a compiled function's parallel loops
// run on the same team of threads as the framework's operators, instead of
// a second team that keeps spinning on the same cores after each call
// (LLVM libomp's 200 ms KMP_BLOCKTIME against torch's libgomp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_PARALLELFOR_H
#define ATTN_RUNTIME_PARALLELFOR_H

#include <cstdint>

extern "C" {

/// What compiled code hands the hook: runs iterations [begin, end).
typedef void (*AttnParallelBody)(void *ctx, int64_t begin, int64_t end);

/// The hook (attn_set_parallel_for's argument): runs iterations [0, trips)
/// of `body` and returns 0, or returns 1 without running any when no
/// OpenMP runtime is bound. Iterations go to the bound runtime's threads
/// in chunks of max(1, trips / (threads * 8)) taken in turn. They run on
/// the calling thread instead when called from inside one of its own
/// bodies, with one thread, or when the loop is small: its iterations took
/// less than 20 microseconds of CPU time together by the most an
/// iteration of `body` has cost so far (measured on every call, per body
/// function), where waking the team would cost as much.
int attnParallelFor(AttnParallelBody body, void *ctx, int64_t trips);

/// Loops the hook has run, since the process started: on the calling
/// thread, and on the team.
struct AttnParallelStats {
  uint64_t inlineLoops;
  uint64_t teamLoops;
};
AttnParallelStats attnParallelStats(void);

/// Binds the hook to an OpenMP runtime by two of its functions:
/// `GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads,
/// unsigned flags)` (libgomp's entry point, which LLVM libomp and Intel's
/// runtime export too) and `int omp_get_max_threads(void)`. Null for both
/// unbinds it (compiled code then uses its own OpenMP runtime).
void attnParallelBindOpenMP(void *gompParallel, void *ompGetMaxThreads);

/// Whether the hook is bound to a runtime now.
bool attnParallelIsBound(void);

} // extern "C"

#endif // ATTN_RUNTIME_PARALLELFOR_H
