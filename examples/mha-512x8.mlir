// nn.MultiheadAttention(512, 8, batch_first=True) self-attention over a
// batch of 2 sequences of 128 tokens: %x is [N, L, E] = [2, 128, 512]; returns
// the output [2, 128, 512] and the head-averaged weights [N, L, S] = [2, 128, 128].
func.func @mha(%x: tensor<2x128x512xf32>, %w_in: tensor<1536x512xf32>, %b_in: tensor<1536xf32>,
               %w_out: tensor<512x512xf32>, %b_out: tensor<512xf32>)
    -> (tensor<2x128x512xf32>, tensor<2x128x128xf32>) {
  %out, %weights = attn.multihead %x, %x, %x
      in_proj(%w_in : tensor<1536x512xf32>) in_proj_bias(%b_in : tensor<1536xf32>)
      out_proj(%w_out : tensor<512x512xf32>) out_proj_bias(%b_out : tensor<512xf32>)
      num_heads = 8 batch_first
    : tensor<2x128x512xf32>, tensor<2x128x512xf32>, tensor<2x128x512xf32>
      -> tensor<2x128x512xf32>, tensor<2x128x128xf32>
  return %out, %weights : tensor<2x128x512xf32>, tensor<2x128x128xf32>
}
