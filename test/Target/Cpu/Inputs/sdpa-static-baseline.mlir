// The static twin of dynamic-shapes.mlir's functions (same ops, head sizes
// and heads; sizes fixed: whole query tiles of both 128 (AVX-512) and 96
// (AVX2) rows, one loop nest as in the dynamic build; key counts that are no whole number of key tiles, so that
// the keys are padded and the last tile masked as in the dynamic build):
// the baseline its hot loops are compared with.
func.func @full(%q: tensor<2x8x1152x64xf32>, %k: tensor<2x8x1500x64xf32>,
                %v: tensor<2x8x1500x64xf32>) -> tensor<2x8x1152x64xf32> {
  %e = tensor.empty() : tensor<2x8x1152x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x8x1152x64xf32>, tensor<2x8x1500x64xf32>, tensor<2x8x1500x64xf32> -> tensor<2x8x1152x64xf32>
  return %o : tensor<2x8x1152x64xf32>
}

func.func @causal_gqa(%q: tensor<1x8x768x128xf32>, %k: tensor<1x2x700x128xf32>,
                      %v: tensor<1x2x700x128xf32>) -> tensor<1x8x768x128xf32> {
  %e = tensor.empty() : tensor<1x8x768x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x8x768x128xf32>, tensor<1x2x700x128xf32>, tensor<1x2x700x128xf32> -> tensor<1x8x768x128xf32>
  return %o : tensor<1x8x768x128xf32>
}
