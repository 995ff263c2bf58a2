//===- JitRunner.cpp - JIT-compile and call attn functions ----------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/JitRunner.h"

#include "attn/Conversion/CpuAllocatorHooks/CpuAllocatorHooks.h"
#include "attn/Conversion/ParallelLoopsToRuntime/ParallelLoopsToRuntime.h"
#include "attn/Runtime/CpuAllocator.h"
#include "attn/Runtime/ParallelFor.h"

#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Cuda/CudaCompiler.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/bit.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/Process.h"
#include "llvm/Target/TargetMachine.h"

#include <sys/mman.h>

using namespace mlir;
using namespace mlir::attn;

/// A copy of `module` after the pipeline `build` appends; `what` names the
/// pipeline in the error (its diagnostics have gone to the context).
static llvm::Expected<OwningOpRef<ModuleOp>>
lowerCopy(ModuleOp module, function_ref<void(OpPassManager &)> build,
          StringRef what) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(*copy)))
    return llvm::createStringError("the " + what +
                                   " failed on the module (diagnostics above)");
  return copy;
}

//===----------------------------------------------------------------------===//
// JitFunction
//===----------------------------------------------------------------------===//

/// Places every section of one JIT-compiled module in one reserved range of
/// address space, so that code reaches its data and constants with the
/// small code model's 32-bit PC-relative displacements. The engine's
/// default places each section with its own mmap near the last one, a
/// hint the kernel may ignore: in a process whose address space is busy
/// (under ASan, found by attn-gen-fuzzer; a Python process full of torch's
/// mappings) a data section landed gigabytes from its code, and LLVM's
/// runtime linker, built without assertions, truncated the displacement
/// without a word: the code wrote somewhere else.
class attn::JitMemory final : public llvm::SectionMemoryManager::MemoryMapper {
public:
  ~JitMemory() override {
    if (base)
      ::munmap(base, kReserved);
  }

  llvm::sys::MemoryBlock
  allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose,
                       size_t numBytes, const llvm::sys::MemoryBlock *,
                       unsigned flags, std::error_code &ec) override {
    if (!base) {
      // Address space only: pages are committed as sections use them.
      void *range = ::mmap(nullptr, kReserved, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (range == MAP_FAILED) {
        ec = std::error_code(errno, std::generic_category());
        return {};
      }
      base = static_cast<char *>(range);
    }
    size_t page = llvm::sys::Process::getPageSizeEstimate();
    size_t size = llvm::alignTo(numBytes, page);
    if (size > kReserved - used) {
      ec = std::make_error_code(std::errc::not_enough_memory);
      return {};
    }
    llvm::sys::MemoryBlock block(base + used, size);
    used += size;
    ec = llvm::sys::Memory::protectMappedMemory(block, flags);
    return ec ? llvm::sys::MemoryBlock() : block;
  }

  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock &block,
                                      unsigned flags) override {
    return llvm::sys::Memory::protectMappedMemory(block, flags);
  }

  /// The range is not reused: the pages go back to the system and the
  /// addresses stay reserved until the JitFunction is destroyed.
  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock &block) override {
    if (::mprotect(block.base(), block.allocatedSize(), PROT_NONE) ||
        ::madvise(block.base(), block.allocatedSize(), MADV_DONTNEED))
      return std::error_code(errno, std::generic_category());
    block = llvm::sys::MemoryBlock();
    return {};
  }

private:
  /// Within reach of a 32-bit displacement from anywhere in it, and more
  /// than any module's code and constants.
  static constexpr size_t kReserved = size_t(1) << 30;
  char *base = nullptr;
  size_t used = 0;
};

JitFunction::JitFunction(std::unique_ptr<JitMemory> memory,
                         std::unique_ptr<ExecutionEngine> engine,
                         FunctionAbi abi, bool checksAbi)
    : memory(std::move(memory)), engine(std::move(engine)), abi(std::move(abi)),
      checksAbi(checksAbi) {}

