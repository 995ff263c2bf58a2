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

def AttnRefineBranchLayouts : Pass<"attn-refine-branch-layouts"> {
  let summary = "Give scf.if results of buffers the strides both branches share";
  let description = [{
    One-shot bufferization gives an `scf.if` whose branches yield buffers
    of different layouts (a padded copy in one branch, a view of a larger
    buffer in the other: the tiled lowering pads V only when the run-time
    length needs it, and V is a slice when Q, K and V are projected
    together) a result with a fully dynamic layout, every stride unknown.
    Vector code reading such a buffer cannot assume contiguous rows and
    loads one element at a time. This pass gives the result the most
    static strided layout both branches have (e.g. `strided<[?, ?, 64, 1],
    offset: ?>`), with `memref.cast`s on the yields and for the users,
    which fold them (subviews, loads, vector transfers).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
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

    With `explain`, each op gets a remark that gives the band and says
    whether the classification is static or why it is not.
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

def AttnPolynomialMath : Pass<"attn-polynomial-math"> {
  let summary = "Replace f32 exp, exp2, tanh, erf and logs with polynomial approximations";
  let description = [{
    `math.exp`/`math.exp2` on f32 otherwise become calls to libm's
    `expf`/`exp2f`, which keep the softmax loops from vectorising, and the
    functions of score modifiers (a softcap's `math.tanh`, `math.erf`,
    `math.log`, `math.log2`, `math.log1p`) one libm call per score. This
    pass applies MLIR's polynomial approximations (range reduction plus a
    polynomial, with the IEEE special cases; worst errors measured in
    docs/Numerics.md: 4.8 ULP at most) to those on f32, scalar or vector,
    and to f32 `math.exp2` its own:
    `2^x = 2^k 2^y` with `k = floor(x)`, `2^y` a degree-6 polynomial on
    `[0, 1]`, `2^k` built in the exponent bits (within 1.5 ULP of exp2;
    1.1 measured, test/Integration/CPU/exp2-edges.test); 0 below 2^-126
    (denormals flushed, -inf included), +inf from 128 on, NaN kept. The
    tiled lowering keeps scores in log2 units so that its exponentials are
    exp2 (no range-reduction multiply). f64 (the float64 reference) keeps
    libm, as do f32 `math.sin` and `math.cos` (MLIR's approximation of them
    loses accuracy at large arguments: 8e-4 absolute at 10^4).

    With `scalef` (the CPU pipeline sets it for AVX-512F targets), a 1-D
    f32 vector whose length is a multiple of 16 computes `k` with
    `math.floor` (`vrndscaleps`) and `2^k 2^y` with
    `x86vector.avx512.mask.scalef` (`vscalefps`): the same function in 11
    vector instructions instead of 16. The CPU pipeline runs this pass after
    `attn-vectorize-tiles`, which vectorises `math.exp2` as it is.
  }];
  let options = [
    Option<"scalef", "scalef", "bool", /*default=*/"false",
           "Use AVX-512's vrndscaleps and vscalefps for f32 vectors of a "
           "multiple of 16 elements">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def AttnVectorizeTiles : Pass<"attn-vectorize-tiles"> {
  let summary = "Register-block the contractions and vectorise the row ops of attention tiles";
  let description = [{
    Turns the tile bodies `attn-tile` produces (or any linalg on tensors
    with small bounded loops) into vector code for the CPU, instead of
    leaving scalar loops to LLVM's loop vectoriser, which reloads and stores
    the accumulator around every FMA and cannot vectorise a row maximum.

    - Contractions (one K dimension, one or more M and N dimensions, any
      batch dimensions, a multiply-add body, e.g. `Q_t K_t^T`, `P V_t`,
      projections, Linformer's `E K`; all M and N but the innermost of each
      are blocked at 1) are tiled into
      `m-block x n-block` output blocks, K innermost and one K step per
      iteration; the M and N loops are peeled so that all blocks but the
      last of each are static. A static block becomes a `vector.contract`
      whose accumulator stays in registers across the K loop (its
      read/write pair is hoisted), lowered to one outer product per K step:
      `m-block` broadcasts times an `n-block`-wide row. The block must fit
      the register file with its operands: with AVX-512 and f32 a 4 x 64
      block keeps 16 accumulators, four RHS vectors and a broadcast in
      registers (21 of 32) and issues 16 FMAs per 4 loads and 4 broadcasts;
      with AVX2 (16 registers of 8 lanes) 6 x 16 keeps 12 + 2 + 1. The CPU
      pipeline chooses the block from its target model
      (`chooseCpuKernelConfig`; the generic model, x86-64-v3's registers,
      takes 6 x 16); this pass's default, 4 x 16, fits the register file
      of every x86-64 and AArch64 target. Columns known only at run time
      (a column block of a weight whose N is not whole panels) run as
      blocks of `n-block` columns, then the columns those leave in blocks
      of halving power-of-two widths, each static; partial blocks of a
      dynamic size stay scalar loops. A static block whose width (the vectorised N) is
      not a power of two is split into blocks that are, in the same K
      loop (48 columns: 32 + 16; LLVM carried a 4 x 48 accumulator block
      element by element), and a one-row block's K step is one broadcast
      FMA (upstream lowers that contraction to scalar multiplies). With
      `max-m-block`, a
      contraction whose innermost M is a static count that `m-block` does
      not divide, and whose N is whole `n-block`s, takes blocks of the
      smallest row count up to
      `max-m-block` that divides it (10 rows as 5 + 5 instead of 4 + 4 + 2,
      whose last block issues half the FMAs per load). Where the blocks
      divide a static contraction and its accumulator's start is a fill or
      an elementwise op that only it reads (attention's zeroed score tile;
      the output times the softmax's correction), each block computes its
      own slice of that op and starts from it in registers: no fill of
      the whole tile, no separate pass over it.
    - Elementwise and row-reduction ops (rank 1; rank 2 with a parallel
      outer loop; higher ranks with every loop but the last parallel and
      each operand indexed by all loops or all but the last) are tiled one
      row at a time and vectorised with masks, so that partial rows need no
      scalar remainder. A row bounded by a constant of at most
      `row-elements` (value-bounds analysis: a tile size `min(64, n - i)`
      is bounded by 64) is one vector; a longer one (the probabilities of
      `attn.weights`, a row per key), or one with no constant bound (a
      shape-generic function's keys), is taken `n-block` elements at a
      time, a reduction carrying its accumulator. Ops reading i1 (bool
      masks) stay scalar: memory holds one i1 per byte, a vector of i1 is
      packed bits. A row maximum marked `attn.softmax_max` (attn-tile's
      running maximum, only a bound for the exponentials) is a tree of
      compare-and-selects, one `vmaxps` each on x86, instead of
      NaN-propagating maximums.

    A contraction may also reduce over a pair: a second K dimension of
    static size 2 that is innermost in both inputs (what `attn-tile
    bf16-pairs` produces for bf16). Its blocks take the whole pair per K
    step; with `bf16-dot` each K step of an M x N block whose inputs are
    bf16 is `M * N / lanes` `x86vector.avx512.dot` ops (`vdpbf16ps`: 2
    multiply-adds per f32 lane), one broadcast pair of the LHS row against
    `lanes` pairs of the RHS, accumulating in f32. Without it the pairs are
    widened to f32 and multiplied like any contraction.

    A dot-form contraction, `C[m, n] += A[m, k] B[n, k]` with K innermost
    in both inputs (the scores of `attn-tile`'s steps over a K tile where
    it lies, decode), is blocked in `rows x columns` blocks that keep as
    many accumulators as an `m-block x n-block` one, each a vector of
    `lanes` partial sums: a loop over K in chunks of `lanes`, one FMA per
    (row, column) on the two rows' chunks, then the partial sums of a
    row's columns reduced together (pairs of vectors folded into one by
    shuffles and adds, then halved in place to one lane per column). Each
    K row is read once per block, contiguously; no transposed copy of it
    is made.

    Contractions `attn-parallelize-contractions` blocked for the cache
    (projections; marked `attn.cache_blocked`, a marker this pass removes)
    take `contraction-m-block x contraction-n-block` blocks instead: their
    right operand streams from the L2, not the L1, so their blocks are
    narrower and taller (AVX-512: 12 x 32, two row loads per 24 FMAs), and
    the K loops of their static blocks are marked `attn.stream_loop` for
    `attn-prefetch-streams`, which prefetches the rows they stream. In
    every contraction the block loop over the innermost M is outside those
    over the N dimensions (weight panels included): a block's rows of the
    left operand stay in the L1 while the panels of the right one go by.

    Other contractions must read N contiguously from their RHS and write
    it contiguously (the layout `attn-tile` produces); other layouts are
    still correct, only slower.
  }];
  let options = [
    Option<"mBlock", "m-block", "int64_t", /*default=*/"4",
           "Rows of the output block held in registers">,
    Option<"nBlock", "n-block", "int64_t", /*default=*/"16",
           "Columns of the output block held in registers">,
    Option<"rowElements", "row-elements", "int64_t", /*default=*/"128",
           "Longest row (elements) the row ops vectorise whole">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Lower bf16 pair contractions to x86vector.avx512.dot "
           "(AVX512-BF16 vdpbf16ps)">,
    Option<"maxMBlock", "max-m-block", "int64_t", /*default=*/"0",
           "Most rows per block for a contraction whose static row count "
           "m-block does not divide (0: m-block)">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"8",
           "f32 lanes of a vector register: the chunk of K a dot-form "
           "block's partial sums take">,
    Option<"contractionMBlock", "contraction-m-block", "int64_t",
           /*default=*/"0",
           "Rows of the register block of the contractions "
           "attn-parallelize-contractions blocked for the cache (0: "
           "m-block)">,
    Option<"contractionNBlock", "contraction-n-block", "int64_t",
           /*default=*/"0",
           "Columns of the register block of those contractions (0: "
           "n-block)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def AttnPrefetchStreams : Pass<"attn-prefetch-streams"> {
  let summary = "Prefetch the rows a cache-blocked register block streams "
                "from the L2, and the attention's next key tiles";
  let description = [{
    A register block of a contraction blocked for the cache (a projection:
    `attn-parallelize-contractions`, then `attn-vectorize-tiles`, which
    marks its K loop `attn.stream_loop`) reads one row of the right
    operand's weight block per K step and each row once: the block's
    broadcast rows of the left operand stay in the L1, the weight rows
    stream from the L2, and an FMA waits whenever the hardware prefetcher
    has not brought the next row in yet. On buffers (after bufferization),
    this pass makes every such loop prefetch (`memref.prefetch`, read,
    locality 3: into the L1) the row it will read `distance` bytes of rows
    ahead, one prefetch per 64-byte line of the row, in each iteration.

    The rows are the loop's `vector.transfer_read`s of a contiguous 1-D
    vector of more than one element (not a broadcast operand) along the
    innermost dimension of a memref whose innermost stride is 1; the
    address is that of the read in the first memref of its subview chain
    defined outside the loop, with the induction variable advanced by
    `distance` bytes of rows (in whole iterations). Near the end of the
    loop that address lies past the view the loop reads (in a packed
    weight: the next K block or panel, which the next loop reads) and at
    the end of the last loop past the buffer: a prefetch is a hint, which
    neither faults nor reads memory a program can observe, and
    `memref.prefetch` lowers to `llvm.prefetch` of an address computed
    without `inbounds`. Reads whose address does not change with the
    induction variable get no prefetch. The marker is removed whatever
    `distance`; `distance=0` prefetches nothing.

    With `key-tiles`, each loop `attn-tile` marked `attn.key_tile_loop`
    (its loops over key tiles) prefetches into the L2 (locality 2) the
    tiles its next iteration will read: the static-shaped views at the top
    of its body, innermost stride 1, of buffers defined outside it at
    offsets that change with its induction variable (a packed K^T tile, a
    V tile or its panels, a mask tile). Per head, K and V take the L2
    (2 MiB each at S = 4096, D = 128), so each tile streams from the L3 or
    memory, and the register blocks wait on the first reads of every
    line. A tile's prefetches (one per 64-byte line of each row, the next
    tile being the view with the induction variable one step on) are
    spread evenly over the iterations of the loop nest that reads the
    current tile: the first loop of the body that reads it, and the loops
    nested in it while an iteration would otherwise issue more than 16
    (never the innermost loop, the register block's own), at the end of
    the innermost of them. A tile that would still need more than 64 per
    iteration gets none (a burst would stall the loads it should hide),
    and so does one that no loop with constant bounds reads. In the last
    iteration the next tile lies past the keys (a hint, as above). The
    marker is removed either way. (B1 H8 S4096 f32 on two cores: D128
    4-5% faster, D64 2-3%; benchmarks/RESULTS.md, session 32.)
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"2048",
           "Bytes of rows ahead of the row read to prefetch (0: none)">,
    Option<"keyTiles", "key-tiles", "bool", /*default=*/"true",
           "Prefetch the key and value tiles of a key-tile loop's next "
           "iteration">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnStackIterationBuffers : Pass<"attn-stack-iteration-buffers"> {
  let summary = "Put the small buffers of each parallel iteration on the stack";
  let description = [{
    Bufferization gives every tile an iteration of an `scf.forall` computes
    (the row maxima, sums and score tiles of a (batch, head, query tile)
    iteration) a heap buffer, allocated and freed in every iteration. Where
    an iteration does little work (32 sequences of 10 tokens: 256
    iterations of a 10 x 10 attention) that is thousands of `malloc` and
    `free` calls per call, each a few hundred cycles, and the allocator's
    free lists shared by the threads.

    This pass runs after buffer deallocation, on the CPU pipeline's
    threaded path. A `memref.alloc` directly in the body of an
    `scf.forall`, of a static shape with integer or float elements in the
    default memory space, freed by one `memref.dealloc` in the same block
    and not passed out of the iteration (to a branch, call, return, loop
    or yield, directly or through views), becomes a `memref.alloca` and its
    dealloc is erased, in program order while the buffers so promoted take
    at most `max-bytes` per iteration. `convert-scf-to-openmp` scopes each
    OpenMP iteration's stack allocations (`memref.alloca_scope`), so a
    thread's stack holds one iteration's buffers at a time.

    With `poison`, each promoted buffer is filled with all-ones bits (NaN
    in every float type) where it is allocated, as the caching allocator
    fills heap blocks under `ATTN_MLIR_ALLOCATOR_POISON=1`: code reading a
    tile before writing it then fails its test instead of reading the
    previous iteration's values. The CPU pipeline sets it when that
    variable is set where the pipeline is built (the test suites).
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"65536",
           "Stack bytes one iteration's promoted buffers may take">,
    Option<"poison", "poison", "bool", /*default=*/"false",
           "Fill each promoted buffer with all-ones bits where it is "
           "allocated">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnOmpDynamicSchedule : Pass<"attn-omp-dynamic-schedule"> {
  let summary = "Give OpenMP worksharing loops a dynamic schedule";
  let description = [{
    `convert-scf-to-openmp` leaves `omp.wsloop` on the default static
    schedule: each thread gets one contiguous block of (batch, head, query
    tile) iterations fixed in advance. Causal and windowed attention give
    the iterations unequal work, and a core shared with another process
    falls behind; with a static schedule the other thread then waits at the
    loop's end. This pass gives every `omp.wsloop` that has no schedule a
    dynamic one: threads take the next chunk of iterations when done.

    A chunk is `max(1, trips / (threads * chunks-per-thread))` iterations,
    computed where the loop starts from its trip count and the team's size
    (`omp_get_num_threads`): each thread asks for work about
    `chunks-per-thread` times however many iterations the loop has. Chunks
    of one iteration made a loop of many small iterations (the head splits
    and attention tiles of 32 sequences of 10 tokens: 256 iterations of a
    few microseconds) pay the runtime's dispatch once per iteration, a
    third of its time. `chunks-per-thread=0` leaves the chunk to the
    runtime (one iteration).
  }];
  let options = [
    Option<"chunksPerThread", "chunks-per-thread", "unsigned", /*default=*/"8",
           "Chunks each thread takes, about (0: one iteration per chunk)">
  ];
  let dependentDialects = [
    "::mlir::omp::OpenMPDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def AttnParallelizeContractions : Pass<"attn-parallelize-contractions"> {
  let summary = "Distribute contractions outside parallel loops over row blocks";
  let description = [{
    A linalg contraction on tensors that is not inside an `scf.forall` (the
    projections `attn-decompose-multihead` produces, or the reference
    lowering's products) becomes an `scf.forall` over its batch dimensions
    and blocks of `rows` rows of its M dimension; the CPU pipeline runs
    foralls on OpenMP threads. Where the innermost M is shorter than `rows`
    (a projection of 32 sequences of 10 tokens), a block takes it whole for
    as many of the next M dimension as make about `rows` rows (6 sequences),
    so that each weight block read into the cache serves all of them;
    where it is long, blocks of `rows` doubled up to `max-rows` while there
    are still 16 parallel iterations (each row block reads all of the
    weight: fewer, taller blocks read it fewer times). Inside a row block, with `columns` and
    `depth` set, the contraction is blocked for the cache: `scf.for` loops
    over `columns` columns of its (innermost) N dimension, then `depth`
    steps of its (innermost) K dimension, so that a `depth x columns` block
    of the right operand (a projection's weight) is read from the cache by
    every register block of the row block instead of streaming all of K x N
    from memory for each of them. With fewer than 16 row blocks (a product
    of 320 rows has 5: on 2 threads it takes as long as 6), or a number
    known only at run time (dynamic rows: one sequence of 77 tokens is 2
    blocks), the column blocks are iterations of the parallel loop too,
    and only K is a loop inside. A dimension no longer than its block is
    left whole; when the innermost N is the column within a weight panel
    (`attn-pack-weights`), the panels are blocked, `columns / panel` at a
    time, across the N dimensions before it innermost first (of Q, K and V
    projected together into `[3, N, H, L, D / panel, panel]`: the panels of
    a head, then heads, each block within one of Q, K and V). The fill or bias broadcast a contraction starts from and
    transposes of its operands are computed by each row block for its rows
    (tile-and-fuse), a transpose only where the parallel loop does not
    split the columns too (each of a row's column blocks would transpose
    its rows again) and its rows are not padded (below): otherwise it is a
    parallel loop of its own, one pass over the operand; a transpose every row block would read whole (a weight
    packed on every call) gets a parallel loop of its own instead, over
    about 16 blocks of its leading dimensions, and so do the transposes
    left outside parallel loops once the contractions are distributed (the
    tiled attention's packing of K^T), unless they are small (fewer than
    16384 elements). Reductions (`linalg.reduce`) left outside parallel
    loops, such as multi-head attention's average of the weights over the
    heads, get such a loop over blocks of their result's leading dimensions
    too, each block reducing its part whole. With `conflict-stride` set, a
    contraction's left operand (indexed by M and K, a K innermost) whose
    rows are a multiple of that many bytes apart is first copied, in a
    parallel loop over about 16 blocks of rows, into a buffer whose rows
    are one cache line longer (an operand transposed for it alone is
    written there by the transpose), and the contraction reads the copy: a
    register block broadcasts from each of its rows at every K step, and
    rows that far apart fall in the same L1 sets (the CPU pipeline takes the
    stride from the target model's L1d and register block); not for
    products of fewer than 128 columns, nor for operands the row blocks
    compute themselves. Contractions already inside a
    parallel loop (the tiled attention's) are left alone. Runs before
    `attn-vectorize-tiles`, which register-blocks each block; the blocks
    are marked `attn.cache_blocked` for it (its `contraction-m-block` and
    `contraction-n-block`).
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"64",
           "Rows of M per parallel iteration">,
    Option<"columns", "columns", "int64_t", /*default=*/"0",
           "Columns of N per cache block (0: N whole)">,
    Option<"depth", "depth", "int64_t", /*default=*/"0",
           "Steps of K per cache block (0: K whole)">,
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"0",
           "Most rows per parallel iteration of a long product: `rows` "
           "doubled while the iterations stay at least 16 (0: `rows`)">,
    Option<"conflictStride", "conflict-stride", "int64_t", /*default=*/"0",
           "Copy a row block's left-operand rows to a stride one cache line "
           "longer when their stride is a multiple of this many bytes "
           "(rows that far apart share L1 sets; 0: never)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::bufferization::BufferizationDialect",
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
