// What attn-raise-attention leaves alone, and the reason explain=true gives
// for each: the IR is unchanged.
// RUN: attn-opt %s --attn-raise-attention=explain=true --split-input-file -verify-diagnostics
// RUN: attn-opt %s --attn-raise-attention --split-input-file | FileCheck %s
// CHECK-NOT: attn.sdpa

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The softmax normalises the query rows, not the keys.
func.func @softmax_axis(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>,
                        %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %kt_init = tensor.empty() : tensor<2x4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x4xf32>) outs(%kt_init : tensor<2x4x8xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: the softmax normalises dimension 1, not the last (the keys) of 3}}
  %p = linalg.softmax dimension(1) ins(%s : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// Q K^T accumulated onto an uninitialised tensor: not a product alone.
func.func @scores_not_zeroed(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>,
                             %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: the product of the scores accumulates onto a tensor that is not zero}}
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A scale that is not a constant.
func.func @scale_not_constant(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>,
                              %v: tensor<2x8x4xf32>, %c: f32) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: the scores come from a linalg.generic that does not multiply or divide them by a constant}}
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// An additive mask (not raised yet: the remark says so).
func.func @additive_mask(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>,
                         %v: tensor<2x8x4xf32>, %mask: tensor<2x8x8xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %a = arith.addf %in, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x8x8xf32>
  // expected-remark @below {{(masks and other score functions are not raised)}}
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// V read as [.., Dv, Skv].
func.func @values_transposed(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>,
                             %vt: tensor<2x4x8xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: the product of the probabilities reads the values transposed ([.., Dv, Skv])}}
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul indexing_maps = [affine_map<(b, i, n, k) -> (b, i, k)>, affine_map<(b, i, n, k) -> (b, n, k)>, affine_map<(b, i, n, k) -> (b, i, n)>]
         ins(%p, %vt : tensor<2x8x8xf32>, tensor<2x4x8xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// bf16 inputs accumulated into f32 scores: the steps' types differ.
func.func @mixed_types(%q: tensor<8x4xbf16>, %kt: tensor<4x8xbf16>,
                       %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%s_zero : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: the steps do not share one element type (f32 and bf16)}}
  %p = linalg.softmax dimension(1) ins(%s : tensor<8x8xf32>) outs(%s_init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %o_init = tensor.empty() : tensor<8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %o = linalg.matmul ins(%p, %v : tensor<8x8xf32>, tensor<8x4xf32>) outs(%o_zero : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// A softmax that is not attention.
func.func @softmax_alone(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: nothing multiplies the probabilities}}
  %p = linalg.softmax dimension(1) ins(%x : tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %p : tensor<8x8xf32>
}
