// CLIP's key projection: 257 tokens, 1024 -> 768 (row blocks of 64 leave
// one row).
func.func @mm(%a: tensor<257x1024xf32>, %b: tensor<1024x768xf32>) -> tensor<257x768xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<257x768xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<257x768xf32>) -> tensor<257x768xf32>
  %r = linalg.matmul ins(%a, %b : tensor<257x1024xf32>, tensor<1024x768xf32>) outs(%f : tensor<257x768xf32>) -> tensor<257x768xf32>
  return %r : tensor<257x768xf32>
}
