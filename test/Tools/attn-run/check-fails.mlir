// --check fails, with exit status 1, on outputs the code does not write
// entirely (outputs start as NaN).
// RUN: not attn-run %s --check --entry=unwritten | FileCheck %s --check-prefix=UNWRITTEN
// RUN: not attn-run %s --check --entry=partial | FileCheck %s --check-prefix=PARTIAL

// UNWRITTEN: @unwritten result #0 tensor<4xf32>: relative error INF, largest row error INF (tolerance 1.000000e-05, per row 1.000000e-04) FAIL, 4 of 4 values are NaN or infinite
func.func @unwritten() -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// Attention written into half of a larger result: the other half stays NaN.
// PARTIAL: @partial result #0 tensor<1x1x8x8xf32>: relative error INF, largest row error INF at [0, 0, 4] (tolerance 1.000000e-05, per row 1.000000e-04) FAIL, 32 of 64 values are NaN or infinite
func.func @partial(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x8x8xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  %big = tensor.empty() : tensor<1x1x8x8xf32>
  %r = tensor.insert_slice %o into %big[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1]
     : tensor<1x1x4x8xf32> into tensor<1x1x8x8xf32>
  return %r : tensor<1x1x8x8xf32>
}
