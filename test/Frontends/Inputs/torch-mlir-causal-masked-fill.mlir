// Made by test/lib/frontend_fixture.py causal-masked-fill --frontend torch-mlir (torch 2.15.0+cu132): torch_mlir.fx.export_and_import(output_type=linalg-on-tensors),
// IREE's ABI unwrapped.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> ()>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @main(%arg0: tensor<2x4x40x16xf32>, %arg1: tensor<2x4x40x16xf32>, %arg2: tensor<2x4x40x16xf32>) -> tensor<2x4x40x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_2 = arith.constant dense<true> : tensor<40x40xi1>
    %cst_3 = arith.constant 4.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x4x16x40xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<2x4x40x16xf32>) outs(%0 : tensor<2x4x16x40xf32>) permutation = [0, 1, 3, 2] 
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %collapsed_4 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x16x40xf32> into tensor<8x16x40xf32>
    %1 = tensor.empty() : tensor<8x40x40xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<8x40x16xf32>, tensor<8x16x40xf32>) outs(%2 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [2, 4, 40, 40] : tensor<8x40x40xf32> into tensor<2x4x40x40xf32>
    %4 = tensor.empty() : tensor<2x4x40x40xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x4x40x40xf32>) outs(%4 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.divf %in, %cst_3 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %6 = tensor.empty() : tensor<40xi64>
    %7 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%6 : tensor<40xi64>) {
    ^bb0(%out: i64):
      %28 = linalg.index 0 : index
      %29 = arith.index_cast %28 : index to i64
      linalg.yield %29 : i64
    } -> tensor<40xi64>
    %expanded_5 = tensor.expand_shape %7 [[0, 1]] output_shape [1, 40] : tensor<40xi64> into tensor<1x40xi64>
    %expanded_6 = tensor.expand_shape %7 [[0, 1]] output_shape [40, 1] : tensor<40xi64> into tensor<40x1xi64>
    %8 = tensor.empty() : tensor<40x40xi64>
    %9 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded_5, %expanded_6 : tensor<1x40xi64>, tensor<40x1xi64>) outs(%8 : tensor<40x40xi64>) {
    ^bb0(%in: i64, %in_11: i64, %out: i64):
      %28 = arith.subi %in, %in_11 : i64
      linalg.yield %28 : i64
    } -> tensor<40x40xi64>
    %10 = tensor.empty() : tensor<40x40xi1>
    %11 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<40x40xi64>) outs(%10 : tensor<40x40xi1>) {
    ^bb0(%in: i64, %out: i1):
      %28 = arith.cmpi sge, %in, %c1_i64 : i64
      linalg.yield %28 : i1
    } -> tensor<40x40xi1>
    %12 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%11, %cst_2 : tensor<40x40xi1>, tensor<40x40xi1>) outs(%10 : tensor<40x40xi1>) {
    ^bb0(%in: i1, %in_11: i1, %out: i1):
      %28 = arith.andi %in, %in_11 : i1
      linalg.yield %28 : i1
    } -> tensor<40x40xi1>
    %13 = linalg.generic {indexing_maps = [#map5, #map6, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %cst_1, %5 : tensor<40x40xi1>, tensor<f32>, tensor<2x4x40x40xf32>) outs(%4 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: i1, %in_11: f32, %in_12: f32, %out: f32):
      %28 = arith.select %in, %in_11, %in_12 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %14 = tensor.empty() : tensor<2x4x40xi64>
    %15 = linalg.fill ins(%c0_i64 : i64) outs(%14 : tensor<2x4x40xi64>) -> tensor<2x4x40xi64>
    %16 = tensor.empty() : tensor<2x4x40xf32>
    %17 = linalg.fill ins(%cst_0 : f32) outs(%16 : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
    %18:2 = linalg.generic {indexing_maps = [#map, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%13 : tensor<2x4x40x40xf32>) outs(%17, %15 : tensor<2x4x40xf32>, tensor<2x4x40xi64>) {
    ^bb0(%in: f32, %out: f32, %out_11: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_11 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<2x4x40xf32>, tensor<2x4x40xi64>)
    %expanded_7 = tensor.expand_shape %18#0 [[0], [1], [2, 3]] output_shape [2, 4, 40, 1] : tensor<2x4x40xf32> into tensor<2x4x40x1xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13, %expanded_7 : tensor<2x4x40x40xf32>, tensor<2x4x40x1xf32>) outs(%4 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %28 = arith.subf %in, %in_11 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19 : tensor<2x4x40x40xf32>) outs(%4 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %21 = tensor.empty() : tensor<2x4x40x1xf32>
    %22 = linalg.fill ins(%cst : f32) outs(%21 : tensor<2x4x40x1xf32>) -> tensor<2x4x40x1xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<2x4x40x40xf32>) outs(%22 : tensor<2x4x40x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x1xf32>
    %24 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %23 : tensor<2x4x40x40xf32>, tensor<2x4x40x1xf32>) outs(%4 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %28 = arith.divf %in, %in_11 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %collapsed_8 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<2x4x40x40xf32> into tensor<8x40x40xf32>
    %collapsed_9 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %25 = tensor.empty() : tensor<8x40x16xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %27 = linalg.batch_matmul ins(%collapsed_8, %collapsed_9 : tensor<8x40x40xf32>, tensor<8x40x16xf32>) outs(%26 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %expanded_10 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [2, 4, 40, 16] : tensor<8x40x16xf32> into tensor<2x4x40x16xf32>
    return %expanded_10 : tensor<2x4x40x16xf32>
  }
}
