//===- CpuABI.cpp - the C ABI of compiled attn functions ------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/CpuABI.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Elements and parameters
//===----------------------------------------------------------------------===//

bool AbiParam::hasStaticShape() const {
  return llvm::none_of(shape, ShapedType::isDynamic);
}

FailureOr<AbiElement> attn::getAbiElement(Type type) {
  if (type.isF16())
    return AbiElement::f16;
  if (type.isBF16())
    return AbiElement::bf16;
  if (type.isF32())
    return AbiElement::f32;
  if (type.isF64())
    return AbiElement::f64;
  if (type.isIndex())
    return AbiElement::index;
  if (type.isSignlessInteger(1))
    return AbiElement::i1;
  if (type.isSignlessInteger(8))
    return AbiElement::i8;
  if (type.isSignlessInteger(32))
    return AbiElement::i32;
  if (type.isSignlessInteger(64))
    return AbiElement::i64;
  return failure();
}

namespace {
/// What the ABI knows of each element kind, in `AbiElement` order.
struct ElementInfo {
  StringRef name;
  /// The C type in the header. Halves travel as their bit patterns: C has no
  /// portable 16-bit float type.
  StringRef cType;
  int64_t size;
  bool isFloat;
};
} // namespace

static const ElementInfo &getInfo(AbiElement element) {
  static const ElementInfo infos[] = {
      {"f16", "uint16_t", 2, true},   {"bf16", "uint16_t", 2, true},
      {"f32", "float", 4, true},      {"f64", "double", 8, true},
      {"i1", "bool", 1, false},       {"i8", "int8_t", 1, false},
      {"i32", "int32_t", 4, false},   {"i64", "int64_t", 8, false},
      {"index", "int64_t", 8, false},
  };
  return infos[static_cast<size_t>(element)];
}

StringRef attn::stringifyAbiElement(AbiElement element) {
  return getInfo(element).name;
}

int64_t attn::getAbiElementSize(AbiElement element) {
  return getInfo(element).size;
}

bool attn::isFloatElement(AbiElement element) {
  return getInfo(element).isFloat;
}

static StringRef getCElementType(AbiElement element) {
  return getInfo(element).cType;
}

std::string attn::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s;
}

std::string attn::formatTensorType(ArrayRef<int64_t> shape,
                                   AbiElement element) {
  std::string dims = formatShape(shape);
  return "tensor<" + dims + (dims.empty() ? "" : "x") +
         stringifyAbiElement(element).str() + ">";
}

bool AbiParam::accepts(ArrayRef<int64_t> sizes) const {
  if (sizes.size() != shape.size())
    return false;
  for (auto [have, want] : llvm::zip(sizes, shape))
    if (!ShapedType::isDynamic(want) && have != want)
      return false;
  return true;
}

/// Describes one argument or result type; `what` names it in diagnostics.
static FailureOr<AbiParam> getParam(func::FuncOp func, Type type,
                                    const Twine &what) {
  AbiParam param;
  Type element = type;
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!isa<RankedTensorType, MemRefType>(type) || !shaped.hasRank())
      return func.emitError() << what << " has type " << type
                              << ", which the C ABI cannot pass; only ranked "
                                 "tensors and scalars cross it";
    element = shaped.getElementType();
    param.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
  } else {
    param.isBuffer = false;
  }
  FailureOr<AbiElement> abiElement = getAbiElement(element);
  if (failed(abiElement))
    return func.emitError() << what << " has element type " << element
                            << ", which the C ABI cannot pass (supported: "
                               "f16, bf16, f32, f64, i1, i8, i32, i64, index)";
  param.element = *abiElement;
  if (!param.isBuffer &&
      (param.element == AbiElement::f16 || param.element == AbiElement::bf16))
    return func.emitError()
           << what << " is the scalar " << type
           << "; C has no portable 16-bit float to pass it by value, so pass "
              "a rank-0 tensor instead";
  return param;
}

