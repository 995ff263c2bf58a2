// attn.multihead (nn.MultiheadAttention) in its forms, against the float64
// reference. Projection weights are drawn as nn.Linear initialises them.
// RUN: attn-run %s --check --entry=packed_batch_first_weights | FileCheck %s
// RUN: attn-run %s --check --entry=seq_first_kdim_vdim_f16 | FileCheck %s
// RUN: attn-run %s --check --entry=everything | FileCheck %s
// RUN: attn-run %s --check --entry=unbatched_bf16 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic --input-shapes=3x7x8,3x5x8,3x5x8,24x8,8x8 | FileCheck %s
// --check decomposes attn.multihead with the same builders the lowering
// uses; the same forms against the independent NumPy oracle (attn_check.py,
// written from torch.nn.MultiheadAttention's definition):
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 16 --heads 4 --B 2 --Sq 5 --Skv 7 --batch-first --need-weights | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --dtype f16 --E 16 --heads 2 --Sq 6 --Skv 9 --kdim 12 --vdim 20 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 16 --heads 4 --Sq 5 --Skv 7 --bias --add-bias-kv --add-zero-attn --key-padding-mask bool:2 --attn-mask f32:3 --need-weights --per-head-weights | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --dtype bf16 --E 16 --heads 2 --Sq 6 --Skv 6 --unbatched | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 8 --heads 2 --B 3 --Sq 7 --Skv 5 --dynamic | FileCheck %s
// need_weights' mean over the heads accumulated in row blocks (a loop over
// (batch, row block) with the heads inside, where it has at least 16
// blocks): whole short heads of 16 sequences; one long sequence with both
// masks, causal and a partial last block; dropout (kept at the global
// row); bf16 and f16 with kdim/vdim; shape-generic.
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 16 --heads 4 --B 16 --Sq 5 --Skv 7 --batch-first --need-weights | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 32 --heads 4 --B 1 --Sq 300 --Skv 40 --batch-first --need-weights --causal --key-padding-mask bool:2 --attn-mask f32:3 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 32 --heads 4 --B 2 --Sq 130 --Skv 130 --batch-first --need-weights --dropout 0.2 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --dtype bf16 --E 32 --heads 4 --B 1 --Sq 260 --Skv 260 --need-weights --self-attention | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --dtype f16 --E 32 --heads 4 --B 2 --Sq 140 --Skv 50 --kdim 24 --vdim 40 --need-weights | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 16 --heads 2 --B 3 --Sq 70 --Skv 20 --need-weights --dynamic | FileCheck %s
// Shape-generic rows of keys longer than a vector (attn-vectorize-tiles
// takes rows of no constant bound in masked chunks):
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op multihead --E 16 --heads 2 --B 3 --Sq 70 --Skv 150 --need-weights --dynamic | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --dtype bf16 --B 2 --Hq 2 --Hkv 2 --Sq 33 --Skv 150 --causal --dynamic | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @packed_batch_first_weights(%x: tensor<2x10x32xf32>, %wi: tensor<96x32xf32>, %bi: tensor<96xf32>,
                                      %wo: tensor<32x32xf32>, %bo: tensor<32xf32>)
    -> (tensor<2x10x32xf32>, tensor<2x10x10xf32>) {
  %out, %w = attn.multihead %x, %x, %x
      in_proj(%wi : tensor<96x32xf32>) in_proj_bias(%bi : tensor<96xf32>)
      out_proj(%wo : tensor<32x32xf32>) out_proj_bias(%bo : tensor<32xf32>)
      num_heads = 4 batch_first
    : tensor<2x10x32xf32>, tensor<2x10x32xf32>, tensor<2x10x32xf32> -> tensor<2x10x32xf32>, tensor<2x10x10xf32>
  return %out, %w : tensor<2x10x32xf32>, tensor<2x10x10xf32>
}

func.func @seq_first_kdim_vdim_f16(%q: tensor<5x3x64xf16>, %k: tensor<7x3x32xf16>, %v: tensor<7x3x48xf16>,
                                   %wq: tensor<64x64xf16>, %wk: tensor<64x32xf16>, %wv: tensor<64x48xf16>,
                                   %wo: tensor<64x64xf16>) -> tensor<5x3x64xf16> {
  %out = attn.multihead %q, %k, %v q_proj(%wq : tensor<64x64xf16>) k_proj(%wk : tensor<64x32xf16>)
      v_proj(%wv : tensor<64x48xf16>) out_proj(%wo : tensor<64x64xf16>) num_heads = 4
    : tensor<5x3x64xf16>, tensor<7x3x32xf16>, tensor<7x3x48xf16> -> tensor<5x3x64xf16>
  return %out : tensor<5x3x64xf16>
}

// bias_kv, add_zero_attn, a boolean key padding mask, a per-head float
// attention mask, causal, per-head weights and dropout together.
func.func @everything(%q: tensor<2x5x16xf32>, %kv: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %bi: tensor<48xf32>,
                      %bk: tensor<1x1x16xf32>, %bv: tensor<1x1x16xf32>, %wo: tensor<16x16xf32>, %bo: tensor<16xf32>,
                      %kpm: tensor<2x6xi1>, %am: tensor<8x5x6xf32>) -> (tensor<2x5x16xf32>, tensor<2x4x5x8xf32>) {
  %out, %w = attn.multihead %q, %kv, %kv in_proj(%wi : tensor<48x16xf32>) in_proj_bias(%bi : tensor<48xf32>)
      bias_kv(%bk, %bv : tensor<1x1x16xf32>, tensor<1x1x16xf32>)
      out_proj(%wo : tensor<16x16xf32>) out_proj_bias(%bo : tensor<16xf32>)
      key_padding_mask(%kpm : tensor<2x6xi1>) attn_mask(%am : tensor<8x5x6xf32>)
      num_heads = 4 batch_first add_zero_attn causal per_head_weights dropout = 0.25 seed = 9
    : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>, tensor<2x4x5x8xf32>
  return %out, %w : tensor<2x5x16xf32>, tensor<2x4x5x8xf32>
}

func.func @unbatched_bf16(%q: tensor<5x8xbf16>, %k: tensor<7x8xbf16>, %v: tensor<7x8xbf16>, %wi: tensor<24x8xbf16>,
                          %wo: tensor<8x8xbf16>, %am: tensor<5x7xi1>) -> (tensor<5x8xbf16>, tensor<5x7xbf16>) {
  %out, %w = attn.multihead %q, %k, %v in_proj(%wi : tensor<24x8xbf16>) out_proj(%wo : tensor<8x8xbf16>)
      attn_mask(%am : tensor<5x7xi1>) num_heads = 2
    : tensor<5x8xbf16>, tensor<7x8xbf16>, tensor<7x8xbf16> -> tensor<5x8xbf16>, tensor<5x7xbf16>
  return %out, %w : tensor<5x8xbf16>, tensor<5x7xbf16>
}

func.func @dynamic(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %wi: tensor<24x8xf32>,
                   %wo: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %out = attn.multihead %q, %k, %v in_proj(%wi : tensor<24x8xf32>) out_proj(%wo : tensor<8x8xf32>)
      num_heads = 2 batch_first
    : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %out : tensor<?x?x8xf32>
}
