//===- AttnMlirModule.cpp - the attn_mlir._native extension --------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The C++ API Python needs, and nothing more: parse and verify a module,
// run the CPU pipeline and JIT-compile one function, ask it for its result
// shapes, and call it on caller-owned buffers (NumPy arrays, or CPU tensors
// through DLPack, without copying). Diagnostics become the text of the
// Python exception, so a bad module reads like attn-opt's output.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/Autotune.h"
#include "attn/Runner/JitRunner.h"
#include "attn/Runtime/CpuAllocator.h"
#include "attn/Runtime/ParallelFor.h"
#include "attn/Target/Cpu/CpuABI.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "attn/Target/Cuda/CudaCompiler.h"
#include "attn/Tools/DriverSupport.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <chrono>
#include <memory>
#include <utility>

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::attn;

namespace {

/// One context for the process: dialects are registered once, and every
/// kernel's module lives in it.
MLIRContext &getContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registerCpuDriverDialects(registry);
    auto *ctx = new MLIRContext(registry);
    ctx->loadAllAvailableDialects();
    ctx->printOpOnDiagnostic(false);
    return ctx;
  }();
  return *context;
}

/// Collects the diagnostics emitted while it lives, rendered with source
/// lines as the command-line tools print them.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(llvm::SourceMgr &sourceMgr)
      : os(text), handler(sourceMgr, &getContext(), os) {}
  std::string take() { return std::move(text); }

private:
  std::string text;
  llvm::raw_string_ostream os;
  SourceMgrDiagnosticHandler handler;
};

const char *elementName(AbiElement element) {
  return stringifyAbiElement(element).data();
}

