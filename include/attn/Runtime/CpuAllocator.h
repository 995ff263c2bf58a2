//===- CpuAllocator.h - caching allocator for compiled CPU code -*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What the Python package and attn-run install into the code they compile
// for the CPU (attn_set_allocator, docs/CpuABI.md): a compiled function's
// temporaries of 64 KiB and more go back to a cache when freed and are
// handed out again by size class, so that a function called many times
// reuses the pages of its previous call instead of faulting in fresh ones
// (glibc returns such blocks to the OS on free, and a multi-head
// attention's projections and heads are several MiB each).
//
// The cache holds at most ATTN_MLIR_ALLOCATOR_CACHE_MB MiB of free blocks
// (default 1024; 0: nothing is cached). With ATTN_MLIR_ALLOCATOR_POISON set
// (to anything but 0) every block is filled with 0xff bytes (NaN in every float
// type) when it is handed out: a function that reads a temporary before writing
// it then computes NaN, which tests see. Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CPUALLOCATOR_H
#define ATTN_RUNTIME_CPUALLOCATOR_H

#include <cstdint>
#include <cstdlib>
#include <cstring>

/// Whether ATTN_MLIR_ALLOCATOR_POISON asks for poisoned temporaries: set to
/// anything but "" or "0". The one reading of the allocator and of the CPU
/// pipeline, which poisons its stack tiles by it (the Python package reads
/// it by the same rule: _arrays.poison_requested).
inline bool attnCpuAllocatorPoisonRequested() {
  const char *value = std::getenv("ATTN_MLIR_ALLOCATOR_POISON");
  return value && *value && std::strcmp(value, "0") != 0;
}

extern "C" {

/// A block of at least `size` bytes, 64-byte aligned; null if the system
/// has no memory left.
void *attnCpuAlloc(uint64_t size);

/// Returns a block from attnCpuAlloc (null: nothing).
void attnCpuFree(void *pointer);

struct AttnCpuAllocatorStats {
  uint64_t reused;      ///< blocks handed out from the cache
  uint64_t fresh;       ///< blocks of cacheable size taken from the system
  uint64_t cachedBytes; ///< bytes of free blocks held now
};

AttnCpuAllocatorStats attnCpuAllocatorStats(void);

/// Gives every cached block back to the system.
void attnCpuAllocatorRelease(void);

} // extern "C"

#endif // ATTN_RUNTIME_CPUALLOCATOR_H
