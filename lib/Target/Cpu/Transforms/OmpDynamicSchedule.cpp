//===- OmpDynamicSchedule.cpp - dynamic schedule for omp.wsloop -----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNOMPDYNAMICSCHEDULE
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// The OpenMP runtime's team size, declared once in the symbol table that
/// holds `from`: an LLVM function, called by its C name (a func.func would
/// get the pipeline's C-interface wrapper).
LLVM::LLVMFuncOp getNumThreadsDecl(Operation *from) {
  constexpr StringLiteral kName = "omp_get_num_threads";
  Operation *table = SymbolTable::getNearestSymbolTable(from);
  if (auto existing = SymbolTable::lookupSymbolIn(table, kName))
    return cast<LLVM::LLVMFuncOp>(existing);
  OpBuilder b = OpBuilder::atBlockBegin(&table->getRegion(0).front());
  return LLVM::LLVMFuncOp::create(
      b, from->getLoc(), kName,
      LLVM::LLVMFunctionType::get(b.getI32Type(), {}));
}

/// The chunk that gives each thread of the team about `chunksPerThread`
/// chunks of `loop`'s iterations, and at least one iteration per chunk:
/// max(1, trips / (threads * chunksPerThread)), in the loop's induction
/// variable type, computed before `loop`.
Value buildChunk(omp::WsloopOp loop, omp::LoopNestOp nest,
                 unsigned chunksPerThread) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Type type = nest.getIVs().front().getType();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
  };
  Value trips = constant(1);
  for (auto [lb, ub, step] :
       llvm::zip(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(),
                 nest.getLoopSteps())) {
    // convert-scf-to-openmp's loops count up with positive steps.
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value count = arith::CeilDivUIOp::create(b, loc, span, step);
    trips = arith::MulIOp::create(b, loc, trips, count);
  }
  Value threads =
      LLVM::CallOp::create(b, loc, getNumThreadsDecl(loop), ValueRange())
          .getResult();
  if (isa<IndexType>(type))
    threads = arith::IndexCastUIOp::create(b, loc, type, threads);
  else
    threads = arith::ExtUIOp::create(b, loc, type, threads);
  Value chunks =
      arith::MulIOp::create(b, loc, threads, constant(chunksPerThread));
  Value chunk = arith::DivUIOp::create(b, loc, trips, chunks);
  return arith::MaxUIOp::create(b, loc, chunk, constant(1));
}

struct AttnOmpDynamicSchedulePass
    : attn::impl::AttnOmpDynamicScheduleBase<AttnOmpDynamicSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](omp::WsloopOp loop) {
      // A schedule someone chose is kept.
      if (loop.getScheduleKind())
        return;
      loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
      auto nest = dyn_cast<omp::LoopNestOp>(loop.getWrappedLoop());
      if (chunksPerThread == 0 || !nest)
        return;
      loop.getScheduleChunkMutable().assign(
          buildChunk(loop, nest, chunksPerThread));
    });
  }
};

} // namespace