/// The ABI element of a DLPack dtype.
std::optional<AbiElement> toElement(nb::dlpack::dtype dtype) {
  using Code = nb::dlpack::dtype_code;
  switch (static_cast<Code>(dtype.code)) {
  case Code::Float:
    if (dtype.bits == 16)
      return AbiElement::f16;
    if (dtype.bits == 32)
      return AbiElement::f32;
    if (dtype.bits == 64)
      return AbiElement::f64;
    return std::nullopt;
  case Code::Bfloat:
    return dtype.bits == 16 ? std::optional(AbiElement::bf16) : std::nullopt;
  case Code::Bool:
    return AbiElement::i1;
  case Code::UInt:
    // bf16 arrays without a DLPack code of their own (ml_dtypes.bfloat16 in
    // NumPy) are passed as their 16-bit patterns.
    return dtype.bits == 16 ? std::optional(AbiElement::bf16) : std::nullopt;
  case Code::Int:
    if (dtype.bits == 8)
      return AbiElement::i8;
    if (dtype.bits == 32)
      return AbiElement::i32;
    if (dtype.bits == 64)
      return AbiElement::i64;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

using Array = nb::ndarray<nb::c_contig, nb::device::cpu>;
/// A CPU array of any strides (a parameter that takes views).
using StridedArray = nb::ndarray<nb::device::cpu>;

/// A parsed module and the C view of its entry function: enough to check
/// arguments and size results without compiling.
class Program {
public:
  static std::shared_ptr<Program> parse(const std::string &source,
                                        std::optional<std::string> entry);

  const std::string &name() const { return abi.name; }
  const FunctionAbi &getAbi() const { return abi; }
  ModuleOp getModule() const { return module.get(); }
  const std::string &getSource() const { return source; }

  /// (element, shape) per parameter; -1 marks a dynamic dimension.
  std::vector<std::tuple<std::string, std::vector<int64_t>>>
  params(bool outputs) const {
    std::vector<std::tuple<std::string, std::vector<int64_t>>> result;
    for (const AbiParam &param : abi.params) {
      if (param.isOutput != outputs)
        continue;
      std::vector<int64_t> shape;
      for (int64_t d : param.shape)
        shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
      result.emplace_back(elementName(param.element), shape);
    }
    return result;
  }

  /// Per input: whether it may be a strided view (AbiParam::rowStrided).
  std::vector<bool> stridedInputs() const {
    std::vector<bool> result;
    for (const AbiParam &param : abi.params)
      if (!param.isOutput)
        result.push_back(param.rowStrided);
    return result;
  }

  std::vector<std::vector<int64_t>>
  resultShapes(const std::vector<std::vector<int64_t>> &inputShapes) const {
    SmallVector<SmallVector<int64_t>> shapes;
    for (const auto &shape : inputShapes)
      shapes.emplace_back(shape.begin(), shape.end());
    auto analysis = analyzeCall(*module, abi.name, shapes);
    if (!analysis)
      throw nb::value_error(llvm::toString(analysis.takeError()).c_str());
    std::vector<std::vector<int64_t>> result;
    for (const auto &shape : analysis->resultShapes)
      result.emplace_back(shape.begin(), shape.end());
    return result;
  }

  /// Runs the CPU pipeline (or, for target "cuda", the CUDA pipeline for
  /// `gpuArch`) on a copy and writes a shared library exporting
  /// `_mlir_ciface_<name>` (what attnc --emit=shared makes).
  void emitShared(const std::string &path, const std::string &pipeline,
                  unsigned optLevel, const std::string &targetName,
                  const std::string &gpuArch) const;

private:
  OwningOpRef<ModuleOp> module;
  FunctionAbi abi;
  /// The source the diagnostics of later steps point into.
  std::string source;
};

/// This machine's target model, built once per process (the host does not
/// change under it), or a ValueError.
const CpuTargetModel &getHostModel() {
  static const std::pair<std::optional<CpuTargetModel>, std::string> host =
      []() -> std::pair<std::optional<CpuTargetModel>, std::string> {
    llvm::Expected<CpuTargetModel> model =
        CpuTargetModel::get(CpuTargetOptions());
    if (!model)
      return {std::nullopt, llvm::toString(model.takeError())};
    return {std::move(*model), ""};
  }();
  if (!host.first)
    throw nb::value_error(host.second.c_str());
  return *host.first;
}

/// The pipeline options, or a ValueError.
std::unique_ptr<CpuPipelineOptions> parsePipeline(const std::string &pipeline,
                                                  unsigned optLevel) {
  std::unique_ptr<CpuPipelineOptions> options =
      CpuPipelineOptions::createFromString(pipeline);
  if (!options)
    throw nb::value_error(
        ("cannot parse the CPU pipeline options '" + pipeline + "'").c_str());
  if (options->namesTarget())
    throw nb::value_error("the pipeline options cannot name a target: "
                          "attn_mlir compiles for this machine");
  if (optLevel > 3)
    throw nb::value_error(
        ("opt_level must be 0 to 3, got " + std::to_string(optLevel)).c_str());
  return options;
}

/// A source manager over `source`, for diagnostics with source lines.
void addSource(llvm::SourceMgr &sourceMgr, const std::string &source) {
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "<attn_mlir>"),
      llvm::SMLoc());
}

std::shared_ptr<Program> Program::parse(const std::string &source,
                                        std::optional<std::string> entry) {
  llvm::SourceMgr sourceMgr;
  addSource(sourceMgr, source);
  DiagnosticCollector diagnostics(sourceMgr);
  auto program = std::make_shared<Program>();
  program->source = source;
  program->module = parseSourceFile<ModuleOp>(sourceMgr, &getContext());
  if (!program->module)
    throw nb::value_error(
        ("cannot parse the module:\n" + diagnostics.take()).c_str());

  // The entry: the named function, or the only public one.
  func::FuncOp func;
  for (auto candidate : program->module->getOps<func::FuncOp>()) {
    if (entry ? candidate.getSymName() == *entry : candidate.isPublic()) {
      if (func && !entry)
        throw nb::value_error("the module has several public functions; "
                              "name the entry");
      func = candidate;
    }
  }
  if (!func)
    throw nb::value_error(
        (entry ? "no function @" + *entry + " in the module"
               : std::string("the module has no public function"))
            .c_str());
  FailureOr<FunctionAbi> abi = getFunctionAbi(func);
  if (failed(abi))
    throw nb::value_error(("@" + func.getSymName().str() + " has no C ABI:\n" +
                           diagnostics.take())
                              .c_str());
  program->abi = *abi;
  return program;
}

