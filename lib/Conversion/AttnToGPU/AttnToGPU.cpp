//===- AttnToGPU.cpp - attn.sdpa to a tensor-core GPU kernel --------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The FlashAttention-2 forward pass as one `gpu.launch` per attn.sdpa, built
// directly from the op: the mask band of Analysis/KeyBand decides which key
// tiles each block visits, ScoreBuilders gives the per-element semantics,
// and the two products run on `mma.sync.m16n8k16`.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"): with
// g = lane / 4 and t = lane % 4,
//   A (16 x 16, row-major): registers {(g, 2t), (g + 8, 2t), (g, 2t + 8),
//                           (g + 8, 2t + 8)}, two consecutive columns each;
//   B (16 x 8, K x N):      registers {(2t, g), (2t + 8, g)}, two
//                           consecutive rows (k) each;
//   C (16 x 8, f32):        (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t+1).
// Two C tiles side by side (keys 0-7 and 8-15) are exactly the registers of
// an A tile over those 16 keys, so P feeds the P V product without leaving
// the thread; the four lanes sharing g hold one row, so row reductions are
// two butterfly shuffles (xor 1, xor 2).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"

#include "MmaKernelBuilder.h"

#include "attn/Dialect/Attn/Analysis/KeyBand.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

FragmentOffset attn::getMmaFragmentOffset(MmaOperand operand, int64_t reg,
                                          int64_t element) {
  switch (operand) {
  case MmaOperand::A:
    // {(g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)}.
    return {(reg % 2) * 8, (reg / 2) * 8 + element};
  case MmaOperand::B:
    // {(2t, g), (2t + 8, g)}, consecutive k in a register.
    return {reg * 8 + element, 0};
  case MmaOperand::C:
    // {(g, 2t), (g + 8, 2t)}, consecutive columns in a register.
    return {reg * 8, element};
  }
  llvm_unreachable("covered switch");
}

FailureOr<GpuFlashConfig> attn::getGpuFlashConfig(SdpaOp op, int64_t kvTile,
                                                  std::string &why) {
  llvm::raw_string_ostream os(why);
  auto qType = op.getQuery().getType(), kType = op.getKey().getType(),
       vType = op.getValue().getType();
  Type element = qType.getElementType();
  if (!element.isF16() && !element.isBF16()) {
    os << "element type " << element << " (the tensor-core kernel takes f16 "
       << "or bf16)";
    return failure();
  }
  if (kType.getElementType() != element || vType.getElementType() != element ||
      op.getResult().getType().getElementType() != element) {
    os << "query, key, value and result element types differ";
    return failure();
  }
  GpuFlashConfig config;
  config.headDim = qType.getDimSize(3);
  config.valueDim = vType.getDimSize(3);
  if (failed(checkMmaHeadDims(config.headDim, config.valueDim, 256,
                              "the kernel needs", os)))
    return failure();
  if (op.getBlockOffsets() || op.getBlockClasses()) {
    os << "a block-sparse layout or block classes (not supported by the GPU "
          "kernel yet)";
    return failure();
  }
  // A warp holds its Q fragments (D / 4 registers), its output
  // accumulators (Dv / 2) and one score tile (kv-tile / 2): the key tile
  // shrinks as the head grows so that the 255 registers of a thread hold
  // them all without spilling (test/Target/Cuda checks ptxas' report).
  // Dropout's hash (64-bit arithmetic per score) halves the widest tile.
  int64_t widest = std::max(config.headDim, config.valueDim);
  int64_t narrowest = op.getDropoutP().convertToDouble() > 0 ? 32 : 64;
  config.kvTile = kvTile > 0      ? kvTile
                  : widest <= 64  ? narrowest
                  : widest <= 128 ? 32
                                  : 16;
  if (config.kvTile % 16 != 0) {
    os << "kv-tile = " << config.kvTile << " (must be a multiple of 16)";
    return failure();
  }
  // Past D = 128 the Q fragments would not fit the registers next to the
  // output accumulators: Q waits in shared memory instead.
  config.queryInShared = config.headDim > 128;
  // Every sm_80+ GPU gives a block at least 99 KiB when asked (the runtime
  // asks past 48 KiB).
  if (config.getSharedMemoryBytes() > 99 * 1024) {
    os << "kv-tile = " << config.kvTile << " needs "
       << config.getSharedMemoryBytes()
       << " bytes of shared memory (at most 101376)";
    return failure();
  }
  return config;
}