JitFunction::~JitFunction() = default;

//===----------------------------------------------------------------------===//
// Conversions LLVM calls
//===----------------------------------------------------------------------===//

// On x86-64 without AVX512-BF16 (AVX2 hosts) LLVM legalises bf16 vectors
// through f32 and rounds back with a call to compiler-rt's __truncsfbf2,
// which neither libgcc nor any library the JIT loads defines. The JIT
// resolves it (and the widening it pairs with) to these; shared libraries
// link compiler-rt's builtins instead (linkSharedLibrary).
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 13)
#define ATTN_HAS_BF16_TYPE 1

/// f32 to bf16, rounding to nearest even; a NaN stays a quiet NaN.
static __bf16 truncFloatToBf16(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint16_t result;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    result = static_cast<uint16_t>((bits >> 16) | 0x40u);
  else
    result =
        static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  return llvm::bit_cast<__bf16>(result);
}

/// bf16 to f32 (exact).
static float extendBf16ToFloat(__bf16 value) {
  return llvm::bit_cast<float>(
      static_cast<uint32_t>(llvm::bit_cast<uint16_t>(value)) << 16);
}
#endif

/// Makes the conversion routines above visible to `engine`'s code.
static void registerConversionRoutines(ExecutionEngine &engine) {
#ifdef ATTN_HAS_BF16_TYPE
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](StringRef name, auto *function) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("__truncsfbf2", &truncFloatToBf16);
    add("__extendbfsf2", &extendBf16ToFloat);
    return symbols;
  });
#else
  (void)engine;
#endif
}

/// JIT-compiles an LLVM-dialect module for the host into `memory`;
/// `runtimes` are the shared libraries its code calls.
static llvm::Expected<std::unique_ptr<ExecutionEngine>>
createEngine(ModuleOp lowered, const CpuTargetOptions &options,
             ArrayRef<StringRef> runtimes, JitMemory &memory) {
  auto machine = createCpuTargetMachine(options);
  if (!machine)
    return machine.takeError();
  if (llvm::Error error = checkRunsOnHost(**machine))
    return std::move(error);
  // The transformer must outlive `create`, which runs it; the machine it
  // points to moves into the engine with its owner, not in memory.
  llvm::TargetMachine *target = machine->get();
  unsigned optLevel = options.optLevel;
  std::function<llvm::Error(llvm::Module *)> transformer =
      [target, optLevel](llvm::Module *module) {
        return optimizeLLVMModule(*module, *target, optLevel);
      };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.sharedLibPaths = runtimes;
  engineOptions.sectionMemoryMapper = &memory;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(options.optLevel);
  auto engine =
      ExecutionEngine::create(lowered, engineOptions, std::move(*machine));
  if (engine)
    registerConversionRoutines(**engine);
  return engine;
}

