//===- TileBuilderBase.h - pieces the tiled lowerings share -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What the tiled forward (attn.sdpa) and the tiled backward (attn.sdpa_grad)
// build the same way: tile sizes and slices, padding to whole tiles, K and V
// packed into contiguous per-tile blocks, and the tile contractions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEBUILDERBASE_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEBUILDERBASE_H

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Parallel iterations a tiled loop aims for where its natural ones
/// (batch x heads) are few: enough for the threads of a CPU to share
/// (dynamically scheduled), few enough that each has whole key tiles to
/// work on. The backward splits keys into chunks to reach it, and so does
/// the forward of ops with one query tile per head (decode).
constexpr int64_t kMinParallelIterations = 16;

/// Tile-local tensors are 2-D ([rows, keys] or [rows, features]) and 1-D
/// ([rows]); global indices are recovered by adding the tile offsets.
class TileBuilderBase {
public:
  /// The parallel loop build() made (the outermost loop of the nest).
  scf::ForallOp getLoop() const { return loop; }

protected:
  TileBuilderBase(OpBuilder &b, Location loc, int64_t qTile, int64_t kvTile,
                  Type element)
      : b(b), loc(loc), ctx(b.getContext()), qTile(qTile), kvTile(kvTile),
        element(element), acc(getAccumulatorType(element)) {}

  Value constIndex(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  TypedAttr accAttr(double v) { return b.getFloatAttr(acc, v); }

  /// The value of `length` where it is a constant or the static size of a
  /// tensor dimension.
  static std::optional<int64_t> getStaticLength(Value length) {
    if (auto dim = length.getDefiningOp<tensor::DimOp>()) {
      std::optional<int64_t> index = dim.getConstantIndex();
      auto type = cast<ShapedType>(dim.getSource().getType());
      if (index && !type.isDynamicDim(*index))
        return type.getDimSize(*index);
      return std::nullopt;
    }
    return getConstantIntValue(length);
  }

  /// The size of the tile at `start` (a multiple of `tile`):
  /// `min(tile, total - start)`, as an affine.min that later passes bound by
  /// `tile` (value-bounds analysis) to pick vector sizes; or the constant
  /// where a static `total` makes every tile the same (a multiple of
  /// `tile`, or a single tile). Static tiles keep the tensors of the loops
  /// static, and with them the slice comparisons of bufferization and
  /// hoisting cheap: a 2048-long causal problem compiles in 0.5 s instead
  /// of 1.9 s.
  Value tileSize(Value start, Value total, int64_t tile) {
    if (std::optional<int64_t> n = getStaticLength(total)) {
      if (*n % tile == 0)
        return constIndex(tile);
      if (*n < tile)
        return constIndex(*n);
    }
    AffineExpr d0, s0;
    bindDims(ctx, d0);
    bindSymbols(ctx, s0);
    auto map =
        AffineMap::get(1, 1, {b.getAffineConstantExpr(tile), s0 - d0}, ctx);
    return affine::AffineMinOp::create(b, loc, map, ValueRange{start, total});
  }

  /// `tensor[b, h, start : start + len, :]` as a 2-D tensor.
  Value slice2d(Value tensor, Value batch, Value head, Value start, Value len) {
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<OpFoldResult> offsets = {batch, head, start, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       len,
                                       tensor::getMixedSize(b, loc, tensor, 3)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto sliceType = RankedTensorType::get(
        {ShapedType::kDynamic, type.getDimSize(3)}, type.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, sliceType, tensor, offsets,
                                          sizes, strides);
  }

  /// The tile starting at key `start` (a multiple of kvTile) of a tensor
  /// packed by packTiles, [B, H, key tiles, ...], without its first three
  /// dimensions; dimension `keyDim` of the rest holds the keys (or key
  /// pairs) and is cut to `keys`.
  Value packedTile(Value packed, Value batch, Value kvHead, Value start,
                   unsigned keyDim, Value keys) {
    auto type = cast<RankedTensorType>(packed.getType());
    Value tile = arith::DivUIOp::create(b, loc, start, constIndex(kvTile));
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    offsets[0] = batch;
    offsets[1] = kvHead;
    offsets[2] = tile;
    SmallVector<OpFoldResult> sizes(3, b.getIndexAttr(1));
    SmallVector<int64_t> sliceShape;
    for (int64_t d = 3; d < type.getRank(); ++d) {
      bool isKey = d - 3 == keyDim;
      sizes.push_back(isKey ? OpFoldResult(keys)
                            : tensor::getMixedSize(b, loc, packed, d));
      sliceShape.push_back(isKey ? ShapedType::kDynamic : type.getDimSize(d));
    }
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sliceShape, type.getElementType()),
        packed, offsets, sizes, strides);
  }

