// Local attention over image patches (2-D windows, as in window-attention
// vision models): a 32 x 32 grid of patches, each attending to the patches
// at most 3 rows and 3 columns away. Patch p sits at (p / 32, p % 32). The
// mask is a mask_mod on the decoded coordinates; it is not a band in the
// flat index, so attn-sparsify classifies tiles at run time (once per call)
// and the tiled loop skips the empty ones: about 1 key tile in 5 is
// visited. 4 heads of 32, batch 2, f32.
func.func @window_2d_attention(%q: tensor<2x4x1024x32xf32>, %k: tensor<2x4x1024x32xf32>,
                               %v: tensor<2x4x1024x32xf32>) -> tensor<2x4x1024x32xf32> {
  %init = tensor.empty() : tensor<2x4x1024x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%init)
     : tensor<2x4x1024x32xf32>, tensor<2x4x1024x32xf32>, tensor<2x4x1024x32xf32>
       -> tensor<2x4x1024x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %width = arith.constant 32 : index
       %radius = arith.constant 3 : index
       %yi = arith.divui %i, %width : index
       %xi = arith.remui %i, %width : index
       %yj = arith.divui %j, %width : index
       %xj = arith.remui %j, %width : index
       %dy = arith.subi %yi, %yj : index
       %dx = arith.subi %xi, %xj : index
       %ady = math.absi %dy : index
       %adx = math.absi %dx : index
       %near_y = arith.cmpi sle, %ady, %radius : index
       %near_x = arith.cmpi sle, %adx, %radius : index
       %keep = arith.andi %near_y, %near_x : i1
       attn.yield %keep : i1
     }
  return %o : tensor<2x4x1024x32xf32>
}
