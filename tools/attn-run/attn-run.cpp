//===- attn-run.cpp - JIT-compile and run attn modules --------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attn-run FILE.mlir [--entry=NAME] [--inputs=a.npy,...] [--outputs=o.npy,...]
//          [--seed=N] [--input-shapes=AxB...,...] [--check
//          [--expected=e.npy,...]]
//          [--repeat=N] [--dump=DIR] [--target=cpu|cuda] [--gpu-arch=sm_XY]
//
// Compiles the module with the CPU pipeline (the one attnc uses), or with
// --target=cuda the CUDA pipeline (inputs copied to device buffers, outputs
// poisoned there and copied back, --repeat timed with CUDA events), calls
// the entry function on .npy or seeded random inputs with NaN-poisoned
// outputs, and optionally compares every output with the float64 reference
// (the same module widened by --attn-widen-to-f64 and compiled by the CPU
// reference pipeline) or with given arrays, as a whole and row by row.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Runner/CudaDevice.h"
#include "attn/Runner/JitRunner.h"
#include "attn/Runner/RandomInputs.h"
#include "attn/Runner/Reference.h"
#include "attn/Tools/DriverSupport.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <optional>
#include <random>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("attn-run options");

cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                   cl::desc("<input .mlir file>"),
                                   cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("Function to call (default: the only "
                                    "public function)"),
                           cl::cat(category));
cl::list<std::string> inputFiles("inputs", cl::CommaSeparated,
                                 cl::desc("One .npy file per argument"),
                                 cl::cat(category));
cl::list<std::string> outputFiles("outputs", cl::CommaSeparated,
                                  cl::desc("One .npy file per result to "
                                           "write"),
                                  cl::cat(category));
cl::list<std::string> inputShapes(
    "input-shapes", cl::CommaSeparated,
    cl::desc("Shapes (AxBxC) of the random inputs, one per argument; needed "
             "when an argument has dynamic dimensions"),
    cl::cat(category));
cl::opt<uint64_t> seedOption("seed",
                             cl::desc("Seed of the random inputs (default: "
                                      "fresh, printed)"),
                             cl::cat(category));
cl::opt<bool> check("check",
                    cl::desc("Compare every output with the float64 "
                             "reference; exit 1 above tolerance"),
                    cl::cat(category));
cl::list<std::string> expectedFiles(
    "expected", cl::CommaSeparated, cl::value_desc("a.npy,..."),
    cl::desc("With --check: compare with these arrays, one .npy per result "
             "(e.g. from an independent oracle), instead of the float64 "
             "reference lowering"),
    cl::cat(category));
cl::opt<std::string> dumpDir(
    "dump", cl::value_desc("dir"),
    cl::desc("Write the inputs (inN.npy), the outputs (outN.npy) and, with "
             "--check, the float64 reference (refN.npy) into this existing "
             "directory: a case another machine can check"),
    cl::cat(category));
cl::opt<unsigned> repeat("repeat", cl::init(0),
                         cl::desc("Time N more calls; print min/median time "
                                  "and GFLOP/s"),
                         cl::cat(category));
CpuCompileFlags compileFlags(category);
cl::opt<std::string> targetName("target", cl::init("cpu"),
                                cl::desc("Where the entry runs: cpu, or cuda "
                                         "(device 0)"),
                                cl::cat(category));
CudaCompileFlags cudaFlags(category);

LogicalResult reportError(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-run") << message << "\n";
  return failure();
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// The entry point: --entry, or the module's only public function.
FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  if (!entry.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal())
      return reportError("the module defines no function @" + entry);
    return func;
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.size() == 1)
    return candidates.front();
  if (candidates.empty())
    return reportError("the module defines no public function to run");
  std::string names;
  for (func::FuncOp func : candidates)
    names += " @" + func.getSymName().str();
  return reportError("the module defines " + Twine(candidates.size()) +
                     " public functions (" + StringRef(names).trim() +
                     "); choose one with --entry");
}

