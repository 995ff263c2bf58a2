// Dynamic sizes the compiled code takes to agree: the keys of key, value
// and mask, the mask's heads and the query's (4), the mask's rows and the
// query's.
func.func @f(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %v: tensor<2x4x?x16xf32>, %m: tensor<2x?x?x?xf32>) -> tensor<2x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<2x4x?x16xf32>
  %e = tensor.empty(%n) : tensor<2x4x?x16xf32>
  %0 = attn.sdpa %q, %k, %v mask(%m : tensor<2x?x?x?xf32>) outs(%e) : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  return %0 : tensor<2x4x?x16xf32>
}
