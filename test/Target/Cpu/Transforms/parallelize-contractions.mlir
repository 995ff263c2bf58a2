// RUN: attn-opt %s --attn-parallelize-contractions --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-parallelize-contractions="rows=16" --split-input-file | FileCheck %s --check-prefix=ROWS16
// RUN: attn-opt %s --attn-parallelize-contractions="columns=128 depth=256" --split-input-file | FileCheck %s --check-prefix=CACHE
// RUN: attn-opt %s --attn-parallelize-contractions="columns=512 depth=1024" --split-input-file | FileCheck %s --check-prefix=WHOLE
// RUN: not attn-opt %s --attn-parallelize-contractions="rows=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-opt %s --attn-parallelize-contractions="depth=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADDEPTH
// RUN: attn-opt %s --attn-parallelize-contractions="columns=128 depth=256 max-rows=256" --split-input-file | FileCheck %s --check-prefix=TALL
// RUN: not attn-opt %s --attn-parallelize-contractions="max-rows=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADMAX
// RUN: attn-opt %s --attn-parallelize-contractions="columns=128 depth=256 conflict-stride=4096" --split-input-file | FileCheck %s --check-prefix=CONFLICT
// RUN: not attn-opt %s --attn-parallelize-contractions="conflict-stride=-64" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADCONFLICT

// BADCONFLICT: error: attn-parallelize-contractions: conflict-stride must be non-negative, got -64

// BADMAX: error: attn-parallelize-contractions: max-rows must be non-negative, got -1

// BAD: error: attn-parallelize-contractions: rows must be positive and columns and depth non-negative, got rows = 0, columns = 0 and depth = 0
// BADDEPTH: error: attn-parallelize-contractions: rows must be positive and columns and depth non-negative, got rows = 64, columns = 0 and depth = -1

// A projection [B, S, E] x [E, F] (B is an M dimension: the weight has no
// B): a forall over B one at a time and S in blocks of 64 rows, the
// contraction on [1, <=64, E] x [E, F] inside, marked attn.cache_blocked
// (attn-vectorize-tiles gives it the contraction register blocks).
// CHECK-LABEL: func.func @projection
// CHECK: scf.forall (%[[B:.*]], %[[S:.*]]) = (0, 0) to (2, 257) step (1, 64) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<2x257x512xf32>)
// CHECK: %[[ROWS:.*]] = affine.min #{{.*}}(%[[S]])
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x768xf32>, tensor<768x512xf32>) outs(%{{.*}} : tensor<1x?x512xf32>) attrs = {attn.cache_blocked}
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[B]], %[[S]], 0] [1, %[[ROWS]], 512]
// ROWS16: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 257) step (1, 16)
// Blocked for the cache: 128 columns of N and 256 steps of K at a time,
// whatever the order of the loops in the generic (K before N here); the
// 256 x 128 block of the weight is what every register block of the row
// block reads. With 10 row blocks (fewer than 16: 2 threads would finish 5
// blocks each, 3 would wait for the last) the column blocks are parallel
// iterations too; K is the loop inside.
// CACHE-LABEL: func.func @projection
// CACHE: scf.forall (%[[B:.*]], %[[S:.*]], %[[N:.*]]) = (0, 0, 0) to (2, 257, 512) step (1, 64, 128) shared_outs(%[[O:.*]] = %{{.*}})
// CACHE: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %[[S]], 0] [1, %[[ROWS:.*]], 768]
// CACHE: %[[W:.*]] = tensor.extract_slice %{{.*}}[0, %[[N]]] [768, 128]
// CACHE-NOT: scf.for
// CACHE: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] =
// CACHE: tensor.extract_slice %[[X]][0, 0, %[[K]]] [1, %[[ROWS]], 256]
// CACHE: tensor.extract_slice %[[W]][%[[K]], 0] [256, 128]
// CACHE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x256xf32>, tensor<256x128xf32>) outs(%{{.*}} : tensor<1x?x128xf32>)
// CACHE: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[B]], %[[S]], %[[N]]] [1, %[[ROWS]], 128]
// Blocks no smaller than the dimensions: nothing to block.
// WHOLE: scf.forall
// WHOLE-NOT: scf.for
// WHOLE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x768xf32>, tensor<768x512xf32>) outs(%{{.*}} : tensor<1x?x512xf32>)
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

