//===- CpuAllocator.cpp - caching allocator for compiled CPU code ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CpuAllocator.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

/// Each block starts with a header holding its size class; the caller's
/// pointer follows it, 64-byte aligned like the block.
constexpr uint64_t kHeader = 64;

/// Smaller blocks go straight back to malloc, whose own free lists serve
/// them without faulting.
constexpr uint64_t kMinCached = 64 << 10;

/// The size class of a request: sizes of 64 KiB and more rounded up to an
/// eighth of their power of two (at most 12.5% unused), so that sizes that
/// differ a little (shape-generic code) share blocks.
uint64_t getSizeClass(uint64_t size) {
  if (size < kMinCached)
    return (size + 63) / 64 * 64;
  uint64_t step = (uint64_t{1} << (63 - __builtin_clzll(size))) / 8;
  return (size + step - 1) / step * step;
}

uint64_t getCacheLimit() {
  const char *value = std::getenv("ATTN_MLIR_ALLOCATOR_CACHE_MB");
  if (!value || !*value)
    return uint64_t{1024} << 20;
  char *end = nullptr;
  unsigned long long mib = std::strtoull(value, &end, 10);
  return *end ? uint64_t{1024} << 20 : uint64_t{mib} << 20;
}

struct Cache {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::vector<void *>> blocks; // by size class
  AttnCpuAllocatorStats stats{};
  const uint64_t limit = getCacheLimit();
  const bool poison = attnCpuAllocatorPoisonRequested();
};

/// Never destroyed: compiled code may free a block while the process exits.
Cache &getCache() {
  static Cache *cache = new Cache();
  return *cache;
}

char *getHeader(void *pointer) {
  return static_cast<char *>(pointer) - kHeader;
}

} // namespace

void *attnCpuAlloc(uint64_t size) {
  Cache &cache = getCache();
  uint64_t sizeClass = getSizeClass(size);
  void *block = nullptr;
  if (sizeClass >= kMinCached) {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.blocks.find(sizeClass);
    if (it != cache.blocks.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      cache.stats.cachedBytes -= sizeClass;
      ++cache.stats.reused;
    } else {
      ++cache.stats.fresh;
    }
  }
  if (!block) {
    void *base = std::aligned_alloc(64, kHeader + sizeClass);
    if (!base)
      return nullptr;
    std::memcpy(base, &sizeClass, sizeof(sizeClass));
    block = static_cast<char *>(base) + kHeader;
  }
  if (cache.poison)
    std::memset(block, 0xff, sizeClass);
  return block;
}

void attnCpuFree(void *pointer) {
  if (!pointer)
    return;
  Cache &cache = getCache();
  uint64_t sizeClass;
  std::memcpy(&sizeClass, getHeader(pointer), sizeof(sizeClass));
  if (sizeClass >= kMinCached) {
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (cache.stats.cachedBytes + sizeClass <= cache.limit) {
      cache.blocks[sizeClass].push_back(pointer);
      cache.stats.cachedBytes += sizeClass;
      return;
    }
  }
  std::free(getHeader(pointer));
}

AttnCpuAllocatorStats attnCpuAllocatorStats(void) {
  Cache &cache = getCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.stats;
}

void attnCpuAllocatorRelease(void) {
  Cache &cache = getCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (auto &[sizeClass, blocks] : cache.blocks)
    for (void *block : blocks)
      std::free(getHeader(block));
  cache.blocks.clear();
  cache.stats.cachedBytes = 0;
}
