// The tensor-core backward (attn.sdpa_grad: the dQ and dK/dV kernels) on a
// GPU: each entry computes the forward with its lse and the backward in one
// function (O, dQ, dK, dV), in the forms the kernels take (f16/bf16; causal
// in both alignments, window with kv_lens, boolean and additive masks,
// score_mod, dropout (the seed an attribute or an operand), GQA/MQA,
// Dv != D, D from 32 to 128, rows with no visible key, sizes that are not
// tile multiples), against the float64
// reference on fresh random inputs with NaN-poisoned outputs. Without a GPU
// the same entries compile to cubins with ptxas (cuda-kernels.test) and run
// on the CPU pipeline (cpu.test).
// REQUIRES: cuda-device
// RUN: attn-run --target=cuda %s --check --entry=causal_gqa_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=plain_bf16_d128 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=causal_bottom_right_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=window_kv_lens_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=bool_mask_f16_d32 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=float_mask_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=softcap_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=dropout_causal_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=runtime_seed_bf16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=cross_dv128_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=empty_rows_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=causal_mqa_bf16_d128 | FileCheck %s
// CHECK: running on
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @causal_gqa_f16(%q: tensor<2x4x100x64xf16>, %k: tensor<2x2x130x64xf16>, %v: tensor<2x2x130x64xf16>, %do: tensor<2x4x100x64xf16>) -> (tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16>) {
  %eo = tensor.empty() : tensor<2x4x100x64xf16>
  %el = tensor.empty() : tensor<2x4x100xf32>
  %eq = tensor.empty() : tensor<2x4x100x64xf16>
  %ek = tensor.empty() : tensor<2x2x130x64xf16>
  %ev = tensor.empty() : tensor<2x2x130x64xf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<2x4x100xf32>) causal
     : tensor<2x4x100x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16> -> tensor<2x4x100x64xf16>, tensor<2x4x100xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev) causal
     : tensor<2x4x100x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16>, tensor<2x4x100x64xf16>, tensor<2x4x100xf32>
  return %o, %dq, %dk, %dv : tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16>
}

func.func @plain_bf16_d128(%q: tensor<1x2x150x128xbf16>, %k: tensor<1x2x150x128xbf16>, %v: tensor<1x2x150x128xbf16>, %do: tensor<1x2x150x128xbf16>) -> (tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>) {
  %eo = tensor.empty() : tensor<1x2x150x128xbf16>
  %el = tensor.empty() : tensor<1x2x150xf32>
  %eq = tensor.empty() : tensor<1x2x150x128xbf16>
  %ek = tensor.empty() : tensor<1x2x150x128xbf16>
  %ev = tensor.empty() : tensor<1x2x150x128xbf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<1x2x150xf32>)
     : tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16> -> tensor<1x2x150x128xbf16>, tensor<1x2x150xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev)
     : tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>, tensor<1x2x150x128xbf16>
}

func.func @causal_bottom_right_f16(%q: tensor<1x2x37x64xf16>, %k: tensor<1x2x200x64xf16>, %v: tensor<1x2x200x64xf16>, %do: tensor<1x2x37x64xf16>) -> (tensor<1x2x37x64xf16>, tensor<1x2x37x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16>) {
  %eo = tensor.empty() : tensor<1x2x37x64xf16>
  %el = tensor.empty() : tensor<1x2x37xf32>
  %eq = tensor.empty() : tensor<1x2x37x64xf16>
  %ek = tensor.empty() : tensor<1x2x200x64xf16>
  %ev = tensor.empty() : tensor<1x2x200x64xf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<1x2x37xf32>) causal align = <bottom_right>
     : tensor<1x2x37x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16> -> tensor<1x2x37x64xf16>, tensor<1x2x37xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev) causal align = <bottom_right>
     : tensor<1x2x37x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x37x64xf16>, tensor<1x2x37xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x37x64xf16>, tensor<1x2x37x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16>
}

func.func @window_kv_lens_f16(%q: tensor<3x2x150x64xf16>, %k: tensor<3x2x150x64xf16>, %v: tensor<3x2x150x64xf16>, %do: tensor<3x2x150x64xf16>, %n: tensor<3xi32>) -> (tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>) {
  %eo = tensor.empty() : tensor<3x2x150x64xf16>
  %el = tensor.empty() : tensor<3x2x150xf32>
  %eq = tensor.empty() : tensor<3x2x150x64xf16>
  %ek = tensor.empty() : tensor<3x2x150x64xf16>
  %ev = tensor.empty() : tensor<3x2x150x64xf16>
  %o, %lse = attn.sdpa %q, %k, %v kv_lens(%n : tensor<3xi32>) outs(%eo) lse(%el : tensor<3x2x150xf32>) window = [40, 8]
     : tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16> -> tensor<3x2x150x64xf16>, tensor<3x2x150xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse kv_lens(%n : tensor<3xi32>) outs(%eq, %ek, %ev) window = [40, 8]
     : tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150xf32>
  return %o, %dq, %dk, %dv : tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>, tensor<3x2x150x64xf16>
}

