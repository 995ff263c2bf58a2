//===- Passes.td - attn dialect transformation passes ------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnVerifyInput : Pass<"attn-verify-input", "::mlir::ModuleOp"> {
  let summary = "Reject input that upstream verifiers accept and no pipeline can compile";
  let description = [{
    The first pass of every pipeline (`--attn-cpu-pipeline`,
    `--attn-cuda-pipeline`, the float64 reference of `attn-run --check`).
    Upstream's verifiers let some programs through whose behaviour is
    undefined and which later passes assume away; this pass turns them into
    an error at the offending op, with the numbers, instead of a crash in a
    pattern or an analysis several passes later:

    - `tensor.dim` / `memref.dim` whose index is a constant outside
      `[0, rank)` of a ranked operand (found by mutating the constants of the
      project's own test IR: such an index crashed both pipelines);
    - a function argument whose `bufferization.buffer_layout` is neither the
      identity nor `strided<[?, ..., ?, 1], offset: ?>` of its rank (a
      mutated view layout made CPU code that did not translate to LLVM IR).

    Programs it accepts are left unchanged.
  }];
}

def AttnRaiseAttention : Pass<"attn-raise-attention"> {
  let summary = "Rewrite attention written in linalg into attn.sdpa";
  let description = [{
    Finds attention that a frontend wrote in upstream dialects and rewrites
    it into `attn.sdpa`, so that the tiling, sparsity and GPU lowerings apply
    to it. A candidate is every `linalg.softmax`; it is raised when it is

    ```
    S = Q K^T            a contraction (linalg.matmul, linalg.batch_matmul,
                         a linalg.generic or linalg.contract) over the head
                         dimension into a zero-filled tensor; K read
                         transposed through the indexing map, or through a
                         linalg.transpose of its last two dimensions
    S' = S * c or S / c  optional: an elementwise linalg.generic, c a
                         constant scalar or splat (a 0-d tensor included),
                         maybe rounded to the scores' type in the body
                         (torch-mlir's f64 Python float);
                         the scale and mask steps may also be named
                         elementwise ops (linalg.mul, linalg.div,
                         linalg.elementwise, ...), which become their
                         linalg.generic form first (only those between a
                         softmax and its scores' product)
    S'' = mask(S')       optional, after the scale: S' + M (an additive
                         mask), select(C, S', -inf) (a boolean mask) or
                         select(C, -inf, S') (C inverted), M and C read
                         broadcast on the right as attn.sdpa's mask is; C a
                         triangle of loop indices above the diagonal
                         (torch.triu(ones, 1)) becomes `causal`
    P = softmax(S')      linalg.softmax over the last (key) dimension, or
                         the four steps frontends write: a row max (an
                         argmax beside it is ignored), exp(S' - max), a
                         row sum and the division, the row values read
                         through broadcasting maps, maybe as [.., 1], or
                         from generics that copy them to the scores'
                         shape (JAX's broadcast_in_dim through IREE); the
                         steps may be named ops (linalg.reduce, broadcast,
                         sub, exp, div or mul), which become their
                         linalg.generic form first
    O = P V              a contraction over the keys into a zero-filled
                         tensor
    ```

    with the batch dimensions (none, one, or batch and heads) in the same
    order in every operand and one element type throughout. Products a
    frontend runs on `[B*H, ..]` (a `linalg.batch_matmul` between a
    `tensor.collapse_shape` of each operand and a `tensor.expand_shape` of
    its result, merging exactly the batch and head dimensions) are taken
    as the `[B, H, ..]` products they are. A decomposed softmax (row
    reductions as generics or `linalg.reduce`, the division maybe a
    product by the reciprocal of the row sum: what IREE's ONNX import and
    upstream tosa-to-linalg write) is only taken for one when it subtracts
    the row maximum: another row value gives
    the same function but can overflow exp where softmax does not. One
    difference remains by design: a row whose every key is masked is NaN
    in the softmax as written and 0 in attn.sdpa (docs/Numerics.md). It becomes
    `attn.sdpa` with `scale = c` (or `1/c`, or 1 without a scale step) on the
    operands reshaped to `[B, H, S, D]` (unit dimensions added), and the
    result reshaped back. `S`, `S'` and `P` stay where something else reads
    them.

    Everything the rewrite assumes is checked: the softmax axis, the
    reduction dimension of each product, the order of the dimensions in
    every indexing map, the zero accumulators, the constant scale, the
    element types. Anything else is left as it is; with `explain`, every
    candidate gets a remark that says that it was raised, or the first
    check that failed, and so does every division of exponentials by a row
    value that is not taken for a softmax (`exp(s) / sum(exp(s))` without
    the row maximum subtracted, a divisor other than the row sum).
  }];
  let dependentDialects = [
    "::mlir::attn::AttnDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "a remark on every linalg.softmax (raised, or why not) and on "
           "every decomposed near-softmax (why it is not one)">,
  ];
}

