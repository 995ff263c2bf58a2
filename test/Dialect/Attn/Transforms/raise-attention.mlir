// attn-raise-attention on the forms frontends write: batched (3-D) products
// with K^T from a linalg.transpose and a division by a constant; 4-D
// linalg.generic products reading K transposed through the map and a
// multiplication by a splat constant; 2-D linalg.matmul with no scale step
// (scale 1, not the op's default 1/sqrt(D)); dynamic sizes. The numbers
// are checked by Integration/CPU/raise-attention.test.
// RUN: attn-opt %s --attn-raise-attention --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-raise-attention=explain=true --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[Q:.*]]: tensor<8x64x32xf32>, %[[K:.*]]: tensor<8x80x32xf32>, %[[V:.*]]: tensor<8x80x16xf32>)
// CHECK-DAG: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, 8, 64, 32]
// CHECK-DAG: %[[K4:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 8, 80, 32]
// CHECK-DAG: %[[V4:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [1, 8, 80, 16]
// CHECK: %[[O:.*]] = attn.sdpa %[[Q4]], %[[K4]], %[[V4]] outs(%{{.*}}) scale = 1.250000e-01 : tensor<1x8x64x32xf32>, tensor<1x8x80x32xf32>, tensor<1x8x80x16xf32> -> tensor<1x8x64x16xf32>
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3]]
// CHECK-NOT: linalg.softmax
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %[[R]]
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.250000e-01)
func.func @batched(%q: tensor<8x64x32xf32>, %k: tensor<8x80x32xf32>,
                   %v: tensor<8x80x16xf32>) -> tensor<8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %kt_init = tensor.empty() : tensor<8x32x80xf32>
  %kt = linalg.transpose ins(%k : tensor<8x80x32xf32>) outs(%kt_init : tensor<8x32x80xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x64x80xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x64x32xf32>, tensor<8x32x80xf32>) outs(%s_zero : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %c8 : f32
    linalg.yield %d : f32
  } -> tensor<8x64x80xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %o_init = tensor.empty() : tensor<8x64x16xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x64x80xf32>, tensor<8x80x16xf32>) outs(%o_zero : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  return %o : tensor<8x64x16xf32>
}

// -----

// CHECK-LABEL: func.func @four_d_generic
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xbf16>, %[[K:.*]]: tensor<2x4x24x8xbf16>, %[[V:.*]]: tensor<2x4x24x8xbf16>)
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] outs(%{{.*}}) scale = 2.500000e-01 : tensor<2x4x16x8xbf16>
// CHECK-NOT: linalg.softmax
// CHECK: return %[[O]]
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 2.500000e-01)
#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
func.func @four_d_generic(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x24x8xbf16>,
                          %v: tensor<2x4x24x8xbf16>) -> tensor<2x4x16x8xbf16> {
  %zero = arith.constant dense<0.0> : tensor<2x4x16x24xbf16>
  %quarter = arith.constant dense<0.25> : tensor<2x4x16x24xbf16>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x8xbf16>, tensor<2x4x24x8xbf16>) outs(%zero : tensor<2x4x16x24xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %sum = arith.addf %acc, %m : bf16
    linalg.yield %sum : bf16
  } -> tensor<2x4x16x24xbf16>
  %init = tensor.empty() : tensor<2x4x16x24xbf16>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%quarter, %s : tensor<2x4x16x24xbf16>, tensor<2x4x16x24xbf16>) outs(%init : tensor<2x4x16x24xbf16>) {
  ^bb0(%c: bf16, %x: bf16, %out: bf16):
    %m = arith.mulf %c, %x : bf16
    linalg.yield %m : bf16
  } -> tensor<2x4x16x24xbf16>
  %p = linalg.softmax dimension(3) ins(%scaled : tensor<2x4x16x24xbf16>) outs(%init : tensor<2x4x16x24xbf16>) -> tensor<2x4x16x24xbf16>
  %o_zero = arith.constant dense<0.0> : tensor<2x4x16x8xbf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x24xbf16>, tensor<2x4x24x8xbf16>) outs(%o_zero : tensor<2x4x16x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %sum = arith.addf %acc, %m : bf16
    linalg.yield %sum : bf16
  } -> tensor<2x4x16x8xbf16>
  return %o : tensor<2x4x16x8xbf16>
}

// -----

