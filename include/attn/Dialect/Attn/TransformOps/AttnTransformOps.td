//===- AttnTransformOps.td - attn ops of the transform dialect -*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The CPU schedule of attention as transform ops: the block classification,
// the FlashAttention loop nest and the register blocking of attn-sparsify,
// attn-tile and attn-vectorize-tiles, applied to the ops a handle names, with
// the sizes the script gives (the passes apply one choice to every op).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMOPS_ATTNTRANSFORMOPS_TD
#define ATTN_DIALECT_ATTN_TRANSFORMOPS_ATTNTRANSFORMOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

/// An op that rewrites each payload op of its operand on its own
/// (applyToOne), consuming the handle and returning one to the result.
class AttnTransformOp<string mnemonic, list<Trait> traits = []>
    : Op<Transform_Dialect, "attn." # mnemonic,
         !listconcat([FunctionalStyleTransformOpTrait,
                      MemoryEffectsOpInterface, TransformOpInterface,
                      TransformEachOpTrait,
                      ReportTrackingListenerFailuresOpTrait], traits)> {
  let assemblyFormat = "$target attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    ::mlir::DiagnosedSilenceableFailure applyToOne(
        ::mlir::transform::TransformRewriter &rewriter,
        ::mlir::Operation *target,
        ::mlir::transform::ApplyToEachResultList &results,
        ::mlir::transform::TransformState &state);
  }];
}

def Attn_PositiveI64 : ConfinedAttr<I64Attr, [IntPositive]>;
def Attn_NonNegativeI64 : ConfinedAttr<I64Attr, [IntNonNegative]>;

def AttnSparsifyOp : AttnTransformOp<"sparsify"> {
  let summary = "Classify the blocks of attn.sdpa ops (attn-sparsify)";
  let description = [{
    `--attn-sparsify` on each `attn.sdpa` that `target` names: where its
    masks are not all bands (a boolean `mask`, a `mask_mod` reading a
    tensor, a block layout), code that classifies its
    `q_tile x kv_tile` blocks as empty, partial or full is built in front
    of it, once per call, and the classes are attached to it
    (`block_classes`, `block_size`). Ops whose masks are bands are left as
    they are: `transform.attn.tile` derives their loop bounds from the op.
    The sizes are `attn-sparsify`'s options and must be those the op is
    then tiled with (an op's `block_size` sets both).

    #### Return modes

    The op is modified in place: `transformed` names the same ops.
    Silenceable failure if a payload op is not an `attn.sdpa`.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                   DefaultValuedAttr<Attn_PositiveI64, "128">:$q_tile,
                   DefaultValuedAttr<Attn_PositiveI64, "64">:$kv_tile,
                   DefaultValuedAttr<Attn_NonNegativeI64, "0">:$small_head_kv_tile);
  let results = (outs TransformHandleTypeInterface:$transformed);
}

def AttnTileOp : AttnTransformOp<"tile"> {
  let summary = "Tile attention into its FlashAttention loop nest (attn-tile)";
  let description = [{
    `--attn-tile` on each `attn.sdpa` or `attn.sdpa_grad` that `target`
    names, with this op's sizes (`attn-tile`'s options of the same names):
    the forward becomes an `scf.forall` over (batch, query head, query tile
    of `q_tile` rows) around `scf.for` loops over key tiles of `kv_tile`
    keys with an online softmax (or over key chunks, for decode's
    split-KV); the backward its FlashAttention-2 nest. Unlike the pass,
    each op may get sizes of its own, and an op that
    `transform.structured.tile_using_forall` already tiled through
    TilingInterface is tiled within its tile.

    #### Return modes

    `loop` names the parallel loop (`scf.forall`) that replaces each op.
    Silenceable failure, the payload left as it was, for an op of another
    kind, an `attn.sdpa` with a block-sparse layout (apply
    `transform.attn.sparsify` first) or an `attn.sdpa_grad` that only the
    reference lowering computes (a block layout, dynamic head sizes).
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                   DefaultValuedAttr<Attn_PositiveI64, "128">:$q_tile,
                   DefaultValuedAttr<Attn_PositiveI64, "64">:$kv_tile,
                   DefaultValuedAttr<Attn_NonNegativeI64, "0">:$small_head_kv_tile,
                   UnitAttr:$bf16_pairs,
                   DefaultValuedAttr<Attn_NonNegativeI64, "0">:$grad_key_chunks,
                   DefaultValuedAttr<Attn_NonNegativeI64, "0">:$decode_key_chunks,
                   DefaultValuedAttr<Attn_NonNegativeI64, "0">:$value_panel);
  let results = (outs TransformHandleTypeInterface:$loop);
}

def AttnRegisterBlockOp : AttnTransformOp<"register_block"> {
  let summary = "Register-block and vectorise the tiles in an op (attn-vectorize-tiles)";
  let description = [{
    `--attn-vectorize-tiles` on the ops nested in each op `target` names
    (the loop `transform.attn.tile` returns, or a function): contractions
    into `m_block x n_block` register blocks whose accumulators stay in
    registers across the K loop, row ops vectorised, a row of at most
    `row_elements` as one vector; with `bf16_dot`, bf16 pair contractions
    as AVX512-BF16 dot products; `max_m_block` and `lanes` (the f32 lanes
    of a vector register, which dot-form blocks take K in) as the pass's
    options. The
    CPU pipeline chooses these from its target model for every op; here a
    script chooses them per loop. The pipeline's own
    `attn-vectorize-tiles`, run later, blocks with its sizes only what is
    still linalg then: ops outside the targets (such as a packing of K
    before the loop).

    Handles to ops nested in the target are invalidated.

    #### Return modes

    `transformed` names the same ops. Silenceable failure for a target
    that holds no tiles (no regions, or a linalg op, which would be
    rewritten itself); definite failure if the vector lowering does not
    converge (the error names it).
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                   DefaultValuedAttr<Attn_PositiveI64, "4">:$m_block,
                   DefaultValuedAttr<Attn_PositiveI64, "16">:$n_block,
                   DefaultValuedAttr<Attn_PositiveI64, "128">:$row_elements,
                   UnitAttr:$bf16_dot,
                   DefaultValuedAttr<Attn_NonNegativeI64, "0">:$max_m_block,
                   DefaultValuedAttr<Attn_PositiveI64, "8">:$lanes);
  let results = (outs TransformHandleTypeInterface:$transformed);
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMOPS_ATTNTRANSFORMOPS_TD
