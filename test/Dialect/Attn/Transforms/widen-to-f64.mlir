// RUN: attn-opt %s --attn-widen-to-f64 --split-input-file | FileCheck %s

// Signatures, the destination, the attn op and the return are retyped; the
// i1 mask (as the op's mask operand), causal and the f32 modifier region are
// kept.
// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x5x8xf64>, %[[K:.*]]: tensor<1x2x7x8xf64>, %[[V:.*]]: tensor<1x2x7x8xf64>, %[[M:.*]]: tensor<5x7xi1>) -> tensor<1x2x5x8xf64>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x5x8xf64>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<5x7xi1>) outs(%[[E]]) causal : tensor<1x2x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x8xf64> -> tensor<1x2x5x8xf64> score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK: arith.mulf %{{.*}} : f32
// CHECK: return %{{.*}} : tensor<1x2x5x8xf64>
func.func @sdpa(%q: tensor<1x2x5x8xbf16>, %k: tensor<1x2x7x8xbf16>, %v: tensor<1x2x7x8xbf16>,
                %m: tensor<5x7xi1>) -> tensor<1x2x5x8xbf16> {
  %e = tensor.empty() : tensor<1x2x5x8xbf16>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<5x7xi1>) outs(%e) causal
     : tensor<1x2x5x8xbf16>, tensor<1x2x7x8xbf16>, tensor<1x2x7x8xbf16> -> tensor<1x2x5x8xbf16>
     score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 2.0 : f32
    %r = arith.mulf %s, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x5x8xbf16>
}

// -----

// Dense constants are converted value by value; calls follow the callee.
// CHECK-LABEL: func.func private @callee(tensor<2xf64>) -> tensor<2xf64>
// CHECK-LABEL: func.func @caller
// CHECK: arith.constant dense<[1.500000e+00, -2.500000e-01]> : tensor<2xf64>
// CHECK: call @callee(%{{.*}}) : (tensor<2xf64>) -> tensor<2xf64>
func.func private @callee(tensor<2xf16>) -> tensor<2xf16>
func.func @caller() -> tensor<2xf16> {
  %c = arith.constant dense<[1.5, -0.25]> : tensor<2xf16>
  %r = call @callee(%c) : (tensor<2xf16>) -> tensor<2xf16>
  return %r : tensor<2xf16>
}

// -----

// linalg.fill is rebuilt around the widened value.
// CHECK-LABEL: func.func @fill
// CHECK: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf64>
// CHECK: %[[W:.*]] = arith.extf %[[C]] : f32 to f64
// CHECK: linalg.fill ins(%[[W]] : f64) outs(%[[E]] : tensor<4xf64>) -> tensor<4xf64>
func.func @fill() -> tensor<4xf32> {
  %c = arith.constant 2.5 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A contraction written as linalg.generic (Linformer's sequence projection,
// here with a scale constant): its body is float arithmetic only, so it is
// retyped with its tensors and computes in f64.
// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%{{.*}}: tensor<4x16xf64>, %{{.*}}: tensor<16x8xf64>) -> tensor<4x8xf64>
// CHECK: linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<4x8xf64>)
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %[[ACC:.*]]: f64):
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK: %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f64
// CHECK: %[[H:.*]] = arith.mulf %[[M]], %[[HALF]] : f64
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[H]] : f64
// CHECK: linalg.yield %[[S]] : f64
// CHECK: -> tensor<4x8xf64>
func.func @projection(%e: tensor<4x16xf32>, %k: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, s) -> (i, s)>, affine_map<(i, j, s) -> (s, j)>, affine_map<(i, j, s) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %k : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %a, %b : f32
    %h = arith.mulf %m, %half : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Named linalg ops become the generics they are, retyped with their
