//===- ParallelLoopsToRuntime.cpp - parallel loops through a host's pool --===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Outlines each outermost scf.parallel into a body function of an iteration
// range and calls it through __attn_parallel_for, which a host program may
// route to its own thread pool (attn_set_parallel_for) and which otherwise
// runs the iterations on OpenMP. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/ParallelLoopsToRuntime/ParallelLoopsToRuntime.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPARALLELLOOPSTORUNTIME
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kDispatchFunction = "__attn_parallel_for";
constexpr StringLiteral kHookGlobal = "__attn_parallel_for_hook";

/// The hook, its setter and the dispatcher every outlined loop calls. The
/// dispatcher's fallback is an scf.parallel of one body call per
/// iteration: the pipeline's OpenMP lowering (and its dynamic schedule)
/// then treats it as it treated the loops themselves.
constexpr StringLiteral kDefinitions = R"mlir(
llvm.mlir.global internal @__attn_parallel_for_hook() : !llvm.ptr {
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}
llvm.func @attn_set_parallel_for(%hook: !llvm.ptr) {
  %a = llvm.mlir.addressof @__attn_parallel_for_hook : !llvm.ptr
  llvm.store %hook, %a : !llvm.ptr, !llvm.ptr
  llvm.return
}
func.func private @__attn_parallel_for(%body: (!llvm.ptr, i64, i64) -> (),
                                       %ctx: !llvm.ptr, %trips: i64)
    attributes {llvm.linkage = #llvm.linkage<internal>} {
  %a = llvm.mlir.addressof @__attn_parallel_for_hook : !llvm.ptr
  %hook = llvm.load %a : !llvm.ptr -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %set = llvm.icmp "ne" %hook, %null : !llvm.ptr
  %declined = scf.if %set -> (i1) {
    %fn = builtin.unrealized_conversion_cast %body
        : (!llvm.ptr, i64, i64) -> () to !llvm.ptr
    %status = llvm.call %hook(%fn, %ctx, %trips)
        : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64) -> i32
    %zero = arith.constant 0 : i32
    %refused = arith.cmpi ne, %status, %zero : i32
    scf.yield %refused : i1
  } else {
    %true = arith.constant true
    scf.yield %true : i1
  }
  scf.if %declined {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i64
    %n = arith.index_cast %trips : i64 to index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %begin = arith.index_cast %i : index to i64
      %end = arith.addi %begin, %one : i64
      func.call_indirect %body(%ctx, %begin, %end)
          : (!llvm.ptr, i64, i64) -> ()
      scf.reduce
    }
  }
  return
}
)mlir";

/// The type of an outlined body: (ctx, begin, end).
FunctionType getBodyType(MLIRContext *ctx) {
  Type i64 = IntegerType::get(ctx, 64);
  return FunctionType::get(ctx, {LLVM::LLVMPointerType::get(ctx), i64, i64},
                           {});
}

/// Moves the definitions of kDefinitions into `module` unless they are
/// there already (the pass ran before).
LogicalResult defineDispatcher(ModuleOp module) {
  if (module.lookupSymbol(kDispatchFunction))
    return success();
  for (StringRef name : {kHookGlobal, kSetParallelForFunction})
    if (module.lookupSymbol(name))
      return module.emitError("attn-parallel-loops-to-runtime: the symbol ")
             << name << " is taken";
  OwningOpRef<ModuleOp> definitions = parseSourceString<ModuleOp>(
      kDefinitions, ParserConfig(module.getContext()));
  if (!definitions)
    return module.emitError("attn-parallel-loops-to-runtime: the dispatcher "
                            "definitions do not parse");
  Block *body = module.getBody();
  for (Operation &op :
       llvm::make_early_inc_range(definitions->getBody()->getOperations()))
    op.moveBefore(body, body->end());
  return success();
}

/// How one value crosses from the loop's function into its body: stored in
/// the context record as an LLVM value (`field`) and rebuilt from it.
struct Capture {
  Value value;
  Type field;
};

