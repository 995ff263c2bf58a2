//===- OmpDynamicSchedule.cpp - dynamic schedule for omp.wsloop -----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNOMPDYNAMICSCHEDULE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

struct AttnOmpDynamicSchedulePass
    : attn::impl::AttnOmpDynamicScheduleBase<AttnOmpDynamicSchedulePass> {
  void runOnOperation() override {
    getOperation()->walk([](omp::WsloopOp loop) {
      // A schedule someone chose is kept.
      if (!loop.getScheduleKind())
        loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
    });
  }
};

} // namespace
