// ===- sdpa_libs.c - one attention from several builds, interleaved --=== //
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Times `_mlir_ciface_sdpa` of several shared libraries that attnc made of
// the same f32 module [1, H, S, D] (e.g. one per compiler build or pipeline
// option), call by call in turn on the same random inputs, and prints each
// one's minimum and median, GFLOP/s (of the minimum), its speedup over the
// first library (minimum and median) and its largest absolute difference
// from the first one's output.
//
//   build/bin/attn-sdpa-libs S D CALLS ./old.so ./new.so      (H=8 default;
//   CAUSAL=1 halves the FLOPs)
//
// ===----------------------------------------------------------------------===
// //
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef struct {
  float *a, *p;
  int64_t off, sizes[4], strides[4];
} M4;
typedef int (*F)(M4 *, M4 *, M4 *, M4 *);
static void init(M4 *m, int H, int S, int D) {
  size_t n = (size_t)H * S * D;
  m->a = m->p = aligned_alloc(64, n * 4);
  m->off = 0;
  int64_t s[4] = {1, H, S, D};
  for (int i = 0; i < 4; i++)
    m->sizes[i] = s[i];
  m->strides[3] = 1;
  m->strides[2] = D;
  m->strides[1] = (int64_t)S * D;
  m->strides[0] = (int64_t)H * S * D;
  for (size_t i = 0; i < n; i++)
    m->p[i] = (float)((double)rand() / RAND_MAX - 0.5);
}
static double now() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int S = atoi(argv[1]), D = atoi(argv[2]), n = atoi(argv[3]);
  int H = getenv("H") ? atoi(getenv("H")) : 8;
  int causal = getenv("CAUSAL") != 0;
  int nl = argc - 4;
  F f[16];
  double best[16], *times[16];
  M4 o[16];
  M4 q, k, v;
  init(&q, H, S, D);
  init(&k, H, S, D);
  init(&v, H, S, D);
  for (int i = 0; i < nl; i++) {
    void *h = dlopen(argv[4 + i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("%s\n", dlerror());
      return 1;
    }
    f[i] = (F)dlsym(h, "_mlir_ciface_sdpa");
    if (!f[i]) {
      fprintf(stderr, "%s has no _mlir_ciface_sdpa\n", argv[4 + i]);
      return 1;
    }
    best[i] = 1e9;
    times[i] = malloc(sizeof(double) * n);
    init(&o[i], H, S, D);
    if (f[i](&q, &k, &v, &o[i]) != 0) {
      fprintf(
          stderr,
          "%s refused the buffers: is it compiled for [1, %d, %d, %d] f32?\n",
          argv[4 + i], H, S, D);
      return 1;
    }
  }
  for (int r = 0; r < n; r++)
    for (int i = 0; i < nl; i++) {
      double t = now();
      f[i](&q, &k, &v, &o[i]);
      t = now() - t;
      times[i][r] = t;
      if (t < best[i])
        best[i] = t;
    }
  double median[16];
  for (int i = 0; i < nl; i++) {
    qsort(times[i], n, sizeof(double), compare);
    median[i] = times[i][n / 2];
  }
  double fl = 4.0 * H * S * (double)S * D * (causal ? 0.5 : 1);
  for (int i = 0; i < nl; i++) {
    double md = 0;
    size_t N = (size_t)H * S * D;
    for (size_t j = 0; j < N; j++) {
      double d = fabs(o[i].p[j] - o[0].p[j]);
      if (d > md)
        md = d;
    }
    printf("%-40s %8.3f ms (median %8.3f) %6.1f GFLOP/s  %.3fx (median "
           "%.3fx)  maxdiff %.2g\n",
           argv[4 + i], best[i] * 1e3, median[i] * 1e3, fl / best[i] * 1e-9,
           best[0] / best[i], median[0] / median[i], md);
  }
}
