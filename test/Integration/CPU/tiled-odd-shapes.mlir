// The default CPU pipeline (128 x 64 attention tiles, 4 x 64 register
// blocks, masked row vectors, OpenMP) on sequence lengths that are not
// multiples of any of them: a single query, a few keys, one past a tile,
// many partial blocks; static and dynamic shapes; against the float64
// reference lowering.
// RUN: attn-run %s --check --entry=dynamic --input-shapes=1x2x1x64,1x2x1x64,1x2x1x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=1x2x7x64,1x2x7x64,1x2x7x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=1x2x129x64,1x2x129x64,1x2x129x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=1x2x1000x64,1x2x1000x64,1x2x1000x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=1x2x129x64,1x2x1000x64,1x2x1000x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_causal --input-shapes=2x3x1x64,2x3x1x64,2x3x1x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_causal --input-shapes=2x3x7x64,2x3x7x64,2x3x7x64 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_causal --input-shapes=2x3x1000x64,2x3x1000x64,2x3x1000x64 | FileCheck %s
// RUN: attn-run %s --check --entry=static_causal_1000 | FileCheck %s
// RUN: attn-run %s --check --entry=static_gqa_129_d128 | FileCheck %s
// RUN: attn-run %s --check --entry=static_window_mask_129 | FileCheck %s
// RUN: attn-run %s --check --entry=static_decode_1000 | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @dynamic(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>)
    -> tensor<1x2x?x64xf32> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<1x2x?x64xf32>
  %e = tensor.empty(%sq) : tensor<1x2x?x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

func.func @dynamic_causal(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>)
    -> tensor<?x?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x64xf32>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x64xf32>
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x64xf32>
  %e = tensor.empty(%b, %h, %sq) : tensor<?x?x?x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

func.func @static_causal_1000(%q: tensor<1x2x1000x64xf32>, %k: tensor<1x2x1000x64xf32>, %v: tensor<1x2x1000x64xf32>)
    -> tensor<1x2x1000x64xf32> {
  %e = tensor.empty() : tensor<1x2x1000x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x2x1000x64xf32>, tensor<1x2x1000x64xf32>, tensor<1x2x1000x64xf32> -> tensor<1x2x1000x64xf32>
  return %o : tensor<1x2x1000x64xf32>
}

func.func @static_gqa_129_d128(%q: tensor<1x4x129x128xf32>, %k: tensor<1x2x129x128xf32>, %v: tensor<1x2x129x128xf32>)
    -> tensor<1x4x129x128xf32> {
  %e = tensor.empty() : tensor<1x4x129x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<1x4x129x128xf32>, tensor<1x2x129x128xf32>, tensor<1x2x129x128xf32> -> tensor<1x4x129x128xf32>
  return %o : tensor<1x4x129x128xf32>
}

func.func @static_window_mask_129(%q: tensor<1x2x129x64xf32>, %k: tensor<1x2x129x64xf32>, %v: tensor<1x2x129x64xf32>,
                                  %m: tensor<129x129xf32>) -> tensor<1x2x129x64xf32> {
  %e = tensor.empty() : tensor<1x2x129x64xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<129x129xf32>) outs(%e) window = [70, 3]
     : tensor<1x2x129x64xf32>, tensor<1x2x129x64xf32>, tensor<1x2x129x64xf32> -> tensor<1x2x129x64xf32>
  return %o : tensor<1x2x129x64xf32>
}

func.func @static_decode_1000(%q: tensor<2x8x1x64xf32>, %k: tensor<2x8x1000x64xf32>, %v: tensor<2x8x1000x64xf32>)
    -> tensor<2x8x1x64xf32> {
  %e = tensor.empty() : tensor<2x8x1x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x8x1x64xf32>, tensor<2x8x1000x64xf32>, tensor<2x8x1000x64xf32> -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}
