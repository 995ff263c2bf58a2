// The flash kernel on a GPU, in every form it takes (f16/bf16; causal in
// both alignments, window, kv_lens, boolean and additive masks, mask_mod
// reading a tensor, score_mod, dropout, GQA/MQA, Dv != D, D from 32 to
// 256, decode, rows with no visible key, sizes that are not tile
// multiples, dynamic shapes), against the float64 reference on fresh random
// inputs with NaN-poisoned outputs. Without a GPU, the same entries compile
// to cubins (cuda-kernels.test) and run on the CPU (cpu.test).
// REQUIRES: cuda-device
// RUN: attn-run --target=cuda %s --check --entry=causal_gqa_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=plain_bf16_d128 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=causal_bottom_right_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=window_kv_lens_bf16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=bool_mask_f16_d32 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=float_mask_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=documents_causal_bf16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=softcap_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=dropout_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=d256_bf16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=cross_dv128_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=decode_mqa_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=fully_masked_rows_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=d80_f16 | FileCheck %s
// RUN: attn-run --target=cuda %s --check --entry=dynamic_f16 --input-shapes=2x3x77x64,2x3x140x64,2x3x140x64 | FileCheck %s
// CHECK: running on
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @causal_gqa_f16(%q: tensor<2x4x100x64xf16>, %k: tensor<2x2x130x64xf16>, %v: tensor<2x2x130x64xf16>) -> tensor<2x4x100x64xf16> {
  %e = tensor.empty() : tensor<2x4x100x64xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<2x4x100x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16> -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}

func.func @plain_bf16_d128(%q: tensor<1x2x300x128xbf16>, %k: tensor<1x2x300x128xbf16>, %v: tensor<1x2x300x128xbf16>) -> tensor<1x2x300x128xbf16> {
  %e = tensor.empty() : tensor<1x2x300x128xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16> -> tensor<1x2x300x128xbf16>
  return %o : tensor<1x2x300x128xbf16>
}

func.func @causal_bottom_right_f16(%q: tensor<1x2x37x64xf16>, %k: tensor<1x2x200x64xf16>, %v: tensor<1x2x200x64xf16>) -> tensor<1x2x37x64xf16> {
  %e = tensor.empty() : tensor<1x2x37x64xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<1x2x37x64xf16>, tensor<1x2x200x64xf16>, tensor<1x2x200x64xf16> -> tensor<1x2x37x64xf16>
  return %o : tensor<1x2x37x64xf16>
}

func.func @window_kv_lens_bf16(%q: tensor<3x2x150x64xbf16>, %k: tensor<3x2x150x64xbf16>, %v: tensor<3x2x150x64xbf16>, %l: tensor<3xi32>) -> tensor<3x2x150x64xbf16> {
  %e = tensor.empty() : tensor<3x2x150x64xbf16>
  %o = attn.sdpa %q, %k, %v kv_lens(%l : tensor<3xi32>) outs(%e) window = [32, 8]
     : tensor<3x2x150x64xbf16>, tensor<3x2x150x64xbf16>, tensor<3x2x150x64xbf16> -> tensor<3x2x150x64xbf16>
  return %o : tensor<3x2x150x64xbf16>
}

func.func @bool_mask_f16_d32(%q: tensor<2x2x70x32xf16>, %k: tensor<2x2x90x32xf16>, %v: tensor<2x2x90x32xf16>, %m: tensor<2x1x70x90xi1>) -> tensor<2x2x70x32xf16> {
  %e = tensor.empty() : tensor<2x2x70x32xf16>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<2x1x70x90xi1>) outs(%e)
     : tensor<2x2x70x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x90x32xf16> -> tensor<2x2x70x32xf16>
  return %o : tensor<2x2x70x32xf16>
}

func.func @float_mask_f16(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x96x64xf16>, %v: tensor<1x2x96x64xf16>, %m: tensor<1x1x64x96xf16>) -> tensor<1x2x64x64xf16> {
  %e = tensor.empty() : tensor<1x2x64x64xf16>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<1x1x64x96xf16>) outs(%e)
     : tensor<1x2x64x64xf16>, tensor<1x2x96x64xf16>, tensor<1x2x96x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

