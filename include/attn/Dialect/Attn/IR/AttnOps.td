//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// f64 is accepted so that the float64 reference (`--attn-widen-to-f64`, used
// by `attn-run --check`) is the same op lowered by the same passes.
def Attn_FloatElement : AnyTypeOf<[F32, F16, BF16, F64]>;
def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Attn_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16, F64]>;
def Attn_LengthTensor : RankedTensorOf<[I32, I64]>;
def Attn_BlockListTensor : 1DTensorOf<[I32, I64]>;
def Attn_BlockClassTensor : 4DTensorOf<[I8]>;
def Attn_SeedTensor : 0DTensorOf<[I64]>;
def Attn_ScaleTensor : 0DTensorOf<[F32, F64]>;
def Attn_PageTableTensor : 2DTensorOf<[I32, I64]>;
// Row statistics (the log-sum-exp) are kept in the accumulator type: f32,
// or f64 for the float64 reference.
def Attn_StatTensor : RankedTensorOf<[F32, F64]>;

//===----------------------------------------------------------------------===//
// Pieces shared by the ops that compute attention scores
//===----------------------------------------------------------------------===//

// Every op that forms softmax(mask(scale * Q K^T)) takes the same masks,
// attributes and modifier regions. They are listed once here so that
// attn.sdpa, attn.weights and attn.sdpa_grad cannot drift apart; each op
// puts its own `outs` between the operands and the attributes.
defvar Attn_ScoreOperands = (ins
  Optional<Attn_MaskTensor>:$mask,
  Optional<Attn_LengthTensor>:$kv_lens,
  Optional<Attn_BlockListTensor>:$block_offsets,
  Optional<Attn_BlockListTensor>:$block_indices,
  Optional<Attn_BlockClassTensor>:$block_classes,
  Optional<Attn_SeedTensor>:$dropout_seed,
  Optional<Attn_ScaleTensor>:$scale_value
);

defvar Attn_ScoreAttributes = (ins
  OptionalAttr<F32Attr>:$scale,
  UnitAttr:$causal,
  OptionalAttr<DenseI64ArrayAttr>:$window,
  DefaultValuedAttr<Attn_AlignmentAttr, "::mlir::attn::Alignment::top_left">:$alignment,
  DefaultValuedAttr<F64Attr, "0.0">:$dropout_p,
  DefaultValuedAttr<I64Attr, "0">:$seed,
  OptionalAttr<DenseI64ArrayAttr>:$block_size
);