/// Loads the .npy inputs, converting between kinds of the same family.
FailureOr<SmallVector<HostArray>> loadInputs(const FunctionAbi &abi) {
  if (inputFiles.size() != abi.numInputs)
    return reportError("@" + abi.name + " takes " + Twine(abi.numInputs) +
                       " inputs, --inputs names " + Twine(inputFiles.size()) +
                       " files");
  SmallVector<HostArray> inputs;
  for (unsigned i = 0; i < abi.numInputs; ++i) {
    auto array = readNpy(inputFiles[i]);
    if (!array)
      return reportError(llvm::toString(array.takeError()));
    AbiElement want = abi.params[i].element;
    AbiElement have = array->getElement();
    bool compatible = isFloatElement(want) == isFloatElement(have) &&
                      (want == AbiElement::i1) == (have == AbiElement::i1);
    if (!compatible)
      return reportError(inputFiles[i] + " holds " + stringifyAbiElement(have) +
                         " data, input #" + Twine(i) + " of @" + abi.name +
                         " is " + stringifyAbiElement(want));
    if (!abi.params[i].accepts(array->getShape()))
      return reportError(
          inputFiles[i] + " holds a " + formatShape(array->getShape()) +
          " array, input #" + Twine(i) + " of @" + abi.name + " is " +
          formatTensorType(abi.params[i].shape, abi.params[i].element));
    if (std::optional<int64_t> bad = findUnrepresentable(*array, want))
      return reportError(inputFiles[i] + ": element " + Twine(*bad) + " (" +
                         Twine(array->getInt(*bad)) + ") does not fit " +
                         stringifyAbiElement(want) + ", the type of input #" +
                         Twine(i) + " of @" + abi.name);
    inputs.push_back(convertArray(*array, want));
  }
  return inputs;
}

/// The shape of each random input: static dimensions from the type, the
/// rest from --input-shapes.
FailureOr<SmallVector<SmallVector<int64_t>>>
getRandomInputShapes(const FunctionAbi &abi) {
  SmallVector<SmallVector<int64_t>> shapes;
  bool dynamic = false;
  for (unsigned i = 0; i < abi.numInputs; ++i) {
    shapes.push_back(abi.params[i].shape);
    dynamic |= !abi.params[i].hasStaticShape();
  }
  if (inputShapes.empty()) {
    if (dynamic)
      return reportError("@" + abi.name +
                         " has inputs with dynamic dimensions; give the "
                         "shape of every input with --input-shapes (or "
                         "give --inputs)");
    return shapes;
  }
  if (inputShapes.size() != abi.numInputs)
    return reportError("@" + abi.name + " takes " + Twine(abi.numInputs) +
                       " inputs, --input-shapes gives " +
                       Twine(inputShapes.size()) + " shapes");
  for (unsigned i = 0; i < abi.numInputs; ++i) {
    SmallVector<StringRef> dims;
    StringRef(inputShapes[i]).split(dims, 'x');
    if (inputShapes[i].empty())
      dims.clear();
    SmallVector<int64_t> shape;
    for (StringRef dim : dims) {
      int64_t size;
      if (dim.getAsInteger(10, size) || size < 0)
        return reportError("--input-shapes: '" + inputShapes[i] +
                           "' is not a shape like 2x8x128x64");
      shape.push_back(size);
    }
    const AbiParam &param = abi.params[i];
    if (!param.accepts(shape))
      return reportError("--input-shapes: input #" + Twine(i) + " of @" +
                         abi.name + " is " +
                         formatTensorType(param.shape, param.element) +
                         ", which shape " + inputShapes[i] + " does not fit");
    shapes[i] = shape;
  }
  return shapes;
}

//===----------------------------------------------------------------------===//
// Checking and timing
//===----------------------------------------------------------------------===//

/// How far an output is from its reference.
/// With --dump, writes arrays [first, end) as `<prefix>N.npy`.
LogicalResult dumpArrays(ArrayRef<HostArray> arrays, unsigned first,
                         StringRef prefix) {
  if (dumpDir.empty())
    return success();
  for (unsigned i = first; i < arrays.size(); ++i) {
    std::string path =
        (dumpDir + "/" + prefix + Twine(i - first) + ".npy").str();
    if (llvm::Error err = writeNpy(path, arrays[i]))
      return reportError(llvm::toString(std::move(err)));
  }
  return success();
}

