// RUN: attn-opt %s --attn-pack-weights="panel=64" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-pack-weights="panel=64" --attn-lower-packs --split-input-file | FileCheck %s --check-prefix=LOWER
// RUN: not attn-opt %s --attn-pack-weights="panel=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-pack-weights: panel must be positive, got 0

// A matmul's [K, N] weight is read from [N / 64, K, 64] panels (a pack with
// the outer dimensions swapped); the result through its [M, N / 64, 64]
// view, the fill made again in that shape.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<100x512xf32>, %[[B:.*]]: tensor<512x192xf32>)
// CHECK-DAG: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<100x3x64xf32>)
// CHECK-DAG: %[[P:.*]] = linalg.pack %[[B]] outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [64] into %{{.*}} : tensor<512x192xf32> -> tensor<3x512x64xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[MA:.*]], #[[MP:.*]], #[[MC:.*]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[P]] : tensor<100x512xf32>, tensor<3x512x64xf32>) outs(%[[FILL]] : tensor<100x3x64xf32>)
// CHECK: tensor.collapse_shape %[[R]] {{\[}}[0], [1, 2]] : tensor<100x3x64xf32> into tensor<100x192xf32>
// LOWER-LABEL: func.func @matmul
// LOWER-NOT: linalg.pack
// LOWER: linalg.transpose ins(%{{.*}} : tensor<512x3x64xf32>) outs(%{{.*}} : tensor<3x512x64xf32>) permutation = [1, 0, 2]
func.func @matmul(%a: tensor<100x512xf32>, %b: tensor<512x192xf32>) -> tensor<100x192xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x192xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<100x192xf32>) -> tensor<100x192xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x512xf32>, tensor<512x192xf32>) outs(%f : tensor<100x192xf32>) -> tensor<100x192xf32>
  return %r : tensor<100x192xf32>
}

// -----

// A torch-layout weight [N, K] read through its transpose (a multihead
// projection) is packed directly, without the transpose; the broadcast bias
// starts the product as a broadcast of its own panels.
// CHECK-LABEL: func.func @torch_layout
// CHECK-SAME: (%[[X:.*]]: tensor<2x7x256xf32>, %[[W:.*]]: tensor<128x256xf32>, %[[BIAS:.*]]: tensor<128xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-DAG: %[[BP:.*]] = tensor.expand_shape %[[BIAS]] {{\[}}[0, 1]] output_shape [2, 64] : tensor<128xf32> into tensor<2x64xf32>
// CHECK-DAG: %[[INIT:.*]] = linalg.broadcast ins(%[[BP]] : tensor<2x64xf32>) outs(%{{.*}} : tensor<2x7x2x64xf32>) dimensions = [0, 1]
// CHECK-DAG: %[[P:.*]] = linalg.pack %[[W]] inner_dims_pos = [0] inner_tiles = [64] into %{{.*}} : tensor<128x256xf32> -> tensor<2x256x64xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[P]] : tensor<2x7x256xf32>, tensor<2x256x64xf32>) outs(%[[INIT]] : tensor<2x7x2x64xf32>)
#x = affine_map<(n, t, i, o) -> (n, t, i)>
#w = affine_map<(n, t, i, o) -> (i, o)>
#y = affine_map<(n, t, i, o) -> (n, t, o)>
func.func @torch_layout(%x: tensor<2x7x256xf32>, %w: tensor<128x256xf32>, %bias: tensor<128xf32>) -> tensor<2x7x128xf32> {
  %e = tensor.empty() : tensor<2x7x128xf32>
  %init = linalg.broadcast ins(%bias : tensor<128xf32>) outs(%e : tensor<2x7x128xf32>) dimensions = [0, 1]
  %et = tensor.empty() : tensor<256x128xf32>
  %wt = linalg.transpose ins(%w : tensor<128x256xf32>) outs(%et : tensor<256x128xf32>) permutation = [1, 0]
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %wt : tensor<2x7x256xf32>, tensor<256x128xf32>) outs(%init : tensor<2x7x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x7x128xf32>
  return %y : tensor<2x7x128xf32>
}

// -----

