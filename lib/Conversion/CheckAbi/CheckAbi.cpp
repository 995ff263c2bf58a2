//===- CheckAbi.cpp - entry points check the buffers they are given -------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// A compiled function reads the sizes and strides of its buffers from its
// type: a caller passing a buffer of other sizes (a C program with a
// wrong length, a header from another compile) gets memory read or
// written out of bounds. attn-check-abi makes each public function take its
// buffers as fully dynamic memrefs, compare what it is given with what it
// was compiled for, and only then view them as their compiled types and run; a
// mismatch is recorded for `attn_abi_error` and the function returns. What
// it was compiled for includes sizes of several buffers that must agree,
// which only the ops on tensors tell: attn-record-abi-sizes writes them down
// before the lowering. See the pass descriptions in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/CheckAbi/CheckAbi.h"

#include "ValueChecker.h"

#include "attn/Target/Cpu/CpuABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCHECKABI
#define GEN_PASS_DEF_ATTNRECORDABISIZES
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kRecordFunction = "__attn_abi_mismatch";

/// The record and its two functions, in the LLVM dialect: internal but for
/// the query, so that each library has its own.
constexpr StringLiteral kDefinitions = R"mlir(
llvm.mlir.global internal @__attn_abi_info(dense<0> : tensor<6xi64>) : !llvm.array<6 x i64>
llvm.func internal @__attn_abi_mismatch(%argument: i64, %dimension: i64, %kind: i64,
                                         %expected: i64, %actual: i64) {
  %info = llvm.mlir.addressof @__attn_abi_info : !llvm.ptr
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.store %one, %info : i64, !llvm.ptr
  %values = llvm.getelementptr %info[1] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %argument, %values : i64, !llvm.ptr
  %p1 = llvm.getelementptr %info[2] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %dimension, %p1 : i64, !llvm.ptr
  %p2 = llvm.getelementptr %info[3] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %kind, %p2 : i64, !llvm.ptr
  %p3 = llvm.getelementptr %info[4] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %expected, %p3 : i64, !llvm.ptr
  %p4 = llvm.getelementptr %info[5] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %actual, %p4 : i64, !llvm.ptr
  llvm.return
}
llvm.func @attn_abi_error(%out: !llvm.ptr) -> i32 {
  %info = llvm.mlir.addressof @__attn_abi_info : !llvm.ptr
  %flag = llvm.load %info : !llvm.ptr -> i64
  %zero = llvm.mlir.constant(0 : i64) : i64
  %none = llvm.icmp "eq" %flag, %zero : i64
  llvm.cond_br %none, ^clear, ^report
^report:
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c5 = llvm.mlir.constant(5 : i64) : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %nowhere = llvm.icmp "eq" %out, %null : !llvm.ptr
  %count = llvm.select %nowhere, %zero, %c5 : i1, i64
  llvm.br ^copy(%zero : i64)
^copy(%i: i64):
  %more = llvm.icmp "slt" %i, %count : i64
  llvm.cond_br %more, ^step, ^done
^step:
  %j = llvm.add %i, %c1 : i64
  %from = llvm.getelementptr %info[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %value = llvm.load %from : !llvm.ptr -> i64
  %to = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %value, %to : i64, !llvm.ptr
  llvm.br ^copy(%j : i64)
^done:
  llvm.store %zero, %info : i64, !llvm.ptr
  %yes = llvm.mlir.constant(1 : i32) : i32
  llvm.return %yes : i32
^clear:
  %no = llvm.mlir.constant(0 : i32) : i32
  llvm.return %no : i32
}
)mlir";

/// The fully dynamic strided memref of `type`'s rank and element type.
MemRefType getDynamicType(MemRefType type) {
  SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, dynamic);
  return MemRefType::get(dynamic, type.getElementType(), layout,
                         type.getMemorySpace());
}

/// Whether `type` is what the out-parameter ABI passes, which a dynamic
/// memref can be cast back to: a memref with the identity layout (dense
/// row-major) or a strided one (an input given as a view,
/// AbiParam::rowStrided).
bool isAbiBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    isa<StridedLayoutAttr>(memref.getLayout()));
}

