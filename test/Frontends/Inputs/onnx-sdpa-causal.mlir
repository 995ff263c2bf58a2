// Made by test/lib/frontend_fixture.py sdpa-causal (torch 2.15.0+cu132, iree-base-compiler): torch.onnx.export, iree-import-onnx,
// iree-compile --iree-input-type=onnx --compile-to=input, IREE's ABI unwrapped.
func.func @main_graph(%in0: tensor<2x4x40x16xf32>, %in1: tensor<2x4x40x16xf32>, %in2: tensor<2x4x40x16xf32>) -> tensor<2x4x40x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<1.000000e+00> : tensor<40x40xf32>
    %cst_2 = arith.constant dense<0xFF800000> : tensor<1xf32>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<1xf32>
    %cst_4 = arith.constant dense<1.000000e+00> : tensor<1xf32>
    %cst_5 = arith.constant dense<1.600000e+01> : tensor<1xf32>
    %3 = tensor.empty() : tensor<1xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cst_5 : tensor<1xf32>) outs(%3 : tensor<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %37 = math.sqrt %in : f32
      linalg.yield %37 : f32
    } -> tensor<1xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cst_4, %4 : tensor<1xf32>, tensor<1xf32>) outs(%3 : tensor<1xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %37 = arith.divf %in, %in_11 : f32
      linalg.yield %37 : f32
    } -> tensor<1xf32>
    %6 = tensor.empty() : tensor<40x40xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cst_1 : tensor<40x40xf32>) outs(%6 : tensor<40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %37 = linalg.index 0 : index
      %38 = arith.index_cast %37 : index to i64
      %39 = linalg.index 1 : index
      %40 = arith.index_cast %39 : index to i64
      %41 = arith.cmpi sle, %40, %38 : i64
      %42 = arith.select %41, %in, %cst : f32
      linalg.yield %42 : f32
    } -> tensor<40x40xf32>
    %8 = tensor.empty() : tensor<40x40xi1>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%7, %cst_3 : tensor<40x40xf32>, tensor<1xf32>) outs(%8 : tensor<40x40xi1>) {
    ^bb0(%in: f32, %in_11: f32, %out: i1):
      %37 = arith.cmpf oeq, %in, %in_11 : f32
      linalg.yield %37 : i1
    } -> tensor<40x40xi1>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%9, %cst_2, %cst_3 : tensor<40x40xi1>, tensor<1xf32>, tensor<1xf32>) outs(%6 : tensor<40x40xf32>) {
    ^bb0(%in: i1, %in_11: f32, %in_12: f32, %out: f32):
      %37 = arith.select %in, %in_11, %in_12 : f32
      linalg.yield %37 : f32
    } -> tensor<40x40xf32>
    %11 = tensor.empty() : tensor<2x4x16x40xf32>
    %transposed = linalg.transpose ins(%in1 : tensor<2x4x40x16xf32>) outs(%11 : tensor<2x4x16x40xf32>) permutation = [0, 1, 3, 2] 
    %12 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%5 : tensor<1xf32>) outs(%3 : tensor<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %37 = math.sqrt %in : f32
      linalg.yield %37 : f32
    } -> tensor<1xf32>
    %13 = tensor.empty() : tensor<2x4x40x16xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%in0, %12 : tensor<2x4x40x16xf32>, tensor<1xf32>) outs(%13 : tensor<2x4x40x16xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %37 = arith.mulf %in, %in_11 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x40x16xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed, %12 : tensor<2x4x16x40xf32>, tensor<1xf32>) outs(%11 : tensor<2x4x16x40xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %37 = arith.mulf %in, %in_11 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x16x40xf32>
    %collapsed = tensor.collapse_shape %14 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %collapsed_6 = tensor.collapse_shape %15 [[0, 1], [2], [3]] : tensor<2x4x16x40xf32> into tensor<8x16x40xf32>
    %16 = tensor.empty() : tensor<8x40x40xf32>
    %17 = linalg.fill ins(%cst : f32) outs(%16 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %18 = linalg.batch_matmul ins(%collapsed, %collapsed_6 : tensor<8x40x16xf32>, tensor<8x16x40xf32>) outs(%17 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %expanded = tensor.expand_shape %18 [[0, 1], [2], [3]] output_shape [2, 4, 40, 40] : tensor<8x40x40xf32> into tensor<2x4x40x40xf32>
    %19 = tensor.empty() : tensor<2x4x40x40xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %10 : tensor<2x4x40x40xf32>, tensor<40x40xf32>) outs(%19 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %37 = arith.addf %in, %in_11 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x40x40xf32>
    %21 = tensor.empty() : tensor<2x4x40xi64>
    %22 = linalg.fill ins(%c0_i64 : i64) outs(%21 : tensor<2x4x40xi64>) -> tensor<2x4x40xi64>
    %23 = tensor.empty() : tensor<2x4x40xf32>
    %24 = linalg.fill ins(%cst_0 : f32) outs(%23 : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
    %25:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<2x4x40x40xf32>) outs(%24, %22 : tensor<2x4x40xf32>, tensor<2x4x40xi64>) {
    ^bb0(%in: f32, %out: f32, %out_11: i64):
      %37 = linalg.index 3 : index
      %38 = arith.index_cast %37 : index to i64
      %39 = arith.maximumf %in, %out : f32
      %40 = arith.cmpf ogt, %in, %out : f32
      %41 = arith.select %40, %38, %out_11 : i64
      linalg.yield %39, %41 : f32, i64
    } -> (tensor<2x4x40xf32>, tensor<2x4x40xi64>)
    %expanded_7 = tensor.expand_shape %25#0 [[0], [1], [2, 3]] output_shape [2, 4, 40, 1] : tensor<2x4x40xf32> into tensor<2x4x40x1xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %expanded_7 : tensor<2x4x40x40xf32>, tensor<2x4x40x1xf32>) outs(%19 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %37 = arith.subf %in, %in_11 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x40x40xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26 : tensor<2x4x40x40xf32>) outs(%19 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %37 = math.exp %in : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x40x40xf32>
    %28 = tensor.empty() : tensor<2x4x40x1xf32>
    %29 = linalg.fill ins(%cst : f32) outs(%28 : tensor<2x4x40x1xf32>) -> tensor<2x4x40x1xf32>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<2x4x40x40xf32>) outs(%29 : tensor<2x4x40x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %37 = arith.addf %in, %out : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x40x1xf32>
    %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %30 : tensor<2x4x40x40xf32>, tensor<2x4x40x1xf32>) outs(%19 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %37 = arith.divf %in, %in_11 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x40x40xf32>
    %collapsed_8 = tensor.collapse_shape %31 [[0, 1], [2], [3]] : tensor<2x4x40x40xf32> into tensor<8x40x40xf32>
    %collapsed_9 = tensor.collapse_shape %in2 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %32 = tensor.empty() : tensor<8x40x16xf32>
    %33 = linalg.fill ins(%cst : f32) outs(%32 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %34 = linalg.batch_matmul ins(%collapsed_8, %collapsed_9 : tensor<8x40x40xf32>, tensor<8x40x16xf32>) outs(%33 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %expanded_10 = tensor.expand_shape %34 [[0, 1], [2], [3]] output_shape [2, 4, 40, 16] : tensor<8x40x16xf32> into tensor<2x4x40x16xf32>
    return %expanded_10 : tensor<2x4x40x16xf32>
}
