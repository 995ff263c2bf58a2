// An attention with a dynamic sequence length (autotune.mlir: tuning
// needs static shapes).
func.func @attn(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>)
    -> tensor<1x2x?x32xf32> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %q, %c2 : tensor<1x2x?x32xf32>
  %e = tensor.empty(%s) : tensor<1x2x?x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
  return %o : tensor<1x2x?x32xf32>
}