void Program::emitShared(const std::string &path, const std::string &pipeline,
                         unsigned optLevel, const std::string &targetName,
                         const std::string &gpuArch) const {
  bool cuda = targetName == "cuda";
  if (!cuda && targetName != "cpu")
    throw nb::value_error(("unknown target '" + targetName + "'").c_str());
  if (cuda && getCudaRuntimeLibraryPath().empty())
    throw nb::value_error("target='cuda': this build of attn-mlir found no "
                          "CUDA toolkit, so it has no CUDA runtime library");
  llvm::SourceMgr sourceMgr;
  addSource(sourceMgr, source);
  DiagnosticCollector diagnostics(sourceMgr);
  OwningOpRef<ModuleOp> copy = getModule().clone();
  PassManager pm(&getContext());
  if (cuda) {
    std::unique_ptr<CudaPipelineOptions> options =
        CudaPipelineOptions::createFromString(pipeline);
    if (!options)
      throw nb::value_error(
          ("cannot parse the CUDA pipeline options '" + pipeline + "'")
              .c_str());
    options->chip = gpuArch;
    buildCudaPipeline(pm, *options);
  } else {
    buildCpuPipeline(pm, *parsePipeline(pipeline, optLevel), getHostModel());
  }
  if (failed(pm.run(*copy)))
    throw nb::value_error(
        ((cuda ? "the CUDA pipeline failed:\n" : "the CPU pipeline failed:\n") +
         diagnostics.take())
            .c_str());
  CpuTargetOptions target;
  target.optLevel = optLevel;
  auto machine = createCpuTargetMachine(target);
  llvm::LLVMContext llvmContext;
  auto llvmModule =
      machine
          ? translateToLLVMIR(*copy, llvmContext, **machine)
          : llvm::Expected<std::unique_ptr<llvm::Module>>(machine.takeError());
  llvm::Error error =
      llvmModule ? optimizeLLVMModule(**llvmModule, **machine, optLevel)
                 : llvmModule.takeError();
  if (!error)
    error = emitSharedLibrary(**llvmModule, **machine, path,
                              {cuda ? getCudaRuntimeLibraryPath().str()
                                    : getOpenMPLibraryPath().str()});
  if (error)
    throw nb::value_error(llvm::toString(std::move(error)).c_str());
}

/// What autotuning finds for `program` on this machine (see
/// attn/Runner/Autotune.h): the sizes as pipeline options ("" when there is
/// nothing to tune or, with `measure` false, no cache entry), where they
/// come from ("cache", "measured", "none"), a report of what was looked up
/// and timed, and the warnings about the cache.
std::tuple<std::string, std::string, std::string, std::vector<std::string>>
autotuneProgram(const Program &program, const std::string &pipeline,
                unsigned optLevel, const std::string &cachePath, bool measure) {
  std::unique_ptr<CpuPipelineOptions> options =
      parsePipeline(pipeline, optLevel);
  llvm::SourceMgr sourceMgr;
  addSource(sourceMgr, program.getSource());
  DiagnosticCollector diagnostics(sourceMgr);
  CpuTargetOptions target;
  target.optLevel = optLevel;
  const CpuTargetModel &model = getHostModel();
  AutotuneOptions tuning;
  tuning.cachePath = cachePath;
  tuning.measure = measure;
  llvm::Expected<AutotuneResult> result = [&] {
    nb::gil_scoped_release release;
    return autotune(program.getModule(), target, model, *options, tuning);
  }();
  if (!result)
    throw nb::value_error(
        ("autotuning failed: " + llvm::toString(result.takeError()) + "\n" +
         diagnostics.take())
            .c_str());
  std::string report;
  llvm::raw_string_ostream os(report);
  result->print(os);
  const char *source = "none";
  if (result->source == AutotuneResult::Source::Cache)
    source = "cache";
  else if (result->source == AutotuneResult::Source::Measured)
    source = "measured";
  return {StringRef(source) == "none" ? std::string() : result->sizes.str(),
          source, report,
          std::vector<std::string>(result->warnings.begin(),
                                   result->warnings.end())};
}