defvar Attn_ScoreOperandFormat = [{
  (`mask` `(` $mask^ `:` type($mask) `)`)?
  (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
  (`blocks` `(` $block_offsets^ `,` $block_indices `:` type($block_offsets) `,` type($block_indices) `)`)?
  (`block_classes` `(` $block_classes^ `:` type($block_classes) `)`)?
  (`dropout_seed` `(` $dropout_seed^ `:` type($dropout_seed) `)`)?
  (`scale_value` `(` $scale_value^ `:` type($scale_value) `)`)?
}];

defvar Attn_ScoreAttributeFormat = [{
  (`scale` `=` $scale^)?
  (`causal` $causal^)?
  (`window` `=` $window^)?
  (`align` `=` $alignment^)?
  (`dropout` `=` $dropout_p^)?
  (`seed` `=` $seed^)?
  (`block_size` `=` $block_size^)?
  attr-dict
}];

defvar Attn_ScoreModifierRegionFormat = [{
  (`score_mod` $score_mod^)?
  (`mask_mod` $mask_mod^)?
}];

defvar Attn_ScoreModifierDoc = [{
    Scores are formed in `f32` in this order:

    1. `s = scale * dot(q[b, h, i, :], k[b, h / (Hq / Hkv), j, :])`, where
       `scale` is the `scale` attribute, or the value of the
       `scale_value(%s : tensor<f32>)` operand (or `tensor<f64>`) when one
       is given (a scale that differs between layers or calls without
       recompiling), and defaults to `1 / sqrt(D)`.
    2. An additive float `mask` is added: `s += mask[b, h, i, j]`.
    3. The `score_mod` region, if present, maps `s` to a new score. It receives
       `(s : f32, b, h, i, j : index)` and yields an `f32`.
    4. Key `j` takes part in row `i` only if every keep condition holds: a
       boolean `mask` (`true` = keep), the `mask_mod` region (receives
       `(b, h, i, j : index)`, yields `i1`, `true` = keep), `causal`
       (`j <= i + off`), `window = [left, right]`
       (`i + off - left <= j <= i + off + right`) and `kv_lens`
       (`j < kv_lens[b]`). The offset `off` is 0 for `align = top_left` (the
       default) and `L - Sq` for `align = bottom_right`, where `L` is
       `kv_lens[b]` when given and `Skv` otherwise. With a block-sparse
       layout `blocks(offsets, indices)` and `block_size = [bq, bk]`, key
       `j` takes part in row `i` only if block `j / bk` is listed for query
       block `i / bq`: in the CSR form of FlashInfer's BSR, the listed key
       blocks of query block `r` are `indices[offsets[r] : offsets[r + 1]]`
       (`offsets` has `ceil(Sq / bq) + 1` entries). With `block_classes`
       (`[B or 1, Hq or 1, ceil(Sq / bq), ceil(Skv / bk)]`, `i8`), a tile
       of class 0 takes no part; classes 1 (some keys visible) and 2 (every
       key visible) are a promise about the other keep conditions that
       `--attn-sparsify` computes and the tiled lowering relies on (class 2
       tiles skip the mask).
    5. Softmax along `j` with the row maximum subtracted. A row in which no key
       takes part (or all scores are `-inf`) yields probabilities of 0, never
       NaN.
    6. With `dropout = p > 0`, each probability is kept with probability
       `1 - p` and scaled by `1 / (1 - p)`. The keep decision is a pure
       function of `(seed, b, h, i, j)` (see docs/Numerics.md), so every
       backend drops the same elements. The seed is the `seed` attribute,
       or the value of the `dropout_seed(%s : tensor<i64>)` operand when
       one is given: a seed that changes from call to call (a training
       step's) without recompiling.

    `mask` broadcasts to `[B, Hq, Sq, Skv]` like NumPy: its dimensions are
    aligned on the right, and each is either 1 or the matching extent.
}];

//===----------------------------------------------------------------------===//
// attn.sdpa
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_Op<"sdpa", [
    AttrSizedOperandSegments, Pure,
    DestinationStyleOpInterface,
    AllTypesMatch<["init", "result"]>]> {
  let summary = "scaled dot-product attention";
  let description = !strconcat([{
    Computes `softmax(mask(scale * Q K^T)) V` for every batch and head.

    Shapes: `query` is `[B, Hq, Sq, D]`, `key` is `[B, Hkv, Skv, D]`, `value`
    is `[B, Hkv, Skv, Dv]` and the result is `[B, Hq, Sq, Dv]`. `Hq` must be a
    multiple of `Hkv`: query head `h` reads key/value head `h / (Hq / Hkv)`
    (grouped-query and multi-query attention). `Sq` and `Skv` may differ
    (cross-attention) and so may `D` and `Dv`. Any dimension may be dynamic.
    `query`, `key`, `value` and the result share one element type (`f32`,
    `f16`, `bf16`, or `f64`, which the float64 reference uses); the op is in
    destination-passing style and `outs` gives the tensor the result is
    written into.

    With `lse(%init : tensor<BxHqxSqxf32>)` in `outs`, the op also returns
    the log-sum-exp of every row's scores, `lse[b, h, i] = log(sum_j
    exp(s[b, h, i, j]))` over the keys that take part (before dropout), in
    the accumulator type (`f32`; `f64` for `f64` inputs): the statistic
    `attn.sdpa_grad` recomputes the probabilities from. A row in which no
    key takes part has `lse = -inf`.

  }], Attn_ScoreModifierDoc, [{

    Example:

    ```mlir
    %o = attn.sdpa %q, %k, %v mask(%m : tensor<2x1x1x256xi1>) outs(%init)
           causal align = <bottom_right>
         : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>
           -> tensor<2x8x128x64xf16>
    ```

    With a FlexAttention-style modifier (ALiBi-like bias):

    ```mlir
    %o = attn.sdpa %q, %k, %v outs(%init)
         : tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
           -> tensor<1x4x64x32xf32>
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %d = arith.subi %j, %i : index
           %di = arith.index_cast %d : index to i64
           %df = arith.sitofp %di : i64 to f32
           %r = arith.addf %s, %df : f32
           attn.yield %r : f32
         }
    ```
  }]);

  let arguments = !con((ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                            Attn_FloatTensor:$value),
                       Attn_ScoreOperands,
                       (ins Attn_FloatTensor:$init,
                            Optional<Attn_StatTensor>:$lse_init),
                       Attn_ScoreAttributes);
  let results = (outs Attn_FloatTensor:$result,
                      Optional<Attn_StatTensor>:$lse);
  let regions = (region MaxSizedRegion<1>:$score_mod,
                        MaxSizedRegion<1>:$mask_mod);

  let assemblyFormat = !strconcat([{ $query `,` $key `,` $value }],
      Attn_ScoreOperandFormat,
      [{ `outs` `(` $init `)`
         (`lse` `(` $lse_init^ `:` type($lse_init) `)`)? }],
      Attn_ScoreAttributeFormat,
      [{ `:` type($query) `,` type($key) `,` type($value) `->` type($result)
         (`,` type($lse)^)? }],
      Attn_ScoreModifierRegionFormat);

  let extraClassDeclaration = [{
    /// The init and, when the op returns the log-sum-exp, its init: two
    /// consecutive operands.
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(
          getOperation(), getInitMutable().getOperandNumber(),
          getLseInit() ? 2 : 1);
    }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.gather_pages
//===----------------------------------------------------------------------===//

def Attn_GatherPagesOp : Attn_Op<"gather_pages", [Pure]> {
  let summary = "a paged key/value cache as the [B, H, S, D] tensor it holds";
  let description = [{
    Reads a paged key or value cache as the contiguous `[B, H, S, D]`
    tensor that `attn.sdpa` takes, so that a paged cache is an operand of
    the same op rather than a second one:

    ```
    result[b, h, j, d] = pages[page_table[b, j / P], j % P, h, d]   (nhd)
    result[b, h, j, d] = pages[page_table[b, j / P], h, j % P, d]   (hnd)
    ```

    `pages` is `[num_pages, P, H, D]` (P keys per page; `layout = <nhd>`,
    the default: FlashInfer's "NHD" caches and vLLM's FlashAttention
    backend, the heads of a key together) or, with `layout = <hnd>`,
    `[num_pages, H, P, D]` (FlashInfer's "HND": a head's keys of a page in
    one contiguous run, which reads faster on CPUs), and
    `page_table` is `[B, max_pages]` (`i32` or `i64`): the pages of batch
    `b`, in key order. The result is `[B, H, max_pages * P, D]`; the keys a
    sequence really has are given to the consumer as `kv_lens`, so that
    positions past a sequence's length take no part whatever the table
    holds there. A table entry outside `[0, num_pages)` reads the nearest
    page instead (nothing is read out of bounds); only the keys `kv_lens`
    masks may come from such entries (a compiled entry point whose table,
    cache and `kv_lens` are parameters refuses a call where others do:
    attn-check-abi). Keys that `kv_lens` masks take no
    part in the result as long as they are finite: the tiled lowerings
    multiply the rows of V in a partial tile by probabilities of 0, and 0
    times an infinity or a NaN is NaN, so a cache's unused positions must
    not hold those (a fresh cache zeroed, or written only with finite
    values, satisfies this).

    The tiled CPU lowering (`attn-tile`) reads the key tiles of an
    `attn.sdpa` whose keys or values are gathered straight from their pages
    (a tile within a page is a slice of it; a tile of whole pages is
    assembled from them), visiting only the tiles `kv_lens` leaves; every
    other consumer, and the reference lowering, reads the gathered tensor
    (`attn-lower-to-linalg` writes it with a `linalg.generic`).

    Example (a decode step over 16-key pages):

    ```mlir
    %k = attn.gather_pages %k_cache[%table]
       : tensor<512x16x8x128xf32>, tensor<4x64xi32> -> tensor<4x8x1024x128xf32>
    ```
  }];

  let arguments = (ins Attn_FloatTensor:$pages,
                       Attn_PageTableTensor:$page_table,
                       DefaultValuedAttr<Attn_PageLayoutAttr,
                           "::mlir::attn::PageLayout::nhd">:$layout);
  let results = (outs Attn_FloatTensor:$result);

  let assemblyFormat = [{
    $pages `[` $page_table `]` (`layout` `=` $layout^)? attr-dict
    `:` type($pages) `,` type($page_table) `->` type($result)
  }];

  let extraClassDeclaration = [{
    /// The dimensions of `pages` that index a page's keys and the heads.
    PageCacheDims getCacheDims() { return getPageCacheDims(getLayout()); }
    /// Keys per page (P), or ShapedType::kDynamic.
    int64_t getStaticPageSize() {
      return getPages().getType().getDimSize(getCacheDims().slot);
    }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.append_pages
//===----------------------------------------------------------------------===//

def Attn_AppendPagesOp : Attn_Op<"append_pages", [
    Pure, DestinationStyleOpInterface,
    AllTypesMatch<["cache", "result"]>]> {
  let summary = "new keys or values written into a paged cache";
  let description = [{
    Writes `T` new rows per sequence into a paged cache (the layout
    `attn.gather_pages` reads) and returns the updated cache:

    ```
    cache[page_table[b, p / P], p % P, h, :] = rows[b, h, t, :]   (nhd)
        where p = positions[b] + t, for t in [0, T)
    ```

    `rows` is `[B, H, T, D]` (the projected keys or values of this step),
    `cache` is `[num_pages, P, H, D]` (or `[num_pages, H, P, D]` with
    `layout = <hnd>`, as `attn.gather_pages`), `page_table` is `[B, max_pages]`
    and `positions` (`[B]`, `i32` or `i64`) is where each sequence's new
    rows start, its current length (the `kv_lens` of the step before).
    A generation step appends its keys and values, then attends over the
    cache with `kv_lens = positions + T`. A row whose position falls
    outside the table (negative, or at or past `max_pages * P`) or whose
    table entry is outside `[0, num_pages)` is not written: nothing is
    written out of bounds. Sequences must not share the pages they write.
    A compiled entry point whose table and positions are parameters refuses
    a call that breaks any of these before anything is written
    (attn-check-abi).

    The CPU pipeline compiles it; the CUDA pipeline does not take it yet
    (an error says so). The op is in destination-passing style: `cache` is
    the destination.
    Inside a function it is updated in place; a cache passed as a function
    argument is read-only there (attn-read-only-inputs), so the function's
    result is a copy of it with the rows written.

    Example (one decode step of 4 sequences):

    ```mlir
    %kc2 = attn.append_pages %k_new into %k_cache[%table] at %lens
         : tensor<4x8x1x128xf32>, tensor<512x16x8x128xf32>, tensor<4x64xi32>,
           tensor<4xi32> -> tensor<512x16x8x128xf32>
    ```
  }];

  let arguments = (ins Attn_FloatTensor:$rows, Attn_FloatTensor:$cache,
                       Attn_PageTableTensor:$page_table,
                       Attn_LengthTensor:$positions,
                       DefaultValuedAttr<Attn_PageLayoutAttr,
                           "::mlir::attn::PageLayout::nhd">:$layout);
  let results = (outs Attn_FloatTensor:$result);

  let assemblyFormat = [{
    $rows `into` $cache `[` $page_table `]` `at` $positions
    (`layout` `=` $layout^)? attr-dict
    `:` type($rows) `,` type($cache) `,` type($page_table) `,`
    type($positions) `->` type($result)
  }];

  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getCacheMutable();
    }
    /// The dimensions of `cache` that index a page's keys and the heads.
    PageCacheDims getCacheDims() { return getPageCacheDims(getLayout()); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.pad_sequences, attn.unpad_sequences
//===----------------------------------------------------------------------===//

// Where a packed batch's sequences start: `[B + 1]` row offsets, i32 or
// i64 (FlashAttention's `cu_seqlens`).
def Attn_SequenceOffsetTensor : 1DTensorOf<[I32, I64]>;

defvar Attn_SequenceBoundsDoc = [{
    A packed batch holds `B` sequences one after another in `T` rows:
    sequence `b` is rows `[cu_seqlens[b], cu_seqlens[b + 1])`, as in
    FlashAttention's varlen API. Offsets are clamped to `[0, T]`, and a
    sequence's length is `len[b] = min(max(cu_seqlens[b + 1] -
    cu_seqlens[b], 0), S)`, where `S` is the padded length: a sequence
    longer than `S` is cut to its first `S` rows, and nothing is read or
    written out of bounds whatever the offsets hold. In the padded batch,
    sequence `b` occupies positions `[off[b], off[b] + len[b])` with
    `off[b] = 0` for `align = <top_left>` (the default, padding after the
    sequence) and `off[b] = S - len[b]` for `align = <bottom_right>`
    (padding before it).

    Varlen attention is these ops around `attn.sdpa`: queries padded
    `bottom_right`, keys and values `top_left`, the keys' lengths as
    `kv_lens`, and the scores aligned `bottom_right`, so that a causal or
    windowed mask relates query `i` of a sequence to key
    `i + len_k[b] - len_q[b]` as FlashAttention's varlen causal does. With
    those alignments the padding rows of a causal self-attention see no
    key: the tiled lowering skips their tiles.
}];

def Attn_PadSequencesOp : Attn_Op<"pad_sequences", [Pure]> {
  let summary = "a packed batch of variable-length sequences, padded";
  let description = !strconcat([{
    Reads a packed batch `[T, H, D]` as the `[B, H, S, D]` tensor that
    `attn.sdpa` takes, and the sequences' lengths `[B]` (in the offsets'
    element type), the `kv_lens` of its keys:

    ```
    result[b, h, off[b] + r, d] = packed[cu_seqlens[b] + r, h, d]
        for r in [0, len[b]); 0 at every other position
    ```

  }], Attn_SequenceBoundsDoc, [{

    `S`, the result's dimension 2, must be static: it bounds the longest
    sequence a compiled function takes.

    Example (three prompts of up to 128 tokens, packed in 300 rows):

    ```mlir
    %k, %k_lens = attn.pad_sequences %k_packed[%cu_k]
        : tensor<300x8x64xf32>, tensor<4xi32>
        -> tensor<3x8x128x64xf32>, tensor<3xi32>
    ```
  }]);

  let arguments = (ins Attn_FloatTensor:$packed,
                       Attn_SequenceOffsetTensor:$cu_seqlens,
                       DefaultValuedAttr<Attn_AlignmentAttr,
                           "::mlir::attn::Alignment::top_left">:$alignment);
  let results = (outs Attn_FloatTensor:$result, Attn_LengthTensor:$lengths);

  let assemblyFormat = [{
    $packed `[` $cu_seqlens `]` (`align` `=` $alignment^)? attr-dict
    `:` type($packed) `,` type($cu_seqlens) `->` type($result) `,`
    type($lengths)
  }];

  let hasVerifier = 1;
}

def Attn_UnpadSequencesOp : Attn_Op<"unpad_sequences", [
    Pure, DestinationStyleOpInterface,
    AllTypesMatch<["init", "result"]>]> {
  let summary = "a padded batch of variable-length sequences, packed";
  let description = !strconcat([{
    The inverse of `attn.pad_sequences`: writes each sequence of a padded
    batch `[B, H, S, D]` (an `attn.sdpa` result) into its rows of the
    packed `[T, H, D]` destination `init`:

    ```
    result[cu_seqlens[b] + r, h, d] = padded[b, h, off[b] + r, d]
        for r in [0, len[b])
    ```

    Rows that no sequence covers keep `init`'s values.

  }], Attn_SequenceBoundsDoc, [{

    Example:

    ```mlir
    %o = attn.unpad_sequences %o_padded[%cu_q] align = <bottom_right>
         outs(%init) : tensor<3x8x128x64xf32>, tensor<4xi32>
         -> tensor<300x8x64xf32>
    ```
  }]);

  let arguments = (ins Attn_FloatTensor:$padded,
                       Attn_SequenceOffsetTensor:$cu_seqlens,
                       Attn_FloatTensor:$init,
                       DefaultValuedAttr<Attn_AlignmentAttr,
                           "::mlir::attn::Alignment::top_left">:$alignment);
  let results = (outs Attn_FloatTensor:$result);

  let assemblyFormat = [{
    $padded `[` $cu_seqlens `]` (`align` `=` $alignment^)? `outs` `(` $init `)`
    attr-dict `:` type($padded) `,` type($cu_seqlens) `->` type($result)
  }];

  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.weights
//===----------------------------------------------------------------------===//

def Attn_WeightsOp : Attn_Op<"weights", [
    AttrSizedOperandSegments, Pure,
    DestinationStyleOpInterface,
    AllTypesMatch<["init", "result"]>]> {
  let summary = "attention probabilities (the softmax of attn.sdpa)";
  let description = !strconcat([{
    Computes the attention probabilities `P = softmax(mask(scale * Q K^T))`
    that `attn.sdpa` multiplies with `V`, as a `[B, Hq, Sq, Skv]` tensor.
    It takes the same operands, attributes and regions as `attn.sdpa` except
    `value`, and follows the same rules. It exists for callers that must
    return the weights themselves, such as `attn.multihead` with a weights
    result (PyTorch `need_weights=True`); it materialises `Sq x Skv` values by
    definition, so tiling passes leave it alone.

  }], Attn_ScoreModifierDoc, [{

    Example:

    ```mlir
    %p = attn.weights %q, %k outs(%init) causal
         : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x128xf32>
    ```
  }]);

  let arguments = !con((ins Attn_FloatTensor:$query, Attn_FloatTensor:$key),
                       Attn_ScoreOperands, (ins Attn_FloatTensor:$init),
                       Attn_ScoreAttributes);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region MaxSizedRegion<1>:$score_mod,
                        MaxSizedRegion<1>:$mask_mod);

  let assemblyFormat = !strconcat([{ $query `,` $key }],
      Attn_ScoreOperandFormat, [{ `outs` `(` $init `)` }],
      Attn_ScoreAttributeFormat,
      [{ `:` type($query) `,` type($key) `->` type($result) }],
      Attn_ScoreModifierRegionFormat);

  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.sdpa_grad
//===----------------------------------------------------------------------===//

def Attn_SdpaGradOp : Attn_Op<"sdpa_grad", [
    AttrSizedOperandSegments, Pure,
    DestinationStyleOpInterface,
    AllTypesMatch<["query", "query_grad_init", "query_grad"]>,
    AllTypesMatch<["key", "key_grad_init", "key_grad"]>,
    AllTypesMatch<["value", "value_grad_init", "value_grad"]>,
    AllTypesMatch<["out", "out_grad"]>]> {
  let summary = "gradients of scaled dot-product attention";
  let description = !strconcat([{
    The backward of `attn.sdpa`: given the forward's operands, its result
    `out` (`O`), the gradient of a loss with respect to it (`out_grad`,
    `dO`) and the forward's row log-sum-exp `lse` (from `attn.sdpa`'s `lse`
    result), returns the gradients `dQ`, `dK` and `dV` of that loss with
    respect to `query`, `key` and `value`, written into the three `outs`.
    Masks, attributes and regions must be the forward's: the gradient is
    that of the same function.

    With `P` the probabilities the forward multiplied with `V` (recomputed
    as `exp(s - lse)` from the scores `s` of the rules below, then dropout
    with the forward's keep decisions, the same pure function of
    `(seed, b, h, i, j)`):

    - `dV[b, g, j] = sum over the query heads h of group g and rows i of
      P[b, h, i, j] dO[b, h, i]`;
    - `dP = dO V^T` (dropout applied to it as to `P`), and
      `dS = P_undropped * (dP - rowsum(dO * O))`;
    - through `score_mod` by the chain rule (`dS` times the derivative of
      the region with respect to its score argument);
    - `dQ = scale * dS K`, `dK[b, g] = scale * sum over the group's query
      heads of dS^T Q`.

    Keys that take no part in a row (masks, `mask_mod`, causal, window,
    `kv_lens`, block layouts) have `P = 0` and contribute nothing; a row in
    which no key takes part (`lse = -inf`) has zero gradients. `mask_mod`
    and boolean masks have no gradient; additive masks are inputs the
    gradients are not taken for.

    Shapes: as `attn.sdpa`, with `out` and `out_grad` `[B, Hq, Sq, Dv]` in
    the inputs' element type and `lse` `[B, Hq, Sq]` in the accumulator
    type (`f32`; `f64` for `f64` inputs). The gradients have the types of
    `query`, `key` and `value`.

  }], Attn_ScoreModifierDoc, [{

    Example:

    ```mlir
    %o, %lse = attn.sdpa %q, %k, %v outs(%init) lse(%lse_init : tensor<2x8x128xf32>) causal
        : tensor<2x8x128x64xf32>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>
          -> tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
    %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
        outs(%dq_init, %dk_init, %dv_init) causal
        : tensor<2x8x128x64xf32>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>,
          tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
    ```
  }]);

  let arguments = !con((ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                            Attn_FloatTensor:$value, Attn_FloatTensor:$out,
                            Attn_FloatTensor:$out_grad,
                            Attn_StatTensor:$lse),
                       Attn_ScoreOperands,
                       (ins Attn_FloatTensor:$query_grad_init,
                            Attn_FloatTensor:$key_grad_init,
                            Attn_FloatTensor:$value_grad_init),
                       Attn_ScoreAttributes);
  let results = (outs Attn_FloatTensor:$query_grad,
                      Attn_FloatTensor:$key_grad,
                      Attn_FloatTensor:$value_grad);
  let regions = (region MaxSizedRegion<1>:$score_mod,
                        MaxSizedRegion<1>:$mask_mod);

  let assemblyFormat = !strconcat(
      [{ $query `,` $key `,` $value `,` $out `,` $out_grad `,` $lse }],
      Attn_ScoreOperandFormat,
      [{ `outs` `(` $query_grad_init `,` $key_grad_init `,` $value_grad_init `)` }],
      Attn_ScoreAttributeFormat,
      [{ `:` type($query) `,` type($key) `,` type($value) `,` type($out) `,`
         type($lse) }],
      Attn_ScoreModifierRegionFormat);

  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(
          getOperation(), getQueryGradInitMutable().getOperandNumber(), 3);
    }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.yield
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [
    Pure, ReturnLike, Terminator,
    ParentOneOf<["SdpaOp", "WeightsOp", "SdpaGradOp"]>]> {
  let summary = "yields the value of a score_mod or mask_mod region";
  let description = [{
    Terminates a `score_mod` region (yielding the new `f32` score) or a
    `mask_mod` region (yielding an `i1`, `true` = the key takes part).

    ```mlir
    attn.yield %keep : i1
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// attn.multihead
//===----------------------------------------------------------------------===//

def Attn_MultiheadOp : Attn_Op<"multihead", [AttrSizedOperandSegments, Pure]> {
  let summary = "multi-head attention with the semantics of nn.MultiheadAttention";
  let description = [{
    Multi-head attention exactly as PyTorch's `nn.MultiheadAttention`
    computes it (see `torch.nn.functional.multi_head_attention_forward`).

    Inputs are `[L, N, E]` (query), `[S, N, kdim]` (key) and `[S, N, vdim]`
    (value), or `[N, L, E]` / `[N, S, kdim]` / `[N, S, vdim]` with
    `batch_first`, or unbatched `[L, E]` / `[S, kdim]` / `[S, vdim]`.
    `embed_dim` E must be divisible by `num_heads`.

    Parameters use PyTorch's names and layouts (`y = x W^T + b`):
    - `in_proj(W : [3E, E])` when `kdim == vdim == E`, or
      `q_proj([E, E]) k_proj([E, kdim]) v_proj([E, vdim])`;
    - `in_proj_bias([3E])` (PyTorch `bias=True`);
    - `bias_kv(bias_k, bias_v : [1, 1, E])` (PyTorch `add_bias_kv=True`):
      appended to the projected keys and values as one more position;
    - `add_zero_attn`: appends a zero key and value per head after that;
    - `out_proj(W : [E, E])` and optionally `out_proj_bias([E])`.

    Masks follow PyTorch's conventions, which are the opposite of
    `attn.sdpa`'s for booleans: `true` means *masked out*; float masks are
    added to the scores.
    - `key_padding_mask`: `[N, S]` (unbatched: `[S]`);
    - `attn_mask`: `[L, S]` shared by all batches and heads, or
      `[N * num_heads, L, S]`.
    Both are padded with "keep" for the positions `bias_kv` and
    `add_zero_attn` append. `causal` additionally masks key `j > i`
    (top-left). `dropout` and `seed` (or a run-time `dropout_seed`) act on
    the attention probabilities as in `attn.sdpa`. Unlike PyTorch, a row in which every key is masked yields 0
    rather than NaN.

    The optional second result returns the attention probabilities (after
    dropout, as PyTorch returns them): `[N, L, S']` averaged over heads, or
    `[N, num_heads, L, S']` with `per_head_weights`, where `S'` counts the
    appended positions (unbatched: without `N`).

    Example (`nn.MultiheadAttention(512, 8, batch_first=True)`):

    ```mlir
    %out, %w = attn.multihead %x, %x, %x
        in_proj(%wi : tensor<1536x512xf32>) in_proj_bias(%bi : tensor<1536xf32>)
        out_proj(%wo : tensor<512x512xf32>) out_proj_bias(%bo : tensor<512xf32>)
        num_heads = 8 batch_first
      : tensor<2x10x512xf32>, tensor<2x10x512xf32>, tensor<2x10x512xf32>
        -> tensor<2x10x512xf32>, tensor<2x10x10xf32>
    ```
  }];

  let arguments = (ins
    Attn_FloatTensor:$query,
    Attn_FloatTensor:$key,
    Attn_FloatTensor:$value,
    Optional<Attn_FloatTensor>:$in_proj_weight,
    Optional<Attn_FloatTensor>:$q_proj_weight,
    Optional<Attn_FloatTensor>:$k_proj_weight,
    Optional<Attn_FloatTensor>:$v_proj_weight,
    Optional<Attn_FloatTensor>:$in_proj_bias,
    Optional<Attn_FloatTensor>:$bias_k,
    Optional<Attn_FloatTensor>:$bias_v,
    Attn_FloatTensor:$out_proj_weight,
    Optional<Attn_FloatTensor>:$out_proj_bias,
    Optional<Attn_MaskTensor>:$key_padding_mask,
    Optional<Attn_MaskTensor>:$attn_mask,
    Optional<Attn_SeedTensor>:$dropout_seed,
    ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
    UnitAttr:$batch_first,
    UnitAttr:$add_zero_attn,
    UnitAttr:$causal,
    UnitAttr:$per_head_weights,
    DefaultValuedAttr<F64Attr, "0.0">:$dropout_p,
    DefaultValuedAttr<I64Attr, "0">:$seed
  );
  let results = (outs Attn_FloatTensor:$output,
                      Optional<Attn_FloatTensor>:$weights);

  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`in_proj` `(` $in_proj_weight^ `:` type($in_proj_weight) `)`)?
    (`q_proj` `(` $q_proj_weight^ `:` type($q_proj_weight) `)`)?
    (`k_proj` `(` $k_proj_weight^ `:` type($k_proj_weight) `)`)?
    (`v_proj` `(` $v_proj_weight^ `:` type($v_proj_weight) `)`)?
    (`in_proj_bias` `(` $in_proj_bias^ `:` type($in_proj_bias) `)`)?
    (`bias_kv` `(` $bias_k^ `,` $bias_v `:` type($bias_k) `,` type($bias_v) `)`)?
    `out_proj` `(` $out_proj_weight `:` type($out_proj_weight) `)`
    (`out_proj_bias` `(` $out_proj_bias^ `:` type($out_proj_bias) `)`)?
    (`key_padding_mask` `(` $key_padding_mask^ `:` type($key_padding_mask) `)`)?
    (`attn_mask` `(` $attn_mask^ `:` type($attn_mask) `)`)?
    (`dropout_seed` `(` $dropout_seed^ `:` type($dropout_seed) `)`)?
    `num_heads` `=` $num_heads
    (`batch_first` $batch_first^)?
    (`add_zero_attn` $add_zero_attn^)?
    (`causal` $causal^)?
    (`per_head_weights` $per_head_weights^)?
    (`dropout` `=` $dropout_p^)?
    (`seed` `=` $seed^)?
    attr-dict
    `:` type($query) `,` type($key) `,` type($value)
    `->` type($output) (`,` type($weights)^)?
  }];

  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
