//===- AttnPlugin.cpp - the attn dialect and passes for upstream mlir-opt -===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// One shared library that an upstream `mlir-opt` linked to the same
// libMLIR.so loads twice over: with --load-dialect-plugin it adds the attn
// dialect to the tool's registry, with --load-pass-plugin every attn pass
// and named pipeline (docs/Plugins.md). Both entry points are what
// mlir/Tools/Plugins look up by name.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAllAttn.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnDialect", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            attn::registerAllAttnDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnPasses", LLVM_VERSION_STRING,
          []() { attn::registerAllAttnPasses(); }};
}