/// The --expected arrays, one per result of `abi`, each of the shape of
/// the result in `arrays` (inputs, then results).
FailureOr<SmallVector<HostArray>> loadExpected(const FunctionAbi &abi,
                                               ArrayRef<HostArray> arrays) {
  unsigned results = abi.params.size() - abi.numInputs;
  if (expectedFiles.size() != results)
    return reportError("@" + abi.name + " has " + Twine(results) +
                       " results, --expected names " +
                       Twine(expectedFiles.size()) + " files");
  SmallVector<HostArray> expected;
  for (unsigned i = 0; i < results; ++i) {
    auto array = readNpy(expectedFiles[i]);
    if (!array)
      return reportError(llvm::toString(array.takeError()));
    ArrayRef<int64_t> want = arrays[abi.numInputs + i].getShape();
    if (array->getShape() != want)
      return reportError(expectedFiles[i] + " holds a " +
                         formatShape(array->getShape()) + " array, result #" +
                         Twine(i) + " of @" + abi.name + " is " +
                         formatShape(want));
    expected.push_back(convertArray(*array, AbiElement::f64));
  }
  return expected;
}

/// The results of `func`'s float64 reference on `arrays`' inputs; with
/// --dump, also written as refN.npy.
FailureOr<SmallVector<HostArray>>
computeReference(ModuleOp module, func::FuncOp func, const FunctionAbi &abi,
                 ArrayRef<HostArray> arrays,
                 const CpuCompileSettings &settings) {
  auto reference = computeFloat64Reference(module, func, abi, arrays,
                                           settings.target, settings.model);
  if (!reference)
    return reportError("--check: " + llvm::toString(reference.takeError()));
  if (failed(dumpArrays(*reference, 0, "ref")))
    return failure();
  return std::move(*reference);
}

/// Compares each output in `arrays` with the --expected arrays, or with the
/// float64 reference on the same inputs.
LogicalResult checkOutputs(ModuleOp module, func::FuncOp func,
                           const FunctionAbi &abi, ArrayRef<HostArray> arrays,
                           const CpuCompileSettings &settings) {
  FailureOr<SmallVector<HostArray>> expected =
      expectedFiles.empty()
          ? computeReference(module, func, abi, arrays, settings)
          : loadExpected(abi, arrays);
  if (failed(expected))
    return failure();

  SmallVector<Comparison> comparisons =
      compareOutputs(ArrayRef(arrays).drop_front(abi.numInputs), *expected);
  bool ok = true;
  for (unsigned i = abi.numInputs; i < abi.params.size(); ++i) {
    const AbiParam &param = abi.params[i];
    const Comparison &comparison = comparisons[i - abi.numInputs];
    Tolerance tolerance = getTolerance(param.element);
    bool pass = comparison.passes(tolerance);
    ok &= pass;
    llvm::outs() << llvm::formatv(
        "@{0} result #{1} {2}: relative error {3:e}, largest row error {4:e}"
        "{5} (tolerance {6:e}, per row {7:e}) {8}",
        abi.name, i - abi.numInputs,
        formatTensorType(arrays[i].getShape(), param.element),
        comparison.relativeError, comparison.maxRowError,
        comparison.worstRow.empty()
            ? std::string()
            : " at [" + comparison.formatWorstRow() + "]",
        tolerance.whole, tolerance.row, pass ? "ok" : "FAIL");
    if (comparison.nonFinite)
      llvm::outs() << ", " << comparison.nonFinite << " of "
                   << arrays[i].getNumElements()
                   << " values are NaN or infinite";
    llvm::outs() << "\n";
  }
  return success(ok);
}

/// Device copies of a call's arrays, freed on destruction.
class DeviceBuffers {
public:
  explicit DeviceBuffers(CudaDevice &device) : device(device) {}
  ~DeviceBuffers() {
    for (void *pointer : pointers)
      llvm::consumeError(device.free(pointer));
  }

  /// Allocates a device buffer per array and copies every array (inputs,
  /// and the NaN-poisoned outputs) into it.
  llvm::Error upload(ArrayRef<HostArray> arrays) {
    for (const HostArray &array : arrays) {
      auto pointer = device.allocate(array.getByteSize());
      if (!pointer)
        return pointer.takeError();
      pointers.push_back(*pointer);
      buffers.push_back({array.getElement(), array.getShape(), *pointer});
      if (llvm::Error err = device.copyToDevice(*pointer, array.getData(),
                                                array.getByteSize()))
        return err;
    }
    return llvm::Error::success();
  }

