// attn-run --check on a log-sum-exp with rows in which no key takes part
// (bottom-right causal, more queries than keys: the first four rows see
// none): the compiled code and the reference both give -inf there, which
// agrees. Found by attn-gen-fuzzer: the comparison had counted every such
// row as a NaN or infinite value and failed.
// RUN: attn-run %s --check | FileCheck %s
// CHECK: result #0 tensor<1x2x8x16xf32>: {{.*}} ok
// CHECK: result #1 tensor<1x2x8xf32>: {{.*}} ok
// CHECK-NOT: NaN or infinite
func.func @main(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>)
    -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %l = tensor.empty() : tensor<1x2x8xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<1x2x8xf32>) causal align = <bottom_right>
      : tensor<1x2x8x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
  return %o, %lse : tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
}
