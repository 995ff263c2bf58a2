//===- Passes.h - the attn-ext example's passes -----------------*- C++ -*-===//
//
// An example project built on the installed attn-mlir (docs/Install.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXT_PASSES_H
#define ATTN_EXT_PASSES_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Pass/Pass.h"

namespace attn_ext {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "AttnExt/Passes.h.inc"

} // namespace attn_ext

#endif // ATTN_EXT_PASSES_H