// A long product (2048 rows): with max-rows, blocks of 64 rows doubled
// while the row and column blocks still make 16 parallel iterations: 256
// rows (8 row blocks by 4 column blocks of 128), each reading the weight
// once. Without it (CHECK), 64 rows.
// CHECK-LABEL: func.func @long
// CHECK: scf.forall (%{{.*}}) = (0) to (2048) step (64)
// TALL-LABEL: func.func @long
// TALL: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2048, 512) step (256, 128)
// TALL: linalg.matmul {attn.cache_blocked} ins(%{{.*}}, %{{.*}} : tensor<256x256xf32>, tensor<256x128xf32>)
func.func @long(%x: tensor<2048x512xf32>, %w: tensor<512x512xf32>, %init: tensor<2048x512xf32>) -> tensor<2048x512xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<2048x512xf32>, tensor<512x512xf32>) outs(%init : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  return %r : tensor<2048x512xf32>
}

// -----

// With 34 row blocks the threads have enough to share: the columns are a
// loop inside the row block (N outer, K inner), so that the row block's
// rows stay in the cache across the column blocks.
// CACHE-LABEL: func.func @long_projection
// CACHE: scf.forall (%[[B:.*]], %[[S:.*]]) = (0, 0) to (2, 1025) step (1, 64)
// CACHE: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %[[S]], 0] [1, %[[ROWS:.*]], 768]
// CACHE: %[[W:.*]] = tensor.extract_slice %{{.*}}[0, 0] [768, 512]
// CACHE: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CACHE: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] =
// CACHE: tensor.extract_slice %[[X]][0, 0, %[[K]]] [1, %[[ROWS]], 256]
// CACHE: tensor.extract_slice %[[W]][%[[K]], %[[N]]] [256, 128]
// CACHE: tensor.extract_slice %[[ACC]][0, 0, %[[N]]] [1, %[[ROWS]], 128]
// CACHE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x256xf32>, tensor<256x128xf32>) outs(%{{.*}} : tensor<1x?x128xf32>)
func.func @long_projection(%x: tensor<2x1025x768xf32>, %wt: tensor<768x512xf32>, %init: tensor<2x1025x512xf32>) -> tensor<2x1025x512xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, k, n) -> (b, s, k)>, affine_map<(b, s, k, n) -> (k, n)>, affine_map<(b, s, k, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %wt : tensor<2x1025x768xf32>, tensor<768x512xf32>) outs(%init : tensor<2x1025x512xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %m = arith.mulf %a, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x1025x512xf32>
  return %r : tensor<2x1025x512xf32>
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

// -----

// A weight packed on every call (the transpose attn-lower-packs makes of a
// linalg.pack) is read whole by every row block: it gets a parallel loop
// of its own over blocks of panels, before the product's; the bias
// broadcast the product starts from is computed per row block instead.
// CHECK-LABEL: func.func @packed_per_call
// CHECK: %[[PANELS:.*]] = scf.forall (%{{.*}}) = (0) to (32) step (2) shared_outs(
// CHECK: linalg.transpose ins(%{{.*}} : tensor<256x2x64xf32>) outs(%{{.*}} : tensor<2x256x64xf32>) permutation = [1, 0, 2]
// CHECK: scf.forall (%{{.*}}) = (0) to (100) step (64) shared_outs(
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<32x64xf32>) outs(%{{.*}} : tensor<?x32x64xf32>) dimensions = [0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<32x256x64xf32>)
func.func @packed_per_call(%a: tensor<100x256xf32>, %b: tensor<256x2048xf32>, %bias: tensor<32x64xf32>) -> tensor<100x32x64xf32> {
  %eb = tensor.empty() : tensor<32x256x64xf32>
  %be = tensor.expand_shape %b [[0], [1, 2]] output_shape [256, 32, 64] : tensor<256x2048xf32> into tensor<256x32x64xf32>
  %panels = linalg.transpose ins(%be : tensor<256x32x64xf32>) outs(%eb : tensor<32x256x64xf32>) permutation = [1, 0, 2]
  %e = tensor.empty() : tensor<100x32x64xf32>
  %init = linalg.broadcast ins(%bias : tensor<32x64xf32>) outs(%e : tensor<100x32x64xf32>) dimensions = [0]
  %r = linalg.generic {indexing_maps = [affine_map<(m, n0, k, n1) -> (m, k)>, affine_map<(m, n0, k, n1) -> (n0, k, n1)>, affine_map<(m, n0, k, n1) -> (m, n0, n1)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %panels : tensor<100x256xf32>, tensor<32x256x64xf32>) outs(%init : tensor<100x32x64xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<100x32x64xf32>
  return %r : tensor<100x32x64xf32>
}

// -----

// Transposes left outside parallel loops after the contractions (the tiled
// attention's packing of K^T) are distributed too: leading dimensions one
// at a time until about 16 blocks (12 heads x 2 pairs of key tiles here),
// the rows whole; a dynamic leading dimension one at a time; a small
// transpose stays serial.
// CHECK-LABEL: func.func @key_pack
// CHECK: scf.forall (%[[H:.*]], %[[T:.*]]) = (0, 0) to (12, 4) step (1, 2)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x2x128x64xf32>) outs(%{{.*}} : tensor<1x1x2x64x128xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}}[0, %[[H]], %[[T]], 0, 0] [1, 1, 2, 64, 128]
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x8xf32>)
// CHECK-LABEL: func.func @dynamic
// CHECK: scf.forall (%{{.*}}) in (%{{.*}})
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x128x64xf32>) outs(%{{.*}} : tensor<1x64x128xf32>)
func.func @key_pack(%k: tensor<1x12x4x128x64xf32>) -> tensor<1x12x4x64x128xf32> {
  %e = tensor.empty() : tensor<1x12x4x64x128xf32>
  %t = linalg.transpose ins(%k : tensor<1x12x4x128x64xf32>) outs(%e : tensor<1x12x4x64x128xf32>) permutation = [0, 1, 2, 4, 3]
  return %t : tensor<1x12x4x64x128xf32>
}

