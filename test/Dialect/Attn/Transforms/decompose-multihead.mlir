// RUN: attn-opt %s --attn-decompose-multihead --split-input-file | FileCheck %s

// Packed, batch-first, no weights, three inputs: three row slices of in_proj, projections
// accumulated on the broadcast bias, heads split to [N, H, L, D], attn.sdpa
// with the default scale, heads merged, out-projection.

// CHECK-LABEL: func @packed_batch_first
// CHECK-SAME: (%[[X:.*]]: tensor<2x10x16xf32>, %{{.*}}: tensor<2x10x16xf32>, %{{.*}}: tensor<2x10x16xf32>, %[[WI:.*]]: tensor<48x16xf32>, %[[BI:.*]]: tensor<48xf32>, %[[WO:.*]]: tensor<16x16xf32>, %[[BO:.*]]: tensor<16xf32>)
// CHECK-DAG: %[[WQ:.*]] = tensor.extract_slice %[[WI]][0, 0] [16, 16] [1, 1]
// CHECK-DAG: %[[WK:.*]] = tensor.extract_slice %[[WI]][16, 0] [16, 16] [1, 1]
// CHECK-DAG: %[[WV:.*]] = tensor.extract_slice %[[WI]][32, 0] [16, 16] [1, 1]
// CHECK-DAG: %[[BQ:.*]] = tensor.extract_slice %[[BI]][0] [16] [1]
// CHECK: %[[BQB:.*]] = linalg.broadcast ins(%[[BQ]] : tensor<16xf32>) outs(%{{.*}} : tensor<2x10x16xf32>) dimensions = [0, 1]
// The weight is transposed so that the projection's innermost loop runs
// over output features.
// CHECK: %[[WQT:.*]] = linalg.transpose ins(%[[WQ]] : tensor<16x16xf32>) outs(%{{.*}} : tensor<16x16xf32>) permutation = [1, 0]
// CHECK: %[[QP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[X]], %[[WQT]] : tensor<2x10x16xf32>, tensor<16x16xf32>) outs(%[[BQB]] : tensor<2x10x16xf32>)
// CHECK: %[[QE:.*]] = tensor.expand_shape %[[QP]] {{\[}}[0], [1], [2, 3]] output_shape [2, 10, 4, 4] : tensor<2x10x16xf32> into tensor<2x10x4x4xf32>
// CHECK: %[[QH:.*]] = linalg.transpose ins(%[[QE]] : tensor<2x10x4x4xf32>) outs(%{{.*}} : tensor<2x4x10x4xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[O:.*]] = attn.sdpa %[[QH]], %{{.*}}, %{{.*}} outs(%{{.*}}) : tensor<2x4x10x4xf32>, tensor<2x4x10x4xf32>, tensor<2x4x10x4xf32> -> tensor<2x4x10x4xf32>
// CHECK: %[[OT:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x10x4xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK: %[[M:.*]] = tensor.collapse_shape %[[OT]] {{\[}}[0], [1], [2, 3]] : tensor<2x10x4x4xf32> into tensor<2x10x16xf32>
// CHECK: %[[BOB:.*]] = linalg.broadcast ins(%[[BO]] : tensor<16xf32>)
// CHECK: %[[WOT:.*]] = linalg.transpose ins(%[[WO]] : tensor<16x16xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[WOT]] : tensor<2x10x16xf32>, tensor<16x16xf32>) outs(%[[BOB]] : tensor<2x10x16xf32>)
// CHECK: return %[[OUT]]
func.func @packed_batch_first(%x: tensor<2x10x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x16xf32>,
                              %wi: tensor<48x16xf32>, %bi: tensor<48xf32>,
                              %wo: tensor<16x16xf32>, %bo: tensor<16xf32>) -> tensor<2x10x16xf32> {
  %out = attn.multihead %x, %k, %v in_proj(%wi : tensor<48x16xf32>) in_proj_bias(%bi : tensor<48xf32>)
      out_proj(%wo : tensor<16x16xf32>) out_proj_bias(%bo : tensor<16xf32>) num_heads = 4 batch_first
    : tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<2x10x16xf32> -> tensor<2x10x16xf32>
  return %out : tensor<2x10x16xf32>
}

// -----

