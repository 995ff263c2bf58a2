// A schedule written as a transform script (Inputs/sdpa-schedule.mlir)
// tiles attn.sdpa through upstream's TilingInterface into an scf.forall of
// attn.sdpa tiles (one batch, two query heads, 64 rows); the CPU pipeline
// lowers each tile with attn-tile. On the same inputs the result equals the
// untransformed module's, and both equal the float64 reference. GQA with a
// float mask over rows and keys, 200 rows (a partial last row tile).
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/sdpa-schedule.mlir --transform-interpreter -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: attn-run %s --seed=11 --outputs=%t.untiled.npy
// RUN: attn-run %t.mlir --seed=11 --check --expected=%t.untiled.npy | FileCheck %s
// RUN: attn-run %t.mlir --check | FileCheck %s
// IR: scf.forall
// IR: attn.sdpa {{.*}} : tensor<1x2x?x32xf32>
// CHECK: result #0 {{.*}} ok
// CHECK-NOT: FAIL

func.func @gqa_masked(%q: tensor<2x8x200x32xf32>, %k: tensor<2x4x300x32xf32>,
                      %v: tensor<2x4x300x32xf32>, %m: tensor<200x300xf32>) -> tensor<2x8x200x32xf32> {
  %init = tensor.empty() : tensor<2x8x200x32xf32>
  %0 = attn.sdpa %q, %k, %v mask(%m : tensor<200x300xf32>) outs(%init)
      : tensor<2x8x200x32xf32>, tensor<2x4x300x32xf32>, tensor<2x4x300x32xf32> -> tensor<2x8x200x32xf32>
  return %0 : tensor<2x8x200x32xf32>
}
