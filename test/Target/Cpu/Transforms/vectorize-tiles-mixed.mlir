// A contraction of f16 operands into an f32 accumulator, as linalg.matmul
// writes it (found by attn-parse-fuzzer: the CPU pipeline left the mixed
// vector.contract unlowered and translation to LLVM IR failed). The
// operands are extended to f32 and each K step is an outer product.
// RUN: attn-opt %s --attn-vectorize-tiles="m-block=4 n-block=16" | FileCheck %s
// RUN: attnc %s --emit=llvm -o - | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @mixed_matmul
// CHECK: scf.for
// CHECK-DAG: arith.extf {{.*}} : vector<4x1xf16> to vector<4x1xf32>
// CHECK-DAG: arith.extf {{.*}} : vector<2xf16> to vector<2xf32>
// CHECK-COUNT-4: vector.fma {{.*}} : vector<2xf32>
// CHECK-NOT: vector.contract
// LLVM: define {{.*}} @mixed_matmul(
// LLVM: fpext <{{[0-9]+}} x half>
func.func @mixed_matmul(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x2xf16>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