func.func @bool_mask_f16_d32(%q: tensor<2x2x70x32xf16>, %k: tensor<2x2x90x32xf16>, %v: tensor<2x2x90x32xf16>, %do: tensor<2x2x70x32xf16>, %m: tensor<2x1x70x90xi1>) -> (tensor<2x2x70x32xf16>, tensor<2x2x70x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x90x32xf16>) {
  %eo = tensor.empty() : tensor<2x2x70x32xf16>
  %el = tensor.empty() : tensor<2x2x70xf32>
  %eq = tensor.empty() : tensor<2x2x70x32xf16>
  %ek = tensor.empty() : tensor<2x2x90x32xf16>
  %ev = tensor.empty() : tensor<2x2x90x32xf16>
  %o, %lse = attn.sdpa %q, %k, %v mask(%m : tensor<2x1x70x90xi1>) outs(%eo) lse(%el : tensor<2x2x70xf32>)
     : tensor<2x2x70x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x90x32xf16> -> tensor<2x2x70x32xf16>, tensor<2x2x70xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<2x1x70x90xi1>) outs(%eq, %ek, %ev)
     : tensor<2x2x70x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x70x32xf16>, tensor<2x2x70xf32>
  return %o, %dq, %dk, %dv : tensor<2x2x70x32xf16>, tensor<2x2x70x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x90x32xf16>
}

func.func @float_mask_f16(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x96x64xf16>, %v: tensor<1x2x96x64xf16>, %do: tensor<1x2x64x64xf16>, %m: tensor<1x1x64x96xf16>) -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16>) {
  %eo = tensor.empty() : tensor<1x2x64x64xf16>
  %el = tensor.empty() : tensor<1x2x64xf32>
  %eq = tensor.empty() : tensor<1x2x64x64xf16>
  %ek = tensor.empty() : tensor<1x2x96x64xf16>
  %ev = tensor.empty() : tensor<1x2x96x64xf16>
  %o, %lse = attn.sdpa %q, %k, %v mask(%m : tensor<1x1x64x96xf16>) outs(%eo) lse(%el : tensor<1x2x64xf32>)
     : tensor<1x2x64x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16> -> tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<1x1x64x96xf16>) outs(%eq, %ek, %ev)
     : tensor<1x2x64x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16>
}

func.func @softcap_f16(%q: tensor<1x2x80x64xf16>, %k: tensor<1x2x80x64xf16>, %v: tensor<1x2x80x64xf16>, %do: tensor<1x2x80x64xf16>) -> (tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>) {
  %eo = tensor.empty() : tensor<1x2x80x64xf16>
  %el = tensor.empty() : tensor<1x2x80xf32>
  %eq = tensor.empty() : tensor<1x2x80x64xf16>
  %ek = tensor.empty() : tensor<1x2x80x64xf16>
  %ev = tensor.empty() : tensor<1x2x80x64xf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<1x2x80xf32>)
     : tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16> -> tensor<1x2x80x64xf16>, tensor<1x2x80xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %cap = arith.constant 2.0 : f32
       %x = arith.divf %s, %cap : f32
       %t = math.tanh %x : f32
       %r = arith.mulf %t, %cap : f32
       attn.yield %r : f32
     }
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev)
     : tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %cap = arith.constant 2.0 : f32
       %x = arith.divf %s, %cap : f32
       %t = math.tanh %x : f32
       %r = arith.mulf %t, %cap : f32
       attn.yield %r : f32
     }
  return %o, %dq, %dk, %dv : tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>
}

func.func @dropout_causal_f16(%q: tensor<1x2x64x64xf16>, %k: tensor<1x1x80x64xf16>, %v: tensor<1x1x80x64xf16>, %do: tensor<1x2x64x64xf16>) -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x1x80x64xf16>, tensor<1x1x80x64xf16>) {
  %eo = tensor.empty() : tensor<1x2x64x64xf16>
  %el = tensor.empty() : tensor<1x2x64xf32>
  %eq = tensor.empty() : tensor<1x2x64x64xf16>
  %ek = tensor.empty() : tensor<1x1x80x64xf16>
  %ev = tensor.empty() : tensor<1x1x80x64xf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<1x2x64xf32>) causal align = <bottom_right> dropout = 0.1 seed = 7
     : tensor<1x2x64x64xf16>, tensor<1x1x80x64xf16>, tensor<1x1x80x64xf16> -> tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev) causal align = <bottom_right> dropout = 0.1 seed = 7
     : tensor<1x2x64x64xf16>, tensor<1x1x80x64xf16>, tensor<1x1x80x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x1x80x64xf16>, tensor<1x1x80x64xf16>
}

