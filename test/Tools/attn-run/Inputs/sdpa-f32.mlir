// A small f32 attention (check-rows.mlir: a finite wrong result).
func.func @attn(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>)
    -> tensor<1x2x16x8xf32> {
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
