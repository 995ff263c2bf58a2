//===- CpuTargetModel.h - what the CPU pipeline knows -----------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The CPU the code is generated for, as the passes need it: vector width
// and register count (from LLVM's TargetTransformInfo for the chosen
// triple, CPU and features), FMA, the bf16 / int8 dot-product extensions,
// and cache sizes (the OS's for the host, documented per-CPU defaults
// otherwise). The CPU pipeline derives its tile and register-block sizes
// from it (chooseCpuKernelConfig) so that accumulators plus operands fit
// the register file; options given explicitly override.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPU_CPUTARGETMODEL_H
#define ATTN_TARGET_CPU_CPUTARGETMODEL_H

#include "attn/Target/Cpu/CpuCompiler.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir {
namespace attn {

/// A CPU target as the passes see it.
struct CpuTargetModel {
  /// What LLVM generates code for (resolved: never empty).
  std::string triple, cpu, features;
  /// The CPU's name for records: the OS's model name and LLVM's CPU name
  /// for the host, the CPU name otherwise.
  std::string description;
  /// Whether the code runs on this machine (the triple and CPU are the
  /// host's): what the JIT and the autotuner need.
  bool isHost = false;

  /// Widest fixed-length vector register usable for f32 FMAs, in bits
  /// (TargetTransformInfo with no narrower preference), and how many.
  unsigned vectorBits = 128;
  unsigned vectorRegisters = 16;
  /// Fused multiply-add on vectors (x86 FMA3, every AArch64 SIMD unit).
  bool fma = false;
  /// x86 AVX-512 Foundation (vscalefps, vrndscaleps).
  bool avx512f = false;
  /// Dot-product instructions on bf16 pairs with f32 accumulation.
  bool avx512Bf16 = false; ///< x86 vdpbf16ps.
  bool amxBf16 = false;    ///< x86 tdpbf16ps.
  bool armBf16 = false;    ///< AArch64 bfdot/bfmmla.
  bool armI8mm = false;    ///< AArch64 smmla/usmmla.
  bool sve = false;        ///< AArch64 scalable vectors.
  /// The SVE vector length the code is compiled for, where the CPU's is
  /// wider than NEON's 128 bits (LLVM's vscale for tuning times 128:
  /// Neoverse V1 256, A64FX 512); 0 otherwise (NEON). Every function then
  /// carries `vscale_range` of exactly that length, and LLVM lowers the
  /// fixed-length vectors to SVE registers of it: such code is correct
  /// only on CPUs of that vector length.
  unsigned sveVectorBits = 0;

  /// Per-core data caches and the shared last level, in bytes.
  uint64_t l1dBytes = 0, l2Bytes = 0, l3Bytes = 0;
  /// The L1d's associativity (8 where the OS gives a size but not this).
  unsigned l1dWays = 8;
  /// Where the cache sizes come from (the OS, a per-CPU table, defaults).
  std::string cacheSource;

  /// f32 lanes of one vector register.
  unsigned getF32Lanes() const { return vectorBits / 32; }

  /// The SVE vector length code for `machine` is compiled for (see
  /// sveVectorBits; 0: NEON or not AArch64).
  static unsigned getSveVectorBits(llvm::TargetMachine &machine);

  /// The model of the target `options` name (their triple, CPU and
  /// features; empty ones are the host's) from LLVM's target machine for
  /// it; an error names an unknown triple or CPU.
  static llvm::Expected<CpuTargetModel> get(const CpuTargetOptions &options);

  /// The model attn-opt's pipeline uses when no target is named: 16
  /// registers of 256 bits with FMA (x86-64-v3, the widest ISA nearly every
  /// x86-64 server of the last decade has), 32 KiB L1d, 512 KiB L2, 16 MiB
  /// L3. Code for it runs well on AVX-512 CPUs too; compiled as LLVM IR
  /// it runs on any CPU.
  static CpuTargetModel getGeneric();

