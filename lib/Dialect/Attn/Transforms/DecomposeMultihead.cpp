//===- DecomposeMultihead.cpp - attn.multihead into projections + sdpa ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Follows torch.nn.functional.multi_head_attention_forward step by step, on
// tensors, in the batch-first [N, T, E] layout throughout; the caller's
// layout is restored only at the end.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEMULTIHEAD
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the pieces of the decomposition for one attn.multihead. Values are
/// batch-first ([N, T, E]) from `toBatchFirst` until `fromBatchFirst`.
class MultiheadBuilder {
public:
  MultiheadBuilder(MultiheadOp op, OpBuilder &b)
      : op(op), b(b), loc(op.getLoc()), ctx(op.getContext()),
        element(op.getQuery().getType().getElementType()),
        accType(getAccumulatorType(element)),
        batched(op.getQuery().getType().getRank() == 3),
        heads(op.getNumHeads()) {}

  /// [L, N, E], [N, L, E] or [L, E] -> [N, L, E].
  Value toBatchFirst(Value x) {
    if (!batched) {
      auto type = cast<RankedTensorType>(x.getType());
      auto expanded = RankedTensorType::get(
          {1, type.getDimSize(0), type.getDimSize(1)}, type.getElementType());
      SmallVector<OpFoldResult> shape = {b.getIndexAttr(1)};
      shape.append(getSizes(b, loc, x));
      return tensor::ExpandShapeOp::create(b, loc, expanded, x, {{0, 1}, {2}},
                                           shape);
    }
    return op.getBatchFirst() ? x : createTranspose(b, loc, x, {1, 0, 2});
  }

  /// Inverse of `toBatchFirst` for a result of the same rank structure.
  Value fromBatchFirst(Value x) {
    if (!batched)
      return tensor::CollapseShapeOp::create(b, loc, x, {{0, 1}, {2}});
    return op.getBatchFirst() ? x : createTranspose(b, loc, x, {1, 0, 2});
  }

