/*===- c-abi-main.c - call attnc-compiled attention from C ----------------===*
 *
 * Part of attn-mlir, an MLIR-based attention compiler.
 *
 * Links against the shared library `attnc --emit=shared` made from
 * c-abi.mlir and includes the header `attnc --emit=header` wrote, as a user
 * would. Inputs are fresh random numbers, outputs are poisoned with NaN, and
 * every result is compared with a float64 attention computed here.
 *
 *===----------------------------------------------------------------------===*/

#include "c-abi.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t state;

/* Uniform in [-1, 1). */
static double uniform(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(state >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static float *random_buffer(int64_t n) {
  float *x = malloc(n * sizeof(float));
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)uniform();
  return x;
}

static float *poisoned_buffer(int64_t n) {
  float *x = malloc(n * sizeof(float));
  for (int64_t i = 0; i < n; ++i)
    x[i] = NAN;
  return x;
}

/* O[b,h,i,:] = softmax_j(K[b,h/G,j,:].Q[b,h,i,:] / sqrt(D)) V[b,h/G,j,:],
 * with key j > i masked out when `causal` (top-left alignment). */
static double *reference(const float *q, const float *k, const float *v,
                         int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq,
                         int64_t Skv, int64_t D, int64_t Dv, int causal) {
  double *o = calloc(B * Hq * Sq * Dv, sizeof(double));
  double *p = malloc(Skv * sizeof(double));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        int64_t g = h / (Hq / Hkv);
        const float *qr = q + ((b * Hq + h) * Sq + i) * D;
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < Skv; ++j) {
          const float *kr = k + ((b * Hkv + g) * Skv + j) * D;
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += (double)qr[d] * kr[d];
          p[j] = causal && j > i ? -INFINITY : s / sqrt((double)D);
          max = p[j] > max ? p[j] : max;
        }
        for (int64_t j = 0; j < Skv; ++j)
          sum += p[j] = exp(p[j] - max);
        double *orow = o + ((b * Hq + h) * Sq + i) * Dv;
        for (int64_t j = 0; j < Skv; ++j)
          for (int64_t e = 0; e < Dv; ++e)
            orow[e] += p[j] / sum * v[((b * Hkv + g) * Skv + j) * Dv + e];
      }
  free(p);
  return o;
}

/* A counting allocator for attn_set_allocator: blocks from malloc, filled
 * with NaN so that a temporary read before it is written shows. Compiled
 * code allocates from its worker threads too. */
static _Atomic int64_t allocations, releases;

static void *counting_alloc(uint64_t size) {
  ++allocations;
  void *block = malloc(size);
  memset(block, 0xff, size);
  return block;
}

static void counting_release(void *pointer) {
  ++releases;
  free(pointer);
}

/* Prints the relative error (Frobenius) and returns 1 above 1e-5. */
/* The descriptor of a dense [a, b, c, d] buffer. */
static attn_memref_f32_4d dense(float *p, int64_t a, int64_t b, int64_t c,
                                int64_t d) {
  attn_memref_f32_4d m = {p, p, 0, {a, b, c, d}, {0}};
  attn_set_contiguous_strides(4, m.sizes, m.strides);
  return m;
}

/* Prints what attn_abi_error says of a refused call, as "refused <what>:
 * status, error, argument, dimension, kind, expected, actual". */
static void print_refusal(const char *what, int32_t status) {
  int64_t info[5];
  int error = attn_abi_error(info);
  printf("refused %s: status %d error %d argument %lld dimension %lld kind "
         "%lld expected %lld actual %lld\n",
         what, status, error, (long long)info[0], (long long)info[1],
         (long long)info[2], (long long)info[3], (long long)info[4]);
}

/* A parallel-for of the host's own (attn_set_parallel_for): runs the
 * iterations in chunks of two, last chunk first, on this thread, and counts
 * them; `decline` makes it refuse every loop instead. */
static int64_t hosted_iterations, hosted_loops;
static int decline;

static int hosted_parallel_for(void (*body)(void *, int64_t, int64_t),
                               void *ctx, int64_t trips) {
  if (decline)
    return 1;
  ++hosted_loops;
  for (int64_t end = trips; end > 0; end -= 2) {
    int64_t begin = end >= 2 ? end - 2 : 0;
    body(ctx, begin, end);
    hosted_iterations += end - begin;
  }
  return 0;
}