  /// Copies the arrays from `first` on (the outputs) back.
  llvm::Error download(MutableArrayRef<HostArray> arrays, unsigned first) {
    for (unsigned i = first; i < arrays.size(); ++i)
      if (llvm::Error err = device.copyToHost(arrays[i].getData(), pointers[i],
                                              arrays[i].getByteSize()))
        return err;
    return llvm::Error::success();
  }

  ArrayRef<JitFunction::Buffer> getBuffers() const { return buffers; }

private:
  CudaDevice &device;
  SmallVector<void *> pointers;
  SmallVector<JitFunction::Buffer> buffers;
};

/// One call of `function`: on host arrays, or on `deviceBuffers` when the
/// code runs on the GPU (then the runtime's errors are collected too).
llvm::Error callOnce(JitFunction &function, MutableArrayRef<HostArray> arrays,
                     CudaDevice *device, DeviceBuffers *deviceBuffers) {
  if (!device)
    return function.call(arrays);
  if (llvm::Error err = function.call(deviceBuffers->getBuffers()))
    return err;
  return device->takeError();
}

LogicalResult timeCalls(JitFunction &function,
                        MutableArrayRef<HostArray> arrays,
                        const FunctionAbi &abi, std::optional<int64_t> flops,
                        CudaDevice *device, DeviceBuffers *deviceBuffers) {
  SmallVector<double> seconds;
  for (unsigned r = 0; r < repeat; ++r) {
    // GPU calls are timed by CUDA events around them, CPU calls by the
    // host clock.
    auto start = std::chrono::steady_clock::now();
    if (device)
      if (llvm::Error err = device->startTimer())
        return reportError(llvm::toString(std::move(err)));
    if (llvm::Error err = callOnce(function, arrays, device, deviceBuffers))
      return reportError(llvm::toString(std::move(err)));
    if (!device) {
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      seconds.push_back(elapsed.count());
      continue;
    }
    auto ms = device->stopTimer();
    if (!ms)
      return reportError(llvm::toString(ms.takeError()));
    seconds.push_back(*ms * 1e-3);
  }
  llvm::sort(seconds);
  double best = seconds.front(), median = seconds[seconds.size() / 2];
  llvm::outs() << llvm::formatv("@{0}: {1} runs, min {2:f3} ms, median "
                                "{3:f3} ms",
                                abi.name, repeat, best * 1e3, median * 1e3);
  if (flops)
    llvm::outs() << llvm::formatv(", {0:f2} GFLOP/s (min time, {1:e} "
                                  "contraction FLOP)",
                                  *flops / best * 1e-9, double(*flops));
  llvm::outs() << "\n";
  return success();
}

