//===- PackWeights.cpp - contractions read weights from N-panels ----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// A projection `y[.., n] += x[.., k] * w[k, n]` register-blocked by
// attn-vectorize-tiles reads, at each K step, one row of nBlock columns of
// the weight. In the weight's own layout those rows lie N floats apart: a
// register block walks the weight with a stride of a whole row, every row of
// a cache block falls into the same L1 sets once N is a power of two, and a
// torch-layout weight [N, K] must first be transposed on every call. Read
// from panels `[N / panel, K, panel]` instead (panel = nBlock), each K step
// of a register block is one contiguous run and a whole panel is one
// stream. The panels are a `linalg.pack` of the weight: a function that is
// given the panels (as `linalg.unpack` of an argument, what the Python
// modules pass, docs/CpuABI.md "Pre-packed weights") packs nothing per call.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cstring>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPACKWEIGHTS
#define GEN_PASS_DEF_ATTNLOWERPACKS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

/// The panels of `weight` ([N, K] when `rowsAreN`, else [K, N]) that already
/// exist as values: the source of a `linalg.unpack` that made the weight
/// from panels of `panel` columns, or rows of such a weight taken by a slice
/// that starts and ends on panel boundaries (the q/k/v thirds of a packed
/// in-projection). Null when there are none.
static Value findPanels(OpBuilder &b, Value weight, bool rowsAreN,
                        int64_t panel) {
  if (auto unpack = weight.getDefiningOp<linalg::UnPackOp>()) {
    ArrayRef<int64_t> perm = unpack.getOuterDimsPerm();
    bool layout = rowsAreN ? perm.empty() || isIdentityPermutation(perm)
                           : llvm::equal(perm, ArrayRef<int64_t>{1, 0});
    if (layout &&
        unpack.getInnerDimsPos() == ArrayRef<int64_t>{rowsAreN ? 0 : 1} &&
        unpack.getStaticTiles() == ArrayRef<int64_t>{panel} &&
        unpack.getSourceType().getRank() == 3)
      return unpack.getSource();
    return {};
  }
  auto slice = weight.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSourceType().getRank() != 2 ||
      slice.getType().getRank() != 2 || !slice.hasUnitStride())
    return {};
  unsigned nDim = rowsAreN ? 0 : 1, kDim = 1 - nDim;
  std::optional<int64_t> offset =
      getConstantIntValue(slice.getMixedOffsets()[nDim]);
  std::optional<int64_t> size =
      getConstantIntValue(slice.getMixedSizes()[nDim]);
  std::optional<int64_t> kOffset =
      getConstantIntValue(slice.getMixedOffsets()[kDim]);
  int64_t kSize = slice.getStaticSizes()[kDim];
  if (!offset || !size || *offset % panel || *size % panel || kOffset != 0 ||
      ShapedType::isDynamic(kSize) ||
      kSize != slice.getSourceType().getDimSize(kDim))
    return {};
  Value panels = findPanels(b, slice.getSource(), rowsAreN, panel);
  if (!panels)
    return {};
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(*offset / panel),
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(*size / panel),
                                     b.getIndexAttr(kSize),
                                     b.getIndexAttr(panel)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, slice.getLoc(), panels, offsets,
                                        sizes, strides);
}

/// The panels of a constant weight ([N, K] when `rowsAreN`, else [K, N]),
/// packed here at compile time; null for elements that are not whole
/// bytes.
static DenseElementsAttr packConstant(DenseElementsAttr weight, bool rowsAreN,
                                      int64_t panel) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t n = type.getDimSize(rowsAreN ? 0 : 1);
  int64_t k = type.getDimSize(rowsAreN ? 1 : 0);
  auto packedType =
      RankedTensorType::get({n / panel, k, panel}, type.getElementType());
  if (weight.isSplat())
    return weight.resizeSplat(packedType);
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8)
    return {};
  size_t bytes = bits / 8;
  ArrayRef<char> raw = weight.getRawData();
  SmallVector<char> packed(raw.size());
  for (int64_t i = 0; i < n / panel; ++i)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < panel; ++j) {
        int64_t row = i * panel + j;
        int64_t from = rowsAreN ? row * k + kk : kk * n + row;
        int64_t to = (i * k + kk) * panel + j;
        std::memcpy(&packed[to * bytes], &raw[from * bytes], bytes);
      }
  return DenseElementsAttr::getFromRawBuffer(packedType, packed);
}