func.func @small(%k: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%k : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  return %t : tensor<8x4xf32>
}

func.func @dynamic(%k: tensor<?x128x64xf32>) -> tensor<?x64x128xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %k, %c0 : tensor<?x128x64xf32>
  %e = tensor.empty(%d) : tensor<?x64x128xf32>
  %t = linalg.transpose ins(%k : tensor<?x128x64xf32>) outs(%e : tensor<?x64x128xf32>) permutation = [0, 2, 1]
  return %t : tensor<?x64x128xf32>
}

// -----

// Fewer rows than a block (32 sequences of 10 tokens): each block takes
// all 10, a static size (not min(64, 10 - i)) that register blocks can
// divide, of as many sequences as make about 64 rows (6: 60 rows; the
// last block has 2), so that each weight block read into the cache serves
// all of them (one sequence per block streamed the weight from memory 32
// times). With 16 rows per block, one sequence.
// CHECK-LABEL: func.func @short_rows
// CHECK: scf.forall (%[[B:.*]], %[[L:.*]]) = (0, 0) to (32, 10) step (6, 10)
// CHECK: %[[N:.*]] = affine.min #{{.*}}(%[[B]])
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x10x512xf32>, tensor<512x512xf32>) outs(%{{.*}} : tensor<?x10x512xf32>) attrs = {attn.cache_blocked}
// CHECK: tensor.parallel_insert_slice %{{.*}}[%[[B]], %[[L]], 0] [%[[N]], 10, 512]
// ROWS16-LABEL: func.func @short_rows
// ROWS16: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (32, 10) step (1, 10)
// ROWS16: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x10x512xf32>, tensor<512x512xf32>)
func.func @short_rows(%x: tensor<32x10x512xf32>, %wt: tensor<512x512xf32>, %init: tensor<32x10x512xf32>) -> tensor<32x10x512xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, k, n) -> (b, s, k)>, affine_map<(b, s, k, n) -> (k, n)>, affine_map<(b, s, k, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %wt : tensor<32x10x512xf32>, tensor<512x512xf32>) outs(%init : tensor<32x10x512xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %m = arith.mulf %a, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<32x10x512xf32>
  return %r : tensor<32x10x512xf32>
}