  /// `y = x W^T + bias` for x [N, T, I], W [O, I], bias [O]: accumulated in
  /// the accumulator type, starting from the broadcast bias, and returned in
  /// the op's type.
  Value project(Value x, Value weight, Value bias) {
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, x, {0, 1});
    sizes.push_back(tensor::getMixedSize(b, loc, weight, 0));
    Value acc;
    if (bias) {
      Value wide = createElementCast(b, loc, bias, accType);
      Value init = tensor::EmptyOp::create(b, loc, sizes, accType);
      acc = linalg::BroadcastOp::create(b, loc, wide, init, {0, 1})
                .getResult()[0];
    } else {
      acc = createFilledTensor(b, loc, sizes, b.getFloatAttr(accType, 0));
    }
    // Loop order (n, t, i, o) over W^T [I, O]: the innermost loop runs over
    // output features, contiguously in W^T and y, so it vectorises without
    // reassociating the sum over i.
    Value weightT = createTranspose(b, loc, weight, {1, 0});
    AffineExpr n, t, i, o;
    bindDims(ctx, n, t, i, o);
    auto xMap = AffineMap::get(4, 0, {n, t, i}, ctx);
    auto wMap = AffineMap::get(4, 0, {i, o}, ctx);
    auto yMap = AffineMap::get(4, 0, {n, t, o}, ctx);
    Value y = linalg::GenericOp::create(
                  b, loc, acc.getType(), ValueRange{x, weightT}, acc,
                  {xMap, wMap, yMap}, {kPar, kPar, kRed, kPar}, buildMulAccBody)
                  .getResult(0);
    return createElementCast(b, loc, y, element);
  }

  /// Rows [part * E, (part + parts) * E) of a packed in-projection tensor
  /// ([3E, E] weight or [3E] bias).
  Value packedSlice(Value packed, int64_t part, int64_t parts = 1) {
    auto type = cast<RankedTensorType>(packed.getType());
    OpFoldResult embed =
        tensor::getMixedSize(b, loc, op.getQuery(), batched ? 2 : 1);
    OpFoldResult offset;
    if (std::optional<int64_t> staticEmbed = getConstantIntValue(embed)) {
      offset = b.getIndexAttr(part * *staticEmbed);
    } else {
      Value embedV = getValueOrCreateConstantIndexOp(b, loc, embed);
      offset = arith::MulIOp::create(
                   b, loc, embedV, arith::ConstantIndexOp::create(b, loc, part))
                   .getResult();
    }
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, packed);
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    offsets[0] = offset;
    sizes[0] =
        parts == 1
            ? embed
            : OpFoldResult(b.getIndexAttr(parts * *getConstantIntValue(embed)));
    return tensor::ExtractSliceOp::create(b, loc, packed, offsets, sizes,
                                          strides);
  }

  /// The heads of `parts` in-projections of the same input x [N, T, E]
  /// (Q, K and V of self-attention, or K and V), from parts `first` ..
  /// `first + parts - 1` of the packed weight and bias: one product
  /// [N, T, parts * E], viewed as [N, T, parts, H, D] and transposed to
  /// [parts, N, H, T, D] (a transpose the product writes itself once its
  /// weight is in panels, attn-pack-weights), each part a slice of it. The
  /// input is read once instead of `parts` times. E must be static.
  SmallVector<Value> projectHeadsTogether(Value x, Value weight, Value bias,
                                          int64_t first, int64_t parts) {
    Value y = project(x, packedSlice(weight, first, parts),
                      bias ? packedSlice(bias, first, parts) : Value());
    auto yType = cast<RankedTensorType>(y.getType());
    int64_t headDim = yType.getDimSize(2) / parts / heads;
    SmallVector<OpFoldResult> shape = getSizes(b, loc, y, {0, 1});
    for (int64_t size : {parts, heads, headDim})
      shape.push_back(b.getIndexAttr(size));
    auto expandedType = RankedTensorType::get(
        {yType.getDimSize(0), yType.getDimSize(1), parts, heads, headDim},
        element);
    Value expanded = tensor::ExpandShapeOp::create(
        b, loc, expandedType, y, {{0}, {1}, {2, 3, 4}}, shape);
    Value split = createTranspose(b, loc, expanded, {2, 0, 3, 1, 4});
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, split);
    sizes[0] = b.getIndexAttr(1);
    auto headsType = RankedTensorType::get(
        cast<RankedTensorType>(split.getType()).getShape().drop_front(),
        element);
    SmallVector<Value> result;
    for (int64_t part = 0; part < parts; ++part) {
      SmallVector<OpFoldResult> offsets(5, b.getIndexAttr(0));
      offsets[0] = b.getIndexAttr(part);
      result.push_back(tensor::ExtractSliceOp::create(
          b, loc, headsType, split, offsets, sizes,
          SmallVector<OpFoldResult>(5, b.getIndexAttr(1))));
    }
    return result;
  }

  /// Appends `row` ([1, 1, E] or null for zeros) to x [N, S, E] along S.
  Value appendPosition(Value x, Value row) {
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, x);
    sizes[1] = b.getIndexAttr(1);
    Value tail;
    if (row) {
      Value flat = tensor::CollapseShapeOp::create(b, loc, row, {{0, 1, 2}});
      Value init = tensor::EmptyOp::create(b, loc, sizes, element);
      tail = linalg::BroadcastOp::create(b, loc, flat, init, {0, 1})
                 .getResult()[0];
    } else {
      tail = createFilledTensor(b, loc, sizes, b.getFloatAttr(element, 0));
    }
    return tensor::ConcatOp::create(b, loc, /*dim=*/1, ValueRange{x, tail});
  }

  /// [N, T, E] -> [N, H, T, E / H].
  Value splitHeads(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t embed = type.getDimSize(2);
    int64_t headDim =
        ShapedType::isDynamic(embed) ? ShapedType::kDynamic : embed / heads;
    SmallVector<OpFoldResult> shape = getSizes(b, loc, x, {0, 1});
    shape.push_back(b.getIndexAttr(heads));
    if (ShapedType::isDynamic(headDim)) {
      Value e = tensor::DimOp::create(b, loc, x, 2);
      shape.push_back(
          arith::DivUIOp::create(b, loc, e,
                                 arith::ConstantIndexOp::create(b, loc, heads))
              .getResult());
    } else {
      shape.push_back(b.getIndexAttr(headDim));
    }
    auto expandedType = RankedTensorType::get(
        {type.getDimSize(0), type.getDimSize(1), heads, headDim}, element);
    Value expanded = tensor::ExpandShapeOp::create(b, loc, expandedType, x,
                                                   {{0}, {1}, {2, 3}}, shape);
    return createTranspose(b, loc, expanded, {0, 2, 1, 3});
  }

  /// [N, H, T, D] -> [N, T, H * D].
  Value mergeHeads(Value x) {
    Value transposed = createTranspose(b, loc, x, {0, 2, 1, 3});
    return tensor::CollapseShapeOp::create(b, loc, transposed,
                                           {{0}, {1}, {2, 3}});
  }

  /// PyTorch's key_padding_mask and attn_mask (true = masked out, or
  /// additive) as one attn.sdpa mask [N, H or 1, L or 1, S'] (true = keep,
  /// or additive in the accumulator type), padded with "keep" for the `extra`
  /// appended keys. With `causal`, the top-left causal mask is folded in as
  /// well (PyTorch applies it before the padding, so appended keys stay
  /// visible). Returns null when there is no mask.
  Value combineMasks(Value query, Value key, int64_t extra, bool causal) {
    Value padding = op.getKeyPaddingMask(), attnMask = op.getAttnMask();
    if (!padding && !attnMask && !causal)
      return Value();
    auto isBool = [](Value v) {
      return !v || cast<ShapedType>(v.getType()).getElementType().isInteger(1);
    };
    bool boolResult = isBool(padding) && isBool(attnMask);
    Type resultElement = boolResult ? Type(b.getI1Type()) : accType;

    AffineExpr n, h, l, s;
    bindDims(ctx, n, h, l, s);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, query, 0),
                                       b.getIndexAttr(1), b.getIndexAttr(1),
                                       OpFoldResult()};
    if (padding) {
      if (!batched)
        padding = tensor::ExpandShapeOp::create(
            b, loc,
            RankedTensorType::get(
                {1, cast<ShapedType>(padding.getType()).getDimSize(0)},
                cast<ShapedType>(padding.getType()).getElementType()),
            padding, {{0, 1}},
            {b.getIndexAttr(1), tensor::getMixedSize(b, loc, padding, 0)});
      inputs.push_back(padding);
      maps.push_back(AffineMap::get(4, 0, {n, s}, ctx));
      sizes[3] = tensor::getMixedSize(b, loc, padding, 1);
    }
    if (attnMask) {
      auto type = cast<RankedTensorType>(attnMask.getType());
      sizes[2] = tensor::getMixedSize(b, loc, attnMask, type.getRank() - 2);
      sizes[3] = tensor::getMixedSize(b, loc, attnMask, type.getRank() - 1);
      if (type.getRank() == 2) {
        maps.push_back(AffineMap::get(4, 0, {l, s}, ctx));
      } else {
        // [N * H, L, S] is indexed by n * H + h, as PyTorch's view does.
        sizes[1] = b.getIndexAttr(heads);
        maps.push_back(AffineMap::get(4, 0, {n * heads + h, l, s}, ctx));
      }
      inputs.push_back(attnMask);
    }
    if (causal) {
      sizes[2] = tensor::getMixedSize(b, loc, query, 1);
      sizes[3] = tensor::getMixedSize(b, loc, key, 1);
    }
    Value init = tensor::EmptyOp::create(b, loc, sizes, resultElement);
    maps.push_back(b.getMultiDimIdentityMap(4));
    double negInf = -std::numeric_limits<double>::infinity();
    Value combined =
        linalg::GenericOp::create(
            b, loc, init.getType(), inputs, init, maps,
            SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              SmallVector<Value> maskValues(args.drop_back());
              if (causal) {
                // Key s is masked out (true, PyTorch's sense) when s > l.
                Value l = linalg::IndexOp::create(nb, nl, 2);
                Value s = linalg::IndexOp::create(nb, nl, 3);
                maskValues.push_back(arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::ugt, s, l));
              }
              Value result;
              for (Value m : maskValues) {
                if (boolResult) {
                  // keep = !masked
                  Value one =
                      arith::ConstantOp::create(nb, nl, nb.getBoolAttr(true));
                  Value keep = arith::XOrIOp::create(nb, nl, m, one);
                  result = result ? arith::AndIOp::create(nb, nl, result, keep)
                                        .getResult()
                                  : keep;
                  continue;
                }
                Value additive;
                if (m.getType().isInteger(1)) {
                  Value ninf = arith::ConstantOp::create(
                      nb, nl, nb.getFloatAttr(accType, negInf));
                  Value zero = arith::ConstantOp::create(
                      nb, nl, nb.getFloatAttr(accType, 0));
                  additive = arith::SelectOp::create(nb, nl, m, ninf, zero);
                } else {
                  additive = castFloat(nb, nl, m, accType);
                }
                result = result
                             ? arith::AddFOp::create(nb, nl, result, additive)
                                   .getResult()
                             : additive;
              }
              linalg::YieldOp::create(nb, nl, result);
            })
            .getResult(0);
    if (extra == 0)
      return combined;
    SmallVector<OpFoldResult> tailSizes = getSizes(b, loc, combined);
    tailSizes[3] = b.getIndexAttr(extra);
    TypedAttr keepValue = boolResult ? TypedAttr(b.getBoolAttr(true))
                                     : TypedAttr(b.getFloatAttr(accType, 0));
    Value tail = createFilledTensor(b, loc, tailSizes, keepValue);
    return tensor::ConcatOp::create(b, loc, /*dim=*/3,
                                    ValueRange{combined, tail});
  }

  /// O = P V for P [N, H, L, S] and V [N, H, S, D], accumulated in the
  /// accumulator type.
  Value applyWeights(Value probs, Value v) {
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, probs, {0, 1, 2});
    sizes.push_back(tensor::getMixedSize(b, loc, v, 3));
    Value acc = createFilledTensor(b, loc, sizes, b.getFloatAttr(accType, 0));
    // Loop order (n, h, l, s, d): features innermost, as in `project`.
    AffineExpr n, h, l, s, d;
    bindDims(ctx, n, h, l, s, d);
    Value out = linalg::GenericOp::create(
                    b, loc, acc.getType(), ValueRange{probs, v}, acc,
                    {AffineMap::get(5, 0, {n, h, l, s}, ctx),
                     AffineMap::get(5, 0, {n, h, s, d}, ctx),
                     AffineMap::get(5, 0, {n, h, l, d}, ctx)},
                    {kPar, kPar, kPar, kRed, kPar}, buildMulAccBody)
                    .getResult(0);
    return createElementCast(b, loc, out, element);
  }

  /// Mean over heads: [N, H, L, S] -> [N, L, S], the sum of each head's
  /// probability times 1 / H in the accumulator type: one reduction
  /// (attn-parallelize-contractions distributes it), then a conversion
  /// where the element type is narrower.
  Value averageHeads(Value probs) {
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, probs, {0, 2, 3});
    Value acc = createFilledTensor(b, loc, sizes, b.getFloatAttr(accType, 0));
    Value mean =
        linalg::ReduceOp::create(
            b, loc, probs, acc, {1},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value inv = arith::ConstantOp::create(
                  nb, nl, nb.getFloatAttr(accType, 1.0 / heads));
              Value x = arith::MulFOp::create(
                  nb, nl, castFloat(nb, nl, args[0], accType), inv);
              linalg::YieldOp::create(
                  nb, nl,
                  arith::AddFOp::create(nb, nl, x, args[1]).getResult());
            })
            .getResult(0);
    return createElementCast(b, loc, mean, element);
  }

  /// Drops the batch dimension of an unbatched weights result.
  Value unbatchWeights(Value w) {
    if (batched)
      return w;
    int64_t rank = cast<ShapedType>(w.getType()).getRank();
    SmallVector<ReassociationIndices> reassociation = {{0, 1}};
    for (int64_t d = 2; d < rank; ++d)
      reassociation.push_back({d});
    return tensor::CollapseShapeOp::create(b, loc, w, reassociation);
  }

  MultiheadOp op;
  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  Type element;
  /// f32, or f64 for f64 ops: what projections and sums accumulate in.
  Type accType;
  bool batched;
  int64_t heads;
};

