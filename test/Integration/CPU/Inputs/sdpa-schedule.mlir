// A schedule for attn.sdpa written as a transform script: every attn.sdpa
// tiled through TilingInterface into an scf.forall over one batch, two
// query heads and 64 query rows at a time (each tile then lowered by the
// CPU pipeline's attn-tile). Used by transform-tiled-sdpa.mlir.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %sdpa tile_sizes [1, 2, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
