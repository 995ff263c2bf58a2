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
// Left operands whose rows are 4 KiB apart (K = 1024 f32), copied to
// rows one cache line longer first (contraction-conflict-stride=4096, the
// target model's choice on Zen 4 and Sapphire Rapids, given here so that
// every host runs the copy): static, run-time and batched rows, and on
// SSE2's blocks. And a row stride of 8 KiB, of a product reading 1024
// columns of a wider operand.
// RUN: attn-run %s --check --entry=conflicting_rows --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// RUN: attn-run %s --check --entry=conflicting_dynamic_rows --input-shapes=141x1024,1024x160 --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// RUN: attn-run %s --check --entry=conflicting_batched_rows --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// RUN: attn-run %s --check --entry=conflicting_rows --mcpu=x86-64 --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// RUN: attn-run %s --check --entry=conflicting_wide_rows --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// A sequence-first input transposed into rows 4 KiB apart: the transpose
// writes them padded (static and run-time sequence lengths).
// RUN: attn-run %s --check --entry=conflicting_sequence_first --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// RUN: attn-run %s --check --entry=conflicting_sequence_first_dynamic --input-shapes=75x3x1024,1024x160 --cpu-pipeline=contraction-conflict-stride=4096 | FileCheck %s
// The copy is there (and not without the option's stride):
// RUN: attn-opt %s --attn-cpu-pipeline="contraction-conflict-stride=4096" --mlir-print-ir-after=attn-parallelize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=COPY
// COPY-LABEL: func.func @conflicting_rows
// COPY: bufferization.alloc_tensor() : tensor<77x1040xf32>
// COPY-LABEL: func.func @conflicting_dynamic_rows
// COPY: bufferization.alloc_tensor(%{{.*}}) : tensor<?x1040xf32>
// COPY-LABEL: func.func @conflicting_batched_rows
// COPY: bufferization.alloc_tensor() : tensor<3x10x1040xf32>
// COPY-LABEL: func.func @conflicting_wide_rows
// COPY: bufferization.alloc_tensor() : tensor<50x1040xf32>
// COPY-LABEL: func.func @conflicting_sequence_first
// COPY: bufferization.alloc_tensor() : tensor<3x75x1040xf32>
// COPY-LABEL: func.func @conflicting_sequence_first_dynamic
// COPY: bufferization.alloc_tensor(%{{.*}}) : tensor<3x?x1040xf32>
// RUN: attn-opt %s --attn-cpu-pipeline="contraction-conflict-stride=0" --mlir-print-ir-after=attn-parallelize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCOPY
// NOCOPY-NOT: alloc_tensor
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

func.func @conflicting_rows(%a: tensor<77x1024xf32>, %b: tensor<1024x160xf32>) -> tensor<77x160xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<77x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<77x160xf32>) -> tensor<77x160xf32>
  %r = linalg.matmul ins(%a, %b : tensor<77x1024xf32>, tensor<1024x160xf32>) outs(%f : tensor<77x160xf32>) -> tensor<77x160xf32>
  return %r : tensor<77x160xf32>
}

func.func @conflicting_dynamic_rows(%a: tensor<?x1024xf32>, %b: tensor<1024x160xf32>) -> tensor<?x160xf32> {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x1024xf32>
  %e = tensor.empty(%m) : tensor<?x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x160xf32>) -> tensor<?x160xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x1024xf32>, tensor<1024x160xf32>) outs(%f : tensor<?x160xf32>) -> tensor<?x160xf32>
  return %r : tensor<?x160xf32>
}

// torch's weight layout [N, K], 3 sequences of 10 tokens.
func.func @conflicting_batched_rows(%x: tensor<3x10x1024xf32>, %w: tensor<192x1024xf32>) -> tensor<3x10x192xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x10x192xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x10x192xf32>) -> tensor<3x10x192xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, l, n, k) -> (b, l, k)>, affine_map<(b, l, n, k) -> (n, k)>, affine_map<(b, l, n, k) -> (b, l, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x10x1024xf32>, tensor<192x1024xf32>) outs(%f : tensor<3x10x192xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x10x192xf32>
  return %r : tensor<3x10x192xf32>
}

func.func @conflicting_wide_rows(%a: tensor<50x2048xf32>, %b: tensor<1024x128xf32>) -> tensor<50x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<50x128xf32>) -> tensor<50x128xf32>
  %s = tensor.extract_slice %a[0, 1024] [50, 1024] [1, 1] : tensor<50x2048xf32> to tensor<50x1024xf32>
  %r = linalg.matmul ins(%s, %b : tensor<50x1024xf32>, tensor<1024x128xf32>) outs(%f : tensor<50x128xf32>) -> tensor<50x128xf32>
  return %r : tensor<50x128xf32>
}

func.func @conflicting_sequence_first(%x: tensor<75x3x1024xf32>, %w: tensor<1024x160xf32>) -> tensor<3x75x160xf32> {
  %z = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<3x75x1024xf32>
  %t = linalg.transpose ins(%x : tensor<75x3x1024xf32>) outs(%et : tensor<3x75x1024xf32>) permutation = [1, 0, 2]
  %e = tensor.empty() : tensor<3x75x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x75x160xf32>) -> tensor<3x75x160xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, l, n, k) -> (b, l, k)>, affine_map<(b, l, n, k) -> (k, n)>, affine_map<(b, l, n, k) -> (b, l, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%t, %w : tensor<3x75x1024xf32>, tensor<1024x160xf32>) outs(%f : tensor<3x75x160xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x75x160xf32>
  return %r : tensor<3x75x160xf32>
}

func.func @conflicting_sequence_first_dynamic(%x: tensor<?x3x1024xf32>, %w: tensor<1024x160xf32>) -> tensor<3x?x160xf32> {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %l = tensor.dim %x, %c0 : tensor<?x3x1024xf32>
  %et = tensor.empty(%l) : tensor<3x?x1024xf32>
  %t = linalg.transpose ins(%x : tensor<?x3x1024xf32>) outs(%et : tensor<3x?x1024xf32>) permutation = [1, 0, 2]
  %e = tensor.empty(%l) : tensor<3x?x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x?x160xf32>) -> tensor<3x?x160xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, l, n, k) -> (b, l, k)>, affine_map<(b, l, n, k) -> (k, n)>, affine_map<(b, l, n, k) -> (b, l, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%t, %w : tensor<3x?x1024xf32>, tensor<1024x160xf32>) outs(%f : tensor<3x?x160xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x?x160xf32>
  return %r : tensor<3x?x160xf32>
}
