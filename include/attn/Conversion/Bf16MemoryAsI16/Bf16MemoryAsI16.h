//===- Bf16MemoryAsI16.h - bf16 vector memory as i16 ------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_BF16MEMORYASI16_BF16MEMORYASI16_H
#define ATTN_CONVERSION_BF16MEMORYASI16_BF16MEMORYASI16_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL_ATTNBF16MEMORYASI16
#include "attn/Conversion/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_BF16MEMORYASI16_BF16MEMORYASI16_H