/// A JIT-compiled function of a Program (which it does not need once
/// compiled: the JIT keeps its own copy of the lowered module).
class Kernel {
public:
  static std::unique_ptr<Kernel> compile(std::shared_ptr<Program> program,
                                         const std::string &pipeline,
                                         unsigned optLevel);

  double compileSeconds() const { return seconds; }

  void call(std::vector<Array> arrays) {
    SmallVector<SmallVector<int64_t>> shapes(arrays.size());
    SmallVector<JitFunction::Buffer> buffers;
    for (auto [i, array] : llvm::enumerate(arrays)) {
      std::optional<AbiElement> element = toElement(array.dtype());
      if (!element)
        throw nb::type_error(("argument #" + std::to_string(i) +
                              " has an element type attn-mlir cannot pass")
                                 .c_str());
      for (size_t d = 0; d < array.ndim(); ++d)
        shapes[i].push_back(array.shape(d));
      buffers.push_back({*element, shapes[i], array.data()});
    }
    llvm::Error error = llvm::Error::success();
    {
      nb::gil_scoped_release release;
      error = function->call(buffers);
    }
    if (error)
      throw nb::value_error(llvm::toString(std::move(error)).c_str());
  }

private:
  std::unique_ptr<JitFunction> function;
  double seconds = 0;
};

std::unique_ptr<Kernel> Kernel::compile(std::shared_ptr<Program> program,
                                        const std::string &pipeline,
                                        unsigned optLevel) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CpuPipelineOptions> options =
      parsePipeline(pipeline, optLevel);
  llvm::SourceMgr sourceMgr;
  addSource(sourceMgr, program->getSource());
  DiagnosticCollector diagnostics(sourceMgr);
  CpuTargetOptions target;
  target.optLevel = optLevel;
  auto function = JitFunction::compile(program->getModule(), program->getAbi(),
                                       target, getHostModel(), *options);
  if (!function)
    throw nb::value_error(
        (llvm::toString(function.takeError()) + ":\n" + diagnostics.take())
            .c_str());
  auto kernel = std::make_unique<Kernel>();
  kernel->function = std::move(*function);
  kernel->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return kernel;
}

/// What attn-sparsify says about each attn.sdpa of `source` (its band and
/// whether tiles are classified statically or at run time, and why).
std::vector<std::string> explainSparsity(const std::string &source,
                                         int64_t qTile, int64_t kvTile) {
  MLIRContext &context = getContext();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "<attn_mlir>"),
      llvm::SMLoc());
  std::vector<std::string> remarks;
  std::string errors;
  {
    DiagnosticCollector diagnostics(sourceMgr);
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      throw nb::value_error(
          ("cannot parse the module:\n" + diagnostics.take()).c_str());
    ScopedDiagnosticHandler collect(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Remark) {
        remarks.push_back(diag.str());
        return success();
      }
      return failure(); // errors go on to the collector
    });
    PassManager pm(&context);
    pm.addPass(createAttnSparsify(AttnSparsifyOptions{
        qTile, kvTile, /*smallHeadKvTile=*/0, /*explain=*/true}));
    if (failed(pm.run(*module)))
      errors = diagnostics.take();
  }
  if (!errors.empty())
    throw nb::value_error(errors.c_str());
  return remarks;
}

} // namespace

/// Most parameters a C interface called through CifaceFunction may take
/// (a multi-head attention's backward takes about twenty).
constexpr size_t kMaxCifaceArgs = 64;

/// Calls the C interface at `fn` with `N` pointer arguments and the i32
/// status of an ABI-checked function as its result.
template <size_t... I>
int32_t invokeCiface(void *fn, void *const *args, std::index_sequence<I...>) {
  using Signature = int32_t (*)(decltype((void)I, (void *)nullptr)...);
  return reinterpret_cast<Signature>(fn)(args[I]...);
}

template <size_t N> int32_t invokeCifaceN(void *fn, void *const *args) {
  return invokeCiface(fn, args, std::make_index_sequence<N>{});
}

