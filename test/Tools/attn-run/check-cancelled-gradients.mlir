// attn-run --check on a backward in which every query sees exactly one key
// (window = [0, 0]): dQ and dK are P (dP - rowsum(dO O)) = 0 exactly, so
// the reference holds only its own rounding (about 1e-16) and the code
// under test its rounding of the cancelled terms. Such an output is
// measured against the typical row of the largest output (dV); relative to
// itself its error would be any size. Found by attn-gen-fuzzer (a bf16
// program with dropout, which failed at 1e13 "relative error").
// RUN: attn-run %s --check --input-shapes=1x2x9x16,1x2x9x16,1x2x9x16,1x2x9x16 | FileCheck %s
// CHECK-COUNT-3: relative error {{.*}} ok
// CHECK-NOT: FAIL
func.func @main(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                %do: tensor<1x2x?x16xf32>)
    -> (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%s) : tensor<1x2x?x16xf32>
  %l = tensor.empty(%s) : tensor<1x2x?xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<1x2x?xf32>) window = [0, 0]
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>, tensor<1x2x?xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%e, %e, %e) window = [0, 0]
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>
  return %dq, %dk, %dv : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
}