// Pre-packed weights: panels unpacked into a packed in-projection [3E, E]
// are what its q/k/v thirds read (slices of the argument); nothing is
// packed or transposed. The head split of the product ([N, L, H, D] to
// [N, H, L, D], D one panel) is written by the product itself.
// CHECK-LABEL: func.func @prepacked_heads
// CHECK-SAME: (%[[X:.*]]: tensor<2x7x128xf32>, %[[PANELS:.*]]: tensor<6x128x64xf32>)
// CHECK-NOT: linalg.pack
// CHECK-NOT: linalg.unpack
// CHECK: %[[THIRD:.*]] = tensor.extract_slice %[[PANELS]][2, 0, 0] [2, 128, 64] [1, 1, 1] : tensor<6x128x64xf32> to tensor<2x128x64xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[OUT:.*]]], {{.*}} ins(%[[X]], %[[THIRD]] : tensor<2x7x128xf32>, tensor<2x128x64xf32>) outs(%{{.*}} : tensor<2x2x7x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]] : tensor<2x2x7x64xf32>
func.func @prepacked_heads(%x: tensor<2x7x128xf32>, %panels: tensor<6x128x64xf32>) -> tensor<2x2x7x64xf32> {
  %z = arith.constant 0.0 : f32
  %eu = tensor.empty() : tensor<384x128xf32>
  %w = linalg.unpack %panels inner_dims_pos = [0] inner_tiles = [64] into %eu : tensor<6x128x64xf32> -> tensor<384x128xf32>
  %wk = tensor.extract_slice %w[128, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %et = tensor.empty() : tensor<128x128xf32>
  %wt = linalg.transpose ins(%wk : tensor<128x128xf32>) outs(%et : tensor<128x128xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<2x7x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x7x128xf32>) -> tensor<2x7x128xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, t, i, o) -> (n, t, i)>, affine_map<(n, t, i, o) -> (i, o)>, affine_map<(n, t, i, o) -> (n, t, o)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %wt : tensor<2x7x128xf32>, tensor<128x128xf32>) outs(%f : tensor<2x7x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x7x128xf32>
  %heads = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [2, 7, 2, 64] : tensor<2x7x128xf32> into tensor<2x7x2x64xf32>
  %eh = tensor.empty() : tensor<2x2x7x64xf32>
  %t = linalg.transpose ins(%heads : tensor<2x7x2x64xf32>) outs(%eh : tensor<2x2x7x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x2x7x64xf32>
}

// -----

// Left alone: N not a whole number of panels, and a contraction inside a
// parallel loop (the tiled attention's).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: linalg.pack
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<32x100xf32>)
// CHECK: scf.forall
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<32x128xf32>)
func.func @left_alone(%a: tensor<8x32xf32>, %b: tensor<32x100xf32>, %c: tensor<8x100xf32>,
                      %b2: tensor<32x128xf32>, %c2: tensor<8x128xf32>) -> (tensor<8x100xf32>, tensor<8x128xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<8x32xf32>, tensor<32x100xf32>) outs(%c : tensor<8x100xf32>) -> tensor<8x100xf32>
  %s = scf.forall (%i) in (1) shared_outs(%o = %c2) -> (tensor<8x128xf32>) {
    %m = linalg.matmul ins(%a, %b2 : tensor<8x32xf32>, tensor<32x128xf32>) outs(%o : tensor<8x128xf32>) -> tensor<8x128xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %m into %o[0, 0] [8, 128] [1, 1] : tensor<8x128xf32> into tensor<8x128xf32>
    }
  }
  return %r, %s : tensor<8x100xf32>, tensor<8x128xf32>
}

// -----

// attn-lower-packs: panels given to a function but read by something other
// than a packed product are unpacked (a transpose).
// LOWER-LABEL: func.func @unpack_for_other_use
// LOWER-NOT: linalg.unpack
// LOWER: linalg.transpose ins(%{{.*}} : tensor<2x16x64xf32>) outs(%{{.*}} : tensor<2x64x16xf32>) permutation = [0, 2, 1]
func.func @unpack_for_other_use(%panels: tensor<2x16x64xf32>) -> tensor<128x16xf32> {
  %e = tensor.empty() : tensor<128x16xf32>
  %w = linalg.unpack %panels inner_dims_pos = [0] inner_tiles = [64] into %e : tensor<2x16x64xf32> -> tensor<128x16xf32>
  return %w : tensor<128x16xf32>
}
