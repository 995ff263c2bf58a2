//===- FlashGradKernels.cpp - attn.sdpa_grad on tensor cores --------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The FlashAttention-2 backward as two `gpu.launch`es per attn.sdpa_grad,
// built from the op like the forward kernel (AttnToGPU.cpp), every product
// on `mma.sync.m16n8k16` with f32 accumulators:
//
// 1. dQ, one block of 4 warps per (64 query rows, query head, batch), each
//    warp 16 rows, like the forward: rowsum(dO O) of its rows from the dO
//    fragments it loads (stored for kernel 2), then over the key tiles the
//    mask band leaves, K and V copied into shared memory with cp.async:
//    S = Q K^T, P = exp2(S - lse), dP = dO V^T, dS = P (dropout(dP) -
//    rowsum(dO O)) dScore/d(q.k), dQ += dS K.
// 2. dK and dV, one block per (64 keys, key/value head, batch), each warp
//    16 keys, over the group's query heads and the query tiles that see the
//    block's keys, Q and dO copied into shared memory: the same products on
//    transposed tiles, S^T = K Q^T, dV += dropout(P)^T dO, dP^T = V dO^T,
//    dK += dS^T Q. A block owns its keys' dK and dV rows, so no two blocks
//    write one element.
//
// Recomputing S and dP in both kernels (seven products instead of five)
// buys a backward without atomics, deterministic, with no dQ buffer in f32.
// P and dS enter their products in the element type, as in the forward.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"

#include "MmaKernelBuilder.h"

#include "attn/Dialect/Attn/Analysis/KeyBand.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

FailureOr<GpuFlashGradConfig> attn::getGpuFlashGradConfig(SdpaGradOp op,
                                                          std::string &why) {
  llvm::raw_string_ostream os(why);
  RankedTensorType qType = op.getQuery().getType();
  Type element = qType.getElementType();
  if (!element.isF16() && !element.isBF16()) {
    os << "element type " << element << " (the tensor-core kernels take f16 "
       << "or bf16)";
    return failure();
  }
  for (Value v : {op.getKey(), op.getValue(), op.getOut(), op.getOutGrad()}) {
    if (cast<RankedTensorType>(v.getType()).getElementType() != element) {
      os << "query, key, value, output and output gradient element types "
         << "differ";
      return failure();
    }
  }
  GpuFlashGradConfig config;
  config.headDim = qType.getDimSize(3);
  config.valueDim = op.getValue().getType().getDimSize(3);
  if (failed(checkMmaHeadDims(config.headDim, config.valueDim, 128,
                              "the backward kernels need", os)))
    return failure();
  if (op.getBlockOffsets() || op.getBlockClasses()) {
    os << "a block-sparse layout or block classes (not supported by the GPU "
          "kernels yet)";
    return failure();
  }
  // Per thread, the dQ kernel holds Q and dO fragments (D / 4 + Dv / 4),
  // dQ (D / 2) and three score-sized tiles (S, P and dP, kv-tile / 2 each);
  // the dK/dV kernel dK and dV (D / 2 + Dv / 2), the same three tiles of
  // query-step / 2, and K and V fragments (D / 4 + Dv / 4). Past 64, K and
  // V wait in shared memory and the queries are swept twice (dV, then dK),
  // so that one of the two accumulators is live at a time. These sizes
  // keep every form within the 255 registers of a thread without a spill
  // (test/Integration/CUDA/cuda-grad-kernels.test reads ptxas' report).
  int64_t widest = std::max(config.headDim, config.valueDim);
  config.kvTile = widest <= 64 ? 32 : 16;
  config.queryStep = widest <= 64 ? 32 : 16;
  config.keysInShared = widest > 64;
  return config;
}

namespace {

/// Builds the two kernels of one attn.sdpa_grad.
class FlashGradBuilder : MmaKernelBuilder {
public:
  FlashGradBuilder(SdpaGradOp op, OpBuilder &b,
                   const GpuFlashGradConfig &config)
      : MmaKernelBuilder(b, op.getLoc(),
                         op.getQuery().getType().getElementType(),
                         config.getThreads()),
        op(op), config(config), sem(getScoreSemantics(op)),
        masks(analyzeMasks(op)) {}

