//===- CpuAllocatorHooks.cpp - replaceable allocator of CPU code ----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Defines the allocation functions that finalize-memref-to-llvm's
// `use-generic-functions` calls, as calls through two function pointers a
// runtime may set (attn_set_allocator), malloc and free while they are
// null. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/CpuAllocatorHooks/CpuAllocatorHooks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCPUALLOCATORHOOKS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The functions finalize-memref-to-llvm{use-generic-functions} calls.
constexpr StringLiteral kAllocFunction = "_mlir_memref_to_llvm_alloc";
constexpr StringLiteral kFreeFunction = "_mlir_memref_to_llvm_free";

/// The definitions, in the LLVM dialect. The hooks and the generic
/// functions are internal: each compiled library has its own.
constexpr StringLiteral kDefinitions = R"mlir(
llvm.mlir.global internal @__attn_alloc_hook() : !llvm.ptr {
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}
llvm.mlir.global internal @__attn_free_hook() : !llvm.ptr {
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}
llvm.func @attn_set_allocator(%alloc: !llvm.ptr, %free: !llvm.ptr) {
  %a = llvm.mlir.addressof @__attn_alloc_hook : !llvm.ptr
  llvm.store %alloc, %a : !llvm.ptr, !llvm.ptr
  %f = llvm.mlir.addressof @__attn_free_hook : !llvm.ptr
  llvm.store %free, %f : !llvm.ptr, !llvm.ptr
  llvm.return
}
llvm.func internal @_mlir_memref_to_llvm_alloc(%size: i64) -> !llvm.ptr {
  %a = llvm.mlir.addressof @__attn_alloc_hook : !llvm.ptr
  %hook = llvm.load %a : !llvm.ptr -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %unset = llvm.icmp "eq" %hook, %null : !llvm.ptr
  llvm.cond_br %unset, ^malloc, ^hooked
^malloc:
  %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
^hooked:
  %q = llvm.call %hook(%size) : !llvm.ptr, (i64) -> !llvm.ptr
  llvm.return %q : !llvm.ptr
}
llvm.func internal @_mlir_memref_to_llvm_free(%pointer: !llvm.ptr) {
  %f = llvm.mlir.addressof @__attn_free_hook : !llvm.ptr
  %hook = llvm.load %f : !llvm.ptr -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %unset = llvm.icmp "eq" %hook, %null : !llvm.ptr
  llvm.cond_br %unset, ^free, ^hooked
^free:
  llvm.call @free(%pointer) : (!llvm.ptr) -> ()
  llvm.return
^hooked:
  llvm.call %hook(%pointer) : !llvm.ptr, (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
)mlir";

struct AttnCpuAllocatorHooksPass
    : attn::impl::AttnCpuAllocatorHooksBase<AttnCpuAllocatorHooksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // The generic functions, if the module allocates, are declarations
    // with the signatures the definitions have (64-bit sizes).
    for (StringLiteral name : {kAllocFunction, kFreeFunction}) {
      auto declared = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!declared)
        continue;
      if (!declared.isExternal()) {
        declared.emitOpError("attn-cpu-allocator-hooks: ")
            << name << " is already defined";
        return signalPassFailure();
      }
    }
    OwningOpRef<ModuleOp> definitions =
        parseSourceString<ModuleOp>(kDefinitions, ParserConfig(ctx));
    if (!definitions) {
      module.emitError("attn-cpu-allocator-hooks: the allocator definitions "
                       "do not parse");
      return signalPassFailure();
    }
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    for (Operation &op :
         llvm::make_early_inc_range(definitions->getBody()->getOperations())) {
      StringRef name = SymbolTable::getSymbolName(&op).getValue();
      Operation *existing = module.lookupSymbol(name);
      auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (existing && function && function.isExternal())
        continue; // malloc or free, declared already
      if (existing) {
        auto declared = dyn_cast<LLVM::LLVMFuncOp>(existing);
        if (!declared || !declared.isExternal() ||
            (name != kAllocFunction && name != kFreeFunction)) {
          existing->emitOpError("attn-cpu-allocator-hooks: the symbol ")
              << name << " is taken";
          return signalPassFailure();
        }
        if (declared.getFunctionType() != function.getFunctionType()) {
          existing->emitOpError("attn-cpu-allocator-hooks: ")
              << name << " has type " << declared.getFunctionType()
              << ", expected " << function.getFunctionType()
              << " (64-bit index)";
          return signalPassFailure();
        }
        existing->erase();
      }
      op.moveBefore(builder.getInsertionBlock(), builder.getInsertionPoint());
    }
  }
};

} // namespace