/// Rewrites attn.multihead into in-projections, attn.sdpa (or attn.weights
/// and a P V contraction when the weights are returned) and the
/// out-projection.
struct DecomposeMultihead : OpRewritePattern<MultiheadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MultiheadOp op,
                                PatternRewriter &rewriter) const override {
    MultiheadBuilder mb(op, rewriter);
    Location loc = op.getLoc();
    Value query = mb.toBatchFirst(op.getQuery());
    Value key = mb.toBatchFirst(op.getKey());
    Value value = mb.toBatchFirst(op.getValue());

    // In-projections. Inputs that are one value (self-attention's Q, K
    // and V, or K and V) are projected together by the packed weight's
    // rows for them, straight into heads; appended keys (bias_kv,
    // add_zero_attn) need K and V unsplit and take the separate products.
    Value packed = op.getInProjWeight(), packedBias = op.getInProjBias();
    int64_t embed = op.getQuery().getType().getShape().back();
    bool together = packed && !op.getBiasK() && !op.getAddZeroAttn() &&
                    !ShapedType::isDynamic(embed) &&
                    op.getKey() == op.getValue();
    Value q, k, v;    // [N, T, E], when projected apart
    Value qh, kh, vh; // [N, H, T, D]
    if (together && op.getQuery() == op.getKey()) {
      SmallVector<Value> parts =
          mb.projectHeadsTogether(query, packed, packedBias, 0, 3);
      qh = parts[0], kh = parts[1], vh = parts[2];
    } else if (together) {
      qh = mb.splitHeads(
          mb.project(query, mb.packedSlice(packed, 0),
                     packedBias ? mb.packedSlice(packedBias, 0) : Value()));
      SmallVector<Value> parts =
          mb.projectHeadsTogether(key, packed, packedBias, 1, 2);
      kh = parts[0], vh = parts[1];
    } else {
      Value wq = op.getQProjWeight(), wk = op.getKProjWeight(),
            wv = op.getVProjWeight();
      if (packed) {
        wq = mb.packedSlice(packed, 0);
        wk = mb.packedSlice(packed, 1);
        wv = mb.packedSlice(packed, 2);
      }
      Value bq, bk, bv;
      if (packedBias) {
        bq = mb.packedSlice(packedBias, 0);
        bk = mb.packedSlice(packedBias, 1);
        bv = mb.packedSlice(packedBias, 2);
      }
      q = mb.project(query, wq, bq);
      k = mb.project(key, wk, bk);
      v = mb.project(value, wv, bv);
    }

    // Appended positions: bias_kv first, then the zero attention slot.
    int64_t extra = 0;
    if (op.getBiasK()) {
      k = mb.appendPosition(k, op.getBiasK());
      v = mb.appendPosition(v, op.getBiasV());
      ++extra;
    }
    if (op.getAddZeroAttn()) {
      k = mb.appendPosition(k, Value());
      v = mb.appendPosition(v, Value());
      ++extra;
    }
    // Appended keys are exempt from the causal mask, so with any the causal
    // condition goes into the explicit mask instead of attn.sdpa's attribute.
    bool causalInMask = op.getCausal() && extra > 0;
    Value mask = mb.combineMasks(query, key, extra, causalInMask);
    UnitAttr causal = causalInMask ? UnitAttr() : op.getCausalAttr();

    if (!together)
      qh = mb.splitHeads(q), kh = mb.splitHeads(k), vh = mb.splitHeads(v);
    auto alignment = AlignmentAttr::get(getContext(), Alignment::top_left);
    Value attended;
    Value weights;
    if (!op.getWeights()) {
      Value init = tensor::EmptyOp::create(
          rewriter, loc, getSizes(rewriter, loc, qh), mb.element);
      attended = SdpaOp::create(rewriter, loc, init.getType(), /*lse=*/Type(),
                                qh, kh, vh, mask,
                                /*kv_lens=*/Value(), /*block_offsets=*/Value(),
                                /*block_indices=*/Value(),
                                /*block_classes=*/Value(), op.getDropoutSeed(),
                                /*scale_value=*/Value(), init,
                                /*lse_init=*/Value(),
                                /*scale=*/FloatAttr(), causal,
                                /*window=*/DenseI64ArrayAttr(), alignment,
                                op.getDropoutPAttr(), op.getSeedAttr(),
                                /*block_size=*/DenseI64ArrayAttr())
                     .getResult();
    } else {
      SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, qh, {0, 1, 2});
      sizes.push_back(tensor::getMixedSize(rewriter, loc, kh, 2));
      Value init = tensor::EmptyOp::create(rewriter, loc, sizes, mb.element);
      Value probs = WeightsOp::create(
          rewriter, loc, init.getType(), qh, kh, mask, /*kv_lens=*/Value(),
          /*block_offsets=*/Value(),
          /*block_indices=*/Value(),
          /*block_classes=*/Value(), op.getDropoutSeed(),
          /*scale_value=*/Value(), init,
          /*scale=*/FloatAttr(), causal,
          /*window=*/DenseI64ArrayAttr(), alignment, op.getDropoutPAttr(),
          op.getSeedAttr(),
          /*block_size=*/DenseI64ArrayAttr());
      attended = mb.applyWeights(probs, vh);
      weights = mb.unbatchWeights(
          op.getPerHeadWeights() ? probs : mb.averageHeads(probs));
    }

    Value merged = mb.mergeHeads(attended);
    Value out = mb.project(merged, op.getOutProjWeight(), op.getOutProjBias());
    SmallVector<Value> results = {mb.fromBatchFirst(out)};
    if (weights)
      results.push_back(weights);
    // Shapes computed here may be less static than the op's declared types;
    // cast back so users see the types they had.
    for (auto [result, declared] : llvm::zip(results, op.getResultTypes()))
      if (result.getType() != declared)
        result = tensor::CastOp::create(rewriter, loc, declared, result);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AttnDecomposeMultiheadPass
    : attn::impl::AttnDecomposeMultiheadBase<AttnDecomposeMultiheadPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeMultiheadPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void attn::populateDecomposeMultiheadPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeMultihead>(patterns.getContext());
}