// CHECK-LABEL: func.func @matmul_2d_unscaled
// CHECK-SAME: (%[[Q:.*]]: tensor<?x64xf32>, %[[KT:.*]]: tensor<64x?xf32>, %[[V:.*]]: tensor<?x32xf32>)
// K^T is not a transpose's result: the pass transposes it back.
// CHECK: %[[K:.*]] = linalg.transpose ins(%[[KT]] : tensor<64x?xf32>) outs(%{{.*}} : tensor<?x64xf32>) permutation = [1, 0]
// CHECK-DAG: tensor.expand_shape %[[Q]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, %{{.*}}, 64] : tensor<?x64xf32> into tensor<1x1x?x64xf32>
// CHECK-DAG: tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3]]
// CHECK: attn.sdpa {{.*}} scale = 1.000000e+00 : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x32xf32> -> tensor<1x1x?x32xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<1x1x?x32xf32> into tensor<?x32xf32>
// CHECK-NOT: linalg.softmax
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.000000e+00, keys transposed)
func.func @matmul_2d_unscaled(%q: tensor<?x64xf32>, %kt: tensor<64x?xf32>,
                              %v: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %q, %c0 : tensor<?x64xf32>
  %keys = tensor.dim %kt, %c1 : tensor<64x?xf32>
  %s_init = tensor.empty(%rows, %keys) : tensor<?x?xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<?x64xf32>, tensor<64x?xf32>) outs(%s_zero : tensor<?x?xf32>) -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x?xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_init = tensor.empty(%rows) : tensor<?x32xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<?x32xf32>) -> tensor<?x32xf32>
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x32xf32>) outs(%o_zero : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}

// -----

// linalg.matmul reading K through a transposed indexing map (torch's
// q @ k.transpose(-2, -1) as a frontend writes it), and the probabilities
// also returned: they stay, the product is raised.
// CHECK-LABEL: func.func @matmul_transpose_b_probabilities_kept
// CHECK: %[[P:.*]] = linalg.softmax
// CHECK: %[[O:.*]] = attn.sdpa {{.*}} scale = 5.000000e-01
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[O]]
// CHECK: return %[[R]], %[[P]]
func.func @matmul_transpose_b_probabilities_kept(
    %q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x8xf32>)
    -> (tensor<16x8xf32>, tensor<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %s_init = tensor.empty() : tensor<16x24xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<16x24xf32>) -> tensor<16x24xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>]
         ins(%q, %k : tensor<16x8xf32>, tensor<24x8xf32>) outs(%s_zero : tensor<16x24xf32>) -> tensor<16x24xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x24xf32>) outs(%s_init : tensor<16x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %half : f32
    linalg.yield %m : f32
  } -> tensor<16x24xf32>
  %p = linalg.softmax dimension(1) ins(%scaled : tensor<16x24xf32>) outs(%s_init : tensor<16x24xf32>) -> tensor<16x24xf32>
  %o_init = tensor.empty() : tensor<16x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x24xf32>, tensor<24x8xf32>) outs(%o_zero : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o, %p : tensor<16x8xf32>, tensor<16x24xf32>
}

// -----

// Masks, as frontends write them after the scale: an additive float mask
// broadcast over the batch (attn.sdpa's `mask`, NumPy broadcasting), a
// boolean select keeping the scores where the mask holds, one dropping them
// where it holds (the mask inverted for attn.sdpa), and a triangle of loop
// indices above the diagonal (torch.triu(ones, 1)): causal.
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#ij = affine_map<(b, i, j) -> (i, j)>
#s = affine_map<(b, i, j) -> ()>

