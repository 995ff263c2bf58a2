// Issue 4's reference configuration: B=1, H=8, S=4096, D=64, f32, causal.
func.func @sdpa(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>)
    -> tensor<1x8x4096x64xf32> {
  %e = tensor.empty() : tensor<1x8x4096x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