FailureOr<FunctionAbi> attn::getFunctionAbi(func::FuncOp func) {
  FunctionAbi abi;
  abi.name = func.getSymName().str();
  auto isIdentifier = [](StringRef name) {
    return !name.empty() && !llvm::isDigit(name.front()) &&
           llvm::all_of(name,
                        [](char c) { return llvm::isAlnum(c) || c == '_'; });
  };
  if (!isIdentifier(abi.name))
    return func.emitError() << "function name '" << abi.name
                            << "' is not a C identifier, so C cannot call it; "
                               "rename it (letters, digits and '_')";
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    FailureOr<AbiParam> param = getParam(func, type, "argument #" + Twine(i));
    if (failed(param))
      return failure();
    if (Attribute layout = func.getArgAttr(i, kBufferLayoutAttr)) {
      if (!param->isBuffer || !isRowStridedLayout(layout, param->getRank()))
        return func.emitError()
               << "argument #" << i << " (" << type << ") has "
               << kBufferLayoutAttr << " = " << layout
               << "; the C ABI passes dense row-major buffers, or views "
                  "whose innermost dimension is contiguous: strided<[?, ..., "
                  "?, 1], offset: ?> of the tensor's rank (at least 1)";
      param->rowStrided = true;
    }
    if (auto memref = dyn_cast<MemRefType>(type)) {
      // A destination: dense, or a view like the inputs'.
      param->isDestination = true;
      param->rowStrided = !memref.getLayout().isIdentity();
      if (param->rowStrided &&
          !isRowStridedLayout(memref.getLayout(), param->getRank()))
        return func.emitError()
               << "argument #" << i << " (" << type
               << ") is a destination with a layout the C ABI cannot pass; "
                  "it takes dense row-major buffers, or views whose "
                  "innermost dimension is contiguous: strided<[?, ..., ?, "
                  "1], offset: ?> of the memref's rank (at least 1)";
    }
    abi.params.push_back(*param);
  }
  abi.numInputs = abi.params.size();
  abi.sizeRelations = getAbiSizeRelations(func);
  abi.valueChecks = getAbiValueChecks(func);
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    FailureOr<AbiParam> param = getParam(func, type, "result #" + Twine(i));
    if (failed(param))
      return failure();
    if (!param->isBuffer)
      return func.emitError()
             << "result #" << i << " is the scalar " << type
             << "; the C ABI returns results through caller-allocated "
                "buffers, so return a tensor instead";
    param->isOutput = true;
    abi.params.push_back(*param);
  }
  return abi;
}

FailureOr<SmallVector<FunctionAbi>> attn::getModuleAbi(ModuleOp module) {
  SmallVector<FunctionAbi> abis;
  bool ok = true;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    FailureOr<FunctionAbi> abi = getFunctionAbi(func);
    if (failed(abi))
      ok = false;
    else
      abis.push_back(std::move(*abi));
  }
  if (!ok)
    return failure();
  if (abis.empty())
    return module.emitError()
           << "the module defines no public function, so nothing would be "
              "callable from the compiled code";
  return abis;
}

//===----------------------------------------------------------------------===//
// Relations of sizes
//===----------------------------------------------------------------------===//

namespace {
/// Traces sizes inside one function back to its parameters.
class SizeTracer {
public:
  explicit SizeTracer(func::FuncOp func) : entry(&func.getBody().front()) {}

  /// Dimension `dim` of `value`.
  std::optional<AbiSize> traceDim(Value value, int64_t dim, unsigned depth = 0);
  /// An index value.
  std::optional<AbiSize> traceIndex(Value value, unsigned depth);
  std::optional<AbiSize> traceFoldResult(OpFoldResult size, unsigned depth);

private:
  /// Deeper chains are not followed (a long chain of ops that each pass a
  /// size on is not one a function has).
  static constexpr unsigned kMaxDepth = 64;
  Block *entry;
};
} // namespace

std::optional<AbiSize> SizeTracer::traceDim(Value value, int64_t dim,
                                            unsigned depth) {
  auto type = cast<ShapedType>(value.getType());
  // A dimension the value does not have (a constant tensor.dim index out of
  // range: attn-verify-input rejects it, a pipeline built without it must
  // not crash here) relates to nothing.
  if (dim < 0 || dim >= type.getRank())
    return std::nullopt;
  if (!type.isDynamicDim(dim))
    return AbiSize{-1, type.getDimSize(dim)};
  if (depth > kMaxDepth)
    return std::nullopt;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != entry)
      return std::nullopt;
    return AbiSize{arg.getArgNumber(), dim};
  }
  Operation *op = value.getDefiningOp();
  auto result = cast<OpResult>(value);
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return traceDim(cast.getSource(), dim, depth + 1);
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return traceIndex(empty.getDynamicSize(dim), depth + 1);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return traceFoldResult(expand.getMixedOutputShape()[dim], depth + 1);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    if (OpOperand *init = dps.getTiedOpOperand(result))
      return traceDim(init->get(), dim, depth + 1);
  // A result of an attn op that is not in destination style (multihead):
  // the operand dimension its lowering sizes it by.
  SmallVector<attn::SizeRelation> relations;
  attn::getSizeRelations(op, relations);
  for (const attn::SizeRelation &relation : relations)
    if (!relation.multiple && relation.size.value == value &&
        relation.size.dim == dim)
      return traceDim(relation.other.value, relation.other.dim, depth + 1);
  return std::nullopt;
}