// bodies: a matmul reading its left operand transposed, a transpose, a
// broadcast and a reduce (a linear layer's forward and backward).
// CHECK-LABEL: func.func @named
// CHECK-SAME: (%[[DY:.*]]: tensor<6x4xf64>, %[[X:.*]]: tensor<6x3xf64>, %[[B:.*]]: tensor<4xf64>)
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.broadcast
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}} ins(%[[DY]], %[[X]] : tensor<6x4xf64>, tensor<6x3xf64>) outs(%{{.*}} : tensor<4x3xf64>)
// CHECK-NEXT: ^bb0(%{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64):
// CHECK: linalg.generic {{.*}} ins(%[[DY]] : tensor<6x4xf64>) outs(%{{.*}} : tensor<4x6xf64>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<4xf64>) outs(%{{.*}} : tensor<6x4xf64>)
// CHECK: linalg.generic {{.*}} ins(%[[DY]] : tensor<6x4xf64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK: arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: return %{{.*}} : tensor<4x3xf64>, tensor<4x6xf64>, tensor<6x4xf64>, tensor<4xf64>
func.func @named(%dy: tensor<6x4xf32>, %x: tensor<6x3xf32>, %b: tensor<4xf32>)
    -> (tensor<4x3xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(n, k, m) -> (m, n)>, affine_map<(n, k, m) -> (m, k)>, affine_map<(n, k, m) -> (n, k)>]
      ins(%dy, %x : tensor<6x4xf32>, tensor<6x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %et = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%dy : tensor<6x4xf32>) outs(%et : tensor<4x6xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<6x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<4xf32>) outs(%eb : tensor<6x4xf32>) dimensions = [0]
  %er = tensor.empty() : tensor<4xf32>
  %fr = linalg.fill ins(%z : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %db = linalg.reduce ins(%dy : tensor<6x4xf32>) outs(%fr : tensor<4xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %dw, %t, %bb, %db : tensor<4x3xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<4xf32>
}

// -----

// A frontend's softmax steps: a row max beside its argmax (comparisons,
// selects, index arithmetic), exp, and a scale captured from outside the
// body; linalg.softmax itself. The float tensors, the body's float values
// and the captured constant become f64; the argmax stays i64.
// CHECK-LABEL: func.func @frontend_softmax
// CHECK-SAME: (%{{.*}}: tensor<4x8xf64>) -> (tensor<4x8xf64>, tensor<4xi64>, tensor<4x8xf64>)
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: f64, %[[MAX:.*]]: f64, %[[ARG:.*]]: i64):
// CHECK: arith.maximumf %[[IN]], %[[MAX]] : f64
// CHECK: arith.cmpf ogt, %[[IN]], %[[MAX]] : f64
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ARG]] : i64
// CHECK: linalg.generic
// CHECK: %[[C:.*]] = arith.constant 8.000000e+00 : f64
// CHECK: %[[Q:.*]] = arith.divf %{{.*}}, %[[C]] : f64
// CHECK: math.exp %[[Q]] : f64
// CHECK: linalg.softmax dimension(1) ins(%{{.*}} : tensor<4x8xf64>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @frontend_softmax(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xi64>, tensor<4x8xf32>) {
  %minf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8.0 : f32
  %m_init = tensor.empty() : tensor<4xf32>
  %m_fill = linalg.fill ins(%minf : f32) outs(%m_init : tensor<4xf32>) -> tensor<4xf32>
  %a_init = tensor.empty() : tensor<4xi64>
  %a_fill = linalg.fill ins(%c0 : i64) outs(%a_init : tensor<4xi64>) -> tensor<4xi64>
  %max:2 = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%m_fill, %a_fill : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %a: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %a : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %e_init = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e_init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %c8 : f32
    %ex = math.exp %q : f32
    linalg.yield %ex : f32
  } -> tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %e, %max#1, %p : tensor<4x8xf32>, tensor<4xi64>, tensor<4x8xf32>
}

// -----

