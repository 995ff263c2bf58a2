// RUN: attn-opt %s --attn-verify-input --split-input-file --verify-diagnostics | FileCheck %s
// Both pipelines start with it: the crash the mutation of a constant
// found (a negative tensor.dim index: a segfault in the ABI size tracer of
// the CPU pipeline and in a rewrite pattern of the CUDA one) is this error.
// RUN: not attn-opt %s --attn-cpu-pipeline --split-input-file 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not attn-opt %s --attn-cuda-pipeline --split-input-file 2>&1 | FileCheck %s --check-prefix=PIPELINE
// The size tracer on its own (a pipeline without the front pass) does not
// crash either: the dimension relates to nothing.
// RUN: attn-opt %s --attn-record-abi-sizes --split-input-file 2>&1 | FileCheck %s --check-prefix=TRACER

// PIPELINE: error: 'tensor.dim' op index -1 is not a dimension of 'tensor<1x2x?x32xf32>' (0 to 3)
// TRACER-LABEL: func.func @negative_dim
func.func @negative_dim(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                        %v: tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> {
  %c = arith.constant -1 : index
  // expected-error @below {{'tensor.dim' op index -1 is not a dimension of 'tensor<1x2x?x32xf32>' (0 to 3)}}
  %s = tensor.dim %q, %c : tensor<1x2x?x32xf32>
  %e = tensor.empty(%s) : tensor<1x2x?x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
  return %o : tensor<1x2x?x32xf32>
}

// -----

// PIPELINE: error: 'tensor.dim' op index 4 is not a dimension of 'tensor<1x2x?x32xf32>' (0 to 3)
func.func @past_the_rank(%q: tensor<1x2x?x32xf32>) -> index {
  %c = arith.constant 4 : index
  // expected-error @below {{'tensor.dim' op index 4 is not a dimension of 'tensor<1x2x?x32xf32>' (0 to 3)}}
  %s = tensor.dim %q, %c : tensor<1x2x?x32xf32>
  return %s : index
}

// -----

// PIPELINE: error: 'memref.dim' op index -3 is not a dimension of 'memref<?x8xf32>' (0 to 1)
func.func @memref_dim(%m: memref<?x8xf32>) -> index {
  %c = arith.constant -3 : index
  // expected-error @below {{'memref.dim' op index -3 is not a dimension of 'memref<?x8xf32>' (0 to 1)}}
  %s = memref.dim %m, %c : memref<?x8xf32>
  return %s : index
}

// -----

// Indices in range, and indices known only at run time, are left as they are.
// CHECK-LABEL: func.func @in_range
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: tensor.dim %{{.*}}, %[[C2]]
// CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<1x2x?x32xf32>
func.func @in_range(%q: tensor<1x2x?x32xf32>, %i: index) -> (index, index) {
  %c = arith.constant 2 : index
  %s = tensor.dim %q, %c : tensor<1x2x?x32xf32>
  %t = tensor.dim %q, %i : tensor<1x2x?x32xf32>
  return %s, %t : index, index
}

// -----

// A view whose rows are not contiguous (the mutation fuzzer's: a 1 moved
// in a row-strided layout) made CPU code that did not translate to LLVM IR
// when the pipeline ran without a driver; so does a layout of another rank.
// PIPELINE: error: 'func.func' op argument #0 ('tensor<1x2x4x9xf32>') has bufferization.buffer_layout = strided<[?, ?, 1, ?], offset: ?>; the pipelines take the identity, or views whose innermost dimension is contiguous
// expected-error @below {{argument #0 ('tensor<1x2x4x9xf32>') has bufferization.buffer_layout = strided<[?, ?, 1, ?], offset: ?>}}
func.func @column_view(%q: tensor<1x2x4x9xf32> {bufferization.buffer_layout = strided<[?, ?, 1, ?], offset: ?>})
    -> tensor<1x2x4x9xf32> {
  %e = tensor.empty() : tensor<1x2x4x9xf32>
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x2x4x9xf32>, tensor<1x2x4x9xf32>, tensor<1x2x4x9xf32> -> tensor<1x2x4x9xf32>
  return %o : tensor<1x2x4x9xf32>
}

// -----

// PIPELINE: error: 'func.func' op argument #1 ('tensor<4x8xf32>') has bufferization.buffer_layout = strided<[?, ?, 1], offset: ?>
// expected-error @below {{argument #1 ('tensor<4x8xf32>') has bufferization.buffer_layout = strided<[?, ?, 1], offset: ?>}}
func.func @layout_of_another_rank(%a: tensor<4x8xf32>,
                                  %b: tensor<4x8xf32> {bufferization.buffer_layout = strided<[?, ?, 1], offset: ?>})
    -> tensor<4x8xf32> {
  return %a : tensor<4x8xf32>
}

// -----

// Row-strided views and the identity are what the pipelines take.
// CHECK-LABEL: func.func @row_views
func.func @row_views(%a: tensor<4x8xf32> {bufferization.buffer_layout = strided<[?, 1], offset: ?>},
                     %b: tensor<4x8xf32> {bufferization.buffer_layout = affine_map<(d0, d1) -> (d0, d1)>})
    -> tensor<4x8xf32> {
  return %a : tensor<4x8xf32>
}
