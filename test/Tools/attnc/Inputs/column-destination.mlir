// A destination layout the C ABI does not pass: the last dimension strided.
func.func @f(%q: tensor<1x2x4x8xf32>, %out: memref<1x2x4x8xf32, strided<[?, ?, 1, ?], offset: ?>>) {
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  bufferization.materialize_in_destination %o in restrict writable %out
     : (tensor<1x2x4x8xf32>, memref<1x2x4x8xf32, strided<[?, ?, 1, ?], offset: ?>>) -> ()
  return
}
