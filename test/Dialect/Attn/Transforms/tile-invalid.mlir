// RUN: attn-opt %s --attn-tile -verify-diagnostics -o /dev/null

// A block-sparse layout must have become block classes (attn-sparsify)
// before tiling: the tiled step does not read the layout.
func.func @layout(%q: tensor<1x1x8x4xf32>, %o: tensor<3xi32>, %i: tensor<2xi32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{'attn.sdpa' op has a block-sparse layout: classify its blocks (attn-sparsify) before tiling it}}
  %r = attn.sdpa %q, %q, %q blocks(%o, %i : tensor<3xi32>, tensor<2xi32>) outs(%q) block_size = [4, 4]
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}
