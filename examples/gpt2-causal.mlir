// GPT-2 small causal self-attention: 12 heads x 64 (hidden 768), batch 1,
// 512 tokens, f32. q/k/v and the result are [B, H, S, D] = [1, 12, 512, 64];
// token i attends to tokens 0..i.
func.func @gpt2_attention(%q: tensor<1x12x512x64xf32>, %k: tensor<1x12x512x64xf32>,
                          %v: tensor<1x12x512x64xf32>) -> tensor<1x12x512x64xf32> {
  %init = tensor.empty() : tensor<1x12x512x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%init) causal
     : tensor<1x12x512x64xf32>, tensor<1x12x512x64xf32>, tensor<1x12x512x64xf32>
       -> tensor<1x12x512x64xf32>
  return %o : tensor<1x12x512x64xf32>
}