// CHECK-LABEL: func.func @additive
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<8x12xf32>
// CHECK: attn.sdpa {{.*}} mask(%[[M]] : tensor<8x12xf32>) outs(%{{.*}}) scale = 5.000000e-01 :
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 5.000000e-01, additive mask)
func.func @additive(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x4xf32>,
                    %m: tensor<8x12xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %masked = linalg.generic {indexing_maps = [#ij, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %scaled : tensor<8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%mm: f32, %in: f32, %out: f32):
    %r = arith.addf %mm, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x12xf32>, tensor<2x12x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @keep_where_true
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<2x8x12xi1>
// CHECK: attn.sdpa {{.*}} mask(%[[C]] : tensor<2x8x12xi1>) outs(%{{.*}}) scale = 1.000000e+00 :
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.000000e+00, boolean mask)
func.func @keep_where_true(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x4xf32>,
                           %c: tensor<2x8x12xi1>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant dense<0xFF800000> : tensor<f32>
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3, #s, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %s, %minf : tensor<2x8x12xi1>, tensor<2x8x12xf32>, tensor<f32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%cc: i1, %in: f32, %f: f32, %out: f32):
    %r = arith.select %cc, %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x12xf32>, tensor<2x12x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @drop_where_true
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<8x12xi1>
// CHECK: %[[KEEP:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<8x12xi1>)
// CHECK: arith.xori
// CHECK: attn.sdpa {{.*}} mask(%[[KEEP]] : tensor<8x12xi1>)
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.000000e+00, boolean mask inverted)
func.func @drop_where_true(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x4xf32>,
                           %c: tensor<8x12xi1>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %masked = linalg.generic {indexing_maps = [#ij, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %s : tensor<8x12xi1>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%cc: i1, %in: f32, %out: f32):
    %r = arith.select %cc, %minf, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x12xf32>, tensor<2x12x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @triangle
// CHECK-NOT: mask(
// CHECK: attn.sdpa {{.*}} outs(%{{.*}}) scale = 1.000000e+00 causal :
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.000000e+00, causal)
func.func @triangle(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %false = arith.constant false
  %true = arith.constant dense<true> : tensor<8x8xi1>
  %t_init = tensor.empty() : tensor<8x8xi1>
  // key j is dropped from row i when i < j (the triangle above the diagonal).
  %above = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%true : tensor<8x8xi1>) outs(%t_init : tensor<8x8xi1>) {
  ^bb0(%in: i1, %out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %lt = arith.cmpi slt, %i, %j : index
    %r = arith.select %lt, %in, %false : i1
    linalg.yield %r : i1
  } -> tensor<8x8xi1>
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %masked = linalg.generic {indexing_maps = [#ij, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%above, %s : tensor<8x8xi1>, tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) {
  ^bb0(%cc: i1, %in: f32, %out: f32):
    %r = arith.select %cc, %minf, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// The scale as a named linalg.mul by a splat constant (what several
// frontends write; it used to stay unraised: "not a multiply-add
// contraction (linalg.mul)"), and an unrelated linalg.mul left as it is.
// CHECK-LABEL: func.func @named_mul_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<8x64x32xf32>, %[[K:.*]]: tensor<8x80x32xf32>, %[[V:.*]]: tensor<8x80x16xf32>, %[[X:.*]]: tensor<8x64x16xf32>)
// CHECK: %[[O:.*]] = attn.sdpa {{.*}} scale = 1.250000e-01
// CHECK-NOT: linalg.softmax
// CHECK: linalg.mul ins(%[[X]], %[[X]]
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.250000e-01)
func.func @named_mul_scale(%q: tensor<8x64x32xf32>, %k: tensor<8x80x32xf32>,
                           %v: tensor<8x80x16xf32>, %x: tensor<8x64x16xf32>)
    -> (tensor<8x64x16xf32>, tensor<8x64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<0.125> : tensor<8x64x80xf32>
  %kt_init = tensor.empty() : tensor<8x32x80xf32>
  %kt = linalg.transpose ins(%k : tensor<8x80x32xf32>) outs(%kt_init : tensor<8x32x80xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x64x80xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x64x32xf32>, tensor<8x32x80xf32>) outs(%s_zero : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %scaled = linalg.mul ins(%s, %c : tensor<8x64x80xf32>, tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %o_init = tensor.empty() : tensor<8x64x16xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x64x80xf32>, tensor<8x80x16xf32>) outs(%o_zero : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  %sq = linalg.mul ins(%x, %x : tensor<8x64x16xf32>, tensor<8x64x16xf32>) outs(%o_init : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  return %o, %sq : tensor<8x64x16xf32>, tensor<8x64x16xf32>
}

// -----

// The scale as a division by a splat (linalg.div), and as linalg.elementwise.
// CHECK-LABEL: func.func @named_div_scale
// CHECK: attn.sdpa {{.*}} scale = 1.250000e-01
// CHECK-NOT: linalg.softmax
// CHECK-LABEL: func.func @elementwise_mul_scale
// CHECK: attn.sdpa {{.*}} scale = 2.500000e-01
// CHECK-NOT: linalg.softmax
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.250000e-01)
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 2.500000e-01)
func.func @named_div_scale(%q: tensor<8x64x32xf32>, %k: tensor<8x80x32xf32>,
                           %v: tensor<8x80x16xf32>) -> tensor<8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<8.0> : tensor<8x64x80xf32>
  %kt_init = tensor.empty() : tensor<8x32x80xf32>
  %kt = linalg.transpose ins(%k : tensor<8x80x32xf32>) outs(%kt_init : tensor<8x32x80xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x64x80xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x64x32xf32>, tensor<8x32x80xf32>) outs(%s_zero : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %scaled = linalg.div ins(%s, %c : tensor<8x64x80xf32>, tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %o_init = tensor.empty() : tensor<8x64x16xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x64x80xf32>, tensor<8x80x16xf32>) outs(%o_zero : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  return %o : tensor<8x64x16xf32>
}

func.func @elementwise_mul_scale(%q: tensor<8x64x32xf32>, %k: tensor<8x80x32xf32>,
                                 %v: tensor<8x80x16xf32>) -> tensor<8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<0.25> : tensor<8x64x80xf32>
  %kt_init = tensor.empty() : tensor<8x32x80xf32>
  %kt = linalg.transpose ins(%k : tensor<8x80x32xf32>) outs(%kt_init : tensor<8x32x80xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x64x80xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x64x32xf32>, tensor<8x32x80xf32>) outs(%s_zero : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %scaled = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%c, %s : tensor<8x64x80xf32>, tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x64x80xf32>) outs(%s_init : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
  %o_init = tensor.empty() : tensor<8x64x16xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x64x80xf32>, tensor<8x80x16xf32>) outs(%o_zero : tensor<8x64x16xf32>) -> tensor<8x64x16xf32>
  return %o : tensor<8x64x16xf32>
}

// -----

// JAX's softmax through IREE's StableHLO input: the row max and row sum
// broadcast to the scores' shape by generics that only copy them
// (broadcast_in_dim), read elementwise by the subtract and the divide; the
// scale a Python float torch-mlir writes as an f64 constant truncated to
// f32 in the body (1 / 4.0 rounded to f32 is exact: 0.25).
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// CHECK-LABEL: func.func @broadcast_rows_truncated_scale
// CHECK: attn.sdpa {{.*}} scale = 2.500000e-01 :
// CHECK-NOT: linalg.generic
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 2.500000e-01)
func.func @broadcast_rows_truncated_scale(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>,
                                          %v: tensor<2x12x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %four = arith.constant 4.0 : f64
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.truncf %four : f64 to f32
    %r = arith.divf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %r_init = tensor.empty() : tensor<2x8xf32>
  %r_minf = linalg.fill ins(%minf : f32) outs(%r_init : tensor<2x8xf32>) -> tensor<2x8xf32>
  %max = linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%scaled : tensor<2x8x12xf32>) outs(%r_minf : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %max_b = linalg.generic {indexing_maps = [#row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%max : tensor<2x8xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x12xf32>
  %shifted = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%scaled, %max_b : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %exps = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%shifted : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_init : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%exps : tensor<2x8x12xf32>) outs(%r_zero : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %sum_b = linalg.generic {indexing_maps = [#row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<2x8xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x12xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%exps, %sum_b : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%e: f32, %t: f32, %out: f32):
    %r = arith.divf %e, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x12xf32>, tensor<2x12x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// The decomposed softmax written with named ops: linalg.reduce for the row
// max and sum, linalg.broadcast to spread them over the rows, linalg.sub,
// linalg.exp and linalg.div; the scale a linalg.mul by a splat.
// CHECK-LABEL: func.func @named_softmax
// CHECK: attn.sdpa {{.*}} scale = 1.250000e-01 :
// CHECK-NOT: linalg.exp
// CHECK-NOT: linalg.div
// EXPLAIN: remark: attn-raise-attention: raised into attn.sdpa (scale 1.250000e-01)
func.func @named_softmax(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>,
                         %v: tensor<2x12x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %c = arith.constant dense<0.125> : tensor<2x8x12xf32>
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %scaled = linalg.mul ins(%s, %c : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %r_init = tensor.empty() : tensor<2x8xf32>
  %r_minf = linalg.fill ins(%minf : f32) outs(%r_init : tensor<2x8xf32>) -> tensor<2x8xf32>
  %max = linalg.reduce ins(%scaled : tensor<2x8x12xf32>) outs(%r_minf : tensor<2x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %max_b = linalg.broadcast ins(%max : tensor<2x8xf32>) outs(%s_init : tensor<2x8x12xf32>) dimensions = [2]
  %shifted = linalg.sub ins(%scaled, %max_b : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %exps = linalg.exp ins(%shifted : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_init : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.reduce ins(%exps : tensor<2x8x12xf32>) outs(%r_zero : tensor<2x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %sum_b = linalg.broadcast ins(%sum : tensor<2x8xf32>) outs(%s_init : tensor<2x8x12xf32>) dimensions = [2]
  %p = linalg.div ins(%exps, %sum_b : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x12xf32>, tensor<2x12x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}