  /// Emits both launches before `op`; returns dQ, dK, dV.
  SmallVector<Value> build();

private:
  SdpaGradOp op;
  GpuFlashGradConfig config;
  ScoreSemantics sem;
  MaskAnalysis masks;

  // Host-side values the kernels capture.
  Value query, key, value, out, outGrad, lse, mask, kvLens, seed, scaleBuffer;
  Value queryGrad, keyGrad, valueGrad, rowTerms;
  Value batches, queryHeads, keyHeads, queryLength, keyCount, group;
  Log2ScoreScale scale;
  Value naturalScale;

  // Kernel-side values of the launch being built.
  Value kvLength, lastQuery, lastKey;

  Value ceilDiv(Value x, int64_t y) {
    return arith::CeilDivUIOp::create(b, loc, x, index(y));
  }
  Value less(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  /// A fresh buffer of `tensor`'s type (its dynamic sizes from `like`).
  Value allocLike(RankedTensorType type, Value like);
  /// A launch of `threads` threads per block with `sharedBytes` of dynamic
  /// shared memory; the builder is left at the start of its body, with the
  /// batch, lane coordinates and per-batch key count set.
  gpu::LaunchOp launch(Value gridX, Value gridY, int64_t sharedBytes);
  /// The row's lse in log2 units, made safe for rows without keys (the
  /// scores are -inf there, and P is 0).
  Value loadLse(Value head, Value row);

  /// P and dScore/d(q.k) of element (query, key) of `head` from the raw
  /// product q.k; P is 0 where `inside` is false (padding).
  std::pair<Value, Value> probability(Value raw, Value head, Value query,
                                      Value key, Value inside, bool masked,
                                      Value lseSafe);
  /// dS = P (dropout(dP) - rowsum(dO O)) dScore/d(q.k).
  Value scoreGrad(Value p, Value probGrad, Value rowTerm, Value derivative,
                  ArrayRef<Value> idx) {
    return buildScoreGradient(b, loc, p,
                              buildDropout(b, loc, sem, probGrad, idx), rowTerm,
                              derivative);
  }
  /// Stores row `r` (0: the lane's row g, 1: g + 8) of C tiles `acc` into
  /// `dst`[batch, head, row, :] when row < rowCount.
  void storeRow(Value dst, Value head, Value row, Value rowCount,
                ArrayRef<Accumulators> acc, int64_t r);

  void buildQueryGradKernel();
  void buildKeyValueGradKernel();
};

/// Accumulator tiles as the flat list of values a loop carries.
SmallVector<Value> flatten(ArrayRef<Accumulators> tiles) {
  SmallVector<Value> flat;
  for (const Accumulators &tile : tiles)
    flat.append(tile.begin(), tile.end());
  return flat;
}

SmallVector<Accumulators> unflatten(ValueRange flat) {
  SmallVector<Accumulators> tiles;
  for (size_t i = 0; i < flat.size(); i += 4)
    tiles.push_back({flat[i], flat[i + 1], flat[i + 2], flat[i + 3]});
  return tiles;
}

Value FlashGradBuilder::allocLike(RankedTensorType type, Value like) {
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, like, d));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamicSizes);
}

