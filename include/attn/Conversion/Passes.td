//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// AttnToLinalg
//===----------------------------------------------------------------------===//

def AttnLowerToLinalg : Pass<"attn-lower-to-linalg"> {
  let summary = "Reference (unfused) lowering of attn.sdpa and attn.weights to linalg";
  let description = [{
    Lowers `attn.sdpa` and `attn.weights` to the textbook computation on
    tensors, one linalg op per step:

    1. `S = Q K^T` as a `linalg.generic` contraction over the head dimension
       with `f32` accumulation (GQA maps query head `h` to key head
       `h / (Hq / Hkv)` in the indexing map, with no copy of K or V);
    2. one elementwise `linalg.generic` that applies the scale, the additive
       mask, the inlined `score_mod` region and every keep condition
       (boolean mask, inlined `mask_mod`, causal, window, `kv_lens`),
       writing `-inf` for dropped keys;
    3. a row max (`linalg.reduce`), `exp(s - max)` with the max of a fully
       masked row taken as 0, a row sum, and the division, where a zero sum
       yields 0 instead of NaN;
    4. dropout by the counter-based hash of `(seed, b, h, i, j)`;
    5. `O = P V` (for `attn.sdpa`), again with `f32` accumulation, truncated
       to the element type of the result.

    This materialises the full `Sq x Skv` score matrix; it is the baseline
    that tiled lowerings are tested and measured against.

    `attn.gather_pages` becomes a `linalg.generic` that writes the gathered
    `[B, H, max_pages * page_size, D]` tensor, each element read through
    the page table (entries clamped to the cache's pages).

    `attn.pad_sequences` and `attn.unpad_sequences` become `linalg.generic`
    gathers: each element of the result reads its source under an `scf.if`
    (padding is 0; packed rows no sequence covers keep the destination's
    values), the sequence of a packed row found by a scan over the
    offsets. With `row-copies`, each becomes an `scf.forall` over the
    sequences instead, each iteration a `linalg.transpose` of the
    sequence's rows into its place (and, in the padded tensor, `linalg.fill`s
    of zeros before and after them), each written into a slice of the
    result so that it bufferizes in place: whole rows copied, several times
    faster on CPUs than per-element gathers.

    With `fusion-marks` (the CPU pipeline's tiled lowering), the last op
    of an `attn.weights`' probabilities and the `Q K^T` of every score op
    carry marks (`attn.probabilities`, `attn.scores`) for
    `attn-fuse-weights`, which fuses those steps per block of query rows
    and removes the marks. The conversion itself schedules nothing.
  }];
  let options = [
    Option<"fusionMarks", "fusion-marks", "bool", /*default=*/"false",
           "Mark attn.weights' probabilities and every Q K^T for "
           "attn-fuse-weights">,
    Option<"rowCopies", "row-copies", "bool", /*default=*/"false",
           "attn.pad_sequences and attn.unpad_sequences as parallel copies "
           "of whole rows per sequence (the CPU pipeline), not element-wise "
           "gathers">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// AttnToGPU
//===----------------------------------------------------------------------===//

def AttnLowerToGPU : Pass<"attn-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "attn.sdpa and attn.sdpa_grad on f16/bf16 to FlashAttention-2 "
                "style GPU kernels (tensor cores, cp.async, shared memory)";
  let description = [{
    Replaces every `attn.sdpa` the kernel supports (f16 or bf16 Q/K/V/O, a
    static head dimension D and value dimension Dv that are multiples of 16
    and at most 256, no block-sparse layout; with or without its `lse`
    result; a run-time `dropout_seed` is read once per thread) by a
    `gpu.launch` that computes it on tensor cores, and every
    `attn.sdpa_grad` the backward kernels support (the same, D and Dv at
    most 128) by two launches: dQ (which
    also stores rowsum(dO O)), then dK and dV (docs/CUDA.md, "The backward
    kernels"). The rest are left for `attn-lower-to-linalg`. With
    `explain`, each op gets a remark saying which kernel it got and why.

    Work decomposition (docs/CUDA.md): one thread block of 4 warps per
    (query tile of 64 rows, head, batch), grid
    `(ceil(Sq / 64), Hq, B)`; each warp owns 16 query rows, holds
    its Q fragments in registers for the whole loop (past D = 128 the
    block's Q tile waits in shared memory instead), and walks the key tiles
    the mask band leaves (the same analysis and three-loop split as
    `attn-tile`: tiles outside the band are never visited, tiles inside it
    evaluate no keep condition). Per key tile of `kv-tile` keys, the block
    copies K and V into shared memory with `cp.async` (zero-filling rows
    past Skv), computes `S = Q K^T` with `mma.sync.m16n8k16` (f32
    accumulators), applies the score semantics of docs/Numerics.md element
    by element on the accumulator fragments (scale, masks, `score_mod`,
    `mask_mod`, causal, window, `kv_lens`, dropout), updates the running
    max and sum of each row in registers (two butterfly shuffles per row),
    and accumulates `P V` with a second `mma.sync` whose A operand is the
    probability fragment itself. The V copy overlaps the `Q K^T` product.
    Output rows past Sq are never stored; a row without visible keys is 0.

    Operands are read through `bufferization.to_buffer`, the output is a
    fresh `memref.alloc` returned by `bufferization.to_tensor`, so one-shot
    bufferization and the out-parameter ABI apply unchanged.
  }];
  let options = [
    Option<"kvTile", "kv-tile", "int64_t", /*default=*/"0",
           "Keys per shared-memory tile of the forward kernel (a multiple "
           "of 16); 0 chooses 64 up to D = Dv = 64 (32 with dropout), 32 up "
           "to 128 and 16 beyond, so that a thread's registers hold its Q "
           "fragments, output accumulators and one score tile">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on each attn.sdpa and attn.sdpa_grad: the "
           "kernels it got, or why not">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnRecordAbiSizes : Pass<"attn-record-abi-sizes", "::mlir::ModuleOp"> {
  let summary = "Record how the sizes of a public function's buffers must relate";
  let description = [{
    Runs on functions on tensors, before anything is lowered: on every
    public function with a body, puts in the `attn.abi_size_relations`
    attribute (a flat array of `[param, dimension, other param, other
    dimension, kind]` tuples, other param -1 for a constant size; kind 0:
    equal, 1: a multiple of the other, which is positive, 2: a positive
    divisor of the other) the relations between sizes of its buffers that
    the compiled code assumes and no type fixes, and in the
    `attn.abi_value_checks` attribute (an array of i64 arrays: kind, the
    parameters whose values are read, then `(param, dimension)` per size,
    -1 and a constant for a static one) what the values of its integer
    parameters must hold (attn::getValueChecks): kind 0, `[0, lengths,
    bound]`, the key lengths (`kv_lens`) within the keys; kind 1, `[1,
    table, lengths, pages, keys per page]`, the block table entries of
    `attn.gather_pages` that name pages of keys (the first
    ceil(lengths[b] / P) of row b) among the cache's pages; kind 2, `[2,
    table, positions, pages, keys per page, new rows]`, the rows of
    `attn.append_pages` inside the table, on pages of the cache, no page
    written by two sequences. Both for `--attn-check-abi` to check on every
    call. Parameters are numbered as the C ABI passes them: the inputs,
    then one output per result; a value check is recorded only where the
    integer tensors are parameters as given.

    Two sources, in the function's entry block (code that runs on every
    call), each size traced back to a dimension of a parameter or a
    constant:
    - what the attn ops' lowerings assume where their verifiers accept a
      `?`: key and value on [B, Hkv, Skv], the head dimension of query and
      key, the query heads a multiple of the key/value heads, a mask
      dimension that is not a static 1 against [B, Hq, Sq, Skv] (a dynamic
      mask dimension is read at full extent, not broadcast), `kv_lens`,
      results and gradients against their operands, multihead's inputs,
      weights and masks against its embedding and lengths;
    - the loops of linalg ops: every operand dimension indexed by a loop
      equal to the first one, which bounds it;
    and every dynamic dimension of a result equal to the size the function
    computes it from. Without the check a `tensor<2x?x30x50xf32>` mask given
    with one head for four is read out of bounds. Sizes the function
    computes by arithmetic (products, quotients) are not recorded.

    Example: for

    ```mlir
    func.func @f(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                 %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
    ```

    with an `attn.sdpa %q, %k, %v` whose init is sized by `%q`, the
    relations are `[2, 2, 1, 2, 0, 3, 2, 0, 2, 0]`: the value's keys are
    the key's, the output's rows the query's.
  }];
}

def AttnCheckAbi : Pass<"attn-check-abi", "::mlir::ModuleOp"> {
  let summary = "Make public functions check the buffers they are given";
  let description = [{
    Runs on a bufferized module (memrefs, before the lowering to LLVM).
    Every public function with buffer arguments (with the identity layout)
    and no results (the out-parameter ABI of docs/CpuABI.md) takes them as
    fully dynamic strided memrefs of the same rank and element type,
    returns an `i32`, and starts by checking each buffer against the type
    it was compiled for: every static size equal, no negative dynamic size,
    every stride that of a dense row-major buffer of the sizes given
    (dimensions of size 1 may have any stride), offset 0 (the compiled type
    has none), no null data pointer for a non-empty buffer, and the sizes
    `--attn-record-abi-sizes` recorded in `attn.abi_size_relations` related
    as it says, and the values `attn.abi_value_checks` names as it says (the
    attributes are then dropped). Only then are the buffers cast back to their
    compiled types and the body runs, and the function returns 0;
    otherwise it records the first mismatch and returns 1 without touching
    any buffer. The record is read with the function the pass exports:

        int attn_abi_error(int64_t info[5]);

    which returns 1 and fills `info` (if not null) with (argument index,
    dimension, kind, expected, actual) of the last refused call (kind 0: a
    size, 1: a stride, 2: a null pointer, 3: an offset, dimension -1 for
    these two, 4: a size that breaks a recorded relation, whose other
    side's size is `expected`, 5: an element of a buffer of lengths
    outside [0, `expected`], `dimension` its index; 6: a block table's
    entry naming a page outside [0, `expected`) for keys the function reads
    or rows it writes, `dimension` its row-major index; 7: the position of
    a sequence's appended rows outside [0, `expected`], where they fit its
    table row, `dimension` the sequence; 8: two sequences, `expected` and
    `dimension`, appending into page `actual`: the value checks recorded in
    `attn.abi_value_checks`, checked last, by loops over the values in use
    (the appends' writers tracked in a scratch array over the pages, set
    only where written), and forgets it; 0
    if none was refused since. The status a call returns is its own; the
    record is one per library (concurrent refused calls keep one of
    theirs). The checks cost a few comparisons per buffer and call;
    without them a buffer of the wrong size is read or written out of
    bounds.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def AttnCpuAllocatorHooks
    : Pass<"attn-cpu-allocator-hooks", "::mlir::ModuleOp"> {
  let summary = "Route CPU code's heap allocations through a replaceable allocator";
  let description = [{
    Runs on a module lowered to the LLVM dialect whose buffers were
    lowered with `finalize-memref-to-llvm{use-generic-functions}`: it
    defines the `_mlir_memref_to_llvm_alloc` and `_mlir_memref_to_llvm_free`
    those calls name (with internal linkage, so that two compiled
    libraries in one process never bind to each other's) and exports

        void attn_set_allocator(void *(*alloc)(uint64_t size),
                                void (*free)(void *pointer));

    Until it is called, or after it is called with null functions, the
    temporaries of the module's functions come from `malloc` and go back
    to `free`, as with upstream's lowering. A runtime that calls the
    module many times installs a caching allocator instead (the Python
    package and `attn-run` do, `docs/CpuABI.md`): a temporary of several
    MiB then reuses the pages of the previous call instead of faulting in
    fresh ones, which took 15-20% of a multi-head attention's time.

    The setter must be called before any call of the module's functions
    is in flight (it is not synchronised with them), and `free` must
    accept every pointer `alloc` returned. Allocation failure is not
    checked, as with upstream's `malloc` calls.
  }];
}

def AttnParallelLoopsToRuntime
    : Pass<"attn-parallel-loops-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Run CPU code's parallel loops on the host program's thread pool";
  let description = [{
    Runs on buffers (memrefs, `scf`) before the lowering to LLVM. Every
    outermost `scf.parallel` without results becomes a call

        __attn_parallel_for(@body, ctx, trips)

    of its iterations, numbered 0 to `trips` - 1 in row-major order of
    its dimensions: `@body(ctx, begin, end)` is a new private function that
    runs iterations `begin` to `end` - 1 (each between a save and a restore
    of the stack pointer, so an iteration's stack tiles are freed with it), and `ctx` a stack record of the values the loop uses from
    outside (constants are re-created in the body instead). Parallel
    loops inside the body run sequentially (`scf.for` nests): the host's
    pool gives each iteration one thread.

    The module exports

        void attn_set_parallel_for(int (*parallel_for)(
            void (*body)(void *ctx, int64_t begin, int64_t end),
            void *ctx, int64_t trips));

    With no `parallel_for` set, or when it returns nonzero (it declines
    the loop), `__attn_parallel_for` runs the iterations on the OpenMP
    runtime as before (an `scf.parallel` of one iteration per call, which
    `convert-scf-to-openmp` and `attn-omp-dynamic-schedule` then lower).
    A host program that has its own thread pool installs it here (the
    Python package binds torch's OpenMP team when torch is loaded,
    `docs/CpuABI.md`): compiled code then shares that pool instead of
    starting a second one whose threads spin on the same cores after each
    call. `parallel_for` returns 0 after every iteration has run; it may
    run them on any threads, in any order and grouping, and must be
    thread-safe.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def AttnBf16MemoryAsI16 : Pass<"attn-bf16-memory-as-i16"> {
  let summary = "Load and store bf16 vectors as i16 vectors (an LLVM 22 X86 workaround)";
  let description = [{
    Runs on the LLVM dialect. Every `llvm.load` and `llvm.store` of a
    vector of bf16 whose length is 1 more than a multiple of 8 (9, 17,
    ...) loads or stores the vector of i16 with the same bits, with an
    `llvm.bitcast` between: LLVM 22's X86 backend, on CPUs with
    AVX512-BF16, stops with "Do not know how to soft promote this
    operator's operand" on a load of `<17 x bfloat>` stored unchanged (a
    row copy of a bf16 tensor whose rows have 17 elements: what
    `attn-vectorize-tiles` makes of a copy of K's rows at D = 17, found by
    attn-gen-fuzzer). Other lengths, element types and targets are left as
    they are; the bits loaded and stored are the same.
  }];
}

def AttnGpuHostMemory : Pass<"attn-gpu-host-memory", "::mlir::ModuleOp"> {
  let summary = "Put the host code's buffers in device memory";
  let description = [{
    In code compiled for CUDA every buffer a public function receives or
    allocates lives in device memory (docs/CUDA.md). After bufferization and
    the mapping of loops to kernels, this pass rewrites what is left on the
    host: `memref.alloc`/`memref.alloca` become `gpu.alloc`,
    `memref.dealloc` becomes `gpu.dealloc`, and `memref.copy` between
    contiguous buffers becomes `gpu.memcpy`; a constant buffer
    (`memref.get_global`, e.g. document ids a `mask_mod` reads) is copied to
    a device buffer where it is taken; allocations are freed at the
    end of their block unless passed on. Any other host operation that
    reads or writes a buffer's contents and has no results (a sequential
    loop, e.g. building the block table of a CSR layout) runs as a kernel
    of one thread. One with results needed on the host, or a copy of a
    strided view, is an error naming the operation: it would dereference a
    device pointer on the CPU.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnGpuTileParallelLoops
    : Pass<"attn-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Split each outermost scf.parallel into grid and block loops";
  let description = [{
    Prepares parallel loops (linalg ops converted with
    `convert-linalg-to-parallel-loops`) for `gpu-map-parallel-loops`: every
    outermost `scf.parallel` outside a `gpu.launch` becomes an outer loop
    over all of its dimensions, the last one stepping by
    `threads-per-block`, around an inner one-dimensional loop of
    `threads-per-block` iterations guarded against the last dimension's
    bound. The mapping then gives the outer dimensions to blocks and the
    inner one to threads, so that neighbouring threads touch neighbouring
    elements of the innermost dimension.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"128", "Threads of a block (the inner loop's size)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnGpuExpandIndexMath : Pass<"attn-gpu-expand-index-math"> {
  let summary = "Rewrite index-typed math ops the NVVM lowering misses";
  let description = [{
    `convert-gpu-to-nvvm` converts `math.absi` on `index` only halfway (the
    result keeps an unresolvable cast), and such ops appear in kernels
    whenever a `mask_mod` measures a distance (`examples/image-window-2d`).
    This pass rewrites `math.absi %x : index` as `arith.maxsi %x, (0 - %x)`
    before kernels are lowered.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