template <size_t... N>
constexpr auto makeCifaceTable(std::index_sequence<N...>) {
  return std::array<int32_t (*)(void *, void *const *), sizeof...(N)>{
      &invokeCifaceN<N>...};
}

/// A CPU function's C interface (`_mlir_ciface_<name>` of a shared library
/// the package loaded; docs/CpuABI.md) called on arrays directly: the
/// hot path of every call from Python, where building one ctypes memref
/// descriptor per parameter and checking each array in Python cost tens of
/// microseconds. The caller passes C-contiguous arrays (NumPy arrays or CPU
/// tensors, through DLPack, without copies): inputs, then one output per
/// result.
class CifaceFunction {
public:
  CifaceFunction(uintptr_t address, const std::vector<std::string> &elements,
                 const std::vector<bool> &strided)
      : address(reinterpret_cast<void *>(address)), strided(strided) {
    this->strided.resize(elements.size(), false);
    for (const std::string &name : elements) {
      std::optional<AbiElement> element;
      for (AbiElement e :
           {AbiElement::f16, AbiElement::bf16, AbiElement::f32, AbiElement::f64,
            AbiElement::i1, AbiElement::i8, AbiElement::i32, AbiElement::i64})
        if (stringifyAbiElement(e) == name)
          element = e;
      if (!element)
        throw nb::value_error(
            ("no C interface passes element type " + name).c_str());
      this->elements.push_back(*element);
    }
    if (this->elements.size() >= kMaxCifaceArgs)
      throw nb::value_error("too many parameters for a direct call");
  }

  /// Runs the function: its status (0: ran; otherwise it refused its
  /// buffers, and attn_abi_error says why), or -1 - i when array i cannot
  /// be passed (not a C-contiguous CPU array, or, for a parameter that
  /// takes views, a CPU array whose last dimension is not contiguous; or
  /// another element type than the parameter's): the caller's checks
  /// then say what is wrong.
  int32_t call(nb::list arrays) {
    size_t count = arrays.size();
    if (count != elements.size())
      throw nb::type_error(("the function takes " +
                            std::to_string(elements.size()) + " arrays, " +
                            std::to_string(count) + " were given")
                               .c_str());
    // One memref descriptor per array: {allocated, aligned, offset,
    // sizes[rank], strides[rank]}, 8-byte words.
    SmallVector<int64_t, 256> words;
    SmallVector<size_t, kMaxCifaceArgs> starts;
    for (size_t i = 0; i < count; ++i) {
      starts.push_back(words.size());
      words.resize(words.size() + 3);
      size_t sizes = words.size();
      std::optional<int64_t> pointer =
          strided[i] ? appendView(arrays[i], elements[i], words)
                     : appendBuffer(arrays[i], elements[i], words);
      if (!pointer)
        return -1 - static_cast<int32_t>(i);
      words[starts.back()] = words[starts.back() + 1] = *pointer;
      words[starts.back() + 2] = 0;
      if (strided[i])
        continue; // appendView wrote the strides
      size_t rank = words.size() - sizes;
      words.resize(words.size() + rank);
      int64_t stride = 1;
      for (size_t d = rank; d-- > 0;) {
        words[sizes + rank + d] = stride;
        stride *= words[sizes + d];
      }
    }
    std::array<void *, kMaxCifaceArgs> args;
    for (size_t i = 0; i < count; ++i)
      args[i] = words.data() + starts[i];
    static constexpr auto table =
        makeCifaceTable(std::make_index_sequence<kMaxCifaceArgs>{});
    nb::gil_scoped_release release;
    return table[count](address, args.data());
  }

private:
  /// Appends the sizes of `object` to `words` and returns its data
  /// pointer, if it is a C-contiguous CPU array of element `expected`:
  /// a NumPy array (the buffer protocol) or a torch tensor, read through
  /// its attributes (its DLPack export, written in Python, cost several
  /// microseconds per tensor).
  static std::optional<int64_t> appendBuffer(nb::handle object,
                                             AbiElement expected,
                                             SmallVectorImpl<int64_t> &words) {
    if (PyObject_CheckBuffer(object.ptr())) {
      // Without conversion: a copy made to pass it would not be the
      // caller's array (outputs written into it would be lost).
      Array array;
      if (!nb::try_cast(object, array, /*convert=*/false) ||
          toElement(array.dtype()) != expected)
        return std::nullopt;
      for (size_t d = 0; d < array.ndim(); ++d)
        words.push_back(array.shape(d));
      return reinterpret_cast<int64_t>(array.data());
    }
    static const TensorAttributes names;
    if (!nb::hasattr(object, names.dataPtr) ||
        !nb::cast<bool>(object.attr(names.isCpu)) ||
        !nb::cast<bool>(object.attr(names.isContiguous)()))
      return std::nullopt;
    if (getTorchElement(object.attr(names.dtype)) != expected)
      return std::nullopt;
    nb::object shape = object.attr(names.shape);
    for (nb::handle size : shape)
      words.push_back(nb::cast<int64_t>(size));
    return nb::cast<int64_t>(object.attr(names.dataPtr)());
  }