namespace {

/// Builds the kernel of one attn.sdpa.
class FlashKernelBuilder : MmaKernelBuilder {
public:
  FlashKernelBuilder(SdpaOp op, OpBuilder &b, const GpuFlashConfig &config)
      : MmaKernelBuilder(b, op.getLoc(),
                         op.getQuery().getType().getElementType(),
                         config.getThreads()),
        op(op), config(config), sem(getScoreSemantics(op)) {}

  /// Emits the launch before `op` and returns the result tensors (the
  /// output, and lse when the op has it).
  SmallVector<Value> build();

private:
  // Host-side values the kernel captures (`lse` only when the op returns
  // the row log-sum-exp, `seed` and `scaleBuffer` only with a run-time
  // dropout seed and scale).
  Value query, key, value, out, lse, mask, kvLens, seed, scaleBuffer;
  Value queryLength, keyCount, group;
  Log2ScoreScale scale;

  // Kernel-side values.
  Value head, kvHead, rowStart, lastRow, lastKey;
  Value rowA, rowB, rowAClamped, rowBClamped, kvLength;
  Value kTile, vTile, qTile;
  /// Q as A fragments, D / 16 of them, four registers each.
  SmallVector<std::array<Value, 4>> queryFragments;

  SdpaOp op;
  GpuFlashConfig config;
  ScoreSemantics sem;

  /// The clamped query row at offset 0 (row g) or 8 (row g + 8) of the
  /// warp's 16.
  Value clampedRow(int64_t offset) {
    assert((offset == 0 || offset == 8) && "a warp's rows are g and g + 8");
    return offset == 0 ? rowAClamped : rowBClamped;
  }