/// The panels `[N / panel, K, panel]` of `weight` ([N, K] when `rowsAreN`,
/// else [K, N]): found (findPanels), packed at compile time for a
/// constant, or packed here.
static Value getPanels(OpBuilder &b, Location loc, Value weight, bool rowsAreN,
                       int64_t panel) {
  if (Value panels = findPanels(b, weight, rowsAreN, panel))
    return panels;
  DenseElementsAttr constant;
  if (matchPattern(weight, m_Constant(&constant)))
    if (DenseElementsAttr packed = packConstant(constant, rowsAreN, panel))
      return arith::ConstantOp::create(b, loc, packed);
  SmallVector<int64_t> innerDimsPos = {rowsAreN ? 0 : 1};
  SmallVector<int64_t> outerDimsPerm;
  if (!rowsAreN)
    outerDimsPerm = {1, 0};
  SmallVector<OpFoldResult> tiles = {b.getIndexAttr(panel)};
  Value dest = linalg::PackOp::createDestinationTensor(
      b, loc, weight, tiles, innerDimsPos, outerDimsPerm);
  return linalg::PackOp::create(b, loc, weight, dest, innerDimsPos, tiles,
                                /*paddingValue=*/std::nullopt, outerDimsPerm)
      .getResult();
}

/// `init` [.., N] viewed as [.., N / panel, panel] (`groups`, `shape`):
/// a fill or a broadcast of a bias (one use) is made again in that shape,
/// so that attn-parallelize-contractions can still fuse it into the
/// contraction's row blocks (fusion does not look through reshapes).
static Value expandInit(OpBuilder &b, Location loc, Value init,
                        RankedTensorType expandedType,
                        ArrayRef<ReassociationIndices> groups,
                        ArrayRef<OpFoldResult> shape) {
  auto expand = [&](Value value) {
    return tensor::ExpandShapeOp::create(b, loc, expandedType, value, groups,
                                         shape)
        .getResult();
  };
  if (!init.hasOneUse())
    return expand(init);
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs()[0],
                                  expand(fill.getOutputs()[0]))
        .getResult(0);
  auto broadcast = init.getDefiningOp<linalg::BroadcastOp>();
  int64_t rank = expandedType.getRank();
  if (!broadcast || broadcast.getInput().getType().getRank() != 1 ||
      broadcast.getDimensions() !=
          ArrayRef(llvm::to_vector(llvm::seq<int64_t>(0, rank - 2))))
    return expand(init);
  // A bias [N] broadcast over the leading dimensions: its panels
  // [N / panel, panel] broadcast over the same ones.
  auto biasType = RankedTensorType::get(expandedType.getShape().take_back(2),
                                        expandedType.getElementType());
  Value bias = tensor::ExpandShapeOp::create(
      b, loc, biasType, broadcast.getInput(), {{0, 1}}, shape.take_back(2));
  return linalg::BroadcastOp::create(b, loc, bias, expand(broadcast.getInit()),
                                     broadcast.getDimensions())
      .getResult()[0];
}

