// Mistral-7B-style attention: 32 query heads sharing 8 KV heads (GQA), head
// dim 128, f16, batch 1, 320 tokens; causal with a sliding window of 128, so
// query i attends to keys i-128..i. q is [1, 32, 320, 128], k/v [1, 8, 320, 128].
func.func @mistral_attention(%q: tensor<1x32x320x128xf16>, %k: tensor<1x8x320x128xf16>,
                             %v: tensor<1x8x320x128xf16>) -> tensor<1x32x320x128xf16> {
  %init = tensor.empty() : tensor<1x32x320x128xf16>
  %o = attn.sdpa %q, %k, %v outs(%init) causal window = [128, 0]
     : tensor<1x32x320x128xf16>, tensor<1x8x320x128xf16>, tensor<1x8x320x128xf16>
       -> tensor<1x32x320x128xf16>
  return %o : tensor<1x32x320x128xf16>
}
