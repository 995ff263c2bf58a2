// Varlen attention (attn.pad_sequences, attn.sdpa, attn.unpad_sequences)
// against the compiler's float64 reference on random offsets: attn-run
// draws cu_seqlens as sequences of random lengths, from empty to the
// padded length, that cover the packed rows. Causal self-attention
// prefill with GQA, and f16 cross-attention with i64 offsets. The NumPy
// oracle checks in varlen.test; CUDA compiles these in compile-all.test.
// RUN: attn-run %s --check --entry=prefill | FileCheck %s
// RUN: attn-run %s --check --entry=cross_f16 | FileCheck %s
// CHECK: relative error {{.*}} ok
func.func @prefill(%q: tensor<300x8x64xf32>, %k: tensor<300x2x64xf32>,
                   %v: tensor<300x2x64xf32>, %cu: tensor<5xi32>) -> tensor<300x8x64xf32> {
  %qp, %ql = attn.pad_sequences %q[%cu] align = <bottom_right> : tensor<300x8x64xf32>, tensor<5xi32> -> tensor<4x8x128x64xf32>, tensor<4xi32>
  %kp, %kl = attn.pad_sequences %k[%cu] : tensor<300x2x64xf32>, tensor<5xi32> -> tensor<4x2x128x64xf32>, tensor<4xi32>
  %vp, %vl = attn.pad_sequences %v[%cu] : tensor<300x2x64xf32>, tensor<5xi32> -> tensor<4x2x128x64xf32>, tensor<4xi32>
  %e = tensor.empty() : tensor<4x8x128x64xf32>
  %o = attn.sdpa %qp, %kp, %vp kv_lens(%kl : tensor<4xi32>) outs(%e) causal align = <bottom_right>
     : tensor<4x8x128x64xf32>, tensor<4x2x128x64xf32>, tensor<4x2x128x64xf32> -> tensor<4x8x128x64xf32>
  %z = tensor.empty() : tensor<300x8x64xf32>
  %r = attn.unpad_sequences %o[%cu] align = <bottom_right> outs(%z) : tensor<4x8x128x64xf32>, tensor<5xi32> -> tensor<300x8x64xf32>
  return %r : tensor<300x8x64xf32>
}
func.func @cross_f16(%q: tensor<40x4x32xf16>, %k: tensor<200x4x32xf16>,
                     %v: tensor<200x4x32xf16>, %cuq: tensor<4xi64>,
                     %cuk: tensor<4xi64>) -> tensor<40x4x32xf16> {
  %qp, %ql = attn.pad_sequences %q[%cuq] align = <bottom_right> : tensor<40x4x32xf16>, tensor<4xi64> -> tensor<3x4x16x32xf16>, tensor<3xi64>
  %kp, %kl = attn.pad_sequences %k[%cuk] : tensor<200x4x32xf16>, tensor<4xi64> -> tensor<3x4x80x32xf16>, tensor<3xi64>
  %vp, %vl = attn.pad_sequences %v[%cuk] : tensor<200x4x32xf16>, tensor<4xi64> -> tensor<3x4x80x32xf16>, tensor<3xi64>
  %e = tensor.empty() : tensor<3x4x16x32xf16>
  %o = attn.sdpa %qp, %kp, %vp kv_lens(%kl : tensor<3xi64>) outs(%e)
     : tensor<3x4x16x32xf16>, tensor<3x4x80x32xf16>, tensor<3x4x80x32xf16> -> tensor<3x4x16x32xf16>
  %z = tensor.empty() : tensor<40x4x32xf16>
  %r = attn.unpad_sequences %o[%cuq] align = <bottom_right> outs(%z) : tensor<3x4x16x32xf16>, tensor<4xi64> -> tensor<40x4x32xf16>
  return %r : tensor<40x4x32xf16>
}