  void buildPrologue(gpu::LaunchOp launch);
  SmallVector<Value> buildKeyLoops(ValueRange init);
  SmallVector<Value> buildKeyLoop(Value from, Value to, bool masked,
                                  ValueRange init);
  SmallVector<Value> buildStep(Value keyStart, bool masked, ValueRange carried);
  void buildEpilogue(ValueRange carried);
};

void FlashKernelBuilder::buildPrologue(gpu::LaunchOp launch) {
  gpu::KernelDim3 blocks = launch.getBlockIds();
  batch = blocks.z;
  head = blocks.y;
  setLaneCoordinates(launch.getThreadIds().x);
  // A run-time dropout seed, read once per thread from device memory.
  if (seed)
    sem.seedValue = memref::LoadOp::create(b, loc, seed, ValueRange{});
  // Likewise a run-time scale; the host-side one is a constant then.
  if (scaleBuffer) {
    sem.scaleValue = memref::LoadOp::create(b, loc, scaleBuffer, ValueRange{});
    scale = buildLog2ScoreScale(b, loc, sem, op.getQuery(), f32);
  }
  kvHead = arith::DivUIOp::create(b, loc, head, group);
  rowStart = mul(blocks.x, config.getQueryTile());
  lastRow = arith::SubIOp::create(
      b, loc, minIndex(add(rowStart, config.getQueryTile()), queryLength),
      index(1));
  rowA = add(add(rowStart, mul(warp, kGpuRowsPerWarp)), g);
  rowB = add(rowA, 8);
  // Rows past Sq compute on the last row and are never stored.
  Value lastQuery = arith::SubIOp::create(b, loc, queryLength, index(1));
  rowAClamped = minIndex(rowA, lastQuery);
  rowBClamped = minIndex(rowB, lastQuery);

  lastKey = arith::SubIOp::create(b, loc, keyCount, index(1));
  kvLength = keyCount;
  if (kvLens) {
    Value len = memref::LoadOp::create(b, loc, kvLens, batch);
    kvLength = arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
  }

  if (config.queryInShared) {
    // The block's 64 query rows, once, into shared memory.
    Value copied = copyRows(query, head, rowStart, queryLength, qTile,
                            config.getQueryTile(), config.headDim);
    nvgpu::DeviceAsyncWaitOp::create(b, loc, copied, b.getI32IntegerAttr(0));
    gpu::BarrierOp::create(b, loc);
    return;
  }
  // Q stays in registers as A fragments for the whole key loop.
  for (int64_t kc = 0; kc < config.headDim / 16; ++kc)
    queryFragments.push_back(loadAFragment(
        query, {batch, head}, [&](int64_t r) { return clampedRow(r); }, kc));
}

SmallVector<Value> FlashKernelBuilder::buildStep(Value keyStart, bool masked,
                                                 ValueRange carried) {
  int64_t nTiles = config.kvTile / 8, vTiles = config.valueDim / 8;
  Value maxA = carried[0], maxB = carried[1], sumA = carried[2],
        sumB = carried[3];
  ValueRange acc = carried.drop_front(4);

  Value keyGroup = copyRows(key, kvHead, keyStart, keyCount, kTile,
                            config.kvTile, config.headDim);
  Value valueGroup = copyRows(value, kvHead, keyStart, keyCount, vTile,
                              config.kvTile, config.valueDim);
  // K has landed (V may still be in flight).
  waitGroups(keyGroup, 1);

  // S = Q K^T, one 16 x 8 tile per 8 keys. Q's fragments are registers,
  // or, for wide heads, loaded from shared memory one 16-column slice at a
  // time (so only that slice is live).
  SmallVector<Accumulators> scores = zeros(nTiles);
  Value warpRow = add(mul(warp, kGpuRowsPerWarp), g);
  accumulateTransposed(
      scores, config.headDim / 16,
      [&](int64_t kc) {
        return config.queryInShared
                   ? loadAFragment(
                         qTile, {}, [&](int64_t r) { return add(warpRow, r); },
                         kc)
                   : queryFragments[kc];
      },
      kTile);

  // Scores on global indices (log2 units), -inf past Skv.
  ScoreSemantics stepSem = masked ? sem : sem.withoutKeepConditions();
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  // Accumulator i of score tile nt: register i / 2, element i % 2.
  auto elementIndices = [&](int64_t nt, int64_t i) {
    FragmentOffset at = getMmaFragmentOffset(MmaOperand::C, i / 2, i % 2);
    Value row = clampedRow(at.row);
    Value col = add(add(keyStart, mul(t, 2)), nt * 8 + at.col);
    return std::pair<Value, Value>{row, col};
  };
  for (int64_t nt = 0; nt < nTiles; ++nt) {
    for (int64_t i = 0; i < 4; ++i) {
      auto [row, col] = elementIndices(nt, i);
      Value colClamped = minIndex(col, lastKey);
      SmallVector<Value> idx = {batch, head, row, colClamped};
      Value maskValue = mask ? buildMaskElement(b, loc, mask, idx) : Value();
      Value s = buildLog2ModifiedScore(b, loc, stepSem, scores[nt][i], scale,
                                       idx, maskValue, kvLength, queryLength);
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           col, keyCount);
      scores[nt][i] = arith::SelectOp::create(b, loc, inside, s, negInf);
    }
  }

