// Made by test/lib/frontend_fixture.py causal-masked-fill --frontend jax (jax 0.10.2): jax.jit(...).lower, iree-compile --iree-input-type=stablehlo --compile-to=input,
// IREE's ABI unwrapped.
func.func @main(%arg0: tensor<2x4x40x16xf32>, %arg1: tensor<2x4x40x16xf32>, %arg2: tensor<2x4x40x16xf32>) -> (tensor<2x4x40x16xf32>) {
    %true = arith.constant true
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 4.000000e+00 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x4x16x40xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x4x40x16xf32>) outs(%0 : tensor<2x4x16x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x16x40xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %collapsed_2 = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<2x4x16x40xf32> into tensor<8x16x40xf32>
    %2 = tensor.empty() : tensor<8x40x40xf32>
    %3 = linalg.fill ins(%cst_1 : f32) outs(%2 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %4 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<8x40x16xf32>, tensor<8x16x40xf32>) outs(%3 : tensor<8x40x40xf32>) -> tensor<8x40x40xf32>
    %expanded = tensor.expand_shape %4 [[0, 1], [2], [3]] output_shape [2, 4, 40, 40] : tensor<8x40x40xf32> into tensor<2x4x40x40xf32>
    %5 = tensor.empty() : tensor<2x4x40x40xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x4x40x40xf32>) outs(%5 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.divf %in, %cst_0 : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40x40xf32>
    %7 = tensor.empty() : tensor<40x40xi32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%7 : tensor<40x40xi32>) {
    ^bb0(%out: i32):
      %38 = linalg.index 0 : index
      %39 = arith.index_cast %38 : index to i32
      linalg.yield %39 : i32
    } -> tensor<40x40xi32>
    %9 = tensor.empty() : tensor<40x40xi32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%9 : tensor<40x40xi32>) {
    ^bb0(%out: i32):
      %38 = linalg.index 1 : index
      %39 = arith.index_cast %38 : index to i32
      linalg.yield %39 : i32
    } -> tensor<40x40xi32>
    %11 = tensor.empty() : tensor<40x40xi1>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%8, %10 : tensor<40x40xi32>, tensor<40x40xi32>) outs(%11 : tensor<40x40xi1>) {
    ^bb0(%in: i32, %in_6: i32, %out: i1):
      %38 = arith.cmpi sge, %in, %in_6 : i32
      linalg.yield %38 : i1
    } -> tensor<40x40xi1>
    %13 = tensor.empty() : tensor<40x40xi1>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%12 : tensor<40x40xi1>) outs(%13 : tensor<40x40xi1>) {
    ^bb0(%in: i1, %out: i1):
      %38 = arith.xori %in, %true : i1
      linalg.yield %38 : i1
    } -> tensor<40x40xi1>
    %15 = tensor.empty() : tensor<2x4x40x40xi1>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<40x40xi1>) outs(%15 : tensor<2x4x40x40xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<2x4x40x40xi1>
    %17 = tensor.empty() : tensor<2x4x40x40xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %6 : tensor<2x4x40x40xi1>, tensor<2x4x40x40xf32>) outs(%17 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: i1, %in_6: f32, %out: f32):
      %38 = arith.select %in, %cst, %in_6 : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40x40xf32>
    %19 = tensor.empty() : tensor<2x4x40xf32>
    %20 = linalg.fill ins(%cst : f32) outs(%19 : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%18 : tensor<2x4x40x40xf32>) outs(%20 : tensor<2x4x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.maximumf %out, %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40xf32>
    %22 = tensor.empty() : tensor<2x4x40x40xf32>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<2x4x40xf32>) outs(%22 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x40x40xf32>
    %24 = tensor.empty() : tensor<2x4x40x40xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18, %23 : tensor<2x4x40x40xf32>, tensor<2x4x40x40xf32>) outs(%24 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %38 = arith.subf %in, %in_6 : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40x40xf32>
    %26 = tensor.empty() : tensor<2x4x40x40xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25 : tensor<2x4x40x40xf32>) outs(%26 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = math.exp %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40x40xf32>
    %28 = tensor.empty() : tensor<2x4x40xf32>
    %29 = linalg.fill ins(%cst_1 : f32) outs(%28 : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<2x4x40x40xf32>) outs(%29 : tensor<2x4x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.addf %out, %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40xf32>
    %31 = tensor.empty() : tensor<2x4x40x40xf32>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%30 : tensor<2x4x40xf32>) outs(%31 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x40x40xf32>
    %33 = tensor.empty() : tensor<2x4x40x40xf32>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %32 : tensor<2x4x40x40xf32>, tensor<2x4x40x40xf32>) outs(%33 : tensor<2x4x40x40xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %38 = arith.divf %in, %in_6 : f32
      linalg.yield %38 : f32
    } -> tensor<2x4x40x40xf32>
    %collapsed_3 = tensor.collapse_shape %34 [[0, 1], [2], [3]] : tensor<2x4x40x40xf32> into tensor<8x40x40xf32>
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<2x4x40x16xf32> into tensor<8x40x16xf32>
    %35 = tensor.empty() : tensor<8x40x16xf32>
    %36 = linalg.fill ins(%cst_1 : f32) outs(%35 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %37 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<8x40x40xf32>, tensor<8x40x16xf32>) outs(%36 : tensor<8x40x16xf32>) -> tensor<8x40x16xf32>
    %expanded_5 = tensor.expand_shape %37 [[0, 1], [2], [3]] output_shape [2, 4, 40, 16] : tensor<8x40x16xf32> into tensor<2x4x40x16xf32>
    return %expanded_5 : tensor<2x4x40x16xf32>
}
