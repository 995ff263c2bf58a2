// RUN: attn-opt %s --attn-pack-weights="panel=64" --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=1024 | FileCheck %s
// RUN: attn-opt %s --attn-pack-weights="panel=64" --attn-lower-packs --split-input-file | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %s --attn-pack-weights="panel=32" --split-input-file | FileCheck %s --check-prefix=PANEL32
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

// -----

// A constant weight is packed at compile time: its panels are a constant
// (element [i, k, j] = W[k, 64 i + j]), nothing is packed per call.
// CHECK-LABEL: func.func @constant_weight
// CHECK-NOT: linalg.pack
// CHECK-DAG: %[[P:.*]] = arith.constant dense<{{\[}}{{\[}}[0.000000e+00, 1.000000e+00, {{.*}}, 6.300000e+01], [1.280000e+02, {{.*}}, 1.910000e+02]], {{\[}}[6.400000e+01, {{.*}}, 1.270000e+02], [1.920000e+02, {{.*}}, 2.550000e+02]]]> : tensor<2x2x64xf32>
// A splat stays one.
// CHECK-DAG: %[[H:.*]] = arith.constant dense<5.000000e-01> : tensor<2x2x64xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<3x2xf32>, tensor<2x2x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[H]] : tensor<3x2xf32>, tensor<2x2x64xf32>)
func.func @constant_weight(%a: tensor<3x2xf32>, %c: tensor<3x128xf32>) -> (tensor<3x128xf32>, tensor<3x128xf32>) {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0], [128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0, 148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0, 164.0, 165.0, 166.0, 167.0, 168.0, 169.0, 170.0, 171.0, 172.0, 173.0, 174.0, 175.0, 176.0, 177.0, 178.0, 179.0, 180.0, 181.0, 182.0, 183.0, 184.0, 185.0, 186.0, 187.0, 188.0, 189.0, 190.0, 191.0, 192.0, 193.0, 194.0, 195.0, 196.0, 197.0, 198.0, 199.0, 200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0, 216.0, 217.0, 218.0, 219.0, 220.0, 221.0, 222.0, 223.0, 224.0, 225.0, 226.0, 227.0, 228.0, 229.0, 230.0, 231.0, 232.0, 233.0, 234.0, 235.0, 236.0, 237.0, 238.0, 239.0, 240.0, 241.0, 242.0, 243.0, 244.0, 245.0, 246.0, 247.0, 248.0, 249.0, 250.0, 251.0, 252.0, 253.0, 254.0, 255.0]]> : tensor<2x128xf32>
  %r = linalg.matmul ins(%a, %w : tensor<3x2xf32>, tensor<2x128xf32>) outs(%c : tensor<3x128xf32>) -> tensor<3x128xf32>
  %h = arith.constant dense<0.5> : tensor<2x128xf32>
  %s = linalg.matmul ins(%a, %h : tensor<3x2xf32>, tensor<2x128xf32>) outs(%c : tensor<3x128xf32>) -> tensor<3x128xf32>
  return %r, %s : tensor<3x128xf32>, tensor<3x128xf32>
}

// -----

// A matmul reading its weight [N, K] through a transposing indexing map
// (what the Python tests call with pre-packed panels): the panels argument
// is read directly.
// CHECK-LABEL: func.func @transposed_b
// CHECK-SAME: (%[[X:.*]]: tensor<5x32xf32>, %[[PANELS:.*]]: tensor<2x32x64xf32>
// CHECK-NOT: linalg.unpack
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[PANELS]] : tensor<5x32xf32>, tensor<2x32x64xf32>)
func.func @transposed_b(%x: tensor<5x32xf32>, %panels: tensor<2x32x64xf32>, %c: tensor<5x128xf32>) -> tensor<5x128xf32> {
  %e = tensor.empty() : tensor<128x32xf32>
  %w = linalg.unpack %panels inner_dims_pos = [0] inner_tiles = [64] into %e : tensor<2x32x64xf32> -> tensor<128x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<5x32xf32>, tensor<128x32xf32>) outs(%c : tensor<5x128xf32>) -> tensor<5x128xf32>
  return %r : tensor<5x128xf32>
}

// -----

