// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of every attn.multihead form.

// CHECK-LABEL: func @packed_batch_first_weights
// CHECK: %{{.*}}, %{{.*}} = attn.multihead %{{.*}}, %{{.*}}, %{{.*}} in_proj(%{{.*}} : tensor<1536x512xf32>) in_proj_bias(%{{.*}} : tensor<1536xf32>) out_proj(%{{.*}} : tensor<512x512xf32>) out_proj_bias(%{{.*}} : tensor<512xf32>) num_heads = 8 batch_first : tensor<2x10x512xf32>, tensor<2x10x512xf32>, tensor<2x10x512xf32> -> tensor<2x10x512xf32>, tensor<2x10x10xf32>
func.func @packed_batch_first_weights(%x: tensor<2x10x512xf32>, %wi: tensor<1536x512xf32>, %bi: tensor<1536xf32>,
                                      %wo: tensor<512x512xf32>, %bo: tensor<512xf32>) -> (tensor<2x10x512xf32>, tensor<2x10x10xf32>) {
  %out, %w = attn.multihead %x, %x, %x
      in_proj(%wi : tensor<1536x512xf32>) in_proj_bias(%bi : tensor<1536xf32>)
      out_proj(%wo : tensor<512x512xf32>) out_proj_bias(%bo : tensor<512xf32>)
      num_heads = 8 batch_first
    : tensor<2x10x512xf32>, tensor<2x10x512xf32>, tensor<2x10x512xf32> -> tensor<2x10x512xf32>, tensor<2x10x10xf32>
  return %out, %w : tensor<2x10x512xf32>, tensor<2x10x10xf32>
}

// CHECK-LABEL: func @separate_kdim_vdim_seq_first
// CHECK: attn.multihead {{.*}} q_proj(%{{.*}} : tensor<64x64xf16>) k_proj(%{{.*}} : tensor<64x32xf16>) v_proj(%{{.*}} : tensor<64x48xf16>) out_proj(%{{.*}} : tensor<64x64xf16>) num_heads = 4 : tensor<5x3x64xf16>, tensor<7x3x32xf16>, tensor<7x3x48xf16> -> tensor<5x3x64xf16>
func.func @separate_kdim_vdim_seq_first(%q: tensor<5x3x64xf16>, %k: tensor<7x3x32xf16>, %v: tensor<7x3x48xf16>,
                                        %wq: tensor<64x64xf16>, %wk: tensor<64x32xf16>, %wv: tensor<64x48xf16>,
                                        %wo: tensor<64x64xf16>) -> tensor<5x3x64xf16> {
  %out = attn.multihead %q, %k, %v q_proj(%wq : tensor<64x64xf16>) k_proj(%wk : tensor<64x32xf16>)
      v_proj(%wv : tensor<64x48xf16>) out_proj(%wo : tensor<64x64xf16>) num_heads = 4
    : tensor<5x3x64xf16>, tensor<7x3x32xf16>, tensor<7x3x48xf16> -> tensor<5x3x64xf16>
  return %out : tensor<5x3x64xf16>
}

// CHECK-LABEL: func @everything
// CHECK: attn.multihead {{.*}} bias_kv(%{{.*}}, %{{.*}} : tensor<1x1x16xf32>, tensor<1x1x16xf32>)
// CHECK-SAME: key_padding_mask(%{{.*}} : tensor<2x6xi1>) attn_mask(%{{.*}} : tensor<8x5x6xf32>)
// CHECK-SAME: num_heads = 4 batch_first add_zero_attn causal per_head_weights dropout = 2.500000e-01 seed = 9
// CHECK-SAME: -> tensor<2x5x16xf32>, tensor<2x4x5x8xf32>
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

// CHECK-LABEL: func @unbatched_bf16
// CHECK: attn.multihead {{.*}} attn_mask(%{{.*}} : tensor<5x7xi1>) num_heads = 2 : tensor<5x8xbf16>, tensor<7x8xbf16>, tensor<7x8xbf16> -> tensor<5x8xbf16>, tensor<5x7xbf16>
func.func @unbatched_bf16(%q: tensor<5x8xbf16>, %k: tensor<7x8xbf16>, %v: tensor<7x8xbf16>, %wi: tensor<24x8xbf16>,
                          %wo: tensor<8x8xbf16>, %am: tensor<5x7xi1>) -> (tensor<5x8xbf16>, tensor<5x7xbf16>) {
  %out, %w = attn.multihead %q, %k, %v in_proj(%wi : tensor<24x8xbf16>) out_proj(%wo : tensor<8x8xbf16>)
      attn_mask(%am : tensor<5x7xi1>) num_heads = 2
    : tensor<5x8xbf16>, tensor<7x8xbf16>, tensor<7x8xbf16> -> tensor<5x8xbf16>, tensor<5x7xbf16>
  return %out, %w : tensor<5x8xbf16>, tensor<5x7xbf16>
}

// CHECK-LABEL: func @dynamic
// CHECK: attn.multihead {{.*}} num_heads = 2 batch_first : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
func.func @dynamic(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>, %wi: tensor<24x8xf32>,
                   %wo: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %out = attn.multihead %q, %k, %v in_proj(%wi : tensor<24x8xf32>) out_proj(%wo : tensor<8x8xf32>) num_heads = 2 batch_first
    : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %out : tensor<?x?x8xf32>
}

// A run-time dropout seed.
// CHECK-LABEL: func @multihead_runtime_seed
// CHECK: attn.multihead {{.*}} dropout_seed(%{{.*}} : tensor<i64>) num_heads = 2 dropout = 1.000000e-01 :
func.func @multihead_runtime_seed(%x: tensor<4x2x8xf32>, %w: tensor<24x8xf32>, %wo: tensor<8x8xf32>, %s: tensor<i64>) -> tensor<4x2x8xf32> {
  %o = attn.multihead %x, %x, %x in_proj(%w : tensor<24x8xf32>) out_proj(%wo : tensor<8x8xf32>)
      dropout_seed(%s : tensor<i64>) num_heads = 2 dropout = 0.1
    : tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32> -> tensor<4x2x8xf32>
  return %o : tensor<4x2x8xf32>
}
