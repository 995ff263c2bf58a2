//===- ParallelFor.cpp - compiled loops on the host framework's threads ---===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/ParallelFor.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>

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

/// Loops whose iterations together take less than this on one thread run
/// on the calling thread: waking the team costs about as much, and beside
/// a busy process a region waits for its preempted threads. (torch runs its
/// small operators on the calling thread for the same reason: its grain
/// sizes.)
constexpr int64_t kInlineNanos = 20000;

/// The calling thread's CPU time: what a body costs, without the time
/// its thread spent preempted (beside a busy process a wall clock would
/// make every loop look large).
int64_t threadNanos() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

/// The most an iteration of a body has cost on one thread, in nanoseconds
/// of CPU time, learnt from its calls (-1: not yet called). The most, not the
/// last: a shape-generic body called for a long sequence after short ones keeps
/// its threads.
struct Cost {
  std::atomic<AttnParallelBody> body{nullptr};
  std::atomic<int64_t> nanosPerTrip{-1};
};

/// One cost per body function, open-addressed; when a probe finds no
/// room, the body gets no estimate (its loops keep their threads).
constexpr size_t kCosts = 1024;
constexpr size_t kProbes = 16;
Cost costs[kCosts];

Cost *findCost(AttnParallelBody body) {
  size_t start = (reinterpret_cast<uintptr_t>(body) >> 4) % kCosts;
  for (size_t probe = 0; probe < kProbes; ++probe) {
    Cost &cost = costs[(start + probe) % kCosts];
    AttnParallelBody seen = cost.body.load(std::memory_order_acquire);
    if (!seen && cost.body.compare_exchange_strong(seen, body))
      return &cost;
    if (seen == body)
      return &cost;
  }
  return nullptr;
}

void recordCost(Cost *cost, int64_t nanos, int64_t trips) {
  if (!cost)
    return;
  int64_t perTrip = std::max<int64_t>(0, nanos) / trips;
  int64_t known = cost->nanosPerTrip.load(std::memory_order_relaxed);
  while (perTrip > known && !cost->nanosPerTrip.compare_exchange_weak(
                                known, perTrip, std::memory_order_relaxed))
    ;
}

/// Whether `trips` iterations of a body that cost `perTrip` each are
/// cheaper than waking the team.
bool isSmall(int64_t perTrip, int64_t trips) {
  int64_t total;
  return perTrip >= 0 && !__builtin_mul_overflow(perTrip, trips, &total) &&
         total < kInlineNanos;
}

std::atomic<uint64_t> inlineLoops{0}, teamLoops{0};

struct Job {
  AttnParallelBody body;
  void *ctx;
  int64_t trips;
  int64_t chunk;
  std::atomic<int64_t> next{0};
  /// CPU time the team's threads spent in the body, summed.
  std::atomic<int64_t> busyNanos{0};
};

/// Each thread of the team: chunks in turn until none are left.
void runChunks(void *data) {
  Job &job = *static_cast<Job *>(data);
  bool enclosing = insideBody;
  insideBody = true;
  int64_t busy = 0;
  for (;;) {
    int64_t begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin >= job.trips)
      break;
    int64_t start = threadNanos();
    job.body(job.ctx, begin, std::min(job.trips, begin + job.chunk));
    busy += threadNanos() - start;
  }
  job.busyNanos.fetch_add(busy, std::memory_order_relaxed);
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
  Cost *cost = findCost(body);
  int64_t perTrip =
      cost ? cost->nanosPerTrip.load(std::memory_order_relaxed) : -1;
  if (threads <= 1 || trips == 1 || isSmall(perTrip, trips)) {
    inlineLoops.fetch_add(1, std::memory_order_relaxed);
    bool enclosing = insideBody;
    insideBody = true;
    int64_t start = threadNanos();
    body(ctx, 0, trips);
    recordCost(cost, threadNanos() - start, trips);
    insideBody = enclosing;
    return 0;
  }
  teamLoops.fetch_add(1, std::memory_order_relaxed);
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
  recordCost(cost, job.busyNanos.load(std::memory_order_relaxed), trips);
  return 0;
}

extern "C" AttnParallelStats attnParallelStats(void) {
  return {inlineLoops.load(std::memory_order_relaxed),
          teamLoops.load(std::memory_order_relaxed)};
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