gpu::LaunchOp FlashGradBuilder::launch(Value gridX, Value gridY,
                                       int64_t sharedBytes) {
  Value bytes =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedBytes);
  auto launchOp = gpu::LaunchOp::create(
      b, loc, gridX, gridY, batches, index(threads), index(1), index(1), bytes);
  b.setInsertionPointToStart(&launchOp.getBody().front());
  batch = launchOp.getBlockIds().z;
  setLaneCoordinates(launchOp.getThreadIds().x);
  kvLength = keyCount;
  if (kvLens)
    kvLength = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, kvLens, batch));
  lastQuery = arith::SubIOp::create(b, loc, queryLength, index(1));
  lastKey = arith::SubIOp::create(b, loc, keyCount, index(1));
  // A run-time dropout seed, read once per thread from device memory.
  if (seed)
    sem.seedValue = memref::LoadOp::create(b, loc, seed, ValueRange{});
  // Likewise a run-time scale (the host has none to capture then).
  if (scaleBuffer) {
    sem.scaleValue = memref::LoadOp::create(b, loc, scaleBuffer, ValueRange{});
    scale = buildLog2ScoreScale(b, loc, sem, op.getQuery(), f32);
    naturalScale = buildScale(b, loc, sem, op.getQuery(), f32);
  }
  return launchOp;
}

Value FlashGradBuilder::loadLse(Value head, Value row) {
  Value x = memref::LoadOp::create(b, loc, lse, ValueRange{batch, head, row});
  Value log2e = f32Const(llvm::numbers::log2e);
  return buildSafeRowMax(b, loc, arith::MulFOp::create(b, loc, x, log2e));
}

std::pair<Value, Value> FlashGradBuilder::probability(Value raw, Value head,
                                                      Value query, Value key,
                                                      Value inside, bool masked,
                                                      Value lseSafe) {
  ScoreSemantics stepSem = masked ? sem : sem.withoutKeepConditions();
  SmallVector<Value> idx = {batch, head, query, key};
  Value maskValue =
      stepSem.hasMask ? buildMaskElement(b, loc, mask, idx) : Value();
  Value s = buildLog2ModifiedScore(b, loc, stepSem, raw, scale, idx, maskValue,
                                   kvLength, queryLength);
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  s = arith::SelectOp::create(b, loc, inside, s, negInf);
  Value derivative = sem.scoreMod
                         ? buildScoreDerivative(b, loc, stepSem, raw,
                                                naturalScale, idx, maskValue)
                         : naturalScale;
  return {exp2Minus(s, lseSafe), derivative};
}

void FlashGradBuilder::storeRow(Value dst, Value head, Value row,
                                Value rowCount, ArrayRef<Accumulators> acc,
                                int64_t r) {
  auto guard = scf::IfOp::create(b, loc, less(row, rowCount),
                                 /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g2(b);
  b.setInsertionPointToStart(guard.thenBlock());
  for (auto [dt, tile] : llvm::enumerate(acc)) {
    FragmentOffset at = getMmaFragmentOffset(MmaOperand::C, r, 0);
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, element),
        ValueRange{arith::TruncFOp::create(b, loc, element, tile[2 * r]),
                   arith::TruncFOp::create(b, loc, element, tile[2 * r + 1])});
    vector::StoreOp::create(
        b, loc, pair, dst,
        {batch, head, row, add(mul(t, 2), int64_t(dt) * 8 + at.col)},
        /*nontemporal=*/false, llvm::Align(4));
  }
}

