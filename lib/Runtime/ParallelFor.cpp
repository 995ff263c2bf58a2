//===- ParallelFor.cpp - compiled loops on the host framework's threads ---===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/ParallelFor.h"

#include <algorithm>
#include <atomic>

namespace {

using GompParallelFn = void (*)(void (*)(void *), void *, unsigned, unsigned);
using MaxThreadsFn = int (*)();

/// The bound runtime: both functions set together, under one pointer so
/// that a concurrent call sees a whole binding or none.
struct Binding {
  GompParallelFn parallel;
  MaxThreadsFn maxThreads;
};
std::atomic<const Binding *> bound{nullptr};

/// Set while this thread runs iterations: a loop it starts then runs here
/// (the team is busy with the enclosing loop).
thread_local bool insideBody = false;

/// Chunks per thread: enough that threads finishing early take more work
/// from the slow ones (iterations differ, e.g. causal rows), few enough
/// that the shared counter is touched rarely.
constexpr int64_t kChunksPerThread = 8;

struct Job {
  AttnParallelBody body;
  void *ctx;
  int64_t trips;
  int64_t chunk;
  std::atomic<int64_t> next{0};
};

/// Each thread of the team: chunks in turn until none are left.
void runChunks(void *data) {
  Job &job = *static_cast<Job *>(data);
  bool enclosing = insideBody;
  insideBody = true;
  for (;;) {
    int64_t begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin >= job.trips)
      break;
    job.body(job.ctx, begin, std::min(job.trips, begin + job.chunk));
  }
  insideBody = enclosing;
}

} // namespace

extern "C" int attnParallelFor(AttnParallelBody body, void *ctx,
                               int64_t trips) {
  const Binding *binding = bound.load(std::memory_order_acquire);
  if (!binding)
    return 1;
  if (trips <= 0)
    return 0;
  int threads = insideBody ? 1 : binding->maxThreads();
  if (threads <= 1 || trips == 1) {
    bool enclosing = insideBody;
    insideBody = true;
    body(ctx, 0, trips);
    insideBody = enclosing;
    return 0;
  }
  Job job;
  job.body = body;
  job.ctx = ctx;
  job.trips = trips;
  job.chunk =
      std::max<int64_t>(1, trips / (int64_t(threads) * kChunksPerThread));
  // No more threads than chunks: a thread with nothing to take would only
  // be woken and wait at the region's end.
  int64_t chunks = (trips + job.chunk - 1) / job.chunk;
  binding->parallel(runChunks, &job,
                    static_cast<unsigned>(std::min<int64_t>(threads, chunks)),
                    /*flags=*/0);
  return 0;
}

extern "C" void attnParallelBindOpenMP(void *gompParallel,
                                       void *ompGetMaxThreads) {
  // Bindings are few (one per runtime a process binds) and a call may be
  // reading the previous one: they are kept, never freed.
  const Binding *binding = nullptr;
  if (gompParallel && ompGetMaxThreads)
    binding = new Binding{reinterpret_cast<GompParallelFn>(gompParallel),
                          reinterpret_cast<MaxThreadsFn>(ompGetMaxThreads)};
  bound.store(binding, std::memory_order_release);
}

extern "C" bool attnParallelIsBound(void) {
  return bound.load(std::memory_order_acquire) != nullptr;
}
