// CLIP-style text-to-image cross-attention as nn.MultiheadAttention(512, 8,
// kdim=768, vdim=1024, batch_first=True), need_weights=False: 77 text tokens
// [1, 77, 512] attend to 257 image tokens (keys [1, 257, 768], values
// [1, 257, 1024]) through separate q/k/v projections; output [1, 77, 512].
func.func @clip_cross_attention(%text: tensor<1x77x512xf32>, %img_k: tensor<1x257x768xf32>,
                                %img_v: tensor<1x257x1024xf32>, %w_q: tensor<512x512xf32>,
                                %w_k: tensor<512x768xf32>, %w_v: tensor<512x1024xf32>,
                                %b_in: tensor<1536xf32>, %w_out: tensor<512x512xf32>,
                                %b_out: tensor<512xf32>) -> tensor<1x77x512xf32> {
  %out = attn.multihead %text, %img_k, %img_v
      q_proj(%w_q : tensor<512x512xf32>) k_proj(%w_k : tensor<512x768xf32>)
      v_proj(%w_v : tensor<512x1024xf32>) in_proj_bias(%b_in : tensor<1536xf32>)
      out_proj(%w_out : tensor<512x512xf32>) out_proj_bias(%b_out : tensor<512xf32>)
      num_heads = 8 batch_first
    : tensor<1x77x512xf32>, tensor<1x257x768xf32>, tensor<1x257x1024xf32>
      -> tensor<1x77x512xf32>
  return %out : tensor<1x77x512xf32>
}