namespace {

/// The operand of a contraction this pass packs and how it reads it.
struct WeightOperand {
  OpOperand *operand;
  unsigned n, k; // Loops of its N and K dimensions.
  Value weight;  // [N, K] through a transpose (`rowsAreN`), else [K, N].
  bool rowsAreN;
};

/// The weight of `op` when it is a contraction on tensors whose result has
/// the weight's N dimension innermost, of a static size that is a multiple
/// of `panel`, and whose right operand is a 2-D [K, N] tensor (or the
/// transpose of an [N, K] one, or an [N, K] one it reads transposed).
static std::optional<WeightOperand> getWeightOperand(linalg::LinalgOp op,
                                                     int64_t panel) {
  if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op) ||
      op.getNumDpsInits() != 1 || op.getNumDpsInputs() != 2 ||
      op.hasIndexSemantics())
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 1 || dims->m.empty() || dims->n.empty())
    return std::nullopt;
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto n = dyn_cast<AffineDimExpr>(resultMap.getResults().back());
  if (!n || !llvm::is_contained(dims->n, n.getPosition()))
    return std::nullopt;
  int64_t size = op.getStaticLoopRanges()[n.getPosition()];
  if (ShapedType::isDynamic(size) || size % panel)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineMap kn = AffineMap::get(op.getNumLoops(), 0,
                                {getAffineDimExpr(dims->k[0], ctx), n}, ctx);
  AffineMap nk = AffineMap::get(op.getNumLoops(), 0,
                                {n, getAffineDimExpr(dims->k[0], ctx)}, ctx);
  for (OpOperand *input : op.getDpsInputOperands()) {
    WeightOperand result{input, n.getPosition(), dims->k[0], input->get(),
                         /*rowsAreN=*/false};
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map == nk) {
      // Read as [N, K] already (a matmul with a transposed B).
      result.rowsAreN = true;
      return result;
    }
    if (map != kn)
      continue;
    if (auto transpose = input->get().getDefiningOp<linalg::TransposeOp>()) {
      result.weight = transpose.getInput();
      result.rowsAreN = true;
    }
    return result;
  }
  return std::nullopt;
}

/// The input of a contraction on tensors (one K dimension, the result's
/// innermost dimension an N one) that carries its M dimensions, when it
/// reads its K dimension other than innermost: the `dY^T` of a weight
/// gradient `dW[n, k] += dY[m, n] * X[m, k]`. Null otherwise.
static OpOperand *getKMajorLeftOperand(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op) ||
      op.getNumDpsInits() != 1 || op.getNumDpsInputs() != 2 ||
      op.hasIndexSemantics())
    return nullptr;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 1)
    return nullptr;
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto n = dyn_cast<AffineDimExpr>(resultMap.getResults().back());
  if (!n || !llvm::is_contained(dims->n, n.getPosition()))
    return nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation() || map.getNumResults() < 2 ||
        map.isFunctionOfDim(n.getPosition()))
      continue;
    std::optional<unsigned> k =
        map.getResultPosition(getAffineDimExpr(dims->k[0], op.getContext()));
    if (k && *k + 1 != map.getNumResults())
      return input;
  }
  return nullptr;
}

