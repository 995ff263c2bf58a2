//===- PipelineFuzzing.h - MLIR text through the pipelines, checked -------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What the fuzz targets that start from MLIR text share (attn-parse-fuzzer,
// attn-mutate-fuzzer): which modules are the pipelines' input, and the CPU
// pipeline with its translation to LLVM IR, every failure of which must
// come with an error diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNFUZZ_PIPELINEFUZZING_H
#define ATTN_TOOLS_ATTNFUZZ_PIPELINEFUZZING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace attn {
class DiagnosticRecorder;

/// `source` parsed in `context` (whose errors `diagnostics` records) when
/// it is a module of the pipelines' input language (attn, and the
/// func/arith/math/tensor/linalg ops around it; other dialects are
/// upstream's to fuzz); null otherwise, and
/// for text LLVM 22's linalg parser crashes on (a malformed `permutation`
/// or `dimensions` array: an upstream bug the targets skip rather than
/// report). A parse that fails without an error is a finding.
OwningOpRef<ModuleOp> parsePipelineInput(MLIRContext &context,
                                         llvm::StringRef source,
                                         const DiagnosticRecorder &diagnostics);

/// Builds the target machines compileForCpu uses (from a fuzzer's
/// initialization, so that the first input is not charged for them).
void prepareCpuTargets();

/// Runs the CPU pipeline on `module` for one of several targets (the host,
/// x86-64 without AVX, AVX2 and AVX-512 CPUs, an AArch64 CPU: chosen by a
/// hash of `source`) and translates the result to LLVM IR. A failure
/// without an error in `diagnostics`, a translation failure or LLVM IR
/// that does not verify is a finding (reportFinding, with `source`).
void compileForCpu(ModuleOp module, llvm::StringRef source,
                   const DiagnosticRecorder &diagnostics);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTNFUZZ_PIPELINEFUZZING_H