  /// A few lines for `attnc --print-target`.
  void print(llvm::raw_ostream &os) const;
};

/// The tile and register-block sizes of the CPU pipeline.
struct CpuKernelConfig {
  /// Query rows and keys per attention tile (attn-sparsify, attn-tile).
  int64_t qTile = 0, kvTile = 0;
  /// Keys per tile for ops whose head sizes are at most 64 (0: kvTile).
  int64_t smallHeadKvTile = 0;
  /// Keys per tile of the second tiling of ops whose Skv is dynamic, for
  /// calls with few keys (attn-tile short-kv-tile; 0: none).
  int64_t shortKvTile = 0;
  /// Register block of every contraction (attn-vectorize-tiles): mBlock
  /// rows by nBlock columns of accumulators.
  int64_t mBlock = 0, nBlock = 0;
  /// The most rows of a register block of nBlock columns that still fit
  /// the register file: a contraction whose rows are a static count that
  /// mBlock does not divide (10 tokens) may use a divisor up to this many
  /// rows instead (5 + 5, not 4 + 4 + 2). mBlock when m-block is given.
  int64_t maxMBlock = 0;
  /// Longest row the row ops (masks, max, exp2, sums) vectorise whole.
  int64_t maxRowElements = 0;
  /// Cache blocks of contractions outside attention tiles (projections;
  /// attn-parallelize-contractions): `contractionDepth` steps of K by
  /// `contractionColumns` columns of N of the right operand per block.
  int64_t contractionColumns = 0, contractionDepth = 0;
  /// Register block of those contractions (attn-vectorize-tiles), whose
  /// right operand streams from the L2: contractionNBlock is also the
  /// width of the weight panels (attn-pack-weights).
  int64_t contractionMBlock = 0, contractionNBlock = 0;
  /// Rows of those contractions' left operand whose stride is a multiple
  /// of this many bytes are copied to a padded stride first: a register
  /// block's rows would otherwise share L1 sets (0: never).
  int64_t contractionConflictStride = 0;
  /// Bytes of weight rows ahead of the one those register blocks read
  /// that their K loops prefetch (attn-prefetch-streams; 0: none).
  int64_t contractionPrefetch = 0;
  /// bf16 contractions on bf16 pairs with `vdpbf16ps` (AVX512-BF16)
  /// instead of widened to f32.
  bool bf16Dot = false;
  /// f32 exp2 of softmax rows with AVX-512's vrndscaleps and vscalefps
  /// (attn-polynomial-math scalef).
  bool exp2Scalef = false;
  /// Why, one line per choice, for `--print-target`.
  std::string reasons;

  /// Vector registers a block of this shape keeps live on `target`: the
  /// accumulators, one row of the right operand and one broadcast.
  static int64_t getLiveRegisters(int64_t mBlock, int64_t nBlock,
                                  const CpuTargetModel &target);

  void print(llvm::raw_ostream &os) const;
};

/// An M x N register block of a contraction's accumulators.
struct RegisterBlock {
  int64_t m = 0, n = 0;
};

/// The register blocks whose live registers fit `target`'s register file,
/// best first: the most accumulators, then the fewest operand loads per
/// FMA, then more rows. M is a power of two up to 16; N is a power-of-two
/// number of vectors (up to 8) no wider than `maxColumns`.
SmallVector<RegisterBlock> getRegisterBlocks(const CpuTargetModel &target,
                                             int64_t maxColumns);

/// The sizes derived from `target`:
/// - the best register block of getRegisterBlocks for one key tile (M is a
///   power of two: it divides every power-of-two query tile), unless it
///   keeps no more accumulators than FMA latency x pipes (AVX2's 4 x 16):
///   then the tallest block of its columns that fits (6 x 16) on a query
///   tile rounded up to a multiple of both sides and of the key tile (192),
///   where that tile's working set fits the L2;
/// - q-tile 128 and kv-tile 64 while a tile's working set at D = 128
///   (Q, O, S, K and V tiles: 224 KiB in f32) fits in half the L2, else
///   halved until it does (never below 32 x 32); for ops with head sizes
///   of at most 64, twice the key tile where that tile's working set at
///   D = 64 still fits (the per-step softmax work is then spread over twice
///   the keys);
/// - rows of up to 16 vector registers vectorised whole;
/// - contractions outside attention (projections) blocked for the cache:
///   256 steps of K by the most columns (a power-of-two multiple of their
///   register block's) whose weight block fills at most a quarter of the
///   L2, leaving room for the row block's slices of both other operands;
///   their register block two vectors wide and as tall as fits the
///   registers, at most 12 rows;
/// - bf16 contractions on `vdpbf16ps` where the target has AVX512-BF16 and
///   no AMX-BF16 (whose cores issue it at half the FMA rate).
CpuKernelConfig chooseCpuKernelConfig(const CpuTargetModel &target);

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CPU_CPUTARGETMODEL_H