std::optional<AbiSize> SizeTracer::traceIndex(Value value, unsigned depth) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return AbiSize{-1, *constant};
  if (auto dimOp = value.getDefiningOp<tensor::DimOp>())
    if (std::optional<int64_t> dim = getConstantIntValue(dimOp.getIndex()))
      return traceDim(dimOp.getSource(), *dim, depth + 1);
  return std::nullopt;
}

std::optional<AbiSize> SizeTracer::traceFoldResult(OpFoldResult size,
                                                   unsigned depth) {
  if (auto value = dyn_cast<Value>(size))
    return traceIndex(value, depth);
  return AbiSize{-1, cast<IntegerAttr>(cast<Attribute>(size)).getInt()};
}

/// The loops of a linalg op are bounded by the first operand dimension
/// indexed by each; every other dimension indexed by the loop alone is read
/// up to that bound.
static void addLoopEqualities(linalg::LinalgOp op,
                              SmallVectorImpl<attn::SizeRelation> &result) {
  SmallVector<std::optional<attn::TensorDim>> bound(op.getNumLoops());
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop)
        continue;
      attn::TensorDim here{operand.get(), static_cast<int64_t>(d)};
      std::optional<attn::TensorDim> &first = bound[loop.getPosition()];
      if (!first)
        first = here;
      else
        result.push_back({here, *first});
    }
  }
}

SmallVector<AbiSizeRelation> attn::getAbiSizeRelations(func::FuncOp func) {
  using Kind = AbiSizeRelationKind;
  SmallVector<AbiSizeRelation> result;
  if (func.isExternal())
    return result;
  SizeTracer tracer(func);
  auto add = [&](std::optional<AbiSize> size, std::optional<AbiSize> other,
                 Kind kind) {
    if (!size || !other || *size == *other)
      return;
    // The dynamic side is the one checked; two constants are the verifier's.
    if (size->param < 0) {
      std::swap(size, other);
      if (kind != Kind::Equal)
        kind = kind == Kind::MultipleOf ? Kind::Divides : Kind::MultipleOf;
    }
    if (size->param < 0)
      return;
    for (const AbiSizeRelation &known : result) {
      AbiSize a{known.param, known.dimension};
      AbiSize b{known.otherParam, known.otherDimension};
      if (known.kind == kind && a == *size && b == *other)
        return;
      if (kind == Kind::Equal && known.kind == kind && a == *other &&
          b == *size)
        return;
    }
    result.push_back({static_cast<unsigned>(size->param), size->dim,
                      other->param, other->dim, kind});
  };
  // Only the entry block's ops: each runs on every call.
  Block &entry = func.getBody().front();
  SmallVector<attn::SizeRelation> relations;
  for (Operation &op : entry) {
    attn::getSizeRelations(&op, relations);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      addLoopEqualities(linalgOp, relations);
  }
  for (const attn::SizeRelation &relation : relations)
    add(tracer.traceDim(relation.size.value, relation.size.dim),
        tracer.traceDim(relation.other.value, relation.other.dim),
        relation.multiple ? Kind::MultipleOf : Kind::Equal);
  // Outputs: the caller sizes them as the function computes them.
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret)
    return result;
  int64_t numInputs = func.getNumArguments();
  for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      continue;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        add(AbiSize{numInputs + static_cast<int64_t>(r), d},
            tracer.traceDim(value, d), Kind::Equal);
  }
  return result;
}

