// RUN: attn-opt %s --attn-parallelize-contractions --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-parallelize-contractions="rows=16" --split-input-file | FileCheck %s --check-prefix=ROWS16
// RUN: not attn-opt %s --attn-parallelize-contractions="rows=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-parallelize-contractions: rows must be positive, got 0

// A projection [B, S, E] x [E, F] (B is an M dimension: the weight has no
// B): a forall over B one at a time and S in blocks of 64 rows, the
// contraction on [1, <=64, E] x [E, F] inside.
// CHECK-LABEL: func.func @projection
// CHECK: scf.forall (%[[B:.*]], %[[S:.*]]) = (0, 0) to (2, 257) step (1, 64) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<2x257x512xf32>)
// CHECK: %[[ROWS:.*]] = affine.min #{{.*}}(%[[S]])
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x768xf32>, tensor<768x512xf32>) outs(%{{.*}} : tensor<1x?x512xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[B]], %[[S]], 0] [1, %[[ROWS]], 512]
// ROWS16: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 257) step (1, 16)
func.func @projection(%x: tensor<2x257x768xf32>, %wt: tensor<768x512xf32>, %init: tensor<2x257x512xf32>) -> tensor<2x257x512xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, k, n) -> (b, s, k)>, affine_map<(b, s, k, n) -> (k, n)>, affine_map<(b, s, k, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %wt : tensor<2x257x768xf32>, tensor<768x512xf32>) outs(%init : tensor<2x257x512xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %m = arith.mulf %a, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x257x512xf32>
  return %r : tensor<2x257x512xf32>
}

// -----

// Contractions already inside a parallel loop, and ops that are not
// contractions, are left alone.
// CHECK-LABEL: func.func @inside_forall
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK: linalg.matmul
func.func @inside_forall(%a: tensor<4x8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  %r = scf.forall (%i) in (4) shared_outs(%o = %c) -> (tensor<4x8x8xf32>) {
    %ai = tensor.extract_slice %a[%i, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<4x8x16xf32> to tensor<8x16xf32>
    %ci = tensor.extract_slice %o[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<4x8x8xf32> to tensor<8x8xf32>
    %p = linalg.matmul ins(%ai, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%ci : tensor<8x8xf32>) -> tensor<8x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %p into %o[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<8x8xf32> into tensor<4x8x8xf32>
    }
  }
  return %r : tensor<4x8x8xf32>
}
