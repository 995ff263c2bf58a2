//===- CpuCompiler.h - from the LLVM dialect to CPU binaries ----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The steps after `buildCpuPipeline` that every CPU driver shares: a target
// machine for the host (or a named CPU), translation to LLVM IR, the LLVM
// optimisation pipeline, machine code, and linking a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPU_CPUCOMPILER_H
#define ATTN_TARGET_CPU_CPUCOMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
class DialectRegistry;

namespace attn {

/// What code is generated for.
struct CpuTargetOptions {
  /// LLVM optimisation level, 0 to 3.
  unsigned optLevel = 3;
  /// `-mtriple` spelling; empty means the host's triple.
  std::string triple;
  /// `-mcpu` spelling; empty means the host CPU when the triple is the
  /// host's, "generic" otherwise.
  std::string cpu;
  /// `-mattr` spelling (`+avx512f,-amx-tile`); empty means the host's
  /// features when `cpu` is empty, the CPU's defaults otherwise.
  std::string features;
};

/// Registers every LLVM target once and returns a target machine for
/// `options`, position independent so that objects can go into shared
/// libraries; the error names an unknown triple or CPU.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createCpuTargetMachine(const CpuTargetOptions &options);

/// Succeeds when code from `machine`, for the host's triple (isHostTriple),
/// uses no instruction set extension this CPU lacks (`--mcpu=znver3` on an
/// Intel host uses SSE4a); the error names the CPU and the missing
/// features.
llvm::Error checkRunsOnHost(const llvm::TargetMachine &machine);

/// Whether code for `triple` (empty: the host's) runs on this machine's OS
/// and architecture.
bool isHostTriple(llvm::StringRef triple);

/// Whether code for `options` runs on this machine: the triple is the
/// host's (or empty) and the CPU is the host's (or empty).
bool isHostTarget(const CpuTargetOptions &options);

/// Adds the translations from the dialects the CPU pipeline produces to
/// LLVM IR.
void registerCpuTranslations(DialectRegistry &registry);

/// The OpenMP runtime (libomp) threaded code calls: linked into shared
/// libraries and loaded by the JIT.
llvm::StringRef getOpenMPLibraryPath();

/// Translates an LLVM-dialect module to LLVM IR with the target's triple and
/// data layout.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &target);

/// Gives the functions of `module` the target's SVE vector length where
/// it uses SVE (CpuTargetModel::sveVectorBits), then runs LLVM's default
/// optimisation pipeline at `optLevel` on it, without its loop unroller
/// (the hot loops are vectorised and blocked already; see the definition).
llvm::Error optimizeLLVMModule(llvm::Module &module,
                               llvm::TargetMachine &target, unsigned optLevel);

/// Writes `module` as an object file or assembly.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &target,
                            llvm::CodeGenFileType kind,
                            llvm::raw_pwrite_stream &os);

/// Links the object file `objectPath` for `triple` into the shared library
/// `outputPath` with the system's C compiler driver, against the shared
/// `libraries` (full paths, found at load time through an rpath:
/// getOpenMPLibraryPath() for CPU code, the CUDA runtime for CUDA code); the
/// error carries the linker's own message. For the host's triple the driver
/// finds libc and libm itself; for another one (cross-compilation) it links
/// with lld against Debian's cross C library in /usr/<arch>-<os>-<env>/lib
/// (for AArch64: libc6-dev-arm64-cross).
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath,
                              llvm::StringRef triple,
                              llvm::ArrayRef<std::string> libraries = {});

/// Generates `module`'s object code into a temporary file and links it into
/// the shared library `outputPath` (emitMachineCode, then
/// linkSharedLibrary).
llvm::Error emitSharedLibrary(llvm::Module &module, llvm::TargetMachine &target,
                              llvm::StringRef outputPath,
                              llvm::ArrayRef<std::string> libraries = {});

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CPU_CPUCOMPILER_H
