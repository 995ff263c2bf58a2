// -v reports the time of every stage, the pipeline's passes among them;
// --print-pipeline prints the pass pipeline attn-opt would run.
// RUN: attnc %s --emit=shared -o %t.so -v 2>&1 | FileCheck %s --check-prefix=TIME
// RUN: attnc %s --emit=mlir -o /dev/null --print-pipeline 2>&1 | FileCheck %s --check-prefix=PIPE

// TIME: Execution time report
// TIME: parse and verify
// TIME: MLIR pipeline
// TIME: AttnLowerToLinalg
// TIME: OneShotBufferize
// TIME: ConvertToLLVMPass
// TIME: translate to LLVM IR
// TIME: LLVM -O3
// TIME: machine code
// TIME: link

// PIPE: attn-decompose-multihead,attn-lower-to-linalg,canonicalize
// PIPE-SAME: one-shot-bufferize
// PIPE-SAME: buffer-results-to-out-params
// PIPE-SAME: convert-to-llvm

func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