// -----

// Q, K and V projected together into [3, N, H, L, D] (D = one 64-column
// panel) with 8 row blocks: the column blocks that join them as parallel
// iterations are blocks of 128 columns, 128 / 64 = 2 heads of one of Q, K
// and V at a time, with K in blocks of 256 inside.
// CACHE-LABEL: func.func @heads_together
// CACHE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (1, 512, 3, 12) step (1, 64, 1, 2)
// CACHE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x64x256xf32>, tensor<1x2x256x64xf32>) outs(%{{.*}} : tensor<1x1x2x64x64xf32>)
func.func @heads_together(%x: tensor<1x512x768xf32>, %w: tensor<3x12x768x64xf32>, %init: tensor<3x1x12x512x64xf32>) -> tensor<3x1x12x512x64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, l, k, s, h, c) -> (n, l, k)>, affine_map<(n, l, k, s, h, c) -> (s, h, k, c)>, affine_map<(n, l, k, s, h, c) -> (s, n, h, l, c)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel"]} ins(%x, %w : tensor<1x512x768xf32>, tensor<3x12x768x64xf32>) outs(%init : tensor<3x1x12x512x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x1x12x512x64xf32>
  return %r : tensor<3x1x12x512x64xf32>
}

// -----

// The same with heads of two 32-column panels ([3, N, H, L, D / 32, 32],
// attn-pack-weights): a column block of 128 columns is both panels of each
// of 2 heads of one of Q, K and V.
// CACHE-LABEL: func.func @heads_of_two_panels
// CACHE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (1, 512, 3, 12) step (1, 64, 1, 2)
// CACHE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x64x256xf32>, tensor<1x2x2x256x32xf32>) outs(%{{.*}} : tensor<1x1x2x64x2x32xf32>)
func.func @heads_of_two_panels(%x: tensor<1x512x768xf32>, %w: tensor<3x12x2x768x32xf32>, %init: tensor<3x1x12x512x2x32xf32>) -> tensor<3x1x12x512x2x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, l, k, s, h, p, c) -> (n, l, k)>, affine_map<(n, l, k, s, h, p, c) -> (s, h, p, k, c)>, affine_map<(n, l, k, s, h, p, c) -> (s, n, h, l, p, c)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %w : tensor<1x512x768xf32>, tensor<3x12x2x768x32xf32>) outs(%init : tensor<3x1x12x512x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x1x12x512x2x32xf32>
  return %r : tensor<3x1x12x512x2x32xf32>
}

// -----

// With 16 row blocks the column blocks stay inside a row block: loops over
// Q/K/V, then over 2 heads (128 columns) at a time, then K, in that order
// whatever the dimensions' positions.
// CACHE-LABEL: func.func @heads_of_two_panels_long
// CACHE: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 1024) step (1, 64)
// CACHE-DAG: %[[C1:.*]] = arith.constant 1 : index
// CACHE-DAG: %[[C2:.*]] = arith.constant 2 : index
// CACHE-DAG: %[[C3:.*]] = arith.constant 3 : index
// CACHE-DAG: %[[C12:.*]] = arith.constant 12 : index
// CACHE-DAG: %[[C256:.*]] = arith.constant 256 : index
// CACHE-DAG: %[[C768:.*]] = arith.constant 768 : index
// CACHE: scf.for %{{.*}} = %{{.*}} to %[[C3]] step %[[C1]] iter_args(%{{.*}} = %{{.*}}) -> (tensor<3x1x12x64x2x32xf32>)
// CACHE-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C12]] step %[[C2]] iter_args
// CACHE-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C768]] step %[[C256]] iter_args
// CACHE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x64x256xf32>, tensor<1x2x2x256x32xf32>) outs(%{{.*}} : tensor<1x1x2x64x2x32xf32>)
func.func @heads_of_two_panels_long(%x: tensor<1x1024x768xf32>, %w: tensor<3x12x2x768x32xf32>, %init: tensor<3x1x12x1024x2x32xf32>) -> tensor<3x1x12x1024x2x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, l, k, s, h, p, c) -> (n, l, k)>, affine_map<(n, l, k, s, h, p, c) -> (s, h, p, k, c)>, affine_map<(n, l, k, s, h, p, c) -> (s, n, h, l, p, c)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %w : tensor<1x1024x768xf32>, tensor<3x12x2x768x32xf32>) outs(%init : tensor<3x1x12x1024x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x1x12x1024x2x32xf32>
  return %r : tensor<3x1x12x1024x2x32xf32>
}