llvm::Expected<std::unique_ptr<JitFunction>> JitFunction::compile(
    ModuleOp module, const FunctionAbi &abi, const CpuTargetOptions &options,
    const CpuTargetModel &model, const CpuPipelineOptions &pipeline) {
  if (!isHostTriple(options.triple))
    return llvm::createStringError("the JIT runs code on this machine, not "
                                   "for the triple '" +
                                   options.triple + "'");
  auto copy = lowerCopy(
      module, [&](OpPassManager &pm) { buildCpuPipeline(pm, pipeline, model); },
      "CPU pipeline");
  if (!copy)
    return copy.takeError();
  StringRef runtimes[] = {getOpenMPLibraryPath()};
  auto memory = std::make_unique<JitMemory>();
  auto engine = createEngine(**copy, options, runtimes, *memory);
  if (!engine)
    return engine.takeError();
  // Temporaries from the caching allocator: a function called many times
  // reuses its blocks instead of faulting in fresh pages each call.
  auto setAllocator = (*engine)->lookup(kSetAllocatorFunction);
  if (!setAllocator)
    return setAllocator.takeError();
  reinterpret_cast<void (*)(void *(*)(uint64_t), void (*)(void *))>(
      *setAllocator)(attnCpuAlloc, attnCpuFree);
  // Parallel loops (a module has the setter when it has any) through the
  // runtime's hook: on the host framework's OpenMP team once the host binds
  // one (the Python package binds torch's), on the module's own OpenMP
  // runtime until then.
  if (auto setParallelFor = (*engine)->lookup(kSetParallelForFunction))
    reinterpret_cast<void (*)(void *)>(*setParallelFor)(
        reinterpret_cast<void *>(&attnParallelFor));
  else
    llvm::consumeError(setParallelFor.takeError());
  return std::unique_ptr<JitFunction>(new JitFunction(std::move(memory),
                                                      std::move(*engine), abi,
                                                      /*checksAbi=*/true));
}

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::compileCuda(ModuleOp module, const FunctionAbi &abi,
                         const CpuTargetOptions &host,
                         const CudaPipelineOptions &pipeline) {
  StringRef runtime = getCudaRuntimeLibraryPath();
  if (runtime.empty())
    return llvm::createStringError(
        "this build found no CUDA toolkit: there is no CUDA runtime library");
  auto copy = lowerCopy(
      module, [&](OpPassManager &pm) { buildCudaPipeline(pm, pipeline); },
      "CUDA pipeline");
  if (!copy)
    return copy.takeError();
  StringRef runtimes[] = {runtime};
  auto memory = std::make_unique<JitMemory>();
  auto engine = createEngine(**copy, host, runtimes, *memory);
  if (!engine)
    return engine.takeError();
  return std::unique_ptr<JitFunction>(new JitFunction(std::move(memory),
                                                      std::move(*engine), abi,
                                                      /*checksAbi=*/false));
}

llvm::Error JitFunction::call(MutableArrayRef<HostArray> arrays) {
  SmallVector<Buffer> buffers;
  for (HostArray &array : arrays)
    buffers.push_back({array.getElement(), array.getShape(), array.getData()});
  return call(buffers);
}

llvm::Error JitFunction::call(ArrayRef<Buffer> buffers) {
  if (buffers.size() != abi.params.size())
    return llvm::createStringError(
        "@" + abi.name + " takes " + Twine(abi.numInputs) + " inputs and " +
        Twine(abi.params.size() - abi.numInputs) + " outputs, " +
        Twine(buffers.size()) + " arrays were given");

  // One descriptor per buffer: {allocated, aligned, offset, sizes, strides},
  // all 64-bit fields, which is how MLIR lays out a memref descriptor.
  SmallVector<SmallVector<int64_t>> descriptors;
  SmallVector<void *> descriptorPtrs(buffers.size());
  SmallVector<void *> args;
  for (auto [i, param] : llvm::enumerate(abi.params)) {
    const Buffer &buffer = buffers[i];
    std::string what = (param.isOutput ? "output #" + Twine(i - abi.numInputs)
                                       : "input #" + Twine(i))
                           .str();
    if (!param.isBuffer)
      return llvm::createStringError(
          what + " of @" + abi.name +
          " is a scalar; the runner passes tensors only");
    if (buffer.element != param.element)
      return llvm::createStringError(
          what + " of @" + abi.name + " has element type " +
          stringifyAbiElement(buffer.element) + ", the function takes " +
          stringifyAbiElement(param.element));
    if (!param.accepts(buffer.shape))
      return llvm::createStringError(what + " of @" + abi.name + " has shape " +
                                     formatShape(buffer.shape) +
                                     ", the function takes " +
                                     formatShape(param.shape));

    SmallVector<int64_t> &desc = descriptors.emplace_back();
    auto address = reinterpret_cast<int64_t>(buffer.data);
    desc = {address, address, 0};
    desc.append(buffer.shape.begin(), buffer.shape.end());
    int64_t stride = 1;
    SmallVector<int64_t> strides(buffer.shape.size());
    for (int64_t d = strides.size() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= buffer.shape[d];
    }
    desc.append(strides);
  }
  // The packed wrapper takes a pointer to each argument; each argument is a
  // pointer to a descriptor.
  for (auto [i, desc] : llvm::enumerate(descriptors)) {
    descriptorPtrs[i] = desc.data();
    args.push_back(&descriptorPtrs[i]);
  }
  if (!checksAbi) {
    // Code without attn-check-abi's checks (CUDA): the relations of sizes
    // are checked here.
    SmallVector<SmallVector<int64_t>> shapes;
    for (const Buffer &buffer : buffers)
      shapes.emplace_back(buffer.shape);
    if (std::optional<std::string> broken = abi.checkSizeRelations(shapes))
      return llvm::createStringError("@" + abi.name +
                                     " refused its buffers: " + *broken);
    return engine->invokePacked(abi.getCInterfaceSymbol(), args);
  }
  // The packed wrapper writes the status through one more pointer.
  int32_t status = 0;
  args.push_back(&status);
  if (llvm::Error error = engine->invokePacked(abi.getCInterfaceSymbol(), args))
    return error;
  if (status == 0)
    return llvm::Error::success();
  auto query = engine->lookup(kAbiErrorFunction);
  if (!query)
    return query.takeError();
  int64_t info[5] = {0, 0, 0, 0, 0};
  reinterpret_cast<int (*)(int64_t *)>(*query)(info);
  return llvm::createStringError("@" + abi.name + " refused its buffers: " +
                                 describeAbiMismatch(abi, info));
}