  // Online softmax per row: rows g ("A", C register 0) and g + 8 ("B", C
  // register 1).
  auto rowMax = [&](Value running, int64_t first) {
    Value m = running;
    for (auto &tile : scores)
      for (int64_t i = first; i < first + 2; ++i)
        m = arith::MaximumFOp::create(b, loc, m, tile[i]);
    return rowReduce(m, /*isMax=*/true);
  };
  Value newMaxA = rowMax(maxA, 0), newMaxB = rowMax(maxB, 2);
  Value safeA = buildSafeRowMax(b, loc, newMaxA),
        safeB = buildSafeRowMax(b, loc, newMaxB);
  Value alphaA = exp2Minus(maxA, safeA), alphaB = exp2Minus(maxB, safeB);
  // Sums stay per thread (the four lanes of a row each add their own
  // columns) until the epilogue: alpha is the same on all four.
  Value partA = arith::MulFOp::create(b, loc, sumA, alphaA);
  Value partB = arith::MulFOp::create(b, loc, sumB, alphaB);
  SmallVector<Accumulators> probs;
  for (int64_t nt = 0; nt < nTiles; ++nt) {
    Accumulators p;
    for (int64_t i = 0; i < 4; ++i) {
      Value e = exp2Minus(scores[nt][i], i < 2 ? safeA : safeB);
      if (i < 2)
        partA = arith::AddFOp::create(b, loc, partA, e);
      else
        partB = arith::AddFOp::create(b, loc, partB, e);
      auto [row, col] = elementIndices(nt, i);
      p[i] = buildDropout(b, loc, sem, e, {batch, head, row, col});
    }
    probs.push_back(p);
  }

  // O = O * alpha + P V; P's C fragments are the A fragments of P V.
  SmallVector<Accumulators> out;
  for (int64_t dt = 0; dt < vTiles; ++dt)
    out.push_back({arith::MulFOp::create(b, loc, acc[4 * dt], alphaA),
                   arith::MulFOp::create(b, loc, acc[4 * dt + 1], alphaA),
                   arith::MulFOp::create(b, loc, acc[4 * dt + 2], alphaB),
                   arith::MulFOp::create(b, loc, acc[4 * dt + 3], alphaB)});
  waitGroups(valueGroup, 0);
  accumulateFromAccumulators(out, probs, vTile);
  // Every warp is done with this tile before the next copy overwrites it.
  gpu::BarrierOp::create(b, loc);

  SmallVector<Value> next = {newMaxA, newMaxB, partA, partB};
  for (auto &tile : out)
    next.append(tile.begin(), tile.end());
  return next;
}

SmallVector<Value> FlashKernelBuilder::buildKeyLoop(Value from, Value to,
                                                    bool masked,
                                                    ValueRange init) {
  auto loop = scf::ForOp::create(
      b, loc, from, to, index(config.kvTile), init,
      [&](OpBuilder &nb, Location nl, Value keyStart, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        SmallVector<Value> next = buildStep(keyStart, masked, carried);
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> FlashKernelBuilder::buildKeyLoops(ValueRange init) {
  MaskAnalysis masks = analyzeMasks(op);
  if (masks.band.empty)
    return SmallVector<Value>(init);
  // Bounds are uniform over the block (the loop body has barriers): the
  // key range of the block's first and last rows.
  BandValues values{batch, head, queryLength, kvLength};
  KeyTileRanges tiles = buildKeyTileRanges(
      b, loc, masks.band, rowStart, lastRow, values, keyCount, config.kvTile);
  if (!masks.exact)
    return buildKeyLoop(tiles.first, tiles.end, /*masked=*/true, init);
  // Partial tiles, full tiles (no keep condition evaluated), partial
  // tiles, as in attn-tile.
  SmallVector<Value> carried =
      buildKeyLoop(tiles.first, tiles.fullStart, /*masked=*/true, init);
  carried =
      buildKeyLoop(tiles.fullStart, tiles.fullEnd, /*masked=*/false, carried);
  return buildKeyLoop(tiles.fullEnd, tiles.end, /*masked=*/true, carried);
}

void FlashKernelBuilder::buildEpilogue(ValueRange carried) {
  Value sumA = rowReduce(carried[2], /*isMax=*/false);
  Value sumB = rowReduce(carried[3], /*isMax=*/false);
  ValueRange acc = carried.drop_front(4);
  // C register `reg` holds row g + 8 reg: rowA for 0, rowB for 1.
  auto store = [&](Value row, Value max, Value sum, int64_t reg) {
    int64_t first = 2 * reg;
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                         queryLength);
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(guard.thenBlock());
    if (lse) {
      // The row's log-sum-exp in natural units, (m + log2(l)) ln 2 with the
      // scores' max m and sum l in log2 units: -inf for a row without
      // keys (m = -inf, l = 0). One lane of the row stores it.
      Value log2Sum = log2(sum);
      Value value = arith::MulFOp::create(
          b, loc, arith::AddFOp::create(b, loc, max, log2Sum),
          f32Const(llvm::numbers::ln2));
      Value first =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, index(0));
      auto lane = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(lane.thenBlock());
      memref::StoreOp::create(b, loc, value, lse, ValueRange{batch, head, row});
    }
    for (int64_t dt = 0; dt < config.valueDim / 8; ++dt) {
      Value x = buildNormalize(b, loc, acc[4 * dt + first], sum);
      Value y = buildNormalize(b, loc, acc[4 * dt + first + 1], sum);
      Value pair = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, element),
          ValueRange{arith::TruncFOp::create(b, loc, element, x),
                     arith::TruncFOp::create(b, loc, element, y)});
      FragmentOffset at = getMmaFragmentOffset(MmaOperand::C, reg, 0);
      vector::StoreOp::create(
          b, loc, pair, out,
          {batch, head, row, add(mul(t, 2), dt * 8 + at.col)},
          /*nontemporal=*/false, llvm::Align(4));
    }
  };
  store(rowA, carried[0], sumA, 0);
  store(rowB, carried[1], sumB, 1);
}

