//===- ParallelLoopsToRuntime.h - parallel loops through a host's pool ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PARALLELLOOPSTORUNTIME_PARALLELLOOPSTORUNTIME_H
#define ATTN_CONVERSION_PARALLELLOOPSTORUNTIME_PARALLELLOOPSTORUNTIME_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL_ATTNPARALLELLOOPSTORUNTIME
#include "attn/Conversion/Passes.h.inc"

/// The setter every module with parallel loops exports (docs/CpuABI.md):
/// `void attn_set_parallel_for(int (*parallel_for)(
///      void (*body)(void *ctx, int64_t begin, int64_t end), void *ctx,
///      int64_t trips))`.
constexpr llvm::StringLiteral kSetParallelForFunction = "attn_set_parallel_for";

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_PARALLELLOOPSTORUNTIME_PARALLELLOOPSTORUNTIME_H