func.func @documents_causal_bf16(%q: tensor<1x2x300x64xbf16>, %k: tensor<1x2x300x64xbf16>, %v: tensor<1x2x300x64xbf16>) -> tensor<1x2x300x64xbf16> {
  %e = tensor.empty() : tensor<1x2x300x64xbf16>
  %docs = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]> : tensor<300xi32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16> -> tensor<1x2x300x64xbf16>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %di = tensor.extract %docs[%i] : tensor<300xi32>
       %dj = tensor.extract %docs[%j] : tensor<300xi32>
       %same = arith.cmpi eq, %di, %dj : i32
       attn.yield %same : i1
     }
  return %o : tensor<1x2x300x64xbf16>
}

func.func @softcap_f16(%q: tensor<1x2x80x64xf16>, %k: tensor<1x2x80x64xf16>, %v: tensor<1x2x80x64xf16>) -> tensor<1x2x80x64xf16> {
  %e = tensor.empty() : tensor<1x2x80x64xf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16> -> tensor<1x2x80x64xf16>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %cap = arith.constant 2.0 : f32
       %x = arith.divf %s, %cap : f32
       %t = math.tanh %x : f32
       %r = arith.mulf %t, %cap : f32
       attn.yield %r : f32
     }
  return %o : tensor<1x2x80x64xf16>
}

func.func @dropout_f16(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %e = tensor.empty() : tensor<1x2x64x64xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) dropout = 0.1 seed = 7
     : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

func.func @d256_bf16(%q: tensor<1x1x70x256xbf16>, %k: tensor<1x1x70x256xbf16>, %v: tensor<1x1x70x256xbf16>) -> tensor<1x1x70x256xbf16> {
  %e = tensor.empty() : tensor<1x1x70x256xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x1x70x256xbf16>, tensor<1x1x70x256xbf16>, tensor<1x1x70x256xbf16> -> tensor<1x1x70x256xbf16>
  return %o : tensor<1x1x70x256xbf16>
}

func.func @cross_dv128_f16(%q: tensor<2x2x50x64xf16>, %k: tensor<2x2x77x64xf16>, %v: tensor<2x2x77x128xf16>) -> tensor<2x2x50x128xf16> {
  %e = tensor.empty() : tensor<2x2x50x128xf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x2x50x64xf16>, tensor<2x2x77x64xf16>, tensor<2x2x77x128xf16> -> tensor<2x2x50x128xf16>
  return %o : tensor<2x2x50x128xf16>
}

func.func @decode_mqa_f16(%q: tensor<2x8x1x128xf16>, %k: tensor<2x1x1000x128xf16>, %v: tensor<2x1x1000x128xf16>) -> tensor<2x8x1x128xf16> {
  %e = tensor.empty() : tensor<2x8x1x128xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<2x8x1x128xf16>, tensor<2x1x1000x128xf16>, tensor<2x1x1000x128xf16> -> tensor<2x8x1x128xf16>
  return %o : tensor<2x8x1x128xf16>
}

func.func @fully_masked_rows_f16(%q: tensor<1x1x40x32xf16>, %k: tensor<1x1x40x32xf16>, %v: tensor<1x1x40x32xf16>) -> tensor<1x1x40x32xf16> {
  %e = tensor.empty() : tensor<1x1x40x32xf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16>, tensor<1x1x40x32xf16> -> tensor<1x1x40x32xf16>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c3 = arith.constant 3 : index
       %r = arith.remui %i, %c3 : index
       %c0 = arith.constant 0 : index
       %keep = arith.cmpi ne, %r, %c0 : index
       attn.yield %keep : i1
     }
  return %o : tensor<1x1x40x32xf16>
}

func.func @d80_f16(%q: tensor<1x2x90x80xf16>, %k: tensor<1x2x90x80xf16>, %v: tensor<1x2x90x80xf16>) -> tensor<1x2x90x80xf16> {
  %e = tensor.empty() : tensor<1x2x90x80xf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x90x80xf16>, tensor<1x2x90x80xf16>, tensor<1x2x90x80xf16> -> tensor<1x2x90x80xf16>
  return %o : tensor<1x2x90x80xf16>
}

func.func @dynamic_f16(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x64xf16>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x64xf16>
  %s = tensor.dim %q, %c2 : tensor<?x?x?x64xf16>
  %e = tensor.empty(%b, %h, %s) : tensor<?x?x?x64xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
