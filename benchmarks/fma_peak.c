/*===- fma_peak.c - the machine's measured fp32 FMA peak -----------------===*
 *
 * Part of attn-mlir, an MLIR-based attention compiler.
 *
 * Prints the fp32 multiply-add throughput one thread and all threads reach
 * on independent register-resident chains: the ceiling the benchmark
 * tables divide by. Built with -march=native, so the vectors are as wide as
 * the build machine's (AVX-512 here); 16 chains hide the FMA latency.
 *
 * Usage: attn-fma-peak [threads]   (default: every online CPU)
 *
 *===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { kLanes = 16, kChains = 16 };
typedef float vec __attribute__((vector_size(kLanes * sizeof(float))));

static const long kIterations = 100000000;
static volatile float sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *chains(void *arg) {
  long iterations = *(const long *)arg;
  vec acc[kChains], x, y;
  for (int l = 0; l < kLanes; ++l) {
    x[l] = 1.0000001f;
    y[l] = 1e-7f;
  }
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l)
      acc[c][l] = (float)(c + l);
  for (long i = 0; i < iterations; ++i) {
    /* An empty asm keeps x opaque so the loop is not folded away. */
    __asm__ volatile("" : "+x"(x));
    for (int c = 0; c < kChains; ++c)
      acc[c] = acc[c] * x + y;
  }
  float total = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l)
      total += acc[c][l];
  sink = total;
  return NULL;
}

/* GFLOP/s of `threads` threads, best of three runs. */
static double measure(int threads) {
  pthread_t ids[256];
  long perThread = kIterations / threads;
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    double start = now();
    for (int t = 0; t < threads; ++t)
      pthread_create(&ids[t], NULL, chains, &perThread);
    for (int t = 0; t < threads; ++t)
      pthread_join(ids[t], NULL);
    double flops = 2.0 * kLanes * kChains * (double)perThread * threads;
    double rate = flops / (now() - start) * 1e-9;
    if (rate > best)
      best = rate;
  }
  return best;
}

int main(int argc, char **argv) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = argc > 1 ? atoi(argv[1]) : (int)cpus;
  if (threads < 1 || threads > 256) {
    fprintf(stderr, "attn-fma-peak: thread count must be in [1, 256], got %d\n",
            threads);
    return 1;
  }
  printf("fp32 FMA peak: 1 thread %.1f GFLOP/s, %d threads %.1f GFLOP/s\n",
         measure(1), threads, measure(threads));
  return 0;
}
