//===- ProgramGenerator.h - random valid attn programs from fuzz bytes ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Turns the bytes libFuzzer gives into one valid program of attn ops, as
// MLIR text, and the CPU pipeline options to compile it with: every choice
// (op, element type, each extent, masks and their combinations, regions,
// GQA ratio, dynamic dimensions, block layouts, multihead options, tile
// and register-block sizes) is read from the bytes, so libFuzzer's
// mutations explore the space and a crashing input replays exactly.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNFUZZ_PROGRAMGENERATOR_H
#define ATTN_TOOLS_ATTNFUZZ_PROGRAMGENERATOR_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

class FuzzedDataProvider;

namespace mlir {
namespace attn {

struct GeneratedProgram {
  /// A module with one public function, @main.
  std::string source;
  /// The concrete shape of every argument of @main (its dynamic
  /// dimensions given values).
  llvm::SmallVector<llvm::SmallVector<int64_t>> inputShapes;
  /// Multiply-adds of the attention (an estimate): whether running it and
  /// its float64 reference is cheap enough for a fuzz iteration.
  int64_t work = 0;
  /// Options of the CPU pipeline, in --attn-cpu-pipeline's syntax.
  std::string cpuPipeline;
  /// A description of the choices, for the fuzzer's verbose mode.
  std::string summary;
};

/// Reads the choices from `data`; once the bytes run out, every choice left
/// is the smallest (FuzzedDataProvider's zeros).
GeneratedProgram generateProgram(FuzzedDataProvider &data);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTNFUZZ_PROGRAMGENERATOR_H