// Shape-generic (dynamic batch and length): the bias broadcast is remade
// in the panel shape and the head split is still written by the product
// (the sizes of the product's result resolve to those of its input).
// CHECK-LABEL: func.func @dynamic_heads
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<2x64xf32>) outs(%{{.*}} : tensor<?x2x?x64xf32>) dimensions = [0, 2]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x?x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @dynamic_heads(%x: tensor<?x?x128xf32>, %w: tensor<128x128xf32>, %bias: tensor<128xf32>) -> tensor<?x2x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x128xf32>
  %l = tensor.dim %x, %c1 : tensor<?x?x128xf32>
  %e = tensor.empty(%n, %l) : tensor<?x?x128xf32>
  %init = linalg.broadcast ins(%bias : tensor<128xf32>) outs(%e : tensor<?x?x128xf32>) dimensions = [0, 1]
  %et = tensor.empty() : tensor<128x128xf32>
  %wt = linalg.transpose ins(%w : tensor<128x128xf32>) outs(%et : tensor<128x128xf32>) permutation = [1, 0]
  %y = linalg.generic {indexing_maps = [affine_map<(n, t, i, o) -> (n, t, i)>, affine_map<(n, t, i, o) -> (i, o)>, affine_map<(n, t, i, o) -> (n, t, o)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %wt : tensor<?x?x128xf32>, tensor<128x128xf32>) outs(%init : tensor<?x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x128xf32>
  %n2 = tensor.dim %y, %c0 : tensor<?x?x128xf32>
  %l2 = tensor.dim %y, %c1 : tensor<?x?x128xf32>
  %heads = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [%n2, %l2, 2, 64] : tensor<?x?x128xf32> into tensor<?x?x2x64xf32>
  %eh = tensor.empty(%n2, %l2) : tensor<?x2x?x64xf32>
  %t = linalg.transpose ins(%heads : tensor<?x?x2x64xf32>) outs(%eh : tensor<?x2x?x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<?x2x?x64xf32>
}

// -----

// Q, K and V projected together (attn-decompose-multihead): the product
// [N, L, 3E] is viewed as [N, L, 3, H, D] and transposed to
// [3, N, H, L, D]. The view is folded into the packed product (its panel
// dimension split in two, the weight's panels and the bias viewed the
// same way) and the product writes the transposed layout itself.
// CHECK-DAG: #[[$PW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4, d2, d5)>
// CHECK-DAG: #[[$PY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4, d1, d5)>
// CHECK-LABEL: func.func @qkv_together
// CHECK: %[[PACK:.*]] = linalg.pack %{{.*}} inner_dims_pos = [0] inner_tiles = [64] into %{{.*}} : tensor<384x128xf32> -> tensor<6x128x64xf32>
// CHECK: %[[PANELS:.*]] = tensor.expand_shape %[[PACK]] {{\[}}[0, 1], [2], [3]] output_shape [3, 2, 128, 64]
// CHECK: %[[BIAS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [3, 2, 64] : tensor<384xf32> into tensor<3x2x64xf32>
// CHECK: %[[INIT:.*]] = linalg.broadcast ins(%[[BIAS]] : tensor<3x2x64xf32>) outs(%{{.*}} : tensor<3x2x2x10x64xf32>) dimensions = [1, 3]
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$PW]], #[[$PY]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %[[PANELS]] : tensor<2x10x128xf32>, tensor<3x2x128x64xf32>) outs(%[[INIT]] : tensor<3x2x2x10x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[P]]
// With panels of 32 columns a head (D = 64) is two panels: the panel index
// splits into [3, H, 2] and the product writes [3, N, H, L, 2, 32], which
// is [3, N, H, L, D] with its last two dimensions merged.
// PANEL32-DAG: #[[$PW32:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d2, d6)>
// PANEL32-DAG: #[[$PY32:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d0, d4, d1, d5, d6)>
// PANEL32-LABEL: func.func @qkv_together
// PANEL32: %[[PACK:.*]] = linalg.pack %{{.*}} inner_dims_pos = [0] inner_tiles = [32] into %{{.*}} : tensor<384x128xf32> -> tensor<12x128x32xf32>
// PANEL32: %[[PANELS:.*]] = tensor.expand_shape %[[PACK]] {{\[}}[0, 1, 2], [3], [4]] output_shape [3, 2, 2, 128, 32]
// PANEL32: %[[BIAS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2, 3]] output_shape [3, 2, 2, 32] : tensor<384xf32> into tensor<3x2x2x32xf32>
// PANEL32: %[[INIT:.*]] = linalg.broadcast ins(%[[BIAS]] : tensor<3x2x2x32xf32>) outs(%{{.*}} : tensor<3x2x2x10x2x32xf32>) dimensions = [1, 3]
// PANEL32: %[[P:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$PW32]], #[[$PY32]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %[[PANELS]] : tensor<2x10x128xf32>, tensor<3x2x2x128x32xf32>) outs(%[[INIT]] : tensor<3x2x2x10x2x32xf32>)
// PANEL32: %[[HEADS:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0], [1], [2], [3], [4, 5]] : tensor<3x2x2x10x2x32xf32> into tensor<3x2x2x10x64xf32>
// PANEL32-NOT: linalg.transpose
// PANEL32: return %[[HEADS]]
#x = affine_map<(n, l, k, o) -> (n, l, k)>
#w = affine_map<(n, l, k, o) -> (k, o)>
#y = affine_map<(n, l, k, o) -> (n, l, o)>
func.func @qkv_together(%x: tensor<2x10x128xf32>, %wi: tensor<384x128xf32>, %bi: tensor<384xf32>) -> tensor<3x2x2x10x64xf32> {
  %e = tensor.empty() : tensor<2x10x384xf32>
  %b = linalg.broadcast ins(%bi : tensor<384xf32>) outs(%e : tensor<2x10x384xf32>) dimensions = [0, 1]
  %et = tensor.empty() : tensor<128x384xf32>
  %wt = linalg.transpose ins(%wi : tensor<384x128xf32>) outs(%et : tensor<128x384xf32>) permutation = [1, 0]
  %p = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %wt : tensor<2x10x128xf32>, tensor<128x384xf32>) outs(%b : tensor<2x10x384xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10x384xf32>
  %v = tensor.expand_shape %p [[0], [1], [2, 3, 4]] output_shape [2, 10, 3, 2, 64] : tensor<2x10x384xf32> into tensor<2x10x3x2x64xf32>
  %es = tensor.empty() : tensor<3x2x2x10x64xf32>
  %s = linalg.transpose ins(%v : tensor<2x10x3x2x64xf32>) outs(%es : tensor<3x2x2x10x64xf32>) permutation = [2, 0, 3, 1, 4]
  return %s : tensor<3x2x2x10x64xf32>
}

