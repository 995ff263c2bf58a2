// 256 queries against 48 keys (f32): Q K^T's register blocks are 48 keys
// wide, not a power of two.
func.func @sdpa(%q: tensor<1x8x256x64xf32>, %k: tensor<1x8x48x64xf32>, %v: tensor<1x8x48x64xf32>) -> tensor<1x8x256x64xf32> {
  %e = tensor.empty() : tensor<1x8x256x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) : tensor<1x8x256x64xf32>, tensor<1x8x48x64xf32>, tensor<1x8x48x64xf32> -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}