// -----

// Rows known only at run time may be a few blocks (one sequence of 77
// tokens: 2, for 2 threads 64 and 13 rows): as with fewer than 16, the
// column blocks (Q/K/V, then 2 heads at a time) are parallel iterations
// too, and only K is a loop inside.
// CACHE-LABEL: func.func @heads_of_two_panels_dynamic
// CACHE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (1, %{{.*}}, 3, 12) step (1, 64, 1, 2)
// CACHE-NOT: scf.for %
// CACHE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CACHE-NOT: scf.for %
// CACHE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x256xf32>, tensor<1x2x2x256x32xf32>) outs(%{{.*}} : tensor<1x1x2x?x2x32xf32>)
// CACHE: scf.forall.in_parallel
func.func @heads_of_two_panels_dynamic(%x: tensor<1x?x768xf32>, %w: tensor<3x12x2x768x32xf32>, %init: tensor<3x1x12x?x2x32xf32>) -> tensor<3x1x12x?x2x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, l, k, s, h, p, c) -> (n, l, k)>, affine_map<(n, l, k, s, h, p, c) -> (s, h, p, k, c)>, affine_map<(n, l, k, s, h, p, c) -> (s, n, h, l, p, c)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %w : tensor<1x?x768xf32>, tensor<3x12x2x768x32xf32>) outs(%init : tensor<3x1x12x?x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x1x12x?x2x32xf32>
  return %r : tensor<3x1x12x?x2x32xf32>
}

// -----

// A reduction outside parallel loops (multi-head attention's mean of the
// weights over the heads) is distributed over about 16 blocks of its
// result's leading dimensions: 8 batches, then 2 halves of the 128 rows;
// each block fills its own part of the init and reduces all of the heads.
// A small one stays serial.
// CHECK-LABEL: func.func @head_mean
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x128x128xf32>
// CHECK: scf.forall (%[[N:.*]], %[[L:.*]]) = (0, 0) to (8, 128) step (1, 64) shared_outs(%[[W:.*]] = %[[E]])
// CHECK: %[[P:.*]] = tensor.extract_slice %{{.*}}[%[[N]], 0, %[[L]], 0] [1, 8, 64, 128]
// CHECK: %[[WB:.*]] = tensor.extract_slice %[[W]][%[[N]], %[[L]], 0] [1, 64, 128]
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[WB]] : tensor<1x64x128xf32>)
// CHECK: linalg.reduce ins(%[[P]] : tensor<1x8x64x128xf32>) outs(%[[Z]] : tensor<1x64x128xf32>) dimensions = [1]
// CHECK: scf.forall.in_parallel
// CHECK-LABEL: func.func @small_head_mean
// CHECK-NOT: scf.forall
// CHECK: linalg.reduce
func.func @head_mean(%p: tensor<8x8x128x128xf32>) -> tensor<8x128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %r = linalg.reduce ins(%p : tensor<8x8x128x128xf32>) outs(%f : tensor<8x128x128xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8x128x128xf32>
}
func.func @small_head_mean(%p: tensor<2x8x10x10xf32>) -> tensor<2x10x10xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x10x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x10x10xf32>) -> tensor<2x10x10xf32>
  %r = linalg.reduce ins(%p : tensor<2x8x10x10xf32>) outs(%f : tensor<2x10x10xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2x10x10xf32>
}

