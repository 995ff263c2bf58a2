//===- Passes.td - attn dialect transformation passes ------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
