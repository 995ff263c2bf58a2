// A user-written schedule in attn's transform ops
// (Inputs/attn-ops-schedule.mlir): two attention ops of one function tiled
// and register-blocked differently, the first through TilingInterface
// (pairs of heads) and then transform.attn.tile within each pair. The
// rest of the CPU pipeline compiles the result, and on the same inputs it
// equals the default pipeline's output (itself checked against the
// float64 reference).
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/attn-ops-schedule.mlir --transform-interpreter -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: attn-run %s --seed=5 --check --outputs=%t.self.npy,%t.cross.npy | FileCheck %s
// RUN: attn-run %t.mlir --seed=5 --check --expected=%t.self.npy,%t.cross.npy | FileCheck %s
// IR-NOT: attn.sdpa
// The self-attention: a forall over (batch, head pairs) around attn's nest.
// IR: scf.forall ({{.*}}) in (2, 2)
// IR: scf.forall
// IR: vector<4x16xf32>
// IR: scf.forall.in_parallel
// The cross-attention: V packed in 32-column panels, 2 x 32 blocks.
// IR: tensor<2x4x5x4x64x32xf32>
// IR: scf.forall
// IR: vector<2x32xf32>
// CHECK: result #0 {{.*}} ok
// CHECK: result #1 {{.*}} ok
// CHECK-NOT: FAIL

func.func @self_and_cross(%x: tensor<2x4x200x64xf32>, %mq: tensor<2x4x100x64xf32>,
                          %mk: tensor<2x4x300x64xf32>, %mv: tensor<2x4x300x128xf32>)
    -> (tensor<2x4x200x64xf32>, tensor<2x4x100x128xf32>) {
  %e0 = tensor.empty() : tensor<2x4x200x64xf32>
  %self = attn.sdpa %x, %x, %x outs(%e0) causal
      : tensor<2x4x200x64xf32>, tensor<2x4x200x64xf32>, tensor<2x4x200x64xf32> -> tensor<2x4x200x64xf32>
  %e1 = tensor.empty() : tensor<2x4x100x128xf32>
  %cross = attn.sdpa %mq, %mk, %mv outs(%e1)
      : tensor<2x4x100x64xf32>, tensor<2x4x300x64xf32>, tensor<2x4x300x128xf32> -> tensor<2x4x100x128xf32>
  return %self, %cross : tensor<2x4x200x64xf32>, tensor<2x4x100x128xf32>
}
