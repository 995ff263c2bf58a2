//===- CpuTargetModel.cpp - what the CPU pipeline knows of its target -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/CpuTargetModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <numeric>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Caches
//===----------------------------------------------------------------------===//

namespace {
/// Per-core L1d and L2 and the shared L3 of a CPU, in KiB, and the L1d's
/// associativity.
struct CacheSizes {
  const char *cpu;
  uint64_t l1d, l2, l3;
  unsigned l1dWays;
};
} // namespace

/// Cache sizes of CPUs code is cross-compiled for, from the vendors'
/// documentation (L3 per socket of a common part). CPUs not listed get the
/// generic model's sizes.
static const CacheSizes kKnownCaches[] = {
    {"haswell", 32, 256, 8 * 1024, 8},
    {"skylake", 32, 256, 8 * 1024, 8},
    {"skylake-avx512", 32, 1024, 27 * 1024, 8},
    {"cascadelake", 32, 1024, 27 * 1024, 8},
    {"icelake-server", 48, 1280, 36 * 1024, 12},
    {"sapphirerapids", 48, 2048, 60 * 1024, 12},
    {"emeraldrapids", 48, 2048, 160 * 1024, 12},
    {"graniterapids", 48, 2048, 256 * 1024, 12},
    {"znver2", 32, 512, 16 * 1024, 8},
    {"znver3", 32, 512, 32 * 1024, 8},
    {"znver4", 32, 1024, 32 * 1024, 8},
    {"znver5", 48, 1024, 32 * 1024, 12},
    {"neoverse-n1", 64, 1024, 32 * 1024, 4},
    {"neoverse-v1", 64, 1024, 32 * 1024, 4},
    {"neoverse-n2", 64, 1024, 32 * 1024, 4},
    {"neoverse-v2", 64, 1024, 114 * 1024, 4},
    {"apple-m1", 128, 4096, 8 * 1024, 8},
};

/// The generic model's caches (KiB).
static constexpr CacheSizes kGenericCaches = {"generic", 32, 512, 16 * 1024, 8};

/// Parses a sysfs cache size ("48K", "1024K", "32M").
static uint64_t parseCacheSize(StringRef text) {
  text = text.trim();
  uint64_t scale = 1;
  if (text.consume_back("K"))
    scale = 1024;
  else if (text.consume_back("M"))
    scale = 1024 * 1024;
  uint64_t value = 0;
  if (text.getAsInteger(10, value))
    return 0;
  return value * scale;
}

/// Reads one line of a sysfs file, empty if it cannot.
static std::string readSysfs(const Twine &path) {
  // sysfs files report a size they do not have: read them as streams.
  auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().trim().str();
}

/// The host's data caches from Linux's sysfs (cpu0's view); false where
/// the OS does not say.
static bool readHostCaches(CpuTargetModel &model) {
  for (unsigned index = 0;; ++index) {
    std::string dir =
        ("/sys/devices/system/cpu/cpu0/cache/index" + Twine(index)).str();
    std::string level = readSysfs(dir + "/level");
    if (level.empty())
      break;
    std::string type = readSysfs(dir + "/type");
    if (type == "Instruction")
      continue;
    uint64_t size = parseCacheSize(readSysfs(dir + "/size"));
    if (level == "1") {
      model.l1dBytes = size;
      unsigned ways = 0;
      if (!StringRef(readSysfs(dir + "/ways_of_associativity"))
               .getAsInteger(10, ways))
        model.l1dWays = ways;
    } else if (level == "2")
      model.l2Bytes = size;
    else if (level == "3")
      model.l3Bytes = size;
  }
  return model.l1dBytes && model.l2Bytes;
}

static void setCaches(CpuTargetModel &model, const CacheSizes &sizes) {
  model.l1dBytes = sizes.l1d * 1024;
  model.l1dWays = sizes.l1dWays;
  model.l2Bytes = sizes.l2 * 1024;
  model.l3Bytes = sizes.l3 * 1024;
}

