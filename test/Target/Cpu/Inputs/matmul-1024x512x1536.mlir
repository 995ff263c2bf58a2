// The seed's in-projection: 1024 tokens, 512 -> 1536.
func.func @mm(%a: tensor<1024x512xf32>, %b: tensor<512x1536xf32>) -> tensor<1024x1536xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1536xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024x1536xf32>) -> tensor<1024x1536xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x512xf32>, tensor<512x1536xf32>) outs(%f : tensor<1024x1536xf32>) -> tensor<1024x1536xf32>
  return %r : tensor<1024x1536xf32>
}