LogicalResult run(MLIRContext &context) {
  auto settings = compileFlags.parse();
  if (!settings)
    return reportError(llvm::toString(settings.takeError()));
  if (!expectedFiles.empty() && !check)
    return reportError("--expected gives what --check compares with; add "
                       "--check");
  if (targetName != "cpu" && targetName != "cuda")
    return reportError("unknown target '" + targetName +
                       "'; attn-run supports: cpu, cuda");
  // The device first: without one there is nothing to compile for.
  std::unique_ptr<CudaDevice> device;
  std::unique_ptr<CudaPipelineOptions> cudaOptions;
  if (targetName == "cuda") {
    auto parsed = cudaFlags.parse();
    if (!parsed)
      return reportError(llvm::toString(parsed.takeError()));
    cudaOptions = std::move(*parsed);
    auto opened = CudaDevice::open();
    if (!opened)
      return reportError("--target=cuda: " +
                         llvm::toString(opened.takeError()));
    device = std::move(*opened);
  }
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  OwningOpRef<ModuleOp> module =
      parseModuleFile(inputFilename, sourceMgr, &context, error);
  if (!module)
    return error.empty() ? failure() : reportError(error);

  FailureOr<func::FuncOp> func = findEntry(*module);
  if (failed(func))
    return failure();
  // Only the entry and what it calls are compiled (twice with --check). The
  // entry is made public so that it keeps its C interface.
  for (auto other : module->getOps<func::FuncOp>())
    if (other != *func)
      other.setPrivate();
  func->setPublic();
  PassManager dce(&context);
  dce.addPass(createSymbolDCEPass());
  if (failed(dce.run(*module)))
    return failure();
  FailureOr<FunctionAbi> abi = getFunctionAbi(*func);
  if (failed(abi))
    return failure();
  if (!outputFiles.empty() &&
      outputFiles.size() != abi->params.size() - abi->numInputs)
    return reportError(
        "@" + abi->name + " has " + Twine(abi->params.size() - abi->numInputs) +
        " results, --outputs names " + Twine(outputFiles.size()) + " files");

  // Inputs.
  SmallVector<HostArray> arrays;
  if (!inputFiles.empty()) {
    FailureOr<SmallVector<HostArray>> loaded = loadInputs(*abi);
    if (failed(loaded))
      return failure();
    arrays = std::move(*loaded);
  } else {
    FailureOr<SmallVector<SmallVector<int64_t>>> shapes =
        getRandomInputShapes(*abi);
    if (failed(shapes))
      return failure();
    uint64_t seed = seedOption.getNumOccurrences() ? seedOption.getValue()
                                                   : std::random_device()();
    llvm::outs() << "@" << abi->name << ": random inputs, seed " << seed
                 << "\n";
    arrays = makeRandomInputs(*func, *abi, *shapes, seed);
  }

  // Outputs, sized from the IR and poisoned.
  SmallVector<SmallVector<int64_t>> shapes;
  for (const HostArray &input : arrays)
    shapes.emplace_back(input.getShape());
  auto analysis = analyzeCall(*module, abi->name, shapes);
  if (!analysis)
    return reportError(llvm::toString(analysis.takeError()));
  for (auto [i, shape] : llvm::enumerate(analysis->resultShapes)) {
    arrays.emplace_back(abi->params[abi->numInputs + i].element, shape);
    arrays.back().poison();
  }

  // attn-run says what autotuning did: it is run to see the code's speed.
  if (!device)
    if (llvm::Error err = compileFlags.tune(*settings, *module,
                                            /*verbose=*/true))
      return reportError(llvm::toString(std::move(err)));

  const CpuTargetOptions &options = settings->target;
  auto function =
      device ? JitFunction::compileCuda(*module, *abi, options, *cudaOptions)
             : JitFunction::compile(*module, *abi, options, settings->model,
                                    *settings->pipeline);
  if (!function)
    return reportError(llvm::toString(function.takeError()));
  std::optional<DeviceBuffers> deviceBuffers;
  if (device) {
    llvm::outs() << "@" << abi->name << ": running on "
                 << device->getDescription() << "\n";
    deviceBuffers.emplace(*device);
    if (llvm::Error err = deviceBuffers->upload(arrays))
      return reportError(llvm::toString(std::move(err)));
  }
  DeviceBuffers *buffers = deviceBuffers ? &*deviceBuffers : nullptr;
  if (llvm::Error err = callOnce(**function, arrays, device.get(), buffers))
    return reportError(llvm::toString(std::move(err)));
  if (buffers)
    if (llvm::Error err = buffers->download(arrays, abi->numInputs))
      return reportError(llvm::toString(std::move(err)));

  for (auto [i, path] : llvm::enumerate(outputFiles))
    if (llvm::Error err = writeNpy(path, arrays[abi->numInputs + i]))
      return reportError(llvm::toString(std::move(err)));
  if (failed(
          dumpArrays(ArrayRef(arrays).take_front(abi->numInputs), 0, "in")) ||
      failed(dumpArrays(arrays, abi->numInputs, "out")))
    return failure();

  LogicalResult checked = success();
  if (check)
    checked = checkOutputs(*module, *func, *abi, arrays, *settings);
  if (repeat > 0 && failed(timeCalls(**function, arrays, *abi, analysis->flops,
                                     device.get(), buffers)))
    return failure();
  return checked;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: JIT-compile a module of attn ops for the CPU or a CUDA GPU, "
      "run it on .npy or random inputs, check it against the float64 "
      "reference\n");

  DialectRegistry registry;
  registerCpuDriverDialects(registry);
  MLIRContext context(registry);
  // Diagnostics point at the source; the generic form of the op adds noise.
  context.printOpOnDiagnostic(false);
  return succeeded(run(context)) ? 0 : 1;
}
