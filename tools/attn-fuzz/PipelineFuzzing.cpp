//===- PipelineFuzzing.cpp - MLIR text through the pipelines, checked -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "PipelineFuzzing.h"
#include "FuzzSupport.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "attn/Target/Cpu/CpuTargetModel.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The targets the pipeline is run for: the host, x86-64 without AVX, the
/// AVX2 and AVX-512 CPUs of this project's machines, and an AArch64 CPU.
struct FuzzTarget {
  CpuTargetOptions options;
  CpuTargetModel model;
  std::unique_ptr<llvm::TargetMachine> machine;
};

SmallVector<FuzzTarget, 6> &getTargets() {
  static SmallVector<FuzzTarget, 6> targets = [] {
    SmallVector<FuzzTarget, 6> result;
    const std::pair<const char *, const char *> names[] = {
        {"", ""},
        {"x86_64-unknown-linux-gnu", "x86-64"},
        {"x86_64-unknown-linux-gnu", "znver3"},
        {"x86_64-unknown-linux-gnu", "skylake-avx512"},
        {"x86_64-unknown-linux-gnu", "sapphirerapids"},
        {"aarch64-unknown-linux-gnu", "neoverse-v2"}};
    for (auto [triple, cpu] : names) {
      FuzzTarget target;
      target.options.triple = triple;
      target.options.cpu = cpu;
      auto model = CpuTargetModel::get(target.options);
      auto machine = createCpuTargetMachine(target.options);
      if (!model || !machine) {
        llvm::errs() << "attn fuzz: no target " << triple << " " << cpu << "\n";
        llvm::consumeError(model.takeError());
        llvm::consumeError(machine.takeError());
        continue;
      }
      target.model = std::move(*model);
      target.machine = std::move(*machine);
      result.push_back(std::move(target));
    }
    return result;
  }();
  return targets;
}

} // namespace

/// Whether every op of `module` is of a dialect the CPU pipeline takes as
/// input: attn, and the func/arith/math/tensor/linalg ops around it. Other
/// dialects (gpu, llvm, memref, ...) are upstream's to fuzz.
static bool isPipelineInput(ModuleOp module) {
  static const llvm::StringSet<> dialects = {
      "builtin", "func", "attn", "arith", "math", "tensor", "linalg"};
  WalkResult result = module->walk([](Operation *op) {
    Dialect *dialect = op->getDialect();
    return dialect && dialects.contains(dialect->getNamespace())
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether `source` has a `permutation =` or `dimensions =` not followed
/// by a well-formed `[i, j, ...]`. LLVM 22's linalg parser crashes on
/// those (linalg.transpose, linalg.broadcast and linalg.reduce store the
/// null attribute a failed DenseI64ArrayAttr::parse returns: a segfault in
/// NamedAttrList::set), an upstream bug this target cannot fix, so such
/// inputs are skipped rather than reported (a mutated
/// `permutation = [0, 1, 2, 4}` was found by parse-short.test).
static bool hasMalformedLinalgDenseArray(StringRef source) {
  for (StringRef keyword : {"permutation", "dimensions"}) {
    for (size_t at = source.find(keyword); at != StringRef::npos;
         at = source.find(keyword, at + 1)) {
      StringRef rest = source.drop_front(at + keyword.size()).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        return true;
      // Integers separated by commas, then "]".
      bool expectValue = true;
      while (true) {
        rest = rest.ltrim();
        if (rest.consume_front("]")) {
          break;
        }
        if (expectValue) {
          rest.consume_front("-");
          size_t digits = rest.find_first_not_of("0123456789");
          if (digits == 0 || rest.empty())
            return true;
          rest = rest.drop_front(std::min(digits, rest.size()));
          expectValue = false;
        } else if (!rest.consume_front(",")) {
          return true;
        } else {
          expectValue = true;
        }
      }
    }
  }
  return false;
}

OwningOpRef<ModuleOp>
attn::parsePipelineInput(MLIRContext &context, StringRef source,
                         const DiagnosticRecorder &diagnostics) {
  if (hasMalformedLinalgDenseArray(source))
    return nullptr;
  // The parser reads a null-terminated buffer.
  std::string text = source.str();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), "input");
  if (!module) {
    if (!diagnostics.getErrorCount())
      reportFinding("the parser failed without an error", "", source);
    return nullptr;
  }
  if (!isPipelineInput(*module))
    return nullptr;
  return module;
}

void attn::prepareCpuTargets() { getTargets(); }

void attn::compileForCpu(ModuleOp module, StringRef source,
                         const DiagnosticRecorder &diagnostics) {
  SmallVector<FuzzTarget, 6> &targets = getTargets();
  FuzzTarget &target = targets[llvm::hash_value(source) % targets.size()];
  CpuPipelineOptions options;
  PassManager pm(module.getContext());
  buildCpuPipeline(pm, options, target.model);
  if (failed(pm.run(module))) {
    if (!diagnostics.getErrorCount())
      reportFinding("the CPU pipeline failed without an error",
                    target.options.cpu, source);
    if (isFuzzVerbose())
      llvm::errs() << diagnostics.getText();
    return;
  }
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(module, llvmContext, *target.machine);
  // What the pipeline makes must translate: it is what attnc emits.
  if (!llvmModule)
    reportFinding("the CPU pipeline's output does not translate to LLVM IR",
                  llvm::toString(llvmModule.takeError()) + "\n" +
                      diagnostics.getText(),
                  source);
  std::string broken;
  llvm::raw_string_ostream os(broken);
  if (llvm::verifyModule(**llvmModule, &os))
    reportFinding("the LLVM IR does not verify", broken, source);
  if (isFuzzVerbose())
    llvm::errs() << "compiled for " << target.options.cpu << "\n";
}