void FlashGradBuilder::buildQueryGradKernel() {
  OpBuilder::InsertionGuard guard(b);
  int64_t rowTile = config.getRowTile(), kvTile = config.kvTile;
  int64_t d = config.headDim, dv = config.valueDim;
  gpu::LaunchOp launchOp = launch(ceilDiv(queryLength, rowTile), queryHeads,
                                  config.getQueryKernelSharedBytes());
  Value head = launchOp.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, group);
  Value shared = dynamicSharedMemory();
  Value kTile = sharedTile(shared, kvTile, d, 0);
  Value vTile = sharedTile(shared, kvTile, dv, kvTile * (d + 8) * 2);

  Value rowStart = mul(launchOp.getBlockIds().x, rowTile);
  Value blockLastRow = arith::SubIOp::create(
      b, loc, minIndex(add(rowStart, rowTile), queryLength), index(1));
  // The lane's rows g and g + 8; rows past Sq compute on the last row and
  // are never stored.
  Value rows[2];
  rows[0] = add(add(rowStart, mul(warp, kGpuRowsPerWarp)), g);
  rows[1] = add(rows[0], 8);
  Value clamped[2] = {minIndex(rows[0], lastQuery),
                      minIndex(rows[1], lastQuery)};
  auto rowAt = [&](int64_t offset) { return clamped[offset / 8]; };

  // Q and dO as A fragments for the whole key loop; rowsum(dO O) of the
  // lane's rows from the same dO elements, then across the row's lanes.
  SmallVector<std::array<Value, 4>> queryFragments, outGradFragments;
  for (int64_t kc = 0; kc < d / 16; ++kc)
    queryFragments.push_back(loadAFragment(query, {batch, head}, rowAt, kc));
  Value partial[2] = {f32Const(0), f32Const(0)};
  for (int64_t kc = 0; kc < dv / 16; ++kc) {
    std::array<Value, 4> fragment;
    for (int64_t reg = 0; reg < 4; ++reg) {
      FragmentOffset at = getMmaFragmentOffset(MmaOperand::A, reg, 0);
      SmallVector<Value> idx = {batch, head, rowAt(at.row),
                                add(mul(t, 2), kc * 16 + at.col)};
      Value gradPair = loadVectorPair(outGrad, idx);
      Value outPair = loadVectorPair(out, idx);
      fragment[reg] = asRegister(gradPair);
      for (int64_t e = 0; e < 2; ++e) {
        auto widen = [&](Value pair) -> Value {
          Value x =
              vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{e});
          return arith::ExtFOp::create(b, loc, f32, x);
        };
        Value &sum = partial[at.row / 8];
        sum = math::FmaOp::create(b, loc, widen(gradPair), widen(outPair), sum);
      }
    }
    outGradFragments.push_back(fragment);
  }
  Value rowTerm[2], lseSafe[2];
  for (int64_t r = 0; r < 2; ++r) {
    rowTerm[r] = rowReduce(partial[r], /*isMax=*/false);
    lseSafe[r] = loadLse(head, clamped[r]);
    // One lane of the row stores its term for the dK/dV kernel.
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, index(0));
    auto store = scf::IfOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, first, less(rows[r], queryLength)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(store.thenBlock());
    memref::StoreOp::create(b, loc, rowTerm[r], rowTerms,
                            ValueRange{batch, head, rows[r]});
  }

  auto step = [&](Value keyStart, bool masked,
                  ValueRange carried) -> SmallVector<Value> {
    int64_t nTiles = kvTile / 8;
    Value keyGroup =
        copyRows(key, kvHead, keyStart, keyCount, kTile, kvTile, d);
    Value valueGroup =
        copyRows(value, kvHead, keyStart, keyCount, vTile, kvTile, dv);
    waitGroups(keyGroup, 1);
    SmallVector<Accumulators> scores = zeros(nTiles);
    accumulateTransposed(
        scores, d / 16, [&](int64_t kc) { return queryFragments[kc]; }, kTile);
    // Element i of tile nt: register i / 2 (row g or g + 8), element i % 2.
    SmallVector<Accumulators> probs(nTiles), derivatives(nTiles);
    auto keyAt = [&](int64_t nt, int64_t i) {
      FragmentOffset at = getMmaFragmentOffset(MmaOperand::C, i / 2, i % 2);
      return add(add(keyStart, mul(t, 2)), nt * 8 + at.col);
    };
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t i = 0; i < 4; ++i) {
        Value col = keyAt(nt, i);
        std::tie(probs[nt][i], derivatives[nt][i]) = probability(
            scores[nt][i], head, clamped[i / 2], minIndex(col, lastKey),
            less(col, keyCount), masked, lseSafe[i / 2]);
      }
    waitGroups(valueGroup, 0);
    // dP = dO V^T, then dS in place of it.
    SmallVector<Accumulators> grads = zeros(nTiles);
    accumulateTransposed(
        grads, dv / 16, [&](int64_t kc) { return outGradFragments[kc]; },
        vTile);
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t i = 0; i < 4; ++i)
        grads[nt][i] = scoreGrad(
            probs[nt][i], grads[nt][i], rowTerm[i / 2], derivatives[nt][i],
            {batch, head, clamped[i / 2], minIndex(keyAt(nt, i), lastKey)});
    // dQ += dS K; dS's C fragments are the A fragments over its keys.
    SmallVector<Accumulators> acc = unflatten(carried);
    accumulateFromAccumulators(acc, grads, kTile);
    // Every warp is done with the tiles before the next copy.
    gpu::BarrierOp::create(b, loc);
    return flatten(acc);
  };
  auto loop = [&](Value from, Value to, bool masked, ValueRange init) {
    auto forOp = scf::ForOp::create(
        b, loc, from, to, index(kvTile), init,
        [&](OpBuilder &nb, Location nl, Value keyStart, ValueRange carried) {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, loc, step(keyStart, masked, carried));
        });
    return SmallVector<Value>(forOp.getResults());
  };

  SmallVector<Value> acc = flatten(zeros(d / 8));
  if (!masks.band.empty) {
    // The key tiles of the block's rows, as in the forward kernel: partial
    // ones masked, full ones not.
    BandValues values{batch, head, queryLength, kvLength};
    KeyTileRanges tiles = buildKeyTileRanges(
        b, loc, masks.band, rowStart, blockLastRow, values, keyCount, kvTile);
    if (!masks.exact) {
      acc = loop(tiles.first, tiles.end, /*masked=*/true, acc);
    } else {
      acc = loop(tiles.first, tiles.fullStart, /*masked=*/true, acc);
      acc = loop(tiles.fullStart, tiles.fullEnd, /*masked=*/false, acc);
      acc = loop(tiles.fullEnd, tiles.end, /*masked=*/true, acc);
    }
  }
  SmallVector<Accumulators> result = unflatten(acc);
  for (int64_t r = 0; r < 2; ++r)
    storeRow(queryGrad, head, rows[r], queryLength, result, r);
  gpu::TerminatorOp::create(b, loc);
}