/// Whether `dim` is a dimension of `fn`'s buffer argument `param`.
bool isBufferDimension(func::FuncOp fn, int64_t param, int64_t dim) {
  if (param < 0 || param >= static_cast<int64_t>(fn.getNumArguments()))
    return false;
  Type type = fn.getArgumentTypes()[param];
  return isAbiBuffer(type) && dim >= 0 &&
         dim < cast<MemRefType>(type).getRank();
}

/// The fields of one recorded relation: (param, dimension, other param,
/// other dimension, kind).
constexpr size_t kRelationFields = 5;

/// Whether `fn`'s recorded relations name dimensions of its buffer
/// arguments and a kind (the attribute may come from a hand-written
/// module).
LogicalResult verifySizeRelations(func::FuncOp fn) {
  Attribute attr = fn->getAttr(kSizeRelationsAttr);
  if (!attr)
    return success();
  auto relations = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!relations || relations.size() % kRelationFields != 0)
    return fn.emitOpError("attn-check-abi: ")
           << kSizeRelationsAttr
           << " must be an i64 array of (param, dimension, other param, other "
              "dimension, kind) tuples, got "
           << attr;
  ArrayRef<int64_t> flat = relations.asArrayRef();
  for (size_t i = 0; i < flat.size(); i += kRelationFields)
    if (!isBufferDimension(fn, flat[i], flat[i + 1]) ||
        (flat[i + 2] >= 0 ? !isBufferDimension(fn, flat[i + 2], flat[i + 3])
                          : flat[i + 2] != -1 || flat[i + 3] < 0) ||
        flat[i + 4] < static_cast<int64_t>(AbiSizeRelationKind::Equal) ||
        flat[i + 4] > static_cast<int64_t>(AbiSizeRelationKind::Divides))
      return fn.emitOpError("attn-check-abi: ")
             << kSizeRelationsAttr << " entry " << i / kRelationFields << " ("
             << flat[i] << ", " << flat[i + 1] << ", " << flat[i + 2] << ", "
             << flat[i + 3] << ", " << flat[i + 4]
             << ") is not two buffer dimensions, or one and a size, and a "
                "kind (0 equal, 1 a multiple, 2 a divisor)";
  return success();
}

/// The value checks recorded on `fn` (kValueChecksAttr), or a diagnostic
/// where an entry is not a kind with its integer buffers (a 1-D one for
/// lengths and positions, a 2-D one for a block table) and its sizes
/// (buffer dimensions, or -1 and a non-negative constant): the attribute
/// may come from a hand-written module.
FailureOr<SmallVector<AbiValueCheck>> getValueChecks(func::FuncOp fn) {
  SmallVector<AbiValueCheck> result;
  Attribute attr = fn->getAttr(kValueChecksAttr);
  if (!attr)
    return result;
  auto entries = dyn_cast<ArrayAttr>(attr);
  if (!entries)
    return fn.emitOpError("attn-check-abi: ")
           << kValueChecksAttr << " must be an array of i64 arrays, got "
           << attr;
  auto isIntegers = [&](int64_t param, int64_t rank) {
    if (param < 0 || param >= static_cast<int64_t>(fn.getNumArguments()))
      return false;
    auto type = dyn_cast<MemRefType>(fn.getArgumentTypes()[param]);
    return type && isAbiBuffer(type) && type.getRank() == rank &&
           isa<IntegerType>(type.getElementType());
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    Attribute entry = entries[i];
    auto fields = dyn_cast<DenseI64ArrayAttr>(entry);
    auto invalid = [&]() {
      return fn.emitOpError("attn-check-abi: ")
             << kValueChecksAttr << " entry " << i << " (" << entry
             << ") is not a kind (0 lengths within a size, 1 pages of keys "
                "within a cache, 2 rows appended into pages) with its "
                "integer buffers (lengths; block table, lengths; block "
                "table, positions) and sizes (a buffer dimension, or -1 and "
                "a constant)";
    };
    if (!fields || fields.empty() || fields[0] < 0 ||
        fields[0] > static_cast<int64_t>(ValueCheckKind::PageWrites))
      return invalid();
    AbiValueCheck check{static_cast<ValueCheckKind>(fields[0]), {}, {}};
    auto [numParams, numSizes] = AbiValueCheck::getArity(check.kind);
    if (fields.size() != 1 + numParams + 2 * numSizes)
      return invalid();
    ArrayRef<int64_t> rest = fields.asArrayRef().drop_front();
    check.params.assign(rest.begin(), rest.begin() + numParams);
    for (unsigned s = 0; s < numSizes; ++s)
      check.sizes.push_back(
          {rest[numParams + 2 * s], rest[numParams + 2 * s + 1]});
    // Lengths and positions are 1-D; a block table, the first of two, 2-D.
    for (auto [p, param] : llvm::enumerate(check.params))
      if (!isIntegers(param, numParams == 2 && p == 0 ? 2 : 1))
        return invalid();
    for (const AbiSize &size : check.sizes)
      if (size.isConstant() ? size.param != -1 || size.dim < 0
                            : !isBufferDimension(fn, size.param, size.dim))
        return invalid();
    result.push_back(std::move(check));
  }
  return result;
}

