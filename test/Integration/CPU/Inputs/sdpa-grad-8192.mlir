func.func @fb(%q: tensor<1x1x8192x64xf32>, %k: tensor<1x1x8192x64xf32>, %v: tensor<1x1x8192x64xf32>, %do: tensor<1x1x8192x64xf32>)
    -> (tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>) {
  %e = tensor.empty() : tensor<1x1x8192x64xf32>
  %l = tensor.empty() : tensor<1x1x8192xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<1x1x8192xf32>) causal
    : tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32> -> tensor<1x1x8192x64xf32>, tensor<1x1x8192xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%e, %e, %e) causal
    : tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192xf32>
  return %o, %dq, %dk, %dv : tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>
}
