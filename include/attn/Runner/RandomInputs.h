//===- RandomInputs.h - seeded inputs that look like real ones --*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The inputs attn-run checks and times a function on when given no .npy
// files, and the autotuner times candidates on: seeded, and shaped by how
// the function uses each argument (key lengths within the keys, masks that
// keep most keys, projection weights scaled as nn.Linear's).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_RANDOMINPUTS_H
#define ATTN_RUNNER_RANDOMINPUTS_H

#include "attn/Runner/HostArray.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace attn {

/// Seeded random inputs: floats uniform in [-1, 1) except projection
/// weights, uniform in +-1/sqrt(fan_in) as nn.Linear initialises them (so
/// that scores keep the magnitude real models have); boolean masks keep a
/// key with probability 0.8 (true for attn.sdpa/attn.weights, false for
/// attn.multihead); key lengths in [1, keys]; page tables the pages of a
/// shuffled pool (distinct where it has enough); positions of appended rows
/// where the rows fit the table; other integers in [0, 8).
SmallVector<HostArray> makeRandomInputs(func::FuncOp func,
                                        const FunctionAbi &abi,
                                        ArrayRef<SmallVector<int64_t>> shapes,
                                        uint64_t seed);

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_RANDOMINPUTS_H