  /// `x` padded at the end of dimension `dim` with `padValue` to a whole
  /// number of `tile`s.
  Value padToTiles(Value x, int64_t dim, int64_t tile, TypedAttr padValue);

  /// `x` ([B, H, Skv, F]) padded with zeros to whole key tiles,
  /// [B, H, ceil(Skv / kvTile) * kvTile, F]. (Zeros: a padding key's
  /// probability is 0, and 0 times a value must stay 0.)
  Value padToKeyTiles(Value x) {
    return padToTiles(x, 2, kvTile,
                      b.getZeroAttr(getElementTypeOrSelf(x.getType())));
  }

  /// `x` ([B, H, Skv, F]) padded with zeros to whole key tiles and packed
  /// as [B, H, key tiles, ...]: the keys of a tile split into `keySplit`
  /// (whose product is kvTile), F into `featureSplit` (F itself when
  /// empty), then permuted by `permutation`. Each step then reads one
  /// contiguous block. (Rows of a plain K^T lie Skv elements apart, and at
  /// power-of-two lengths all D of them fall into the same L1 set.) The
  /// padding keys are never visible.
  Value packTiles(Value x, ArrayRef<int64_t> keySplit,
                  ArrayRef<int64_t> featureSplit,
                  ArrayRef<int64_t> permutation);

  /// `init + lhs rhs` in the accumulator type: lhs [rows, k] by rhs
  /// [k, n], or with pairs lhs [rows, k/2, 2] by rhs [k/2, n, 2].
  Value buildContraction(Value lhs, Value rhs, Value init);

  /// `init + lhs rhsT^T` in the accumulator type, lhs [rows, k] by rhsT
  /// [n, k] (K as it lies in memory): each result element is a dot product
  /// of two contiguous rows (attn-vectorize-tiles keeps its partial sums
  /// in lanes and reduces each once).
  Value buildDotContraction(Value lhs, Value rhsT, Value init);

  /// `init + lhs rhs` for a right operand in panels: lhs [rows, k] by rhs
  /// [panels, k, panel] into init [rows, panels * panel] (static columns),
  /// contracted through a [rows, panels, panel] view of it, the panel
  /// innermost in both (the same row-major elements).
  Value buildPanelContraction(Value lhs, Value rhs, Value init);

  /// Key tiles to visit: those starting in [from, to), then, when `thenFrom`
  /// is set, those starting in [thenFrom, thenTo).
  struct KeyTiles {
    Value from, to;
    Value thenFrom = {}, thenTo = {};
  };

  /// One `scf.for` over `tiles` carrying `init`; `step(keyStart, carried)`
  /// builds a step and returns what it yields. Two ranges share one loop,
  /// and so one copy of the step (over tile numbers, the first range's
  /// first).
  SmallVector<Value> buildKeyTileLoop(
      const KeyTiles &tiles, ValueRange init,
      function_ref<SmallVector<Value>(Value keyStart, ValueRange carried)>
          step);

  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  int64_t qTile, kvTile;
  Type element, acc;
  // Whether the contractions run on bf16 pairs (attn-tile bf16-pairs).
  bool pairs = false;
  scf::ForallOp loop;
};

/// Adds the pattern tiling attn.sdpa_grad (TileAttentionGrad.cpp) for
/// attn-tile.
void populateTileSdpaGradPatterns(RewritePatternSet &patterns,
                                  const AttnTileOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEBUILDERBASE_H
