// bf16 attention with an odd head size (bf16-dot.mlir: no pairs).
func.func @attn(%q: tensor<1x2x100x33xbf16>, %k: tensor<1x2x100x33xbf16>, %v: tensor<1x2x100x33xbf16>)
    -> tensor<1x2x100x33xbf16> {
  %e = tensor.empty() : tensor<1x2x100x33xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x100x33xbf16>, tensor<1x2x100x33xbf16>, tensor<1x2x100x33xbf16> -> tensor<1x2x100x33xbf16>
  return %o : tensor<1x2x100x33xbf16>
}