/// The record of what an outlined body reads from its caller: the values
/// it needs, as LLVM types, in one struct.
class ContextRecord {
public:
  explicit ContextRecord(MLIRContext *ctx) : converter(ctx) {}

  /// Adds `value` (once); fails on a type with no LLVM form.
  LogicalResult add(Value value, Location loc) {
    if (index.count(value))
      return success();
    Type type = value.getType();
    Type field = isa<IndexType>(type) ? IntegerType::get(type.getContext(), 64)
                                      : converter.convertType(type);
    if (!field || !LLVM::isCompatibleType(field))
      return emitError(loc, "attn-parallel-loops-to-runtime: a parallel "
                            "loop uses a value of type ")
             << type << " from outside, which has no LLVM form to pass it in";
    index[value] = captures.size();
    captures.push_back({value, field});
    return success();
  }

  bool empty() const { return captures.empty(); }

  LLVM::LLVMStructType getType(MLIRContext *ctx) const {
    SmallVector<Type> fields = llvm::map_to_vector(
        captures, [](const Capture &capture) { return capture.field; });
    return LLVM::LLVMStructType::getLiteral(ctx, fields);
  }

  /// Stores every value into a record at `record` (caller side).
  void pack(OpBuilder &b, Location loc, Value record) const {
    MLIRContext *ctx = b.getContext();
    Value packed = LLVM::UndefOp::create(b, loc, getType(ctx));
    for (auto [i, capture] : llvm::enumerate(captures)) {
      Value field = toField(b, loc, capture);
      packed = LLVM::InsertValueOp::create(b, loc, packed, field, i);
    }
    LLVM::StoreOp::create(b, loc, packed, record);
  }

  /// Loads the record at `record` and maps each value to its copy (body
  /// side).
  void unpack(OpBuilder &b, Location loc, Value record,
              IRMapping &mapping) const {
    Value packed =
        LLVM::LoadOp::create(b, loc, getType(b.getContext()), record);
    for (auto [i, capture] : llvm::enumerate(captures)) {
      Value field = LLVM::ExtractValueOp::create(b, loc, packed, i);
      mapping.map(capture.value, fromField(b, loc, capture, field));
    }
  }

private:
  static Value toField(OpBuilder &b, Location loc, const Capture &capture) {
    Type type = capture.value.getType();
    if (type == capture.field)
      return capture.value;
    if (isa<IndexType>(type))
      return arith::IndexCastOp::create(b, loc, capture.field, capture.value);
    // A memref as its descriptor: the memref lowering's casts and this
    // one cancel out (reconcile-unrealized-casts).
    return UnrealizedConversionCastOp::create(b, loc, capture.field,
                                              capture.value)
        .getResult(0);
  }

  static Value fromField(OpBuilder &b, Location loc, const Capture &capture,
                         Value field) {
    Type type = capture.value.getType();
    if (type == capture.field)
      return field;
    if (isa<IndexType>(type))
      return arith::IndexCastOp::create(b, loc, type, field);
    return UnrealizedConversionCastOp::create(b, loc, type, field).getResult(0);
  }

  LLVMTypeConverter converter;
  SmallVector<Capture> captures;
  llvm::DenseMap<Value, unsigned> index;
};

/// Whether `value` is re-created in the body rather than passed: a
/// constant costs nothing to rebuild and keeps the body's arithmetic
/// foldable (constant tile offsets, strides and bounds).
bool isRematerialized(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>() &&
         def->getNumOperands() == 0 && def->getNumRegions() == 0;
}

/// The loop's trip count along each dimension: ceil((ub - lb) / step),
/// none when ub <= lb.
SmallVector<Value> buildTripCounts(OpBuilder &b, scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> trips;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value count = b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
    trips.push_back(b.createOrFold<arith::MaxSIOp>(loc, count, zero));
  }
  return trips;
}

