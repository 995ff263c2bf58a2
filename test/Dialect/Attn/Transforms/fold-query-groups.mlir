// RUN: attn-opt %s --attn-fold-query-groups --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-fold-query-groups=max-rows=2 --split-input-file | FileCheck %s --check-prefix=SMALL

// Decode with GQA (Hq 8 over Hkv 2, one row): the four query heads of a
// group become four rows of one head, the destination and the log-sum-exp
// likewise, and the results are reshaped back; K and V are untouched.
// CHECK-LABEL: func.func @decode_gqa
// CHECK: %[[QS:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [3, 2, 4, 1, 64] : tensor<3x8x1x64xf32> into tensor<3x2x4x1x64xf32>
// CHECK: %[[Q:.*]] = tensor.collapse_shape %[[QS]] {{\[}}[0], [1], [2, 3], [4]] : tensor<3x2x4x1x64xf32> into tensor<3x2x4x64xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [3, 2, 4, 1, 32]
// CHECK: %[[LS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3]] output_shape [3, 2, 4, 1] : tensor<3x8x1xf32> into tensor<3x2x4x1xf32>
// CHECK: %[[L:.*]] = tensor.collapse_shape %[[LS]] {{\[}}[0], [1], [2, 3]] : tensor<3x2x4x1xf32> into tensor<3x2x4xf32>
// CHECK: %[[R:.*]], %[[LSE:.*]] = attn.sdpa %[[Q]], %arg1, %arg2 mask(%arg3 : tensor<3x1x1x100xi1>) kv_lens(%arg4 : tensor<3xi64>) outs(%{{.*}}) lse(%[[L]] : tensor<3x2x4xf32>) scale = 1.250000e-01 : tensor<3x2x4x64xf32>, tensor<3x2x100x64xf32>, tensor<3x2x100x32xf32> -> tensor<3x2x4x32xf32>, tensor<3x2x4xf32>
// CHECK: %[[RS:.*]] = tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3], [4]] output_shape [3, 2, 4, 1, 32] : tensor<3x2x4x32xf32> into tensor<3x2x4x1x32xf32>
// CHECK: %[[O:.*]] = tensor.collapse_shape %[[RS]] {{\[}}[0], [1, 2], [3], [4]] : tensor<3x2x4x1x32xf32> into tensor<3x8x1x32xf32>
// CHECK: %[[LSES:.*]] = tensor.expand_shape %[[LSE]] {{\[}}[0], [1], [2, 3]] output_shape [3, 2, 4, 1] : tensor<3x2x4xf32> into tensor<3x2x4x1xf32>
// CHECK: %[[LSEO:.*]] = tensor.collapse_shape %[[LSES]] {{\[}}[0], [1, 2], [3]] : tensor<3x2x4x1xf32> into tensor<3x8x1xf32>
// CHECK: return %[[O]], %[[LSEO]]
// Rows past max-rows (4 > 2) stay as they are.
// SMALL-LABEL: func.func @decode_gqa
// SMALL-NOT: tensor.expand_shape
// SMALL: attn.sdpa %arg0
func.func @decode_gqa(%q: tensor<3x8x1x64xf32>, %k: tensor<3x2x100x64xf32>,
                      %v: tensor<3x2x100x32xf32>, %m: tensor<3x1x1x100xi1>,
                      %lens: tensor<3xi64>)
    -> (tensor<3x8x1x32xf32>, tensor<3x8x1xf32>) {
  %e = tensor.empty() : tensor<3x8x1x32xf32>
  %l = tensor.empty() : tensor<3x8x1xf32>
  %o, %lse = attn.sdpa %q, %k, %v mask(%m : tensor<3x1x1x100xi1>)
       kv_lens(%lens : tensor<3xi64>) outs(%e) lse(%l : tensor<3x8x1xf32>)
       scale = 0.125
     : tensor<3x8x1x64xf32>, tensor<3x2x100x64xf32>, tensor<3x2x100x32xf32>
       -> tensor<3x8x1x32xf32>, tensor<3x8x1xf32>
  return %o, %lse : tensor<3x8x1x32xf32>, tensor<3x8x1xf32>
}

// -----

// A few query rows with a dynamic batch and cache length (speculative
// decoding: 3 rows, G = 2): rows g * 3 + i.
// CHECK-LABEL: func.func @rows_dynamic_batch
// CHECK: %[[B:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [%[[B]], 2, 2, 3, 16] : tensor<?x4x3x16xf16> into tensor<?x2x2x3x16xf16>
// CHECK: attn.sdpa %{{.*}} : tensor<?x2x6x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16> -> tensor<?x2x6x16xf16>
func.func @rows_dynamic_batch(%q: tensor<?x4x3x16xf16>, %k: tensor<?x2x?x16xf16>,
                              %v: tensor<?x2x?x16xf16>, %e: tensor<?x4x3x16xf16>)
    -> tensor<?x4x3x16xf16> {
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<?x4x3x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16> -> tensor<?x4x3x16xf16>
  return %o : tensor<?x4x3x16xf16>
}

// -----

// What depends on the query row or head is left alone: causal (row i of
// head g would see keys up to g * Sq + i), a mask that differs per head,
// a score_mod (it reads the head and row), dropout, a dynamic Sq, and
// heads without groups.
// CHECK-LABEL: func.func @not_folded
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @not_folded(%q: tensor<1x4x2x16xf32>, %k: tensor<1x2x9x16xf32>,
                      %v: tensor<1x2x9x16xf32>, %m: tensor<1x4x1x9xi1>,
                      %qd: tensor<1x4x?x16xf32>, %ed: tensor<1x4x?x16xf32>,
                      %k4: tensor<1x4x9x16xf32>)
    -> (tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>,
        tensor<1x4x2x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x2x16xf32>) {
  %e = tensor.empty() : tensor<1x4x2x16xf32>
  %causal = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x2x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x2x16xf32>
  %per_head = attn.sdpa %q, %k, %v mask(%m : tensor<1x4x1x9xi1>) outs(%e)
     : tensor<1x4x2x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x2x16xf32>
  %modded = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x4x2x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x2x16xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %hi = arith.index_cast %h : index to i64
       %hf = arith.sitofp %hi : i64 to f32
       %r = arith.addf %s, %hf : f32
       attn.yield %r : f32
     }
  %dropped = attn.sdpa %q, %k, %v outs(%e) dropout = 0.5 seed = 3
     : tensor<1x4x2x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x2x16xf32>
  %dynamic = attn.sdpa %qd, %k, %v outs(%ed)
     : tensor<1x4x?x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x?x16xf32>
  %mha = attn.sdpa %q, %k4, %k4 outs(%e)
     : tensor<1x4x2x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x9x16xf32> -> tensor<1x4x2x16xf32>
  return %causal, %per_head, %modded, %dropped, %dynamic, %mha
    : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>,
      tensor<1x4x2x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x2x16xf32>
}
