// RUN: attn-opt %s --attn-lower-to-linalg="fusion-marks=true" --attn-fuse-weights="rows=16" --canonicalize --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-linalg --split-input-file | FileCheck %s --check-prefix=WHOLE
// RUN: attn-opt %s --attn-lower-to-linalg="fusion-marks=true" --split-input-file | FileCheck %s --check-prefix=MARKS
// RUN: attn-opt %s --attn-lower-to-linalg="fusion-marks=true" --attn-fuse-weights --canonicalize --split-input-file | FileCheck %s --check-prefix=ROWS64

// attn.weights fused per block of rows: one parallel loop over (batch, head,
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
// WHOLE-NOT: attn.
// WHOLE: linalg.reduce ins(%{{.*}} : tensor<2x3x40x24xf32>)
// WHOLE-NOT: attn.
// WHOLE: return
// With fusion-marks, the conversion marks the product Q K^T and the
// normalised probabilities for this pass, and schedules nothing itself.
// MARKS-LABEL: func.func @weights
// MARKS-NOT: scf.forall
// MARKS: linalg.generic {{.*}} attrs = {attn.scores}
// MARKS: linalg.generic {{.*}} attrs = {attn.probabilities}
// MARKS: return
func.func @weights(%q: tensor<2x3x40x8xf32>, %k: tensor<2x3x24x8xf32>) -> tensor<2x3x40x24xf32> {
  %e = tensor.empty() : tensor<2x3x40x24xf32>
  %w = attn.weights %q, %k outs(%e) causal : tensor<2x3x40x8xf32>, tensor<2x3x24x8xf32> -> tensor<2x3x40x24xf32>
  return %w : tensor<2x3x40x24xf32>
}

// -----

// A product P V of the probabilities (multihead's need_weights) is the
// row-block loop's consumer: each block multiplies its probabilities with
// the head's values while they are in the cache, and the loop also yields
// the probabilities (the weights). V is read whole by each block, not
// recomputed there.
// CHECK-LABEL: func.func @weights_times_values
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<2x3x24x16xf32>
// CHECK: %[[R:.*]]:2 = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = (0, 0, 0) to (2, 3, 40) step (1, 1, 16) shared_outs(%[[O:.*]] = %{{.*}}, %[[W:.*]] = %{{.*}}) -> (tensor<2x3x40x16xf32>, tensor<2x3x40x24xf32>)
// CHECK: linalg.reduce
// CHECK: linalg.reduce
// Each row is normalised by its reciprocal: one division per row.
// CHECK: %[[INV:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x?xf32>)
// CHECK: arith.divf
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[INV]] : tensor<1x1x?x24xf32>, tensor<1x1x?xf32>)
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK: %[[VH:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], 0, 0] [1, 1, 24, 16]
// CHECK: %[[PV:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[VH]] : tensor<1x1x?x24xf32>, tensor<1x1x24x16xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[PV]] into %[[O]][%[[B]], %[[H]], %[[I]], 0] [1, 1, %{{.*}}, 16]
// CHECK-NEXT: tensor.parallel_insert_slice %[[P]] into %[[W]][%[[B]], %[[H]], %[[I]], 0] [1, 1, %{{.*}}, 24]
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @weights_times_values(%q: tensor<2x3x40x8xf32>, %k: tensor<2x3x24x8xf32>, %v: tensor<2x3x24x16xf32>) -> (tensor<2x3x40x24xf32>, tensor<2x3x40x16xf32>) {
  %e = tensor.empty() : tensor<2x3x40x24xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<2x3x40x8xf32>, tensor<2x3x24x8xf32> -> tensor<2x3x40x24xf32>
  %z = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<2x3x40x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%eo : tensor<2x3x40x16xf32>) -> tensor<2x3x40x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%w, %v : tensor<2x3x40x24xf32>, tensor<2x3x24x16xf32>) outs(%f : tensor<2x3x40x16xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %m = arith.mulf %p, %x : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x40x16xf32>
  return %w, %o : tensor<2x3x40x24xf32>, tensor<2x3x40x16xf32>
}

// -----