/// A contraction reading its left operand K-major reads a transpose of it
/// with K innermost instead: attn-vectorize-tiles register-blocks rows of
/// the left operand, and attn-parallelize-contractions transposes each row
/// block's share (a strided read of whole columns once, not a strided
/// scalar read per multiply-add).
struct TransposeKMajorLeftOperand
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<linalg::GenericOp>(op) || op->getParentOfType<scf::ForallOp>())
      return rewriter.notifyMatchFailure(op, "not a generic outside loops");
    OpOperand *left = getKMajorLeftOperand(op);
    if (!left)
      return rewriter.notifyMatchFailure(op, "no K-major left operand");
    AffineMap map = op.getMatchingIndexingMap(left);
    unsigned k = *map.getResultPosition(getAffineDimExpr(
        linalg::inferContractionDims(op)->k[0], op.getContext()));
    // Every dimension in its order, K moved last.
    SmallVector<int64_t> perm;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
      if (i != k)
        perm.push_back(i);
    perm.push_back(k);
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, left->get());
    applyPermutationToVector(sizes, perm);
    Type element = getElementTypeOrSelf(left->get().getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, element);
    Value transposed =
        linalg::TransposeOp::create(rewriter, loc, left->get(), empty, perm)
            .getResult()[0];
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[left->getOperandNumber()] =
        map.getSubMap(llvm::to_vector_of<unsigned>(perm));
    rewriter.modifyOpInPlace(op, [&] {
      left->set(transposed);
      cast<linalg::GenericOp>(op).setIndexingMapsAttr(
          rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

/// `y[.., n] += x[.., k] * w[k, n]` becomes
/// `y'[.., n0, n1] += x[.., k] * panels[n0, k, n1]` with
/// y' = y expanded to [.., N / panel, panel]; the body is unchanged.
struct PackWeightOperand : OpInterfaceRewritePattern<linalg::LinalgOp> {
  PackWeightOperand(MLIRContext *ctx, int64_t panel)
      : OpInterfaceRewritePattern(ctx), panel(panel) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    // Contractions inside a parallel loop are the tiled attention's.
    if (op->getParentOfType<scf::ForallOp>())
      return failure();
    std::optional<WeightOperand> weight = getWeightOperand(op, panel);
    if (!weight)
      return rewriter.notifyMatchFailure(op, "no weight to pack");
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value panels =
        getPanels(rewriter, loc, weight->weight, weight->rowsAreN, panel);

    // One more loop, the column within a panel, last; the N loop becomes
    // the panel index.
    unsigned numLoops = op.getNumLoops() + 1;
    AffineExpr outer = getAffineDimExpr(weight->n, ctx);
    AffineExpr inner = getAffineDimExpr(numLoops - 1, ctx);
    SmallVector<AffineMap> maps;
    SmallVector<Value> inputs;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (input == weight->operand) {
        maps.push_back(AffineMap::get(
            numLoops, 0, {outer, getAffineDimExpr(weight->k, ctx), inner},
            ctx));
        inputs.push_back(panels);
      } else {
        maps.push_back(AffineMap::get(numLoops, 0, map.getResults(), ctx));
        inputs.push_back(input->get());
      }
    }
    OpOperand *initOperand = op.getDpsInitOperand(0);
    AffineMap initMap = op.getMatchingIndexingMap(initOperand);
    SmallVector<AffineExpr> initExprs(initMap.getResults());
    initExprs.push_back(inner);
    maps.push_back(AffineMap::get(numLoops, 0, initExprs, ctx));

    // The result [.., N] viewed as [.., N / panel, panel].
    auto initType = cast<RankedTensorType>(initOperand->get().getType());
    int64_t rank = initType.getRank();
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < rank - 1; ++i)
      groups.push_back({i});
    groups.push_back({rank - 1, rank});
    // Sizes from the tensor the init is computed in, not from the init:
    // dims of it would be uses that keep expandInit from remaking it.
    Value shapeSource = initOperand->get();
    if (auto producer =
            shapeSource.getDefiningOp<DestinationStyleOpInterface>())
      shapeSource =
          producer.getTiedOpOperand(cast<OpResult>(shapeSource))->get();
    SmallVector<OpFoldResult> shape =
        tensor::getMixedSizes(rewriter, loc, shapeSource);
    int64_t columns = initType.getShape().back();
    shape.back() = rewriter.getIndexAttr(columns / panel);
    shape.push_back(rewriter.getIndexAttr(panel));
    SmallVector<int64_t> expandedShape(initType.getShape());
    expandedShape.back() = columns / panel;
    expandedShape.push_back(panel);
    auto expandedType =
        RankedTensorType::get(expandedShape, initType.getElementType());
    Value init = expandInit(rewriter, loc, initOperand->get(), expandedType,
                            groups, shape);

    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    iterators.push_back(utils::IteratorType::parallel);
    auto packed = linalg::GenericOp::create(rewriter, loc, expandedType, inputs,
                                            init, maps, iterators);
    rewriter.cloneRegionBefore(op->getRegion(0), packed.getRegion(),
                               packed.getRegion().begin());
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, initType, packed.getResult(0), groups);
    return success();
  }

  int64_t panel;
};

