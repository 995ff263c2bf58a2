//===- CpuCompiler.cpp - from the LLVM dialect to CPU binaries ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/CpuCompiler.h"
#include "attn/Target/Cpu/CpuTargetModel.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

using namespace mlir;
using namespace mlir::attn;

#ifndef ATTN_HOST_CC
#define ATTN_HOST_CC "cc"
#endif

/// The host's feature string in `-mattr` form.
static std::string getHostFeatures() {
  SmallVector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.push_back((feature.second ? "+" : "-") + feature.first().str());
  llvm::sort(features);
  return llvm::join(features, ",");
}

/// The target triple `options` name, normalised; the host's when empty.
static llvm::Triple getTriple(const CpuTargetOptions &options) {
  return llvm::Triple(llvm::Triple::normalize(
      options.triple.empty() ? llvm::sys::getDefaultTargetTriple()
                             : options.triple));
}

/// Whether code for `triple` runs on this machine's OS and architecture.
static bool runsOnHost(const llvm::Triple &triple) {
  llvm::Triple host(llvm::sys::getDefaultTargetTriple());
  return triple.getArch() == host.getArch() && triple.getOS() == host.getOS();
}

bool attn::isHostTriple(StringRef triple) {
  CpuTargetOptions options;
  options.triple = triple.str();
  return runsOnHost(getTriple(options));
}

bool attn::isHostTarget(const CpuTargetOptions &options) {
  return runsOnHost(getTriple(options)) &&
         (options.cpu.empty() || options.cpu == llvm::sys::getHostCPUName());
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
attn::createCpuTargetMachine(const CpuTargetOptions &options) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    // Every target LLVM was built with: cross-compilation (--mtriple) needs
    // more than the native one.
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
  if (options.optLevel > 3)
    return llvm::createStringError("optimisation level " +
                                   Twine(options.optLevel) +
                                   " is not one of 0, 1, 2, 3");

  llvm::Triple triple = getTriple(options);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for triple '" +
                                   triple.str() + "': " + error);
  bool hostTriple = runsOnHost(triple);
  std::string cpu = options.cpu;
  if (cpu.empty())
    cpu = hostTriple ? llvm::sys::getHostCPUName().str() : "generic";
  std::string features = options.features;
  if (features.empty() && options.cpu.empty() && hostTriple)
    features = getHostFeatures();
  // Checked on a subtarget of the default CPU: one of an unknown CPU
  // prints LLVM's own warning first.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu))
    return llvm::createStringError("unknown CPU '" + cpu + "' for " +
                                   triple.str());

  auto level = static_cast<llvm::CodeGenOptLevel>(options.optLevel);
  // Assembly carries LLVM's comments: loop nesting, spills and reloads
  // (what test/Target/Cpu checks).
  llvm::TargetOptions targetOptions;
  targetOptions.MCOptions.AsmVerbose = true;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, targetOptions,
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return llvm::createStringError("could not create a target machine for " +
                                   cpu);
  return machine;
}