/// The OS's name of the host CPU (Linux: /proc/cpuinfo's model name).
static std::string getHostModelName() {
  auto buffer = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!buffer)
    return "";
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (StringRef line : lines) {
    auto [key, value] = line.split(':');
    if (key.trim() == "model name")
      return value.trim().str();
  }
  return "";
}

//===----------------------------------------------------------------------===//
// CpuTargetModel
//===----------------------------------------------------------------------===//

/// A function to ask TargetTransformInfo about: the attributes say not to
/// prefer narrower vectors than the ISA has (LLVM's x86 tuning prefers 256
/// bits on some AVX-512 CPUs for auto-vectorised loops, but code from MLIR,
/// which sets no vector-width attributes, uses all 512), and with
/// `sveVectorBits` that the SVE vector length is exactly that.
static llvm::Function *createProbe(llvm::Module &module,
                                   llvm::TargetMachine &tm,
                                   unsigned sveVectorBits) {
  llvm::LLVMContext &context = module.getContext();
  module.setTargetTriple(tm.getTargetTriple());
  module.setDataLayout(tm.createDataLayout());
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
      llvm::GlobalValue::ExternalLinkage, "probe", module);
  function->addFnAttr("target-cpu", tm.getTargetCPU());
  function->addFnAttr("target-features", tm.getTargetFeatureString());
  function->addFnAttr("prefer-vector-width", "4096");
  function->addFnAttr("min-legal-vector-width", "0");
  if (sveVectorBits)
    function->addFnAttr(llvm::Attribute::getWithVScaleRangeArgs(
        context, sveVectorBits / 128, sveVectorBits / 128));
  return function;
}

unsigned CpuTargetModel::getSveVectorBits(llvm::TargetMachine &tm) {
  if (!tm.getTargetTriple().isAArch64() ||
      !tm.getMCSubtargetInfo()->checkFeatures("+sve"))
    return 0;
  // LLVM's per-CPU tuning vscale is the vector length in units of 128
  // bits. Only a longer one than NEON's is worth SVE code: at 128 bits
  // NEON does the same work without predicates.
  llvm::LLVMContext context;
  llvm::Module module("attn-sve-probe", context);
  llvm::Function *probe = createProbe(module, tm, /*sveVectorBits=*/0);
  std::optional<unsigned> vscale =
      tm.getTargetTransformInfo(*probe).getVScaleForTuning();
  return vscale && *vscale > 1 ? 128 * *vscale : 0;
}

llvm::Expected<CpuTargetModel>
CpuTargetModel::get(const CpuTargetOptions &options) {
  auto machine = createCpuTargetMachine(options);
  if (!machine)
    return machine.takeError();
  llvm::TargetMachine &tm = **machine;

  CpuTargetModel model;
  model.triple = tm.getTargetTriple().str();
  model.cpu = tm.getTargetCPU().str();
  model.features = tm.getTargetFeatureString().str();
  model.isHost = isHostTarget(options);

  // TargetTransformInfo answers for a function (createProbe), compiled as
  // the code will be: with SVE's vector length where it is used.
  model.sveVectorBits = getSveVectorBits(tm);
  llvm::LLVMContext context;
  llvm::Module module("attn-target-probe", context);
  llvm::Function *function = createProbe(module, tm, model.sveVectorBits);
  llvm::TargetTransformInfo tti = tm.getTargetTransformInfo(*function);
  model.vectorBits = std::max<uint64_t>(
      128,
      tti.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue());
  model.vectorRegisters =
      tti.getNumberOfRegisters(tti.getRegisterClassForType(/*Vector=*/true));

  const llvm::MCSubtargetInfo &sti = *tm.getMCSubtargetInfo();
  llvm::Triple triple = tm.getTargetTriple();
  if (triple.isX86()) {
    model.fma = sti.checkFeatures("+fma");
    model.avx512f = sti.checkFeatures("+avx512f");
    model.avx512Bf16 = sti.checkFeatures("+avx512bf16");
    model.amxBf16 = sti.checkFeatures("+amx-bf16");
  } else if (triple.isAArch64()) {
    model.fma = true; // FMLA is part of every AArch64 SIMD unit.
    model.armBf16 = sti.checkFeatures("+bf16");
    model.armI8mm = sti.checkFeatures("+i8mm");
    model.sve = sti.checkFeatures("+sve");
  }

  if (model.isHost) {
    std::string name = getHostModelName();
    model.description = name.empty()
                            ? model.cpu
                            : llvm::formatv("{0} ({1})", name, model.cpu).str();
    if (readHostCaches(model))
      model.cacheSource = "the OS (sysfs)";
  } else {
    model.description = model.cpu;
  }
  if (model.cacheSource.empty()) {
    const CacheSizes *known =
        llvm::find_if(kKnownCaches, [&](const CacheSizes &sizes) {
          return model.cpu == sizes.cpu;
        });
    if (known != std::end(kKnownCaches)) {
      setCaches(model, *known);
      model.cacheSource = "attn-mlir's table for " + model.cpu;
    } else {
      setCaches(model, kGenericCaches);
      model.cacheSource =
          "generic defaults; " + model.cpu + " is not in attn-mlir's table";
    }
  }
  return model;
}

