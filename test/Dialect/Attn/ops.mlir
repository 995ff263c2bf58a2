// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of every attn.sdpa, attn.weights and attn.yield form.

// CHECK-LABEL: func @sdpa_minimal
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} outs(%{{.*}}) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NOT: score_mod
func.func @sdpa_minimal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %init = tensor.empty() : tensor<1x2x4x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// CHECK-LABEL: func @sdpa_gqa_cross_f16
// CHECK: attn.sdpa {{.*}} scale = 1.250000e-01 causal align = <bottom_right> : tensor<2x8x3x64xf16>, tensor<2x2x9x64xf16>, tensor<2x2x9x32xf16> -> tensor<2x8x3x32xf16>
func.func @sdpa_gqa_cross_f16(%q: tensor<2x8x3x64xf16>, %k: tensor<2x2x9x64xf16>, %v: tensor<2x2x9x32xf16>) -> tensor<2x8x3x32xf16> {
  %init = tensor.empty() : tensor<2x8x3x32xf16>
  %o = attn.sdpa %q, %k, %v outs(%init) scale = 0.125 causal align = <bottom_right>
       : tensor<2x8x3x64xf16>, tensor<2x2x9x64xf16>, tensor<2x2x9x32xf16> -> tensor<2x8x3x32xf16>
  return %o : tensor<2x8x3x32xf16>
}

// CHECK-LABEL: func @sdpa_mqa_bf16_window
// CHECK: attn.sdpa {{.*}} outs(%{{.*}}) window = [4, 0] : tensor<1x4x16x8xbf16>, tensor<1x1x16x8xbf16>, tensor<1x1x16x8xbf16> -> tensor<1x4x16x8xbf16>
func.func @sdpa_mqa_bf16_window(%q: tensor<1x4x16x8xbf16>, %k: tensor<1x1x16x8xbf16>, %v: tensor<1x1x16x8xbf16>) -> tensor<1x4x16x8xbf16> {
  %init = tensor.empty() : tensor<1x4x16x8xbf16>
  %o = attn.sdpa %q, %k, %v outs(%init) window = [4, 0]
       : tensor<1x4x16x8xbf16>, tensor<1x1x16x8xbf16>, tensor<1x1x16x8xbf16> -> tensor<1x4x16x8xbf16>
  return %o : tensor<1x4x16x8xbf16>
}

// CHECK-LABEL: func @sdpa_bool_mask_kv_lens
// CHECK: attn.sdpa {{.*}} mask(%{{.*}} : tensor<2x1x1x16xi1>) kv_lens(%{{.*}} : tensor<2xi32>) outs(%{{.*}}) causal window = [3, 2] align = <bottom_right> dropout = 1.000000e-01 seed = 42
func.func @sdpa_bool_mask_kv_lens(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<2x2x16x8xf32>,
                                  %m: tensor<2x1x1x16xi1>, %lens: tensor<2xi32>) -> tensor<2x2x4x8xf32> {
  %init = tensor.empty() : tensor<2x2x4x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<2x1x1x16xi1>) kv_lens(%lens : tensor<2xi32>) outs(%init)
       causal window = [3, 2] align = <bottom_right> dropout = 0.1 seed = 42
       : tensor<2x2x4x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32> -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// CHECK-LABEL: func @sdpa_float_mask_broadcast
// CHECK: attn.sdpa {{.*}} mask(%{{.*}} : tensor<4x16xf16>) kv_lens(%{{.*}} : tensor<2xi64>)
func.func @sdpa_float_mask_broadcast(%q: tensor<2x2x4x8xf16>, %k: tensor<2x2x16x8xf16>, %v: tensor<2x2x16x8xf16>,
                                     %m: tensor<4x16xf16>, %lens: tensor<2xi64>) -> tensor<2x2x4x8xf16> {
  %init = tensor.empty() : tensor<2x2x4x8xf16>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<4x16xf16>) kv_lens(%lens : tensor<2xi64>) outs(%init)
       : tensor<2x2x4x8xf16>, tensor<2x2x16x8xf16>, tensor<2x2x16x8xf16> -> tensor<2x2x4x8xf16>
  return %o : tensor<2x2x4x8xf16>
}

// CHECK-LABEL: func @sdpa_dynamic
// CHECK: attn.sdpa {{.*}} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
func.func @sdpa_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x?xf32>,
                        %init: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func @sdpa_regions