// -----

// Rows of the left operand 4 KiB apart (K = 1024 f32) share L1 sets: with
// conflict-stride=4096 the operand is first copied, in a parallel loop of
// its own over 16 blocks of rows, into a buffer whose rows are one cache
// line (16 f32) longer, and the product's row blocks read that copy. The
// default run (CHECK) copies nothing.
// CONFLICT-LABEL: func.func @conflicting_rows
// CONFLICT: %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<256x1040xf32>
// CONFLICT: %[[ROWS:.*]] = tensor.extract_slice %[[BUF]][0, 0] [256, 1024] [1, 1] : tensor<256x1040xf32> to tensor<256x1024xf32>
// CONFLICT: %[[COPY:.*]] = scf.forall (%[[I:.*]]) = (0) to (256) step (16) shared_outs(%[[O:.*]] = %[[ROWS]])
// CONFLICT: %[[SRC:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0] [16, 1024]
// CONFLICT: %[[DST:.*]] = tensor.extract_slice %[[O]][%[[I]], 0] [16, 1024]
// CONFLICT: linalg.copy ins(%[[SRC]] : tensor<16x1024xf32>) outs(%[[DST]] : tensor<16x1024xf32>)
// CONFLICT: scf.forall (%[[R:.*]], %{{.*}}) = (0, 0) to (256, 256) step (64, 128)
// CONFLICT: tensor.extract_slice %[[COPY]][%[[R]], 0] [64, 1024]
// CONFLICT: linalg.matmul {attn.cache_blocked}
// CHECK-LABEL: func.func @conflicting_rows
// CHECK-NOT: alloc_tensor
// CHECK: return
func.func @conflicting_rows(%x: tensor<256x1024xf32>, %w: tensor<1024x256xf32>, %init: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<256x1024xf32>, tensor<1024x256xf32>) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// -----

// The stride is the buffer's, not the product's K: 1024 columns of rows of
// 2048 (8 KiB apart) are copied; of rows of 1280 (5 KiB) they are not, nor
// are rows of 768 (3 KiB: 4 sets for 12 rows), nor the left operand of a
// product of fewer than 128 columns (the copy would cost more than the
// conflicts).
// CONFLICT-LABEL: func.func @strides
// CONFLICT: %[[WIDE:.*]] = tensor.extract_slice %{{.*}}[0, 512] [256, 1024] [1, 1] : tensor<256x2048xf32> to tensor<256x1024xf32>
// CONFLICT: bufferization.alloc_tensor() : tensor<256x1040xf32>
// CONFLICT: linalg.copy ins(%{{.*}} : tensor<16x1024xf32>)
// CONFLICT-NOT: alloc_tensor
// CONFLICT: return
func.func @strides(%wide: tensor<256x2048xf32>, %odd: tensor<256x1280xf32>, %short: tensor<256x768xf32>, %w: tensor<1024x256xf32>, %w768: tensor<768x256xf32>, %narrow: tensor<1024x64xf32>, %init: tensor<256x256xf32>, %init64: tensor<256x64xf32>) -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>) {
  %a = tensor.extract_slice %wide[0, 512] [256, 1024] [1, 1] : tensor<256x2048xf32> to tensor<256x1024xf32>
  %r0 = linalg.matmul ins(%a, %w : tensor<256x1024xf32>, tensor<1024x256xf32>) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %b = tensor.extract_slice %odd[0, 0] [256, 1024] [1, 1] : tensor<256x1280xf32> to tensor<256x1024xf32>
  %r1 = linalg.matmul ins(%b, %w : tensor<256x1024xf32>, tensor<1024x256xf32>) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r2 = linalg.matmul ins(%short, %w768 : tensor<256x768xf32>, tensor<768x256xf32>) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = tensor.extract_slice %wide[0, 0] [256, 1024] [1, 1] : tensor<256x2048xf32> to tensor<256x1024xf32>
  %r3 = linalg.matmul ins(%c, %narrow : tensor<256x1024xf32>, tensor<1024x64xf32>) outs(%init64 : tensor<256x64xf32>) -> tensor<256x64xf32>
  return %r0, %r1, %r2, %r3 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>
}

