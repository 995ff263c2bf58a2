// The tiling steps of cpu-schedule.mlir without register blocks: the
// loop nests transform.attn.tile builds must verify on their own (no
// greedy rewrite after them hoists a misplaced constant).
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
    transform.yield
  }
}
