// Every mask form of attn.sdpa, compiled by the CPU pipeline and compared by
// attn-run --check with the float64 reference on fresh random inputs (masks
// keep 80% of keys, kv_lens are drawn in [1, Skv]); outputs start as NaN.
// RUN: attn-run %s --check --entry=bool_rank1 | FileCheck %s
// RUN: attn-run %s --check --entry=bool_rank2 | FileCheck %s
// RUN: attn-run %s --check --entry=bool_rank3 | FileCheck %s
// RUN: attn-run %s --check --entry=bool_rank4_broadcast | FileCheck %s
// RUN: attn-run %s --check --entry=float_mask_f16 | FileCheck %s
// RUN: attn-run %s --check --entry=bf16_mask_f32 | FileCheck %s
// RUN: attn-run %s --check --entry=kv_lens_i32 | FileCheck %s
// RUN: attn-run %s --check --entry=kv_lens_i64_causal_bottom_right | FileCheck %s
// RUN: attn-run %s --check --entry=causal_top_left | FileCheck %s
// RUN: attn-run %s --check --entry=causal_bottom_right | FileCheck %s
// RUN: attn-run %s --check --entry=window | FileCheck %s
// RUN: attn-run %s --check --entry=window_causal_bottom_right_mask | FileCheck %s
// RUN: attn-run %s --check --entry=fully_masked_rows | FileCheck %s
// RUN: attn-run %s --check --entry=causal_bottom_right_more_queries | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @bool_rank1(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x9x8xf32>, %v: tensor<2x2x9x8xf32>,
                      %m: tensor<9xi1>) -> tensor<2x2x5x8xf32> {
  %e = tensor.empty() : tensor<2x2x5x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<9xi1>) outs(%e)
     : tensor<2x2x5x8xf32>, tensor<2x2x9x8xf32>, tensor<2x2x9x8xf32> -> tensor<2x2x5x8xf32>
  return %o : tensor<2x2x5x8xf32>
}

func.func @bool_rank2(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x9x8xf32>, %v: tensor<2x2x9x8xf32>,
                      %m: tensor<5x9xi1>) -> tensor<2x2x5x8xf32> {
  %e = tensor.empty() : tensor<2x2x5x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<5x9xi1>) outs(%e)
     : tensor<2x2x5x8xf32>, tensor<2x2x9x8xf32>, tensor<2x2x9x8xf32> -> tensor<2x2x5x8xf32>
  return %o : tensor<2x2x5x8xf32>
}

func.func @bool_rank3(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x9x8xf32>, %v: tensor<2x2x9x8xf32>,
                      %m: tensor<2x5x9xi1>) -> tensor<2x2x5x8xf32> {
  %e = tensor.empty() : tensor<2x2x5x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<2x5x9xi1>) outs(%e)
     : tensor<2x2x5x8xf32>, tensor<2x2x9x8xf32>, tensor<2x2x9x8xf32> -> tensor<2x2x5x8xf32>
  return %o : tensor<2x2x5x8xf32>
}

func.func @bool_rank4_broadcast(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x9x8xf32>, %v: tensor<2x2x9x8xf32>,
                                %m: tensor<2x1x1x9xi1>) -> tensor<2x2x5x8xf32> {
  %e = tensor.empty() : tensor<2x2x5x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<2x1x1x9xi1>) outs(%e)
     : tensor<2x2x5x8xf32>, tensor<2x2x9x8xf32>, tensor<2x2x9x8xf32> -> tensor<2x2x5x8xf32>
  return %o : tensor<2x2x5x8xf32>
}

func.func @float_mask_f16(%q: tensor<1x2x6x16xf16>, %k: tensor<1x2x6x16xf16>, %v: tensor<1x2x6x16xf16>,
                          %m: tensor<1x2x6x6xf16>) -> tensor<1x2x6x16xf16> {
  %e = tensor.empty() : tensor<1x2x6x16xf16>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<1x2x6x6xf16>) outs(%e)
     : tensor<1x2x6x16xf16>, tensor<1x2x6x16xf16>, tensor<1x2x6x16xf16> -> tensor<1x2x6x16xf16>
  return %o : tensor<1x2x6x16xf16>
}