//===----------------------------------------------------------------------===//
// ShapeEvaluator
//===----------------------------------------------------------------------===//

FailureOr<int64_t> ShapeEvaluator::getDim(Value value, int64_t dim) {
  auto type = cast<ShapedType>(value.getType());
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    unsigned number = arg.getArgNumber();
    if (arg.getOwner() != &func.getBody().front() ||
        number >= argShapes.size() ||
        dim >= static_cast<int64_t>(argShapes[number].size()))
      return failure();
    return argShapes[number][dim];
  }
  Operation *op = value.getDefiningOp();
  auto result = cast<OpResult>(value);
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return getDim(cast.getSource(), dim);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return getDim(dps.getTiedOpOperand(result)->get(), dim);
  // A loop whose body writes the carried tensor in place (through ops in
  // destination style) has the shape of its initial value.
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    unsigned number = result.getResultNumber();
    Value carried = loop.getYieldedValues()[number];
    while (auto dps = carried.getDefiningOp<DestinationStyleOpInterface>())
      carried = dps.getTiedOpOperand(cast<OpResult>(carried))->get();
    if (carried != loop.getRegionIterArg(number))
      return failure();
    return getDim(loop.getInitArgs()[number], dim);
  }
  if (auto reify = dyn_cast<ReifyRankedShapedTypeOpInterface>(op)) {
    OpBuilder b(op);
    ReifiedRankedShapedTypeDims shapes;
    if (failed(reify.reifyResultShapes(b, shapes)))
      return failure();
    OpFoldResult size = shapes[result.getResultNumber()][dim];
    if (auto attr = dyn_cast<Attribute>(size))
      return cast<IntegerAttr>(attr).getInt();
    return getIndex(cast<Value>(size));
  }
  return failure();
}