// -----

// Heads of 48 columns are not whole 32-column panels: the head split stays
// a transpose of the packed product's result.
// PANEL32-LABEL: func.func @qkv_heads_across_panels
// PANEL32: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x10x9x32xf32>)
// PANEL32: linalg.transpose ins(%{{.*}} : tensor<2x10x3x2x48xf32>) outs(%{{.*}} : tensor<3x2x2x10x48xf32>) permutation = [2, 0, 3, 1, 4]
#x = affine_map<(n, l, k, o) -> (n, l, k)>
#w = affine_map<(n, l, k, o) -> (k, o)>
#y = affine_map<(n, l, k, o) -> (n, l, o)>
func.func @qkv_heads_across_panels(%x: tensor<2x10x96xf32>, %wi: tensor<288x96xf32>) -> tensor<3x2x2x10x48xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x10x288xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x10x288xf32>) -> tensor<2x10x288xf32>
  %et = tensor.empty() : tensor<96x288xf32>
  %wt = linalg.transpose ins(%wi : tensor<288x96xf32>) outs(%et : tensor<96x288xf32>) permutation = [1, 0]
  %p = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %wt : tensor<2x10x96xf32>, tensor<96x288xf32>) outs(%f : tensor<2x10x288xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10x288xf32>
  %v = tensor.expand_shape %p [[0], [1], [2, 3, 4]] output_shape [2, 10, 3, 2, 48] : tensor<2x10x288xf32> into tensor<2x10x3x2x48xf32>
  %es = tensor.empty() : tensor<3x2x2x10x48xf32>
  %s = linalg.transpose ins(%v : tensor<2x10x3x2x48xf32>) outs(%es : tensor<3x2x2x10x48xf32>) permutation = [2, 0, 3, 1, 4]
  return %s : tensor<3x2x2x10x48xf32>
}

// -----

