// Code whose blocks the target model chose for AVX2 CPUs (4 x 16 register
// blocks of ymm registers, rows of up to 128 elements) computes the same
// attention as the float64 reference, with tiles and blocks that do not
// divide the problem. Also with plain x86-64 (SSE2, 4 x 8 blocks, no FMA).
// REQUIRES: host-avx2
// (--mattr=-sse4a: znver3 has AMD's SSE4a, which an Intel host lacks.)
// RUN: attn-run %s --check --mcpu=znver3 --mattr=-sse4a --entry=full | FileCheck %s
// RUN: attn-run %s --check --mcpu=znver3 --mattr=-sse4a --entry=causal_gqa | FileCheck %s
// RUN: attn-run %s --check --mcpu=x86-64 --entry=full | FileCheck %s
// RUN: attn-run %s --check --mcpu=x86-64 --entry=causal_gqa | FileCheck %s
// CHECK: relative error {{.*}} ok
func.func @full(%q: tensor<1x2x200x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>)
    -> tensor<1x2x200x64xf32> {
  %e = tensor.empty() : tensor<1x2x200x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x200x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32> -> tensor<1x2x200x64xf32>
  return %o : tensor<1x2x200x64xf32>
}

func.func @causal_gqa(%q: tensor<1x4x257x32xf32>, %k: tensor<1x2x257x32xf32>, %v: tensor<1x2x257x32xf32>)
    -> tensor<1x4x257x32xf32> {
  %e = tensor.empty() : tensor<1x4x257x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x257x32xf32>, tensor<1x2x257x32xf32>, tensor<1x2x257x32xf32> -> tensor<1x4x257x32xf32>
  return %o : tensor<1x4x257x32xf32>
}

