//===- RaiseAttention.h - the parts of attn-raise-attention -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attn-raise-attention in two files: RecomposeSoftmax.cpp turns the
// softmaxes frontends write in steps into linalg.softmax, RaiseAttention.cpp
// matches the attention around each linalg.softmax and rewrites it into
// attn.sdpa. What both read of linalg bodies is here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEATTENTION_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEATTENTION_H

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include <string>

namespace mlir::attn::raising {

/// Why a candidate is not attention the pass raises: the first check that
/// failed, for `explain`.
using Rejection = std::string;

/// Whether `init` starts a sum at zero: a linalg.fill of a zero, or a zero
/// constant.
bool isZeroInit(Value init);

/// Whether `generic` is elementwise: one result, every loop parallel, the
/// result written by the identity map.
bool isElementwise(linalg::GenericOp generic);

/// The op of type `OpTy` the body of `op` (a linalg.generic, or a named op
/// with a region such as linalg.reduce) yields as result `index`, or null.
template <typename... OpTy>
inline Operation *getYielded(linalg::LinalgOp op, unsigned index = 0) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *def = yield.getValues()[index].getDefiningOp();
  return def && isa<OpTy...>(def) && def->getBlock() == body ? def : nullptr;
}

/// The input of `generic` whose block argument is `value`, or null.
OpOperand *getInputOf(linalg::GenericOp generic, Value value);

/// What `value`, used in the body of `generic`, reads: the operand whose
/// block argument it is, or `value` itself (a constant, a capture).
Value getValueRead(linalg::GenericOp generic, Value value);

/// Erases the ops of `steps` that nothing reads any more, until none is
/// left to erase.
void eraseDeadSteps(SmallVector<Operation *> steps);

/// The decomposed softmaxes of `root` written with named ops (linalg.exp,
/// linalg.sub, linalg.div or linalg.mul, linalg.broadcast, linalg.reduce)
/// as the linalg.generics each is, which the matchers read.
void generalizeNamedSoftmaxes(Operation *root);

/// Every decomposed softmax in `root` as the linalg.softmax it computes;
/// with `explain`, a remark on each division of exponentials by a row
/// value that is not one, saying why.
void recomposeSoftmaxes(Operation *root, bool explain);

/// The steps between each linalg.softmax of `root` and its scores' product
/// written as named elementwise ops (a scale as linalg.mul), as the
/// linalg.generic each is.
void generalizeSoftmaxSteps(Operation *root);

} // namespace mlir::attn::raising

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEATTENTION_H
