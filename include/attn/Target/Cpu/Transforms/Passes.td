//===- Passes.td - CPU code generation passes -------------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The passes that turn the tiled, target-neutral linalg of attn-tile (and
// the contractions of the multihead lowering) into code for one CPU:
// cache and register blocking, vector code, polynomial transcendentals,
// buffer placement, prefetches and the OpenMP schedule. They take their
// sizes from the CPU target model (Target/Cpu/CpuTargetModel.h) through the
// CPU pipeline, and know nothing of the attn ops: everything attn-specific
// has been lowered before they run. Listed in pipeline order.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPU_TRANSFORMS_PASSES_TD
#define ATTN_TARGET_CPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // ATTN_TARGET_CPU_TRANSFORMS_PASSES_TD
