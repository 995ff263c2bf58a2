// Grouped-query attention with dynamic heads: the query heads must be a
// multiple of the key/value heads, which must be positive.
func.func @gqa(%q: tensor<1x?x6x8xf32>, %k: tensor<1x?x9x8xf32>,
               %v: tensor<1x?x9x8xf32>) -> tensor<1x?x6x8xf32> {
  %c1 = arith.constant 1 : index
  %h = tensor.dim %q, %c1 : tensor<1x?x6x8xf32>
  %e = tensor.empty(%h) : tensor<1x?x6x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x?x6x8xf32>, tensor<1x?x9x8xf32>, tensor<1x?x9x8xf32> -> tensor<1x?x6x8xf32>
  return %o : tensor<1x?x6x8xf32>
}