FailureOr<int64_t> ShapeEvaluator::getIndex(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return *constant;
  Operation *op = value.getDefiningOp();
  if (!op)
    return failure();
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    FailureOr<int64_t> index = getIndex(dim.getIndex());
    if (failed(index))
      return failure();
    return getDim(dim.getSource(), *index);
  }
  if (auto cast = dyn_cast<arith::IndexCastOp>(op))
    return getIndex(cast.getIn());
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    SmallVector<Attribute> operands;
    for (Value operand : apply.getMapOperands()) {
      FailureOr<int64_t> v = getIndex(operand);
      if (failed(v))
        return failure();
      operands.push_back(IntegerAttr::get(operand.getType(), *v));
    }
    SmallVector<Attribute> results;
    if (failed(apply.getAffineMap().constantFold(operands, results)))
      return failure();
    return cast<IntegerAttr>(results[0]).getInt();
  }
  if (op->getNumOperands() != 2)
    return failure();
  FailureOr<int64_t> lhs = getIndex(op->getOperand(0));
  FailureOr<int64_t> rhs = getIndex(op->getOperand(1));
  if (failed(lhs) || failed(rhs))
    return failure();
  if (isa<arith::AddIOp>(op))
    return *lhs + *rhs;
  if (isa<arith::SubIOp>(op))
    return *lhs - *rhs;
  if (isa<arith::MulIOp>(op))
    return *lhs * *rhs;
  if (isa<arith::DivUIOp, arith::DivSIOp>(op) && *rhs != 0)
    return *lhs / *rhs;
  return failure();
}

//===----------------------------------------------------------------------===//
// analyzeCall
//===----------------------------------------------------------------------===//

/// 2 * (product of the loop ranges) of a contraction, 0 for other ops;
/// nullopt when a range cannot be evaluated.
static std::optional<int64_t> countFlops(linalg::LinalgOp op,
                                         ShapeEvaluator &evaluator) {
  // Contractions (two or more inputs and a reduction): Q K^T, P V and the
  // projections; the softmax's row reductions are not counted.
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInputs() < 2)
    return 0;
  // Each loop is bounded by some operand dimension: find one per loop.
  SmallVector<std::pair<Value, int64_t>> operandDims;
  for (OpOperand &operand : op->getOpOperands())
    for (int64_t d = 0, e = op.getRank(&operand); d < e; ++d)
      operandDims.push_back({operand.get(), d});
  AffineMap shapesToLoops = op.getShapesToLoopsMap();
  if (!shapesToLoops)
    return std::nullopt;
  int64_t flops = 2;
  for (AffineExpr expr : shapesToLoops.getResults()) {
    auto dimExpr = dyn_cast<AffineDimExpr>(expr);
    if (!dimExpr)
      return std::nullopt;
    auto [value, dim] = operandDims[dimExpr.getPosition()];
    FailureOr<int64_t> size = evaluator.getDim(value, dim);
    if (failed(size))
      return std::nullopt;
    flops *= *size;
  }
  return flops;
}

llvm::Expected<CallAnalysis>
attn::analyzeCall(ModuleOp module, StringRef name,
                  ArrayRef<SmallVector<int64_t>> inputShapes) {
  auto copy = lowerCopy(module, buildReferencePipeline, "reference pipeline");
  if (!copy)
    return copy.takeError();
  auto func = (*copy)->lookupSymbol<func::FuncOp>(name);
  if (!func)
    return llvm::createStringError("no function @" + name);

  ShapeEvaluator evaluator(func, inputShapes);
  CallAnalysis analysis;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    SmallVector<int64_t> &shape = analysis.resultShapes.emplace_back();
    auto type = cast<ShapedType>(value.getType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      FailureOr<int64_t> size = evaluator.getDim(value, d);
      if (failed(size))
        return llvm::createStringError("cannot work out dimension " + Twine(d) +
                                       " of result #" + Twine(i) + " of @" +
                                       name + " from the input shapes");
      shape.push_back(*size);
    }
  }

  int64_t flops = 0;
  bool known = true;
  func.walk([&](linalg::LinalgOp op) {
    std::optional<int64_t> opFlops = countFlops(op, evaluator);
    known &= opFlops.has_value();
    flops += opFlops.value_or(0);
  });
  if (known)
    analysis.flops = flops;
  return analysis;
}
