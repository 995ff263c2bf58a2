//===- attn-mutate-fuzzer.cpp - valid programs with one value changed -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// libFuzzer target with a custom mutator. The parse fuzzer mutates bytes,
// so almost all it tries no longer parses; the generator writes only
// programs it knows to be valid. This target sits between them: its inputs
// are MLIR programs (seeded from test/ and examples/), and its mutator
// parses one and changes one value in it while keeping it well-formed text:
//
//   - an integer or float attribute of some op (an arith.constant's value,
//     an attn op's scale, window, num_heads, a dense i64 array's element)
//     set to an edge value (0, -1, 1, the value +-1, twice it, its negation,
//     the extremes of its type; 0, -0, infinities, NaN, huge, tiny floats);
//   - one static size, everywhere it occurs in a ranked tensor type (the
//     program stays consistent where every use of the size changes);
//   - one floating-point element type, everywhere in ranked tensor types.
//
// Each input then goes through the CPU pipeline with its translation to
// LLVM IR (PipelineFuzzing.h) and, on a copy, the CUDA pipeline's kernel
// part (to the gpu dialect: no toolkit needed). A program that upstream's
// verifiers accept must compile or be rejected with an error diagnostic; a
// crash or a failure without one is a finding. Inputs that do not parse
// fall back to libFuzzer's byte mutations. docs/Testing.md, "Fuzzing".
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "PipelineFuzzing.h"
#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::attn;

// libFuzzer's byte mutator; absent when the target is built without
// libFuzzer (FuzzerMain.cpp runs inputs once each and never mutates).
extern "C" __attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t *data,
                                                         size_t size,
                                                         size_t maxSize);

namespace {

using Random = std::minstd_rand;

template <typename T> const T &pick(Random &random, ArrayRef<T> items) {
  return items[random() % items.size()];
}

/// An edge value for an integer attribute of `width` bits holding `value`,
/// in the type's range (arithmetic that would overflow saturates: the
/// mutator itself must not be what UBSan or an APInt assertion finds).
int64_t mutateInteger(Random &random, int64_t value, unsigned width) {
  int64_t maximum = width >= 64 ? std::numeric_limits<int64_t>::max()
                                : (int64_t(1) << (width - 1)) - 1;
  int64_t minimum = width >= 64 ? std::numeric_limits<int64_t>::min()
                                : -(int64_t(1) << (width - 1));
  auto saturate = [&](bool overflowed, int64_t result, bool upwards) {
    return overflowed ? (upwards ? maximum : minimum) : result;
  };
  int64_t plus, minus, twice, negated;
  bool plusOver = __builtin_add_overflow(value, 1, &plus);
  bool minusOver = __builtin_sub_overflow(value, 1, &minus);
  bool twiceOver = __builtin_mul_overflow(value, 2, &twice);
  bool negatedOver = __builtin_sub_overflow(int64_t(0), value, &negated);
  const int64_t choices[] = {0,
                             -1,
                             1,
                             saturate(plusOver, plus, true),
                             saturate(minusOver, minus, false),
                             saturate(twiceOver, twice, value > 0),
                             saturate(negatedOver, negated, true),
                             maximum,
                             minimum,
                             1 << 20,
                             3,
                             value / 2};
  return std::clamp(pick<int64_t>(random, choices), minimum, maximum);
}

/// An edge value for a float attribute holding `value`.
double mutateFloat(Random &random, double value) {
  const double choices[] = {0.0,
                            -0.0,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            1e30,
                            -1e30,
                            1e-30,
                            -1.0,
                            value * 1e4,
                            -value};
  return pick<double>(random, choices);
}

/// `attr` with one value changed, or null when it holds none this mutator
/// changes.
Attribute mutateAttribute(Random &random, Attribute attr) {
  if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    Type type = integer.getType();
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    if (width < 2 || width > 64) // i1: a flag, not a value
      return nullptr;
    return IntegerAttr::get(
        type, mutateInteger(random, integer.getValue().getSExtValue(), width));
  }
  if (auto real = dyn_cast<FloatAttr>(attr)) {
    bool losesInfo;
    APFloat mutated(mutateFloat(random, real.getValueAsDouble()));
    mutated.convert(cast<FloatType>(real.getType()).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
    return FloatAttr::get(real.getType(), mutated);
  }
  if (auto array = dyn_cast<DenseI64ArrayAttr>(attr)) {
    if (array.empty())
      return nullptr;
    SmallVector<int64_t> values(array.asArrayRef());
    int64_t &value = values[random() % values.size()];
    value = mutateInteger(random, value, 64);
    return DenseI64ArrayAttr::get(attr.getContext(), values);
  }
  return nullptr;
}

/// Changes one integer or float attribute of one op (an arith.constant's
/// value, an attn op's scale, window or head count).
bool mutateValue(Random &random, ModuleOp module) {
  SmallVector<std::pair<Operation *, StringAttr>> candidates;
  module->walk([&](Operation *op) {
    for (NamedAttribute named : op->getAttrs())
      if (isa<IntegerAttr, FloatAttr, DenseI64ArrayAttr>(named.getValue()))
        candidates.push_back({op, named.getName()});
  });
  if (candidates.empty())
    return false;
  auto [op, name] = candidates[random() % candidates.size()];
  Attribute mutated = mutateAttribute(random, op->getAttr(name));
  if (!mutated)
    return false;
  op->setAttr(name, mutated);
  return true;
}

/// Every ranked tensor type in `module`.
SetVector<RankedTensorType> collectTensorTypes(ModuleOp module) {
  SetVector<RankedTensorType> types;
  auto add = [&](Type type) {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      types.insert(tensor);
  };
  module->walk([&](Operation *op) {
    llvm::for_each(op->getResultTypes(), add);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        llvm::for_each(block.getArgumentTypes(), add);
  });
  return types;
}

/// Rewrites every ranked tensor type of `module` (op results, block
/// arguments, function types) through `map`. Elements attributes are left
/// as they are: their data has the old type's size (a constant then no
/// longer verifies, which is the parser's to report).
void replaceTensorTypes(ModuleOp module,
                        function_ref<Type(RankedTensorType)> map) {
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [&](RankedTensorType type) -> Type { return map(type); });
  replacer.addReplacement(
      [](ElementsAttr attr) -> std::optional<std::pair<Attribute, WalkResult>> {
        return std::make_pair(attr, WalkResult::skip());
      });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

/// Changes one static size wherever ranked tensor types have it.
bool mutateSize(Random &random, ModuleOp module) {
  SetVector<int64_t> sizes;
  for (RankedTensorType type : collectTensorTypes(module))
    for (int64_t size : type.getShape())
      if (!ShapedType::isDynamic(size))
        sizes.insert(size);
  if (sizes.empty())
    return false;
  int64_t from = sizes[random() % sizes.size()];
  const int64_t choices[] = {0, 1, 2, 3, from + 1, from - 1, from * 2, 7, 4096};
  int64_t to = std::max<int64_t>(0, pick<int64_t>(random, choices));
  if (to == from)
    return false;
  replaceTensorTypes(module, [&](RankedTensorType type) -> Type {
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t &size : shape)
      if (size == from)
        size = to;
    return type.clone(shape);
  });
  return true;
}

