// bf16 attention through vdpbf16ps (attn-tile bf16-pairs, attn-vectorize-tiles
// bf16-dot) computes the same attention as the float64 reference on hosts
// with AVX512-BF16: odd key counts (a zero-padded last pair), tiles and
// blocks that do not divide the problem, causal GQA with key lengths, a
// kv tile of 32 and a bool mask; the same functions with bf16-dot=false
// (widened to f32) for comparison. P is rounded to bf16 before P V, as
// PyTorch's and FlashAttention's bf16 kernels do: the error stays within
// bf16's tolerance. bf16-dot=true is given: the target model widens on
// hosts with AMX-BF16 (Sapphire Rapids), and the pairs are checked there
// too.
// REQUIRES: host-avx512bf16
// RUN: attn-run %s --check --entry=odd_keys --cpu-pipeline="bf16-dot=true" --print-target 2>&1 | FileCheck %s --check-prefixes=CHECK,DOT
// RUN: attn-run %s --check --entry=causal_gqa_lens --cpu-pipeline="bf16-dot=true" | FileCheck %s
// RUN: attn-run %s --check --entry=masked --cpu-pipeline="kv-tile=32 q-tile=48 m-block=2 n-block=32 bf16-dot=true" | FileCheck %s
// RUN: attn-run %s --check --entry=odd_keys --cpu-pipeline="bf16-dot=false" | FileCheck %s
// RUN: attn-run %s --check --entry=causal_gqa_lens --cpu-pipeline="bf16-dot=false" | FileCheck %s
// DOT: kernel: {{.*}} bf16-dot=true
// CHECK: relative error {{.*}} ok

func.func @odd_keys(%q: tensor<1x2x201x64xbf16>, %k: tensor<1x2x301x64xbf16>, %v: tensor<1x2x301x64xbf16>)
    -> tensor<1x2x201x64xbf16> {
  %e = tensor.empty() : tensor<1x2x201x64xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x201x64xbf16>, tensor<1x2x301x64xbf16>, tensor<1x2x301x64xbf16> -> tensor<1x2x201x64xbf16>
  return %o : tensor<1x2x201x64xbf16>
}

func.func @causal_gqa_lens(%q: tensor<2x4x130x128xbf16>, %k: tensor<2x2x257x128xbf16>,
                           %v: tensor<2x2x257x96xbf16>, %lens: tensor<2xi32>)
    -> tensor<2x4x130x96xbf16> {
  %e = tensor.empty() : tensor<2x4x130x96xbf16>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi32>) outs(%e) causal align = <bottom_right>
     : tensor<2x4x130x128xbf16>, tensor<2x2x257x128xbf16>, tensor<2x2x257x96xbf16> -> tensor<2x4x130x96xbf16>
  return %o : tensor<2x4x130x96xbf16>
}

func.func @masked(%q: tensor<1x3x77x32xbf16>, %k: tensor<1x3x99x32xbf16>, %v: tensor<1x3x99x32xbf16>,
                  %mask: tensor<77x99xi1>) -> tensor<1x3x77x32xbf16> {
  %e = tensor.empty() : tensor<1x3x77x32xbf16>
  %o = attn.sdpa %q, %k, %v mask(%mask : tensor<77x99xi1>) outs(%e)
     : tensor<1x3x77x32xbf16>, tensor<1x3x99x32xbf16>, tensor<1x3x99x32xbf16> -> tensor<1x3x77x32xbf16>
  return %o : tensor<1x3x77x32xbf16>
}