SmallVector<AbiValueCheck> attn::getAbiValueChecks(func::FuncOp func) {
  SmallVector<AbiValueCheck> result;
  if (func.isExternal())
    return result;
  SizeTracer tracer(func);
  Block &entry = func.getBody().front();
  // The values are read from the caller's buffers: parameters as given.
  auto parameterOf = [&](Value value) -> std::optional<int64_t> {
    while (auto cast = value.getDefiningOp<tensor::CastOp>())
      value = cast.getSource();
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &entry)
      return std::nullopt;
    return arg.getArgNumber();
  };
  SmallVector<attn::ValueCheck> checks;
  for (Operation &op : entry)
    attn::getValueChecks(&op, checks);
  for (const attn::ValueCheck &check : checks) {
    AbiValueCheck traced{check.kind, {}, {}};
    for (Value values : check.values)
      if (std::optional<int64_t> param = parameterOf(values))
        traced.params.push_back(*param);
    for (const attn::TensorDim &size : check.sizes)
      if (std::optional<AbiSize> given = tracer.traceDim(size.value, size.dim))
        traced.sizes.push_back(*given);
    if (traced.params.size() != check.values.size() ||
        traced.sizes.size() != check.sizes.size())
      continue;
    if (!llvm::any_of(result, [&](const AbiValueCheck &known) {
          return known.kind == traced.kind && known.params == traced.params &&
                 known.sizes == traced.sizes;
        }))
      result.push_back(std::move(traced));
  }
  return result;
}

std::pair<unsigned, unsigned>
AbiValueCheck::getArity(attn::ValueCheckKind kind) {
  switch (kind) {
  case attn::ValueCheckKind::LengthsWithin:
    return {1, 1};
  case attn::ValueCheckKind::PagesWithin:
    return {2, 2};
  case attn::ValueCheckKind::PageWrites:
    return {2, 3};
  }
  llvm_unreachable("unknown value check");
}

bool AbiSizeRelation::holds(int64_t size, int64_t other) const {
  switch (kind) {
  case AbiSizeRelationKind::Equal:
    return size == other;
  case AbiSizeRelationKind::MultipleOf:
    return other > 0 && size % other == 0;
  case AbiSizeRelationKind::Divides:
    return size > 0 && other % size == 0;
  }
  llvm_unreachable("unknown size relation");
}

std::optional<std::string>
FunctionAbi::checkSizeRelations(ArrayRef<SmallVector<int64_t>> shapes) const {
  for (const AbiSizeRelation &relation : sizeRelations) {
    if (relation.param >= shapes.size() ||
        (!relation.isConstant() &&
         relation.otherParam >= static_cast<int64_t>(shapes.size())))
      continue;
    int64_t size = shapes[relation.param][relation.dimension];
    int64_t other = relation.isConstant()
                        ? relation.otherDimension
                        : shapes[relation.otherParam][relation.otherDimension];
    if (!relation.holds(size, other))
      return describeBrokenRelation(relation, size, other);
  }
  return std::nullopt;
}

/// "input #2 (tensor<?x4xf32>)" or "output #0 (...)".
static std::string describeParam(const FunctionAbi &abi, unsigned index) {
  const AbiParam &param = abi.params[index];
  return ((param.isOutput ? "output #" : "input #") +
          Twine(param.isOutput ? index - abi.numInputs : index) + " (" +
          formatTensorType(param.shape, param.element) + ")")
      .str();
}

std::string FunctionAbi::describeBrokenRelation(const AbiSizeRelation &relation,
                                                int64_t size,
                                                int64_t otherSize) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << describeParam(*this, relation.param) << ": dimension "
     << relation.dimension << " has size " << size << ", ";
  // The other side: "4 (another buffer's static size)" or "input #1
  // (tensor<?xf32>) dimension 0 (7)".
  auto describeOther = [&]() -> std::string {
    if (relation.isConstant())
      return (Twine(relation.otherDimension) +
              " (another buffer's static size)")
          .str();
    return (describeParam(*this, relation.otherParam) + " dimension " +
            Twine(relation.otherDimension) + " (" + Twine(otherSize) + ")")
        .str();
  };
  switch (relation.kind) {
  case AbiSizeRelationKind::Equal:
    if (relation.isConstant())
      os << "the function reads it as " << describeOther();
    else
      os << describeParam(*this, relation.otherParam) << " dimension "
         << relation.otherDimension << " has " << otherSize
         << "; the function needs them equal";
    break;
  case AbiSizeRelationKind::MultipleOf:
    os << "the function needs a multiple of " << describeOther()
       << ", which must be positive";
    break;
  case AbiSizeRelationKind::Divides:
    os << "the function needs a positive divisor of " << describeOther();
    break;
  }
  return text;
}

