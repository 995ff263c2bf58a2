//===- TilingInterfaceImpl.cpp - attn.sdpa as an upstream tileable op -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// With TilingInterface, a schedule written in the transform dialect (or any
// upstream tiling driver) can split attn.sdpa into an scf.forall of smaller
// attn.sdpa ops over (batch, query head, query row) tiles, which the attn
// lowerings then take as they take any op. Rows of attention are
// independent, so a tile needs only its rows of Q, the destination and the
// log-sum-exp, its batch's (and heads') K, V and masks. What makes a tile
// not an attn.sdpa of its own is refused: conditions that depend on the
// position of a row, head or batch inside the op (causal and windows with a
// row tile, modifier regions, dropout, block layouts), and head tiles that
// split a group of query heads sharing a key/value head.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/TilingInterfaceImpl.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Dimensions of the iteration domain: those of the result's first three.
enum Loop { Batch = 0, Head = 1, Row = 2, NumLoops = 3 };

/// Why the tile [offsets, offsets + sizes) of `op` cannot be an attn.sdpa of
/// its own, or an empty string.
std::string whyNotTileable(SdpaOp op, ArrayRef<OpFoldResult> offsets,
                           ArrayRef<OpFoldResult> sizes) {
  auto queryType = op.getQuery().getType();
  auto isWhole = [&](unsigned loop) {
    std::optional<int64_t> offset = getConstantIntValue(offsets[loop]);
    std::optional<int64_t> size = getConstantIntValue(sizes[loop]);
    int64_t extent = queryType.getDimSize(loop);
    return offset && *offset == 0 && size && !ShapedType::isDynamic(extent) &&
           *size == extent;
  };
  if (!op.getScoreMod().empty() || !op.getMaskMod().empty())
    return "score_mod and mask_mod regions receive the batch, head and row "
           "indices, which a tile would renumber";
  if (!op.getDropoutP().isZero())
    return "dropout decisions hash the batch, head and row indices, which a "
           "tile would renumber";
  if (op.getBlockOffsets() || op.getBlockIndices() || op.getBlockClasses())
    return "block layouts are laid out over the whole op's query tiles";
  bool positional = op.getCausal() || op.getWindow() ||
                    op.getAlignment() == Alignment::bottom_right;
  if (positional && !isWhole(Row))
    return "causal, window and bottom-right alignment place each row by its "
           "index among all the op's rows: only whole rows tile (row tile "
           "0 or the full " +
           std::to_string(queryType.getDimSize(Row)) + ")";
  int64_t heads = queryType.getDimSize(Head);
  int64_t kvHeads = op.getKey().getType().getDimSize(1);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads))
    return isWhole(Head) ? "" : "head tiles need static head counts";
  if (heads != kvHeads && kvHeads != 1) {
    int64_t group = heads / kvHeads;
    std::optional<int64_t> size = getConstantIntValue(sizes[Head]);
    if (!size || (*size != 1 && *size % group != 0))
      return "a head tile must be 1 or a multiple of the " +
             std::to_string(group) + " query heads that share a key/value head";
  }
  return "";
}