void FlashGradBuilder::buildKeyValueGradKernel() {
  OpBuilder::InsertionGuard guard(b);
  int64_t rowTile = config.getRowTile(), queryStep = config.queryStep;
  int64_t d = config.headDim, dv = config.valueDim;
  gpu::LaunchOp launchOp = launch(ceilDiv(keyCount, rowTile), keyHeads,
                                  config.getKeyKernelSharedBytes());
  Value kvHead = launchOp.getBlockIds().y;
  Value shared = dynamicSharedMemory();
  int64_t queryBytes = queryStep * (d + 8) * 2;
  int64_t stepBytes = queryStep * (d + dv + 16) * 2;
  Value qTile = sharedTile(shared, queryStep, d, 0);
  Value gradTile = sharedTile(shared, queryStep, dv, queryBytes);

  Value keyStart = mul(launchOp.getBlockIds().x, rowTile);
  Value blockLastKey = arith::SubIOp::create(
      b, loc, minIndex(add(keyStart, rowTile), keyCount), index(1));
  Value warpKey = add(mul(warp, kGpuRowsPerWarp), g);
  Value keys[2];
  keys[0] = add(keyStart, warpKey);
  keys[1] = add(keys[0], 8);
  Value clamped[2] = {minIndex(keys[0], lastKey), minIndex(keys[1], lastKey)};

  // K and V as A fragments (keys x D, keys x Dv): in registers, or for wide
  // heads copied once into shared memory and loaded where used.
  SmallVector<std::array<Value, 4>> keyFragments, valueFragments;
  Value kBlock, vBlock;
  if (config.keysInShared) {
    kBlock = sharedTile(shared, rowTile, d, stepBytes);
    vBlock = sharedTile(shared, rowTile, dv, stepBytes + rowTile * (d + 8) * 2);
    copyRows(key, kvHead, keyStart, keyCount, kBlock, rowTile, d);
    Value copied =
        copyRows(value, kvHead, keyStart, keyCount, vBlock, rowTile, dv);
    waitGroups(copied, 0);
  } else {
    auto keyAt = [&](int64_t offset) { return clamped[offset / 8]; };
    for (int64_t kc = 0; kc < d / 16; ++kc)
      keyFragments.push_back(loadAFragment(key, {batch, kvHead}, keyAt, kc));
    for (int64_t kc = 0; kc < dv / 16; ++kc)
      valueFragments.push_back(
          loadAFragment(value, {batch, kvHead}, keyAt, kc));
  }
  auto fragment = [&](bool isKey, int64_t kc) {
    if (!config.keysInShared)
      return isKey ? keyFragments[kc] : valueFragments[kc];
    return loadAFragment(
        isKey ? kBlock : vBlock, {},
        [&](int64_t offset) { return add(warpKey, offset); }, kc);
  };

  // One step over queries [queryStart, queryStart + queryStep) of `head`:
  // carries dK then dV when `withKey` and `withValue`, else the one asked
  // for (wide heads sweep the queries twice, dV then dK, so that only one
  // of them is in registers at a time).
  auto step = [&](Value head, Value queryStart, bool masked, bool withKey,
                  bool withValue, ValueRange carried) -> SmallVector<Value> {
    int64_t nTiles = queryStep / 8;
    Value queryGroup =
        copyRows(query, head, queryStart, queryLength, qTile, queryStep, d);
    Value gradGroup = copyRows(outGrad, head, queryStart, queryLength, gradTile,
                               queryStep, dv);
    waitGroups(queryGroup, 1);
    // S^T = K Q^T: rows are the warp's keys, columns the step's queries.
    SmallVector<Accumulators> scores = zeros(nTiles);
    accumulateTransposed(
        scores, d / 16,
        [&](int64_t kc) { return fragment(/*isKey=*/true, kc); }, qTile);
    SmallVector<Accumulators> probs(nTiles), dropped(nTiles),
        derivatives(nTiles);
    SmallVector<std::array<Value, 2>> rowTerm(nTiles);
    SmallVector<std::array<Value, 2>> queries(nTiles);
    for (int64_t nt = 0; nt < nTiles; ++nt) {
      // The lane's two query columns of the tile, with their lse and
      // rowsum(dO O) (the columns are the same for both of its rows).
      Value lseSafe[2];
      for (int64_t e = 0; e < 2; ++e) {
        FragmentOffset at = getMmaFragmentOffset(MmaOperand::C, 0, e);
        Value q = add(add(queryStart, mul(t, 2)), nt * 8 + at.col);
        queries[nt][e] = q;
        Value qClamped = minIndex(q, lastQuery);
        lseSafe[e] = loadLse(head, qClamped);
        rowTerm[nt][e] = memref::LoadOp::create(
            b, loc, rowTerms, ValueRange{batch, head, qClamped});
      }
      for (int64_t i = 0; i < 4; ++i) {
        Value q = queries[nt][i % 2];
        Value qClamped = minIndex(q, lastQuery);
        std::tie(probs[nt][i], derivatives[nt][i]) =
            probability(scores[nt][i], head, qClamped, clamped[i / 2],
                        less(q, queryLength), masked, lseSafe[i % 2]);
        dropped[nt][i] = buildDropout(b, loc, sem, probs[nt][i],
                                      {batch, head, qClamped, clamped[i / 2]});
      }
    }
    waitGroups(gradGroup, 0);
    SmallVector<Accumulators> acc = unflatten(carried);
    MutableArrayRef<Accumulators> keyAcc(acc.data(), withKey ? d / 8 : 0);
    MutableArrayRef<Accumulators> valueAcc(acc.data() + keyAcc.size(),
                                           withValue ? dv / 8 : 0);
    // dV += dropout(P)^T dO over the step's queries.
    if (withValue)
      accumulateFromAccumulators(valueAcc, dropped, gradTile);
    if (!withKey) {
      gpu::BarrierOp::create(b, loc);
      return flatten(acc);
    }
    // dP^T = V dO^T, then dS^T in place of it.
    SmallVector<Accumulators> grads = zeros(nTiles);
    accumulateTransposed(
        grads, dv / 16,
        [&](int64_t kc) { return fragment(/*isKey=*/false, kc); }, gradTile);
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t i = 0; i < 4; ++i)
        grads[nt][i] = scoreGrad(
            probs[nt][i], grads[nt][i], rowTerm[nt][i % 2], derivatives[nt][i],
            {batch, head, minIndex(queries[nt][i % 2], lastQuery),
             clamped[i / 2]});
    // dK += dS^T Q.
    accumulateFromAccumulators(keyAcc, grads, qTile);
    gpu::BarrierOp::create(b, loc);
    return flatten(acc);
  };

  // The accumulators after every step of a sweep over the group's query
  // heads and their query steps.
  auto sweep = [&](bool withKey, bool withValue) -> SmallVector<Value> {
    SmallVector<Value> acc =
        flatten(zeros((withKey ? d / 8 : 0) + (withValue ? dv / 8 : 0)));
    if (masks.band.empty)
      return acc;
    // Every query step of every query head of the group; a step whose rows
    // see none of the block's keys is skipped, one whose rows all see all
    // of them evaluates no mask (conditions uniform over the block, so the
    // barriers inside are reached by every thread).
    Value queryTiles = ceilDiv(queryLength, queryStep);
    auto heads = scf::ForOp::create(
        b, loc, index(0), group, index(1), acc,
        [&](OpBuilder &nb, Location, Value groupHead, ValueRange headAcc) {
          OpBuilder::InsertionGuard g1(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value head =
              add(arith::MulIOp::create(b, loc, kvHead, group), groupHead);
          auto queriesLoop = scf::ForOp::create(
              b, loc, index(0), queryTiles, index(1), headAcc,
              [&](OpBuilder &nb2, Location, Value tile, ValueRange stepAcc) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(nb2.getInsertionBlock(),
                                    nb2.getInsertionPoint());
                Value queryStart = mul(tile, queryStep);
                Value last = arith::SubIOp::create(
                    b, loc, minIndex(add(queryStart, queryStep), queryLength),
                    index(1));
                BandValues values{batch, head, queryLength, kvLength};
                auto [seenFrom, seenTo] =
                    buildRowsKeyRange(b, loc, masks.band, queryStart, last,
                                      values, keyCount, /*everyRow=*/false);
                // Keys [from, to) and the block's [keyStart, blockLastKey]:
                // from <= x and y < to.
                auto bounds = [&](Value from, Value x, Value y, Value to) {
                  return arith::AndIOp::create(
                      b, loc,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                            from, x),
                      less(y, to));
                };
                // Some row sees some key of the block.
                Value visible =
                    bounds(seenFrom, blockLastKey, keyStart, seenTo);
                auto ifVisible =
                    scf::IfOp::create(b, loc, stepAcc.getTypes(), visible,
                                      /*withElseRegion=*/true);
                b.setInsertionPointToStart(ifVisible.elseBlock());
                scf::YieldOp::create(b, loc, stepAcc);
                b.setInsertionPointToStart(ifVisible.thenBlock());
                if (!masks.exact) {
                  scf::YieldOp::create(b, loc,
                                       step(head, queryStart, /*masked=*/true,
                                            withKey, withValue, stepAcc));
                } else {
                  auto [fullFrom, fullTo] =
                      buildRowsKeyRange(b, loc, masks.band, queryStart, last,
                                        values, keyCount, /*everyRow=*/true);
                  // Every row sees every key of the block.
                  Value full = bounds(fullFrom, keyStart, blockLastKey, fullTo);
                  auto ifFull =
                      scf::IfOp::create(b, loc, stepAcc.getTypes(), full,
                                        /*withElseRegion=*/true);
                  scf::YieldOp::create(b, loc, ifFull.getResults());
                  for (bool isFull : {true, false}) {
                    b.setInsertionPointToStart(isFull ? ifFull.thenBlock()
                                                      : ifFull.elseBlock());
                    scf::YieldOp::create(b, loc,
                                         step(head, queryStart, !isFull,
                                              withKey, withValue, stepAcc));
                  }
                }
                b.setInsertionPointAfter(ifVisible);
                scf::YieldOp::create(b, loc, ifVisible.getResults());
              });
          scf::YieldOp::create(b, loc, queriesLoop.getResults());
        });
    return SmallVector<Value>(heads.getResults());
  };
  auto store = [&](Value dst, ArrayRef<Accumulators> acc) {
    for (int64_t r = 0; r < 2; ++r)
      storeRow(dst, kvHead, keys[r], keyCount, acc, r);
  };
  if (config.keysInShared) {
    // dV is stored before the dK sweep: its registers are free for it.
    store(valueGrad, unflatten(sweep(/*withKey=*/false, /*withValue=*/true)));
    store(keyGrad, unflatten(sweep(/*withKey=*/true, /*withValue=*/false)));
  } else {
    SmallVector<Accumulators> both = unflatten(sweep(true, true));
    store(keyGrad, ArrayRef(both).take_front(d / 8));
    store(valueGrad, ArrayRef(both).drop_front(d / 8));
  }
  gpu::TerminatorOp::create(b, loc);
}

