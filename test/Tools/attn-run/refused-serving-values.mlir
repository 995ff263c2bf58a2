// The values a compiled paged function reads from its parameters are
// checked before anything else (attn-record-abi-sizes, attn-check-abi), and
// attn-run names the refused element: a key length past the 64 keys its
// block table row holds (kind 5), and a block table entry of a page holding
// keys outside the cache's 9 pages (kind 6), where the lowering would attend
// over fewer keys than asked or read another sequence's page. Entries past a
// sequence's keys may hold anything.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; g = np.random.default_rng(5); \
// RUN:   np.save('%t/q.npy', g.standard_normal((2, 4, 1, 16)).astype(np.float32)); \
// RUN:   np.save('%t/kc.npy', g.standard_normal((9, 16, 4, 16)).astype(np.float32)); \
// RUN:   t = np.array([[3, 1, 4, 0], [2, 8, -1, 600]], np.int32); np.save('%t/pt.npy', t); \
// RUN:   np.save('%t/lens.npy', np.array([64, 17], np.int32)); \
// RUN:   np.save('%t/long.npy', np.array([64, 65], np.int32)); \
// RUN:   np.save('%t/more.npy', np.array([64, 33], np.int32))"
// RUN: attn-run %s --entry=paged --check --inputs=%t/q.npy,%t/kc.npy,%t/pt.npy,%t/lens.npy | FileCheck %s --check-prefix=OK
// OK: relative error {{.*}} ok
// RUN: not attn-run %s --entry=paged --inputs=%t/q.npy,%t/kc.npy,%t/pt.npy,%t/long.npy 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: error: @paged refused its buffers: input #3 (tensor<2xi32>): element 1 is 65, outside [0, 64 (the function's static extent)]
// RUN: not attn-run %s --entry=paged --inputs=%t/q.npy,%t/kc.npy,%t/pt.npy,%t/more.npy 2>&1 | FileCheck %s --check-prefix=PAGE
// PAGE: error: @paged refused its buffers: input #2 (tensor<2x4xi32>): element [1, 2] is -1, a page the function reads keys from or writes rows into, outside the cache's 9 pages [0, 9)

// Rows appended into pages (3 new rows per sequence): a position whose
// rows would run past the 64 keys of its table row (kind 7), a page
// written outside the cache (kind 6), two sequences writing one page
// (kind 8). Nothing is written: the caller's cache keeps its values.
// RUN: %python -c "import numpy as np; g = np.random.default_rng(6); \
// RUN:   np.save('%t/rows.npy', g.standard_normal((2, 4, 3, 16)).astype(np.float32)); \
// RUN:   np.save('%t/ok_pos.npy', np.array([61, 15], np.int64)); \
// RUN:   np.save('%t/far.npy', np.array([3, 62], np.int64)); \
// RUN:   np.save('%t/out.npy', np.array([30, 33], np.int64)); \
// RUN:   t = np.array([[3, 1, 4, 0], [2, 8, 1, 5]], np.int32); np.save('%t/shared.npy', t); \
// RUN:   np.save('%t/own.npy', np.array([[3, 1, 4, 0], [2, 8, 6, 5]], np.int32)); \
// RUN:   np.save('%t/bad.npy', np.array([[3, 1, 4, 0], [2, 8, 9, 5]], np.int32))"
// RUN: attn-run %s --entry=append --check --inputs=%t/rows.npy,%t/kc.npy,%t/own.npy,%t/ok_pos.npy | FileCheck %s --check-prefix=OK
// RUN: not attn-run %s --entry=append --inputs=%t/rows.npy,%t/kc.npy,%t/own.npy,%t/far.npy 2>&1 | FileCheck %s --check-prefix=FAR
// FAR: error: @append refused its buffers: input #3 (tensor<2xi64>): element 1 is 62: the rows appended from there must fit the sequence's row of the block table, so it must lie in [0, 61]
// RUN: not attn-run %s --entry=append --inputs=%t/rows.npy,%t/kc.npy,%t/bad.npy,%t/out.npy 2>&1 | FileCheck %s --check-prefix=OUT
// OUT: error: @append refused its buffers: input #2 (tensor<2x4xi32>): element [1, 2] is 9, a page the function reads keys from or writes rows into, outside the cache's 9 pages [0, 9)
// RUN: not attn-run %s --entry=append --inputs=%t/rows.npy,%t/kc.npy,%t/shared.npy,%t/out.npy 2>&1 | FileCheck %s --check-prefix=SHARED
// SHARED: error: @append refused its buffers: input #2 (tensor<2x4xi32>): sequences 0 and 1 both append rows into page 1: sequences must not share the pages they write

func.func @append(%rows: tensor<2x4x3x16xf32>, %kc: tensor<9x16x4x16xf32>,
                  %pt: tensor<2x4xi32>, %pos: tensor<2xi64>) -> tensor<9x16x4x16xf32> {
  %c = attn.append_pages %rows into %kc[%pt] at %pos
     : tensor<2x4x3x16xf32>, tensor<9x16x4x16xf32>, tensor<2x4xi32>, tensor<2xi64> -> tensor<9x16x4x16xf32>
  return %c : tensor<9x16x4x16xf32>
}

func.func @paged(%q: tensor<2x4x1x16xf32>, %kc: tensor<9x16x4x16xf32>,
                 %pt: tensor<2x4xi32>, %lens: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
  %k = attn.gather_pages %kc[%pt] : tensor<9x16x4x16xf32>, tensor<2x4xi32> -> tensor<2x4x64x16xf32>
  %e = tensor.empty() : tensor<2x4x1x16xf32>
  %o = attn.sdpa %q, %k, %k kv_lens(%lens : tensor<2xi32>) outs(%e)
     : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}