struct SdpaTilingInterface
    : public TilingInterface::ExternalModel<SdpaTilingInterface, SdpaOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return SmallVector<utils::IteratorType>(NumLoops,
                                            utils::IteratorType::parallel);
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto sdpa = cast<SdpaOp>(op);
    Location loc = op->getLoc();
    SmallVector<Range> domain;
    for (unsigned loop = 0; loop < NumLoops; ++loop)
      domain.push_back(
          Range{b.getIndexAttr(0),
                tensor::getMixedSize(b, loc, sdpa.getQuery(), loop),
                b.getIndexAttr(1)});
    return domain;
  }

  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto sdpa = cast<SdpaOp>(op);
    if (std::string why = whyNotTileable(sdpa, offsets, sizes); !why.empty())
      return op->emitOpError("cannot be tiled (TilingInterface): ") << why;
    Location loc = op->getLoc();
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    auto full = [&](Value v, unsigned dim) {
      return tensor::getMixedSize(b, loc, v, dim);
    };
    auto slice = [&](Value v, ArrayRef<OpFoldResult> offs,
                     ArrayRef<OpFoldResult> szs) -> Value {
      SmallVector<OpFoldResult> strides(offs.size(), one);
      return tensor::ExtractSliceOp::create(b, loc, v, offs, szs, strides);
    };

    // Key/value heads: the same tile without grouping; all of the one head
    // of multi-query attention; else head h reads h / group.
    OpFoldResult kvHead = offsets[Head], kvHeads = sizes[Head];
    int64_t heads = sdpa.getQuery().getType().getDimSize(Head);
    int64_t kvHeadCount = sdpa.getKey().getType().getDimSize(1);
    if (kvHeadCount == 1) {
      kvHead = zero;
      kvHeads = one;
    } else if (heads != kvHeadCount) {
      AffineExpr d0 = b.getAffineDimExpr(0);
      int64_t group = heads / kvHeadCount;
      kvHead = affine::makeComposedFoldedAffineApply(b, loc, d0.floorDiv(group),
                                                     {offsets[Head]});
      kvHeads = affine::makeComposedFoldedAffineApply(b, loc, d0.ceilDiv(group),
                                                      {sizes[Head]});
    }
    auto keyTile = [&](Value v) {
      return slice(v, {offsets[Batch], kvHead, zero, zero},
                   {sizes[Batch], kvHeads, full(v, 2), full(v, 3)});
    };
    auto rowTile = [&](Value v) {
      return slice(v, {offsets[Batch], offsets[Head], offsets[Row], zero},
                   {sizes[Batch], sizes[Head], sizes[Row], full(v, 3)});
    };

    // Each operand by its role (not its value: Q, K and V may be one).
    enum Role { Other, RowTile, KeyTile, LseTile, BatchTile, MaskTile };
    SmallVector<Role> roles(op->getNumOperands(), Other);
    roles[sdpa.getQueryMutable().getOperandNumber()] = RowTile;
    roles[sdpa.getInitMutable().getOperandNumber()] = RowTile;
    roles[sdpa.getKeyMutable().getOperandNumber()] = KeyTile;
    roles[sdpa.getValueMutable().getOperandNumber()] = KeyTile;
    for (OpOperand &o : sdpa.getLseInitMutable())
      roles[o.getOperandNumber()] = LseTile;
    for (OpOperand &o : sdpa.getKvLensMutable())
      roles[o.getOperandNumber()] = BatchTile;
    for (OpOperand &o : sdpa.getMaskMutable())
      roles[o.getOperandNumber()] = MaskTile;

    SmallVector<Value> operands;
    SmallVector<Operation *> slices;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      Value tiled = v;
      switch (roles[operand.getOperandNumber()]) {
      case RowTile:
        tiled = rowTile(v);
        break;
      case KeyTile:
        tiled = keyTile(v);
        break;
      case LseTile:
        tiled = slice(v, {offsets[Batch], offsets[Head], offsets[Row]},
                      {sizes[Batch], sizes[Head], sizes[Row]});
        break;
      case BatchTile:
        // [B] lengths, or one for every batch ([1]).
        if (cast<ShapedType>(v.getType()).getDimSize(0) != 1)
          tiled = slice(v, {offsets[Batch]}, {sizes[Batch]});
        break;
      case MaskTile: {
        // Broadcast on the right to [B, Hq, Sq, Skv]: dimensions of size
        // 1 stay, the others take the tile's range (all keys).
        auto type = cast<RankedTensorType>(v.getType());
        int64_t lead = 4 - type.getRank();
        SmallVector<OpFoldResult> offs, szs;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          int64_t loop = lead + d;
          if (type.getDimSize(d) == 1 || loop == 3) {
            offs.push_back(zero);
            szs.push_back(full(v, d));
          } else {
            offs.push_back(offsets[loop]);
            szs.push_back(sizes[loop]);
          }
        }
        tiled = slice(v, offs, szs);
        break;
      }
      case Other:
        break;
      }
      if (tiled != v)
        slices.push_back(tiled.getDefiningOp());
      operands.push_back(tiled);
    }
    // The results' types are those of the destinations' tiles.
    SmallVector<Type> resultTypes;
    for (OpOperand &init : sdpa.getDpsInitsMutable())
      resultTypes.push_back(operands[init.getOperandNumber()].getType());
    Operation *tiled = b.clone(*op);
    tiled->setOperands(operands);
    for (auto [result, type] : llvm::zip(tiled->getResults(), resultTypes))
      result.setType(type);
    return TilingResult{
        {tiled}, SmallVector<Value>(tiled->getResults()), slices};
  }

  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    resultOffsets.assign(offsets.begin(), offsets.end());
    resultSizes.assign(sizes.begin(), sizes.end());
    if (resultNumber == 0) {
      // The result's last dimension (Dv) is whole in every tile.
      resultOffsets.push_back(b.getIndexAttr(0));
      resultSizes.push_back(
          tensor::getMixedSize(b, op->getLoc(), op->getResult(0), 3));
    }
    return success();
  }

  FailureOr<TilingResult>
  generateResultTileValue(Operation *op, OpBuilder &b, unsigned resultNumber,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) const {
    // A tile of either result is the tile of the iteration domain over its
    // first three dimensions (all of Dv: a tile of it would recompute the
    // softmax).
    if (resultNumber == 0) {
      std::optional<int64_t> offset = getConstantIntValue(offsets[3]);
      int64_t extent =
          cast<ShapedType>(op->getResult(0).getType()).getDimSize(3);
      std::optional<int64_t> size = getConstantIntValue(sizes[3]);
      if (!offset || *offset != 0 || !size || *size != extent)
        return failure();
    }
    return getTiledImplementation(op, b, offsets.take_front(NumLoops),
                                  sizes.take_front(NumLoops));
  }
};

} // namespace

void attn::registerTilingInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    SdpaOp::attachInterface<SdpaTilingInterface>(*ctx);
  });
}
