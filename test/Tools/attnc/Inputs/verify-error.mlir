func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x3x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %o = attn.sdpa %q, %k, %k outs(%e)
     : tensor<1x2x4x8xf32>, tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
