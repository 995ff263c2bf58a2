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
  // expected-remark @below {{attn-raise-attention: not raised: the scores come from a linalg.generic that is neither a scale by a constant nor, nearest the softmax, a mask}}
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o_init = tensor.empty() : tensor<2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%o_zero : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A mask added before the scale: attn.sdpa scales, then masks, and a
// scaled mask is not the mask.
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
  // expected-remark @below {{attn-raise-attention: not raised: the scores come from a linalg.generic that is neither a scale by a constant nor, nearest the softmax, a mask (an added tensor, or a select against -inf)}}
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x8x8xf32>) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
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

// -----

// Scores reshaped other than by splitting [B*H, ..] into [B, H, ..] (here
// the rows are split): not the attention of the 4-D tensors.
func.func @rows_split(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>,
                      %v: tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%s_zero : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [2, 2, 4, 8] : tensor<2x8x8xf32> into tensor<2x2x4x8xf32>
  %p_init = tensor.empty() : tensor<2x2x4x8xf32>
  // expected-remark @below {{attn-raise-attention: not raised: the product of the scores is reshaped by an expand_shape that does not split [B*H, ..] into [B, H, ..]}}
  %p = linalg.softmax dimension(3) ins(%s4 : tensor<2x2x4x8xf32>) outs(%p_init : tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %o_init = tensor.empty() : tensor<2x2x4x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, d, j) -> (b, h, i, j)>, affine_map<(b, h, i, d, j) -> (b, h, j, d)>, affine_map<(b, h, i, d, j) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) outs(%o_zero : tensor<2x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  } -> tensor<2x2x4x4xf32>
  return %o : tensor<2x2x4x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// exp(s - m) / sum(exp(s - m)) with m the row *sum* rather than the row
// max: the same function, but exp may overflow where softmax does not, so
// it is not taken for a softmax (no linalg.softmax appears), and the
// division says why.
// CHECK-LABEL: func.func @shift_not_max
// CHECK-NOT: linalg.softmax
// CHECK: math.exp
func.func @shift_not_max(%s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %r_init = tensor.empty() : tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x8xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %init = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %d = arith.subf %in, %mm : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ex = math.exp %in : f32
    linalg.yield %ex : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x8xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  // expected-remark @below {{attn-raise-attention: not raised: exponentials divided by a row value, not a softmax: the value subtracted from each row is not the row's maximum}}
  %p = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %ss: f32, %out: f32):
    %q = arith.divf %in, %ss : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// exp(s) / sum(exp(s)) with nothing subtracted: softmax in exact
// arithmetic, but exp overflows for scores above 88 where softmax does
// not: said, not raised.
// CHECK-LABEL: func.func @no_shift
// CHECK-NOT: linalg.softmax
func.func @no_shift(%s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %r_init = tensor.empty() : tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %init = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ex = math.exp %in : f32
    linalg.yield %ex : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x8xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  // expected-remark @below {{attn-raise-attention: not raised: exponentials divided by a row value, not a softmax: exp's operand is not the scores minus a row value}}
  %p = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %ss: f32, %out: f32):
    %q = arith.divf %in, %ss : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A layer norm's division (x - mean) / row value: no exponentials, no
// softmax, no remark.
// CHECK-LABEL: func.func @layer_norm_division
func.func @layer_norm_division(%x: tensor<4x8xf32>, %d: tensor<4xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%y, %d : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %dd: f32, %out: f32):
    %q = arith.divf %in, %dd : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
