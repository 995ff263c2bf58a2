//===- attn-gen-fuzzer.cpp - random valid attn programs, run and checked --===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// libFuzzer target, structure-aware: the input bytes choose a valid attn
// program and CPU pipeline options (ProgramGenerator). The program must
// parse and verify, and the CPU pipeline must compile it; when it is small
// it runs on random inputs with NaN-poisoned outputs and every output must
// match the float64 reference within its element type's tolerance (what
// `attn-run --check` requires). One input in four also goes through the
// CUDA pipeline to PTX (no GPU needed), which must succeed or emit an
// error. Anything else is a finding: the program, the options and the
// numbers are printed and the fuzzer stops with the input saved.
//
// ATTN_FUZZ_VERBOSE=1 prints every program and what happened to it.
// ATTN_FUZZ_MCPU / ATTN_FUZZ_MATTR compile for another CPU of the host's
// architecture, so that one host fuzzes the code other hosts get
// (`ATTN_FUZZ_MCPU=znver3 ATTN_FUZZ_MATTR=-sse4a` on an Intel AVX-512 host
// runs AVX2 code with AVX2's register blocks); a CPU with extensions the
// host lacks is refused before the first input.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "ProgramGenerator.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/JitRunner.h"
#include "attn/Runner/RandomInputs.h"
#include "attn/Runner/Reference.h"
#include "attn/Target/Cpu/CpuABI.h"
#include "attn/Target/Cpu/CpuTargetModel.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <fuzzer/FuzzedDataProvider.h>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Programs up to this many multiply-adds run against the reference: a few
/// milliseconds each, so that a fuzz iteration is bound by compilation.
constexpr int64_t kMaxRunWork = int64_t(1) << 23;

struct HostTarget {
  CpuTargetOptions options;
  CpuTargetModel model;
};

const HostTarget &getHost() {
  static const HostTarget host = [] {
    HostTarget result;
    if (const char *cpu = std::getenv("ATTN_FUZZ_MCPU"))
      result.options.cpu = cpu;
    if (const char *features = std::getenv("ATTN_FUZZ_MATTR"))
      result.options.features = features;
    auto model = CpuTargetModel::get(result.options);
    llvm::Error error = model ? llvm::Error::success() : model.takeError();
    // A CPU the host cannot run (ATTN_FUZZ_MCPU) is a setup error, not a
    // finding of the first input.
    if (!error) {
      auto machine = createCpuTargetMachine(result.options);
      error = machine ? checkRunsOnHost(**machine) : machine.takeError();
    }
    if (error) {
      llvm::errs() << "attn-gen-fuzzer: " << llvm::toString(std::move(error))
                   << "\n";
      std::abort();
    }
    result.model = std::move(*model);
    return result;
  }();
  return host;
}

/// The program and options, for a finding's report.
std::string describe(const GeneratedProgram &program) {
  return llvm::formatv("choices: {0}\ncpu pipeline: \"{1}\"", program.summary,
                       program.cpuPipeline)
      .str();
}

/// A finding for a step that failed on `program` with `error`: the
/// choices, the error and the diagnostics so far.
[[noreturn]] void reportFailure(const llvm::Twine &message,
                                const GeneratedProgram &program,
                                llvm::Error error,
                                const DiagnosticRecorder &diagnostics) {
  reportFinding(message,
                describe(program) + "\n" + llvm::toString(std::move(error)) +
                    "\n" + diagnostics.getText(),
                program.source);
}

