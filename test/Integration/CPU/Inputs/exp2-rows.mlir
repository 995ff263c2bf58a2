// f32 exp2 of a row, as the softmax computes it (attn-polynomial-math after
// attn-vectorize-tiles: 256-lane rows on AVX-512, 128 on AVX2).
func.func @exp2s(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %e = tensor.empty() : tensor<8x256xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.exp2 %a : f32
    linalg.yield %y : f32
  } -> tensor<8x256xf32>
  return %r : tensor<8x256xf32>
}
