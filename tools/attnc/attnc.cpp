//===- attnc.cpp - the attn-mlir compiler driver --------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attnc INPUT.mlir -o OUT --target=cpu|cuda
//       --emit=mlir|llvm|asm|obj|shared|header (cuda also: ptx|cubin)
//
// Runs the same named pipeline as `attn-opt --attn-cpu-pipeline` (or
// `--attn-cuda-pipeline`, whose kernels gpu-module-to-binary has already
// compiled to PTX or a cubin for --gpu-arch), then LLVM on the host code:
// translation, optimisation at -O<n>, machine code for the host (or
// --mcpu/--mattr), and a shared library through the system's C driver
// (linked against libattn_cuda_runtime for CUDA).
// Every failure is a diagnostic and exit status 1; no partial output file is
// left behind.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Cpu/CpuABI.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "attn/Target/Cuda/CudaCompiler.h"
#include "attn/Tools/DriverSupport.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { Mlir, Llvm, Asm, Obj, Shared, Header, Ptx, Cubin };

cl::OptionCategory category("attnc options");

cl::opt<std::string> inputFilename(cl::Positional, cl::Optional,
                                   cl::desc("<input .mlir file>"),
                                   cl::cat(category));
cl::opt<std::string> outputFilename(
    "o", cl::value_desc("file"),
    cl::desc("Output file ('-' for stdout; default: the input's name with "
             "the extension of --emit)"),
    cl::cat(category));
cl::opt<std::string> targetName("target", cl::init("cpu"),
                                cl::desc("Target: cpu or cuda"),
                                cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::init(Emit::Obj), cl::desc("What to produce"),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "the LLVM-dialect MLIR module"),
               clEnumValN(Emit::Llvm, "llvm", "optimised LLVM IR (.ll)"),
               clEnumValN(Emit::Asm, "asm", "assembly (.s)"),
               clEnumValN(Emit::Obj, "obj", "an object file (.o)"),
               clEnumValN(Emit::Shared, "shared", "a shared library (.so)"),
               clEnumValN(Emit::Header, "header",
                          "C declarations of the public functions (.h)"),
               clEnumValN(Emit::Ptx, "ptx", "the kernels' PTX (cuda)"),
               clEnumValN(Emit::Cubin, "cubin",
                          "the kernels' cubin, from ptxas (cuda)")),
    cl::cat(category));
attn::CpuCompileFlags compileFlags(category);
attn::CudaCompileFlags cudaFlags(category);
cl::opt<bool> printPipeline("print-pipeline",
                            cl::desc("Print the MLIR pass pipeline to stderr"),
                            cl::cat(category));
cl::opt<bool> verbose("v",
                      cl::desc("Print the target, the sizes chosen for it "
                               "and the time each stage takes"),
                      cl::cat(category));

StringRef getExtension(Emit kind) {
  switch (kind) {
  case Emit::Mlir:
    return ".ll.mlir";
  case Emit::Llvm:
    return ".ll";
  case Emit::Asm:
    return ".s";
  case Emit::Obj:
    return ".o";
  case Emit::Shared:
    return ".so";
  case Emit::Header:
    return ".h";
  case Emit::Ptx:
    return ".ptx";
  case Emit::Cubin:
    return ".cubin";
  }
  llvm_unreachable("covered switch");
}

LogicalResult reportError(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attnc") << message << "\n";
  return failure();
}

LogicalResult reportError(llvm::Error error) {
  return reportError(llvm::toString(std::move(error)));
}

/// An include guard from the output file's name: `foo-bar.h` -> FOO_BAR_H.
std::string getHeaderGuard(StringRef path) {
  std::string guard;
  for (char c : llvm::sys::path::filename(path))
    guard += llvm::isAlnum(c) ? llvm::toUpper(c) : '_';
  if (guard.empty() || llvm::isDigit(guard[0]))
    guard = "ATTN_" + guard;
  return guard;
}

/// Opens `path` for writing; the file is removed again unless `keep()` is
/// called on the result.
std::unique_ptr<llvm::ToolOutputFile> openOutput(StringRef path) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    (void)reportError(error);
  return file;
}