/// Whether a transpose by `perm` keeps the innermost dimension in place
/// (moves whole rows: what a product can write itself).
static bool keepsInnermost(ArrayRef<int64_t> perm) {
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

/// Whether reassociation `groups` merge only the last two dimensions
/// ([.., N / panel, panel] into [.., N]).
static bool isMergeOfLastTwo(ArrayRef<ReassociationIndices> groups) {
  for (auto [i, group] : llvm::enumerate(groups))
    if (group.size() != (i + 1 == groups.size() ? 2u : 1u))
      return false;
  return !groups.empty();
}

/// The contraction that produces `value` when it has no other use and is
/// outside parallel loops (a product whose result layout is still free),
/// else null.
static linalg::GenericOp getLoneProduct(Value value) {
  auto product = value.getDefiningOp<linalg::GenericOp>();
  if (!product || !product->hasOneUse() || product.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(product) ||
      product->getParentOfType<scf::ForallOp>())
    return nullptr;
  return product;
}

/// `transpose(product)` (or `transpose(collapse_shape(product))` merging
/// only the panel dimensions) with the innermost dimension in place, where
/// the product's result has no other use: the product writes the permuted
/// layout itself. The multihead decomposition's head split ([N, L, H, D] to
/// [N, H, L, D], with D one panel) and the sequence-first output are such
/// transposes: serial passes over memory after a parallel product.
struct WriteTransposedResult : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (!keepsInnermost(perm))
      return rewriter.notifyMatchFailure(transpose, "moves the rows");
    Value input = transpose.getInput();
    auto collapse = input.getDefiningOp<tensor::CollapseShapeOp>();
    if (collapse) {
      if (!isMergeOfLastTwo(collapse.getReassociationIndices()))
        return rewriter.notifyMatchFailure(transpose, "other reshape");
      if (!collapse->hasOneUse())
        return failure();
      input = collapse.getSrc();
    }
    linalg::GenericOp product = getLoneProduct(input);
    if (!product)
      return rewriter.notifyMatchFailure(transpose, "not a lone product");
    // The permutation of the product's result dimensions.
    SmallVector<int64_t> productPerm(perm);
    if (collapse)
      productPerm.push_back(perm.size());
    Location loc = transpose.getLoc();
    OpOperand *init = product.getDpsInitOperand(0);
    Value initT =
        attn::createTranspose(rewriter, loc, init->get(), productPerm);
    AffineMap initMap = product.getMatchingIndexingMap(init);
    SmallVector<AffineMap> maps = product.getIndexingMapsArray();
    maps.back() =
        AffineMap::get(initMap.getNumDims(), 0,
                       applyPermutation(initMap.getResults(), productPerm),
                       product.getContext());
    auto permuted = linalg::GenericOp::create(
        rewriter, loc, initT.getType(), product.getDpsInputs(), initT, maps,
        product.getIteratorTypesArray());
    rewriter.inlineRegionBefore(product.getRegion(), permuted.getRegion(),
                                permuted.getRegion().begin());
    Value result = permuted.getResult(0);
    if (collapse)
      result = tensor::CollapseShapeOp::create(
          rewriter, loc, transpose.getResult()[0].getType(), result,
          collapse.getReassociationIndices());
    rewriter.replaceOp(transpose, result);
    if (collapse)
      rewriter.eraseOp(collapse);
    rewriter.eraseOp(product);
    return success();
  }
};

