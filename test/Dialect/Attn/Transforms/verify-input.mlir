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