SmallVector<Value> FlashKernelBuilder::build() {
  query = toBuffer(op.getQuery());
  key = toBuffer(op.getKey());
  value = toBuffer(op.getValue());
  if (Value m = op.getMask())
    mask = toBuffer(m);
  if (Value lens = op.getKvLens())
    kvLens = toBuffer(lens);
  if (Value s = op.getDropoutSeed())
    seed = toBuffer(s);
  if (Value s = op.getScaleValue())
    scaleBuffer = toBuffer(s);

  // The destination: a fresh buffer the kernel fills completely.
  auto resultType = op.getResult().getType();
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, op.getInit(), d));
  out = memref::AllocOp::create(
      b, loc,
      MemRefType::get(resultType.getShape(), resultType.getElementType()),
      dynamicSizes);
  RankedTensorType lseType;
  if (Value lseResult = op.getLse()) {
    lseType = cast<RankedTensorType>(lseResult.getType());
    SmallVector<Value> lseSizes;
    for (int64_t d = 0; d < lseType.getRank(); ++d)
      if (lseType.isDynamicDim(d))
        lseSizes.push_back(tensor::DimOp::create(b, loc, op.getLseInit(), d));
    lse = memref::AllocOp::create(
        b, loc, MemRefType::get(lseType.getShape(), lseType.getElementType()),
        lseSizes);
  }

  queryLength = memref::DimOp::create(b, loc, query, 2);
  keyCount = memref::DimOp::create(b, loc, key, 2);
  Value queryHeads = memref::DimOp::create(b, loc, query, 1);
  group = arith::DivUIOp::create(b, loc, queryHeads,
                                 memref::DimOp::create(b, loc, key, 1));
  // A run-time scale lives in device memory: the kernel reads it.
  if (!scaleBuffer)
    scale = buildLog2ScoreScale(b, loc, sem, op.getQuery(), f32);

  Value queryTiles = arith::CeilDivUIOp::create(b, loc, queryLength,
                                                index(config.getQueryTile()));
  // The K and V tiles live in dynamic shared memory, which the NVVM
  // lowering aligns to 16 bytes as cp.async needs (static workgroup
  // buffers get the element type's alignment).
  Value sharedBytes = arith::ConstantIntOp::create(
      b, loc, b.getI32Type(), config.getSharedMemoryBytes());
  auto launch = gpu::LaunchOp::create(
      b, loc, queryTiles, queryHeads, memref::DimOp::create(b, loc, query, 0),
      index(config.getThreads()), index(1), index(1), sharedBytes);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value shared = dynamicSharedMemory();
    int64_t keyBytes = config.kvTile * (config.headDim + 8) * 2;
    int64_t valueBytes = config.kvTile * (config.valueDim + 8) * 2;
    kTile = sharedTile(shared, config.kvTile, config.headDim, 0);
    vTile = sharedTile(shared, config.kvTile, config.valueDim, keyBytes);
    if (config.queryInShared)
      qTile = sharedTile(shared, config.getQueryTile(), config.headDim,
                         keyBytes + valueBytes);
    buildPrologue(launch);
    double negInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> init = {f32Const(negInf), f32Const(negInf), f32Const(0),
                               f32Const(0)};
    init.append(4 * (config.valueDim / 8), f32Const(0));
    buildEpilogue(buildKeyLoops(init));
    gpu::TerminatorOp::create(b, loc);
  }
  SmallVector<Value> results = {bufferization::ToTensorOp::create(
      b, loc, resultType, out, /*restrict=*/true, /*writable=*/true)};
  if (lse)
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, lseType, lse, /*restrict=*/true, /*writable=*/true));
  return results;
}