/// Builds the iterations [begin, end) of `loop` into the body function's
/// entry block: the loop's indices from i (row-major over `trips`), one
/// iteration between a save and a restore of the stack pointer (what
/// memref.alloca_scope lowers to; the scope itself would give the scf.for
/// body several blocks when lowered), and parallel loops inside made
/// sequential: the pool gives each iteration one thread, and a second team
/// would oversubscribe its cores.
LogicalResult buildIterations(scf::ParallelOp loop, ArrayRef<Value> trips,
                              func::FuncOp body, IRMapping &mapping,
                              IRRewriter &rewriter) {
  Location loc = loop.getLoc();
  Block &entry = body.front();
  OpBuilder b = OpBuilder::atBlockEnd(&entry);
  Type indexType = b.getIndexType();
  Value begin =
      arith::IndexCastOp::create(b, loc, indexType, entry.getArgument(1));
  Value end =
      arith::IndexCastOp::create(b, loc, indexType, entry.getArgument(2));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto iterations = scf::ForOp::create(b, loc, begin, end, one);
  func::ReturnOp::create(b, loc);

  OpBuilder ib = OpBuilder::atBlockBegin(iterations.getBody());
  unsigned rank = loop.getNumLoops();
  SmallVector<Value> ivs(rank);
  Value rest = iterations.getInductionVar();
  for (int d = rank - 1; d >= 0; --d) {
    Value count = mapping.lookup(trips[d]);
    Value position =
        d == 0 ? rest : ib.createOrFold<arith::RemUIOp>(loc, rest, count);
    if (d > 0)
      rest = ib.createOrFold<arith::DivUIOp>(loc, rest, count);
    Value offset = ib.createOrFold<arith::MulIOp>(
        loc, position, mapping.lookup(loop.getStep()[d]));
    ivs[d] = ib.createOrFold<arith::AddIOp>(
        loc, mapping.lookup(loop.getLowerBound()[d]), offset);
  }
  for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
    mapping.map(iv, value);
  Value stack = LLVM::StackSaveOp::create(
      ib, loc, LLVM::LLVMPointerType::get(b.getContext()));
  for (Operation &op : loop.getBody()->without_terminator())
    ib.clone(op, mapping);
  LLVM::StackRestoreOp::create(ib, loc, stack);

  SmallVector<scf::ParallelOp> inner;
  iterations.getBody()->walk([&](scf::ParallelOp op) {
    if (op.getNumResults() == 0)
      inner.push_back(op);
  });
  for (scf::ParallelOp op : llvm::reverse(inner))
    if (failed(scf::parallelForToNestedFors(rewriter, op)))
      return op.emitOpError("attn-parallel-loops-to-runtime: a nested "
                            "parallel loop could not be made sequential");
  return success();
}

/// The body function of `loop`: func.func private @<function>_parallel_<n>
/// (ctx, begin, end), the record's values unpacked and constants re-created
/// at its entry, then the iterations.
FailureOr<func::FuncOp> buildBody(scf::ParallelOp loop,
                                  FunctionOpInterface function,
                                  unsigned ordinal, ArrayRef<Value> needed,
                                  ArrayRef<Value> trips,
                                  const ContextRecord &record,
                                  SymbolTable &symbols, IRRewriter &rewriter) {
  MLIRContext *ctx = loop.getContext();
  Location loc = loop.getLoc();
  OpBuilder moduleBuilder(function);
  auto body = func::FuncOp::create(
      moduleBuilder, loc,
      (function.getName() + "_parallel_" + Twine(ordinal)).str(),
      getBodyType(ctx));
  body.setPrivate();
  body->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  symbols.insert(body);
  // The record is the body's alone while it runs: nothing it writes
  // aliases it, so its fields stay in registers across the body's stores.
  body.setArgAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                  UnitAttr::get(ctx));
  Block *entry = body.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  IRMapping mapping;
  for (Value value : needed)
    if (isRematerialized(value) && !mapping.contains(value))
      mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));
  if (!record.empty())
    record.unpack(b, loc, entry->getArgument(0), mapping);
  if (failed(buildIterations(loop, trips, body, mapping, rewriter)))
    return failure();
  return body;
}

