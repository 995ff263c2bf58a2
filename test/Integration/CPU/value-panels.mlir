// V packed in panels of the register block's width (attn-tile value-panel)
// computes the same attention as the float64 reference: AVX2 code (16-column
// panels) with Dv = 128 and key tiles that do not divide Skv, causal GQA
// with Dv != D, a dynamic sequence with a window; and on the host's own
// target a Dv of 256 (at least 4 panels of any x86 block). The IR checks
// show that the panels are there.
// REQUIRES: host-avx2
// (--mattr=-sse4a: znver3 has AMD's SSE4a, which an Intel host lacks.)
// RUN: attn-run %s --check --mcpu=znver3 --mattr=-sse4a --entry=dense | FileCheck %s
// RUN: attn-run %s --check --mcpu=znver3 --mattr=-sse4a --entry=causal_gqa_dv64 | FileCheck %s
// RUN: attn-run %s --check --mcpu=znver3 --mattr=-sse4a --entry=dynamic --input-shapes=1x2x301x64,1x2x517x64,1x2x517x64 | FileCheck %s
// RUN: attn-run %s --check --entry=wide_value | FileCheck %s
// CHECK: relative error {{.*}} ok
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=znver3" --mlir-print-ir-after=attn-tile -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @dense
// IR: linalg.transpose ins({{.*}} : tensor<1x2x6x64x8x16xf32>) {{.*}} permutation = [0, 1, 2, 4, 3, 5]
// IR-LABEL: func.func @causal_gqa_dv64
// IR: linalg.transpose ins({{.*}} : tensor<2x2x3x128x4x16xf32>) {{.*}} permutation = [0, 1, 2, 4, 3, 5]
func.func @dense(%q: tensor<1x2x300x128xf32>, %k: tensor<1x2x333x128xf32>, %v: tensor<1x2x333x128xf32>) -> tensor<1x2x300x128xf32> {
  %e = tensor.empty() : tensor<1x2x300x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) : tensor<1x2x300x128xf32>, tensor<1x2x333x128xf32>, tensor<1x2x333x128xf32> -> tensor<1x2x300x128xf32>
  return %o : tensor<1x2x300x128xf32>
}
func.func @causal_gqa_dv64(%q: tensor<2x4x257x32xf32>, %k: tensor<2x2x257x32xf32>, %v: tensor<2x2x257x64xf32>) -> tensor<2x4x257x64xf32> {
  %e = tensor.empty() : tensor<2x4x257x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal : tensor<2x4x257x32xf32>, tensor<2x2x257x32xf32>, tensor<2x2x257x64xf32> -> tensor<2x4x257x64xf32>
  return %o : tensor<2x4x257x64xf32>
}
func.func @dynamic(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<1x2x?x64xf32>
  %e = tensor.empty(%n) : tensor<1x2x?x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) window = [40, 0] : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}
func.func @wide_value(%q: tensor<1x2x150x64xf32>, %k: tensor<1x2x200x64xf32>, %v: tensor<1x2x200x256xf32>) -> tensor<1x2x150x256xf32> {
  %e = tensor.empty() : tensor<1x2x150x256xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) : tensor<1x2x150x64xf32>, tensor<1x2x200x64xf32>, tensor<1x2x200x256xf32> -> tensor<1x2x150x256xf32>
  return %o : tensor<1x2x150x256xf32>
}