/// `transpose(forall)` of a result of an scf.forall whose only use is the
/// transpose, whose tiles are inserted with unit strides in an order of
/// their non-unit dimensions that the permutation keeps: the loop inserts
/// them into the transposed destination instead. The attention's output
/// [N, H, L, D] becomes [N, L, H, D] for the out-projection without a
/// serial copy (each query tile [rows, D] lands at [n, rows, h, :]).
struct InsertTilesTransposed : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(transpose.getInput());
    auto forall =
        result ? dyn_cast<scf::ForallOp>(result.getOwner()) : scf::ForallOp();
    if (!forall || !result.hasOneUse())
      return rewriter.notifyMatchFailure(transpose, "not a lone loop result");
    ArrayRef<int64_t> perm = transpose.getPermutation();
    OpOperand *sharedOut = forall.getTiedOpOperand(result);
    BlockArgument out = forall.getTiedBlockArgument(sharedOut);
    SmallVector<tensor::ParallelInsertSliceOp> inserts;
    for (Operation *user : out.getUsers()) {
      auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user);
      if (!insert || insert.getDest() != out || !insert.hasUnitStride())
        return rewriter.notifyMatchFailure(transpose, "other use in the loop");
      // The tile's dimensions that are not 1, in the transposed order,
      // must be in their order: the same tile, unit dimensions moved.
      SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
      int64_t last = -1;
      for (int64_t dim : perm) {
        if (isConstantIntValue(sizes[dim], 1))
          continue;
        if (dim < last)
          return rewriter.notifyMatchFailure(transpose, "permutes the tile");
        last = dim;
      }
      if (insert.getSourceType().getRank() !=
          llvm::count_if(sizes, [](OpFoldResult size) {
            return !isConstantIntValue(size, 1);
          }))
        return rewriter.notifyMatchFailure(transpose, "tile has unit dims");
      inserts.push_back(insert);
    }
    // A fresh destination of the transposed sizes (the transpose's own
    // comes after the loop).
    rewriter.setInsertionPoint(forall);
    Value init = tensor::EmptyOp::create(
        rewriter, transpose.getLoc(),
        applyPermutation(tensor::getMixedSizes(rewriter, transpose.getLoc(),
                                               sharedOut->get()),
                         perm),
        transpose.getInit().getType().getElementType());
    rewriter.modifyOpInPlace(forall, [&] {
      sharedOut->set(init);
      out.setType(init.getType());
      result.setType(init.getType());
    });
    for (tensor::ParallelInsertSliceOp insert : inserts) {
      rewriter.setInsertionPoint(insert);
      auto permute = [&](SmallVector<OpFoldResult> values) {
        return applyPermutation(values, perm);
      };
      rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
          insert, insert.getSource(), out, permute(insert.getMixedOffsets()),
          permute(insert.getMixedSizes()), permute(insert.getMixedStrides()));
    }
    rewriter.replaceOp(transpose, result);
    return success();
  }
};

/// `expand_shape(broadcast(x))` whose groups each split a dimension of x or
/// keep a broadcast one as it is, as `broadcast(expand_shape(x))`: a bias
/// broadcast stays the init of the product it starts (a product whose
/// result is split by an expansion gets its init split the same way).
struct ExpandBroadcastInput : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto broadcast = expand.getSrc().getDefiningOp<linalg::BroadcastOp>();
    if (!broadcast || !broadcast->hasOneUse())
      return rewriter.notifyMatchFailure(expand, "not a lone broadcast");
    ArrayRef<int64_t> broadcastDims = broadcast.getDimensions();
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    SmallVector<ReassociationIndices> inputGroups;
    SmallVector<int64_t> newDims;
    SmallVector<OpFoldResult> inputShape;
    SmallVector<OpFoldResult> outputShape = expand.getMixedOutputShape();
    for (auto [dim, group] : llvm::enumerate(groups)) {
      if (llvm::is_contained(broadcastDims, static_cast<int64_t>(dim))) {
        if (group.size() != 1)
          return rewriter.notifyMatchFailure(expand, "splits a broadcast");
        newDims.push_back(group.front());
        continue;
      }
      ReassociationIndices inputGroup;
      for (int64_t d : group) {
        inputGroup.push_back(inputShape.size());
        inputShape.push_back(outputShape[d]);
      }
      inputGroups.push_back(inputGroup);
    }
    Location loc = expand.getLoc();
    RankedTensorType resultType = expand.getResultType();
    SmallVector<int64_t> inputStatic;
    for (auto [d, size] : llvm::enumerate(resultType.getShape()))
      if (!llvm::is_contained(newDims, static_cast<int64_t>(d)))
        inputStatic.push_back(size);
    Value input = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(inputStatic, resultType.getElementType()),
        broadcast.getInput(), inputGroups, inputShape);
    Value init = tensor::ExpandShapeOp::create(
        rewriter, loc, resultType, broadcast.getInit(), groups, outputShape);
    rewriter.replaceOpWithNewOp<linalg::BroadcastOp>(expand, input, init,
                                                     newDims);
    return success();
  }
};

