// BERT-base encoder self-attention: 12 heads x 64 (hidden 768), batch 1,
// 512 tokens, f32. q/k/v are [B, H, S, D] = [1, 12, 512, 64]; %mask is a
// key-padding mask [1, 1, 1, S] broadcast over heads and query rows
// (true = real token, kept; false = padding, masked out).
func.func @bert_self_attention(%q: tensor<1x12x512x64xf32>, %k: tensor<1x12x512x64xf32>,
                               %v: tensor<1x12x512x64xf32>, %mask: tensor<1x1x1x512xi1>)
    -> tensor<1x12x512x64xf32> {
  %init = tensor.empty() : tensor<1x12x512x64xf32>
  %o = attn.sdpa %q, %k, %v mask(%mask : tensor<1x1x1x512xi1>) outs(%init)
     : tensor<1x12x512x64xf32>, tensor<1x12x512x64xf32>, tensor<1x12x512x64xf32>
       -> tensor<1x12x512x64xf32>
  return %o : tensor<1x12x512x64xf32>
}
