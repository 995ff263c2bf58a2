// The attention core of a multi-head layer's training step as
// attn_mlir.nn.MultiheadAttention compiles it (python/attn_mlir/_heads.py
// wrote these functions): Q, K and V as column ranges of the projections'
// outputs, split into heads and transposed inside the function, the output
// merged back; the backward writes each operand's gradient into its
// columns of one gradient per projection output. Against the float64
// reference: self-attention on a packed [N, L, 3E] projection (forward and
// backward), and cross-attention with keys and values packed together,
// causal, shape-generic, at two sizes.
// RUN: attn-run %s --check --entry=packed | FileCheck %s --check-prefix=TWO
// RUN: attn-run %s --check --entry=packed_grad | FileCheck %s --check-prefix=ONE
// RUN: attn-run %s --check --entry=cross_grad_dynamic --input-shapes=3x7x32,3x11x64,3x7x32,3x7x32,3x2x7 | FileCheck %s --check-prefix=TWO
// RUN: attn-run %s --check --entry=cross_grad_dynamic --input-shapes=1x40x32,1x33x64,1x40x32,1x40x32,1x2x40 | FileCheck %s --check-prefix=TWO
// ONE-COUNT-1: relative error {{.*}} ok
// ONE-NOT: relative error
// TWO-COUNT-2: relative error {{.*}} ok
// TWO-NOT: relative error

