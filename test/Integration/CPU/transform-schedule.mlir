// The CPU schedule of attention written as a transform script
// (Inputs/cpu-schedule.mlir: attn-sparsify and attn-tile with 32-row query
// tiles and 16-key tiles, applied by transform.apply_registered_pass) rather
// than as --cpu-pipeline options: the script lowers attn.sdpa to its tile
// loops, the rest of the CPU pipeline compiles them, and on the same inputs
// the result equals the default pipeline's (itself checked against the
// float64 reference). Causal with a sliding window, 100 rows (a partial
// tile).
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/cpu-schedule.mlir --transform-interpreter -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: attn-run %s --seed=3 --check --outputs=%t.default.npy | FileCheck %s
// RUN: attn-run %t.mlir --seed=3 --check --expected=%t.default.npy | FileCheck %s
// IR-NOT: attn.sdpa
// IR: scf.forall
// IR: scf.for
// CHECK: result #0 {{.*}} ok
// CHECK-NOT: FAIL

func.func @causal_window(%q: tensor<1x4x100x32xf32>, %k: tensor<1x4x100x32xf32>,
                         %v: tensor<1x4x100x32xf32>) -> tensor<1x4x100x32xf32> {
  %init = tensor.empty() : tensor<1x4x100x32xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init) causal window = [40, 0]
      : tensor<1x4x100x32xf32>, tensor<1x4x100x32xf32>, tensor<1x4x100x32xf32> -> tensor<1x4x100x32xf32>
  return %0 : tensor<1x4x100x32xf32>
}