func.func @runtime_seed_bf16(%q: tensor<2x2x70x64xbf16>, %k: tensor<2x2x70x64xbf16>, %v: tensor<2x2x70x64xbf16>, %do: tensor<2x2x70x64xbf16>, %s: tensor<i64>) -> (tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>) {
  %eo = tensor.empty() : tensor<2x2x70x64xbf16>
  %el = tensor.empty() : tensor<2x2x70xf32>
  %eq = tensor.empty() : tensor<2x2x70x64xbf16>
  %ek = tensor.empty() : tensor<2x2x70x64xbf16>
  %ev = tensor.empty() : tensor<2x2x70x64xbf16>
  %o, %lse = attn.sdpa %q, %k, %v dropout_seed(%s : tensor<i64>) outs(%eo) lse(%el : tensor<2x2x70xf32>) dropout = 0.2
     : tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16> -> tensor<2x2x70x64xbf16>, tensor<2x2x70xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse dropout_seed(%s : tensor<i64>) outs(%eq, %ek, %ev) dropout = 0.2
     : tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70xf32>
  return %o, %dq, %dk, %dv : tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>, tensor<2x2x70x64xbf16>
}

func.func @cross_dv128_f16(%q: tensor<2x2x50x64xf16>, %k: tensor<2x2x77x64xf16>, %v: tensor<2x2x77x128xf16>, %do: tensor<2x2x50x128xf16>) -> (tensor<2x2x50x128xf16>, tensor<2x2x50x64xf16>, tensor<2x2x77x64xf16>, tensor<2x2x77x128xf16>) {
  %eo = tensor.empty() : tensor<2x2x50x128xf16>
  %el = tensor.empty() : tensor<2x2x50xf32>
  %eq = tensor.empty() : tensor<2x2x50x64xf16>
  %ek = tensor.empty() : tensor<2x2x77x64xf16>
  %ev = tensor.empty() : tensor<2x2x77x128xf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<2x2x50xf32>)
     : tensor<2x2x50x64xf16>, tensor<2x2x77x64xf16>, tensor<2x2x77x128xf16> -> tensor<2x2x50x128xf16>, tensor<2x2x50xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev)
     : tensor<2x2x50x64xf16>, tensor<2x2x77x64xf16>, tensor<2x2x77x128xf16>, tensor<2x2x50x128xf16>, tensor<2x2x50xf32>
  return %o, %dq, %dk, %dv : tensor<2x2x50x128xf16>, tensor<2x2x50x64xf16>, tensor<2x2x77x64xf16>, tensor<2x2x77x128xf16>
}

func.func @empty_rows_f16(%q: tensor<1x1x40x32xf16>, %k: tensor<1x1x40x32xf16>, %v: tensor<1x1x40x32xf16>, %do: tensor<1x1x40x32xf16>) -> (tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>) {
  %eo = tensor.empty() : tensor<1x1x40x32xf16>
  %el = tensor.empty() : tensor<1x1x40xf32>
  %eq = tensor.empty() : tensor<1x1x40x32xf16>
  %ek = tensor.empty() : tensor<1x1x40x32xf16>
  %ev = tensor.empty() : tensor<1x1x40x32xf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<1x1x40xf32>)
     : tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16> -> tensor<1x1x40x32xf16>, tensor<1x1x40xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c3 = arith.constant 3 : index
       %r = arith.remui %i, %c3 : index
       %c0 = arith.constant 0 : index
       %keep = arith.cmpi ne, %r, %c0 : index
       attn.yield %keep : i1
     }
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev)
     : tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c3 = arith.constant 3 : index
       %r = arith.remui %i, %c3 : index
       %c0 = arith.constant 0 : index
       %keep = arith.cmpi ne, %r, %c0 : index
       attn.yield %keep : i1
     }
  return %o, %dq, %dk, %dv : tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>
}

func.func @causal_mqa_bf16_d128(%q: tensor<1x4x90x128xbf16>, %k: tensor<1x1x120x128xbf16>, %v: tensor<1x1x120x128xbf16>, %do: tensor<1x4x90x128xbf16>) -> (tensor<1x4x90x128xbf16>, tensor<1x4x90x128xbf16>, tensor<1x1x120x128xbf16>, tensor<1x1x120x128xbf16>) {
  %eo = tensor.empty() : tensor<1x4x90x128xbf16>
  %el = tensor.empty() : tensor<1x4x90xf32>
  %eq = tensor.empty() : tensor<1x4x90x128xbf16>
  %ek = tensor.empty() : tensor<1x1x120x128xbf16>
  %ev = tensor.empty() : tensor<1x1x120x128xbf16>
  %o, %lse = attn.sdpa %q, %k, %v outs(%eo) lse(%el : tensor<1x4x90xf32>) causal align = <bottom_right>
     : tensor<1x4x90x128xbf16>, tensor<1x1x120x128xbf16>, tensor<1x1x120x128xbf16> -> tensor<1x4x90x128xbf16>, tensor<1x4x90xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev) causal align = <bottom_right>
     : tensor<1x4x90x128xbf16>, tensor<1x1x120x128xbf16>, tensor<1x1x120x128xbf16>, tensor<1x4x90x128xbf16>, tensor<1x4x90xf32>
  return %o, %dq, %dk, %dv : tensor<1x4x90x128xbf16>, tensor<1x4x90x128xbf16>, tensor<1x1x120x128xbf16>, tensor<1x1x120x128xbf16>
}