/// Runs `program`'s @main on random inputs and compares every output with
/// the float64 reference.
void runAndCheck(ModuleOp module, const GeneratedProgram &program,
                 const CpuPipelineOptions &options, uint64_t seed,
                 DiagnosticRecorder &diagnostics) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  FailureOr<FunctionAbi> abi = getFunctionAbi(func);
  if (failed(abi))
    reportFinding("@main has no C ABI", diagnostics.getText(), program.source);
  const HostTarget &host = getHost();
  auto compiled =
      JitFunction::compile(module, *abi, host.options, host.model, options);
  if (!compiled)
    reportFailure("the CPU pipeline rejected a valid program", program,
                  compiled.takeError(), diagnostics);

  SmallVector<HostArray> arrays =
      makeRandomInputs(func, *abi, program.inputShapes, seed);
  auto analysis = analyzeCall(module, "main", program.inputShapes);
  if (!analysis)
    reportFailure("no result shapes", program, analysis.takeError(),
                  diagnostics);
  for (auto [i, shape] : llvm::enumerate(analysis->resultShapes)) {
    arrays.emplace_back(abi->params[abi->numInputs + i].element, shape);
    arrays.back().poison();
  }
  if (llvm::Error err = (*compiled)->call(arrays))
    reportFailure("the compiled code refused its inputs", program,
                  std::move(err), diagnostics);

  auto reference = computeFloat64Reference(module, func, *abi, arrays,
                                           host.options, host.model);
  if (!reference)
    reportFailure("no float64 reference", program, reference.takeError(),
                  diagnostics);
  SmallVector<Comparison> comparisons =
      compareOutputs(ArrayRef(arrays).drop_front(abi->numInputs), *reference);
  for (unsigned i = abi->numInputs; i < abi->params.size(); ++i) {
    const Comparison &comparison = comparisons[i - abi->numInputs];
    Tolerance tolerance = getTolerance(abi->params[i].element);
    if (isFuzzVerbose())
      llvm::errs() << llvm::formatv(
          "  result #{0}: relative error {1:e}, "
          "row {2:e}\n",
          i - abi->numInputs, comparison.relativeError, comparison.maxRowError);
    if (!comparison.passes(tolerance))
      reportFinding(
          llvm::formatv("result #{0} differs from the float64 reference",
                        i - abi->numInputs),
          describe(program) +
              llvm::formatv("\nseed {0}: relative error {1:e} (tolerance "
                            "{2:e}), largest row error {3:e} (tolerance "
                            "{4:e}) at row [{5}], {6} values NaN or infinite",
                            seed, comparison.relativeError, tolerance.whole,
                            comparison.maxRowError, tolerance.row,
                            comparison.formatWorstRow(), comparison.nonFinite)
                  .str(),
          program.source);
  }
}

/// Compiles without running: the CPU pipeline must succeed on a valid
/// program of any size.
void compileOnly(ModuleOp module, const GeneratedProgram &program,
                 const CpuPipelineOptions &options,
                 DiagnosticRecorder &diagnostics) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  buildCpuPipeline(pm, options, getHost().model);
  if (failed(pm.run(*copy)))
    reportFinding("the CPU pipeline rejected a valid program",
                  describe(program) + "\n" + diagnostics.getText(),
                  program.source);
}

/// The CUDA pipeline to PTX: it must succeed or say why not.
void compileForCuda(ModuleOp module, const GeneratedProgram &program,
                    DiagnosticRecorder &diagnostics) {
  OwningOpRef<ModuleOp> copy = module.clone();
  CudaPipelineOptions options;
  options.format = "isa";
  PassManager pm(module.getContext());
  buildCudaPipeline(pm, options);
  unsigned before = diagnostics.getErrorCount();
  if (failed(pm.run(*copy)) && diagnostics.getErrorCount() == before)
    reportFinding("the CUDA pipeline failed without an error",
                  describe(program), program.source);
  if (isFuzzVerbose())
    llvm::errs() << "  cuda: "
                 << (diagnostics.getErrorCount() == before ? "ptx" : "error")
                 << "\n";
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  getFuzzRegistry();
  getHost();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider provider(data, size);
  GeneratedProgram program = generateProgram(provider);
  uint64_t seed = provider.ConsumeIntegral<uint32_t>();
  bool cuda = provider.ConsumeIntegralInRange<int>(0, 3) == 0;
  if (isFuzzVerbose())
    llvm::errs() << "---- " << describe(program) << "\n" << program.source;

  MLIRContext context(getFuzzRegistry(), MLIRContext::Threading::DISABLED);
  DiagnosticRecorder diagnostics(context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      program.source, ParserConfig(&context), "generated");
  if (!module)
    reportFinding("a generated program does not parse or verify",
                  describe(program) + "\n" + diagnostics.getText(),
                  program.source);
  auto options = CpuPipelineOptions::createFromString(program.cpuPipeline);
  if (!options)
    reportFinding("the generated pipeline options do not parse",
                  describe(program), program.source);

  if (program.work <= kMaxRunWork)
    runAndCheck(*module, program, *options, seed, diagnostics);
  else
    compileOnly(*module, program, *options, diagnostics);
  if (cuda)
    compileForCuda(*module, program, diagnostics);
  return 0;
}