// Shape-generic: the product's init and loop bounds are sized by the
// probabilities; those sizes are taken from the probabilities' init, which
// comes before the loop that replaces them.
// CHECK-LABEL: func.func @dynamic_weights_times_values
// CHECK: %[[R:.*]]:2 = scf.forall {{.*}} -> (tensor<?x2x?x8xf32>, tensor<?x2x?x?xf32>)
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @dynamic_weights_times_values(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x2x?x8xf32>
  %l = tensor.dim %q, %c2 : tensor<?x2x?x8xf32>
  %s = tensor.dim %k, %c2 : tensor<?x2x?x8xf32>
  %e = tensor.empty(%b, %l, %s) : tensor<?x2x?x?xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x?xf32>
  %wb = tensor.dim %w, %c0 : tensor<?x2x?x?xf32>
  %wl = tensor.dim %w, %c2 : tensor<?x2x?x?xf32>
  %z = arith.constant 0.0 : f32
  %eo = tensor.empty(%wb, %wl) : tensor<?x2x?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%eo : tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%w, %v : tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) outs(%f : tensor<?x2x?x8xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %m = arith.mulf %p, %x : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  } -> tensor<?x2x?x8xf32>
  return %w, %o : tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>
}

// -----

// Block classes in row blocks that do not start on a class block boundary
// (rows of 16, classes of 24 rows): the class is read at the global row
// (the block's start plus linalg.index), not at the row within the block.
// CHECK-LABEL: func.func @block_classes_unaligned_rows
// CHECK-SAME: %[[CLASSES:[^:]+]]: tensor<1x2x2x2xi8>
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.forall (%[[H:.*]], %[[ROW0:.*]]) = (0, 0) to (2, 40) step (1, 16)
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[ROW:.*]] = affine.apply #{{.*}}(%[[ROW0]])[%[[I]]]
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[QB:.*]] = arith.divui %[[ROW]], %[[C24]] : index
// CHECK: %[[KB:.*]] = arith.divui %[[J]], %[[C8]] : index
// CHECK: tensor.extract %[[CLASSES]][%{{.*}}, %[[H]], %[[QB]], %[[KB]]]
func.func @block_classes_unaligned_rows(%q: tensor<1x2x40x8xf32>, %k: tensor<1x2x16x8xf32>, %c: tensor<1x2x2x2xi8>) -> tensor<1x2x40x16xf32> {
  %e = tensor.empty() : tensor<1x2x40x16xf32>
  %w = attn.weights %q, %k block_classes(%c : tensor<1x2x2x2xi8>) outs(%e) block_size = [24, 8] : tensor<1x2x40x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x40x16xf32>
  return %w : tensor<1x2x40x16xf32>
}

// -----

// Heads of fewer query rows than a block takes (5 <= 16): a block takes
// whole heads, as many as fit in its rows while the loop keeps 16 blocks
// (3 of the 6 heads: 16 blocks of 15 rows), and the keys' transpose is
// fused into the block, which reads all of its heads' keys once anyway (no
// parallel loop of its own).
// CHECK-LABEL: func.func @grouped_heads
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<8x6x5x8xf32>, %[[K:[a-z0-9]+]]: tensor<8x6x7x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]]) = (0, 0) to (8, 6) step (1, 3) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<8x6x5x7xf32>)
// CHECK: tensor.extract_slice %[[Q]][%[[B]], %[[H]], 0, 0] [1, 3, 5, 8]
// CHECK: %[[KH:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[H]], 0, 0] [1, 3, 7, 8]
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[KH]] : tensor<1x3x7x8xf32>) outs(%{{.*}} : tensor<1x3x8x7xf32>) permutation = [0, 1, 3, 2]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[KT]] : tensor<1x3x5x8xf32>, tensor<1x3x8x7xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[B]], %[[H]], 0, 0] [1, 3, 5, 7]
func.func @grouped_heads(%q: tensor<8x6x5x8xf32>, %k: tensor<8x6x7x8xf32>) -> tensor<8x6x5x7xf32> {
  %e = tensor.empty() : tensor<8x6x5x7xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<8x6x5x8xf32>, tensor<8x6x7x8xf32> -> tensor<8x6x5x7xf32>
  return %w : tensor<8x6x5x7xf32>
}

// -----