CpuTargetModel CpuTargetModel::getGeneric() {
  CpuTargetModel model;
  model.triple = "x86_64-unknown-linux-gnu";
  model.cpu = "x86-64-v3";
  model.description = "generic (no target named: x86-64-v3's registers)";
  model.vectorBits = 256;
  model.vectorRegisters = 16;
  model.fma = true;
  setCaches(model, kGenericCaches);
  model.cacheSource = "generic defaults";
  return model;
}

void CpuTargetModel::print(llvm::raw_ostream &os) const {
  os << "target: " << description << "\n";
  os << "  triple " << triple << ", cpu " << cpu << (isHost ? " (host)" : "")
     << "\n";
  os << "  vectors: " << vectorRegisters << " x " << vectorBits << " bits ("
     << getF32Lanes() << " f32 lanes), FMA " << (fma ? "yes" : "no") << "\n";
  SmallVector<StringRef> dots;
  if (avx512Bf16)
    dots.push_back("avx512bf16");
  if (amxBf16)
    dots.push_back("amx-bf16");
  if (armBf16)
    dots.push_back("bf16");
  if (armI8mm)
    dots.push_back("i8mm");
  // SVE code is for one vector length; the text outlives `dots`' use.
  std::string sveText = "sve";
  if (sveVectorBits)
    sveText = llvm::formatv("sve (code for {0}-bit vectors: correct only on "
                            "CPUs of that length)",
                            sveVectorBits);
  if (sve)
    dots.push_back(sveText);
  os << "  dot-product extensions: "
     << (dots.empty() ? std::string("none") : llvm::join(dots, ", ")) << "\n";
  os << llvm::formatv("  caches: L1d {0} KiB {1}-way, L2 {2} KiB, L3 {3} KiB "
                      "(from {4})\n",
                      l1dBytes / 1024, l1dWays, l2Bytes / 1024, l3Bytes / 1024,
                      cacheSource);
}

//===----------------------------------------------------------------------===//
// CpuKernelConfig
//===----------------------------------------------------------------------===//

int64_t CpuKernelConfig::getLiveRegisters(int64_t mBlock, int64_t nBlock,
                                          const CpuTargetModel &target) {
  int64_t lanes = target.getF32Lanes();
  int64_t rowVectors = llvm::divideCeil(nBlock, lanes);
  return mBlock * rowVectors + rowVectors + 1;
}

void CpuKernelConfig::print(llvm::raw_ostream &os) const {
  // Arguments in the order they print.
  os << llvm::formatv(
      "kernel: q-tile={0} kv-tile={1} m-block={2} n-block={3} "
      "row-elements={4} bf16-dot={5} small-head-kv-tile={6} "
      "short-kv-tile={7} contraction-depth={8} contraction-columns={9} "
      "max-m-block={10} contraction-m-block={11} contraction-n-block={12} "
      "contraction-conflict-stride={13} contraction-prefetch={14} "
      "exp2-scalef={15}\n",
      qTile, kvTile, mBlock, nBlock, maxRowElements, bf16Dot ? "true" : "false",
      smallHeadKvTile, shortKvTile, contractionDepth, contractionColumns,
      maxMBlock, contractionMBlock, contractionNBlock,
      contractionConflictStride, contractionPrefetch,
      exp2Scalef ? "true" : "false");
  os << reasons;
}

