// RUN: attn-opt %s --attn-lower-to-linalg --split-input-file | FileCheck %s

// GQA: key/value heads are read through `h floordiv 2` in the indexing maps,
// scores accumulate in f32, and the f16 result is narrowed into the init.

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-LABEL: func @gqa_f16
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x3x8xf16>, %[[K:.*]]: tensor<1x2x5x8xf16>, %[[V:.*]]: tensor<1x2x5x6xf16>, %[[INIT:.*]]: tensor<1x4x3x6xf16>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%{{.*}} : tensor<1x4x3x5xf32>)
// CHECK: arith.extf
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%{{.*}} : tensor<1x4x3x5xf32>) {{.*}} dimensions = [3]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.reduce {{.*}} dimensions = [3]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: %[[O:.*]] = linalg.generic {indexing_maps = [{{.*}}, #[[$V]], {{.*}}]{{.*}} ins(%{{.*}}, %[[V]] : tensor<1x4x3x5xf32>, tensor<1x2x5x6xf16>) outs(%{{.*}} : tensor<1x4x3x6xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[O]] : tensor<1x4x3x6xf32>) outs(%[[INIT]] : tensor<1x4x3x6xf16>)
// CHECK: arith.truncf
// CHECK: return %[[R]]
// CHECK-NOT: attn.
func.func @gqa_f16(%q: tensor<1x4x3x8xf16>, %k: tensor<1x2x5x8xf16>, %v: tensor<1x2x5x6xf16>, %init: tensor<1x4x3x6xf16>) -> tensor<1x4x3x6xf16> {
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x4x3x8xf16>, tensor<1x2x5x8xf16>, tensor<1x2x5x6xf16> -> tensor<1x4x3x6xf16>
  return %o : tensor<1x4x3x6xf16>
}

// -----

// Default scale 1/sqrt(8); masks, kv_lens, causal and window become keep
// conditions of one elementwise op; dropped scores become -inf. The
// bottom-right diagonal is i + (kv_lens[b] - Sq).

// CHECK-DAG: #[[$MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[$LENS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func @masks
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<3x5xi1>, %[[L:[a-z0-9]+]]: tensor<1xi64>
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.353553385 : f32
// CHECK-DAG: %[[SQ:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[LEFT:.*]] = arith.constant -2 : index
// CHECK: linalg.generic {indexing_maps = [#[[$MASK]], #[[$LENS]], {{.*}}]{{.*}} ins(%[[M]], %[[L]] : tensor<3x5xi1>, tensor<1xi64>)
// CHECK-NEXT: ^bb0(%[[KEEP:.*]]: i1, %[[LEN:.*]]: i64, %[[SIN:.*]]: f32):
// CHECK-DAG: %[[I:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[LENI:.*]] = arith.index_cast %[[LEN]] : i64 to index
// CHECK: %[[SC:.*]] = arith.mulf %[[SIN]], %[[SCALE]] : f32
// CHECK: %[[INLEN:.*]] = arith.cmpi slt, %[[J]], %[[LENI]] : index
// CHECK: %[[K1:.*]] = arith.andi %[[KEEP]], %[[INLEN]] : i1
// CHECK: %[[OFF:.*]] = arith.subi %[[LENI]], %[[SQ]] : index
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK: %[[K2:.*]] = arith.andi %[[K1]], %[[CAUSAL]] : i1
// CHECK: %[[LO:.*]] = arith.addi %[[DIAG]], %[[LEFT]] : index
// CHECK: arith.cmpi sge, %[[J]], %[[LO]] : index
// CHECK: arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK: %[[FINAL:.*]] = arith.andi
// CHECK: %[[SEL:.*]] = arith.select %[[FINAL]], %[[SC]], %[[NINF]] : f32
// CHECK: linalg.yield %[[SEL]] : f32
func.func @masks(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>,
                 %m: tensor<3x5xi1>, %l: tensor<1xi64>, %init: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<3x5xi1>) kv_lens(%l : tensor<1xi64>) outs(%init)
       causal window = [2, 0] align = <bottom_right>
       : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x3x8xf32>
  return %o : tensor<1x2x3x8xf32>
}

// -----

// A fully masked row: the max of -inf is replaced by 0 before exp, and a
// zero sum gives probability 0 rather than 0/0. exp(d) is exp2(d log2(e)),
// and each row is normalised by its sum's reciprocal (0 for a zero sum).

// CHECK-LABEL: func @softmax_guards
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: ^bb0(%[[S:.*]]: f32, %[[MAX:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[MAX]], %[[NINF]] : f32
// CHECK: %[[SAFE:.*]] = arith.select %[[EMPTY]], %[[ZERO]], %[[MAX]] : f32
// CHECK: %[[D:.*]] = arith.subf %[[S]], %[[SAFE]] : f32
// CHECK: %[[DL:.*]] = arith.mulf %[[D]], %[[LOG2E]] : f32
// CHECK: math.exp2 %[[DL]] : f32
// CHECK: ^bb0(%[[SUM:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[NONE:.*]] = arith.cmpf oeq, %[[SUM]], %[[ZERO]] : f32
// CHECK: %[[R:.*]] = arith.divf %[[ONE]], %[[SUM]] : f32
// CHECK: arith.select %[[NONE]], %[[ZERO]], %[[R]] : f32
// CHECK: ^bb0(%[[E:.*]]: f32, %[[INV:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.mulf %[[E]], %[[INV]] : f32
func.func @softmax_guards(%q: tensor<1x1x2x4xf32>, %init: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %p = attn.weights %q, %q outs(%init) : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  return %p : tensor<1x1x2x2xf32>
}

// -----

// score_mod and mask_mod are inlined into the elementwise op with the
// linalg indices as (b, h, q_idx, kv_idx); additive masks are widened.

// CHECK-LABEL: func @regions
// CHECK: ^bb0(%[[MF:[a-z0-9_]+]]: f16, %[[SIN:[a-z0-9_]+]]: f32):
// CHECK-DAG: %[[B:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[I:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[SC:.*]] = arith.mulf %[[SIN]], %{{.*}} : f32
// CHECK: %[[MW:.*]] = arith.extf %[[MF]] : f16 to f32
// CHECK: %[[SM:.*]] = arith.addf %[[SC]], %[[MW]] : f32
// CHECK: %[[DIFF:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[MOD:.*]] = arith.addf %[[SM]], %{{.*}} : f32
// CHECK: %[[KEEP:.*]] = arith.cmpi ule, %[[B]], %[[J]] : index
// CHECK: %[[R:.*]] = arith.select %[[KEEP]], %[[MOD]], %{{.*}} : f32
// CHECK: linalg.yield %[[R]]
// CHECK-NOT: attn.yield
func.func @regions(%q: tensor<2x1x4x8xf16>, %m: tensor<4x4xf16>, %init: tensor<2x1x4x8xf16>) -> tensor<2x1x4x8xf16> {
  %o = attn.sdpa %q, %q, %q mask(%m : tensor<4x4xf16>) outs(%init)
       : tensor<2x1x4x8xf16>, tensor<2x1x4x8xf16>, tensor<2x1x4x8xf16> -> tensor<2x1x4x8xf16>
       score_mod {
       ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
         %d = arith.subi %j, %i : index
         %di = arith.index_cast %d : index to i64
         %df = arith.sitofp %di : i64 to f32
         %r = arith.addf %s, %df : f32
         attn.yield %r : f32
       } mask_mod {
       ^bb0(%b: index, %h: index, %i: index, %j: index):
         %c = arith.cmpi ule, %b, %j : index
         attn.yield %c : i1
       }
  return %o : tensor<2x1x4x8xf16>
}

// -----

// Dynamic head counts: the group size is unknown, so K/V heads are expanded
// explicitly; a dynamic head dim computes the default scale at run time.

// CHECK-LABEL: func @dynamic
// CHECK: arith.divui
// CHECK: tensor.extract
// CHECK: math.rsqrt
// CHECK-NOT: attn.sdpa
func.func @dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %init: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}

// -----

// Dropout draws from the splitmix64 hash of (seed, b, h, i, j): keep when
// u >= p, and rescale by 1 / (1 - p).

// CHECK-LABEL: func @dropout
// CHECK-DAG: %[[GOLDEN:.*]] = arith.constant -7046029254386353131 : i64
// CHECK-DAG: %[[P:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[RESCALE:.*]] = arith.constant 1.33333337 : f32
// CHECK: arith.addi %{{.*}}, %[[GOLDEN]] : i64
// CHECK: %[[U:.*]] = arith.mulf
// CHECK: %[[KEPT:.*]] = arith.cmpf oge, %[[U]], %[[P]] : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[RESCALE]] : f32
// CHECK: arith.select %[[KEPT]], %[[SCALED]], %{{.*}} : f32
func.func @dropout(%q: tensor<1x1x2x4xf32>, %init: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %p = attn.weights %q, %q outs(%init) dropout = 0.25 seed = 7 : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  return %p : tensor<1x1x2x2xf32>
}

// -----

// The log-sum-exp of the forward: row max (0 for a row with no key) plus
// the log of the row sum of exp(s - max).

// CHECK-LABEL: func @sdpa_lse
// CHECK: %[[MAX:.*]] = linalg.reduce {{.*}} dimensions = [3]
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.reduce {{.*}} dimensions = [3]
// CHECK: %[[LSE:.*]] = linalg.generic {{.*}} ins(%[[MAX]], %[[SUM]] : tensor<1x2x3xf32>, tensor<1x2x3xf32>) outs(%{{.*}} : tensor<1x2x3xf32>)
// CHECK: math.log
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.addf
// CHECK: return %{{.*}}, %[[LSE]]
func.func @sdpa_lse(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %l: tensor<1x2x3xf32>)
    -> (tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) {
  %o, %lse = attn.sdpa %q, %k, %k outs(%q) lse(%l : tensor<1x2x3xf32>)
    : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x3x8xf32>, tensor<1x2x3xf32>
  return %o, %lse : tensor<1x2x3x8xf32>, tensor<1x2x3xf32>
}

// -----

// The unfused backward with GQA (4 query heads over 2 key/value heads):
// P = exp(s - lse) from the masked scores, dV = P^T dO and dK = dS^T Q per
// query head, then summed over each group's two heads (strided slices of
// the heads, added); dP = dO V^T and
// dQ = dS K read V and K through `h floordiv 2`; dS = P (dP - rowsum(dO O))
// times the score's derivative (here the scale 1/sqrt(16)), zero where P
// is.

// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$KVH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[$PT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-LABEL: func @sdpa_grad_gqa
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x4x6x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x5x16xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x5x8xf32>, %[[O:[a-z0-9]+]]: tensor<1x4x6x8xf32>, %[[DO:[a-z0-9]+]]: tensor<1x4x6x8xf32>, %[[LSE:[a-z0-9]+]]: tensor<1x4x6xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[QK:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x6x5xf32>)
// The masked scores and their derivatives (the scale, without score_mod).
// CHECK: %[[S:.*]]:2 = linalg.generic {{.*}} outs(%[[QK]], %{{.*}} : tensor<1x4x6x5xf32>, tensor<1x4x6x5xf32>)
// CHECK: arith.cmpi sle
// CHECK: linalg.yield %{{.*}}, %[[SCALE]]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[S]]#0, %[[LSE]] : tensor<1x4x6x5xf32>, tensor<1x4x6xf32>)
// CHECK: math.exp
// CHECK: %[[DVH:.*]] = linalg.generic {indexing_maps = [#[[$PT]], {{.*}}]{{.*}} ins(%[[P]], %[[DO]] : {{.*}}) outs(%{{.*}} : tensor<1x4x5x8xf32>)
// CHECK: %[[DP:.*]] = linalg.generic {{.*}}#[[$KVH]]{{.*}} ins(%[[DO]], %[[V]] : {{.*}}) outs(%{{.*}} : tensor<1x4x6x5xf32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.*}} : tensor<1x4x6xf32>)
// CHECK: %[[DS:.*]] = linalg.generic {{.*}}#[[$ROW]]{{.*}} ins(%[[P]], %[[DP]], %[[D]], %[[S]]#1 : {{.*}})
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[DERIV:.*]]: f32, %{{.*}}: f32)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf %{{.*}}, %[[DERIV]]
// CHECK: arith.select
// CHECK: %[[DQ:.*]] = linalg.generic {{.*}}#[[$KVH]]{{.*}} ins(%[[DS]], %[[K]] : {{.*}}) outs(%{{.*}} : tensor<1x4x6x16xf32>)
// CHECK: %[[DKH:.*]] = linalg.generic {indexing_maps = [#[[$PT]], {{.*}}]{{.*}} ins(%[[DS]], %[[Q]] : {{.*}}) outs(%{{.*}} : tensor<1x4x5x16xf32>)
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %[[G:.*]] step
// CHECK: %[[HEADS:.*]] = tensor.extract_slice %[[DKH]][0, %[[R]], 0, 0] [1, 2, 5, 16] [1, %[[G]], 1, 1]
// CHECK: linalg.add ins(%{{.*}}, %[[HEADS]] : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>)
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[DVH]]
// CHECK: linalg.add
// CHECK-NOT: attn.
func.func @sdpa_grad_gqa(%q: tensor<1x4x6x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x8xf32>,
                         %o: tensor<1x4x6x8xf32>, %do: tensor<1x4x6x8xf32>, %lse: tensor<1x4x6xf32>)
    -> (tensor<1x4x6x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%q, %k, %v) causal
    : tensor<1x4x6x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6xf32>
  return %dq, %dk, %dv : tensor<1x4x6x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>
}