llvm::Error attn::checkRunsOnHost(const llvm::TargetMachine &machine) {
  // The host's map holds the extensions its CPU identification reports
  // (tuning flags, which differ between CPUs of one ISA, are not in it).
  // Extensions of system and library instructions, which code generation
  // never emits for compiled attention, are left out: a virtual machine
  // often hides them (pku) while running the CPU's vector code.
  static constexpr StringLiteral kNeverEmitted[] = {
      "aes",      "cldemote", "clflushopt", "clwb",    "clzero",    "enqcmd",
      "fsgsbase", "hreset",   "invpcid",    "kl",      "lwp",       "movdir64b",
      "movdiri",  "mwaitx",   "pconfig",    "pku",     "prefetchi", "ptwrite",
      "rdpid",    "rdpru",    "rdrnd",      "rdseed",  "rtm",       "serialize",
      "sgx",      "sha",      "sha512",     "shstk",   "sm3",       "sm4",
      "tsxldtrk", "uintr",    "usermsr",    "waitpkg", "wbnoinvd",  "widekl",
      "xsave",    "xsavec",   "xsaveopt",   "xsaves"};
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  SmallVector<StringRef> known;
  for (const llvm::SubtargetFeatureKV &feature :
       subtarget->getAllProcessorFeatures())
    known.push_back(feature.Key);
  SmallVector<std::string> missing;
  for (const auto &[name, present] : llvm::sys::getHostCPUFeatures())
    if (!present && llvm::is_contained(known, name) &&
        !llvm::is_contained(kNeverEmitted, name) &&
        subtarget->checkFeatures(("+" + name).str()))
      missing.push_back(name.str());
  if (missing.empty())
    return llvm::Error::success();
  llvm::sort(missing);
  return llvm::createStringError(
      "code for CPU '" + machine.getTargetCPU().str() + "' uses " +
      llvm::join(missing, ", ") + ", which this CPU (" +
      llvm::sys::getHostCPUName().str() +
      ") lacks: compile it ahead of time (attnc), or drop them with --mattr=" +
      llvm::join(llvm::map_range(missing,
                                 [](const std::string &f) { return "-" + f; }),
                 ","));
}

void attn::registerCpuTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

StringRef attn::getOpenMPLibraryPath() { return ATTN_OPENMP_LIBRARY; }

llvm::Expected<std::unique_ptr<llvm::Module>>
attn::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                        llvm::TargetMachine &target) {
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return llvm::createStringError(
        "translation to LLVM IR failed (diagnostics above)");
  llvmModule->setDataLayout(target.createDataLayout());
  llvmModule->setTargetTriple(target.getTargetTriple());
  return llvmModule;
}

/// Every function defined in `module` (the outlined OpenMP bodies too)
/// told the SVE vector length the code is for, where the target uses SVE
/// (CpuTargetModel::sveVectorBits): LLVM then lowers fixed-length vectors
/// wider than 128 bits to SVE registers instead of splitting them into
/// NEON ones, as the target model's register blocks assume.
static void setSveVectorLength(llvm::Module &module,
                               llvm::TargetMachine &target) {
  unsigned bits = CpuTargetModel::getSveVectorBits(target);
  if (!bits)
    return;
  llvm::Attribute range = llvm::Attribute::getWithVScaleRangeArgs(
      module.getContext(), bits / 128, bits / 128);
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      function.addFnAttr(range);
}

llvm::Error attn::optimizeLLVMModule(llvm::Module &module,
                                     llvm::TargetMachine &target,
                                     unsigned optLevel) {
  setSveVectorLength(module, target);
  if (optLevel == 0)
    return llvm::Error::success();
  // The hot loops arrive vectorised and register-blocked from MLIR, and
  // LLVM's loop unroller only multiplied that code for instruction
  // selection: without it a shape-generic kernel compiles in half the time
  // (0.9 -> 0.45 s) and runs as fast. The loop vectoriser stays: the
  // scalar loops MLIR leaves (rows longer than attn-vectorize-tiles takes,
  // the reference lowering's steps) need it (attn.weights at Sq = Skv =
  // 512 ran 2x slower without it). benchmarks/RESULTS.md, session 9.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&target, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  pb.buildPerModuleDefaultPipeline(level).run(module, mam);
  return llvm::Error::success();
}

llvm::Error attn::emitMachineCode(llvm::Module &module,
                                  llvm::TargetMachine &target,
                                  llvm::CodeGenFileType kind,
                                  llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager codegen;
  if (target.addPassesToEmitFile(codegen, os, nullptr, kind))
    return llvm::createStringError("the target cannot emit this file type");
  codegen.run(module);
  return llvm::Error::success();
}

