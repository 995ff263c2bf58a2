func.func @entry(%q: tensor<2x4x33x16xf32>, %k: tensor<2x2x47x16xf32>, %v: tensor<2x2x47x16xf32>, %s: tensor<f32>) -> tensor<2x4x33x16xf32> {
  %init = tensor.empty() : tensor<2x4x33x16xf32>
  %o = attn.sdpa %q, %k, %v scale_value(%s : tensor<f32>) outs(%init) causal
    : tensor<2x4x33x16xf32>, tensor<2x2x47x16xf32>, tensor<2x2x47x16xf32> -> tensor<2x4x33x16xf32>
  return %o : tensor<2x4x33x16xf32>
}
