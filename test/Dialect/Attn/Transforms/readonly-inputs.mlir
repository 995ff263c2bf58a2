// RUN: attn-opt %s --attn-readonly-inputs | FileCheck %s
// RUN: attn-opt %s --attn-readonly-inputs --attn-reference-pipeline --one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUF

// Tensor arguments of public functions become read-only; scalars and
// private functions are left alone.
// CHECK-LABEL: func.func @public(
// CHECK-SAME: %arg0: tensor<1x1x4x8xf32> {bufferization.writable = false},
// CHECK-SAME: %arg1: tensor<1x1x4x8xf32> {bufferization.writable = false},
// CHECK-SAME: %arg2: f32)
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: writable
// CHECK-SAME: -> tensor<4xf32>

// The destination argument is not written: the result gets its own buffer.
// (Without the pass, the function writes into %arg1 and returns it.)
// BUF-LABEL: func.func @public(
// BUF-NOT: outs(%arg1
// BUF: return %{{.*}} : memref<1x1x4x8xf32>{{$}}
func.func @public(%q: tensor<1x1x4x8xf32>, %init: tensor<1x1x4x8xf32>, %s: f32) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q outs(%init)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