// CHECK: attn.sdpa
// CHECK-SAME: score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: arith.subi %[[J]], %[[I]] : index
// CHECK: attn.yield %{{.*}} : f32
// CHECK: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK: attn.yield %{{.*}} : i1
func.func @sdpa_regions(%q: tensor<1x4x64x32xf32>, %k: tensor<1x4x64x32xf32>, %v: tensor<1x4x64x32xf32>) -> tensor<1x4x64x32xf32> {
  %init = tensor.empty() : tensor<1x4x64x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%init)
       : tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32> -> tensor<1x4x64x32xf32>
       score_mod {
       ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
         %d = arith.subi %j, %i : index
         %di = arith.index_cast %d : index to i64
         %df = arith.sitofp %di : i64 to f32
         %r = arith.addf %s, %df : f32
         attn.yield %r : f32
       } mask_mod {
       ^bb0(%b: index, %h: index, %i: index, %j: index):
         %c2 = arith.constant 2 : index
         %r = arith.remui %j, %c2 : index
         %c0 = arith.constant 0 : index
         %even = arith.cmpi eq, %r, %c0 : index
         attn.yield %even : i1
       }
  return %o : tensor<1x4x64x32xf32>
}

// CHECK-LABEL: func @sdpa_mask_mod_only
// CHECK-NOT: score_mod
// CHECK: mask_mod {
func.func @sdpa_mask_mod_only(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %init = tensor.empty() : tensor<1x1x4x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%init)
       : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
       mask_mod {
       ^bb0(%b: index, %h: index, %i: index, %j: index):
         %c = arith.cmpi uge, %i, %j : index
         attn.yield %c : i1
       }
  return %o : tensor<1x1x4x8xf32>
}

// CHECK-LABEL: func @weights
// CHECK: attn.weights %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x2x4x6xi1>) outs(%{{.*}}) causal dropout = 5.000000e-01 seed = 1 : tensor<1x2x4x8xf32>, tensor<1x1x6x8xf32> -> tensor<1x2x4x6xf32>
func.func @weights(%q: tensor<1x2x4x8xf32>, %k: tensor<1x1x6x8xf32>, %m: tensor<1x2x4x6xi1>) -> tensor<1x2x4x6xf32> {
  %init = tensor.empty() : tensor<1x2x4x6xf32>
  %p = attn.weights %q, %k mask(%m : tensor<1x2x4x6xi1>) outs(%init) causal dropout = 0.5 seed = 1
       : tensor<1x2x4x8xf32>, tensor<1x1x6x8xf32> -> tensor<1x2x4x6xf32>
  return %p : tensor<1x2x4x6xf32>
}

// CHECK-LABEL: func @weights_score_mod
// CHECK: attn.weights {{.*}} score_mod {
func.func @weights_score_mod(%q: tensor<1x1x4x8xbf16>, %k: tensor<1x1x6x8xbf16>) -> tensor<1x1x4x6xbf16> {
  %init = tensor.empty() : tensor<1x1x4x6xbf16>
  %p = attn.weights %q, %k outs(%init) : tensor<1x1x4x8xbf16>, tensor<1x1x6x8xbf16> -> tensor<1x1x4x6xbf16>
       score_mod {
       ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
         %half = arith.constant 0.5 : f32
         %r = arith.mulf %s, %half : f32
         attn.yield %r : f32
       }
  return %p : tensor<1x1x4x6xbf16>
}

// A block-sparse layout (CSR) and block classes round-trip.
// CHECK-LABEL: func @sdpa_blocks
// CHECK: attn.sdpa {{.*}} blocks(%{{.*}}, %{{.*}} : tensor<3xi32>, tensor<?xi64>) outs(%{{.*}}) causal block_size = [64, 32]
// CHECK: attn.sdpa {{.*}} block_classes(%{{.*}} : tensor<1x2x2x4xi8>) outs(%{{.*}}) block_size = [64, 32]
func.func @sdpa_blocks(%q: tensor<1x2x128x8xf32>, %off: tensor<3xi32>, %idx: tensor<?xi64>,
                       %cls: tensor<1x2x2x4xi8>) -> (tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32>) {
  %a = attn.sdpa %q, %q, %q blocks(%off, %idx : tensor<3xi32>, tensor<?xi64>) outs(%q) causal block_size = [64, 32]
     : tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32> -> tensor<1x2x128x8xf32>
  %b = attn.sdpa %q, %q, %q block_classes(%cls : tensor<1x2x2x4xi8>) outs(%q) block_size = [64, 32]
     : tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32> -> tensor<1x2x128x8xf32>
  return %a, %b : tensor<1x2x128x8xf32>, tensor<1x2x128x8xf32>
}

