/*===- mem_bandwidth.c - the machine's measured memory read bandwidth ----===*
 *
 * Part of attn-mlir, an MLIR-based attention compiler.
 *
 * Prints how fast one thread and all threads read memory that no cache
 * holds: the ceiling of work bound by reading its operands once, such as
 * decoding against a KV cache (every step reads all of K and V). The
 * benchmark tables divide such work's bytes by it (a "floor" time).
 *
 * Each thread sums its own contiguous share of a buffer several times the
 * size of the last-level cache, 64 bytes (a cache line) per step in eight
 * independent 8-byte lanes, so that the loads, not the additions, bound the
 * loop; the compiler vectorises it for the target's baseline ISA (no
 * assumption about the build machine). The buffer is written once before
 * timing (its pages are then resident), and each measurement is the best of
 * five passes. Bytes are counted as read (10^9 bytes per GB).
 *
 * Usage: attn-mem-bandwidth [threads [MiB]]   (default: every online CPU,
 * 1024 MiB)
 * Output, one line: "memory read bandwidth (<MiB> MiB): 1 thread A GB/s,
 * N threads B GB/s"; tools read the number before the last word.
 *
 *===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct Job {
  const uint64_t *begin;
  size_t words;
};

/* The sum of a job's words, eight lanes at a time (one cache line). */
static void *readJob(void *arg) {
  const struct Job *job = (const struct Job *)arg;
  uint64_t lanes[8] = {0};
  for (size_t i = 0; i + 8 <= job->words; i += 8)
    for (int l = 0; l < 8; ++l)
      lanes[l] += job->begin[i + l];
  uint64_t total = 0;
  for (int l = 0; l < 8; ++l)
    total += lanes[l];
  sink = total;
  return NULL;
}

/* GB/s of `threads` threads each reading 1/threads of `buffer`, best of
 * five passes. */
static double measure(const uint64_t *buffer, size_t words, int threads) {
  pthread_t ids[256];
  struct Job jobs[256];
  size_t share = words / (size_t)threads / 8 * 8;
  for (int t = 0; t < threads; ++t)
    jobs[t] = (struct Job){buffer + (size_t)t * share, share};
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    double start = now();
    for (int t = 0; t < threads; ++t)
      pthread_create(&ids[t], NULL, readJob, &jobs[t]);
    for (int t = 0; t < threads; ++t)
      pthread_join(ids[t], NULL);
    double rate =
        (double)share * threads * sizeof(uint64_t) / (now() - start) * 1e-9;
    if (rate > best)
      best = rate;
  }
  return best;
}

int main(int argc, char **argv) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = argc > 1 ? atoi(argv[1]) : (int)cpus;
  long mib = argc > 2 ? atol(argv[2]) : 1024;
  if (threads < 1 || threads > 256) {
    fprintf(stderr,
            "attn-mem-bandwidth: thread count must be in [1, 256], got %d\n",
            threads);
    return 1;
  }
  if (mib < 16 || mib > (1L << 20)) {
    fprintf(stderr,
            "attn-mem-bandwidth: buffer size must be in [16, 1048576] MiB, "
            "got %ld\n",
            mib);
    return 1;
  }
  size_t bytes = (size_t)mib << 20;
  uint64_t *buffer = (uint64_t *)malloc(bytes);
  if (!buffer) {
    fprintf(stderr, "attn-mem-bandwidth: cannot allocate %ld MiB\n", mib);
    return 1;
  }
  memset(buffer, 1, bytes);
  size_t words = bytes / sizeof(uint64_t);
  double one = measure(buffer, words, 1);
  double all = measure(buffer, words, threads);
  printf("memory read bandwidth (%ld MiB): 1 thread %.1f GB/s, %d thread%s "
         "%.1f GB/s\n",
         mib, one, threads, threads == 1 ? "" : "s", all);
  free(buffer);
  return 0;
}
