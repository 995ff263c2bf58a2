// Upstream mlir-opt (the LLVM 22 tool this project builds against, not
// attn-opt) with the attn dialect and passes loaded from
// AttnMLIRPlugin.so: the dialect parses, prints and verifies; the passes
// and named pipelines run, given with --pass-pipeline (pass flags are
// parsed before plugins load), and so do scripts of transform.attn ops. Without the plugin the dialect is unknown.
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin | mlir-opt --load-dialect-plugin=%attn_plugin | FileCheck %s --check-prefix=ROUND
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(attn-lower-to-linalg)" | FileCheck %s --check-prefix=LOWER
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(func.func(attn-tile{q-tile=32 kv-tile=32}))" | FileCheck %s --check-prefix=TILE
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(attn-cpu-pipeline)" | FileCheck %s --check-prefix=LLVM
// RUN: mlir-opt %S/../../examples/gpt2-causal.mlir --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(attn-cpu-pipeline)" | FileCheck %s --check-prefix=EXAMPLE
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(transform-preload-library{transform-library-paths=%S/../Dialect/Attn/TransformOps/Inputs/cpu-schedule.mlir},transform-interpreter)" | FileCheck %s --check-prefix=SCRIPT
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
// RUN: mlir-opt %S/../Dialect/Attn/pad-sequences-invalid.mlir --load-dialect-plugin=%attn_plugin -split-input-file -verify-diagnostics

// ROUND-LABEL: func.func @causal
// ROUND: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} outs(%{{.*}}) causal : tensor<2x4x64x32xf32>

// LOWER-LABEL: func.func @causal
// LOWER-NOT: attn.sdpa
// LOWER: linalg.generic

// TILE-LABEL: func.func @causal
// TILE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 4, 2)
// TILE-NOT: attn.sdpa

// The transform.attn ops come with the dialect (a script of them).
// SCRIPT-LABEL: func.func @causal
// SCRIPT: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 4, 2)
// SCRIPT: vector.fma
// SCRIPT-NOT: attn.sdpa

// LLVM: llvm.func @causal
// LLVM-NOT: attn.

// EXAMPLE: llvm.func
// EXAMPLE-NOT: attn.

// NOPLUGIN: error: Dialect `attn' not found for custom op 'attn.sdpa'
func.func @causal(%q: tensor<2x4x64x32xf32>, %k: tensor<2x4x64x32xf32>,
                  %v: tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32> {
  %e = tensor.empty() : tensor<2x4x64x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32> -> tensor<2x4x64x32xf32>
  return %o : tensor<2x4x64x32xf32>
}
