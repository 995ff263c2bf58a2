// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=64 contraction-m-block=12 contraction-n-block=32" --split-input-file | FileCheck %s
// Without contraction blocks, marked contractions take m-block x n-block.
// RUN: attn-opt %s --attn-vectorize-tiles="m-block=8 n-block=32" --split-input-file | FileCheck %s --check-prefix=PLAIN
// RUN: not attn-opt %s --attn-vectorize-tiles="contraction-m-block=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-vectorize-tiles: contraction block sizes must be positive (or 0: m-block and n-block), got contraction-m-block = -1 and contraction-n-block = 0

// A row block of a projection as attn-parallelize-contractions leaves it
// (marked attn.cache_blocked): 64 rows by 4 weight panels of 32 columns
// (attn-pack-weights' [N / 32, K, 32]). Its register blocks are the
// contraction blocks, 12 x 32: five of them and a static 4 x 32 block for
// the last 4 rows. The loop over a block's rows is outside the loop over
// the panels (each block's rows of the left operand stay in the L1 while
// the panels go by), K innermost with the accumulators in registers. The
// marker is gone afterwards; the blocks' K loops, which stream the weight's
// rows, are marked attn.stream_loop for attn-prefetch-streams.
// CHECK-LABEL: func.func @projection_rows
// CHECK: scf.for %[[R:.*]] = %c0 to %c60 step %c12
// CHECK-NEXT: scf.for %[[P:.*]] = %c0 to %c4 step %c1
// CHECK: tensor.extract_slice %{{.*}}[%[[R]], %[[P]], 0] [12, 1, 32] [1, 1, 1]
// CHECK: vector.transfer_read {{.*}} : tensor<12x32xf32>, vector<12x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(%{{.*}}) -> (vector<12x32xf32>)
// CHECK-COUNT-12: vector.fma %{{.*}} : vector<32xf32>
// CHECK: } {attn.stream_loop}
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK: vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK: scf.for %{{.*}} -> (vector<4x32xf32>)
// CHECK-COUNT-4: vector.fma %{{.*}} : vector<32xf32>
// CHECK: } {attn.stream_loop}
// CHECK-NOT: linalg.generic
// CHECK-NOT: attn.cache_blocked
// PLAIN-LABEL: func.func @projection_rows
// PLAIN: scf.for %{{.*}} = %c0 to %c64 step %c8
// PLAIN: scf.for %{{.*}} -> (vector<8x32xf32>)
// PLAIN-COUNT-8: vector.fma %{{.*}} : vector<32xf32>
// PLAIN-NOT: linalg.generic
func.func @projection_rows(%x: tensor<64x16xf32>, %w: tensor<4x16x32xf32>, %y: tensor<64x4x32xf32>) -> tensor<64x4x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, p, n, k) -> (m, k)>, affine_map<(m, p, n, k) -> (p, k, n)>, affine_map<(m, p, n, k) -> (m, p, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x16xf32>, tensor<4x16x32xf32>) outs(%y : tensor<64x4x32xf32>) attrs = {attn.cache_blocked} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x4x32xf32>
  return %r : tensor<64x4x32xf32>
}

// -----

// Unmarked contractions (attention steps) keep m-block x n-block, 4 x 64,
// and their K loops read the L1: no stream marker.
// CHECK-LABEL: func.func @unmarked
// CHECK: scf.for %{{.*}} -> (vector<4x64xf32>)
// CHECK-COUNT-4: vector.fma %{{.*}} : vector<64xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: attn.stream_loop
func.func @unmarked(%x: tensor<16x16xf32>, %w: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<16x16xf32>, tensor<16x64xf32>) outs(%y : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Rows known only at run time (the last row block of a product whose rows
// 64 does not divide), the only dynamic size: 12-row blocks, then the rows
// they leave in 4-row blocks, then one row at a time, all static and
// vector code; nothing is left to scalar loops. A one-row block's K step
// is one broadcast FMA (not a contraction upstream unrolls to scalars).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: scf.for %{{.*}} step %c12
// CHECK: scf.for %{{.*}} -> (vector<12x32xf32>)
// CHECK-COUNT-12: vector.fma %{{.*}} : vector<32xf32>
// CHECK: scf.for %{{.*}} step %c4
// CHECK: scf.for %{{.*}} -> (vector<4x32xf32>)
// CHECK-COUNT-4: vector.fma %{{.*}} : vector<32xf32>
// CHECK: scf.for %{{.*}} step %c1
// CHECK: scf.for %{{.*}} -> (vector<32xf32>)
// CHECK: %[[ONE:.*]] = vector.broadcast %{{.*}} : f32 to vector<32xf32>
// CHECK: vector.fma %[[ONE]], %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-NOT: vector.contract
// CHECK-NOT: linalg.generic
// With 8 x 32 blocks (PLAIN): 8, 4 and 1 rows.
// PLAIN-LABEL: func.func @dynamic_rows
// PLAIN: scf.for %{{.*}} -> (vector<8x32xf32>)
// PLAIN: scf.for %{{.*}} -> (vector<4x32xf32>)
// PLAIN: scf.for %{{.*}} -> (vector<32xf32>)
// PLAIN-NOT: linalg.generic
func.func @dynamic_rows(%x: tensor<?x16xf32>, %w: tensor<16x32xf32>, %y: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %r = linalg.matmul {attn.cache_blocked} ins(%x, %w : tensor<?x16xf32>, tensor<16x32xf32>) outs(%y : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// -----

// Columns known only at run time (a column block of a weight whose N is
// not a whole number of panels): blocks of 32 columns, then the columns
// they leave in blocks of 16, 8, 4, 2 and 1, each a static width and vector
// code (12 rows, then what the rows leave). Nothing is left to scalar
// loops but the peeled partial blocks no iteration reaches.
// CHECK-LABEL: func.func @dynamic_columns
// CHECK: scf.for %{{.*}} -> (vector<12x32xf32>)
// CHECK-COUNT-12: vector.fma %{{.*}} : vector<32xf32>
// CHECK: scf.for %{{.*}} -> (vector<12x16xf32>)
// CHECK: scf.for %{{.*}} -> (vector<12x8xf32>)
// CHECK: scf.for %{{.*}} -> (vector<12x4xf32>)
// CHECK: scf.for %{{.*}} -> (vector<12x2xf32>)
// CHECK: scf.for %{{.*}} -> (vector<12x1xf32>)
func.func @dynamic_columns(%x: tensor<24x16xf32>, %w: tensor<16x?xf32>, %y: tensor<24x?xf32>) -> tensor<24x?xf32> {
  %r = linalg.matmul {attn.cache_blocked} ins(%x, %w : tensor<24x16xf32>, tensor<16x?xf32>) outs(%y : tensor<24x?xf32>) -> tensor<24x?xf32>
  return %r : tensor<24x?xf32>
}