std::string attn::describeAbiMismatch(const FunctionAbi &abi,
                                      ArrayRef<int64_t> info) {
  int64_t argument = info[0], dimension = info[1], kind = info[2];
  int64_t expected = info[3], actual = info[4];
  std::string text;
  llvm::raw_string_ostream os(text);
  if (argument < 0 || argument >= static_cast<int64_t>(abi.params.size())) {
    os << "argument #" << argument << " (the function has " << abi.params.size()
       << ")";
    return text;
  }
  if (static_cast<AbiMismatch>(kind) == AbiMismatch::Relation) {
    // The record holds the other side's size, not which relation it is: the
    // first of this dimension that these sizes break.
    for (const AbiSizeRelation &relation : abi.sizeRelations)
      if (relation.param == argument && relation.dimension == dimension &&
          (!relation.isConstant() || relation.otherDimension == expected) &&
          !relation.holds(actual, expected))
        return abi.describeBrokenRelation(relation, actual, expected);
  }
  const AbiParam &param = abi.params[argument];
  os << describeParam(abi, argument) << ": ";
  switch (static_cast<AbiMismatch>(kind)) {
  case AbiMismatch::Size:
    if (param.getRank() > dimension &&
        !ShapedType::isDynamic(param.shape[dimension]))
      os << "dimension " << dimension << " has size " << actual
         << ", the function was compiled for " << expected;
    else
      os << "dimension " << dimension << " has the negative size " << actual;
    break;
  case AbiMismatch::Stride:
    os << "dimension " << dimension << " has stride " << actual
       << " elements, a dense row-major buffer of its sizes has " << expected;
    break;
  case AbiMismatch::Null:
    os << "the data pointer is null but the buffer is not empty";
    break;
  case AbiMismatch::Offset:
    os << "the offset is " << actual << " elements, the function reads "
       << "buffers from their aligned pointer (offset 0)";
    break;
  case AbiMismatch::Relation:
    os << "dimension " << dimension << " has size " << actual
       << ", which the function's other buffers (" << expected
       << ") do not allow";
    break;
  case AbiMismatch::Value: {
    // What bounds it: the first bound of this parameter's values.
    std::string bound = std::to_string(expected);
    for (const AbiValueCheck &check : abi.valueChecks)
      if (check.kind == ValueCheckKind::LengthsWithin &&
          check.params[0] == argument) {
        const AbiSize &size = check.sizes[0];
        bound = size.isConstant()
                    ? bound + " (the function's static extent)"
                    : (Twine(expected) + ", " + describeParam(abi, size.param) +
                       " dimension " + Twine(size.dim))
                          .str();
        break;
      }
    os << "element " << dimension << " is " << actual << ", outside [0, "
       << bound << "]: the lengths it holds must fit the keys the function "
       << "attends over";
    break;
  }
  case AbiMismatch::Page: {
    // [sequence, entry] where the table's row width is compiled in.
    int64_t entries = param.getRank() == 2 ? param.shape[1] : 0;
    os << "element ";
    if (ShapedType::isDynamic(entries) || entries <= 0)
      os << dimension << " (row-major)";
    else
      os << "[" << dimension / entries << ", " << dimension % entries << "]";
    os << " is " << actual << ", a page the function reads keys from or "
       << "writes rows into, outside the cache's " << expected << " pages [0, "
       << expected << ")";
    break;
  }
  case AbiMismatch::Position:
    os << "element " << dimension << " is " << actual
       << ": the rows appended from there must fit the sequence's row of "
          "the block table, so it must lie in [0, "
       << expected << "]";
    break;
  case AbiMismatch::SharedPage:
    os << "sequences " << expected << " and " << dimension
       << " both append rows into page " << actual
       << ": sequences must not share the pages they write";
    break;
  }
  return text;
}

//===----------------------------------------------------------------------===//
// C header
//===----------------------------------------------------------------------===//

static std::string getDescriptorName(const AbiParam &param) {
  return llvm::formatv("attn_memref_{0}_{1}d",
                       stringifyAbiElement(param.element), param.getRank())
      .str();
}