/// `expand_shape(collapse_shape(product))` where the collapse merges the
/// product's [.., N / panel, panel] and the expansion splits N into
/// [.., D] with D a multiple of the panel (a head split, [N, L, 3E] to
/// [N, L, 3, H, D], of panels narrower than a head), for a transpose that
/// keeps the innermost dimension in place: as
/// `collapse_shape(expand_shape(product))`, the panel index split into
/// [.., D / panel] and [D / panel, panel] merged into D. The expansion then
/// folds into the product and the transpose into its write, as they do where
/// D is one panel.
struct SplitPanelsAcrossHeads : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !collapse->hasOneUse() || !expand->hasOneUse() ||
        !getLoneProduct(collapse.getSrc()))
      return rewriter.notifyMatchFailure(expand, "not a product's view");
    auto transpose = dyn_cast<linalg::TransposeOp>(*expand->user_begin());
    if (!transpose || !keepsInnermost(transpose.getPermutation()))
      return rewriter.notifyMatchFailure(expand, "not for a transpose");
    SmallVector<ReassociationIndices> collapseGroups =
        collapse.getReassociationIndices();
    SmallVector<ReassociationIndices> expandGroups =
        expand.getReassociationIndices();
    if (!isMergeOfLastTwo(collapseGroups) ||
        !llvm::all_of(ArrayRef(expandGroups).drop_back(),
                      [](const ReassociationIndices &group) {
                        return group.size() == 1;
                      }))
      return rewriter.notifyMatchFailure(expand, "other reshapes");
    RankedTensorType productType = collapse.getSrcType();
    int64_t panels = productType.getShape().end()[-2];
    int64_t panel = productType.getShape().back();
    ArrayRef<int64_t> split =
        expand.getResultType().getShape().take_back(expandGroups.back().size());
    int64_t headDim = split.back();
    if (ShapedType::isDynamic(panels) || ShapedType::isDynamic(panel) ||
        ShapedType::isDynamic(headDim) || headDim <= panel ||
        headDim % panel != 0)
      return rewriter.notifyMatchFailure(expand, "heads are not whole panels");

    // [.., N / panel, panel] -> [.., split.., D / panel, panel].
    SmallVector<OpFoldResult> shape = expand.getMixedOutputShape();
    shape.back() = rewriter.getIndexAttr(headDim / panel);
    shape.push_back(rewriter.getIndexAttr(panel));
    SmallVector<int64_t> staticShape(expand.getResultType().getShape());
    staticShape.back() = headDim / panel;
    staticShape.push_back(panel);
    SmallVector<ReassociationIndices> panelGroups(expandGroups);
    panelGroups.push_back({static_cast<int64_t>(staticShape.size()) - 1});
    Location loc = expand.getLoc();
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(staticShape, productType.getElementType()),
        collapse.getSrc(), panelGroups, shape);
    SmallVector<ReassociationIndices> headGroups;
    for (int64_t d = 0, e = staticShape.size() - 2; d < e; ++d)
      headGroups.push_back({d});
    headGroups.push_back({static_cast<int64_t>(staticShape.size()) - 2,
                          static_cast<int64_t>(staticShape.size()) - 1});
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        expand, expand.getResultType(), expanded, headGroups);
    return success();
  }
};

