// Made by test/lib/frontend_fixture.py causal-masked-fill --frontend turbine (torch 2.15.0+cu132): iree.turbine.aot.export, iree-compile --iree-input-type=torch --compile-to=input,
// IREE's ABI unwrapped.
func.func @main(%in0: tensor<2x4x40x16xf32>, %in1: tensor<2x4x40x16xf32>, %in2: tensor<2x4x40x16xf32>) -> tensor<2x4x40x16xf32> {
    %c1_i64 = arith.constant 1 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %false = arith.constant false
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_2 = arith.constant dense<true> : tensor<40x40xi1>
    %cst_3 = arith.constant 4.000000e+00 : f32
    %3 = tensor.empty() : tensor<2x4x16x40xf32>
    %transposed = linalg.transpose ins(%in1 : tensor<2x4x40x16xf32>) outs(%3 : tensor<2x4x16x40xf32>) permutation = [0, 1, 3, 2] 
    %collapsed = tensor.collapse_shape %in0 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %collapsed_4 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x16x40xf32> into tensor<8x16x40xf32>
    %4 = tensor.empty() : tensor<8x40x40xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<8x40x16xf32>, tensor<8x16x40xf32>) outs(%5 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [2, 4, 40, 40] : tensor<8x40x40xf32> into tensor<2x4x40x40xf32>
    %7 = tensor.empty() : tensor<2x4x40x40xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x4x40x40xf32>) outs(%7 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.divf %in, %cst_3 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %9 = tensor.empty() : tensor<40x40xi1>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cst_2 : tensor<40x40xi1>) outs(%9 : tensor<40x40xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = linalg.index 0 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = linalg.index 1 : index
      %31 = arith.index_cast %30 : index to i64
      %32 = arith.addi %29, %c1_i64 : i64
      %33 = arith.cmpi sge, %31, %32 : i64
      %34 = arith.select %33, %in, %false : i1
      linalg.yield %34 : i1
    } -> tensor<40x40xi1>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %cst_1, %8 : tensor<40x40xi1>, tensor<f32>, tensor<2x4x40x40xf32>) outs(%7 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %12 = tensor.empty() : tensor<2x4x40xi64>
    %13 = linalg.fill ins(%c0_i64 : i64) outs(%12 : tensor<2x4x40xi64>) -> tensor<2x4x40xi64>
    %14 = tensor.empty() : tensor<2x4x40xf32>
    %15 = linalg.fill ins(%cst_0 : f32) outs(%14 : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
    %16:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%11 : tensor<2x4x40x40xf32>) outs(%15, %13 : tensor<2x4x40xf32>, tensor<2x4x40xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<2x4x40xf32>, tensor<2x4x40xi64>)
    %expanded_5 = tensor.expand_shape %16#0 [[0], [1], [2, 3]] output_shape [2, 4, 40, 1] : tensor<2x4x40xf32> into tensor<2x4x40x1xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %expanded_5 : tensor<2x4x40x40xf32>, tensor<2x4x40x1xf32>) outs(%7 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<2x4x40x40xf32>) outs(%7 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %19 = tensor.empty() : tensor<2x4x40x1xf32>
    %20 = linalg.fill ins(%cst : f32) outs(%19 : tensor<2x4x40x1xf32>) -> tensor<2x4x40x1xf32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%18 : tensor<2x4x40x40xf32>) outs(%20 : tensor<2x4x40x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x1xf32>
    %22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18, %21 : tensor<2x4x40x40xf32>, tensor<2x4x40x1xf32>) outs(%7 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<2x4x40x40xf32>
    %collapsed_6 = tensor.collapse_shape %22 [[0, 1], [2], [3]] : tensor<2x4x40x40xf32> into tensor<8x40x40xf32>
    %collapsed_7 = tensor.collapse_shape %in2 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %23 = tensor.empty() : tensor<8x40x16xf32>
    %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %25 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<8x40x40xf32>, tensor<8x40x16xf32>) outs(%24 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %expanded_8 = tensor.expand_shape %25 [[0, 1], [2], [3]] output_shape [2, 4, 40, 16] : tensor<8x40x16xf32> into tensor<2x4x40x16xf32>
    return %expanded_8 : tensor<2x4x40x16xf32>
}