  /// Appends the sizes and then the strides (in elements) of `object` to
  /// `words` and returns its data pointer, if it is a CPU array of element
  /// `expected` whose last dimension is contiguous (stride 1, or a size
  /// of at most 1): a parameter that takes views (AbiParam::rowStrided).
  static std::optional<int64_t> appendView(nb::handle object,
                                           AbiElement expected,
                                           SmallVectorImpl<int64_t> &words) {
    size_t sizes = words.size();
    int64_t pointer;
    if (PyObject_CheckBuffer(object.ptr())) {
      StridedArray array;
      if (!nb::try_cast(object, array, /*convert=*/false) ||
          toElement(array.dtype()) != expected)
        return std::nullopt;
      for (size_t d = 0; d < array.ndim(); ++d)
        words.push_back(array.shape(d));
      for (size_t d = 0; d < array.ndim(); ++d)
        words.push_back(array.stride(d));
      pointer = reinterpret_cast<int64_t>(array.data());
    } else {
      static const TensorAttributes names;
      if (!nb::hasattr(object, names.dataPtr) ||
          !nb::cast<bool>(object.attr(names.isCpu)) ||
          getTorchElement(object.attr(names.dtype)) != expected)
        return std::nullopt;
      for (nb::handle size : object.attr(names.shape))
        words.push_back(nb::cast<int64_t>(size));
      for (nb::handle stride : object.attr(names.stride)())
        words.push_back(nb::cast<int64_t>(stride));
      pointer = nb::cast<int64_t>(object.attr(names.dataPtr)());
    }
    size_t rank = (words.size() - sizes) / 2;
    if (rank > 0 && words[sizes + rank - 1] > 1 &&
        words[sizes + 2 * rank - 1] != 1)
      return std::nullopt;
    return pointer;
  }

  /// The attribute names a torch tensor is read through, made once (a
  /// name given as a C string is a new Python string on every lookup:
  /// seven per tensor per call). Interned and never freed, so that no
  /// Python object outlives the interpreter's end in a destructor.
  struct TensorAttributes {
    nb::handle dataPtr = intern("data_ptr"), isCpu = intern("is_cpu"),
               isContiguous = intern("is_contiguous"), dtype = intern("dtype"),
               shape = intern("shape"), stride = intern("stride");
    static nb::handle intern(const char *name) {
      return PyUnicode_InternFromString(name);
    }
  };

  /// The ABI element of a torch dtype, by its name ("torch.float32") the
  /// first time a dtype object is seen (they are singletons).
  static std::optional<AbiElement> getTorchElement(nb::handle dtype) {
    static llvm::DenseMap<PyObject *, std::optional<AbiElement>> known;
    auto [it, inserted] = known.try_emplace(dtype.ptr());
    if (!inserted)
      return it->second;
    // Kept alive: the map's key must not be reused by another object.
    dtype.inc_ref();
    auto name = nb::steal<nb::str>(PyObject_Str(dtype.ptr()));
    if (!name.is_valid())
      throw nb::python_error();
    it->second = llvm::StringSwitch<std::optional<AbiElement>>(name.c_str())
                     .Case("torch.float32", AbiElement::f32)
                     .Case("torch.float16", AbiElement::f16)
                     .Case("torch.bfloat16", AbiElement::bf16)
                     .Case("torch.float64", AbiElement::f64)
                     .Case("torch.bool", AbiElement::i1)
                     .Case("torch.int8", AbiElement::i8)
                     .Case("torch.int32", AbiElement::i32)
                     .Case("torch.int64", AbiElement::i64)
                     .Default(std::nullopt);
    return it->second;
  }