static std::string getParamName(const FunctionAbi &abi, unsigned i) {
  return i < abi.numInputs ? "in" + std::to_string(i)
                           : "out" + std::to_string(i - abi.numInputs);
}

/// `tensor<1x?x8xf32>`-style spelling of a parameter, for comments.
static std::string describe(const AbiParam &param) {
  if (!param.isBuffer)
    return stringifyAbiElement(param.element).str();
  return formatTensorType(param.shape, param.element);
}

static void emitDescriptor(const AbiParam &param, llvm::raw_ostream &os) {
  std::string name = getDescriptorName(param);
  std::string macro = StringRef(name).upper();
  StringRef element = getCElementType(param.element);
  os << "#ifndef " << macro << "\n#define " << macro << "\n"
     << "typedef struct " << name << " {\n"
     << "  " << element << " *allocated;\n"
     << "  " << element << " *aligned;\n"
     << "  int64_t offset;\n";
  if (param.getRank() > 0)
    os << "  int64_t sizes[" << param.getRank() << "];\n"
       << "  int64_t strides[" << param.getRank() << "];\n";
  os << "} " << name << ";\n#endif\n\n";
}

static void emitFunction(const FunctionAbi &abi, llvm::raw_ostream &os,
                         bool checked) {
  StringRef status = checked ? "int32_t" : "void";
  // What each parameter is.
  os << "/* " << abi.name << "\n";
  for (auto [i, param] : llvm::enumerate(abi.params))
    os << " *   " << getParamName(abi, i) << ": " << describe(param)
       << (param.isOutput ? "  (written by the call)" : "")
       << (param.isDestination ? "  (a destination: written by the call, "
                                 "overlapping no other buffer)"
                               : "")
       << (param.rowStrided ? "  (any strides and offset; the last stride 1)"
                            : "")
       << "\n";
  os << " */\n";

  // The exported descriptor entry point.
  os << status << " " << abi.getCInterfaceSymbol() << "(";
  for (auto [i, param] : llvm::enumerate(abi.params)) {
    os << (i ? ", " : "");
    if (param.isBuffer)
      os << getDescriptorName(param) << " *";
    else
      os << getCElementType(param.element) << " ";
    os << getParamName(abi, i);
  }
  os << ");\n\n";

  // The plain-pointer wrapper: contiguous row-major buffers; dimensions are
  // passed only for buffers whose type has dynamic ones.
  os << "/* " << abi.name
     << " on contiguous row-major buffers; `<name>_sizes` (all dimensions)\n"
        " * is taken only for buffers whose type has dynamic dimensions. */\n";
  os << "static inline " << status << " attn_" << abi.name << "(";
  for (auto [i, param] : llvm::enumerate(abi.params)) {
    std::string name = getParamName(abi, i);
    os << (i ? ", " : "");
    if (!param.isBuffer) {
      os << getCElementType(param.element) << " " << name;
      continue;
    }
    os << (param.isOutput || param.isDestination ? "" : "const ")
       << getCElementType(param.element) << " *" << name;
    if (!param.hasStaticShape())
      os << ", const int64_t *" << name << "_sizes";
  }
  os << ") {\n";
  for (auto [i, param] : llvm::enumerate(abi.params)) {
    if (!param.isBuffer)
      continue;
    std::string name = getParamName(abi, i);
    StringRef element = getCElementType(param.element);
    os << "  " << getDescriptorName(param) << " d_" << name << " = {("
       << element << " *)" << name << ", (" << element << " *)" << name
       << ", 0";
    if (param.getRank() > 0) {
      os << ", {";
      for (auto [d, size] : llvm::enumerate(param.shape)) {
        os << (d ? ", " : "");
        if (ShapedType::isDynamic(size))
          os << name << "_sizes[" << d << "]";
        else
          os << size;
      }
      os << "}, {0}";
    }
    os << "};\n";
    if (param.getRank() > 0)
      os << "  attn_set_contiguous_strides(" << param.getRank() << ", d_"
         << name << ".sizes, d_" << name << ".strides);\n";
  }
  os << "  " << (checked ? "return " : "") << abi.getCInterfaceSymbol() << "(";
  for (auto [i, param] : llvm::enumerate(abi.params))
    os << (i ? ", " : "") << (param.isBuffer ? "&d_" : "")
       << getParamName(abi, i);
  os << ");\n}\n\n";
}