/// Whether `fused` is the source of an expand_shape that splits dimensions
/// of a lone packed product's result other than the innermost, for a
/// transpose that keeps the innermost in place: Q, K and V projected
/// together, [N, L, 3E / panel, panel] viewed as [N, L, 3, H, D] and
/// transposed to [3, N, H, L, D]. Folding the expansion into the product
/// (upstream's fusion by expansion) lets WriteTransposedResult make it
/// write that layout.
static bool isSplitForTranspose(OpOperand *fused) {
  auto expand = dyn_cast<tensor::ExpandShapeOp>(fused->getOwner());
  if (!expand || !expand->hasOneUse())
    return false;
  if (!getLoneProduct(expand.getSrc()) ||
      expand.getReassociationIndices().back().size() != 1)
    return false;
  // The transpose may read it through [.., D / panel, panel] merged into D
  // (SplitPanelsAcrossHeads).
  Operation *user = *expand->user_begin();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user)) {
    if (!collapse->hasOneUse() ||
        !isMergeOfLastTwo(collapse.getReassociationIndices()))
      return false;
    user = *collapse->user_begin();
  }
  auto transpose = dyn_cast<linalg::TransposeOp>(user);
  return transpose && keepsInnermost(transpose.getPermutation());
}

struct AttnPackWeightsPass
    : attn::impl::AttnPackWeightsBase<AttnPackWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(attn::verifyOptionAtLeast(getOperation(), getArgument(), "panel",
                                         panel, 1)))
      return signalPassFailure();
    // Named contractions (linalg.matmul) as generics first: the rewrite
    // changes their indexing maps.
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp>(op) &&
          !op->getParentOfType<scf::ForallOp>() &&
          (getWeightOperand(op, panel) || getKMajorLeftOperand(op)))
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    RewritePatternSet leftOperands(&getContext());
    leftOperands.add<TransposeKMajorLeftOperand>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(leftOperands));
    RewritePatternSet patterns(&getContext());
    patterns.add<PackWeightOperand>(&getContext(), panel);
    walkAndApplyPatterns(getOperation(), std::move(patterns));

    // Packed products write transposed layouts themselves, once the
    // [.., N] result and its head split's [.., H, D] view (the same
    // dimensions when D is a panel) fold together; their init's transpose
    // folds into its fill or broadcast.
    MLIRContext *ctx = &getContext();
    RewritePatternSet layouts(ctx);
    layouts.add<WriteTransposedResult, ExpandBroadcastInput,
                InsertTilesTransposed, SplitPanelsAcrossHeads>(ctx);
    linalg::populateFoldReshapeOpsByExpansionPatterns(layouts,
                                                      isSplitForTranspose);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(layouts, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(layouts, ctx);
    linalg::TransposeOp::getCanonicalizationPatterns(layouts, ctx);
    linalg::FillOp::getCanonicalizationPatterns(layouts, ctx);
    // Sizes of shape-generic results as sizes of what they are computed
    // from: their tensor.dim uses would hide that a product's result has
    // one real use.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(layouts);
    if (failed(applyPatternsGreedily(getOperation(), std::move(layouts))))
      return signalPassFailure();
  }
};

/// linalg.pack and linalg.unpack left after packing (a weight packed on
/// every call, panels unpacked for another use) as pad/reshape/transpose,
/// which bufferize.
struct AttnLowerPacksPass : attn::impl::AttnLowerPacksBase<AttnLowerPacksPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> relayouts;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::PackOp, linalg::UnPackOp>(op))
        relayouts.push_back(op);
    });
    for (Operation *op : relayouts) {
      rewriter.setInsertionPoint(op);
      bool lowered =
          isa<linalg::PackOp>(op)
              ? succeeded(linalg::lowerPack(rewriter, cast<linalg::PackOp>(op)))
              : succeeded(
                    linalg::lowerUnPack(rewriter, cast<linalg::UnPackOp>(op)));
      if (!lowered) {
        op->emitError("attn-lower-packs: cannot lower this relayout");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