// One input for query, key and value: Q, K and V from one product with the
// whole packed weight, [N, L, 3E] viewed as [N, L, 3, H, D] and transposed
// to [3, N, H, L, D] (attn-pack-weights makes the product write that), each
// part a slice.
// CHECK-LABEL: func @together
// CHECK-SAME: (%[[X:.*]]: tensor<2x10x16xf32>, %[[WI:.*]]: tensor<48x16xf32>, %[[BI:.*]]: tensor<48xf32>
// CHECK-NOT: tensor.extract_slice %[[WI]]
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[BI]] : tensor<48xf32>) outs(%{{.*}} : tensor<2x10x48xf32>) dimensions = [0, 1]
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[WI]] : tensor<48x16xf32>) outs(%{{.*}} : tensor<16x48xf32>) permutation = [1, 0]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WT]] : tensor<2x10x16xf32>, tensor<16x48xf32>) outs(%[[B]] : tensor<2x10x48xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1], [2, 3, 4]] output_shape [2, 10, 3, 4, 4] : tensor<2x10x48xf32> into tensor<2x10x3x4x4xf32>
// CHECK: %[[S:.*]] = linalg.transpose ins(%[[E]] : tensor<2x10x3x4x4xf32>) outs(%{{.*}} : tensor<3x2x4x10x4xf32>) permutation = [2, 0, 3, 1, 4]
// CHECK: %[[QH:.*]] = tensor.extract_slice %[[S]][0, 0, 0, 0, 0] [1, 2, 4, 10, 4] [1, 1, 1, 1, 1] : tensor<3x2x4x10x4xf32> to tensor<2x4x10x4xf32>
// CHECK: %[[KH:.*]] = tensor.extract_slice %[[S]][1, 0, 0, 0, 0] [1, 2, 4, 10, 4]
// CHECK: %[[VH:.*]] = tensor.extract_slice %[[S]][2, 0, 0, 0, 0] [1, 2, 4, 10, 4]
// CHECK: attn.sdpa %[[QH]], %[[KH]], %[[VH]]
// CHECK-COUNT-1: linalg.generic
// CHECK: return
func.func @together(%x: tensor<2x10x16xf32>, %wi: tensor<48x16xf32>, %bi: tensor<48xf32>,
                    %wo: tensor<16x16xf32>) -> tensor<2x10x16xf32> {
  %out = attn.multihead %x, %x, %x in_proj(%wi : tensor<48x16xf32>) in_proj_bias(%bi : tensor<48xf32>)
      out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first
    : tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<2x10x16xf32> -> tensor<2x10x16xf32>
  return %out : tensor<2x10x16xf32>
}

// -----

// One input for key and value: Q projected alone, K and V together from
// rows [E, 3E) of the packed weight.
// CHECK-LABEL: func @kv_together
// CHECK-SAME: (%[[Q:.*]]: tensor<2x5x16xf32>, %[[KV:.*]]: tensor<2x7x16xf32>, %[[WI:.*]]: tensor<48x16xf32>
// CHECK: %[[WQ:.*]] = tensor.extract_slice %[[WI]][0, 0] [16, 16] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[Q]], %{{.*}} : tensor<2x5x16xf32>, tensor<16x16xf32>)
// CHECK: %[[QH:.*]] = linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK: %[[WKV:.*]] = tensor.extract_slice %[[WI]][16, 0] [32, 16] [1, 1]
// CHECK: %[[WKVT:.*]] = linalg.transpose ins(%[[WKV]] : tensor<32x16xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[KV]], %[[WKVT]] : tensor<2x7x16xf32>, tensor<16x32xf32>) outs(%{{.*}} : tensor<2x7x32xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1], [2, 3, 4]] output_shape [2, 7, 2, 4, 4]
// CHECK: %[[S:.*]] = linalg.transpose ins(%[[E]] : tensor<2x7x2x4x4xf32>) outs(%{{.*}} : tensor<2x2x4x7x4xf32>) permutation = [2, 0, 3, 1, 4]
// CHECK: %[[KH:.*]] = tensor.extract_slice %[[S]][0, 0, 0, 0, 0] [1, 2, 4, 7, 4]
// CHECK: %[[VH:.*]] = tensor.extract_slice %[[S]][1, 0, 0, 0, 0] [1, 2, 4, 7, 4]
// CHECK: attn.sdpa %[[QH]], %[[KH]], %[[VH]]
func.func @kv_together(%q: tensor<2x5x16xf32>, %kv: tensor<2x7x16xf32>, %wi: tensor<48x16xf32>,
                       %wo: tensor<16x16xf32>) -> tensor<2x5x16xf32> {
  %out = attn.multihead %q, %kv, %kv in_proj(%wi : tensor<48x16xf32>)
      out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first
    : tensor<2x5x16xf32>, tensor<2x7x16xf32>, tensor<2x7x16xf32> -> tensor<2x5x16xf32>
  return %out : tensor<2x5x16xf32>
}

