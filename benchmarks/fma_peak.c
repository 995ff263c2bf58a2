/*===- fma_peak.c - the machine's measured fp32 FMA peak -----------------===*
 *
 * Part of attn-mlir, an MLIR-based attention compiler.
 *
 * Prints the fp32 multiply-add throughput one thread and all threads reach
 * on independent register-resident chains: the ceiling the benchmark
 * tables divide by.
 *
 * Built for the baseline ISA of the target (nothing assumes the build
 * machine's), it carries one kernel per vector width: on x86-64 512-bit
 * (AVX-512F), 256-bit (AVX2 + FMA) and 128-bit (SSE2, multiply then add),
 * each compiled with a `target` attribute and run only where the CPU
 * reports the ISA; elsewhere one 128-bit kernel. Every kernel that runs is
 * timed on one thread and the fastest one is the peak (on CPUs that split
 * 512-bit operations in two, 256-bit is as fast). Each kernel keeps more
 * independent chains than FMA latency times FMA pipes on any current core
 * (4 cycles x 2 pipes = 8), so the measured rate is the pipes' throughput,
 * and no more than the register file holds (32 vector registers with
 * AVX-512, 16 otherwise, two of them for the operands).
 *
 * Usage: attn-fma-peak [threads]   (default: every online CPU)
 * Output, one line: "fp32 FMA peak (<isa>, <lanes> lanes x <chains>
 * chains): 1 thread A GFLOP/s, N threads B GFLOP/s"; tools read the number
 * before the last word.
 *
 *===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const long kIterations = 50000000;
static volatile float sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A kernel: `iterations` steps of `chains` independent a = a * x + y on
 * vectors of `lanes` floats. An empty asm keeps x opaque so the loop is not
 * folded away; the chain loop is unrolled so that the accumulators live in
 * registers; the "+x" constraint (an SSE/AVX register) is x86's, "+w"
 * (a SIMD register) AArch64's, "+r" the fallback. */
#if defined(__x86_64__) || defined(__i386__)
#define ATTN_OPAQUE(v) __asm__ volatile("" : "+x"(v))
#elif defined(__aarch64__)
#define ATTN_OPAQUE(v) __asm__ volatile("" : "+w"(v))
#else
#define ATTN_OPAQUE(v) __asm__ volatile("" : : "g"(&v) : "memory")
#endif

#define ATTN_DEFINE_KERNEL(name, attribute, lanes, chains)                     \
  attribute static float name(long iterations) {                               \
    typedef float vec __attribute__((vector_size((lanes) * sizeof(float))));   \
    vec acc[chains], x, y;                                                     \
    for (int l = 0; l < (lanes); ++l) {                                        \
      x[l] = 1.0000001f;                                                       \
      y[l] = 1e-7f;                                                            \
    }                                                                          \
    for (int c = 0; c < (chains); ++c)                                         \
      for (int l = 0; l < (lanes); ++l)                                        \
        acc[c][l] = (float)(c + l);                                            \
    for (long i = 0; i < iterations; ++i) {                                    \
      ATTN_OPAQUE(x);                                                          \
      _Pragma("GCC unroll 32") for (int c = 0; c < (chains); ++c) acc[c] =     \
          acc[c] * x + y;                                                      \
    }                                                                          \
    float total = 0;                                                           \
    for (int c = 0; c < (chains); ++c)                                         \
      for (int l = 0; l < (lanes); ++l)                                        \
        total += acc[c][l];                                                    \
    return total;                                                              \
  }

struct Kernel {
  const char *isa;
  int lanes, chains;
  float (*run)(long);
  int (*available)(void);
};

static int always(void) { return 1; }

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
ATTN_DEFINE_KERNEL(run512, __attribute__((target("avx512f"))), 16, 24)
ATTN_DEFINE_KERNEL(run256, __attribute__((target("avx2,fma"))), 8, 12)
ATTN_DEFINE_KERNEL(run128, , 4, 12)
static int hasAvx512(void) { return __builtin_cpu_supports("avx512f"); }
static int hasAvx2Fma(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static const struct Kernel kKernels[] = {
    {"avx512f", 16, 24, run512, hasAvx512},
    {"avx2+fma", 8, 12, run256, hasAvx2Fma},
    {"sse2", 4, 12, run128, always},
};
#elif defined(__aarch64__)
ATTN_DEFINE_KERNEL(run128, , 4, 24)
static const struct Kernel kKernels[] = {{"neon", 4, 24, run128, always}};
#else
ATTN_DEFINE_KERNEL(run128, , 4, 12)
static const struct Kernel kKernels[] = {{"generic", 4, 12, run128, always}};
#endif

struct Job {
  const struct Kernel *kernel;
  long iterations;
};

static void *runJob(void *arg) {
  const struct Job *job = (const struct Job *)arg;
  sink = job->kernel->run(job->iterations);
  return NULL;
}

/* GFLOP/s of `threads` threads running `kernel`, best of three runs. */
static double measure(const struct Kernel *kernel, int threads) {
  pthread_t ids[256];
  struct Job job = {kernel, kIterations / threads};
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    double start = now();
    for (int t = 0; t < threads; ++t)
      pthread_create(&ids[t], NULL, runJob, &job);
    for (int t = 0; t < threads; ++t)
      pthread_join(ids[t], NULL);
    double flops =
        2.0 * kernel->lanes * kernel->chains * (double)job.iterations * threads;
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
  const struct Kernel *best = NULL;
  double bestRate = 0;
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    if (!kKernels[i].available())
      continue;
    double rate = measure(&kKernels[i], 1);
    if (rate > bestRate) {
      bestRate = rate;
      best = &kKernels[i];
    }
  }
  printf("fp32 FMA peak (%s, %d lanes x %d chains): 1 thread %.1f GFLOP/s, "
         "%d threads %.1f GFLOP/s\n",
         best->isa, best->lanes, best->chains, bestRate, threads,
         measure(best, threads));
  return 0;
}
