//===- CheckAbi.h - entry points check what they are given -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_CHECKABI_CHECKABI_H
#define ATTN_CONVERSION_CHECKABI_CHECKABI_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL_ATTNCHECKABI
#define GEN_PASS_DECL_ATTNRECORDABISIZES
#include "attn/Conversion/Passes.h.inc"

/// The entry point the pass exports and the fields it reports are part of
/// the C ABI: kAbiErrorFunction and AbiMismatch in attn/Target/Cpu/CpuABI.h.

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_CHECKABI_CHECKABI_H
