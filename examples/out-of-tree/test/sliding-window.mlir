// The example's pass in the example's tool, then attn-mlir's own pipeline
// from the same tool, then the installed attn-run checking the windowed
// attention against its float64 reference (random inputs, poisoned
// outputs).
// RUN: attn-ext-opt %s --attn-ext-sliding-window=size=16 | FileCheck %s
// RUN: attn-ext-opt %s --attn-ext-sliding-window="size=16 remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: attn-ext-opt %s --attn-ext-sliding-window=size=16 --attn-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: attn-ext-opt %s --attn-ext-sliding-window=size=16 -o %t.mlir
// RUN: attn-run %t.mlir --entry=causal --check | FileCheck %s --check-prefix=EXEC
// RUN: not attn-ext-opt %s --attn-ext-sliding-window=size=0 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @causal
// CHECK: attn.sdpa {{.*}} causal window = [15, 0] :
// CHECK-LABEL: func.func @full
// CHECK-NOT: window
// CHECK-LABEL: func.func @windowed
// CHECK: window = [3, 0]

// REMARK: remark: attn-ext-sliding-window: window [15, 0]
// REMARK: remark: attn-ext-sliding-window: not causal, left alone
// REMARK: remark: attn-ext-sliding-window: has window [3, 0], left alone

// LLVM-NOT: attn.sdpa
// LLVM: llvm.func @causal

// EXEC: @causal result #0 tensor<1x2x64x32xf32>: relative error {{.*}} ok
// EXEC-NOT: FAIL

// BAD: error: attn-ext-sliding-window: size must be at least 1, got 0

func.func @causal(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                  %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %init = tensor.empty() : tensor<1x2x64x32xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init) causal
      : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
        -> tensor<1x2x64x32xf32>
  return %0 : tensor<1x2x64x32xf32>
}

func.func @full(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %init = tensor.empty() : tensor<1x2x64x32xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init)
      : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
        -> tensor<1x2x64x32xf32>
  return %0 : tensor<1x2x64x32xf32>
}

func.func @windowed(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                    %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %init = tensor.empty() : tensor<1x2x64x32xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init) causal window = [3, 0]
      : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
        -> tensor<1x2x64x32xf32>
  return %0 : tensor<1x2x64x32xf32>
}
