// 256 queries against 48 keys (bf16): Q K^T's register blocks are 48 keys
// wide, not a power of two.
func.func @sdpa(%q: tensor<1x8x256x64xbf16>, %k: tensor<1x8x48x64xbf16>, %v: tensor<1x8x48x64xbf16>) -> tensor<1x8x256x64xbf16> {
  %e = tensor.empty() : tensor<1x8x256x64xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e) : tensor<1x8x256x64xbf16>, tensor<1x8x48x64xbf16>, tensor<1x8x48x64xbf16> -> tensor<1x8x256x64xbf16>
  return %o : tensor<1x8x256x64xbf16>
}
