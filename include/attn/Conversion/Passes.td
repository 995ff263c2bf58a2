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
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
