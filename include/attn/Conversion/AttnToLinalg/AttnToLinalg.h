//===- AttnToLinalg.h - reference lowering of attn to linalg ----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
#define ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace attn {

#define GEN_PASS_DECL_ATTNLOWERTOLINALG
#include "attn/Conversion/Passes.h.inc"

/// Adds the patterns that lower attn.sdpa and attn.weights to the unfused
/// reference computation in linalg on tensors, and the paged-cache and
/// packed-sequence ops to the gathers and copies they stand for
/// (`rowCopies`, `fusionMarks`: attn-lower-to-linalg's row-copies and
/// fusion-marks options).
void populateAttnToLinalgPatterns(RewritePatternSet &patterns,
                                  bool rowCopies = false,
                                  bool fusionMarks = false);

/// The paged-cache and packed-sequence part of those patterns alone
/// (ServingOpsToLinalg.cpp): attn.gather_pages, attn.append_pages,
/// attn.pad_sequences and attn.unpad_sequences.
void populateServingOpsToLinalgPatterns(RewritePatternSet &patterns,
                                        bool rowCopies = false);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
