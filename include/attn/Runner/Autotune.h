//===- Autotune.h - time candidate sizes, keep the winner -------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The target model chooses the CPU pipeline's tile and register-block sizes
// from what it knows of the CPU; autotuning measures instead. It compiles
// the module once per candidate (a short list derived from the model),
// times every public function on random inputs of its real shapes on this
// machine, and keeps the fastest in a tuning cache, a JSON file keyed by
// (CPU, problem class, element type), so that later compiles of the same
// kind of problem on the same kind of CPU reuse the winner without timing.
// docs/CpuTargets.md describes the candidates and the file.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_AUTOTUNE_H
#define ATTN_RUNNER_AUTOTUNE_H

#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Cpu/CpuTargetModel.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir {
namespace attn {

/// What a tuning cache entry is looked up by.
struct TuningKey {
  /// The CPU (CpuTargetModel::description: the OS's model name and LLVM's
  /// CPU name).
  std::string cpu;
  /// The attention problems of the module: each attn op's name, operand
  /// shapes and attributes, every dimension but the innermost (the head
  /// size) rounded up to a power of two, so that sequence lengths of one
  /// octave share an entry; then the sizes the pipeline options fix,
  /// `vectorize=false` / `threads=false` / `value-panels=false` and a
  /// bf16-dot when given.
  std::string problem;
  /// The element type of the first attn op's query (f32, bf16, f16, f64).
  std::string dtype;
};

/// The key of `module` compiled for `target` with `options`; nullopt when
/// the module has no attn op (there is nothing to tune).
std::optional<TuningKey> getTuningKey(ModuleOp module,
                                      const CpuTargetModel &target,
                                      const CpuPipelineOptions &options);

/// The sizes autotuning chooses between, as pipeline options.
struct TuningSizes {
  int64_t qTile = 0, kvTile = 0, mBlock = 0, nBlock = 0;
  /// bf16-dot where a candidate sets it (bf16 problems on a target with
  /// vdpbf16ps); nullopt: the pipeline's own choice.
  std::optional<bool> bf16Dot;

  /// `q-tile=Q kv-tile=K m-block=M n-block=N[ bf16-dot=B]`: what
  /// --cpu-pipeline takes.
  std::string str() const;
  /// Why the sizes cannot be used on `target`, or "" when they can: each
  /// is positive and at most 1024, n-block is a whole number of vectors no
  /// wider than kv-tile, the block fits the register file, and bf16-dot is
  /// true only where the target has vdpbf16ps.
  std::string verify(const CpuTargetModel &target) const;
  /// Writes the sizes into `options`.
  void apply(CpuPipelineOptions &options) const;

  bool operator==(const TuningSizes &other) const {
    return qTile == other.qTile && kvTile == other.kvTile &&
           mBlock == other.mBlock && nBlock == other.nBlock &&
           bf16Dot == other.bf16Dot;
  }
};

/// The candidates for `target`, the model's own choice first: the register
/// blocks with as many accumulators as the best (up to three shapes, e.g.
/// 4x64, 8x32 and 16x16 on AVX-512), each with the model's query tile and
/// half of it, and the model's block with twice its key tile; for `bf16`
/// problems on a target with vdpbf16ps, also the model's sizes with the
/// other bf16-dot choice (pairs on vdpbf16ps or widened: which is faster
/// depends on the core). Sizes that `options` give explicitly (non-zero,
/// or bf16-dot given) are kept in every candidate.
SmallVector<TuningSizes> getTuningCandidates(const CpuPipelineOptions &options,
                                             const CpuTargetModel &target,
                                             bool bf16 = false);

/// A tuning cache file: a JSON object `{"format": 1, "entries": [...]}`,
/// each entry `{"cpu", "problem", "dtype", "target", "sizes", "seconds"}`
/// where "target" fingerprints the LLVM triple, CPU and features the sizes
/// were measured for.
class TuningCache {
public:
  /// Reads `path`. A missing file is an empty cache; a file that cannot be
  /// read or is not a tuning cache is taken as empty with a warning (and
  /// replaced by the next save).
  static TuningCache load(StringRef path,
                          SmallVectorImpl<std::string> &warnings);

  /// The sizes stored for `key`, or nullopt. An entry for the key that was
  /// measured for another target (other features under the same CPU name),
  /// or whose sizes are malformed or do not fit `target`, is ignored with a
  /// warning.
  std::optional<TuningSizes> lookup(const TuningKey &key,
                                    const CpuTargetModel &target,
                                    SmallVectorImpl<std::string> &warnings);

  /// Stores `sizes` for `key`, replacing an entry with the same key.
  void insert(const TuningKey &key, const CpuTargetModel &target,
              const TuningSizes &sizes, double seconds);

  /// Writes the cache to its file atomically (a temporary file renamed
  /// over it), creating its directory.
  llvm::Error save() const;

  StringRef getPath() const { return path; }

private:
  std::string path;
  llvm::json::Array entries;
};

/// The default tuning cache: `tuning.json` in $ATTN_MLIR_CACHE_DIR, else
/// $XDG_CACHE_HOME/attn_mlir, else ~/.cache/attn_mlir (the directory of
/// the Python package's compiled-function cache).
std::string getDefaultTuningCachePath();

/// How `autotune` runs.
struct AutotuneOptions {
  /// The tuning cache file ("": getDefaultTuningCachePath()).
  std::string cachePath;
  /// Time the candidates when the cache has no entry (otherwise only look
  /// the key up).
  bool measure = true;
  /// Each candidate runs until it has run at least this long (and at least
  /// three times); its time is the fastest run.
  double secondsPerCandidate = 0.2;
};

/// What `autotune` found.
struct AutotuneResult {
  enum class Source { NothingToTune, Cache, Measured, NotInCache };
  Source source = Source::NothingToTune;
  /// The sizes to compile with (Cache and Measured).
  TuningSizes sizes;
  std::optional<TuningKey> key;
  std::string cachePath;
  /// Every candidate timed, with its time for one call of every public
  /// function, in seconds (Measured).
  SmallVector<std::pair<TuningSizes, double>> timings;
  /// Corrupt or foreign cache entries ignored, a cache that could not be
  /// saved.
  SmallVector<std::string> warnings;

  /// A few lines for `attnc -v`: where the sizes come from and the times.
  void print(llvm::raw_ostream &os) const;
};

/// Finds the sizes for `module` on this machine (nothing to tune with
/// `lowering=reference` or without attn ops): the cache's entry for its
/// key, else (when `options.measure`) the fastest candidate, timed with
/// `pipeline` and `target` on seeded random inputs, stored in the cache.
/// Fails when `target` is not this machine or a public function has a
/// dynamic dimension (the candidates must run on the real shapes).
llvm::Expected<AutotuneResult> autotune(ModuleOp module,
                                        const CpuTargetOptions &target,
                                        const CpuTargetModel &model,
                                        const CpuPipelineOptions &pipeline,
                                        const AutotuneOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_AUTOTUNE_H
