// Llama-3-8B attention: 32 query heads sharing 8 KV heads (GQA, 4 query heads
// per KV head), head dim 128, causal, bf16; prefill of 256 tokens, any batch
// size. q is [B, 32, 256, 128], k/v are [B, 8, 256, 128], B is dynamic.
func.func @llama3_attention(%q: tensor<?x32x256x128xbf16>, %k: tensor<?x8x256x128xbf16>,
                            %v: tensor<?x8x256x128xbf16>) -> tensor<?x32x256x128xbf16> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x32x256x128xbf16>
  %init = tensor.empty(%b) : tensor<?x32x256x128xbf16>
  %o = attn.sdpa %q, %k, %v outs(%init) causal
     : tensor<?x32x256x128xbf16>, tensor<?x8x256x128xbf16>, tensor<?x8x256x128xbf16>
       -> tensor<?x32x256x128xbf16>
  return %o : tensor<?x32x256x128xbf16>
}
