// Attention written in linalg (two contractions around linalg.softmax), as
// a frontend emits it, compiled by the CPU pipeline, which raises it into
// attn.sdpa (attn-raise-attention) and tiles it, and checked against the
// float64 build of the module as written (the reference pipeline does not
// raise: its linalg.softmax is decomposed by attn-decompose-aggregates and
// the products stay matmuls). The same module compiled without raising
// (raise-attention=0), and a softmax that is not raised (a mask added before
// the scale),
// run through the decomposition.
// RUN: attn-opt %s --attn-cpu-pipeline --mlir-print-ir-after=attn-raise-attention -o /dev/null 2>&1 | FileCheck %s --check-prefix=RAISED
// RUN: attn-run %s --entry=batched --check | FileCheck %s
// RUN: attn-run %s --entry=batched --check --cpu-pipeline=raise-attention=0 | FileCheck %s
// RUN: attn-run %s --entry=four_d_generic --check | FileCheck %s
// RUN: attn-run %s --entry=mask_then_scale --check | FileCheck %s
// Masks raised with the attention: an additive one, boolean ones kept
// where true and dropped where true (inverted), and causal from a triangle
// of loop indices.
// RUN: attn-run %s --entry=additive --check | FileCheck %s
// RUN: attn-run %s --entry=keep_where_true --check | FileCheck %s
// RUN: attn-run %s --entry=drop_where_true --check | FileCheck %s
// RUN: attn-run %s --entry=triangle --check | FileCheck %s
// The scale as a named linalg.div by a splat (generalized, then raised).
// RUN: attn-run %s --entry=named_div_scale --check | FileCheck %s
// CHECK: result #0 {{.*}} ok
// CHECK-NOT: FAIL

// RAISED-LABEL: func.func @batched
// RAISED: attn.sdpa {{.*}} scale = 1.250000e-01
// RAISED-NOT: linalg.softmax
// RAISED-LABEL: func.func @four_d_generic
// RAISED: attn.sdpa {{.*}} scale = 2.500000e-01
// RAISED-LABEL: func.func @mask_then_scale
// RAISED-NOT: attn.sdpa
// RAISED: linalg.softmax
// RAISED-LABEL: func.func @additive(
// RAISED: attn.sdpa {{.*}} mask(
// RAISED-LABEL: func.func @triangle
// RAISED: attn.sdpa {{.*}} causal
// RAISED-LABEL: func.func @named_div_scale
// RAISED: attn.sdpa {{.*}} scale = 1.250000e-01

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

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @mask_then_scale(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>,
                           %v: tensor<2x8x4xf32>, %mask: tensor<2x8x8xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %a = arith.addf %in, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%masked : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

#id3b = affine_map<(b, i, j) -> (b, i, j)>
#ij = affine_map<(b, i, j) -> (i, j)>
#s = affine_map<(b, i, j) -> ()>

func.func @additive(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x4xf32>,
                    %m: tensor<8x12xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %scaled = linalg.generic {indexing_maps = [#id3b, #id3b], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<2x8x12xf32>
  %masked = linalg.generic {indexing_maps = [#ij, #id3b, #id3b], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %scaled : tensor<8x12xf32>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
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

func.func @keep_where_true(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x4xf32>,
                           %c: tensor<2x8x12xi1>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant dense<0xFF800000> : tensor<f32>
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %masked = linalg.generic {indexing_maps = [#id3b, #id3b, #s, #id3b], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %s, %minf : tensor<2x8x12xi1>, tensor<2x8x12xf32>, tensor<f32>) outs(%s_init : tensor<2x8x12xf32>) {
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

// The keys dropped where %x > 0.8, about a fifth of them: random booleans
// would drop every key of some rows, whose softmax is NaN where attn.sdpa
// gives 0.
func.func @drop_where_true(%q: tensor<2x8x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x4xf32>,
                           %x: tensor<8x12xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %bound = arith.constant 0.8 : f32
  %c_init = tensor.empty() : tensor<8x12xi1>
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x12xf32>) outs(%c_init : tensor<8x12xi1>) {
  ^bb0(%in: f32, %out: i1):
    %gt = arith.cmpf ogt, %in, %bound : f32
    linalg.yield %gt : i1
  } -> tensor<8x12xi1>
  %s_init = tensor.empty() : tensor<2x8x12xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %k : tensor<2x8x4xf32>, tensor<2x12x4xf32>) outs(%s_zero : tensor<2x8x12xf32>) -> tensor<2x8x12xf32>
  %masked = linalg.generic {indexing_maps = [#ij, #id3b, #id3b], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %s : tensor<8x12xi1>, tensor<2x8x12xf32>) outs(%s_init : tensor<2x8x12xf32>) {
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
  %masked = linalg.generic {indexing_maps = [#ij, #id3b, #id3b], iterator_types = ["parallel", "parallel", "parallel"]} ins(%above, %s : tensor<8x8xi1>, tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) {
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
