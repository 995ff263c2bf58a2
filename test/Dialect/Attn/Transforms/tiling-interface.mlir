// attn.sdpa through upstream's TilingInterface: the transform dialect's
// tile_using_forall splits it into an scf.forall of attn.sdpa tiles over
// (batch, query head, query row); K and V tiles are the tile's batch and
// key/value heads (query heads 2h and 2h+1 read key/value head h), every
// key. What a tile cannot express is refused with the reason.
// RUN: attn-opt %s --transform-interpreter --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-DAG: #[[$HEAD:.+]] = affine_map<(d0) -> (d0 * 2)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0) -> (d0 * 64)>
// CHECK-DAG: #[[$GROUP:.+]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-LABEL: func.func @gqa_rows
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<2x8x256x32xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x256x32xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x256x16xf32>, %[[M:[a-z0-9]+]]: tensor<256x256xf32>)
// CHECK: scf.forall (%[[B:.*]], %[[HI:.*]], %[[RI:.*]]) in (2, 4, 4) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK-DAG: %[[H:.*]] = affine.apply #[[$HEAD]](%[[HI]])
// CHECK-DAG: %[[R:.*]] = affine.apply #[[$ROW]](%[[RI]])
// CHECK-DAG: %[[KH:.*]] = affine.apply #[[$GROUP]](%[[H]])
// CHECK-DAG: %[[QT:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[R]], 0] [1, 2, 64, 32] [1, 1, 1, 1]
// CHECK-DAG: %[[KT:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[KH]], 0, 0] [1, 1, 256, 32] [1, 1, 1, 1]
// CHECK-DAG: %[[VT:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[KH]], 0, 0] [1, 1, 256, 16] [1, 1, 1, 1]
// CHECK-DAG: %[[MT:.*]] = tensor.extract_slice %[[M]][%[[R]], 0] [64, 256] [1, 1]
// CHECK-DAG: %[[OT:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[R]], 0] [1, 2, 64, 16] [1, 1, 1, 1]
// CHECK: %[[T:.*]] = attn.sdpa %[[QT]], %[[KT]], %[[VT]] mask(%[[MT]] : tensor<64x256xf32>) outs(%[[OT]]) scale = 2.500000e-01 : tensor<1x2x64x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x16xf32> -> tensor<1x2x64x16xf32>
// CHECK: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[B]], %[[H]], %[[R]], 0] [1, 2, 64, 16] [1, 1, 1, 1]
func.func @gqa_rows(%q: tensor<2x8x256x32xf32>, %k: tensor<2x4x256x32xf32>,
                    %v: tensor<2x4x256x16xf32>, %m: tensor<256x256xf32>) -> tensor<2x8x256x16xf32> {
  %init = tensor.empty() : tensor<2x8x256x16xf32>
  %0 = attn.sdpa %q, %k, %v mask(%m : tensor<256x256xf32>) outs(%init) scale = 0.25
      : tensor<2x8x256x32xf32>, tensor<2x4x256x32xf32>, tensor<2x4x256x16xf32> -> tensor<2x8x256x16xf32>
  return %0 : tensor<2x8x256x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %sdpa tile_sizes [1, 2, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Causal attention tiles over batch and heads; its rows stay whole.
// CHECK-LABEL: func.func @causal_heads
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 4)
// CHECK: attn.sdpa {{.*}} causal : tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32> -> tensor<1x1x128x32xf32>
func.func @causal_heads(%q: tensor<2x4x128x32xf32>, %k: tensor<2x4x128x32xf32>,
                        %v: tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32> {
  %init = tensor.empty() : tensor<2x4x128x32xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init) causal
      : tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  return %0 : tensor<2x4x128x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %sdpa num_threads [2, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A row tile of causal attention would renumber its rows: refused.
func.func @causal_rows(%q: tensor<1x1x128x32xf32>, %k: tensor<1x1x128x32xf32>,
                       %v: tensor<1x1x128x32xf32>) -> tensor<1x1x128x32xf32> {
  %init = tensor.empty() : tensor<1x1x128x32xf32>
  // expected-error @below {{cannot be tiled (TilingInterface): causal, window and bottom-right alignment place each row by its index among all the op's rows: only whole rows tile (row tile 0 or the full 128)}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  // expected-note @below {{when applied to this op}}
  %0 = attn.sdpa %q, %k, %v outs(%init) causal
      : tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32> -> tensor<1x1x128x32xf32>
  return %0 : tensor<1x1x128x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %tiled, %loop = transform.structured.tile_using_forall %sdpa tile_sizes [0, 0, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
