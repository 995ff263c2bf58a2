// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=64 lanes=16" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=16 lanes=8" --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: not attn-opt %s --attn-vectorize-tiles="lanes=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-vectorize-tiles: block sizes must be positive, got m-block = 4, n-block = 16, row-elements = 128 and lanes = 0

// The scores of a decode step, S[i, j] += Q[i, d] K[j, d] with K's bf16
// tile read where it lies (d innermost in both): as many accumulators as a
// 4 x 64 block of 16 lanes (16), here 4 rows x 4 keys, each a vector of 16
// partial sums over d, carried through a loop over d in chunks of 16 (each
// K row read once per block, contiguously, widened as it loads), then the
// partial sums of a row's four keys reduced together: pairs of vectors
// folded into one (the low half of each key's lanes plus the high half),
// then halved in place down to one lane per key. No transposed copy of K.
// CHECK-LABEL: func.func @decode_scores
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C4:.*]] iter_args(%{{.*}}) -> (tensor<4x64xf32>)
// CHECK: %[[SUMS:.*]]:16 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, {{.*}})
// CHECK-COUNT-4: vector.transfer_read %{{.*}} : tensor<4x128xf32>, vector<16xf32>
// CHECK: vector.transfer_read %{{.*}} : tensor<4x128xbf16>, vector<16xbf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: %[[START:.*]] = vector.extract %{{.*}}[0] : vector<4xf32> from vector<4x4xf32>
// CHECK: %[[LO:.*]] = vector.shuffle %[[SUMS]]#0, %[[SUMS]]#1 [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: %[[HI:.*]] = vector.shuffle %[[SUMS]]#0, %[[SUMS]]#1 [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK: arith.addf %[[LO]], %[[HI]] : vector<16xf32>
// CHECK: vector.shuffle %[[SUMS]]#2, %[[SUMS]]#3
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 4, 5, 8, 9, 12, 13] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6] : vector<8xf32>, vector<8xf32>
// CHECK: %[[KEYS:.*]] = arith.addf
// CHECK: %[[ROW:.*]] = arith.addf %[[START]], %[[KEYS]] : vector<4xf32>
// CHECK: vector.insert_strided_slice %[[ROW]], %{{.*}} {offsets = [0, 0], strides = [1]} : vector<4xf32> into vector<4x4xf32>
// CHECK-COUNT-3: vector.insert_strided_slice %{{.*}} : vector<4xf32> into vector<4x4xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.transfer_write %{{.*}} : vector<4x4xf32>, tensor<4x4xf32>
// CHECK-NOT: linalg.generic
// AVX2 (16 registers of 8 lanes): 4 x 16 keeps 8 accumulators, so 4 rows x
// 2 keys, d in chunks of 8.
// AVX2-LABEL: func.func @decode_scores
// AVX2: scf.for %{{.*}} -> (tensor<4x64xf32>)
// AVX2: scf.for %{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-8: vector.fma %{{.*}} : vector<8xf32>
// AVX2-COUNT-4: vector.insert_strided_slice %{{.*}} : vector<2xf32> into vector<4x2xf32>
// AVX2: vector.transfer_write %{{.*}} : vector<4x2xf32>, tensor<4x2xf32>
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (j, k)>
#out = affine_map<(i, j, k) -> (i, j)>
func.func @decode_scores(%q: tensor<4x128xf32>, %k: tensor<64x128xbf16>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %s = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x128xf32>, tensor<64x128xbf16>) outs(%init : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: bf16, %c: f32):
    %w = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %w : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  return %s : tensor<4x64xf32>
}

// -----

// One row (MHA decode: no query group): the accumulators go to keys,
// 1 x 16. A head of 20 takes one chunk of 16 (the loop of one iteration,
// folded) and the 4 elements past it in a chunk of 4, whose partial sums
// are reduced each alone (4 is no lane count of the block's vectors).
// CHECK-LABEL: func.func @one_row_d20
// CHECK: scf.for %{{.*}} step %[[C16:.*]] iter_args(%{{.*}}) -> (tensor<1x32xf32>)
// CHECK-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// CHECK-COUNT-16: vector.fma %{{.*}} : vector<4xf32>
// CHECK-COUNT-16: vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<4xf32> into f32
// CHECK-NOT: vector.reduction
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.transfer_write %{{.*}} : vector<16xf32>, tensor<1x16xf32>
// CHECK-NOT: linalg.generic
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (j, k)>
#out = affine_map<(i, j, k) -> (i, j)>
func.func @one_row_d20(%q: tensor<1x20xf32>, %k: tensor<32x20xf32>, %init: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %s = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x20xf32>, tensor<32x20xf32>) outs(%init : tensor<1x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>
  return %s : tensor<1x32xf32>
}

// -----

// A head of 40 with 16 lanes: a loop of two chunks of 16 and a chunk of
// 8 past it; 2 rows x 8 keys of accumulators, each row's 8 keys reduced
// together after the narrower chunk's sums.
// CHECK-LABEL: func.func @d40
// CHECK: %[[SUMS:.*]]:16 = scf.for %{{.*}} = %c0 to %c32 step %c16 iter_args({{.*}}) -> (vector<16xf32>,
// CHECK-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK-COUNT-16: vector.fma %{{.*}} : vector<8xf32>
// CHECK-COUNT-8: vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<8xf32> into f32
// CHECK: vector.shuffle %[[SUMS]]#0, %[[SUMS]]#1
// CHECK: vector.insert_strided_slice %{{.*}} {offsets = [0, 0], strides = [1]} : vector<8xf32> into vector<2x8xf32>
// CHECK-COUNT-8: vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<8xf32> into f32
// CHECK: vector.shuffle %[[SUMS]]#8, %[[SUMS]]#9
// CHECK: vector.insert_strided_slice %{{.*}} {offsets = [1, 0], strides = [1]} : vector<8xf32> into vector<2x8xf32>
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (j, k)>
#out = affine_map<(i, j, k) -> (i, j)>
func.func @d40(%q: tensor<2x40xf32>, %k: tensor<8x40xf32>, %init: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x40xf32>, tensor<8x40xf32>) outs(%init : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}

// -----

// K innermost in both inputs but the result written [n, m]: not the dot
// form (its blocks write rows as M); the usual register block, one K step
// per iteration, is correct for it.
// CHECK-LABEL: func.func @transposed_result
// CHECK-NOT: vector.reduction
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(%{{.*}}) -> (vector<8x4xf32>)
// CHECK-NOT: vector.reduction
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (j, k)>
#out = affine_map<(i, j, k) -> (j, i)>
func.func @transposed_result(%q: tensor<4x32xf32>, %k: tensor<8x32xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x32xf32>, tensor<8x32xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}
