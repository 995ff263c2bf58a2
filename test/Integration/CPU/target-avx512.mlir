// Code whose blocks the target model chose for AVX-512 CPUs (4 x 64 register
// blocks of zmm registers, rows of up to 256 elements) computes the same
// attention as the float64 reference, with tiles and blocks that do not
// divide the problem, for Skylake-X and x86-64-v4 (any AVX-512 CPU).
// REQUIRES: host-avx512
// RUN: attn-run %s --check --mcpu=skylake-avx512 --entry=full | FileCheck %s
// RUN: attn-run %s --check --mcpu=skylake-avx512 --entry=causal_gqa | FileCheck %s
// RUN: attn-run %s --check --mcpu=x86-64-v4 --entry=full | FileCheck %s
// RUN: attn-run %s --check --mcpu=x86-64-v4 --entry=causal_gqa | FileCheck %s
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

