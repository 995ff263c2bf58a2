// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64 decode-key-chunks=1" --split-input-file | FileCheck %s --check-prefix=ONE
// RUN: not attn-opt %s --attn-tile="decode-key-chunks=-2" 2>&1 | FileCheck %s --check-prefix=BAD

// One query tile per head and 2 x 2 (batch, head) pairs: the 1000 keys
// (16 tiles of 64) are split into 4 chunks of 4 tiles (16 parallel
// iterations), each iteration clamping its key tiles to its chunk and
// writing its (acc, m, l); then the chunks are combined: M = max m_c, the
// weights 2^(m_c - M), L = sum w l, O = sum w acc / L into the destination,
// lse = (M + log2 L) ln 2.
// CHECK-LABEL: func.func @decode
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[P:.*]]:3 = scf.forall (%{{.*}}, %{{.*}}, %[[C:.*]]) in (2, 2, 4) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x2x4x1x32xf32>, tensor<2x2x4x1xf32>, tensor<2x2x4x1xf32>)
// CHECK: %[[FROM:.*]] = arith.muli %[[C]], %[[C256]] : index
// CHECK: %[[TO:.*]] = arith.addi %[[FROM]], %[[C256]] : index
// CHECK: arith.maxsi %[[FROM]], %{{.*}} : index
// CHECK: arith.minsi %{{.*}}, %[[TO]] : index
// CHECK: scf.for
// CHECK: scf.forall.in_parallel
// CHECK-COUNT-3: tensor.parallel_insert_slice
// CHECK: %[[M:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]]#1 : tensor<2x2x4x1xf32>)
// CHECK: arith.maximumf
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[P]]#1, %[[M]] : tensor<2x2x4x1xf32>, tensor<2x2x1xf32>)
// CHECK: math.exp2
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[P]]#2 : tensor<2x2x4x1xf32>, tensor<2x2x4x1xf32>)
// CHECK: %[[O:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[P]]#0 : tensor<2x2x4x1xf32>, tensor<2x2x4x1x32xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[O]], %[[L]] : tensor<2x2x1x32xf32>, tensor<2x2x1xf32>) outs(%arg3 : tensor<2x2x1x32xf32>)
// CHECK: arith.divf
// CHECK: %[[LSE:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[L]] : tensor<2x2x1xf32>, tensor<2x2x1xf32>) outs(%arg4 : tensor<2x2x1xf32>)
// CHECK: math.log2
// CHECK: return %[[R]], %[[LSE]]
// decode-key-chunks=1: the forall over query tiles, no combination.
// ONE-LABEL: func.func @decode
// ONE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 2, 1)
// ONE-NOT: x1x32xf32>, tensor<2x2x1x1xf32>
// ONE: return
// BAD: decode-key-chunks must be 0 (automatic) or positive, got -2
func.func @decode(%q: tensor<2x2x1x32xf32>, %k: tensor<2x2x1000x32xf32>,
                  %v: tensor<2x2x1000x32xf32>, %e: tensor<2x2x1x32xf32>,
                  %l: tensor<2x2x1xf32>)
    -> (tensor<2x2x1x32xf32>, tensor<2x2x1xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<2x2x1xf32>)
     : tensor<2x2x1x32xf32>, tensor<2x2x1000x32xf32>, tensor<2x2x1000x32xf32>
       -> tensor<2x2x1x32xf32>, tensor<2x2x1xf32>
  return %o, %lse : tensor<2x2x1x32xf32>, tensor<2x2x1xf32>
}

// -----

// Enough (batch, head) pairs (16), a dynamic key count, or keys too few
// for two chunks of 4 tiles: no split.
// CHECK-LABEL: func.func @no_split
// CHECK-NOT: in (4, 4, 2)
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (4, 4, 1)
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1)
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1)
// CHECK-NOT: scf.forall (
func.func @no_split(%q: tensor<4x4x1x32xf32>, %k: tensor<4x4x1000x32xf32>,
                    %q1: tensor<1x1x1x32xf32>, %kd: tensor<1x1x?x32xf32>,
                    %ks: tensor<1x1x448x32xf32>)
    -> (tensor<4x4x1x32xf32>, tensor<1x1x1x32xf32>, tensor<1x1x1x32xf32>) {
  %e = tensor.empty() : tensor<4x4x1x32xf32>
  %o = attn.sdpa %q, %k, %k outs(%e)
     : tensor<4x4x1x32xf32>, tensor<4x4x1000x32xf32>, tensor<4x4x1000x32xf32> -> tensor<4x4x1x32xf32>
  %e1 = tensor.empty() : tensor<1x1x1x32xf32>
  %d = attn.sdpa %q1, %kd, %kd outs(%e1)
     : tensor<1x1x1x32xf32>, tensor<1x1x?x32xf32>, tensor<1x1x?x32xf32> -> tensor<1x1x1x32xf32>
  %s = attn.sdpa %q1, %ks, %ks outs(%e1)
     : tensor<1x1x1x32xf32>, tensor<1x1x448x32xf32>, tensor<1x1x448x32xf32> -> tensor<1x1x1x32xf32>
  return %o, %d, %s : tensor<4x4x1x32xf32>, tensor<1x1x1x32xf32>, tensor<1x1x1x32xf32>
}

// -----

// bf16 with bf16-pairs: a few query rows (decode) are widened to f32 and
// read K where it is; pairs (K packed as [.., D/2, kv-tile, 2] on every
// call) are for ops of more rows.
// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64 bf16-pairs=true" --split-input-file | FileCheck %s --check-prefix=PAIRS
// CHECK-LABEL: func.func @bf16_rows
// PAIRS-LABEL: func.func @bf16_rows
// PAIRS-NOT: x2xbf16>
// PAIRS: arith.extf
// PAIRS-LABEL: func.func @bf16_prefill
// PAIRS: tensor<1x2x2x16x64x2xbf16>
func.func @bf16_rows(%q: tensor<1x2x4x32xbf16>, %k: tensor<1x2x128x32xbf16>)
    -> tensor<1x2x4x32xbf16> {
  %e = tensor.empty() : tensor<1x2x4x32xbf16>
  %o = attn.sdpa %q, %k, %k outs(%e)
     : tensor<1x2x4x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16> -> tensor<1x2x4x32xbf16>
  return %o : tensor<1x2x4x32xbf16>
}
func.func @bf16_prefill(%q: tensor<1x2x64x32xbf16>, %k: tensor<1x2x128x32xbf16>)
    -> tensor<1x2x64x32xbf16> {
  %e = tensor.empty() : tensor<1x2x64x32xbf16>
  %o = attn.sdpa %q, %k, %k outs(%e)
     : tensor<1x2x64x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16> -> tensor<1x2x64x32xbf16>
  return %o : tensor<1x2x64x32xbf16>
}