/// Changes one floating-point element type wherever ranked tensor types
/// have it.
bool mutateElementType(Random &random, ModuleOp module) {
  SetVector<Type> elements;
  for (RankedTensorType type : collectTensorTypes(module))
    if (isa<FloatType>(type.getElementType()))
      elements.insert(type.getElementType());
  if (elements.empty())
    return false;
  MLIRContext *context = module.getContext();
  Type from = elements[random() % elements.size()];
  const Type choices[] = {
      Float16Type::get(context),      BFloat16Type::get(context),
      Float32Type::get(context),      Float64Type::get(context),
      Float8E4M3FNType::get(context), IntegerType::get(context, 32)};
  Type to = pick<Type>(random, choices);
  if (to == from)
    return false;
  replaceTensorTypes(module, [&](RankedTensorType type) -> Type {
    return type.getElementType() == from ? type.clone(to) : type;
  });
  return true;
}

/// Runs the CUDA pipeline's kernel part (attn ops to gpu launches, no
/// binary) on `module`: it must succeed or say why.
void compileCudaKernels(ModuleOp module, StringRef source,
                        const DiagnosticRecorder &diagnostics) {
  unsigned errorsBefore = diagnostics.getErrorCount();
  PassManager pm(module.getContext());
  CudaPipelineOptions options;
  buildCudaKernelPipeline(pm, options);
  if (failed(pm.run(module)) && diagnostics.getErrorCount() == errorsBefore)
    reportFinding("the CUDA kernel pipeline failed without an error", "",
                  source);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  getFuzzRegistry();
  prepareCpuTargets();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  auto bytes = [&] {
    return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, maxSize) : size;
  };
  StringRef source(reinterpret_cast<const char *>(data), size);
  MLIRContext context(getFuzzRegistry(), MLIRContext::Threading::DISABLED);
  DiagnosticRecorder diagnostics(context);
  OwningOpRef<ModuleOp> module =
      parsePipelineInput(context, source, diagnostics);
  if (!module)
    return bytes();
  Random random(seed);
  bool (*const mutators[])(Random &, ModuleOp) = {
      mutateValue, mutateValue, mutateSize, mutateElementType};
  bool changed = false;
  for (int attempt = 0; attempt < 4 && !changed; ++attempt)
    changed = mutators[random() % std::size(mutators)](random, *module);
  if (!changed)
    return bytes();
  // The generic form where the change broke a verifier: custom printers
  // may assume what the verifier checks. Parsing it back reports the error.
  OpPrintingFlags flags;
  if (failed(verify(*module)))
    flags.printGenericOpForm();
  std::string mutated;
  llvm::raw_string_ostream os(mutated);
  module->print(os, flags);
  if (mutated.size() > maxSize)
    return bytes();
  std::memcpy(data, mutated.data(), mutated.size());
  return mutated.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef source(reinterpret_cast<const char *>(data), size);
  MLIRContext context(getFuzzRegistry(), MLIRContext::Threading::DISABLED);
  DiagnosticRecorder diagnostics(context);
  OwningOpRef<ModuleOp> module =
      parsePipelineInput(context, source, diagnostics);
  if (!module)
    return 0;
  OwningOpRef<ModuleOp> copy = module->clone();
  compileForCpu(*module, source, diagnostics);
  compileCudaKernels(*copy, source, diagnostics);
  return 0;
}
