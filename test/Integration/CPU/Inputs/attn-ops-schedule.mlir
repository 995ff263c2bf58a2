// A schedule the pipeline's options cannot express (used by
// transform-attn-ops.mlir): each of a function's two attention ops gets
// tiles and register blocks of its own, and the first is split over pairs
// of heads through TilingInterface before attn's loop nest is built inside
// each pair.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpas = transform.structured.match ops{["attn.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %self, %cross = transform.split_handle %sdpas
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    // Causal self-attention: (batch, 2 heads) tiles, each a 64 x 32 nest
    // blocked 4 x 16.
    %pair, %heads = transform.structured.tile_using_forall %self tile_sizes [1, 2, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %self_loop = transform.attn.tile %pair {q_tile = 64, kv_tile = 32}
        : (!transform.any_op) -> !transform.any_op
    %self_blocked = transform.attn.register_block %self_loop {m_block = 4, n_block = 16}
        : (!transform.any_op) -> !transform.any_op

    // Cross-attention over a longer memory, Dv = 128: 16-row tiles of
    // 64 keys, V in panels of 32 columns, blocked 2 x 32.
    %cross_loop = transform.attn.tile %cross {q_tile = 16, kv_tile = 64, value_panel = 32}
        : (!transform.any_op) -> !transform.any_op
    %cross_blocked = transform.attn.register_block %cross_loop {m_block = 2, n_block = 32}
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
