// Made by test/lib/frontend_fixture.py attention --frontend turbine (torch 2.15.0+cu132): iree.turbine.aot.export, iree-compile --iree-input-type=torch --compile-to=input,
// IREE's ABI unwrapped.
func.func @main(%in0: tensor<2x4x64x32xf32>, %in1: tensor<2x4x80x32xf32>, %in2: tensor<2x4x80x32xf32>) -> tensor<2x4x64x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 5.65685415 : f32
    %3 = tensor.empty() : tensor<2x4x32x80xf32>
    %transposed = linalg.transpose ins(%in1 : tensor<2x4x80x32xf32>) outs(%3 : tensor<2x4x32x80xf32>) permutation = [0, 1, 3, 2] 
    %collapsed = tensor.collapse_shape %in0 [[0, 1], [2], [3]] : tensor<2x4x64x32xf32> into tensor<8x64x32xf32>
    %collapsed_2 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x32x80xf32> into tensor<8x32x80xf32>
    %4 = tensor.empty() : tensor<8x64x80xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<8x64x32xf32>, tensor<8x32x80xf32>) outs(%5 : tensor<8x64x80xf32>) -> tensor<8x64x80xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [2, 4, 64, 80] : tensor<8x64x80xf32> into tensor<2x4x64x80xf32>
    %7 = tensor.empty() : tensor<2x4x64x80xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x4x64x80xf32>) outs(%7 : tensor<2x4x64x80xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.divf %in, %cst_1 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x64x80xf32>
    %9 = tensor.empty() : tensor<2x4x64xi64>
    %10 = linalg.fill ins(%c0_i64 : i64) outs(%9 : tensor<2x4x64xi64>) -> tensor<2x4x64xi64>
    %11 = tensor.empty() : tensor<2x4x64xf32>
    %12 = linalg.fill ins(%cst_0 : f32) outs(%11 : tensor<2x4x64xf32>) -> tensor<2x4x64xf32>
    %13:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%8 : tensor<2x4x64x80xf32>) outs(%12, %10 : tensor<2x4x64xf32>, tensor<2x4x64xi64>) {
    ^bb0(%in: f32, %out: f32, %out_7: i64):
      %25 = linalg.index 3 : index
      %26 = arith.index_cast %25 : index to i64
      %27 = arith.maximumf %in, %out : f32
      %28 = arith.cmpf ogt, %in, %out : f32
      %29 = arith.select %28, %26, %out_7 : i64
      linalg.yield %27, %29 : f32, i64
    } -> (tensor<2x4x64xf32>, tensor<2x4x64xi64>)
    %expanded_3 = tensor.expand_shape %13#0 [[0], [1], [2, 3]] output_shape [2, 4, 64, 1] : tensor<2x4x64xf32> into tensor<2x4x64x1xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %expanded_3 : tensor<2x4x64x80xf32>, tensor<2x4x64x1xf32>) outs(%7 : tensor<2x4x64x80xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %25 = arith.subf %in, %in_7 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x64x80xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<2x4x64x80xf32>) outs(%7 : tensor<2x4x64x80xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = math.exp %in : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x64x80xf32>
    %16 = tensor.empty() : tensor<2x4x64x1xf32>
    %17 = linalg.fill ins(%cst : f32) outs(%16 : tensor<2x4x64x1xf32>) -> tensor<2x4x64x1xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%15 : tensor<2x4x64x80xf32>) outs(%17 : tensor<2x4x64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.addf %in, %out : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x64x1xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15, %18 : tensor<2x4x64x80xf32>, tensor<2x4x64x1xf32>) outs(%7 : tensor<2x4x64x80xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %25 = arith.divf %in, %in_7 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x64x80xf32>
    %collapsed_4 = tensor.collapse_shape %19 [[0, 1], [2], [3]] : tensor<2x4x64x80xf32> into tensor<8x64x80xf32>
    %collapsed_5 = tensor.collapse_shape %in2 [[0, 1], [2], [3]] : tensor<2x4x80x32xf32> into tensor<8x80x32xf32>
    %20 = tensor.empty() : tensor<8x64x32xf32>
    %21 = linalg.fill ins(%cst : f32) outs(%20 : tensor<8x64x32xf32>) -> tensor<8x64x32xf32>
    %22 = linalg.batch_matmul ins(%collapsed_4, %collapsed_5 : tensor<8x64x80xf32>, tensor<8x80x32xf32>) outs(%21 : tensor<8x64x32xf32>) -> tensor<8x64x32xf32>
    %expanded_6 = tensor.expand_shape %22 [[0, 1], [2], [3]] output_shape [2, 4, 64, 32] : tensor<8x64x32xf32> into tensor<2x4x64x32xf32>
    return %expanded_6 : tensor<2x4x64x32xf32>
}
