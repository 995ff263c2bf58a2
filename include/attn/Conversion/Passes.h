//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"
#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"
#include "attn/Conversion/Bf16MemoryAsI16/Bf16MemoryAsI16.h"
#include "attn/Conversion/CheckAbi/CheckAbi.h"
#include "attn/Conversion/CpuAllocatorHooks/CpuAllocatorHooks.h"
#include "attn/Conversion/ParallelLoopsToRuntime/ParallelLoopsToRuntime.h"

namespace mlir {
namespace attn {

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_PASSES_H