// -----

// Sequence-first inputs are transposed to batch-first and the output back.
// PyTorch's boolean masks (true = masked out) are inverted into one keep-mask
// [N, 1, L, S] for attn.sdpa; causal and dropout carry over.

// CHECK-LABEL: func @seq_first_bool_masks
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<5x2x8xf32>
// CHECK: linalg.transpose ins(%[[Q]] : tensor<5x2x8xf32>) outs(%{{.*}} : tensor<2x5x8xf32>) permutation = [1, 0, 2]
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x7xi1>, tensor<5x7xi1>) outs(%{{.*}} : tensor<2x1x5x7xi1>)
// CHECK: ^bb0(%[[PAD:.*]]: i1, %[[AM:.*]]: i1, %{{.*}}: i1):
// CHECK: %[[K1:.*]] = arith.xori %[[PAD]], %true
// CHECK: %[[K2:.*]] = arith.xori %[[AM]], %true
// CHECK: %[[K:.*]] = arith.andi %[[K1]], %[[K2]] : i1
// CHECK: linalg.yield %[[K]] : i1
// CHECK: attn.sdpa {{.*}} mask(%[[MASK]] : tensor<2x1x5x7xi1>) outs(%{{.*}}) causal dropout = 1.000000e-01 seed = 4
// CHECK: %[[R:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x5x8xf32>) outs(%{{.*}} : tensor<5x2x8xf32>) permutation = [1, 0, 2]
// CHECK: return %[[R]]
func.func @seq_first_bool_masks(%q: tensor<5x2x8xf32>, %k: tensor<7x2x8xf32>, %wi: tensor<24x8xf32>, %wo: tensor<8x8xf32>,
                                %kpm: tensor<2x7xi1>, %am: tensor<5x7xi1>) -> tensor<5x2x8xf32> {
  %out = attn.multihead %q, %k, %k in_proj(%wi : tensor<24x8xf32>) out_proj(%wo : tensor<8x8xf32>)
      key_padding_mask(%kpm : tensor<2x7xi1>) attn_mask(%am : tensor<5x7xi1>) num_heads = 2 causal dropout = 0.1 seed = 4
    : tensor<5x2x8xf32>, tensor<7x2x8xf32>, tensor<7x2x8xf32> -> tensor<5x2x8xf32>
  return %out : tensor<5x2x8xf32>
}

// -----

// A float attn_mask of [N * H, L, S] is read at row n * H + h; a boolean key
// padding mask becomes -inf/0 and the two are added. bias_kv and
// add_zero_attn append two key positions to K, V and the mask (padded with
// 0 = keep). Separate projections accept kdim/vdim. need_weights uses
// attn.weights, a P V contraction and the mean over heads.