def AttnDecomposeAggregates : Pass<"attn-decompose-aggregates"> {
  let summary = "Decompose aggregate linalg ops (linalg.softmax) into their steps";
  let description = [{
    Rewrites every op with upstream's `AggregatedOpInterface` (in LLVM 22:
    `linalg.softmax`) into the ops it aggregates (`linalg.softmax`: the
    row maximum, `exp(x - max)`, the row sum and the division, as
    `linalg.generic`s), which the rest of the CPU and CUDA pipelines
    compile. Runs after `attn-raise-attention`, on the softmaxes that were
    not attention.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnDecomposeMultihead : Pass<"attn-decompose-multihead"> {
  let summary = "Decompose attn.multihead into linalg projections around attn.sdpa";
  let description = [{
    Rewrites every `attn.multihead` into the computation PyTorch's
    `multi_head_attention_forward` performs, in tensor form:

    - inputs are brought to `[N, L, E]` (transposed unless `batch_first`,
      expanded with `N = 1` when unbatched);
    - the in-projections become `linalg.matmul`s against the transposed
      weights, accumulated onto the broadcast bias when there is one;
    - `bias_kv` and `add_zero_attn` append key/value positions with
      `tensor.concat`;
    - heads are split by `tensor.expand_shape` + `linalg.transpose` into
      `[N, H, L, D]`;
    - `key_padding_mask`, `attn_mask` and their padding for the appended
      positions become a single `attn.sdpa` mask (boolean keep-mask when both
      are boolean, additive float otherwise; PyTorch's "true = masked" is
      inverted);
    - `attn.sdpa` computes the attention; with a weights result,
      `attn.weights` computes the probabilities once and a batched matmul
      applies them to `V`, and the weights are averaged over heads unless
      `per_head_weights`;
    - heads are merged and the out-projection applied.

    The result contains no `attn.multihead`; `attn.sdpa` and `attn.weights`
    are left for the attention lowering passes.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnWidenToF64 : Pass<"attn-widen-to-f64", "::mlir::ModuleOp"> {
  let summary = "Retype a module's float tensors to f64 (the float64 reference)";
  let description = [{
    Rewrites every `func.func` of the module so that each ranked tensor of
    `f16`, `bf16` or `f32` elements becomes a tensor of `f64` elements: the
    signatures, calls and returns, the attn ops, the shape-only tensor ops
    (`tensor.empty`, `tensor.dim`, `tensor.cast`, reshapes and slices),
    `scf.forall` loops of tiles with their `tensor.parallel_insert_slice`s,
    `linalg.fill`, `linalg.softmax`, dense float constants, and
    `linalg.generic` ops whose bodies are float arithmetic alone (add, sub,
    mul, div, max, min, neg, exp, sqrt, rsqrt, comparisons, selects, index
    arithmetic, float constants, also captured from outside the body:
    contractions such as Linformer's projections, a frontend's scaling,
    masks and decomposed softmax), whose bodies are retyped to f64 with
    them. Named linalg ops (`linalg.matmul`, `linalg.transpose`,
    `linalg.broadcast`, `linalg.reduce`, ...) are rewritten as the generics
    they are first, and follow the same rule. The attn lowering then
    computes in f64 (its accumulator type for f64 inputs), which is the
    float64 reference `attn-run --check` compares compiled code against.
    Score and mask modifier regions keep their documented f32 signature.

    Ops whose semantics depend on the element type in ways a retyping cannot
    follow (a `linalg.generic` that converts types or calls math functions
    other than exp and square roots in its body, say) are reported with an
    error naming the op; the module is left unchanged.

    A result of an attn op that another op reads (a forward's output fed to
    its backward) is rounded to its declared element type in between (a
    `linalg.generic` truncating through f32 and extending back), as the
    program rounds it: the reference then measures the compiled code's
    error, not the error of the program's own precision. Returned values
    are not rounded.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnStridedCopyToLinalg : Pass<"attn-strided-copy-to-linalg"> {
  let summary = "Rewrite memref.copy of non-contiguous layouts into linalg.copy";
  let description = [{
    Upstream lowers a `memref.copy` whose source or target is not an
    identity-layout (contiguous) buffer to a call to `memrefCopy`, a function
    of `libmlir_c_runner_utils`. Code compiled by attn-mlir must not depend on
    that library (shared libraries are meant to be linked with libc and libm
    only), so such copies become `linalg.copy`, which the CPU pipeline lowers
    to loops. Copies between contiguous buffers are left alone: they lower to
    `memcpy`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnReadOnlyInputs : Pass<"attn-readonly-inputs", "::mlir::ModuleOp"> {
  let summary = "Mark the tensor arguments of public functions read-only";
  let description = [{
    Sets `bufferization.writable = false` on every tensor argument of every
    public function, so that one-shot bufferization never writes into a
    caller's input buffer (it copies instead). The C ABI declares inputs
    `const` (docs/CpuABI.md), and `attn-run --check` feeds the same inputs to
    the compiled code and to the float64 reference.
  }];
}

def AttnSparsify : Pass<"attn-sparsify"> {
  let summary = "Classify (query tile, key tile) pairs as empty, full or partial";
  let description = [{
    Block sparsity for `attn.sdpa`. Every pair of a query tile and a key
    tile is empty (no key visible to any row: never visited), full (every
    key visible to every row: visited without evaluating a mask) or partial
    (visited with the masks).

    Where the masks are bands (causal in either alignment, `window`,
    `kv_lens`, and `mask_mod` regions built from affine comparisons of
    `q_idx` and `kv_idx` with `and`/`or`, such as prefix-LM), the classes
    follow from the op alone (`KeyBand.h`): `attn-tile` derives exact loop
    bounds for the partial, full and partial ranges of key tiles per query
    tile, symbolic in dynamic sizes, and this pass leaves the op as it is.

    Everything else (a boolean `mask` operand, a `mask_mod` that reads a
    tensor such as per-token document ids, a block-sparse layout
    `blocks(offsets, indices)`) is classified at run time: the pass inserts
    code, executed once per call before the attention, that evaluates the
    keep conditions of every tile the band does not already exclude and
    stores a `[B or 1, Hq or 1, query tiles, key tiles]` `i8` tensor of
    classes (0 empty, 1 partial, 2 full), attached to the op as
    `block_classes` with `block_size = [q-tile, kv-tile]` (a layout's own
    block size when it has one; its listing becomes class 0 for the
    unlisted blocks). Batch and head extents are 1 where nothing depends on
    them.

    An op with a block layout (`block_size`) is classified, and tiled by
    `attn-tile`, by its blocks, not by the tiles of the options (one
    function, `getAttentionTiles`, decides both passes' tiles).

    With `explain`, each op gets a remark that gives the band, the block
    layout's blocks where they replace the options' tiles, and whether the
    classification is static or why it is not.
  }];
  let options = [
    Option<"qTile", "q-tile", "int64_t", /*default=*/"128",
           "Query rows per tile (the same as attn-tile's)">,
    Option<"kvTile", "kv-tile", "int64_t", /*default=*/"64",
           "Keys per tile (the same as attn-tile's)">,
    Option<"smallHeadKvTile", "small-head-kv-tile", "int64_t",
           /*default=*/"0",
           "Keys per tile for ops whose head sizes are at most 64 (0: "
           "kv-tile; the same as attn-tile's)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark with each op's classification">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnFoldQueryGroups : Pass<"attn-fold-query-groups"> {
  let summary = "Serve the query heads of a GQA group as rows of one head";
  let description = [{
    Rewrites an `attn.sdpa` with grouped-query heads (`Hq = G Hkv`, G > 1)
    and few query rows (`G Sq <= max-rows`, `Sq` static) into one over
    `[B, Hkv, G Sq, D]`: the query, the destination and the log-sum-exp
    are reshaped (row `i` of query head `hkv G + g` becomes row `g Sq + i`
    of key/value head `hkv`; the heads of a group are contiguous, so no
    copy), and the results reshaped back. Every key/value row is then read once per group
    instead of once per query head: decode (`Sq = 1`) is bound by reading
    the cache, and Llama-3's `G = 4` read it four times.

    Only where the result is the same computation: no score condition that
    depends on the query row or head (no `causal`, `window`, `score_mod`,
    `mask_mod`, dropout or block layout), and a mask, if any, that
    broadcasts over heads and query rows (size 1 in both). `kv_lens` and
    `scale` carry over (the head size is unchanged).
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"128",
           "Largest G x Sq folded (the CPU pipeline passes its query tile: "
           "the group's rows are one tile; 0: fold nothing)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "Tile attn.sdpa into a FlashAttention-style loop nest with online softmax";
  let description = [{
    Rewrites every `attn.sdpa` into

    - an `scf.forall` over (batch, query head, query tile of `q-tile` rows),
      whose body
    - loops (`scf.for`) over key/value tiles of `kv-tile` keys, carrying the
      running row maximum `m`, the running row sum `l` and the unnormalised
      output tile `acc` (all in the accumulator type: f32, f64 for f64);
      each step computes the score tile `Q_t K_t^T`, applies the op's scale,
      masks, `kv_lens`, modifier regions, causal and window conditions (the
      same builders as the reference lowering, on global indices), then
      `m' = max(m, rowmax(S))`, `P = exp(S - m')`, `alpha = exp(m - m')`,
      `l' = alpha l + rowsum(P)`, `acc' = alpha acc + dropout(P) V_t`;
      the loop visits only key tiles the masks leave non-empty and skips
      the keep conditions on full ones: two loops from the band of
      `--attn-sparsify`'s analysis (the partial tiles before and after the
      full ones, masked, in one loop; then the full tiles), or one loop
      that branches on `block_classes` when the op has them (whose
      `block_size` then sets the tile sizes);
    - finally writes `acc / l` (0 where `l` is 0: every key masked) into the
      destination, converted to its element type.

    With `bf16-pairs`, an op whose query, key and value are bf16 and whose
    head size is even keeps them bf16 and contracts pairs of the reduced
    dimension (for dot-product instructions, `attn-vectorize-tiles
    bf16-dot`): K is packed as `[B, Hkv, key tiles, D/2, kv-tile, 2]`, V as
    `[B, Hkv, key tiles, kv-tile/2, Dv, 2]` (zero-padded), the query tile is
    viewed as `[rows, D/2, 2]`, and `P` is rounded to bf16 (as PyTorch and
    FlashAttention do for bf16) and padded with a zero to an even number of
    keys for `P V_t`. Scores, softmax statistics and the output
    accumulator stay f32. Otherwise, and for ops of at most 16 static
    query rows (decode: bound by reading K and V, where packing K into
    pairs on every call is a pass over the cache), both contractions are
    f32: a packed K is widened to f32 when packed; K tiles transposed in
    the step and V tiles read where they are keep their bf16/f16 type, and
    the products widen each row as they load it (no widened copy of the
    tile: bf16 decode B1 Hq32 Hkv8 Skv8192 D128 4.4 -> 2.9-3.3 ms).

    With `value-panel` (the CPU pipeline passes its register block's
    `n-block`), an op whose value head size `Dv` is a multiple of at least
    4 such panels, and whose heads each have several query tiles (V is
    read by all of them), packs V once per call into panels `[B, Hkv, key
    tiles, Dv / value-panel, kv-tile, value-panel]`, and `P V_t` writes the
    output accumulator through a `[rows, Dv / value-panel, value-panel]`
    view: each register block's K loop then reads one contiguous run of
    the tile instead of `value-panel` columns of rows `Dv` apart. (AVX2's
    16-column blocks at D = 128: 12-22% faster on 2 cores; two panels of
    AVX-512's 64 columns lost 1-3%: benchmarks/RESULTS.md, session 19.)

    Keys or values that `attn.gather_pages` reads from a paged cache,
    where the steps read tiles of them rather than a packed copy (K of ops
    with one query tile of at most 64 rows per head; V unless packed in
    pairs or panels), and
    the page size (static) holds whole key tiles or is held whole by one:
    each step reads its tile from the pages themselves, a slice of the page
    the table names (the entry clamped to the cache), or the whole pages
    that make it up, assembled; tiles past `kv_lens` are not visited. The
    gathered tensor is never built for them; other readers (a packed K)
    read it, and `attn-lower-to-linalg` writes it.

    An op whose only reader is `attn.unpad_sequences` (a varlen batch's
    output, whose padding rows are dropped) visits no key tile for a query
    tile made only of rows outside its batch's sequence: those tiles are
    zeros at the cost of a few comparisons, so padding queries cost
    nothing with or without `causal`.

    No tensor of `Sq x Skv` scores exists: the largest intermediate is one
    `q-tile x kv-tile` score tile, so memory is linear in the sequence
    length. Any `Sq` and `Skv`, dynamic included: a query tile has
    `min(q-tile, Sq - start)` rows (a constant where a static `Sq` allows;
    the last tile of a static `Sq` that is no whole number of tiles is
    built apart with its own row count), and every key tile is a constant
    `kv-tile` keys (a static `Skv` shorter than that is one tile of `Skv`
    keys): where `Skv` is dynamic or no whole number of tiles, K
    and V are padded with zero keys (V only when the run-time length needs
    it) and the masked steps give the padding keys -inf. Grouped-query
    attention reads key/value head `h / (Hq/Hkv)`
    for query head `h`. `attn.weights` is left alone: its result is the
    `Sq x Skv` matrix.

    `attn.sdpa_grad` (without a block layout, static head sizes) becomes
    the FlashAttention-2 backward: an `scf.forall` over (batch, key/value
    head, key chunk), each iteration owning its chunk's rows of dK and dV
    and its share of the group's dQ (the shares summed after the loop;
    `grad-key-chunks` splits the keys where batch x heads gives fewer than
    16 iterations), looping over the group's query heads and query tiles,
    and for each over the visible key tiles of its chunk (the band of the
    forward: full tiles in a loop without keep conditions): P recomputed
    from lse, then dV, dP, dS, dQ and dK on transposed `[keys, rows]`
    tiles, so that the five products are row-major. Rows and keys are
    padded to whole tiles, so a static sequence shorter than a tile takes
    a tile of its own length (rows: a power of two of at least 16; keys: a
    multiple of 16): 10 rows padded to 128 were 13x the work.

    Where each (batch, head) has one query tile (a static `Sq` of at most
    `q-tile`: decode), `Skv` is static and the (batch, head) pairs are
    fewer than 16 (static B and H), the keys are also split into chunks of whole key tiles
    (`decode-key-chunks`, flash-decoding): the forall runs over (batch,
    head, key chunk), each iteration keeping its chunk's unnormalised
    output, row maxima and row sums, and after it the chunks are combined:
    `M = max_c m_c`, `w_c = 2^(m_c - M)`, `L = sum_c w_c l_c`,
    `O = sum_c w_c acc_c / L` (0 where L is 0), `lse = (M + log2 L) ln 2`.

    With `short-kv-tile`, an `attn.sdpa` whose `Skv` is dynamic (no block
    layout or classes, keys and values not read from pages, not read by
    `attn.unpad_sequences`) is tiled twice, in the two branches of an
    `scf.if` on the run-time `Skv`: with `kv-tile` keys per step, and with
    `short-kv-tile`. A call takes the short tiles where padding `Skv` to
    whole `kv-tile`s gives more than 9/8 of the keys that whole short tiles
    do: 10 keys padded to a tile of 128 made the attention 13x its work,
    and short steps cost a few percent more per key (their softmax and
    rescaling come more often). A static `Skv` needs no second tiling: it
    is one tile of `Skv` keys when shorter than `kv-tile`.

    Every loop over key tiles (forward and backward) is marked
    `attn.key_tile_loop`, for `attn-prefetch-streams`.
  }];
  let options = [
    Option<"qTile", "q-tile", "int64_t", /*default=*/"128",
           "Query rows per tile">,
    Option<"kvTile", "kv-tile", "int64_t", /*default=*/"64",
           "Keys per step of the inner loop">,
    Option<"smallHeadKvTile", "small-head-kv-tile", "int64_t",
           /*default=*/"0",
           "Keys per step for ops whose head sizes (D and Dv) are at most 64, "
           "static (0: kv-tile): a longer step halves their per-step "
           "softmax work where the tile still fits the cache">,
    Option<"bf16Pairs", "bf16-pairs", "bool", /*default=*/"false",
           "Contract bf16 inputs as bf16 pairs of the reduced dimension "
           "(K and V packed into pairs) instead of widening them to f32">,
    Option<"gradKeyChunks", "grad-key-chunks", "int64_t", /*default=*/"0",
           "Key chunks per (batch, key/value head) in attn.sdpa_grad's "
           "parallel loop (0: enough for 16 parallel iterations where B "
           "and Hkv are static, else 1)">,
    Option<"decodeKeyChunks", "decode-key-chunks", "int64_t",
           /*default=*/"0",
           "Key chunks per (batch, head) of an attn.sdpa whose heads have "
           "one query tile (decode) and a static Skv, each a parallel "
           "iteration, combined by their log-sum-exp (0: enough for 16 "
           "parallel iterations where B and H are static, chunks of at "
           "least 4 key tiles; 1: no split)">,
    Option<"valuePanel", "value-panel", "int64_t", /*default=*/"0",
           "Columns per panel of the packed V ([key tiles, Dv / "
           "value-panel, kv-tile, value-panel]; the register block's "
           "n-block) for ops whose Dv is at least 4 such panels (0: V read "
           "where it is)">,
    Option<"shortKvTile", "short-kv-tile", "int64_t", /*default=*/"0",
           "Keys per step of a second tiling of ops whose Skv is dynamic, "
           "taken by calls whose keys those tiles pad by an eighth less "
           "than kv-tile's (0: one tiling)">,
    Option<"gradHeadSums", "grad-head-sums", "bool", /*default=*/"true",
           "In attn.sdpa_grad's GQA groups, each query head sums its dK "
           "and dV in accumulators of its own, added into the group's "
           "after its rows (false: one running sum over the group's "
           "heads, whose float32 error grows with the group; kept to "
           "measure the two in one run)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnFuseWeights : Pass<"attn-fuse-weights"> {
  let summary = "Fuse the steps of attn.weights' lowering per block of query rows";
  let description = [{
    The steps of an `attn.weights` that `attn-lower-to-linalg` made (found
    by its marks) are computed per block of R query rows of
    one (batch, head) instead of one pass each over the whole
    `[B, H, Sq, Skv]` tensor: an `scf.forall` over (batch, head, row block)
    into which the scores, the row statistics and the normalisation are
    fused (upstream's tile-and-fuse), so that a block's scores stay in the
    cache between steps. The keys are read from `K^T` `[B, Hkv, D, Skv]`
    (composed with a transpose producing K, such as a head split), so that
    each block's `Q K^T` is a product with the keys innermost and
    contiguous: transposed once per (batch, head) in a parallel loop of its
    own where a head's rows make several blocks, and fused into the block
    where a block takes all of a head's rows (a static Sq of at most R).
    Such short heads are also taken several per block: as many as fit in R
    rows while the loop keeps at least 16 blocks, a divisor of H, where
    every operand is indexed by a projected permutation or at 0 (a mask
    shared by the heads; not grouped-query keys): 32 sequences of 10 tokens with 8 heads make 64 blocks of 4
    heads, not 256 blocks whose cost is mostly being a parallel
    iteration. A contraction `P V` of the probabilities (what
    `attn-decompose-multihead` makes when the weights are returned) is the
    loop's consumer instead: each block multiplies its probabilities while
    they are in the cache, and the loop yields both. The probabilities are
    the same; `attn.weights` still returns the whole matrix.

    Where the probabilities' other user is a `linalg.reduce` over the heads
    alone (the mean `attn-decompose-multihead` makes for `need_weights`
    with averaged weights), no `[B, H, Sq, Skv]` tensor is made at all: the
    parallel loop is over (batch, block of query rows), and each block
    loops over the heads (`scf.for`), computing the head's probabilities
    for its rows, their product with V and their share of the mean,
    accumulated into the block's `[rows, Skv]` tile (upstream tile-and-fuse
    of the product, then consumer fusion of the mean, at both levels). Each
    block reads all of its sequence's keys and values, so a block keeps at
    least 16 rows; R is halved (down to 16) while a static loop would have
    fewer than 16 blocks, and where it would have fewer even then (one
    short sequence), the heads stay a parallel dimension and the mean is
    taken after the loop. In every row-block loop the steps' intermediate
    tiles (scores, exponentials) are tensors of their own, not slices of a
    whole `[B, H, Sq, Skv]` tensor nothing else reads.

    The pass runs after `attn-lower-to-linalg` (the CPU pipeline's tiled
    lowering, with R = 64); it is a schedule of linalg ops, kept out of the
    conversion so that the reference lowering stays one op per step.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"64",
           "Query rows R per fused block (positive)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnPackWeights : Pass<"attn-pack-weights"> {
  let summary = "Read contractions' weights from tile-contiguous N-panels";
  let description = [{
    A contraction on tensors outside parallel loops (the multihead
    projections, Linformer's, any `linalg.matmul` of a module) whose result
    has its N dimension innermost, of a static size that is a multiple of
    `panel`, and whose right operand is a 2-D weight `[K, N]` (or a
    torch-layout `[N, K]` one, transposed or read through a transposing
    indexing map) reads that weight from panels
    `[N / panel, K, panel]`, a `linalg.pack` of it, and writes its result
    through a `[..., N / panel, panel]` view. Register-blocked with n-block
    = `panel` (`attn-vectorize-tiles`), each K step of a block then reads one
    contiguous run of the weight, and the panels are one stream for the
    prefetcher, where the plain layout has a stride of a whole weight row
    per step (and L1 set conflicts for power-of-two N). A torch-layout
    weight is packed directly: no transpose first. A constant weight is
    packed at compile time.

    A packed product whose result only a transpose that keeps rows whole
    reads (the multihead head split `[N, L, H, D]` to `[N, H, L, D]`, Q, K
    and V projected together as `[N, L, 3, H, D]` to `[3, N, H, L, D]`, the
    sequence-first output) writes the transposed layout itself instead of a
    serial copy after it, where a head is a whole number of panels: with
    several, the panel index splits into `[.., D / panel]` and the product
    writes `[.., D / panel, panel]`, which is `D` merged.

    When the weight is already panels, as `linalg.unpack` of a function
    argument (or rows of one that start and end on panel boundaries, such as
    the q/k/v thirds of a packed in-projection), the contraction reads that
    argument and nothing is packed per call: the "pre-packed weights" form
    of docs/CpuABI.md. Contractions inside `scf.forall` (the tiled
    attention) are left alone, and so are weights whose N is dynamic or not
    a multiple of `panel`.

    Such a contraction that reads its left operand (the one carrying M)
    with K not innermost, such as the `dY^T` of a weight gradient
    `dW[n, k] += dY[m, n] * X[m, k]`, reads a `linalg.transpose` of it with
    K innermost instead, whatever its N: attn-vectorize-tiles
    register-blocks rows of the left operand, and
    attn-parallelize-contractions transposes each row block's share once
    (read K-major, every multiply-add loaded one strided element: 5x
    slower).
  }];
  let options = [
    Option<"panel", "panel", "int64_t", /*default=*/"64",
           "Columns of a panel (the register block's n-block)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnLowerPacks : Pass<"attn-lower-packs"> {
  let summary = "Lower linalg.pack and linalg.unpack to pad, reshape and transpose";
  let description = [{
    The relayouts left after `attn-pack-weights` (weights packed on every
    call, panels a function was given but that something other than a
    packed contraction reads) become `tensor.pad` / `tensor.expand_shape` /
    `linalg.transpose` (and the reverse), which every pipeline bufferizes
    and lowers. Run by every pipeline, so that a module written with
    pre-packed weights compiles for any target.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
