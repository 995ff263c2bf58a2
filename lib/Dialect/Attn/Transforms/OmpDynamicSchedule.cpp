//===- OmpDynamicSchedule.cpp - dynamic schedule for omp.wsloop -----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNOMPDYNAMICSCHEDULE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// Chunks per thread of a loop with enough iterations: a thread that falls
/// behind leaves at most about 1/16 of its share for the others to wait on,
/// and a loop asks the runtime for work at most 16 times per thread.
constexpr int64_t kChunksPerThread = 16;

constexpr StringLiteral kNumThreads = "omp_get_num_threads";

/// The declaration of OpenMP's omp_get_num_threads in `module`: an LLVM
/// function, which the pipeline's C wrappers (for func.func) leave alone.
LLVM::LLVMFuncOp getNumThreadsDecl(Operation *module) {
  if (auto decl = dyn_cast_or_null<LLVM::LLVMFuncOp>(
          SymbolTable::lookupSymbolIn(module, kNumThreads)))
    return decl;
  OpBuilder builder = OpBuilder::atBlockBegin(&module->getRegion(0).front());
  return LLVM::LLVMFuncOp::create(
      builder, module->getLoc(), kNumThreads,
      LLVM::LLVMFunctionType::get(builder.getI32Type(), {}));
}

/// max(1, iterations of `nest` / (threads * kChunksPerThread)), computed
/// before `loop` (in its parallel region, where omp_get_num_threads is the
/// team's size).
Value buildChunk(omp::WsloopOp loop, omp::LoopNestOp nest,
                 LLVM::LLVMFuncOp numThreads) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  Type type = nest.getIVs().front().getType();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(builder, loc, type,
                                     builder.getIntegerAttr(type, value));
  };
  Value iterations;
  for (auto [lower, upper, step] :
       llvm::zip(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(),
                 nest.getLoopSteps())) {
    Value extent = builder.createOrFold<arith::SubIOp>(loc, upper, lower);
    Value trips = builder.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
    iterations =
        iterations ? builder.createOrFold<arith::MulIOp>(loc, iterations, trips)
                   : trips;
  }
  Value threads =
      LLVM::CallOp::create(builder, loc, numThreads, ValueRange{}).getResult();
  threads =
      type.isIndex()
          ? arith::IndexCastOp::create(builder, loc, type, threads).getResult()
          : builder.createOrFold<arith::ExtSIOp>(loc, type, threads);
  Value chunks = builder.createOrFold<arith::MulIOp>(
      loc, threads, constant(kChunksPerThread));
  Value chunk = builder.createOrFold<arith::DivSIOp>(loc, iterations, chunks);
  return builder.createOrFold<arith::MaxSIOp>(loc, chunk, constant(1));
}

struct AttnOmpDynamicSchedulePass
    : attn::impl::AttnOmpDynamicScheduleBase<AttnOmpDynamicSchedulePass> {
  void runOnOperation() override {
    SmallVector<omp::WsloopOp> loops;
    // A schedule someone chose is kept.
    getOperation()->walk([&](omp::WsloopOp loop) {
      if (!loop.getScheduleKind())
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    Operation *module =
        SymbolTable::getNearestSymbolTable(loops.front()->getParentOp());
    LLVM::LLVMFuncOp numThreads = getNumThreadsDecl(module);
    for (omp::WsloopOp loop : loops) {
      loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
      auto nest = dyn_cast<omp::LoopNestOp>(loop.getWrappedLoop());
      if (nest)
        loop.getScheduleChunkMutable().assign(
            buildChunk(loop, nest, numThreads));
    }
  }
};

} // namespace