SmallVector<Value> FlashGradBuilder::build() {
  query = toBuffer(op.getQuery());
  key = toBuffer(op.getKey());
  value = toBuffer(op.getValue());
  out = toBuffer(op.getOut());
  outGrad = toBuffer(op.getOutGrad());
  lse = toBuffer(op.getLse());
  if (Value m = op.getMask())
    mask = toBuffer(m);
  if (Value lens = op.getKvLens())
    kvLens = toBuffer(lens);
  if (Value s = op.getDropoutSeed())
    seed = toBuffer(s);
  if (Value s = op.getScaleValue())
    scaleBuffer = toBuffer(s);

  // Fresh buffers the kernels fill completely (every row below Sq or Skv
  // is stored, zeros where no key or query takes part).
  queryGrad = allocLike(op.getQueryGrad().getType(), op.getQueryGradInit());
  keyGrad = allocLike(op.getKeyGrad().getType(), op.getKeyGradInit());
  valueGrad = allocLike(op.getValueGrad().getType(), op.getValueGradInit());
  // rowsum(dO O) of every row, from the dQ kernel to the dK/dV kernel.
  rowTerms = allocLike(op.getLse().getType(), op.getLse());

  batches = memref::DimOp::create(b, loc, query, 0);
  queryHeads = memref::DimOp::create(b, loc, query, 1);
  keyHeads = memref::DimOp::create(b, loc, key, 1);
  queryLength = memref::DimOp::create(b, loc, query, 2);
  keyCount = memref::DimOp::create(b, loc, key, 2);
  group = arith::DivUIOp::create(b, loc, queryHeads, keyHeads);
  // A run-time scale lives in device memory: the kernels read it.
  if (!scaleBuffer) {
    scale = buildLog2ScoreScale(b, loc, sem, op.getQuery(), f32);
    naturalScale = buildScale(b, loc, sem, op.getQuery(), f32);
  }

  // Launched in this order on one stream: the second reads the row terms
  // the first stores.
  buildQueryGradKernel();
  buildKeyValueGradKernel();

  SmallVector<Value> results;
  for (auto [buffer, type] :
       {std::pair{queryGrad, op.getQueryGrad().getType()},
        std::pair{keyGrad, op.getKeyGrad().getType()},
        std::pair{valueGrad, op.getValueGrad().getType()}})
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
  return results;
}

} // namespace

SmallVector<Value>
attn::buildFlashGradKernels(SdpaGradOp op, OpBuilder &b,
                            const GpuFlashGradConfig &config) {
  return FlashGradBuilder(op, b, config).build();
}
