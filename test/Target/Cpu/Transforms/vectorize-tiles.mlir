// RUN: attn-opt %s --attn-vectorize-tiles="m-block=8 n-block=32" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=16" --split-input-file | FileCheck %s --check-prefix=SMALL
// The pass's default block is the generic CPU model's, 4 x 16 (AVX2).
// RUN: attn-opt %s --attn-vectorize-tiles --split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=64" --split-input-file | FileCheck %s --check-prefix=WIDE
// RUN: not attn-opt %s --attn-vectorize-tiles="n-block=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-opt %s --attn-vectorize-tiles="row-elements=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADROW
// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=32 max-m-block=6" --split-input-file | FileCheck %s --check-prefix=DIVIDE

// BAD: error: attn-vectorize-tiles: block sizes must be positive, got m-block = 4, n-block = 0, row-elements = 128 and lanes = 8
// BADROW: error: attn-vectorize-tiles: block sizes must be positive, got m-block = 4, n-block = 16, row-elements = -1 and lanes = 8

// A 16x64 by 64x40 contraction in (i, k, j) order: 8x32 register blocks,
// K innermost with the accumulator block carried in registers (read once
// before the K loop, written once after), each K step eight broadcast FMAs
// on 32-wide rows. N = 40 leaves a peeled 8x8 block, static too.
// CHECK-LABEL: func.func @block
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x40xf32>)
// CHECK: %[[ACC0:.*]] = vector.transfer_read %{{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[ACC0]]) -> (vector<8x32xf32>)
// CHECK: vector.transfer_read %{{.*}} : tensor<1x32xf32>, vector<32xf32>
// CHECK-COUNT-8: vector.fma %{{.*}} : vector<32xf32>
// CHECK: scf.yield %{{.*}} : vector<8x32xf32>
// CHECK: vector.transfer_write %[[ACC]], %{{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 32] [8, 8] [1, 1] : tensor<16x40xf32> to tensor<8x8xf32>
// CHECK: scf.for %{{.*}} -> (vector<8x8xf32>)
// CHECK-COUNT-8: vector.fma %{{.*}} : vector<8xf32>
// CHECK-NOT: linalg.generic
// A 4 x 64 block (AVX-512's) is wider than N = 40: 40 columns per four
// rows, as blocks of a power-of-two width, 4 x 32 and 4 x 8, in the same
// K loop (LLVM carried a 4 x 40 block through it element by element).
// WIDE-LABEL: func.func @block
// WIDE: scf.for %{{.*}} -> (vector<4x32xf32>, vector<4x8xf32>)
// WIDE-COUNT-4: vector.fma %{{.*}} : vector<32xf32>
// WIDE-COUNT-4: vector.fma %{{.*}} : vector<8xf32>
// WIDE-NOT: vector<4x40xf32>
// SMALL-LABEL: func.func @block
// SMALL: scf.for %{{.*}} -> (vector<4x16xf32>)
// SMALL-COUNT-4: vector.fma %{{.*}} : vector<16xf32>
func.func @block(%a: tensor<16x64xf32>, %b: tensor<64x40xf32>, %c: tensor<16x40xf32>) -> tensor<16x40xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<16x64xf32>, tensor<64x40xf32>) outs(%c : tensor<16x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x40xf32>
  return %r : tensor<16x40xf32>
}

// -----

// A sequence projection as in Linformer, E[k, S] x X[B, H, S, D] ->
// [B, H, k, D]: B, H and D are all N dimensions. D, innermost in the
// result, is vectorised; B and H are blocked at 1 like batch dimensions.
// CHECK-LABEL: func.func @several_n
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x3x16x32xf32>)
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x3x16x32xf32>)
// CHECK: scf.for %{{.*}} -> (vector<8x32xf32>)
// CHECK-COUNT-8: vector.fma %{{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
func.func @several_n(%e: tensor<16x48xf32>, %x: tensor<2x3x48x32xf32>, %c: tensor<2x3x16x32xf32>) -> tensor<2x3x16x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, h, r, d, s) -> (r, s)>, affine_map<(b, h, r, d, s) -> (b, h, s, d)>, affine_map<(b, h, r, d, s) -> (b, h, r, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%e, %x : tensor<16x48xf32>, tensor<2x3x48x32xf32>) outs(%c : tensor<2x3x16x32xf32>) {
  ^bb0(%a: f32, %y: f32, %acc: f32):
    %m = arith.mulf %a, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x16x32xf32>
  return %r : tensor<2x3x16x32xf32>
}

// -----