// -----

// score_mod in the backward: the region is inlined twice per element, for
// the score and, differentiated forward-mode, for its derivative (here
// d(2 tanh(s / 2)) = (1 - tanh^2(s / 2)), times the scale).

// CHECK-LABEL: func @sdpa_grad_softcap
// CHECK: %[[S:.*]]:2 = linalg.generic
// CHECK: ^bb0(%[[RAW:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SCALED:.*]] = arith.mulf %[[RAW]], %[[SCALE:.*]] : f32
// CHECK: math.tanh
// CHECK: %[[SCALED2:.*]] = arith.mulf %[[RAW]], %[[SCALE]] : f32
// CHECK: %[[HALF:.*]] = arith.divf %[[SCALED2]], %[[TWO:.*]] : f32
// CHECK: %[[T:.*]] = math.tanh %[[HALF]] : f32
// CHECK: %[[T2:.*]] = arith.mulf %[[T]], %[[T]] : f32
// CHECK: %[[DT:.*]] = arith.subf %{{.*}}, %[[T2]] : f32
// CHECK: %[[DSCORE:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: linalg.yield %{{.*}}, %[[DSCORE]] : f32, f32
func.func @sdpa_grad_softcap(%q: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> tensor<1x1x4x8xf32> {
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse outs(%q, %q, %q)
    : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %c = arith.constant 2.0 : f32
      %x = arith.divf %s, %c : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %c : f32
      attn.yield %r : f32
    }
  return %dq : tensor<1x1x4x8xf32>
}