/// Whether `size` breaks `kind` with `other` (a multiple of a positive
/// `other`, a positive divisor of it).
Value isBroken(OpBuilder &b, Location loc, AbiSizeRelationKind kind, Value size,
               Value other) {
  using arith::CmpIPredicate;
  auto cmp = [&](CmpIPredicate predicate, Value lhs, Value rhs) -> Value {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // `divisor` is divided into `dividend`, and must be positive.
  auto notDividing = [&](Value divisor, Value dividend) -> Value {
    Value rem = arith::RemSIOp::create(
        b, loc, dividend, arith::MaxSIOp::create(b, loc, divisor, one));
    return arith::OrIOp::create(b, loc, cmp(CmpIPredicate::sle, divisor, zero),
                                cmp(CmpIPredicate::ne, rem, zero));
  };
  switch (kind) {
  case AbiSizeRelationKind::Equal:
    return cmp(CmpIPredicate::ne, size, other);
  case AbiSizeRelationKind::MultipleOf:
    return notDividing(other, size);
  case AbiSizeRelationKind::Divides:
    return notDividing(size, other);
  }
  llvm_unreachable("not a relation of sizes");
}

/// Makes `fn` (one block, ending in a return of nothing) take its buffers
/// dynamically, check them, and run its body, inside an scf.if, only with
/// the buffers reinterpreted as their compiled types and when every check
/// passed; otherwise record the
/// mismatch. It returns the status. (One block with structured control
/// flow rather than a branch: later conversions of the body's OpenMP
/// regions expect their buffers defined in the entry block.)
void addChecks(func::FuncOp fn, ArrayRef<AbiValueCheck> valueChecks) {
  Location loc = fn.getLoc();
  MLIRContext *ctx = fn.getContext();
  Block *body = &fn.front();
  auto ret = cast<func::ReturnOp>(body->getTerminator());
  Operation *firstOp = &body->front();
  unsigned numArgs = body->getNumArguments();

  OpBuilder b = OpBuilder::atBlockBegin(body);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto i64 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  };
  Mismatch mismatch;
  mismatch.failed = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (int k = 0; k < 5; ++k)
    mismatch.info.push_back(arith::ConstantIntOp::create(b, loc, 0, 64));
  auto kindValue = [&](AbiMismatch kind) -> Value {
    return arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(kind), 64);
  };

  // The buffers and sizes each buffer argument is given, for the
  // relations.
  SmallVector<Value> givenBuffers(numArgs);
  SmallVector<ValueRange> givenSizes(numArgs);
  auto sizeOf = [&](int64_t position, int64_t dim) -> Value {
    return givenSizes[position][dim];
  };

  SmallVector<Type> argTypes;
  for (unsigned position = 0; position < numArgs; ++position) {
    BlockArgument arg = body->getArgument(position);
    Type type = arg.getType();
    if (!isAbiBuffer(type)) {
      argTypes.push_back(type);
      arg.replaceAllUsesWith(body->addArgument(type, arg.getLoc()));
      continue;
    }
    auto compiled = cast<MemRefType>(type);
    MemRefType dynamic = getDynamicType(compiled);
    argTypes.push_back(dynamic);
    Value given = body->addArgument(dynamic, arg.getLoc());
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, given);
    givenBuffers[position] = given;
    givenSizes[position] = metadata.getSizes();
    Value argument = arith::ConstantIntOp::create(b, loc, position, 64);
    int64_t rank = compiled.getRank();
    // Sizes the type fixes, then the strides: those of a dense row-major
    // buffer of the sizes given for the identity layout, those the type
    // fixes for a strided one (its dynamic strides and offset are the
    // caller's); any stride for a dimension of size 1 (it is never
    // stepped) and any strides for a buffer of no elements.
    SmallVector<int64_t> staticStrides;
    int64_t staticOffset;
    if (failed(compiled.getStridesAndOffset(staticStrides, staticOffset)))
      llvm_unreachable("identity and strided layouts have strides");
    bool dense = compiled.getLayout().isIdentity();
    Value elements = index(1);
    SmallVector<Value> expectedStrides(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (dense)
        expectedStrides[d] = elements;
      else if (!ShapedType::isDynamic(staticStrides[d]))
        expectedStrides[d] = index(staticStrides[d]);
      elements =
          arith::MulIOp::create(b, loc, elements, metadata.getSizes()[d]);
    }
    for (int64_t d = 0; d < rank; ++d) {
      Value size = metadata.getSizes()[d];
      Value dimension = arith::ConstantIntOp::create(b, loc, d, 64);
      if (!compiled.isDynamicDim(d)) {
        Value expected = index(compiled.getDimSize(d));
        Value differs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                              size, expected);
        mismatch.check(b, loc, differs,
                       {argument, dimension, kindValue(AbiMismatch::Size),
                        i64(expected), i64(size)});
      } else {
        Value negative = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, size, index(0));
        mismatch.check(b, loc, negative,
                       {argument, dimension, kindValue(AbiMismatch::Size),
                        i64(index(0)), i64(size)});
      }
    }
    // An empty buffer is never read: any strides (NumPy gives an empty
    // array strides of 0).
    Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           elements, index(0));
    for (int64_t d = 0; d < rank; ++d) {
      if (!expectedStrides[d])
        continue; // the caller's to choose
      Value stride = metadata.getStrides()[d];
      Value stepped = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                metadata.getSizes()[d], index(1)),
          nonEmpty);
      Value differs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            stride, expectedStrides[d]);
      mismatch.check(b, loc, arith::AndIOp::create(b, loc, stepped, differs),
                     {argument, arith::ConstantIntOp::create(b, loc, d, 64),
                      kindValue(AbiMismatch::Stride), i64(expectedStrides[d]),
                      i64(stride)});
    }
    // A dense type's offset is 0: a view into a larger buffer would be
    // read from its start. A strided type reads the caller's.
    Value none = arith::ConstantIntOp::create(b, loc, -1, 64);
    if (!ShapedType::isDynamic(staticOffset)) {
      Value expected = index(staticOffset);
      Value shifted = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            metadata.getOffset(), expected);
      mismatch.check(b, loc, shifted,
                     {argument, none, kindValue(AbiMismatch::Offset),
                      i64(expected), i64(metadata.getOffset())});
    }
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, given);
    Value null = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, pointer,
                              index(0)),
        nonEmpty);
    mismatch.check(b, loc, null,
                   {argument, none, kindValue(AbiMismatch::Null),
                    arith::ConstantIntOp::create(b, loc, 1, 64),
                    arith::ConstantIntOp::create(b, loc, 0, 64)});
    // The buffer as its compiled type: a reinterpret_cast with the checked
    // sizes and strides (a memref.cast would be folded into its users,
    // which would then read the dynamic buffer).
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < rank; ++d) {
      sizes.push_back(
          compiled.isDynamicDim(d)
              ? OpFoldResult(metadata.getSizes()[d])
              : OpFoldResult(b.getIndexAttr(compiled.getDimSize(d))));
      Value dynamicStride =
          dense ? expectedStrides[d] : metadata.getStrides()[d];
      strides.push_back(ShapedType::isDynamic(staticStrides[d])
                            ? OpFoldResult(dynamicStride)
                            : OpFoldResult(b.getIndexAttr(staticStrides[d])));
    }
    OpFoldResult offset = ShapedType::isDynamic(staticOffset)
                              ? OpFoldResult(metadata.getOffset())
                              : OpFoldResult(b.getIndexAttr(staticOffset));
    arg.replaceAllUsesWith(memref::ReinterpretCastOp::create(
        b, loc, compiled, given, offset, sizes, strides));
  }
  // Relations of sizes of two buffers, compared once each buffer passed
  // its own checks (a negative size never reaches a comparison that matters:
  // the first failure is the one recorded).
  if (auto relations =
          fn->getAttrOfType<DenseI64ArrayAttr>(kSizeRelationsAttr)) {
    ArrayRef<int64_t> flat = relations.asArrayRef();
    for (size_t i = 0; i < flat.size(); i += kRelationFields) {
      Value size = sizeOf(flat[i], flat[i + 1]);
      Value other = flat[i + 2] < 0 ? index(flat[i + 3])
                                    : sizeOf(flat[i + 2], flat[i + 3]);
      auto kind = static_cast<AbiSizeRelationKind>(flat[i + 4]);
      Value broken = isBroken(b, loc, kind, size, other);
      mismatch.check(b, loc, broken,
                     {arith::ConstantIntOp::create(b, loc, flat[i], 64),
                      arith::ConstantIntOp::create(b, loc, flat[i + 1], 64),
                      kindValue(AbiMismatch::Relation), i64(other), i64(size)});
    }
  }
  // Values last: they are read only from buffers that passed every other
  // check.
  ValueChecker checker(b, loc, mismatch);
  auto sizeValue = [&](const AbiSize &size) -> Value {
    return size.isConstant() ? index(size.dim) : sizeOf(size.param, size.dim);
  };
  auto argument = [&](int64_t position) -> Value {
    return arith::ConstantIntOp::create(b, loc, position, 64);
  };
  for (const AbiValueCheck &check : valueChecks) {
    int64_t first = check.params[0];
    switch (check.kind) {
    case ValueCheckKind::LengthsWithin:
      checker.checkElements(argument(first), givenBuffers[first],
                            sizeOf(first, 0),
                            arith::ConstantIntOp::create(b, loc, 0, 64),
                            i64(sizeValue(check.sizes[0])), AbiMismatch::Value);
      break;
    case ValueCheckKind::PagesWithin: {
      int64_t lengths = check.params[1];
      checker.checkPages(
          argument(first), givenBuffers[first],
          arith::MinSIOp::create(b, loc, sizeOf(first, 0), sizeOf(lengths, 0)),
          sizeOf(first, 1), givenBuffers[lengths], sizeValue(check.sizes[0]),
          sizeValue(check.sizes[1]));
      break;
    }
    case ValueCheckKind::PageWrites: {
      int64_t positions = check.params[1];
      checker.checkPageWrites(
          argument(first), argument(positions), givenBuffers[first],
          arith::MinSIOp::create(b, loc, sizeOf(first, 0),
                                 sizeOf(positions, 0)),
          sizeOf(first, 1), givenBuffers[positions], sizeValue(check.sizes[0]),
          sizeValue(check.sizes[1]), sizeValue(check.sizes[2]));
      break;
    }
    }
  }
  fn->removeAttr(kSizeRelationsAttr);
  fn->removeAttr(kValueChecksAttr);
  body->eraseArguments(0, numArgs);

  // The old body (from its first op to the return) runs in the `else`
  // region: when no check failed.
  auto guard = scf::IfOp::create(b, loc, mismatch.failed,
                                 /*withElseRegion=*/true);
  Block *run = &guard.getElseRegion().front();
  run->getOperations().splice(run->begin(), body->getOperations(),
                              firstOp->getIterator(), ret->getIterator());
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  LLVM::CallOp::create(b, loc, TypeRange{},
                       FlatSymbolRefAttr::get(ctx, kRecordFunction),
                       mismatch.info);
  b.setInsertionPoint(ret);
  Value status =
      arith::ExtUIOp::create(b, loc, b.getI32Type(), mismatch.failed);
  ret->setOperands(ValueRange{status});
  fn.setFunctionType(FunctionType::get(ctx, argTypes, {b.getI32Type()}));
}