// A value one attn op passes to another (the forward's bf16 output, read
// by the backward) is rounded to its declared type in between, through
// f32, as the compiled program rounds it (the f32 lse to f32); the
// returned output is not (its comparison is the tolerance's business).
// CHECK-LABEL: func.func @chain
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa
// CHECK: %[[RL:.*]] = linalg.generic {{.*}} ins(%[[LSE]] : tensor<1x1x4xf64>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: arith.extf %{{.*}} : f32 to f64
// CHECK: %[[RO:.*]] = linalg.generic {{.*}} ins(%[[O]] : tensor<1x1x4x8xf64>)
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: attn.sdpa_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[RO]], %{{.*}}, %[[RL]]
// CHECK: return %[[O]], %{{.*}} : tensor<1x1x4x8xf64>, tensor<1x1x4x8xf64>
func.func @chain(%q: tensor<1x1x4x8xbf16>, %k: tensor<1x1x6x8xbf16>, %v: tensor<1x1x6x8xbf16>,
                 %dout: tensor<1x1x4x8xbf16>) -> (tensor<1x1x4x8xbf16>, tensor<1x1x4x8xbf16>) {
  %e = tensor.empty() : tensor<1x1x4x8xbf16>
  %l = tensor.empty() : tensor<1x1x4xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<1x1x4xf32>)
     : tensor<1x1x4x8xbf16>, tensor<1x1x6x8xbf16>, tensor<1x1x6x8xbf16> -> tensor<1x1x4x8xbf16>, tensor<1x1x4xf32>
  %dq0 = tensor.empty() : tensor<1x1x4x8xbf16>
  %dk0 = tensor.empty() : tensor<1x1x6x8xbf16>
  %dv0 = tensor.empty() : tensor<1x1x6x8xbf16>
  %g:3 = attn.sdpa_grad %q, %k, %v, %o, %dout, %lse outs(%dq0, %dk0, %dv0)
     : tensor<1x1x4x8xbf16>, tensor<1x1x6x8xbf16>, tensor<1x1x6x8xbf16>, tensor<1x1x4x8xbf16>, tensor<1x1x4xf32>
  return %o, %g#0 : tensor<1x1x4x8xbf16>, tensor<1x1x4x8xbf16>
}

// -----

// Weights a module takes as panels (what attn_mlir.nn passes: pre-packed
// once) are unpacked in float64 as they are in f32; a pack without padding
// moves elements only too.
// CHECK-LABEL: func.func @panels
// CHECK-SAME: (%[[P:.*]]: tensor<2x8x4xf64>, %[[X:.*]]: tensor<8x8xf64>) -> (tensor<8x8xf64>, tensor<2x8x4xf64>)
// CHECK: %[[W:.*]] = linalg.unpack %[[P]] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<2x8x4xf64> -> tensor<8x8xf64>
// CHECK: linalg.pack %[[X]] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<8x8xf64> -> tensor<2x8x4xf64>
func.func @panels(%p: tensor<2x8x4xf32>, %x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<2x8x4xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %w = linalg.unpack %p inner_dims_pos = [0] inner_tiles = [4] into %e : tensor<2x8x4xf32> -> tensor<8x8xf32>
  %pe = tensor.empty() : tensor<2x8x4xf32>
  %px = linalg.pack %x inner_dims_pos = [0] inner_tiles = [4] into %pe : tensor<8x8xf32> -> tensor<2x8x4xf32>
  return %w, %px : tensor<8x8xf32>, tensor<2x8x4xf32>
}

// -----

// A named op whose generic form converts types (a matmul of f16 operands
// into an f32 accumulator) computes in float64 throughout: the operands'
// conversion is no conversion there.
// CHECK-LABEL: func.func @mixed_matmul
// CHECK-SAME: (%{{.*}}: tensor<4x8xf64>, %{{.*}}: tensor<8x2xf64>, %{{.*}}: tensor<4x2xf64>) -> tensor<4x2xf64>
// CHECK-NOT: arith.extf
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f64
func.func @mixed_matmul(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x2xf16>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// A rounding between float types in a generic's body (torch-mlir's scale:
// an f64 constant truncated to f32) is no rounding in float64: the divisor
// is the f64 constant itself. A weight held as an f32 resource blob becomes
// an inline f64 constant.
// CHECK-LABEL: func.func @truncated_scale_and_resource_weight
// CHECK-DAG: %[[C:.*]] = arith.constant 5.6568542494923806 : f64
// CHECK-DAG: arith.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf64>
// CHECK: linalg.generic
// CHECK-NOT: arith.truncf
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
func.func @truncated_scale_and_resource_weight(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %scale = arith.constant 5.6568542494923806 : f64
  %w = arith.constant dense_resource<weight> : tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.truncf %scale : f64 to f32
    %d = arith.divf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<2xf32>
  return %r, %w : tensor<2xf32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000C03F000000C0"
    }
  }
#-}
