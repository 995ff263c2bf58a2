// Products outside attention (projections, linalg.matmul) whose rows the
// row blocks (64) and register blocks (12 x 32 on AVX-512, 6 x 16 on AVX2,
// 6 x 8 on SSE2) do not divide, static and known only at run time, against
// the float64 reference: the rows left over run as smaller static blocks.
// RUN: attn-run %s --check --entry=rows_77 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_rows --input-shapes=141x96,96x160 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_rows --input-shapes=3x96,96x160 | FileCheck %s
// RUN: attn-run %s --check --entry=batched_rows_10 | FileCheck %s
// The same for AVX2 and SSE2 blocks (any x86-64 host runs them; znver3's
// SSE4a is left out for Intel hosts):
// RUN: attn-run %s --check --entry=rows_77 --mcpu=znver3 --mattr=-sse4a | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_rows --input-shapes=141x96,96x160 --mcpu=znver3 --mattr=-sse4a | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_rows --input-shapes=77x96,96x160 --mcpu=x86-64 | FileCheck %s
// RUN: attn-run %s --check --entry=batched_rows_10 --mcpu=x86-64 | FileCheck %s
// Columns that are not whole panels (N = 1000, 789: the weight is read
// unpacked, and column blocks of 512 leave 488 or 277 known only at run
// time), and columns known only at run time, in blocks of halving widths:
// RUN: attn-run %s --check --entry=columns_1000 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_columns --input-shapes=123x40,40x789 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_columns --input-shapes=19x40,40x7 | FileCheck %s
// RUN: attn-run %s --check --entry=columns_1000 --mcpu=znver3 --mattr=-sse4a | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_columns --input-shapes=70x40,40x45 --mcpu=x86-64 | FileCheck %s
// CHECK: result #0 {{.*}} ok

func.func @columns_1000(%a: tensor<130x64xf32>, %b: tensor<64x1000xf32>) -> tensor<130x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<130x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<130x1000xf32>) -> tensor<130x1000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<130x64xf32>, tensor<64x1000xf32>) outs(%f : tensor<130x1000xf32>) -> tensor<130x1000xf32>
  return %r : tensor<130x1000xf32>
}

func.func @dynamic_columns(%a: tensor<?x40xf32>, %b: tensor<40x?xf32>) -> tensor<?x?xf32> {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x40xf32>
  %n = tensor.dim %b, %c1 : tensor<40x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x40xf32>, tensor<40x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @rows_77(%a: tensor<77x96xf32>, %b: tensor<96x160xf32>) -> tensor<77x160xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<77x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<77x160xf32>) -> tensor<77x160xf32>
  %r = linalg.matmul ins(%a, %b : tensor<77x96xf32>, tensor<96x160xf32>) outs(%f : tensor<77x160xf32>) -> tensor<77x160xf32>
  return %r : tensor<77x160xf32>
}

func.func @dynamic_rows(%a: tensor<?x96xf32>, %b: tensor<96x160xf32>) -> tensor<?x160xf32> {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x96xf32>
  %e = tensor.empty(%m) : tensor<?x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x160xf32>) -> tensor<?x160xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x96xf32>, tensor<96x160xf32>) outs(%f : tensor<?x160xf32>) -> tensor<?x160xf32>
  return %r : tensor<?x160xf32>
}

// A projection of 7 sequences of 10 tokens, torch's weight layout [N, K]:
// blocks of 10 rows per sequence.
func.func @batched_rows_10(%x: tensor<7x10x48xf32>, %w: tensor<64x48xf32>) -> tensor<7x10x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x10x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<7x10x64xf32>) -> tensor<7x10x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, l, n, k) -> (b, l, k)>, affine_map<(b, l, n, k) -> (n, k)>, affine_map<(b, l, n, k) -> (b, l, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<7x10x48xf32>, tensor<64x48xf32>) outs(%f : tensor<7x10x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<7x10x64xf32>
  return %r : tensor<7x10x64xf32>
}