static int check(const char *name, const float *got, const double *want,
                 int64_t n) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!isfinite(got[i])) {
      printf("%s: FAIL, element %lld is not finite\n", name, (long long)i);
      return 1;
    }
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  double err = sqrt(diff / norm);
  printf("%s: relative error %.3e %s\n", name, err, err < 1e-5 ? "ok" : "FAIL");
  return err >= 1e-5;
}

int main(void) {
  state = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
  printf("seed %llu\n", (unsigned long long)state);
  int failures = 0;

  /* Static shapes through the descriptor entry point. */
  {
    float *q = random_buffer(2 * 4 * 5 * 8), *k = random_buffer(2 * 2 * 7 * 8),
          *v = random_buffer(2 * 2 * 7 * 8),
          *o = poisoned_buffer(2 * 4 * 5 * 8);
    attn_memref_f32_4d dq = dense(q, 2, 4, 5, 8), dk = dense(k, 2, 2, 7, 8),
                       dv = dense(v, 2, 2, 7, 8), dout = dense(o, 2, 4, 5, 8);
    int32_t status = _mlir_ciface_static_gqa_causal(&dq, &dk, &dv, &dout);
    double *want = reference(q, k, v, 2, 4, 2, 5, 7, 8, 8, /*causal=*/1);
    failures += check("static_gqa_causal", o, want, 2 * 4 * 5 * 8);
    failures += status != 0 || attn_abi_error(NULL) != 0;

    /* Buffers that do not match what the function was compiled for are
     * refused, untouched, with the numbers: a wrong size, a transposed
     * layout's strides, a null pointer. */
    int64_t info[5];
    float *canary = poisoned_buffer(2 * 4 * 5 * 8);
    attn_memref_f32_4d small = dense(canary, 2, 4, 3, 8);
    status = _mlir_ciface_static_gqa_causal(&dq, &dk, &dv, &small);
    print_refusal("size", status);
    printf("refused size: output %s\n",
           isnan(canary[0]) ? "untouched" : "WRITTEN");
    printf("after the query: %d\n", attn_abi_error(NULL));
    attn_memref_f32_4d transposed = dk;
    transposed.strides[2] = 1, transposed.strides[3] = 7;
    status = _mlir_ciface_static_gqa_causal(&dq, &transposed, &dv, &dout);
    print_refusal("stride", status);
    attn_memref_f32_4d null = dv;
    null.allocated = null.aligned = NULL;
    status = _mlir_ciface_static_gqa_causal(&dq, &dk, &null, &dout);
    int error = attn_abi_error(info);
    printf("refused null: status %d error %d argument %lld kind %lld\n", status,
           error, (long long)info[0], (long long)info[2]);
    free(canary);
    free(q), free(k), free(v), free(o), free(want);
  }

  /* Dynamic shapes through the plain-pointer wrapper, temporaries from
   * the counting allocator: every block taken is given back. */
  attn_set_allocator(counting_alloc, counting_release);
  {
    const int64_t qs[4] = {3, 2, 9, 16}, ks[4] = {3, 2, 6, 16},
                  vs[4] = {3, 2, 6, 4}, os[4] = {3, 2, 9, 4};
    float *q = random_buffer(3 * 2 * 9 * 16),
          *k = random_buffer(3 * 2 * 6 * 16), *v = random_buffer(3 * 2 * 6 * 4),
          *o = poisoned_buffer(3 * 2 * 9 * 4);
    failures += attn_dynamic(q, qs, k, ks, v, vs, o, os) != 0;
    double *want = reference(q, k, v, 3, 2, 2, 9, 6, 16, 4, /*causal=*/0);
    failures += check("dynamic", o, want, 3 * 2 * 9 * 4);
    /* A negative size through the wrapper: refused. */
    const int64_t bad[4] = {3, 2, -9, 4};
    printf("refused negative: status %d\n",
           attn_dynamic(q, qs, k, ks, v, vs, o, bad));
    attn_abi_error(NULL);
    /* Sizes that must agree and do not: five values for six keys, an
     * output of eight rows for nine queries. Refused before anything is
     * read (the value buffer holds six keys) or written. */
    const int64_t fewer_values[4] = {3, 2, 5, 4}, fewer_rows[4] = {3, 2, 8, 4};
    float *canary = poisoned_buffer(3 * 2 * 9 * 4);
    memcpy(o, canary, sizeof(float) * 3 * 2 * 9 * 4);
    int status = attn_dynamic(q, qs, k, ks, v, fewer_values, o, os);
    print_refusal("unequal", status);
    status = attn_dynamic(q, qs, k, ks, v, vs, o, fewer_rows);
    print_refusal("output", status);
    printf("refused unequal: output %s\n",
           memcmp(o, canary, sizeof(float) * 3 * 2 * 9 * 4) ? "written"
                                                            : "untouched");
    free(canary);
    free(q), free(k), free(v), free(o), free(want);
  }
  printf("allocator: %s\n", allocations > 0 && allocations == releases
                                ? "every block released"
                                : "FAIL");
  printf("allocator: %lld blocks\n", (long long)allocations);
  failures += !(allocations > 0 && allocations == releases);
  /* Null functions restore malloc and free. */
  attn_set_allocator(NULL, NULL);
  int64_t counted = allocations;
  /* Inputs are const: a destination passed as an argument stays as it was. */
  {
    float *q = random_buffer(1 * 2 * 3 * 8),
          *init = random_buffer(1 * 2 * 3 * 8),
          *o = poisoned_buffer(1 * 2 * 3 * 8);
    float before[1 * 2 * 3 * 8];
    memcpy(before, init, sizeof(before));
    attn_init_argument(q, init, o);
    double *want = reference(q, q, q, 1, 2, 2, 3, 3, 8, 8, /*causal=*/0);
    failures += check("init_argument", o, want, 1 * 2 * 3 * 8);
    printf("allocator: %s after reset\n",
           allocations == counted ? "unused" : "USED");
    failures += allocations != counted;
    int untouched = memcmp(before, init, sizeof(before)) == 0;
    printf("init_argument: input %s\n", untouched ? "untouched" : "MODIFIED");
    failures += !untouched;
    free(q), free(init), free(o), free(want);
  }
  /* Views: query, key and value as [B, L, H, D] buffers (the key one row
   * into a larger buffer: an offset), passed as [B, H, L, D] by their
   * strides; the results are those of dense copies. A view whose last
   * dimension is not contiguous is refused. */
  {
    float *q = random_buffer(2 * 4 * 5 * 8), *k = random_buffer(2 * 2 * 7 * 8),
          *v = random_buffer(2 * 2 * 7 * 8),
          *o = poisoned_buffer(2 * 4 * 5 * 8);
    /* [b, l, h, d] -> [b, h, l, d] */
    float *qt = malloc(2 * 5 * 4 * 8 * sizeof(float)),
          *kt = malloc((2 * 7 * 2 * 8 + 16) * sizeof(float)),
          *vt = malloc(2 * 7 * 2 * 8 * sizeof(float));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t l = 0; l < 7; ++l)
          for (int64_t d = 0; d < 8; ++d) {
            if (l < 5)
              qt[((b * 5 + l) * 4 + h) * 8 + d] =
                  q[((b * 4 + h) * 5 + l) * 8 + d];
            if (h < 2) {
              kt[16 + ((b * 7 + l) * 2 + h) * 8 + d] =
                  k[((b * 2 + h) * 7 + l) * 8 + d];
              vt[((b * 7 + l) * 2 + h) * 8 + d] =
                  v[((b * 2 + h) * 7 + l) * 8 + d];
            }
          }
    attn_memref_f32_4d dq = {qt, qt, 0, {2, 4, 5, 8}, {5 * 4 * 8, 8, 4 * 8, 1}},
                       dk = {kt,
                             kt,
                             16,
                             {2, 2, 7, 8},
                             {7 * 2 * 8, 8, 2 * 8, 1}},
                       dv = {vt, vt, 0, {2, 2, 7, 8}, {7 * 2 * 8, 8, 2 * 8, 1}},
                       dout = dense(o, 2, 4, 5, 8);
    int32_t status = _mlir_ciface_views(&dq, &dk, &dv, &dout);
    double *want = reference(q, k, v, 2, 4, 2, 5, 7, 8, 8, /*causal=*/1);
    failures += check("views", o, want, 2 * 4 * 5 * 8);
    failures += status != 0;
    attn_memref_f32_4d columns = dv;
    columns.strides[3] = 2;
    status = _mlir_ciface_views(&dq, &dk, &columns, &dout);
    print_refusal("view", status);
    free(qt), free(kt), free(vt);
    free(q), free(k), free(v), free(o), free(want);
  }
  /* A destination: the output written through the [B, H, L, D] view of a
   * [B, L, H, D] buffer, one row of it in (an offset); the rows around the
   * view stay as they were. A view whose last dimension is not contiguous
   * is refused. */
  {
    float *q = random_buffer(2 * 4 * 5 * 8), *k = random_buffer(2 * 2 * 7 * 8),
          *v = random_buffer(2 * 2 * 7 * 8),
          *blhd = poisoned_buffer(2 * 5 * 4 * 8 + 64),
          *o = malloc(2 * 4 * 5 * 8 * sizeof(float));
    attn_memref_f32_4d dq = dense(q, 2, 4, 5, 8), dk = dense(k, 2, 2, 7, 8),
                       dv = dense(v, 2, 2, 7, 8),
                       dout = {blhd,
                               blhd,
                               32,
                               {2, 4, 5, 8},
                               {5 * 4 * 8, 8, 4 * 8, 1}};
    int32_t status = _mlir_ciface_destination(&dq, &dk, &dv, &dout);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t l = 0; l < 5; ++l)
          for (int64_t d = 0; d < 8; ++d)
            o[((b * 4 + h) * 5 + l) * 8 + d] =
                blhd[32 + ((b * 5 + l) * 4 + h) * 8 + d];
    double *want = reference(q, k, v, 2, 4, 2, 5, 7, 8, 8, /*causal=*/1);
    failures += check("destination", o, want, 2 * 4 * 5 * 8);
    failures += status != 0;
    int around = 1;
    for (int64_t i = 0; i < 32; ++i)
      around &= isnan(blhd[i]) && isnan(blhd[32 + 2 * 5 * 4 * 8 + i]);
    printf("destination: around the view %s\n",
           around ? "untouched" : "WRITTEN");
    failures += !around;
    attn_memref_f32_4d columns = dout;
    columns.strides[3] = 2;
    status = _mlir_ciface_destination(&dq, &dk, &dv, &columns);
    print_refusal("destination", status);
    free(q), free(k), free(v), free(blhd), free(o), free(want);
  }
  /* The host's thread pool: the static function's loop runs through it
   * (every iteration once, any order); a declining pool or none at all
   * leaves the loop to the library's OpenMP runtime. Same results. */
  if (!attn_set_parallel_for) {
    printf("parallel_for: FAIL (not exported)\n");
    return 1;
  }
  {
    float *q = random_buffer(2 * 4 * 5 * 8), *k = random_buffer(2 * 2 * 7 * 8),
          *v = random_buffer(2 * 2 * 7 * 8);
    double *want = reference(q, k, v, 2, 4, 2, 5, 7, 8, 8, /*causal=*/1);
    for (int mode = 0; mode < 3; ++mode) {
      float *o = poisoned_buffer(2 * 4 * 5 * 8);
      attn_memref_f32_4d dq = dense(q, 2, 4, 5, 8), dk = dense(k, 2, 2, 7, 8),
                         dv = dense(v, 2, 2, 7, 8), dout = dense(o, 2, 4, 5, 8);
      decline = mode == 1;
      attn_set_parallel_for(mode == 2 ? NULL : hosted_parallel_for);
      hosted_loops = hosted_iterations = 0;
      failures += _mlir_ciface_static_gqa_causal(&dq, &dk, &dv, &dout) != 0;
      const char *names[] = {"parallel_for hosted", "parallel_for declined",
                             "parallel_for reset"};
      failures += check(names[mode], o, want, 2 * 4 * 5 * 8);
      printf("%s: %lld loops, %lld iterations\n", names[mode],
             (long long)hosted_loops, (long long)hosted_iterations);
      failures += mode == 0 ? hosted_loops == 0 : hosted_loops != 0;
      free(o);
    }
    free(q), free(k), free(v), free(want);
  }
  return failures != 0;
}
