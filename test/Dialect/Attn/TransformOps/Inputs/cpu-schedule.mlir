// The attention part of the CPU pipeline as attn's own transform ops, with
// the sizes schedule-equals-passes.mlir gives the passes: block classes and
// the FlashAttention loop nest for every attn.sdpa, the backward's nest for
// every attn.sdpa_grad, then register blocks in each function.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root
        : (!transform.any_op) -> !transform.op<"attn.sdpa">
    %classified = transform.attn.sparsify %sdpa {q_tile = 32, kv_tile = 16}
        : (!transform.op<"attn.sdpa">) -> !transform.op<"attn.sdpa">
    %loops = transform.attn.tile %classified {q_tile = 32, kv_tile = 16}
        : (!transform.op<"attn.sdpa">) -> !transform.op<"scf.forall">
    %grad = transform.structured.match ops{["attn.sdpa_grad"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %grad_loops = transform.attn.tile %grad {q_tile = 32, kv_tile = 16}
        : (!transform.any_op) -> !transform.any_op
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %blocked = transform.attn.register_block %funcs {m_block = 6, n_block = 16, row_elements = 64}
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