/// The directory of Debian's cross C library for `triple`
/// (/usr/aarch64-linux-gnu/lib for aarch64-unknown-linux-gnu).
static std::string getCrossLibraryDir(const llvm::Triple &triple) {
  return ("/usr/" + triple.getArchName() + "-" + triple.getOSName() + "-" +
          triple.getEnvironmentName() + "/lib")
      .str();
}

llvm::Error attn::linkSharedLibrary(llvm::StringRef objectPath,
                                    llvm::StringRef outputPath,
                                    llvm::StringRef tripleName,
                                    llvm::ArrayRef<std::string> libraries) {
  llvm::ErrorOr<std::string> driver =
      llvm::sys::findProgramByName(ATTN_HOST_CC);
  if (!driver)
    return llvm::createStringError(Twine("cannot find the linker driver '") +
                                   ATTN_HOST_CC + "' to make a shared library");
  SmallString<128> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attnc-link", "log", log))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  // -z defs: a symbol nothing provides is an error now, not when a user
  // loads the library. Each library is found at load time through an rpath
  // to its directory (LLVM's library directory, where libomp lives, is not
  // on the loader's default path).
  SmallVector<StringRef> args = {*driver,    "-shared",  "-o",
                                 outputPath, objectPath, "-Wl,-z,defs"};
  // Another architecture: the driver is clang, which targets any triple,
  // but its search for a cross GCC installation finds nothing on Debian
  // without one: no start files (a shared library needs none), libc and
  // libm named explicitly from the cross C library.
  llvm::Triple triple(llvm::Triple::normalize(tripleName));
  std::string targetFlag, libraryFlag;
  if (!isHostTriple(tripleName)) {
    std::string dir = getCrossLibraryDir(triple);
    if (!llvm::sys::fs::exists(dir + "/libc.so.6"))
      return llvm::createStringError(
          "linking a shared library for " + triple.str() +
          " needs its C "
          "library in " +
          dir + " (Debian: apt-get install libc6-dev-" +
          (triple.isAArch64() ? StringRef("arm64") : triple.getArchName()) +
          "-cross)");
    targetFlag = "--target=" + triple.str();
    libraryFlag = "-L" + dir;
    args.append({targetFlag, "-fuse-ld=lld", "-nostartfiles", "-nodefaultlibs",
                 libraryFlag, "-lm", "-lc"});
  } else {
    // Conversions LLVM calls (__truncsfbf2 without AVX512-BF16): compiler-rt
    // has them, libgcc does not. An archive: only what is called is linked.
    if (StringRef(ATTN_HOST_BUILTINS).size())
      args.push_back(ATTN_HOST_BUILTINS);
    args.push_back("-lm");
  }
  SmallVector<std::string> rpaths;
  for (const std::string &library : libraries)
    rpaths.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
  for (auto [library, libraryRpath] : llvm::zip(libraries, rpaths))
    args.append({library, libraryRpath});
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error);
  auto output = llvm::MemoryBuffer::getFile(log);
  std::string message = output ? (*output)->getBuffer().trim().str() : "";
  llvm::sys::fs::remove(log);
  if (rc != 0)
    return llvm::createStringError("linking " + outputPath + " with " +
                                   *driver + " failed" +
                                   (error.empty() ? "" : ": " + error) +
                                   (message.empty() ? "" : ":\n" + message));
  return llvm::Error::success();
}

llvm::Error attn::emitSharedLibrary(llvm::Module &module,
                                    llvm::TargetMachine &target,
                                    llvm::StringRef outputPath,
                                    llvm::ArrayRef<std::string> libraries) {
  SmallString<128> object;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn", "o", fd, object))
    return llvm::createStringError("cannot create a temporary object file: " +
                                   ec.message());
  llvm::FileRemover removeObject(object);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    if (llvm::Error err = emitMachineCode(
            module, target, llvm::CodeGenFileType::ObjectFile, os))
      return err;
  }
  return linkSharedLibrary(object, outputPath, target.getTargetTriple().str(),
                           libraries);
}
