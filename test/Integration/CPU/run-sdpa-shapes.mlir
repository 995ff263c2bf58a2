// attn.sdpa over the shape and type forms: GQA, MQA, cross-attention with
// Dv != D, an explicit scale, single-token decode, f16 and bf16, and fully
// dynamic shapes, each against the float64 reference.
// RUN: attn-run %s --check --entry=gqa | FileCheck %s
// RUN: attn-run %s --check --entry=mqa_causal | FileCheck %s
// RUN: attn-run %s --check --entry=cross_dv | FileCheck %s
// RUN: attn-run %s --check --entry=scale | FileCheck %s
// RUN: attn-run %s --check --entry=decode | FileCheck %s
// RUN: attn-run %s --check --entry=f16_gqa_causal | FileCheck %s
// RUN: attn-run %s --check --entry=bf16 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=2x4x9x8,2x2x13x8,2x2x13x4 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=1x3x1x8,1x3x5x8,1x3x5x16 | FileCheck %s
// Register blocks of widths that are not powers of two, split into ones
// that are (100 keys: 64 + 32 + 4; Dv 40: 32 + 8), K^T packed for two
// query tiles and for one of more than 64 rows (100), f32 and bf16 pairs
// (bf16-dot=true: vdpbf16ps where the host has AVX512-BF16).
// RUN: attn-run %s --check --entry=ragged_keys | FileCheck %s
// RUN: attn-run %s --check --entry=one_tile_packed | FileCheck %s
// RUN: attn-run %s --check --entry=ragged_keys_bf16 --cpu-pipeline=bf16-dot=true | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @ragged_keys(%q: tensor<1x2x200x40xf32>, %k: tensor<1x2x100x40xf32>, %v: tensor<1x2x100x40xf32>)
    -> tensor<1x2x200x40xf32> {
  %e = tensor.empty() : tensor<1x2x200x40xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x200x40xf32>, tensor<1x2x100x40xf32>, tensor<1x2x100x40xf32> -> tensor<1x2x200x40xf32>
  return %o : tensor<1x2x200x40xf32>
}

func.func @one_tile_packed(%q: tensor<1x3x100x24xf32>, %k: tensor<1x3x77x24xf32>, %v: tensor<1x3x77x24xf32>)
    -> tensor<1x3x100x24xf32> {
  %e = tensor.empty() : tensor<1x3x100x24xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x3x100x24xf32>, tensor<1x3x77x24xf32>, tensor<1x3x77x24xf32> -> tensor<1x3x100x24xf32>
  return %o : tensor<1x3x100x24xf32>
}

func.func @ragged_keys_bf16(%q: tensor<1x2x200x40xbf16>, %k: tensor<1x2x100x40xbf16>, %v: tensor<1x2x100x40xbf16>)
    -> tensor<1x2x200x40xbf16> {
  %e = tensor.empty() : tensor<1x2x200x40xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x200x40xbf16>, tensor<1x2x100x40xbf16>, tensor<1x2x100x40xbf16> -> tensor<1x2x200x40xbf16>
  return %o : tensor<1x2x200x40xbf16>
}

func.func @gqa(%q: tensor<2x8x6x16xf32>, %k: tensor<2x2x6x16xf32>, %v: tensor<2x2x6x16xf32>)
    -> tensor<2x8x6x16xf32> {
  %e = tensor.empty() : tensor<2x8x6x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x8x6x16xf32>, tensor<2x2x6x16xf32>, tensor<2x2x6x16xf32> -> tensor<2x8x6x16xf32>
  return %o : tensor<2x8x6x16xf32>
}

func.func @mqa_causal(%q: tensor<1x4x9x8xf32>, %k: tensor<1x1x9x8xf32>, %v: tensor<1x1x9x8xf32>)
    -> tensor<1x4x9x8xf32> {
  %e = tensor.empty() : tensor<1x4x9x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x9x8xf32>, tensor<1x1x9x8xf32>, tensor<1x1x9x8xf32> -> tensor<1x4x9x8xf32>
  return %o : tensor<1x4x9x8xf32>
}

func.func @cross_dv(%q: tensor<2x2x3x16xf32>, %k: tensor<2x2x21x16xf32>, %v: tensor<2x2x21x5xf32>)
    -> tensor<2x2x3x5xf32> {
  %e = tensor.empty() : tensor<2x2x3x5xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x2x3x16xf32>, tensor<2x2x21x16xf32>, tensor<2x2x21x5xf32> -> tensor<2x2x3x5xf32>
  return %o : tensor<2x2x3x5xf32>
}

func.func @scale(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>)
    -> tensor<1x2x5x8xf32> {
  %e = tensor.empty() : tensor<1x2x5x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) scale = 1.75
     : tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}

func.func @decode(%q: tensor<4x8x1x32xf32>, %k: tensor<4x8x40x32xf32>, %v: tensor<4x8x40x32xf32>)
    -> tensor<4x8x1x32xf32> {
  %e = tensor.empty() : tensor<4x8x1x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<4x8x1x32xf32>, tensor<4x8x40x32xf32>, tensor<4x8x40x32xf32> -> tensor<4x8x1x32xf32>
  return %o : tensor<4x8x1x32xf32>
}

func.func @f16_gqa_causal(%q: tensor<1x4x10x32xf16>, %k: tensor<1x2x10x32xf16>, %v: tensor<1x2x10x32xf16>)
    -> tensor<1x4x10x32xf16> {
  %e = tensor.empty() : tensor<1x4x10x32xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x10x32xf16>, tensor<1x2x10x32xf16>, tensor<1x2x10x32xf16> -> tensor<1x4x10x32xf16>
  return %o : tensor<1x4x10x32xf16>
}

func.func @bf16(%q: tensor<2x2x7x32xbf16>, %k: tensor<2x2x11x32xbf16>, %v: tensor<2x2x11x32xbf16>)
    -> tensor<2x2x7x32xbf16> {
  %e = tensor.empty() : tensor<2x2x7x32xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x2x7x32xbf16>, tensor<2x2x11x32xbf16>, tensor<2x2x11x32xbf16> -> tensor<2x2x7x32xbf16>
  return %o : tensor<2x2x7x32xbf16>
}

// Batch, heads (grouped), lengths and head dimensions all dynamic.
func.func @dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>)
    -> tensor<?x?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x?xf32>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x?xf32>
  %s = tensor.dim %q, %c2 : tensor<?x?x?x?xf32>
  %d = tensor.dim %v, %c3 : tensor<?x?x?x?xf32>
  %e = tensor.empty(%b, %h, %s, %d) : tensor<?x?x?x?xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}