/// Independent multiply-add chains that keep every FMA pipe busy: FMA
/// latency (4 cycles) times FMA pipes (2) on every core the model knows
/// (Haswell to Granite Rapids, Zen 2-5, Neoverse N1-V2).
static constexpr int64_t kLatencyChains = 8;

/// f32 bytes of one attention tile's working set at head size `d`: the Q
/// and output tiles (qTile x d), the scores (qTile x kvTile), the K and V
/// tiles (kvTile x d).
static int64_t getTileWorkingSet(int64_t qTile, int64_t kvTile, int64_t d) {
  return 4 * (2 * qTile * d + qTile * kvTile + 2 * kvTile * d);
}

SmallVector<RegisterBlock> attn::getRegisterBlocks(const CpuTargetModel &target,
                                                   int64_t maxColumns) {
  const int64_t lanes = target.getF32Lanes();
  SmallVector<RegisterBlock> blocks;
  for (int64_t m = 1; m <= 16; m *= 2)
    for (int64_t vectors = 1; vectors <= 8; vectors *= 2) {
      int64_t n = vectors * lanes;
      if (n <= maxColumns && CpuKernelConfig::getLiveRegisters(m, n, target) <=
                                 target.vectorRegisters)
        blocks.push_back({m, n});
    }
  // One row vector and one broadcast always fit the 16 or 32 registers of
  // every target the model knows; a block of one vector is the fallback.
  if (blocks.empty())
    blocks.push_back({1, lanes});
  // The most accumulators first, then the fewest operand loads per FMA (M
  // broadcasts plus N/lanes row vectors), then more rows.
  llvm::stable_sort(blocks, [&](RegisterBlock a, RegisterBlock b) {
    int64_t accA = a.m * (a.n / lanes), accB = b.m * (b.n / lanes);
    if (accA != accB)
      return accA > accB;
    int64_t loadsA = a.m + a.n / lanes, loadsB = b.m + b.n / lanes;
    if (loadsA != loadsB)
      return loadsA < loadsB;
    return a.m > b.m;
  });
  return blocks;
}