struct AttnRecordAbiSizesPass
    : attn::impl::AttnRecordAbiSizesBase<AttnRecordAbiSizesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || !fn.isPublic())
        continue;
      SmallVector<int64_t> flat;
      for (const AbiSizeRelation &relation : getAbiSizeRelations(fn))
        flat.append({relation.param, relation.dimension, relation.otherParam,
                     relation.otherDimension,
                     static_cast<int64_t>(relation.kind)});
      if (flat.empty())
        fn->removeAttr(kSizeRelationsAttr);
      else
        fn->setAttr(kSizeRelationsAttr,
                    DenseI64ArrayAttr::get(&getContext(), flat));
      // (kind, its parameters, then (param, dimension) per size).
      SmallVector<Attribute> checks;
      for (const AbiValueCheck &check : getAbiValueChecks(fn)) {
        SmallVector<int64_t> fields = {static_cast<int64_t>(check.kind)};
        llvm::append_range(fields, check.params);
        for (const AbiSize &size : check.sizes)
          fields.append({size.param, size.dim});
        checks.push_back(DenseI64ArrayAttr::get(&getContext(), fields));
      }
      if (checks.empty())
        fn->removeAttr(kValueChecksAttr);
      else
        fn->setAttr(kValueChecksAttr, ArrayAttr::get(&getContext(), checks));
    }
  }
};

