// RUN: attn-opt %s --attn-lower-to-linalg="weights-rows=16" --canonicalize | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-linalg | FileCheck %s --check-prefix=WHOLE

// attn.weights with weights-rows: one parallel loop over (batch, head,
// 16-row block), and inside it, for those rows only, every step: the
// scores (Q rows against all of K), the masked scores, the row max, the
// exponentials, the row sum and the normalised probabilities, written into
// the block of the result. The keys are read from K^T, transposed once per
// (batch, head) in a parallel loop of its own (not again in every row
// block).
// CHECK-DAG: #[[$KT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-LABEL: func.func @weights
// CHECK: %[[KT:.*]] = scf.forall (%[[KB:.*]], %[[KH:.*]]) in (2, 3) shared_outs(%[[KT_OUT:.*]] = %{{.*}}) -> (tensor<2x3x8x24xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x24x8xf32>) outs(%{{.*}} : tensor<1x1x8x24xf32>) permutation = [0, 1, 3, 2]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[KT_OUT]][%[[KB]], %[[KH]], 0, 0] [1, 1, 8, 24]
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = (0, 0, 0) to (2, 3, 40) step (1, 1, 16) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<2x3x40x24xf32>)
// CHECK: %[[ROWS:.*]] = affine.min
// CHECK: tensor.extract_slice %{{.*}}[%[[B]], %[[H]], %[[I]], 0] [1, 1, %[[ROWS]], 8]
// CHECK-NOT: linalg.transpose
// CHECK: %[[KT_HEAD:.*]] = tensor.extract_slice %[[KT]][%[[B]], %[[H]], 0, 0] [1, 1, 8, 24]
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$KT_MAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %[[KT_HEAD]] : tensor<1x1x?x8xf32>, tensor<1x1x8x24xf32>) outs(%{{.*}} : tensor<1x1x?x24xf32>)
// The causal condition on global indices: the block's first row is added.
// CHECK: %[[LOCAL:.*]] = linalg.index 2 : index
// CHECK: %[[ROW:.*]] = affine.apply #{{.*}}(%[[I]])[%[[LOCAL]]]
// CHECK: arith.cmpi sle, %{{.*}}, %[[ROW]] : index
// CHECK: linalg.reduce
// CHECK: math.exp
// CHECK: linalg.reduce
// CHECK-NOT: linalg.generic {{.*}} "reduction"
// CHECK: linalg.generic
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[B]], %[[H]], %[[I]], 0] [1, 1, %[[ROWS]], 24]
// CHECK-NOT: linalg.
// CHECK: return
// Without it (the reference lowering, the tests' oracle): one pass per
// step over the whole tensor.
// WHOLE-LABEL: func.func @weights
// WHOLE-NOT: scf.forall
// WHOLE: linalg.reduce ins(%{{.*}} : tensor<2x3x40x24xf32>)
func.func @weights(%q: tensor<2x3x40x8xf32>, %k: tensor<2x3x24x8xf32>) -> tensor<2x3x40x24xf32> {
  %e = tensor.empty() : tensor<2x3x40x24xf32>
  %w = attn.weights %q, %k outs(%e) causal : tensor<2x3x40x8xf32>, tensor<2x3x24x8xf32> -> tensor<2x3x40x24xf32>
  return %w : tensor<2x3x40x24xf32>
}
