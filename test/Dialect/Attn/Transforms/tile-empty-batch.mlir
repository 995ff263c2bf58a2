// RUN: attn-opt %s --attn-tile | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline -o /dev/null
// A batch of 0 sequences (found by attn-mutate-fuzzer, which set the batch
// size of tile-value-panels.mlir to 0): choosing key chunks for few (batch,
// head) pairs divided by their count, 0, and crashed attn-tile. No pair:
// one chunk, a loop of no iterations.

// CHECK-LABEL: func.func @no_batch
// CHECK: scf.forall {{.*}} in (0, 2, 1)
func.func @no_batch(%q: tensor<0x2x100x128xf32>, %k: tensor<0x2x300x128xf32>,
                    %v: tensor<0x2x300x128xf32>) -> tensor<0x2x100x128xf32> {
  %e = tensor.empty() : tensor<0x2x100x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<0x2x100x128xf32>, tensor<0x2x300x128xf32>, tensor<0x2x300x128xf32> -> tensor<0x2x100x128xf32>
  return %o : tensor<0x2x100x128xf32>
}
