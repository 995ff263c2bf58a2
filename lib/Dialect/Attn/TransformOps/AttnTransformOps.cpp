//===- AttnTransformOps.cpp - attn ops of the transform dialect -----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Each op applies one of the CPU pipeline's attention rewrites
// (Transforms.h) to the payload ops of its handle, with its own sizes.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/TransformOps/AttnTransformOps.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Target/Cpu/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Transform/IR/TransformTypes.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// AttnSparsifyOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
transform::AttnSparsifyOp::applyToOne(transform::TransformRewriter &rewriter,
                                      Operation *target,
                                      transform::ApplyToEachResultList &results,
                                      transform::TransformState &state) {
  auto sdpa = dyn_cast<SdpaOp>(target);
  if (!sdpa) {
    DiagnosedSilenceableFailure diag = emitSilenceableError()
                                       << "expected attn.sdpa, got '"
                                       << target->getName() << "'";
    diag.attachNote(target->getLoc()) << "payload op";
    return diag;
  }
  classifyBlocksAtRunTime(rewriter, sdpa,
                          AttnSparsifyOptions{getQTileAttr().getInt(),
                                              getKvTileAttr().getInt(),
                                              getSmallHeadKvTileAttr().getInt(),
                                              /*explain=*/false});
  results.push_back(sdpa);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// AttnTileOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
transform::AttnTileOp::applyToOne(transform::TransformRewriter &rewriter,
                                  Operation *target,
                                  transform::ApplyToEachResultList &results,
                                  transform::TransformState &state) {
  AttnTileOptions options{
      getQTileAttr().getInt(),           getKvTileAttr().getInt(),
      getSmallHeadKvTileAttr().getInt(), getBf16Pairs(),
      getGradKeyChunksAttr().getInt(),   getDecodeKeyChunksAttr().getInt(),
      getValuePanelAttr().getInt()};
  std::optional<StringRef> blocker;
  FailureOr<scf::ForallOp> loop = failure();
  if (auto sdpa = dyn_cast<SdpaOp>(target)) {
    blocker = getTilingBlocker(sdpa);
    if (!blocker)
      loop = tileSdpa(rewriter, sdpa, options);
  } else if (auto grad = dyn_cast<SdpaGradOp>(target)) {
    blocker = getTilingBlocker(grad);
    if (!blocker)
      loop = tileSdpaGrad(rewriter, grad, options);
  } else {
    DiagnosedSilenceableFailure diag =
        emitSilenceableError() << "expected attn.sdpa or attn.sdpa_grad, got '"
                               << target->getName() << "'";
    diag.attachNote(target->getLoc()) << "payload op";
    return diag;
  }
  if (blocker) {
    DiagnosedSilenceableFailure diag = emitSilenceableError()
                                       << "cannot tile this op";
    diag.attachNote(target->getLoc()) << "payload op: it " << *blocker;
    return diag;
  }
  // Both builders always make their loop; a failure past the checks above
  // is a bug, and the payload may be half rewritten.
  if (failed(loop))
    return emitDefiniteFailure() << "tiling failed after the op was checked";
  results.push_back(*loop);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// AttnRegisterBlockOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::AttnRegisterBlockOp::applyToOne(
    transform::TransformRewriter &rewriter, Operation *target,
    transform::ApplyToEachResultList &results,
    transform::TransformState &state) {
  // The rewrite works on the ops nested in the target (and folds inside
  // it), never on the target itself, which the result still names: a
  // linalg op would be rewritten itself.
  if (target->getNumRegions() == 0 || isa<linalg::LinalgOp>(target)) {
    DiagnosedSilenceableFailure diag =
        emitSilenceableError()
        << "expected an op that holds tiles (a loop or a function), got '"
        << target->getName() << "'";
    diag.attachNote(target->getLoc()) << "payload op";
    return diag;
  }
  if (failed(vectorizeTiles(
          target, AttnVectorizeTilesOptions{
                      getMBlockAttr().getInt(), getNBlockAttr().getInt(),
                      getRowElementsAttr().getInt(), getBf16Dot(),
                      getMaxMBlockAttr().getInt(), getLanesAttr().getInt()})))
    return DiagnosedSilenceableFailure::definiteFailure();
  results.push_back(target);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// Extension
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/TransformOps/AttnTransformOps.cpp.inc"

namespace {

class AttnTransformDialectExtension
    : public transform::TransformDialectExtension<
          AttnTransformDialectExtension> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AttnTransformDialectExtension)
  using Base::Base;

  void init() {
    declareDependentDialect<AttnDialect>();
    // What the rewrites build.
    declareGeneratedDialect<affine::AffineDialect>();
    declareGeneratedDialect<arith::ArithDialect>();
    declareGeneratedDialect<linalg::LinalgDialect>();
    declareGeneratedDialect<math::MathDialect>();
    declareGeneratedDialect<scf::SCFDialect>();
    declareGeneratedDialect<tensor::TensorDialect>();
    declareGeneratedDialect<vector::VectorDialect>();
    declareGeneratedDialect<x86vector::X86VectorDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "attn/Dialect/Attn/TransformOps/AttnTransformOps.cpp.inc"
        >();
  }
};

} // namespace

void attn::registerTransformDialectExtension(DialectRegistry &registry) {
  registry.addExtensions<AttnTransformDialectExtension>();
}
