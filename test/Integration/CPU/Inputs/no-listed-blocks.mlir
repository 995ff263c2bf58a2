// A block layout listing no blocks at all: the indices are an empty buffer.
func.func @sdpa(%q: tensor<1x1x256x16xf32>, %k: tensor<1x1x256x16xf32>, %v: tensor<1x1x256x16xf32>,
                %offsets: tensor<3xi32>, %indices: tensor<0xi32>) -> tensor<1x1x256x16xf32> {
  %e = tensor.empty() : tensor<1x1x256x16xf32>
  %o = attn.sdpa %q, %k, %v blocks(%offsets, %indices : tensor<3xi32>, tensor<0xi32>) outs(%e) block_size = [128, 64]
     : tensor<1x1x256x16xf32>, tensor<1x1x256x16xf32>, tensor<1x1x256x16xf32> -> tensor<1x1x256x16xf32>
  return %o : tensor<1x1x256x16xf32>
}