func.func @packed(%s0: tensor<2x10x96xf32>) -> (tensor<2x10x32xf32>, tensor<2x2x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q_cols = tensor.extract_slice %s0[0, 0, 0] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %q_split = tensor.expand_shape %q_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %q_e = tensor.empty() : tensor<2x2x10x16xf32>
  %q = linalg.transpose ins(%q_split : tensor<2x10x2x16xf32>) outs(%q_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %k_cols = tensor.extract_slice %s0[0, 0, 32] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %k_split = tensor.expand_shape %k_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %k_e = tensor.empty() : tensor<2x2x10x16xf32>
  %k = linalg.transpose ins(%k_split : tensor<2x10x2x16xf32>) outs(%k_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %v_cols = tensor.extract_slice %s0[0, 0, 64] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %v_split = tensor.expand_shape %v_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %v_e = tensor.empty() : tensor<2x2x10x16xf32>
  %v = linalg.transpose ins(%v_split : tensor<2x10x2x16xf32>) outs(%v_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %e = tensor.empty() : tensor<2x2x10x16xf32>
  %l = tensor.empty() : tensor<2x2x10xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<2x2x10xf32>)  : tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32> -> tensor<2x2x10x16xf32>, tensor<2x2x10xf32>
  %out_e = tensor.empty() : tensor<2x10x2x16xf32>
  %out_t = linalg.transpose ins(%o : tensor<2x2x10x16xf32>) outs(%out_e : tensor<2x10x2x16xf32>) permutation = [0, 2, 1, 3]
  %out = tensor.collapse_shape %out_t [[0], [1], [2, 3]] : tensor<2x10x2x16xf32> into tensor<2x10x32xf32>
  return %out, %lse : tensor<2x10x32xf32>, tensor<2x2x10xf32>
}

func.func @packed_grad(%s0: tensor<2x10x96xf32>, %om: tensor<2x10x32xf32>, %dom: tensor<2x10x32xf32>, %lse: tensor<2x2x10xf32>) -> (tensor<2x10x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q_cols = tensor.extract_slice %s0[0, 0, 0] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %q_split = tensor.expand_shape %q_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %q_e = tensor.empty() : tensor<2x2x10x16xf32>
  %q = linalg.transpose ins(%q_split : tensor<2x10x2x16xf32>) outs(%q_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %k_cols = tensor.extract_slice %s0[0, 0, 32] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %k_split = tensor.expand_shape %k_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %k_e = tensor.empty() : tensor<2x2x10x16xf32>
  %k = linalg.transpose ins(%k_split : tensor<2x10x2x16xf32>) outs(%k_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %v_cols = tensor.extract_slice %s0[0, 0, 64] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %v_split = tensor.expand_shape %v_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %v_e = tensor.empty() : tensor<2x2x10x16xf32>
  %v = linalg.transpose ins(%v_split : tensor<2x10x2x16xf32>) outs(%v_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %o_cols = tensor.extract_slice %om[0, 0, 0] [2, 10, 32] [1, 1, 1] : tensor<2x10x32xf32> to tensor<2x10x32xf32>
  %o_split = tensor.expand_shape %o_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %o_e = tensor.empty() : tensor<2x2x10x16xf32>
  %o = linalg.transpose ins(%o_split : tensor<2x10x2x16xf32>) outs(%o_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %do_cols = tensor.extract_slice %dom[0, 0, 0] [2, 10, 32] [1, 1, 1] : tensor<2x10x32xf32> to tensor<2x10x32xf32>
  %do_split = tensor.expand_shape %do_cols [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %do_e = tensor.empty() : tensor<2x2x10x16xf32>
  %do = linalg.transpose ins(%do_split : tensor<2x10x2x16xf32>) outs(%do_e : tensor<2x2x10x16xf32>) permutation = [0, 2, 1, 3]
  %eq = tensor.empty() : tensor<2x2x10x16xf32>
  %ek = tensor.empty() : tensor<2x2x10x16xf32>
  %ev = tensor.empty() : tensor<2x2x10x16xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev)  : tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10xf32>
  %g0_0 = tensor.empty() : tensor<2x10x96xf32>
  %g0_1_slot = tensor.extract_slice %g0_0[0, 0, 0] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %g0_1_e = tensor.expand_shape %g0_1_slot [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %g0_1_t = linalg.transpose ins(%dq : tensor<2x2x10x16xf32>) outs(%g0_1_e : tensor<2x10x2x16xf32>) permutation = [0, 2, 1, 3]
  %g0_1_m = tensor.collapse_shape %g0_1_t [[0], [1], [2, 3]] : tensor<2x10x2x16xf32> into tensor<2x10x32xf32>
  %g0_1 = tensor.insert_slice %g0_1_m into %g0_0[0, 0, 0] [2, 10, 32] [1, 1, 1] : tensor<2x10x32xf32> into tensor<2x10x96xf32>
  %g0_2_slot = tensor.extract_slice %g0_1[0, 0, 32] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %g0_2_e = tensor.expand_shape %g0_2_slot [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %g0_2_t = linalg.transpose ins(%dk : tensor<2x2x10x16xf32>) outs(%g0_2_e : tensor<2x10x2x16xf32>) permutation = [0, 2, 1, 3]
  %g0_2_m = tensor.collapse_shape %g0_2_t [[0], [1], [2, 3]] : tensor<2x10x2x16xf32> into tensor<2x10x32xf32>
  %g0_2 = tensor.insert_slice %g0_2_m into %g0_1[0, 0, 32] [2, 10, 32] [1, 1, 1] : tensor<2x10x32xf32> into tensor<2x10x96xf32>
  %g0_3_slot = tensor.extract_slice %g0_2[0, 0, 64] [2, 10, 32] [1, 1, 1] : tensor<2x10x96xf32> to tensor<2x10x32xf32>
  %g0_3_e = tensor.expand_shape %g0_3_slot [[0], [1], [2, 3]] output_shape [2, 10, 2, 16] : tensor<2x10x32xf32> into tensor<2x10x2x16xf32>
  %g0_3_t = linalg.transpose ins(%dv : tensor<2x2x10x16xf32>) outs(%g0_3_e : tensor<2x10x2x16xf32>) permutation = [0, 2, 1, 3]
  %g0_3_m = tensor.collapse_shape %g0_3_t [[0], [1], [2, 3]] : tensor<2x10x2x16xf32> into tensor<2x10x32xf32>
  %g0_3 = tensor.insert_slice %g0_3_m into %g0_2[0, 0, 64] [2, 10, 32] [1, 1, 1] : tensor<2x10x32xf32> into tensor<2x10x96xf32>
  return %g0_3 : tensor<2x10x96xf32>
}

func.func @cross_grad_dynamic(%s0: tensor<?x?x32xf32>, %s1: tensor<?x?x64xf32>, %om: tensor<?x?x32xf32>, %dom: tensor<?x?x32xf32>, %lse: tensor<?x2x?xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0_n = tensor.dim %s0, %c0 : tensor<?x?x32xf32>
  %s0_t = tensor.dim %s0, %c1 : tensor<?x?x32xf32>
  %q_cols = tensor.extract_slice %s0[0, 0, 0] [%s0_n, %s0_t, 32] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x32xf32>
  %q_split = tensor.expand_shape %q_cols [[0], [1], [2, 3]] output_shape [%s0_n, %s0_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %q_e = tensor.empty(%s0_n, %s0_t) : tensor<?x2x?x16xf32>
  %q = linalg.transpose ins(%q_split : tensor<?x?x2x16xf32>) outs(%q_e : tensor<?x2x?x16xf32>) permutation = [0, 2, 1, 3]
  %s1_n = tensor.dim %s1, %c0 : tensor<?x?x64xf32>
  %s1_t = tensor.dim %s1, %c1 : tensor<?x?x64xf32>
  %k_cols = tensor.extract_slice %s1[0, 0, 0] [%s1_n, %s1_t, 32] [1, 1, 1] : tensor<?x?x64xf32> to tensor<?x?x32xf32>
  %k_split = tensor.expand_shape %k_cols [[0], [1], [2, 3]] output_shape [%s1_n, %s1_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %k_e = tensor.empty(%s1_n, %s1_t) : tensor<?x2x?x16xf32>
  %k = linalg.transpose ins(%k_split : tensor<?x?x2x16xf32>) outs(%k_e : tensor<?x2x?x16xf32>) permutation = [0, 2, 1, 3]
  %v_cols = tensor.extract_slice %s1[0, 0, 32] [%s1_n, %s1_t, 32] [1, 1, 1] : tensor<?x?x64xf32> to tensor<?x?x32xf32>
  %v_split = tensor.expand_shape %v_cols [[0], [1], [2, 3]] output_shape [%s1_n, %s1_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %v_e = tensor.empty(%s1_n, %s1_t) : tensor<?x2x?x16xf32>
  %v = linalg.transpose ins(%v_split : tensor<?x?x2x16xf32>) outs(%v_e : tensor<?x2x?x16xf32>) permutation = [0, 2, 1, 3]
  %om_n = tensor.dim %om, %c0 : tensor<?x?x32xf32>
  %om_t = tensor.dim %om, %c1 : tensor<?x?x32xf32>
  %o_cols = tensor.extract_slice %om[0, 0, 0] [%om_n, %om_t, 32] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x32xf32>
  %o_split = tensor.expand_shape %o_cols [[0], [1], [2, 3]] output_shape [%om_n, %om_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %o_e = tensor.empty(%om_n, %om_t) : tensor<?x2x?x16xf32>
  %o = linalg.transpose ins(%o_split : tensor<?x?x2x16xf32>) outs(%o_e : tensor<?x2x?x16xf32>) permutation = [0, 2, 1, 3]
  %dom_n = tensor.dim %dom, %c0 : tensor<?x?x32xf32>
  %dom_t = tensor.dim %dom, %c1 : tensor<?x?x32xf32>
  %do_cols = tensor.extract_slice %dom[0, 0, 0] [%dom_n, %dom_t, 32] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x32xf32>
  %do_split = tensor.expand_shape %do_cols [[0], [1], [2, 3]] output_shape [%dom_n, %dom_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %do_e = tensor.empty(%dom_n, %dom_t) : tensor<?x2x?x16xf32>
  %do = linalg.transpose ins(%do_split : tensor<?x?x2x16xf32>) outs(%do_e : tensor<?x2x?x16xf32>) permutation = [0, 2, 1, 3]
  %eq = tensor.empty(%s0_n, %s0_t) : tensor<?x2x?x16xf32>
  %ek = tensor.empty(%s0_n, %s1_t) : tensor<?x2x?x16xf32>
  %ev = tensor.empty(%s0_n, %s1_t) : tensor<?x2x?x16xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ev) causal : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?xf32>
  %g0_0 = tensor.empty(%s0_n, %s0_t) : tensor<?x?x32xf32>
  %g0_1_slot = tensor.extract_slice %g0_0[0, 0, 0] [%s0_n, %s0_t, 32] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x32xf32>
  %g0_1_e = tensor.expand_shape %g0_1_slot [[0], [1], [2, 3]] output_shape [%s0_n, %s0_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %g0_1_t = linalg.transpose ins(%dq : tensor<?x2x?x16xf32>) outs(%g0_1_e : tensor<?x?x2x16xf32>) permutation = [0, 2, 1, 3]
  %g0_1_m = tensor.collapse_shape %g0_1_t [[0], [1], [2, 3]] : tensor<?x?x2x16xf32> into tensor<?x?x32xf32>
  %g0_1 = tensor.insert_slice %g0_1_m into %g0_0[0, 0, 0] [%s0_n, %s0_t, 32] [1, 1, 1] : tensor<?x?x32xf32> into tensor<?x?x32xf32>
  %g1_0 = tensor.empty(%s1_n, %s1_t) : tensor<?x?x64xf32>
  %g1_1_slot = tensor.extract_slice %g1_0[0, 0, 0] [%s1_n, %s1_t, 32] [1, 1, 1] : tensor<?x?x64xf32> to tensor<?x?x32xf32>
  %g1_1_e = tensor.expand_shape %g1_1_slot [[0], [1], [2, 3]] output_shape [%s1_n, %s1_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %g1_1_t = linalg.transpose ins(%dk : tensor<?x2x?x16xf32>) outs(%g1_1_e : tensor<?x?x2x16xf32>) permutation = [0, 2, 1, 3]
  %g1_1_m = tensor.collapse_shape %g1_1_t [[0], [1], [2, 3]] : tensor<?x?x2x16xf32> into tensor<?x?x32xf32>
  %g1_1 = tensor.insert_slice %g1_1_m into %g1_0[0, 0, 0] [%s1_n, %s1_t, 32] [1, 1, 1] : tensor<?x?x32xf32> into tensor<?x?x64xf32>
  %g1_2_slot = tensor.extract_slice %g1_1[0, 0, 32] [%s1_n, %s1_t, 32] [1, 1, 1] : tensor<?x?x64xf32> to tensor<?x?x32xf32>
  %g1_2_e = tensor.expand_shape %g1_2_slot [[0], [1], [2, 3]] output_shape [%s1_n, %s1_t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %g1_2_t = linalg.transpose ins(%dv : tensor<?x2x?x16xf32>) outs(%g1_2_e : tensor<?x?x2x16xf32>) permutation = [0, 2, 1, 3]
  %g1_2_m = tensor.collapse_shape %g1_2_t [[0], [1], [2, 3]] : tensor<?x?x2x16xf32> into tensor<?x?x32xf32>
  %g1_2 = tensor.insert_slice %g1_2_m into %g1_1[0, 0, 32] [%s1_n, %s1_t, 32] [1, 1, 1] : tensor<?x?x32xf32> into tensor<?x?x64xf32>
  return %g0_1, %g1_2 : tensor<?x?x32xf32>, tensor<?x?x64xf32>
}