/// Writes the device code of every kernel module: to `output` when there
/// is one module, else to `output` with the module's name before the
/// extension (PTX files cannot be concatenated).
LogicalResult writeGpuObjects(ModuleOp module, StringRef output) {
  SmallVector<attn::GpuObject> objects = attn::collectGpuObjects(module);
  if (objects.empty())
    return reportError("the module has no kernels to emit");
  for (const attn::GpuObject &object : objects) {
    std::string path = output.str();
    if (objects.size() > 1 && output != "-") {
      SmallString<128> named(output);
      StringRef extension = llvm::sys::path::extension(output);
      llvm::sys::path::replace_extension(named,
                                         "." + object.module + extension.str());
      path = named.str().str();
    }
    auto file = openOutput(path);
    if (!file)
      return failure();
    file->os() << object.bytes;
    file->keep();
  }
  return success();
}

LogicalResult compile(MLIRContext &context, TimingScope &root) {
  std::string output = outputFilename;
  if (output.empty()) {
    StringRef stem = inputFilename == "-"
                         ? StringRef("a")
                         : llvm::sys::path::stem(inputFilename);
    output = (stem + getExtension(emit)).str();
  }
  if (targetName != "cpu" && targetName != "cuda")
    return reportError("unknown target '" + targetName +
                       "'; this build supports: cpu, cuda");
  bool cuda = targetName == "cuda";
  if (!cuda && (emit == Emit::Ptx || emit == Emit::Cubin))
    return reportError("--emit=ptx and --emit=cubin need --target=cuda");
  auto settings = compileFlags.parse();
  if (!settings)
    return reportError(settings.takeError());
  // -v says what the CPU code is generated for (--print-target already
  // did).
  if (verbose && !cuda && !compileFlags.printTarget)
    settings->printTarget(llvm::errs());
  // `attnc --print-target` alone only says what the target is.
  if (inputFilename.empty())
    return compileFlags.printTarget
               ? success()
               : reportError("no input file; usage: attnc IN.mlir -o OUT "
                             "[options] (--help lists them)");
  std::unique_ptr<attn::CudaPipelineOptions> cudaOptions;
  if (cuda) {
    auto parsed = cudaFlags.parse();
    if (!parsed)
      return reportError(parsed.takeError());
    cudaOptions = std::move(*parsed);
  }
  if (cuda && emit == Emit::Shared && attn::getCudaRuntimeLibraryPath().empty())
    return reportError("--target=cuda --emit=shared: this build found no "
                       "CUDA toolkit, so there is no runtime library to "
                       "link against");
  if (output == "-" &&
      (emit == Emit::Obj || emit == Emit::Shared || emit == Emit::Cubin))
    return reportError("--emit=obj, --emit=shared and --emit=cubin need an "
                       "output file, not stdout");

  // Parse and verify.
  TimingScope parseTimer = root.nest("parse and verify");
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  OwningOpRef<ModuleOp> module =
      attn::parseModuleFile(inputFilename, sourceMgr, &context, error);
  if (!module)
    return error.empty() ? failure() : reportError(error);
  parseTimer.stop();

  // The ABI is checked first so that an untranslatable signature is
  // reported against the source, whatever is emitted.
  FailureOr<SmallVector<attn::FunctionAbi>> abis = attn::getModuleAbi(*module);
  if (failed(abis))
    return failure();
  if (emit == Emit::Header) {
    TimingScope timer = root.nest("C header");
    auto file = openOutput(output);
    if (!file)
      return failure();
    attn::emitCHeader(*abis, getHeaderGuard(output), inputFilename, file->os(),
                      /*deviceBuffers=*/cuda);
    file->keep();
    return success();
  }

  // Autotuning runs the CPU pipeline's candidates before the real compile.
  if (cuda && (compileFlags.autotune || !compileFlags.tuningCache.empty()))
    return reportError("--autotune and --tuning-cache tune the CPU "
                       "pipeline; --target=cuda has no tuning yet");
  if (!cuda) {
    TimingScope timer = root.nest("autotune");
    if (llvm::Error err = compileFlags.tune(*settings, *module, verbose))
      return reportError(std::move(err));
  }

  // The MLIR pipeline, shared with attn-opt --attn-cpu-pipeline (or
  // --attn-cuda-pipeline).
  {
    TimingScope timer = root.nest("MLIR pipeline");
    PassManager pm(&context);
    if (cuda) {
      cudaOptions->format = emit == Emit::Ptx ? "isa" : "bin";
      attn::buildCudaPipeline(pm, *cudaOptions);
    } else {
      attn::buildCpuPipeline(pm, *settings->pipeline, settings->model);
    }
    if (printPipeline) {
      pm.printAsTextualPipeline(llvm::errs());
      llvm::errs() << "\n";
    }
    if (verbose)
      pm.enableTiming(timer);
    if (failed(pm.run(*module)))
      return failure();
  }
  if (emit == Emit::Ptx || emit == Emit::Cubin)
    return writeGpuObjects(*module, output);
  if (emit == Emit::Mlir) {
    auto file = openOutput(output);
    if (!file)
      return failure();
    module->print(file->os());
    file->keep();
    return success();
  }

  // LLVM: translate, optimise, generate code.
  auto machine = attn::createCpuTargetMachine(settings->target);
  if (!machine)
    return reportError(machine.takeError());
  llvm::LLVMContext llvmContext;
  TimingScope translateTimer = root.nest("translate to LLVM IR");
  auto llvmModule = attn::translateToLLVMIR(*module, llvmContext, **machine);
  if (!llvmModule)
    return reportError(llvmModule.takeError());
  translateTimer.stop();
  TimingScope optimizeTimer =
      root.nest("LLVM -O" + std::to_string(compileFlags.optLevel));
  if (llvm::Error err = attn::optimizeLLVMModule(**llvmModule, **machine,
                                                 compileFlags.optLevel))
    return reportError(std::move(err));
  optimizeTimer.stop();
  if (emit == Emit::Llvm) {
    auto file = openOutput(output);
    if (!file)
      return failure();
    (*llvmModule)->print(file->os(), nullptr);
    file->keep();
    return success();
  }

  TimingScope codegenTimer = root.nest("machine code");
  if (emit == Emit::Asm || emit == Emit::Obj) {
    auto file = openOutput(output);
    if (!file)
      return failure();
    auto kind = emit == Emit::Asm ? llvm::CodeGenFileType::AssemblyFile
                                  : llvm::CodeGenFileType::ObjectFile;
    if (llvm::Error err =
            attn::emitMachineCode(**llvmModule, **machine, kind, file->os()))
      return reportError(std::move(err));
    file->keep();
    return success();
  }

  // A shared library: an object in a temporary file, linked.
  codegenTimer.stop();
  TimingScope linkTimer = root.nest("machine code and link");
  // Threaded CPU code calls the OpenMP runtime: the build machine's, so
  // only for its own architecture (code for another one runs on one thread
  // by default, see CpuCompileFlags).
  SmallVector<std::string> libraries;
  if (cuda)
    libraries.push_back(attn::getCudaRuntimeLibraryPath().str());
  else if (attn::isHostTriple(settings->target.triple))
    libraries.push_back(attn::getOpenMPLibraryPath().str());
  if (llvm::Error err =
          attn::emitSharedLibrary(**llvmModule, **machine, output, libraries))
    return reportError(std::move(err));
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attnc: compile a module of attn ops for the CPU or CUDA GPUs to MLIR, "
      "LLVM IR, assembly, an object file, a shared library, a C header, or "
      "the kernels' PTX or cubin\n");

  DialectRegistry registry;
  attn::registerCpuDriverDialects(registry);
  MLIRContext context(registry);
  // Diagnostics point at the source; the generic form of the op adds noise.
  context.printOpOnDiagnostic(false);

  DefaultTimingManager timing;
  timing.setEnabled(verbose);
  TimingScope root = timing.getRootScope();
  LogicalResult result = compile(context, root);
  root.stop();
  return succeeded(result) ? 0 : 1;
}