  void *address;
  std::vector<AbiElement> elements;
  /// Per parameter: whether it takes views (AbiParam::rowStrided).
  std::vector<bool> strided;
};

NB_MODULE(_native, m) {
  m.doc() = "attn-mlir's C++ API: compile attention IR for the CPU and call it";
  nb::class_<Program>(m, "Program")
      .def_static("parse", &Program::parse, nb::arg("source"),
                  nb::arg("entry") = nb::none(),
                  "Parses and verifies `source` and finds the entry function "
                  "(`entry`, or the only public one).")
      .def_prop_ro("name", &Program::name)
      .def_prop_ro("inputs", [](const Program &p) { return p.params(false); })
      .def_prop_ro("outputs", [](const Program &p) { return p.params(true); })
      .def_prop_ro("strided_inputs", &Program::stridedInputs,
                   "Per input: whether it may be a view whose last dimension "
                   "is contiguous (bufferization.buffer_layout).")
      .def("result_shapes", &Program::resultShapes, nb::arg("input_shapes"),
           "The shape of every result for inputs of these shapes.")
      .def("emit_shared", &Program::emitShared, nb::arg("path"),
           nb::arg("pipeline") = "", nb::arg("opt_level") = 3,
           nb::arg("target") = "cpu", nb::arg("gpu_arch") = "sm_90a",
           "Compiles with the CPU pipeline (options as attnc's "
           "--cpu-pipeline), or with target='cuda' the CUDA pipeline "
           "(options as --cuda-pipeline) for `gpu_arch`, into a shared "
           "library at `path`.")
      .def("autotune", &autotuneProgram, nb::arg("pipeline") = "",
           nb::arg("opt_level") = 3, nb::arg("cache_path") = "",
           nb::arg("measure") = true,
           "Autotunes the CPU pipeline's sizes for the module on this "
           "machine: (sizes as pipeline options or '', 'cache' | 'measured' | "
           "'none', report, warnings).")
      .def("jit", &Kernel::compile, nb::arg("pipeline") = "",
           nb::arg("opt_level") = 3,
           "JIT-compiles the entry with the CPU pipeline.");
  nb::class_<Kernel>(m, "Kernel")
      .def_prop_ro("compile_seconds", &Kernel::compileSeconds)
      .def("call", &Kernel::call, nb::arg("arrays"),
           "Calls the function on C-contiguous CPU arrays: inputs, then "
           "one output per result (written in place).");
  nb::class_<CifaceFunction>(m, "CifaceFunction")
      .def(nb::init<uintptr_t, const std::vector<std::string> &,
                    const std::vector<bool> &>(),
           nb::arg("address"), nb::arg("elements"),
           nb::arg("strided") = std::vector<bool>(),
           "The C interface at `address` (an ABI-checked CPU function), "
           "whose parameters have these element types ('f32', 'bf16', ...) "
           "and, where `strided` says so, take views (strides read from "
           "the array; the parameters not listed are dense).")
      .def("__call__", &CifaceFunction::call, nb::arg("arrays"),
           "Runs it on `arrays` (inputs, then outputs): its status, or "
           "-1 - i when array i cannot be passed as parameter i.");
  m.def("default_tuning_cache_path", &getDefaultTuningCachePath,
        "The tuning cache autotuning uses unless told otherwise (attnc's "
        "--tuning-cache default).");
  m.def(
      "cuda_runtime_library",
      []() { return getCudaRuntimeLibraryPath().str(); },
      "libattn_cuda_runtime as built (\"\" without a CUDA toolkit).");
  m.def(
      "weight_panel",
      [](const std::string &pipeline) -> int64_t {
        std::unique_ptr<CpuPipelineOptions> options =
            parsePipeline(pipeline, /*optLevel=*/3);
        if (!options->vectorize)
          return 0;
        return getCpuKernelConfig(*options, getHostModel()).contractionNBlock;
      },
      nb::arg("pipeline") = "",
      "Columns of the weight panels attn-pack-weights reads on this "
      "machine with `pipeline` (its contraction-n-block; 0 when nothing "
      "is packed): the layout of pre-packed weights (docs/CpuABI.md).");
  m.def(
      "cpu_allocator",
      []() {
        return nb::make_tuple(reinterpret_cast<uintptr_t>(&attnCpuAlloc),
                              reinterpret_cast<uintptr_t>(&attnCpuFree));
      },
      "Addresses of the caching allocator's alloc and free, for a compiled "
      "library's attn_set_allocator (docs/CpuABI.md).");
  m.def(
      "parallel_for",
      []() { return reinterpret_cast<uintptr_t>(&attnParallelFor); },
      "Address of the runtime's parallel-for, for a compiled library's "
      "attn_set_parallel_for (docs/CpuABI.md): it runs the library's "
      "parallel loops on the OpenMP runtime bind_openmp bound, and declines "
      "them (the library's own OpenMP runtime) while none is.");
  m.def(
      "bind_openmp",
      [](uintptr_t gompParallel, uintptr_t ompGetMaxThreads) {
        attnParallelBindOpenMP(reinterpret_cast<void *>(gompParallel),
                               reinterpret_cast<void *>(ompGetMaxThreads));
      },
      nb::arg("gomp_parallel"), nb::arg("omp_get_max_threads"),
      "Binds parallel_for to the OpenMP runtime with these two functions' "
      "addresses (GOMP_parallel, omp_get_max_threads); 0, 0 unbinds it.");
  m.def("parallel_is_bound", &attnParallelIsBound,
        "Whether parallel_for is bound to an OpenMP runtime.");
  m.def(
      "parallel_stats",
      []() {
        AttnParallelStats stats = attnParallelStats();
        nb::dict result;
        result["inline_loops"] = stats.inlineLoops;
        result["team_loops"] = stats.teamLoops;
        return result;
      },
      "Loops parallel_for ran on the calling thread (small ones, nested "
      "ones) and on the bound runtime's team.");
  m.def(
      "cpu_allocator_stats",
      []() {
        AttnCpuAllocatorStats stats = attnCpuAllocatorStats();
        nb::dict result;
        result["reused"] = stats.reused;
        result["fresh"] = stats.fresh;
        result["cached_bytes"] = stats.cachedBytes;
        return result;
      },
      "The caching allocator's counters: blocks reused, blocks taken from "
      "the system, bytes of free blocks it holds.");
  m.def(
      "cpu_empty",
      [](size_t bytes) {
        void *block = attnCpuAlloc(bytes);
        if (!block)
          throw std::bad_alloc();
        // The block goes back to the cache when the array and every view
        // of it (a torch tensor made by torch.from_numpy included) are gone.
        nb::capsule owner(block, [](void *p) noexcept { attnCpuFree(p); });
        return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(block, {bytes},
                                                            owner);
      },
      nb::arg("bytes"),
      "A writable NumPy uint8 array of `bytes` bytes, 64-byte aligned, from "
      "the caching allocator (filled with 0xff under "
      "ATTN_MLIR_ALLOCATOR_POISON); the block returns to the cache when the "
      "array is freed. Large results of compiled calls live here, so that "
      "a loop of calls reuses their memory instead of faulting in fresh "
      "pages.");
  m.def("cpu_allocator_release", &attnCpuAllocatorRelease,
        "Gives the caching allocator's free blocks back to the system.");
  m.def("explain_sparsity", &explainSparsity, nb::arg("source"),
        nb::arg("q_tile") = 128, nb::arg("kv_tile") = 64,
        "attn-sparsify's remark for each attn.sdpa of the module.");
}
