/*===- run_shared.c - call a compiled attn function on .npy files --------===*
 *
 * Part of attn-mlir, an MLIR-based attention compiler.
 *
 * A runner for code attnc compiled for another architecture: built for
 * that architecture too and run under qemu-user, it needs nothing of LLVM.
 *
 *   run_shared LIB.so NAME IN0.npy ... : LIKE0.npy ... : OUT0.npy ...
 *
 * loads LIB.so, passes each input as a dense memref descriptor
 * (docs/CpuABI.md), allocates one output per LIKE file (same dtype and
 * shape; attn-run --dump writes them), fills it with 0xFF bytes (NaN for
 * floats) so that an element the call does not write cannot pass a check,
 * calls _mlir_ciface_NAME and writes the outputs as .npy. Only tensor
 * parameters; rank up to 8; every failure is a message and exit 1.
 *
 *===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxRank = 8, kMaxParams = 16 };

/* A .npy array: its header text (dtype and order) and shape, its data. */
struct Array {
  char descr[16];
  int rank;
  int64_t shape[kMaxRank];
  size_t elementSize, count;
  void *data;
};

/* A memref descriptor of rank `kMaxRank` laid out as the rank-N one: the
 * callee reads only the first 3 + 2N fields. */
struct Descriptor {
  void *allocated, *aligned;
  int64_t offset;
  int64_t sizesAndStrides[2 * kMaxRank];
};

static void fail(const char *what, const char *path) {
  fprintf(stderr, "run_shared: %s: %s\n", path, what);
  exit(1);
}

static void readNpy(const char *path, struct Array *array) {
  FILE *f = fopen(path, "rb");
  if (!f)
    fail("cannot open", path);
  unsigned char magic[10];
  if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0)
    fail("not a .npy file", path);
  size_t headerLength = magic[8] | (magic[9] << 8);
  if (magic[6] != 1)
    fail("only .npy version 1.0 is read", path);
  char *header = calloc(headerLength + 1, 1);
  if (fread(header, 1, headerLength, f) != headerLength)
    fail("truncated header", path);
  const char *descr = strstr(header, "'descr': '");
  const char *order = strstr(header, "'fortran_order': False");
  const char *shape = strstr(header, "'shape': (");
  if (!descr || !order || !shape)
    fail("expected a C-order array with a dtype and shape", path);
  descr += strlen("'descr': '");
  size_t n = strcspn(descr, "'");
  if (n >= sizeof(array->descr))
    fail("dtype too long", path);
  memcpy(array->descr, descr, n);
  array->descr[n] = 0;
  array->elementSize = (size_t)atoi(array->descr + 2);
  if (array->elementSize == 0)
    fail("unknown dtype", path);
  const char *p = shape + strlen("'shape': (");
  array->rank = 0;
  array->count = 1;
  while (*p && *p != ')') {
    if (array->rank == kMaxRank)
      fail("rank above 8", path);
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p)
      break;
    array->shape[array->rank++] = d;
    array->count *= (size_t)d;
    p = end;
    while (*p == ',' || *p == ' ')
      ++p;
  }
  free(header);
  size_t bytes = array->count * array->elementSize;
  array->data = malloc(bytes ? bytes : 1);
  if (fread(array->data, 1, bytes, f) != bytes)
    fail("truncated data", path);
  fclose(f);
}

static void writeNpy(const char *path, const struct Array *array) {
  char shape[256] = "";
  for (int i = 0; i < array->rank; ++i) {
    char dim[32];
    snprintf(dim, sizeof dim, "%lld%s", (long long)array->shape[i],
             array->rank == 1 ? "," : (i + 1 < array->rank ? ", " : ""));
    strcat(shape, dim);
  }
  char header[512];
  int n = snprintf(header, sizeof header,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                   array->descr, shape);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f)
    fail("cannot write", path);
  unsigned headerLength = (unsigned)(n + pad + 1);
  unsigned char magic[10] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             (unsigned char)(headerLength & 0xFF),
                             (unsigned char)(headerLength >> 8)};
  fwrite(magic, 1, 10, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 0; i < pad; ++i)
    fputc(' ', f);
  fputc('\n', f);
  fwrite(array->data, array->elementSize, array->count, f);
  fclose(f);
}

static void describe(struct Array *array, struct Descriptor *d) {
  d->allocated = d->aligned = array->data;
  d->offset = 0;
  int64_t stride = 1;
  for (int i = array->rank - 1; i >= 0; --i) {
    d->sizesAndStrides[i] = array->shape[i];
    d->sizesAndStrides[array->rank + i] = stride;
    stride *= array->shape[i];
  }
}

typedef void (*Fn)(void *, void *, void *, void *, void *, void *, void *,
                   void *, void *, void *, void *, void *, void *, void *,
                   void *, void *);

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: run_shared LIB.so NAME IN.npy... : LIKE.npy... "
                    ": OUT.npy...\n");
    return 1;
  }
  void *library = dlopen(argv[1], RTLD_NOW);
  if (!library)
    fail(dlerror(), argv[1]);
  char symbol[256];
  snprintf(symbol, sizeof symbol, "_mlir_ciface_%s", argv[2]);
  Fn fn = (Fn)dlsym(library, symbol);
  if (!fn)
    fail("no such function", symbol);

  static struct Array arrays[kMaxParams];
  static struct Descriptor descriptors[kMaxParams];
  void *params[kMaxParams] = {0};
  const char *outPaths[kMaxParams];
  int numParams = 0, section = 0, numOutputs = 0, numLike = 0;
  for (int i = 3; i < argc; ++i) {
    if (strcmp(argv[i], ":") == 0) {
      ++section;
      continue;
    }
    if (section == 2) {
      if (numOutputs == kMaxParams)
        fail("too many outputs", argv[i]);
      outPaths[numOutputs++] = argv[i];
      continue;
    }
    if (numParams == kMaxParams)
      fail("more than 16 parameters", argv[i]);
    struct Array *array = &arrays[numParams];
    readNpy(argv[i], array);
    if (section == 1) {
      memset(array->data, 0xFF, array->count * array->elementSize);
      ++numLike;
    }
    describe(array, &descriptors[numParams]);
    params[numParams] = &descriptors[numParams];
    ++numParams;
  }
  if (numOutputs != numLike)
    fail("one output path per LIKE file", argv[0]);
  fn(params[0], params[1], params[2], params[3], params[4], params[5],
     params[6], params[7], params[8], params[9], params[10], params[11],
     params[12], params[13], params[14], params[15]);
  for (int i = 0; i < numOutputs; ++i)
    writeNpy(outPaths[i], &arrays[numParams - numOutputs + i]);
  return 0;
}