// A loop's result whose only use is a transpose that moves only unit
// dimensions of its tiles (the attention's [N, H, L, D] output made
// [N, L, H, D] for the out-projection): the loop inserts its tiles into
// the transposed destination. A transpose within the tiles stays.
// CHECK-LABEL: func.func @tiles_transposed
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x40x3x16xf32>
// CHECK: %[[R:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = (0, 0, 0) to (2, 3, 40) step (1, 1, 8) shared_outs(%[[O:.*]] = %[[E]]) -> (tensor<2x40x3x16xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[B]], %[[I]], %[[H]], 0] [1, 8, 1, 16] [1, 1, 1, 1] : tensor<8x16xf32> into tensor<2x40x3x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @tiles_permuted
// CHECK: linalg.transpose {{.*}} permutation = [0, 1, 3, 2]
func.func @tiles_transposed(%x: tensor<2x3x40x16xf32>) -> tensor<2x40x3x16xf32> {
  %e = tensor.empty() : tensor<2x3x40x16xf32>
  %r = scf.forall (%b, %h, %i) = (0, 0, 0) to (2, 3, 40) step (1, 1, 8) shared_outs(%o = %e) -> (tensor<2x3x40x16xf32>) {
    %t = tensor.extract_slice %x[%b, %h, %i, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<2x3x40x16xf32> to tensor<8x16xf32>
    %n = linalg.negf ins(%t : tensor<8x16xf32>) outs(%t : tensor<8x16xf32>) -> tensor<8x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %n into %o[%b, %h, %i, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<8x16xf32> into tensor<2x3x40x16xf32>
    }
  }
  %et = tensor.empty() : tensor<2x40x3x16xf32>
  %m = linalg.transpose ins(%r : tensor<2x3x40x16xf32>) outs(%et : tensor<2x40x3x16xf32>) permutation = [0, 2, 1, 3]
  return %m : tensor<2x40x3x16xf32>
}

func.func @tiles_permuted(%x: tensor<2x3x40x16xf32>) -> tensor<2x3x16x40xf32> {
  %e = tensor.empty() : tensor<2x3x40x16xf32>
  %r = scf.forall (%b, %h, %i) = (0, 0, 0) to (2, 3, 40) step (1, 1, 8) shared_outs(%o = %e) -> (tensor<2x3x40x16xf32>) {
    %t = tensor.extract_slice %x[%b, %h, %i, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<2x3x40x16xf32> to tensor<8x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%b, %h, %i, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<8x16xf32> into tensor<2x3x40x16xf32>
    }
  }
  %et = tensor.empty() : tensor<2x3x16x40xf32>
  %m = linalg.transpose ins(%r : tensor<2x3x40x16xf32>) outs(%et : tensor<2x3x16x40xf32>) permutation = [0, 1, 3, 2]
  return %m : tensor<2x3x16x40xf32>
}

// -----

// A weight gradient dW[n, k] += dY[m, n] * X[m, k] reads dY K-major: it
// reads dY^T instead (rows of the register block contiguous), and X as the
// weight, from panels.
// CHECK-LABEL: func.func @weight_grad
// CHECK-SAME: (%[[DY:.*]]: tensor<100x192xf32>, %[[X:.*]]: tensor<100x128xf32>)
// CHECK-DAG: %[[T:.*]] = linalg.transpose ins(%[[DY]] : tensor<100x192xf32>) outs(%{{.*}} : tensor<192x100xf32>) permutation = [1, 0]
// CHECK-DAG: %[[P:.*]] = linalg.pack %[[X]] outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [64] into %{{.*}} : tensor<100x128xf32> -> tensor<2x100x64xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[T]], %[[P]] : tensor<192x100xf32>, tensor<2x100x64xf32>)
func.func @weight_grad(%dy: tensor<100x192xf32>, %x: tensor<100x128xf32>) -> tensor<192x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<192x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x128xf32>) -> tensor<192x128xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(n, k, m) -> (m, n)>, affine_map<(n, k, m) -> (m, k)>, affine_map<(n, k, m) -> (n, k)>]
      ins(%dy, %x : tensor<100x192xf32>, tensor<100x128xf32>) outs(%f : tensor<192x128xf32>) -> tensor<192x128xf32>
  return %r : tensor<192x128xf32>
}

// -----

// The same with a dynamic M (tokens) and an N that fills no panel: the
// transpose takes its size from dY; nothing is packed.
// CHECK-LABEL: func.func @weight_grad_dynamic
// CHECK-SAME: (%[[DY:.*]]: tensor<?x192xf32>, %[[X:.*]]: tensor<?x100xf32>)
// CHECK: %[[M:.*]] = tensor.dim %[[DY]], %{{.*}} : tensor<?x192xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[M]]) : tensor<192x?xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[DY]] : tensor<?x192xf32>) outs(%[[E]] : tensor<192x?xf32>) permutation = [1, 0]
// CHECK-NOT: linalg.pack
// CHECK: linalg.generic {{.*}} ins(%[[T]], %[[X]] : tensor<192x?xf32>, tensor<?x100xf32>) outs(%{{.*}} : tensor<192x100xf32>)
func.func @weight_grad_dynamic(%dy: tensor<?x192xf32>, %x: tensor<?x100xf32>) -> tensor<192x100xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<192x100xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x100xf32>) -> tensor<192x100xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(n, k, m) -> (m, n)>, affine_map<(n, k, m) -> (m, k)>, affine_map<(n, k, m) -> (n, k)>]
      ins(%dy, %x : tensor<?x192xf32>, tensor<?x100xf32>) outs(%f : tensor<192x100xf32>) -> tensor<192x100xf32>
  return %r : tensor<192x100xf32>
}