// Grouped-query attention reads K at head h floordiv 2: blocks stay one
// head each (a tiled block of several would read its keys at the wrong
// head where it does not start on a group), the keys' transpose fused.
// CHECK-LABEL: func.func @gqa_heads
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<8x3x7x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]]) in (8, 6)
// CHECK: %[[KV:.*]] = affine.apply #{{.*}}(%[[H]])
// CHECK: %[[KH:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[KV]], 0, 0] [1, 1, 7, 8]
// CHECK: linalg.transpose ins(%[[KH]] : tensor<1x1x7x8xf32>) outs(%{{.*}} : tensor<1x1x8x7xf32>)
func.func @gqa_heads(%q: tensor<8x6x5x8xf32>, %k: tensor<8x3x7x8xf32>) -> tensor<8x6x5x7xf32> {
  %e = tensor.empty() : tensor<8x6x5x7xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<8x6x5x8xf32>, tensor<8x3x7x8xf32> -> tensor<8x6x5x7xf32>
  return %w : tensor<8x6x5x7xf32>
}

// -----

// 6 heads of one sequence: grouping them would leave fewer than 16 blocks
// for the threads; blocks of one head.
// CHECK-LABEL: func.func @few_blocks
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[H:.*]]) in (6)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x7x8xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} [1, 1, 5, 7]
func.func @few_blocks(%q: tensor<1x6x5x8xf32>, %k: tensor<1x6x7x8xf32>) -> tensor<1x6x5x7xf32> {
  %e = tensor.empty() : tensor<1x6x5x7xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<1x6x5x8xf32>, tensor<1x6x7x8xf32> -> tensor<1x6x5x7xf32>
  return %w : tensor<1x6x5x7xf32>
}

// -----

// A mask shared by the heads (read at head 0) does not keep heads apart:
// blocks of 3 heads read its slice of their sequence.
// CHECK-LABEL: func.func @grouped_heads_shared_mask
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<8x1x5x7xi1>
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]]) = (0, 0) to (8, 6) step (1, 3)
// CHECK: tensor.extract_slice %[[M]][%[[B]], 0, 0, 0] [1, 1, 5, 7]
func.func @grouped_heads_shared_mask(%q: tensor<8x6x5x8xf32>, %k: tensor<8x6x7x8xf32>, %m: tensor<8x1x5x7xi1>) -> tensor<8x6x5x7xf32> {
  %e = tensor.empty() : tensor<8x6x5x7xf32>
  %w = attn.weights %q, %k mask(%m : tensor<8x1x5x7xi1>) outs(%e) : tensor<8x6x5x8xf32>, tensor<8x6x7x8xf32> -> tensor<8x6x5x7xf32>
  return %w : tensor<8x6x5x7xf32>
}

// -----