func.func @bf16_mask_f32(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x7x16xf32>, %v: tensor<1x2x7x16xf32>,
                         %m: tensor<6x7xbf16>) -> tensor<1x2x6x16xf32> {
  %e = tensor.empty() : tensor<1x2x6x16xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<6x7xbf16>) outs(%e)
     : tensor<1x2x6x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

func.func @kv_lens_i32(%q: tensor<3x2x4x8xf32>, %k: tensor<3x2x11x8xf32>, %v: tensor<3x2x11x8xf32>,
                       %l: tensor<3xi32>) -> tensor<3x2x4x8xf32> {
  %e = tensor.empty() : tensor<3x2x4x8xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%l : tensor<3xi32>) outs(%e)
     : tensor<3x2x4x8xf32>, tensor<3x2x11x8xf32>, tensor<3x2x11x8xf32> -> tensor<3x2x4x8xf32>
  return %o : tensor<3x2x4x8xf32>
}

func.func @kv_lens_i64_causal_bottom_right(%q: tensor<3x2x4x8xf32>, %k: tensor<3x2x11x8xf32>,
                                           %v: tensor<3x2x11x8xf32>, %l: tensor<3xi64>) -> tensor<3x2x4x8xf32> {
  %e = tensor.empty() : tensor<3x2x4x8xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%l : tensor<3xi64>) outs(%e) causal align = <bottom_right>
     : tensor<3x2x4x8xf32>, tensor<3x2x11x8xf32>, tensor<3x2x11x8xf32> -> tensor<3x2x4x8xf32>
  return %o : tensor<3x2x4x8xf32>
}

func.func @causal_top_left(%q: tensor<1x3x7x8xf32>, %k: tensor<1x3x12x8xf32>, %v: tensor<1x3x12x8xf32>)
    -> tensor<1x3x7x8xf32> {
  %e = tensor.empty() : tensor<1x3x7x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x3x7x8xf32>, tensor<1x3x12x8xf32>, tensor<1x3x12x8xf32> -> tensor<1x3x7x8xf32>
  return %o : tensor<1x3x7x8xf32>
}

func.func @causal_bottom_right(%q: tensor<1x3x7x8xf32>, %k: tensor<1x3x12x8xf32>, %v: tensor<1x3x12x8xf32>)
    -> tensor<1x3x7x8xf32> {
  %e = tensor.empty() : tensor<1x3x7x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<1x3x7x8xf32>, tensor<1x3x12x8xf32>, tensor<1x3x12x8xf32> -> tensor<1x3x7x8xf32>
  return %o : tensor<1x3x7x8xf32>
}

func.func @window(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>)
    -> tensor<1x2x16x8xf32> {
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) window = [3, 2]
     : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

func.func @window_causal_bottom_right_mask(%q: tensor<2x2x6x8xf32>, %k: tensor<2x2x13x8xf32>,
                                           %v: tensor<2x2x13x8xf32>, %m: tensor<2x1x6x13xi1>)
    -> tensor<2x2x6x8xf32> {
  %e = tensor.empty() : tensor<2x2x6x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<2x1x6x13xi1>) outs(%e) causal window = [4, 0]
       align = <bottom_right>
     : tensor<2x2x6x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32> -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// Rows 0 and 1 see no key at all: their output is 0 (docs/Numerics.md).
func.func @fully_masked_rows(%q: tensor<1x2x7x8xf32>, %k: tensor<1x2x9x8xf32>, %v: tensor<1x2x9x8xf32>)
    -> tensor<1x2x7x8xf32> {
  %e = tensor.empty() : tensor<1x2x7x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32> -> tensor<1x2x7x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c2 = arith.constant 2 : index
       %r = arith.cmpi uge, %i, %c2 : index
       attn.yield %r : i1
     }
  return %o : tensor<1x2x7x8xf32>
}

// More queries than keys, bottom-right causal: rows 0-3 have their diagonal
// before key 0 and see nothing (output 0); the tiled lowering skips their
// key loop entirely.
func.func @causal_bottom_right_more_queries(%q: tensor<1x2x9x8xf32>, %k: tensor<1x2x5x8xf32>,
                                            %v: tensor<1x2x5x8xf32>) -> tensor<1x2x9x8xf32> {
  %e = tensor.empty() : tensor<1x2x9x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<1x2x9x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x9x8xf32>
  return %o : tensor<1x2x9x8xf32>
}