// With dynamic M and N, the blocks before the last of each are static and
// vectorised; the remainder (M % 8 rows, N % 32 columns) stays a loop nest
// of scalar linalg ops.
// CHECK-LABEL: func.func @dynamic_block
// CHECK: affine.apply #{{.*}}()[%{{.*}}]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %{{.*}} -> (vector<8x32xf32>)
// CHECK-COUNT-8: vector.fma %{{.*}} : vector<32xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x?xf32>) outs(%{{.*}} : tensor<8x?xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x1xf32>, tensor<1x?xf32>) outs(%{{.*}} : tensor<?x?xf32>)
func.func @dynamic_block(%a: tensor<?x64xf32>, %b: tensor<64x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<?x64xf32>, tensor<64x?xf32>) outs(%c : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A row maximum over a tile of at most 64 x 64 (affine.min sizes): one row
// at a time, a masked 64-wide vector read, and the lanes past the row's end
// set to the identity (-inf) before an unmasked reduction (LLVM turns a
// masked reduction into a scalar chain), which is a tree of elementwise
// maxima of halves down to one element (LLVM expands a NaN-aware max
// reduction into a scalar chain too).
// CHECK-LABEL: func.func @rowmax
// CHECK: %[[ROWS:.*]] = affine.min
// CHECK: %[[KEYS:.*]] = affine.min
// CHECK: scf.for
// CHECK: %[[M:.*]] = vector.create_mask %[[KEYS]] : vector<64xi1>
// CHECK: vector.transfer_read %{{.*}}, %[[M]] {{.*}} : tensor<1x?xf32>, vector<64xf32>
// CHECK: %[[M1:.*]] = vector.create_mask %[[KEYS]] : vector<64xi1>
// CHECK: %[[ROW:.*]] = arith.select %[[M1]], %{{.*}}, %[[NEGINF:.*]] : vector<64xi1>, vector<64xf32>
// CHECK: %[[LO:.*]] = vector.extract_strided_slice %[[ROW]] {offsets = [0], sizes = [32], strides = [1]}
// CHECK: %[[HI:.*]] = vector.extract_strided_slice %[[ROW]] {offsets = [32], sizes = [32], strides = [1]}
// CHECK: arith.maxnumf %[[LO]], %[[HI]] : vector<32xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[ONE:.*]] = arith.maxnumf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK: %[[MAX:.*]] = vector.extract %[[ONE]][0] : f32 from vector<1xf32>
// CHECK: arith.maxnumf %[[MAX]], %{{.*}} : f32
// CHECK-NOT: vector.mask
// CHECK-NOT: linalg.generic
func.func @rowmax(%s: tensor<128x100xf32>, %m: tensor<128xf32>, %i: index, %j: index) -> tensor<?xf32> {
  %rows = affine.min affine_map<(d0) -> (64, 128 - d0)>(%i)
  %keys = affine.min affine_map<(d0) -> (64, 100 - d0)>(%j)
  %tile = tensor.extract_slice %s[%i, %j] [%rows, %keys] [1, 1] : tensor<128x100xf32> to tensor<?x?xf32>
  %init = tensor.extract_slice %m[%i] [%rows] [1] : tensor<128xf32> to tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%tile : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maxnumf %x, %acc fastmath<reassoc> : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// Rows longer than row-elements (attn.weights' probabilities span every
// key), of rank 4 with unit leading dimensions: one row at a time, n-block
// elements at a time, the last chunk masked; the row sum carried from chunk
// to chunk.
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.for %[[R:.*]] = %c0 to %c4 step %c1
// CHECK: %[[SUM:.*]] = scf.for %[[J:.*]] = %c0 to %c300 step %c32 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<1xf32>)
// CHECK: %[[N:.*]] = affine.min #{{.*}}(%[[J]])
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x1x?xf32>, vector<32xf32>
// CHECK: %[[A:.*]] = vector.extract %[[ACC]][0]
// CHECK: vector.reduction <add>, %{{.*}}, %[[A]] : vector<32xf32> into f32
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c300 step %c32
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, tensor<1x1x1x?xf32>
// CHECK-NOT: linalg.
// A contraction of rank 5 is not a row op: it is register-blocked.
// CHECK-LABEL: func.func @not_rows
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x8x32xf32>, vector<8x32xf32>
// CHECK: vector.fma %{{.*}} : vector<32xf32>
// CHECK-NOT: vector.reduction
// CHECK: return
func.func @long_rows(%s: tensor<1x1x4x300xf32>, %sum: tensor<1x1x4xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x4x300xf32>) {
  %r = linalg.reduce ins(%s : tensor<1x1x4x300xf32>) outs(%sum : tensor<1x1x4xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %n = linalg.generic {indexing_maps = [affine_map<(a, b, i, j) -> (a, b, i, j)>, affine_map<(a, b, i, j) -> (a, b, i)>, affine_map<(a, b, i, j) -> (a, b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : tensor<1x1x4x300xf32>, tensor<1x1x4xf32>) outs(%s : tensor<1x1x4x300xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x1x4x300xf32>
  return %r, %n : tensor<1x1x4xf32>, tensor<1x1x4x300xf32>
}

func.func @not_rows(%q: tensor<1x1x8x16xf32>, %kt: tensor<1x1x16x64xf32>, %s: tensor<1x1x8x64xf32>) -> tensor<1x1x8x64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, i, j, d) -> (a, b, i, d)>, affine_map<(a, b, i, j, d) -> (a, b, d, j)>, affine_map<(a, b, i, j, d) -> (a, b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : tensor<1x1x8x16xf32>, tensor<1x1x16x64xf32>) outs(%s : tensor<1x1x8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x1x8x64xf32>
  return %r : tensor<1x1x8x64xf32>
}

// -----

// Left alone: an op reading a bool mask (i1 is a byte in memory, a bit in
// a vector) and an op with unbounded rows.
// CHECK-LABEL: func.func @bool_mask
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.*}} : tensor<16xi1>
// CHECK-NOT: vector.
func.func @bool_mask(%s: tensor<8x16xf32>, %mask: tensor<16xi1>) -> tensor<8x16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%s : tensor<8x16xf32>) {
  ^bb0(%x: f32):
    %j = linalg.index 1 : index
    %keep = tensor.extract %mask[%j] : tensor<16xi1>
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %x, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Rows with no constant bound (a shape-generic function's keys): one row
// at a time, n-block elements at a time, the last chunk masked.
// CHECK-LABEL: func.func @unbounded
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK: %[[N:.*]] = affine.min
// CHECK: vector.create_mask %[[N]] : vector<32xi1>
// CHECK: arith.mulf {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
func.func @unbounded(%s: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%s : tensor<?x?xf32>) {
  ^bb0(%x: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A row maximum over such rows carries its accumulator in a register from
// chunk to chunk; the masked-off lanes of the last chunk read -inf.
// CHECK-LABEL: func.func @unbounded_row_max
// CHECK: %[[NINF:.*]] = arith.constant dense<0xFF800000> : vector<32xf32>
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<1xf32>)
// CHECK: %[[MASK:.*]] = vector.create_mask
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}}, %[[MASK]]
// CHECK: arith.select %{{.*}}, %[[X]], %[[NINF]] : vector<32xi1>, vector<32xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: scf.yield %{{.*}} : vector<1xf32>
// CHECK-NOT: linalg.generic
func.func @unbounded_row_max(%s: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%x: f32, %m: f32):
    %y = arith.maximumf %x, %m : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A static row count m-block does not divide: blocks of the smallest row
// count up to max-m-block that divides it (10 rows: two of 5, not 4 + 4 +
// a partial 2); with no such divisor (13) m-block rows and a partial last
// block.
// CHECK-LABEL: func.func @ten_rows
// DIVIDE-LABEL: func.func @ten_rows
// DIVIDE: scf.for %{{.*}} = %c0 to %c10 step %c5
// DIVIDE: vector.transfer_read {{.*}} : tensor<5x32xf32>, vector<5x32xf32>
// DIVIDE-NOT: vector<4x32xf32>
// DIVIDE-LABEL: func.func @thirteen_rows
// DIVIDE: scf.for %{{.*}} = %c0 to %c12 step %c4
// DIVIDE: vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// Columns that are not whole n-blocks (10 keys) keep m-block rows: a
// ragged block takes more registers than max-m-block counts.
// DIVIDE-LABEL: func.func @ten_by_ten
// DIVIDE: scf.for %{{.*}} = %c0 to %c8 step %c4
// DIVIDE-NOT: vector<5x
func.func @ten_rows(%a: tensor<10x64xf32>, %b: tensor<64x32xf32>, %c: tensor<10x32xf32>) -> tensor<10x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<10x64xf32>, tensor<64x32xf32>) outs(%c : tensor<10x32xf32>) -> tensor<10x32xf32>
  return %r : tensor<10x32xf32>
}

func.func @thirteen_rows(%a: tensor<13x64xf32>, %b: tensor<64x32xf32>, %c: tensor<13x32xf32>) -> tensor<13x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<13x64xf32>, tensor<64x32xf32>) outs(%c : tensor<13x32xf32>) -> tensor<13x32xf32>
  return %r : tensor<13x32xf32>
}