// The mean over the heads of need_weights (attn-decompose-multihead's
// linalg.reduce over dimension 1) joins the product in the row blocks: one
// parallel loop over (batch, 16-row block), and in each block a loop over
// the heads that computes the head's probabilities for those rows (the
// causal mask at the block's rows), their product with V and their share
// of the mean, accumulated into the block's [16, Skv] tile. No
// [B, H, Sq, Skv] tensor is left: each head's probabilities are a tensor of
// their own.
// CHECK-LABEL: func.func @head_mean
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<4x3x64x8xf32>
// CHECK-NOT: tensor<4x3x64x24xf32>
// CHECK: %[[R:.*]]:2 = scf.forall (%[[B:.*]], %[[I:.*]]) = (0, 0) to (4, 64) step (1, 16) shared_outs(%[[O:.*]] = %{{.*}}, %[[W:.*]] = %{{.*}}) -> (tensor<4x3x64x16xf32>, tensor<4x64x24xf32>)
// CHECK: %[[QB:.*]] = tensor.extract_slice %[[Q]][%[[B]], 0, %[[I]], 0] [1, 3, 16, 8]
// CHECK: %[[WB:.*]] = tensor.extract_slice %[[W]][%[[B]], %[[I]], 0] [1, 16, 24]
// CHECK: %[[H:.*]]:2 = scf.for %[[HEAD:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OA:.*]] = %{{.*}}, %[[WA:.*]] = %[[WB]]) -> (tensor<1x3x16x16xf32>, tensor<1x16x24xf32>)
// CHECK: tensor.extract_slice %[[QB]][0, %[[HEAD]], 0, 0] [1, 1, 16, 8]
// CHECK: tensor.empty() : tensor<1x1x16x24xf32>
// CHECK: linalg.index 2
// CHECK: affine.apply #{{.*}}(%[[I]])
// CHECK: linalg.reduce
// CHECK: linalg.reduce
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x16x24xf32>, tensor<1x1x16xf32>) outs(%{{.*}} : tensor<1x1x16x24xf32>)
// CHECK: %[[PV:.*]] = linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<1x1x16x24xf32>, tensor<1x1x24x16xf32>)
// CHECK: %[[OS:.*]] = tensor.insert_slice %[[PV]] into %[[OA]][0, %[[HEAD]], 0, 0] [1, 1, 16, 16]
// CHECK: %[[MEAN:.*]] = linalg.reduce ins(%[[P]] : tensor<1x1x16x24xf32>) outs(%[[WA]] : tensor<1x16x24xf32>) dimensions = [1]
// CHECK: scf.yield %[[OS]], %[[MEAN]]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[H]]#0 into %[[O]][%[[B]], 0, %[[I]], 0] [1, 3, 16, 16]
// CHECK-NEXT: tensor.parallel_insert_slice %[[H]]#1 into %[[W]][%[[B]], %[[I]], 0] [1, 16, 24]
// CHECK-NOT: linalg.reduce
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @head_mean(%q: tensor<4x3x64x8xf32>, %k: tensor<4x3x24x8xf32>, %v: tensor<4x3x24x16xf32>) -> (tensor<4x64x24xf32>, tensor<4x3x64x16xf32>) {
  %e = tensor.empty() : tensor<4x3x64x24xf32>
  %w = attn.weights %q, %k outs(%e) causal : tensor<4x3x64x8xf32>, tensor<4x3x24x8xf32> -> tensor<4x3x64x24xf32>
  %z = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<4x3x64x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%eo : tensor<4x3x64x16xf32>) -> tensor<4x3x64x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%w, %v : tensor<4x3x64x24xf32>, tensor<4x3x24x16xf32>) outs(%f : tensor<4x3x64x16xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %m = arith.mulf %p, %x : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3x64x16xf32>
  %em = tensor.empty() : tensor<4x64x24xf32>
  %fm = linalg.fill ins(%z : f32) outs(%em : tensor<4x64x24xf32>) -> tensor<4x64x24xf32>
  %mean = linalg.reduce ins(%w : tensor<4x3x64x24xf32>) outs(%fm : tensor<4x64x24xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %c = arith.constant 0.33333334 : f32
      %x = arith.mulf %in, %c : f32
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %mean, %o : tensor<4x64x24xf32>, tensor<4x3x64x16xf32>
}

// -----

// A loop over the row blocks of one short sequence (1 x 40 rows: 3 blocks)
// would leave threads idle: the heads stay a parallel dimension, and the
// mean is taken after the loop from the stored probabilities.
// CHECK-LABEL: func.func @head_mean_few_blocks
// CHECK: %[[R:.*]]:2 = scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (3, 40) step (1, 16) {{.*}} -> (tensor<1x3x40x16xf32>, tensor<1x3x40x24xf32>)
// CHECK-NOT: scf.for %
// CHECK: linalg.reduce ins(%[[R]]#1 : tensor<1x3x40x24xf32>) {{.*}} dimensions = [1]
func.func @head_mean_few_blocks(%q: tensor<1x3x40x8xf32>, %k: tensor<1x3x24x8xf32>, %v: tensor<1x3x24x16xf32>) -> (tensor<1x40x24xf32>, tensor<1x3x40x16xf32>) {
  %e = tensor.empty() : tensor<1x3x40x24xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<1x3x40x8xf32>, tensor<1x3x24x8xf32> -> tensor<1x3x40x24xf32>
  %z = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<1x3x40x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%eo : tensor<1x3x40x16xf32>) -> tensor<1x3x40x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%w, %v : tensor<1x3x40x24xf32>, tensor<1x3x24x16xf32>) outs(%f : tensor<1x3x40x16xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %m = arith.mulf %p, %x : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x3x40x16xf32>
  %em = tensor.empty() : tensor<1x40x24xf32>
  %fm = linalg.fill ins(%z : f32) outs(%em : tensor<1x40x24xf32>) -> tensor<1x40x24xf32>
  %mean = linalg.reduce ins(%w : tensor<1x3x40x24xf32>) outs(%fm : tensor<1x40x24xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %c = arith.constant 0.33333334 : f32
      %x = arith.mulf %in, %c : f32
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %mean, %o : tensor<1x40x24xf32>, tensor<1x3x40x16xf32>
}

// -----

// One sequence of 600 rows: blocks of 64 rows would be 10, too few to
// balance; halved to 32 (19 blocks). The last block is partial.
// CHECK-LABEL: func.func @head_mean_one_sequence
// CHECK: scf.forall (%{{.*}}) = (0) to (600) step (16)
// CHECK: scf.for %
// ROWS64-LABEL: func.func @head_mean_one_sequence
// ROWS64: scf.forall (%{{.*}}) = (0) to (600) step (32)
// ROWS64: affine.min
// ROWS64: scf.for %
// ROWS64: linalg.reduce ins(%{{.*}} : tensor<1x1x?x24xf32>) outs(%{{.*}} : tensor<1x?x24xf32>) dimensions = [1]
func.func @head_mean_one_sequence(%q: tensor<1x3x600x8xf32>, %k: tensor<1x3x24x8xf32>, %v: tensor<1x3x24x16xf32>) -> (tensor<1x600x24xf32>, tensor<1x3x600x16xf32>) {
  %e = tensor.empty() : tensor<1x3x600x24xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<1x3x600x8xf32>, tensor<1x3x24x8xf32> -> tensor<1x3x600x24xf32>
  %z = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<1x3x600x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%eo : tensor<1x3x600x16xf32>) -> tensor<1x3x600x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%w, %v : tensor<1x3x600x24xf32>, tensor<1x3x24x16xf32>) outs(%f : tensor<1x3x600x16xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %m = arith.mulf %p, %x : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x3x600x16xf32>
  %em = tensor.empty() : tensor<1x600x24xf32>
  %fm = linalg.fill ins(%z : f32) outs(%em : tensor<1x600x24xf32>) -> tensor<1x600x24xf32>
  %mean = linalg.reduce ins(%w : tensor<1x3x600x24xf32>) outs(%fm : tensor<1x600x24xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %c = arith.constant 0.33333334 : f32
      %x = arith.mulf %in, %c : f32
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %mean, %o : tensor<1x600x24xf32>, tensor<1x3x600x16xf32>
}

// -----

// Shape-generic: the row count is not known, so the loop cannot be judged
// too short; blocks of 16 rows, their sizes taken from the probabilities'
// init.
// CHECK-LABEL: func.func @head_mean_dynamic
// CHECK: %[[R:.*]]:2 = scf.forall {{.*}} step (1, 16) {{.*}} -> (tensor<?x3x?x16xf32>, tensor<?x?x?xf32>)
// CHECK: scf.for %
// CHECK: linalg.reduce {{.*}} dimensions = [1]
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @head_mean_dynamic(%q: tensor<?x3x?x8xf32>, %k: tensor<?x3x?x8xf32>, %v: tensor<?x3x?x16xf32>) -> (tensor<?x?x?xf32>, tensor<?x3x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x3x?x8xf32>
  %l = tensor.dim %q, %c2 : tensor<?x3x?x8xf32>
  %sk = tensor.dim %k, %c2 : tensor<?x3x?x8xf32>
  %e = tensor.empty(%b, %l, %sk) : tensor<?x3x?x?xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<?x3x?x8xf32>, tensor<?x3x?x8xf32> -> tensor<?x3x?x?xf32>
  %wb = tensor.dim %w, %c0 : tensor<?x3x?x?xf32>
  %wl = tensor.dim %w, %c2 : tensor<?x3x?x?xf32>
  %c3 = arith.constant 3 : index
  %ws = tensor.dim %w, %c3 : tensor<?x3x?x?xf32>
  %z = arith.constant 0.0 : f32
  %eo = tensor.empty(%wb, %wl) : tensor<?x3x?x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%eo : tensor<?x3x?x16xf32>) -> tensor<?x3x?x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%w, %v : tensor<?x3x?x?xf32>, tensor<?x3x?x16xf32>) outs(%f : tensor<?x3x?x16xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %m = arith.mulf %p, %x : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3x?x16xf32>
  %em = tensor.empty(%wb, %wl, %ws) : tensor<?x?x?xf32>
  %fm = linalg.fill ins(%z : f32) outs(%em : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %mean = linalg.reduce ins(%w : tensor<?x3x?x?xf32>) outs(%fm : tensor<?x?x?xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %c = arith.constant 0.33333334 : f32
      %x = arith.mulf %in, %c : f32
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %mean, %o : tensor<?x?x?xf32>, tensor<?x3x?x16xf32>
}

// -----

// A block needs rows: rows=0 is refused with the option's value.
// RUN: not attn-opt %s --attn-lower-to-linalg="fusion-marks=true" --attn-fuse-weights="rows=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: attn-fuse-weights: rows must be positive, got 0