void attn::emitCHeader(ArrayRef<FunctionAbi> abis, StringRef guard,
                       StringRef source, llvm::raw_ostream &os,
                       bool deviceBuffers) {
  os << "/* Generated by attnc from " << source << ". Do not edit.\n"
     << " *\n"
     << " * The C ABI of attn-mlir (docs/CpuABI.md): tensors are passed as\n"
     << " * pointers to memref descriptors, results are written to\n"
     << " * caller-allocated buffers appended after the inputs, f16 and bf16\n"
     << " * elements travel as their 16-bit patterns, i1 as one byte.";
  if (deviceBuffers)
    os << "\n *\n"
       << " * Compiled for CUDA (docs/CUDA.md): every buffer is device memory\n"
       << " * (16-byte aligned), the kernels run on libattn_cuda_runtime's\n"
       << " * current stream, and a call returns once they are done.";
  os << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "#ifndef ATTN_SET_CONTIGUOUS_STRIDES\n"
     << "#define ATTN_SET_CONTIGUOUS_STRIDES\n"
     << "/* Row-major strides (in elements) of a dense buffer. */\n"
     << "static inline void attn_set_contiguous_strides(int rank,\n"
     << "                                               const int64_t *sizes,\n"
     << "                                               int64_t *strides) {\n"
     << "  int64_t stride = 1;\n"
     << "  for (int i = rank - 1; i >= 0; --i) {\n"
     << "    strides[i] = stride;\n"
     << "    stride *= sizes[i];\n"
     << "  }\n"
     << "}\n#endif\n\n";
  if (!deviceBuffers)
    os << "#ifndef ATTN_SET_ALLOCATOR\n"
       << "#define ATTN_SET_ALLOCATOR\n"
       << "/* Replaces the allocator of the library's temporaries (malloc and\n"
       << " * free until called; null functions restore them). Call it before\n"
       << " * any call of the library's functions is in flight. Every library\n"
       << " * attnc makes has its own: with several in one program, take each\n"
       << " * one's with dlsym (docs/CpuABI.md). */\n"
       << "void attn_set_allocator(void *(*alloc)(uint64_t size),\n"
       << "                        void (*release)(void *pointer));\n"
       << "#endif\n\n"
       << "#ifndef ATTN_SET_PARALLEL_FOR\n"
       << "#define ATTN_SET_PARALLEL_FOR\n"
       << "/* Runs the library's parallel loops on the caller's thread pool:\n"
       << " * parallel_for must run body(ctx, begin, end) over [0, trips) on\n"
       << " * any threads and return 0, or return nonzero having run none "
          "(the\n"
       << " * library then uses its own OpenMP runtime, as it does until this\n"
       << " * is called or after it is called with null). Call it before any\n"
       << " * call of the library's functions is in flight. Weak: null in a\n"
       << " * library without parallel loops (docs/CpuABI.md). */\n"
       << "__attribute__((weak)) void attn_set_parallel_for(\n"
       << "    int (*parallel_for)(void (*body)(void *ctx, int64_t begin,\n"
       << "                                     int64_t end),\n"
       << "                        void *ctx, int64_t trips));\n"
       << "#endif\n\n";

  llvm::StringSet<> emitted;
  for (const FunctionAbi &abi : abis)
    for (const AbiParam &param : abi.params)
      if (param.isBuffer && emitted.insert(getDescriptorName(param)).second)
        emitDescriptor(param, os);
  if (!deviceBuffers)
    os << "#ifndef ATTN_ABI_ERROR\n"
       << "#define ATTN_ABI_ERROR\n"
       << "/* Why the last call of the library that returned 1 refused its\n"
       << " * buffers: returns 1 and fills info (if not null) with (argument,\n"
       << " * dimension, kind, expected, actual), kind 0 a size, 1 a stride\n"
       << " * (in elements), 2 a null data pointer, 3 an offset other than 0,\n"
       << " * 4 a size that breaks a relation with another buffer's (equal,\n"
       << " * a multiple, a divisor; expected: that size); 0 when no call\n"
       << " * was refused\n"
       << " * since the last query (docs/CpuABI.md). */\n"
       << "int " << kAbiErrorFunction << "(int64_t info[5]);\n"
       << "#endif\n\n";
  for (const FunctionAbi &abi : abis)
    emitFunction(abi, os, /*checked=*/!deviceBuffers);

  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
}