/// Replaces `loop` by the dispatcher's call of `body` over all its
/// iterations, with the record on the function's stack (allocated once, at
/// its entry, so a loop inside another loop does not grow the stack).
void replaceByCall(scf::ParallelOp loop, FunctionOpInterface function,
                   ArrayRef<Value> trips, const ContextRecord &record,
                   func::FuncOp body) {
  MLIRContext *ctx = loop.getContext();
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Value recordPointer;
  if (record.empty()) {
    recordPointer = LLVM::ZeroOp::create(b, loc, ptrType);
  } else {
    OpBuilder eb = OpBuilder::atBlockBegin(&function.getFunctionBody().front());
    Value count = LLVM::ConstantOp::create(eb, loc, eb.getI64Type(),
                                           eb.getI64IntegerAttr(1));
    recordPointer =
        LLVM::AllocaOp::create(eb, loc, ptrType, record.getType(ctx), count);
    record.pack(b, loc, recordPointer);
  }
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value count : trips)
    total = b.createOrFold<arith::MulIOp>(loc, total, count);
  Value total64 =
      b.createOrFold<arith::IndexCastOp>(loc, b.getI64Type(), total);
  Value bodyRef = func::ConstantOp::create(b, loc, getBodyType(ctx),
                                           SymbolRefAttr::get(body));
  func::CallOp::create(b, loc, kDispatchFunction, TypeRange{},
                       ValueRange{bodyRef, recordPointer, total64});
  loop.erase();
}

/// Outlines `loop` (an outermost scf.parallel without results) into a body
/// function and replaces it by a call of the dispatcher.
LogicalResult outline(scf::ParallelOp loop, unsigned ordinal,
                      SymbolTable &symbols, IRRewriter &rewriter) {
  auto function = loop->getParentOfType<FunctionOpInterface>();
  if (!function)
    return loop.emitOpError("attn-parallel-loops-to-runtime: a parallel loop "
                            "outside a function");
  OpBuilder b(loop);
  SmallVector<Value> trips = buildTripCounts(b, loop);

  // What the body needs from outside: the values its region uses, and the
  // loop's lower bounds, steps and trip counts to recover its indices.
  SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  SmallVector<Value> needed(used.begin(), used.end());
  llvm::append_range(needed, loop.getLowerBound());
  llvm::append_range(needed, loop.getStep());
  llvm::append_range(needed, trips);
  ContextRecord record(loop.getContext());
  for (Value value : needed)
    if (!isRematerialized(value) && failed(record.add(value, loop.getLoc())))
      return failure();

  FailureOr<func::FuncOp> body = buildBody(loop, function, ordinal, needed,
                                           trips, record, symbols, rewriter);
  if (failed(body))
    return failure();
  replaceByCall(loop, function, trips, record, *body);
  return success();
}

struct AttnParallelLoopsToRuntimePass
    : attn::impl::AttnParallelLoopsToRuntimeBase<
          AttnParallelLoopsToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      auto function = loop->getParentOfType<FunctionOpInterface>();
      if (loop.getNumResults() == 0 &&
          !loop->getParentOfType<scf::ParallelOp>() &&
          !(function && function.getName() == kDispatchFunction))
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    // Defined first: each call names the dispatcher.
    if (failed(defineDispatcher(module)))
      return signalPassFailure();
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    llvm::DenseMap<Operation *, unsigned> ordinals;
    for (scf::ParallelOp loop : loops) {
      Operation *function = loop->getParentOfType<FunctionOpInterface>();
      if (failed(outline(loop, ordinals[function]++, symbols, rewriter)))
        return signalPassFailure();
    }
  }
};

} // namespace
