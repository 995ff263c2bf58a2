//===- CpuAllocatorHooks.h - replaceable allocator of CPU code --*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_CPUALLOCATORHOOKS_CPUALLOCATORHOOKS_H
#define ATTN_CONVERSION_CPUALLOCATORHOOKS_CPUALLOCATORHOOKS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL_ATTNCPUALLOCATORHOOKS
#include "attn/Conversion/Passes.h.inc"

/// The entry point compiled CPU code exports to replace its allocator
/// (docs/CpuABI.md): `void attn_set_allocator(void *(*alloc)(uint64_t),
/// void (*free)(void *))`.
constexpr llvm::StringLiteral kSetAllocatorFunction = "attn_set_allocator";

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_CPUALLOCATORHOOKS_CPUALLOCATORHOOKS_H