struct AttnCheckAbiPass : attn::impl::AttnCheckAbiBase<AttnCheckAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    for (StringRef name :
         {StringRef(kRecordFunction), StringRef(kAbiErrorFunction),
          StringRef("__attn_abi_info")})
      if (Operation *existing = module.lookupSymbol(name)) {
        existing->emitOpError("attn-check-abi: the symbol ")
            << name << " is taken";
        return signalPassFailure();
      }
    // Public functions with buffers and no results: the entry points.
    bool checked = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || !fn.isPublic() || fn.getNumResults() != 0 ||
          !llvm::any_of(fn.getArgumentTypes(), isAbiBuffer))
        continue;
      if (!fn.getBody().hasOneBlock()) {
        fn.emitOpError("attn-check-abi: expected one block (structured "
                       "control flow) in a public function's body");
        return signalPassFailure();
      }
      if (failed(verifySizeRelations(fn)))
        return signalPassFailure();
      FailureOr<SmallVector<AbiValueCheck>> valueChecks = getValueChecks(fn);
      if (failed(valueChecks))
        return signalPassFailure();
      addChecks(fn, *valueChecks);
      checked = true;
    }
    if (!checked)
      return;
    OwningOpRef<ModuleOp> definitions =
        parseSourceString<ModuleOp>(kDefinitions, ParserConfig(ctx));
    if (!definitions) {
      module.emitError("attn-check-abi: the record's definitions do not parse");
      return signalPassFailure();
    }
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    for (Operation &op :
         llvm::make_early_inc_range(definitions->getBody()->getOperations()))
      op.moveBefore(builder.getInsertionBlock(), builder.getInsertionPoint());
  }
};

} // namespace
