func.func @mixed_matmul(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x2xf16>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
