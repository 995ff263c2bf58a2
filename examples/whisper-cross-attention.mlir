// Whisper-base decoder cross-attention: 8 heads x 64 (d_model 512), batch 1,
// f32, not causal. q is [1, 8, 64, 64] (64 decoder tokens); k/v are
// [1, 8, 1500, 64] (1500 encoder frames = 30 s of audio); result [1, 8, 64, 64].
func.func @whisper_cross_attention(%q: tensor<1x8x64x64xf32>, %k: tensor<1x8x1500x64xf32>,
                                   %v: tensor<1x8x1500x64xf32>) -> tensor<1x8x64x64xf32> {
  %init = tensor.empty() : tensor<1x8x64x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%init)
     : tensor<1x8x64x64xf32>, tensor<1x8x1500x64xf32>, tensor<1x8x1500x64xf32>
       -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}
