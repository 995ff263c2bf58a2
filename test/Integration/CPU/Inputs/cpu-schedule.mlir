// The attention stage of the CPU pipeline as a transform script: upstream's
// transform.apply_registered_pass runs attn-sparsify and attn-tile with the
// sizes the script chooses (instead of --cpu-pipeline options) on every
// function. Used by transform-schedule.mlir.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %classified = transform.apply_registered_pass "attn-sparsify"
        with options = {"q-tile" = 32 : i64, "kv-tile" = 16 : i64} to %funcs
        : (!transform.any_op) -> !transform.any_op
    %tiled = transform.apply_registered_pass "attn-tile"
        with options = {"q-tile" = 32 : i64, "kv-tile" = 16 : i64} to %classified
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