CpuKernelConfig attn::chooseCpuKernelConfig(const CpuTargetModel &target) {
  CpuKernelConfig config;
  llvm::raw_string_ostream why(config.reasons);
  const int64_t lanes = target.getF32Lanes();
  const int64_t registers = target.vectorRegisters;

  // Tiles: as large as keeps a tile's working set in half the L2 (the
  // other half holds the next K/V tiles streaming in).
  constexpr int64_t kHeadSize = 128;
  config.qTile = 128;
  config.kvTile = 64;
  int64_t budget = static_cast<int64_t>(target.l2Bytes / 2);
  while (getTileWorkingSet(config.qTile, config.kvTile, kHeadSize) > budget &&
         (config.qTile > 32 || config.kvTile > 32)) {
    if (config.qTile >= config.kvTile && config.qTile > 32)
      config.qTile /= 2;
    else
      config.kvTile /= 2;
  }
  why << llvm::formatv(
      "  q-tile x kv-tile: {0} x {1}: a tile's working set at D = {2} is "
      "{3} KiB, half the L2 is {4} KiB\n",
      config.qTile, config.kvTile, kHeadSize,
      getTileWorkingSet(config.qTile, config.kvTile, kHeadSize) / 1024,
      budget / 1024);

  // Register block: the best of those that fit (getRegisterBlocks).
  RegisterBlock best = getRegisterBlocks(target, config.kvTile).front();
  int64_t bestM = best.m, bestN = best.n;
  // A block needs more independent accumulators than FMA latency x FMA
  // pipes, or each multiply-add waits for the one before it into the same
  // register. Where the best power-of-two block has no more (16 registers:
  // AVX2's 4 x 16 has 8), the tallest block of its columns that fits takes
  // its place, on a query tile rounded up to a multiple of both block sides
  // and of the key tile (whole blocks in every tile of a static sequence,
  // key tiles aligned with query tiles on causal diagonals) if that tile's
  // working set still fits the L2; otherwise the power-of-two block stays.
  // AVX2: 6 x 16 on 192-row tiles; on a Zen 3 its K loops run at about 77%
  // of the FMA peak, 4 x 16's at about 50% (benchmarks/RESULTS.md, session
  // 17). Larger query tiles also stream K and V from memory fewer times.
  int64_t vectors = bestN / lanes;
  if (bestM * vectors <= kLatencyChains) {
    int64_t taller = bestM;
    while (CpuKernelConfig::getLiveRegisters(taller + 1, bestN, target) <=
           registers)
      ++taller;
    int64_t step = std::lcm(std::lcm(taller, bestN), config.kvTile);
    int64_t qTile = llvm::divideCeil(config.qTile, step) * step;
    int64_t workingSet = getTileWorkingSet(qTile, config.kvTile, kHeadSize);
    if (taller > bestM && workingSet <= static_cast<int64_t>(target.l2Bytes)) {
      why << llvm::formatv(
          "  {0} x {1} keeps only {2} accumulators, no more than FMA latency "
          "x pipes ({3}): {4} rows instead, q-tile {5} (a multiple of {4}, "
          "{1} and the key tile; {6} KiB at D = {7}, within the L2)\n",
          bestM, bestN, bestM * vectors, kLatencyChains, taller, qTile,
          workingSet / 1024, kHeadSize);
      bestM = taller;
      config.qTile = qTile;
    }
  }
  config.mBlock = bestM;
  config.nBlock = bestN;
  why << llvm::formatv(
      "  m-block x n-block: {0} x {1}: {2} accumulators + {3} row vectors + "
      "1 broadcast = {4} of {5} vector registers ({6} f32 lanes)\n",
      bestM, bestN, bestM * vectors, vectors,
      CpuKernelConfig::getLiveRegisters(bestM, bestN, target), registers,
      lanes);

  // Heads of at most 64: the same working set allows twice the keys per
  // step, which halves the softmax work per key (measured on Zen 5: 3% at
  // S = 4096, 15% at S = 1024 for D = 64; 10% slower at D = 128).
  constexpr int64_t kSmallHead = 64;
  if (config.kvTile * 2 <= 256 &&
      getTileWorkingSet(config.qTile, config.kvTile * 2, kSmallHead) <=
          budget) {
    config.smallHeadKvTile = config.kvTile * 2;
    why << llvm::formatv(
        "  small-head-kv-tile: {0}: at D <= {1} a {2} x {0} tile's working "
        "set is {3} KiB\n",
        config.smallHeadKvTile, kSmallHead, config.qTile,
        getTileWorkingSet(config.qTile, config.smallHeadKvTile, kSmallHead) /
            1024);
  }

  // A dynamic Skv is padded to whole key tiles: 10 keys in a tile of 128
  // were 13x the attention's work (a shape-generic N32 L10 multi-head layer
  // 1.9x the time of its static build). Such ops get a second tiling with
  // steps of 16 keys, whole vectors on every target the model knows (one
  // AVX-512 register, two AVX2 ones, four NEON ones), which costs a few
  // percent per key where the long tiles waste nothing (Zen 4, B4 H8
  // S256 D64: 3.00 against 2.81 ms).
  config.shortKvTile = 16;
  why << llvm::formatv("  short-kv-tile: {0}: a dynamic Skv of few keys is "
                       "padded to whole steps of {0}, not of {1}\n",
                       config.shortKvTile, config.kvTile);

  // Row ops are elementwise or reductions with few live values at a time:
  // a row of up to 16 registers is one vector op per register.
  constexpr int64_t kRowRegisters = 16;
  config.maxRowElements = kRowRegisters * lanes;
  why << llvm::formatv("  row-elements: {0}: rows of up to {1} registers are "
                       "vectorised whole\n",
                       config.maxRowElements, kRowRegisters);
  // Contractions outside attention tiles: a weight block of 256 steps of K
  // by as many columns as fit in a quarter of the L2 stays in the cache
  // while every register block of a row block reads it (measured on Zen 4,
  // L2 1 MiB: 256 x 256 blocks take a 1024 x 4096 x 1024 product from 62
  // to 164 GFLOP/s, and no shape slower; 512 x 256 and 1024 x 128 within
  // the noise of it).
  //
  // Their register block: where attention's key tile stays in the L1 while
  // the query rows go by, a projection's weight block (256 x 512 on
  // AVX-512) lives in the L2 and each register block's rows of the other
  // operand (one K step at a time, broadcast) in the L1. Every row vector
  // of the block is then a load from the L2, so the block is two vectors
  // wide and as tall as fits the registers: fewer L2 loads per FMA than
  // attention's 4 x 64 (2 per 24 FMAs against 4 per 16). At most 12 rows
  // (14 x 32 ran no faster than 12 x 32 in a one-core C micro-benchmark
  // on an Emerald Rapids). AVX-512: 12 x 32, 24 accumulators; AVX2: 6 x 16,
  // 12. With the loop order of attn-vectorize-tiles, projection-shaped
  // products went from 0.88-0.99x to 0.92-1.01x NumPy's OpenBLAS on an
  // Emerald Rapids (benchmarks/RESULTS.md, session 26).
  constexpr int64_t kContractionVectors = 2, kMaxContractionRows = 12;
  config.contractionNBlock = kContractionVectors * lanes;
  config.contractionMBlock = 1;
  while (config.contractionMBlock < kMaxContractionRows &&
         CpuKernelConfig::getLiveRegisters(config.contractionMBlock + 1,
                                           config.contractionNBlock,
                                           target) <= registers)
    ++config.contractionMBlock;
  why << llvm::formatv(
      "  contraction-m-block x contraction-n-block: {0} x {1}: {2} "
      "accumulators + {3} row vectors + 1 broadcast = {4} of {5} vector "
      "registers (at most {6} rows); weight panels of {1} columns\n",
      config.contractionMBlock, config.contractionNBlock,
      config.contractionMBlock * kContractionVectors, kContractionVectors,
      CpuKernelConfig::getLiveRegisters(config.contractionMBlock,
                                        config.contractionNBlock, target),
      registers, kMaxContractionRows);
  // A register block broadcasts from contractionMBlock rows of the left
  // operand at each K step. Rows whose stride is a multiple of g cache
  // lines fall in at most sets / g of the L1's sets; when that puts as
  // many of them in one set as it has ways, they evict each other (and
  // the weight row and accumulator lines they share the L1 with). The
  // smallest such stride (a power of two) is the one at which a product
  // copies its left operand to rows one line longer first: 4 KiB on Zen 4
  // (32 KiB, 8 ways, 64 sets; 12 rows) and on an Emerald Rapids (48 KiB,
  // 12 ways), a product with K = 1024 f32 or a multiple; none with AVX2's
  // 6 rows on 8 ways. Measured on Zen 4 (benchmarks/RESULTS.md, session
  // 34): 2048 x 1024 x 1024 188 -> 200 GFLOP/s; K = 512 (6 rows per set)
  // lost 5% to the copy instead.
  int64_t lineBytes = 64;
  int64_t sets = static_cast<int64_t>(target.l1dBytes) /
                 (static_cast<int64_t>(target.l1dWays) * lineBytes);
  config.contractionConflictStride = 0;
  for (int64_t lines = 1; lines <= sets; lines *= 2)
    if (llvm::divideCeil(config.contractionMBlock * lines, sets) >=
        target.l1dWays) {
      config.contractionConflictStride = lines * lineBytes;
      break;
    }
  if (config.contractionConflictStride)
    why << llvm::formatv(
        "  contraction-conflict-stride: {0}: left-operand rows this many "
        "bytes apart (or a multiple) put at least {1} lines of a {2}-row "
        "register block in one of the L1d's {3} sets of {1} ways: such an "
        "operand is copied to rows one line longer first\n",
        config.contractionConflictStride, target.l1dWays,
        config.contractionMBlock, sets);
  else
    why << llvm::formatv(
        "  contraction-conflict-stride: 0: no row stride puts {0} lines of a "
        "{1}-row register block in one of the L1d's {2} sets of {0} ways\n",
        target.l1dWays, config.contractionMBlock, sets);
  constexpr int64_t kContractionDepth = 256;
  config.contractionDepth = kContractionDepth;
  int64_t weightBudget = static_cast<int64_t>(target.l2Bytes / 4);
  config.contractionColumns = config.contractionNBlock;
  while (kContractionDepth * config.contractionColumns * 2 * 4 <= weightBudget)
    config.contractionColumns *= 2;
  why << llvm::formatv(
      "  contraction-depth x contraction-columns: {0} x {1}: a weight block "
      "of {2} KiB, at most a quarter of the L2 ({3} KiB)\n",
      config.contractionDepth, config.contractionColumns,
      config.contractionDepth * config.contractionColumns * 4 / 1024,
      weightBudget / 1024);
  // Each K step of such a block reads a weight row it reads once, from the
  // L2: its K loop prefetches the row 2 KiB ahead (16 steps of 12 x 32
  // f32, 32 of 6 x 16), which the hardware prefetcher alone did not bring
  // in time (perf: the FMAs right after each row load took the most
  // samples). On an Emerald Rapids projection-shaped products went 1.01-
  // 1.09x faster, none slower; 1, 2 and 4 KiB ahead were within the noise
  // of each other (benchmarks/RESULTS.md, session 27). Not measured on an
  // AVX2 or AArch64 host.
  constexpr int64_t kContractionPrefetchBytes = 2048;
  config.contractionPrefetch = kContractionPrefetchBytes;
  why << llvm::formatv("  contraction-prefetch: {0}: bytes of weight rows "
                       "ahead a projection's K loop prefetches\n",
                       config.contractionPrefetch);

  // bf16 pairs double the multiply-adds per instruction where the core
  // issues vdpbf16ps as fast as an FMA: Zen 4 and 5 (1.5-1.9x the widened
  // path). Intel's AVX512-BF16 cores with AMX (Sapphire, Emerald and
  // Granite Rapids) issue it on one port where FMAs take two, so it does no
  // more multiply-adds per cycle than f32 FMAs and the pairs cost a packing
  // pass: widening was 1.2-1.6x faster on a Sapphire Rapids
  // (benchmarks/RESULTS.md, sessions 8, 18 and 19). AMX is what such cores
  // have for bf16; until tdpbf16ps is used they widen. Other targets widen
  // too (AArch64 BFDOT is not used yet). bf16-dot=true given explicitly
  // takes the pairs wherever vdpbf16ps exists.
  config.bf16Dot = target.avx512Bf16 && !target.amxBf16;
  if (config.bf16Dot)
    why << "  bf16: Q K^T and P V on bf16 pairs with vdpbf16ps "
           "(avx512bf16)\n";
  else if (target.avx512Bf16)
    why << "  bf16: widened to f32: cores with amx-bf16 issue vdpbf16ps at "
           "half the FMA rate, no more multiply-adds per cycle than f32 "
           "(tdpbf16ps not used yet)\n";
  else
    why << "  bf16: widened to f32 (no avx512bf16)\n";

  // The softmax's exp2: AVX-512 rounds down (vrndscaleps) and scales by a
  // power of two (vscalefps) in one instruction each, where the portable
  // form takes six (a shifter and the exponent bits): 11 vector
  // instructions per 16 exponentials instead of 16.
  config.exp2Scalef = target.avx512f;
  if (config.exp2Scalef)
    why << "  exp2: vrndscaleps and vscalefps (avx512f)\n";
  return config;
}