// The forward with its row log-sum-exp, and the backward with the
// forward's masks and attributes (f64: the float64 reference's types).
// CHECK-LABEL: func @sdpa_lse_and_grad
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<16xi1>) outs(%{{.*}}) lse(%{{.*}} : tensor<2x8x12xf32>) causal align = <bottom_right> dropout = 1.000000e-01 seed = 7 : tensor<2x8x12x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x24xf32> -> tensor<2x8x12x24xf32>, tensor<2x8x12xf32>
// CHECK: attn.sdpa_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %{{.*}}, %[[LSE]] mask(%{{.*}} : tensor<16xi1>) outs(%{{.*}}, %{{.*}}, %{{.*}}) causal align = <bottom_right> dropout = 1.000000e-01 seed = 7 : tensor<2x8x12x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x24xf32>, tensor<2x8x12x24xf32>, tensor<2x8x12xf32>
// CHECK: attn.sdpa_grad {{.*}} : tensor<1x1x?x8xf64>, tensor<1x1x?x8xf64>, tensor<1x1x?x8xf64>, tensor<1x1x?x8xf64>, tensor<1x1x?xf64>
// CHECK-SAME: score_mod {
func.func @sdpa_lse_and_grad(%q: tensor<2x8x12x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x24xf32>,
                             %m: tensor<16xi1>, %do: tensor<2x8x12x24xf32>,
                             %x: tensor<1x1x?x8xf64>, %l: tensor<1x1x?xf64>)
    -> (tensor<2x8x12x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x24xf32>, tensor<1x1x?x8xf64>) {
  %e = tensor.empty() : tensor<2x8x12x24xf32>
  %el = tensor.empty() : tensor<2x8x12xf32>
  %o, %lse = attn.sdpa %q, %k, %v mask(%m : tensor<16xi1>) outs(%e) lse(%el : tensor<2x8x12xf32>)
      causal align = <bottom_right> dropout = 0.1 seed = 7
    : tensor<2x8x12x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x24xf32> -> tensor<2x8x12x24xf32>, tensor<2x8x12xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<16xi1>) outs(%q, %k, %v)
      causal align = <bottom_right> dropout = 0.1 seed = 7
    : tensor<2x8x12x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x24xf32>, tensor<2x8x12x24xf32>, tensor<2x8x12xf32>
  %gq, %gk, %gv = attn.sdpa_grad %x, %x, %x, %x, %x, %l outs(%x, %x, %x)
    : tensor<1x1x?x8xf64>, tensor<1x1x?x8xf64>, tensor<1x1x?x8xf64>, tensor<1x1x?x8xf64>, tensor<1x1x?xf64>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    }
  return %dq, %dk, %dv, %gq : tensor<2x8x12x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x24xf32>, tensor<1x1x?x8xf64>
}

// A run-time scale (after the other operands), in attn.weights and
// attn.sdpa_grad too.
// CHECK-LABEL: func @runtime_scale
// CHECK: attn.sdpa {{.*}} dropout_seed(%{{.*}} : tensor<i64>) scale_value(%[[S:.*]] : tensor<f32>) outs(%{{.*}}) dropout = 1.000000e-01 :
// CHECK: attn.weights {{.*}} scale_value(%[[S]] : tensor<f32>) outs(
// CHECK: attn.sdpa_grad {{.*}} scale_value(%[[S]] : tensor<f32>) outs(
func.func @runtime_scale(%q: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>, %p: tensor<1x1x4x4xf32>, %s: tensor<f32>, %ds: tensor<i64>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) {
  %o = attn.sdpa %q, %q, %q dropout_seed(%ds : tensor<i64>) scale_value(%s : tensor<f32>) outs(%q) dropout = 0.1
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  %w = attn.weights %q, %q scale_value(%s : tensor<f32>) outs(%p)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x4xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse scale_value(%s : tensor<f32>) outs(%q, %q, %q)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
  return %o, %w, %dq : tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>
}

// A run-time dropout seed.
// CHECK-LABEL: func @sdpa_runtime_seed
// CHECK: attn.sdpa {{.*}} dropout_seed(%{{.*}} : tensor<i64>) outs(%{{.*}}) dropout = 1.000000e-01 :
func.func @sdpa_runtime_seed(%q: tensor<1x1x4x8xf32>, %s: tensor<i64>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q dropout_seed(%s : tensor<i64>) outs(%q) dropout = 0.1
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