struct AttnLowerToGPUPass : attn::impl::AttnLowerToGPUBase<AttnLowerToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    // Its lowering is loops of row writes carrying the cache, which the
    // CUDA pipeline's host code cannot run over device buffers.
    WalkResult appends = getOperation()->walk([](AppendPagesOp op) {
      op.emitOpError("is not supported by the CUDA pipeline yet: write the "
                     "new rows into the cache with the CPU pipeline, or "
                     "outside the compiled module");
      return WalkResult::interrupt();
    });
    if (appends.wasInterrupted())
      return signalPassFailure();
    SmallVector<SdpaOp> ops;
    getOperation()->walk([&](SdpaOp op) { ops.push_back(op); });
    for (SdpaOp op : ops) {
      std::string why;
      FailureOr<GpuFlashConfig> config = getGpuFlashConfig(op, kvTile, why);
      if (failed(config)) {
        if (explain)
          op.emitRemark() << "left for the reference lowering: " << why;
        continue;
      }
      if (explain)
        op.emitRemark() << "flash kernel: " << GpuFlashConfig::kWarps
                        << " warps, " << config->getQueryTile()
                        << " query rows x " << config->kvTile
                        << " keys per step, " << config->getSharedMemoryBytes()
                        << " bytes of shared memory"
                        << (config->queryInShared ? ", Q in shared memory"
                                                  : "");
      OpBuilder b(op);
      FlashKernelBuilder builder(op, b, *config);
      op->replaceAllUsesWith(builder.build());
      op.erase();
    }
    SmallVector<SdpaGradOp> gradOps;
    getOperation()->walk([&](SdpaGradOp op) { gradOps.push_back(op); });
    for (SdpaGradOp op : gradOps) {
      std::string why;
      FailureOr<GpuFlashGradConfig> config = getGpuFlashGradConfig(op, why);
      if (failed(config)) {
        if (explain)
          op.emitRemark() << "left for the reference lowering: " << why;
        continue;
      }
      if (explain)
        op.emitRemark() << "flash backward kernels: dQ over " << config->kvTile
                        << " keys per step ("
                        << config->getQueryKernelSharedBytes()
                        << " bytes of shared memory), dK and dV over "
                        << config->queryStep << " queries per step ("
                        << config->getKeyKernelSharedBytes()
                        << " bytes of shared memory"
                        << (config->keysInShared ? ", K and V in shared memory"
                                                 : "")
                        << ")";
      OpBuilder b(op);
      SmallVector<Value> results = buildFlashGradKernels(op, b, *config);
      op.replaceAllUsesWith(results);
      op.erase();
    }
  }
};

} // namespace
