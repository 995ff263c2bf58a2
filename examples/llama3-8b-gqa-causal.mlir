// Llama-3-8B attention: 32 query heads sharing 8 KV heads (GQA), head dim
// 128, causal, bf16; prefill of 512 tokens, any batch size.
func.func @llama3_attention(%q: tensor<?x32x512x128xbf16>, %k: tensor<?x8x512x128xbf16>,
                            %v: tensor<?x8x512x128xbf16>, %init: tensor<?x32x512x128xbf16>)
    -> tensor<?x32x512x128xbf16> {
  %o = attn.sdpa %q, %k, %v outs(%init) causal
     : tensor<?x32x512x128xbf16>, tensor<?x8x512x128xbf16>, tensor<?x8x512x128xbf16>
       -> tensor<?x32x512x128xbf16>
  return %o : tensor<?x32x512x128xbf16>
}