func.func @ten_by_ten(%a: tensor<10x64xf32>, %b: tensor<64x10xf32>, %c: tensor<10x10xf32>) -> tensor<10x10xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<10x64xf32>, tensor<64x10xf32>) outs(%c : tensor<10x10xf32>) -> tensor<10x10xf32>
  return %r : tensor<10x10xf32>
}

// -----

// A row whose added term is computed from loop indices alone (a score_mod's
// (j - i) / 8, found by attn-gen-fuzzer): the row is vectorised as a 1-D
// generic, so that the index vector and the row are the same shape (LLVM
// 22's vectoriser made the 1-D term a reduction into the [1, 1, 1, 16]
// row, which crashed the folder).
#row_map = affine_map<(d0) -> (-d0 + 130, 64)>
#row_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row_at = affine_map<(d0)[s0] -> (d0 + s0)>
// CHECK-LABEL: func.func @row_of_index_terms
// CHECK: scf.forall (%{{.*}}, %[[R0:.*]]) =
// CHECK: scf.for %[[R:.*]] = %c0
// CHECK: %[[ROW:.*]] = vector.transfer_read %{{.*}}[%c0], %{{.*}} {in_bounds = [true]} : tensor<16xf32>, vector<16xf32>
// CHECK: %[[I:.*]] = arith.addi %[[R0]], %[[R]] : index
// CHECK: %[[J:.*]] = vector.step : vector<16xindex>
// CHECK: %[[IB:.*]] = vector.broadcast %[[I]] : index to vector<16xindex>
// CHECK: arith.subi %[[J]], %[[IB]] : vector<16xindex>
// CHECK: %[[SUM:.*]] = arith.addf %[[ROW]], %{{.*}} : vector<16xf32>
// CHECK: vector.transfer_write %[[SUM]]
// CHECK-NOT: vector.multi_reduction
func.func @row_of_index_terms(%t0: tensor<3x1x130x16xf32>) -> tensor<3x1x130x16xf32> {
  %cst = arith.constant 0.125 : f32
  %r = scf.forall (%b, %r0) = (0, 0) to (3, 130) step (1, 64) shared_outs(%o = %t0) -> (tensor<3x1x130x16xf32>) {
    %n = affine.min #row_map(%r0)
    %t = tensor.extract_slice %o[%b, 0, %r0, 0] [1, 1, %n, 16] [1, 1, 1, 1] : tensor<3x1x130x16xf32> to tensor<1x1x?x16xf32>
    %s = linalg.generic {indexing_maps = [#row_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<1x1x?x16xf32>) {
    ^bb0(%out: f32):
      %i0 = linalg.index 2 : index
      %i = affine.apply #row_at(%r0)[%i0]
      %j = linalg.index 3 : index
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %bias = arith.mulf %df, %cst : f32
      %sum = arith.addf %out, %bias : f32
      linalg.yield %sum : f32
    } -> tensor<1x1x?x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%b, 0, %r0, 0] [1, 1, %n, 16] [1, 1, 1, 1] : tensor<1x1x?x16xf32> into tensor<3x1x130x16xf32>
    }
  }
  return %r : tensor<3x1x130x16xf32>
}

