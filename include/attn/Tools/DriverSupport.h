//===- DriverSupport.h - what attnc and attn-run share ----------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The pieces of the two CPU drivers that must not differ between them: the
// dialects they load, how they read a module, and the flags that choose how
// the CPU pipeline and LLVM compile it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_DRIVERSUPPORT_H
#define ATTN_TOOLS_DRIVERSUPPORT_H

#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Cpu/CpuTargetModel.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;

namespace attn {

/// Adds every upstream dialect and extension, the attn dialect and the
/// translations the CPU and CUDA targets need.
void registerCpuDriverDialects(DialectRegistry &registry);

/// Parses and verifies the module in `path` ("-" for stdin), adding the
/// file to `sourceMgr` so that diagnostics point into it. Returns null with
/// `error` set when the file cannot be read, null with diagnostics emitted
/// when it does not parse or verify.
OwningOpRef<ModuleOp> parseModuleFile(llvm::StringRef path,
                                      llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context, std::string &error);

/// What the CPU flags of a driver say: the pipeline's options, the target
/// LLVM generates code for and its model.
struct CpuCompileSettings {
  std::unique_ptr<CpuPipelineOptions> pipeline;
  CpuTargetOptions target;
  CpuTargetModel model;

  /// The model and the sizes chosen from it, with the reasons
  /// (`--print-target`, `attnc -v`).
  void printTarget(llvm::raw_ostream &os) const;
};

/// `--cpu-pipeline=`, `-O<n>`, `--mtriple`, `--mcpu`, `--mattr`,
/// `--print-target`, `--autotune` and `--tuning-cache`, registered in
/// `category` when constructed (a driver holds one as a global, like any
/// cl::opt).
struct CpuCompileFlags {
  explicit CpuCompileFlags(llvm::cl::OptionCategory &category);

  llvm::cl::opt<std::string> cpuPipeline;
  llvm::cl::opt<unsigned> optLevel;
  llvm::cl::opt<std::string> mtriple;
  llvm::cl::opt<std::string> mcpu;
  llvm::cl::opt<std::string> mattr;
  llvm::cl::opt<bool> printTarget;
  llvm::cl::opt<bool> autotune;
  llvm::cl::opt<std::string> tuningCache;

  /// Checks `-O`, parses `--cpu-pipeline` (whose target-* options the
  /// drivers take as --mtriple/--mcpu/--mattr instead) and builds the
  /// target model; the error names the bad flag and value. With
  /// --print-target, prints the model and the sizes chosen to stderr.
  llvm::Expected<CpuCompileSettings> parse() const;

  /// With --autotune (time the candidates unless the tuning cache has the
  /// sizes) or --tuning-cache alone (only look them up): writes the sizes
  /// autotuning finds for `module` into `settings.pipeline`. Warnings (a
  /// corrupt or foreign cache entry) go to stderr, and with `verbose` what
  /// was found and measured.
  llvm::Error tune(CpuCompileSettings &settings, ModuleOp module,
                   bool verbose) const;
};

/// `--gpu-arch=` and `--cuda-pipeline=`, for the drivers' CUDA target.
struct CudaCompileFlags {
  explicit CudaCompileFlags(llvm::cl::OptionCategory &category);

  llvm::cl::opt<std::string> gpuArch;
  llvm::cl::opt<std::string> cudaPipeline;

  /// Parses `--cuda-pipeline` and checks `--gpu-arch` (sm_80 or newer: the
  /// kernels use cp.async and bf16 mma.sync); the error names the flag.
  llvm::Expected<std::unique_ptr<CudaPipelineOptions>> parse() const;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_DRIVERSUPPORT_H
