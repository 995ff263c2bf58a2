//===- RegionDerivative.h - derivatives of modifier regions -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Forward-mode differentiation of a score_mod region: the region's value
// and its derivative with respect to one argument, built together op by op
// (each float value paired with its tangent). attn.sdpa_grad applies the
// chain rule through score_mod with it; its verifier uses
// findNonDifferentiableOp to reject regions it could not lower.
//
// Differentiable: arith addf, subf, mulf, divf, negf, maximumf, minimumf,
// maxnumf, minnumf, select, extf, truncf and float constants; math tanh,
// exp, exp2, log, log2, log1p, sqrt, rsqrt, absf, erf, sin, cos. Ops whose
// results are not floats (index arithmetic, comparisons), casts from
// integers to floats and tensor.extract (an element of a captured tensor,
// which gets no gradient) carry no tangent and may appear anywhere.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_REGIONDERIVATIVE_H
#define ATTN_DIALECT_ATTN_IR_REGIONDERIVATIVE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

namespace mlir {
namespace attn {

/// The first op of `region` (a single-block region ending in attn.yield)
/// that produces a float the differentiation cannot follow, or null.
Operation *findNonDifferentiableOp(Region &region);

/// Clones the ops of `region` at `b`'s insertion point with its arguments
/// bound to `args`, and returns the yielded value and its derivative with
/// respect to argument `wrt` (a float). The region must have no op
/// findNonDifferentiableOp reports.
std::pair<Value, Value> buildValueAndDerivative(OpBuilder &b, Location loc,
                                                Region &region, ValueRange args,
                                                unsigned wrt);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_REGIONDERIVATIVE_H
