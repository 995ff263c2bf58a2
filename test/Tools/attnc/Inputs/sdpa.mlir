func.func @sdpa(%q: tensor<1x2x20x8xf32>, %k: tensor<1x2x30x8xf32>, %v: tensor<1x2x30x8xf32>) -> tensor<1x2x20x8xf32> {
  %e = tensor.empty() : tensor<1x2x20x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x2x20x8xf32>, tensor<1x2x30x8xf32>, tensor<1x2x30x8xf32> -> tensor<1x2x20x8xf32>
  return %o : tensor<1x2x20x8xf32>
}
