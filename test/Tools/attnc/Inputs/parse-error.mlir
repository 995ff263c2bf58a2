func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q