// -----

// A sequence-first input [S, B, K] made batch-first for the product: each
// row block transposes its own rows (the default run: no column blocks) unless the
// parallel loop also splits the columns (columns=128: 8 row blocks by 4 column
// blocks, each of which would transpose its rows again): then the
// transpose is one parallel loop of its own before the product's.
// CHECK-LABEL: func.func @sequence_first
// CHECK: scf.forall (%[[B:.*]], %[[S:.*]]) = (0, 0) to (2, 256) step (1, 64)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<64x1x512xf32>) outs(%{{.*}} : tensor<1x64x512xf32>) permutation = [1, 0, 2]
// CHECK: linalg.generic
// CHECK-NOT: scf.forall (
// CHECK: return
// CACHE-LABEL: func.func @sequence_first
// CACHE: %[[T:.*]] = scf.forall
// CACHE: linalg.transpose ins(%{{.*}} : tensor<{{[0-9]+}}x1x512xf32>)
// CACHE: scf.forall (%[[B:.*]], %[[S:.*]], %[[N:.*]]) = (0, 0, 0) to (2, 256, 512) step (1, 64, 128)
// CACHE-NOT: linalg.transpose
// CACHE: tensor.extract_slice %[[T]][%[[B]], %[[S]], 0] [1, 64, 512]
// CACHE-NOT: linalg.transpose
// CACHE: return
func.func @sequence_first(%x: tensor<256x2x512xf32>, %w: tensor<512x512xf32>, %init: tensor<2x256x512xf32>) -> tensor<2x256x512xf32> {
  %e = tensor.empty() : tensor<2x256x512xf32>
  %t = linalg.transpose ins(%x : tensor<256x2x512xf32>) outs(%e : tensor<2x256x512xf32>) permutation = [1, 0, 2]
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, k, n) -> (b, s, k)>, affine_map<(b, s, k, n) -> (k, n)>, affine_map<(b, s, k, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%t, %w : tensor<2x256x512xf32>, tensor<512x512xf32>) outs(%init : tensor<2x256x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x256x512xf32>
  return %r : tensor<2x256x512xf32>
}

// -----

// Its rows 4 KiB apart (K = 1024): the transpose writes them padded (no
// copy after it), in a parallel loop of its own, and the product reads them
// there, whether or not the columns are split.
// CONFLICT-LABEL: func.func @sequence_first_conflict
// CONFLICT: %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<2x256x1040xf32>
// CONFLICT: %[[ROWS:.*]] = tensor.extract_slice %[[BUF]][0, 0, 0] [2, 256, 1024] [1, 1, 1]
// CONFLICT: %[[T:.*]] = scf.forall {{.*}} shared_outs(%[[O:.*]] = %[[ROWS]])
// CONFLICT: linalg.transpose
// CONFLICT-NOT: linalg.copy
// CONFLICT: scf.forall
// CONFLICT-NOT: linalg.transpose
// CONFLICT: tensor.extract_slice %[[T]]
// CONFLICT-NOT: linalg.transpose
// CONFLICT: return
func.func @sequence_first_conflict(%x: tensor<256x2x1024xf32>, %w: tensor<1024x512xf32>, %init: tensor<2x256x512xf32>) -> tensor<2x256x512xf32> {
  %e = tensor.empty() : tensor<2x256x1024xf32>
  %t = linalg.transpose ins(%x : tensor<256x2x1024xf32>) outs(%e : tensor<2x256x1024xf32>) permutation = [1, 0, 2]
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, k, n) -> (b, s, k)>, affine_map<(b, s, k, n) -> (k, n)>, affine_map<(b, s, k, n) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%t, %w : tensor<2x256x1024xf32>, tensor<1024x512xf32>) outs(%init : tensor<2x256x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x256x512xf32>
  return %r : tensor<2x256x512xf32>
}
