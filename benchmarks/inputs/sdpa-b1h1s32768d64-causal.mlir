// Issue 4's memory check: one head, S = 32768, D = 64, f32, causal. The
// reference lowering would need a 4 GiB score matrix; the tiled one needs
// a few tiles per thread.
func.func @sdpa(%q: tensor<1x1x32768x64xf32>, %k: tensor<1x1x32768x64xf32>, %v: tensor<1x1x32768x64xf32>)
    -> tensor<1x1x32768x64xf32> {
  %e = tensor.empty() : tensor<1x1x32768x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x1x32768x64xf32>, tensor<1x1x32768x64xf32>, tensor<1x1x32768x64xf32> -> tensor<1x1x32768x64xf32>
  return %o : tensor<1x1x32768x64xf32>
}