// CHECK-DAG: #[[$AM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d1, d2, d3)>
// CHECK-LABEL: func @float_masks_bias_kv_weights
// CHECK-SAME: %[[WK:[a-z0-9]+]]: tensor<8x6xf32>
// CHECK-SAME: %[[BK:[a-z0-9]+]]: tensor<1x1x8xf32>
// CHECK: %[[WKT:.*]] = linalg.transpose ins(%[[WK]] : tensor<8x6xf32>) outs(%{{.*}} : tensor<6x8xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WKT]] : tensor<3x7x6xf32>, tensor<6x8xf32>)
// CHECK: %[[BKF:.*]] = tensor.collapse_shape %[[BK]] {{\[}}[0, 1, 2]] : tensor<1x1x8xf32> into tensor<8xf32>
// CHECK: %[[BKB:.*]] = linalg.broadcast ins(%[[BKF]] : tensor<8xf32>) outs(%{{.*}} : tensor<3x1x8xf32>)
// CHECK: %[[K1:.*]] = tensor.concat dim(1) %{{.*}}, %[[BKB]] : (tensor<3x7x8xf32>, tensor<3x1x8xf32>) -> tensor<3x8x8xf32>
// CHECK: tensor.concat dim(1) %[[K1]], %{{.*}} : (tensor<3x8x8xf32>, tensor<3x1x8xf32>) -> tensor<3x9x8xf32>
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [{{.*}}, #[[$AM]], {{.*}}]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x7xi1>, tensor<6x4x7xf32>) outs(%{{.*}} : tensor<3x2x4x7xf32>)
// CHECK: arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// CHECK: arith.addf
// CHECK: %[[MP:.*]] = tensor.concat dim(3) %[[M]], %{{.*}} : (tensor<3x2x4x7xf32>, tensor<3x2x4x2xf32>) -> tensor<3x2x4x9xf32>
// CHECK: %[[P:.*]] = attn.weights %{{.*}}, %{{.*}} mask(%[[MP]] : tensor<3x2x4x9xf32>) outs(%{{.*}}) : tensor<3x2x4x4xf32>, tensor<3x2x9x4xf32> -> tensor<3x2x4x9xf32>
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<3x2x4x9xf32>, tensor<3x2x9x4xf32>) outs(%{{.*}} : tensor<3x2x4x4xf32>)
// The mean over the heads: each head's probability times 1 / 2, summed,
// in one reduction.
// CHECK: %[[W:.*]] = linalg.reduce ins(%[[P]] : tensor<3x2x4x9xf32>) outs(%{{.*}} : tensor<3x4x9xf32>) dimensions = [1]
// CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %[[HALF:.*]] : f32
// CHECK: arith.addf %[[X]], %{{.*}} : f32
// CHECK: return %{{.*}}, %[[W]] : tensor<3x4x8xf32>, tensor<3x4x9xf32>
func.func @float_masks_bias_kv_weights(%q: tensor<3x4x8xf32>, %k: tensor<3x7x6xf32>, %v: tensor<3x7x5xf32>,
                                       %wq: tensor<8x8xf32>, %wk: tensor<8x6xf32>, %wv: tensor<8x5xf32>,
                                       %bk: tensor<1x1x8xf32>, %bv: tensor<1x1x8xf32>, %wo: tensor<8x8xf32>,
                                       %kpm: tensor<3x7xi1>, %am: tensor<6x4x7xf32>) -> (tensor<3x4x8xf32>, tensor<3x4x9xf32>) {
  %out, %w = attn.multihead %q, %k, %v q_proj(%wq : tensor<8x8xf32>) k_proj(%wk : tensor<8x6xf32>) v_proj(%wv : tensor<8x5xf32>)
      bias_kv(%bk, %bv : tensor<1x1x8xf32>, tensor<1x1x8xf32>) out_proj(%wo : tensor<8x8xf32>)
      key_padding_mask(%kpm : tensor<3x7xi1>) attn_mask(%am : tensor<6x4x7xf32>) num_heads = 2 batch_first add_zero_attn
    : tensor<3x4x8xf32>, tensor<3x7x6xf32>, tensor<3x7x5xf32> -> tensor<3x4x8xf32>, tensor<3x4x9xf32>
  return %out, %w : tensor<3x4x8xf32>, tensor<3x4x9xf32>
}

// -----

// Unbatched inputs gain and lose a unit batch dimension; with appended keys
// the causal condition moves into the explicit mask (PyTorch keeps the
// appended positions visible), and attn.sdpa gets no causal attribute.

// CHECK-LABEL: func @unbatched_causal_zero_attn
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf16> into tensor<1x5x8xf16>
// CHECK: %[[M:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x5x5xi1>)
// CHECK: arith.cmpi ugt
// CHECK: %[[MP:.*]] = tensor.concat dim(3) %[[M]], %{{.*}} : (tensor<1x1x5x5xi1>, tensor<1x1x5x1xi1>) -> tensor<1x1x5x6xi1>
// CHECK: attn.sdpa {{.*}} mask(%[[MP]] : tensor<1x1x5x6xi1>) outs(%{{.*}}) :
// CHECK: arith.truncf
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x5x8xf16> into tensor<5x8xf16>
func.func @unbatched_causal_zero_attn(%x: tensor<5x8xf16>, %wi: tensor<24x8xf16>, %wo: tensor<8x8xf16>) -> tensor<5x8xf16> {
  %out = attn.multihead %x, %x, %x in_proj(%wi : tensor<24x8xf16>) out_proj(%wo : tensor<8x8xf16>) num_heads = 2 add_zero_attn causal
    : tensor<5x8xf16>, tensor<5x8xf16>, tensor<5x8xf16> -> tensor<5x8xf16>
  return %out : tensor<5x8xf16>
}
