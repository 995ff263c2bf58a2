// A view layout the C ABI does not pass: the last dimension strided.
func.func @f(%q: tensor<1x2x4x8xf32> {bufferization.buffer_layout = strided<[?, ?, 1, ?], offset: ?>})
    -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