// -----

// A block starts from its own slice of the op's accumulator producer: a
// fill (attention's zeroed score tile: no memset, the K loop starts from
// zeros) or an elementwise op only the contraction reads (the output
// rescaled by the softmax's correction: no pass over the whole tile, each
// block scales its rows in registers before its K loop).
// CHECK-LABEL: func.func @init_producers
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<8x32xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[SCALED]]) -> (vector<8x32xf32>)
// CHECK-NOT: linalg.generic
func.func @init_producers(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %alpha: tensor<16xf32>, %c: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %e = tensor.empty() : tensor<16x32xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%alpha : tensor<16xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%scaled : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  return %s, %o : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// A producer something else reads too stays whole: the blocks read its
// result.
// CHECK-LABEL: func.func @shared_init
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<1x32xf32>
// CHECK: %[[ACC0:.*]] = vector.transfer_read %{{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[ACC0]]) -> (vector<8x32xf32>)
func.func @shared_init(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %alpha: tensor<16xf32>, %c: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %scaled = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%alpha : tensor<16xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%scaled : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  return %scaled, %o : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// The row maximum of attn-tile's online softmax (attn.softmax_max) is a
// tree of compare-and-selects over halves of the row (one vmaxps each on
// x86) and a last one with the running maximum; an unmarked maximum stays
// NaN-propagating.
// CHECK-LABEL: func.func @softmax_max
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xf32>
// CHECK-COUNT-5: arith.cmpf ogt
// CHECK: %[[ROW:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// CHECK: %[[RUNNING:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// CHECK: %[[GREATER:.*]] = arith.cmpf ogt, %[[ROW]], %[[RUNNING]] : f32
// CHECK: arith.select %[[GREATER]], %[[ROW]], %[[RUNNING]] : f32
// CHECK-NOT: maximumf
// CHECK: arith.maximumf
// CHECK-NOT: attn.softmax_max
func.func @softmax_max(%s: tensor<8x64xf32>, %m: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<8x64xf32>) outs(%m : tensor<8xf32>) attrs = {attn.softmax_max} {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc fastmath<reassoc> : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<8x64xf32>) outs(%m : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc fastmath<reassoc> : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r, %u : tensor<8xf32>, tensor<8xf32>
}
