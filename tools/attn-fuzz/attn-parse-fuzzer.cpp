//===- attn-parse-fuzzer.cpp - bytes as MLIR through the CPU pipeline -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// libFuzzer target: the input is parsed as MLIR text with every dialect
// the drivers register; a module that parses and verifies, and is written
// in the CPU pipeline's input language, is compiled by the CPU pipeline
// and translated to LLVM IR for one of several targets (chosen by a hash
// of the input). Every step must succeed or emit an error diagnostic; a
// failure without one, a crash, or LLVM IR that does not verify is a
// finding. Seed corpus: test/ and examples/ (docs/Testing.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "PipelineFuzzing.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::attn;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  getFuzzRegistry();
  prepareCpuTargets();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef source(reinterpret_cast<const char *>(data), size);
  MLIRContext context(getFuzzRegistry(), MLIRContext::Threading::DISABLED);
  DiagnosticRecorder diagnostics(context);
  if (OwningOpRef<ModuleOp> module =
          parsePipelineInput(context, source, diagnostics))
    compileForCpu(*module, source, diagnostics);
  return 0;
}
