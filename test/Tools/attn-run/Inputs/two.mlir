func.func @first(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

func.func @second(%q: tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %q, %c2 : tensor<1x1x?x8xf32>
  %e = tensor.empty(%s) : tensor<1x1x?x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e) causal
     : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// A private function can be the entry too (attn-run makes it public).
func.func private @helper(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
