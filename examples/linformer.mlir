// Linformer self-attention (Wang et al. 2020) as a composition the CPU
// pipeline compiles: keys and values are projected along the sequence,
// K' = E K and V' = F V with E, F : [k, n] shared by all heads, and the
// attention runs over the k projected positions, O(n k) instead of O(n^2).
// Here n = 1024 tokens, k = 128, 8 heads of 64, batch 1, f32. The
// projections are linalg contractions (parallelised and register-blocked
// by attn-parallelize-contractions and attn-vectorize-tiles); the attention
// is an ordinary attn.sdpa with Skv = k.
#proj_e = affine_map<(b, h, r, d, s) -> (r, s)>
#proj_x = affine_map<(b, h, r, d, s) -> (b, h, s, d)>
#proj_o = affine_map<(b, h, r, d, s) -> (b, h, r, d)>
func.func @linformer_attention(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>,
                               %v: tensor<1x8x1024x64xf32>, %e: tensor<128x1024xf32>,
                               %f: tensor<128x1024xf32>) -> tensor<1x8x1024x64xf32> {
  %zero = arith.constant 0.0 : f32
  %p0 = tensor.empty() : tensor<1x8x128x64xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%p0 : tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32>
  %kp = linalg.generic {indexing_maps = [#proj_e, #proj_x, #proj_o],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %k : tensor<128x1024xf32>, tensor<1x8x1024x64xf32>) outs(%pz : tensor<1x8x128x64xf32>) {
    ^bb0(%a: f32, %x: f32, %acc: f32):
      %m = arith.mulf %a, %x : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<1x8x128x64xf32>
  %vp = linalg.generic {indexing_maps = [#proj_e, #proj_x, #proj_o],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%f, %v : tensor<128x1024xf32>, tensor<1x8x1024x64xf32>) outs(%pz : tensor<1x8x128x64xf32>) {
    ^bb0(%a: f32, %x: f32, %acc: f32):
      %m = arith.mulf %a, %x : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<1x8x128x64xf32>
  %init = tensor.empty() : tensor<1x8x1024x64xf32>
  %o = attn.sdpa %q, %kp, %vp outs(%init)
     : tensor<1x8x1024x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>
       -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}
