//===- AttnRelations.cpp - what the lowerings assume of sizes and values --===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The relations between sizes (getSizeRelations) and the checks of
// integer values (getValueChecks) that the ops' verifiers cannot decide
// when sizes or values are known only at run time, and that the compiled
// entry points check instead (attn-record-abi-sizes, attn-check-abi).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Relations of sizes the lowerings assume
//===----------------------------------------------------------------------===//

namespace {
/// Collects the relations of one op, dropping pairs with no dynamic side
/// (the verifier compared those).
struct RelationList {
  SmallVectorImpl<SizeRelation> &result;

  void add(TensorDim size, TensorDim other, bool multiple = false) {
    auto isDynamic = [](TensorDim d) {
      return cast<ShapedType>(d.value.getType()).isDynamicDim(d.dim);
    };
    if (size.value && other.value && (isDynamic(size) || isDynamic(other)))
      result.push_back({size, other, multiple});
  }
  /// Every dimension of `value` against the same dimension of `like`.
  void addAll(Value value, Value like) {
    if (!value)
      return;
    for (int64_t d = 0, e = cast<ShapedType>(value.getType()).getRank(); d < e;
         ++d)
      add({value, d}, {like, d});
  }
  /// The dimensions of `value` against `dims`, one for one.
  void addEach(Value value, ArrayRef<TensorDim> dims) {
    if (!value)
      return;
    for (auto [d, other] : llvm::enumerate(dims))
      add({value, static_cast<int64_t>(d)}, other);
  }
};
} // namespace

/// What attn.sdpa, attn.weights and attn.sdpa_grad share (verifyScoreOp):
/// key against query, the query heads a multiple of the key's, the mask
/// and the lengths against [B, Hq, Sq, Skv].
template <typename OpTy>
static void addScoreRelations(OpTy op, RelationList &list) {
  Value q = op.getQuery(), k = op.getKey();
  list.add({k, 0}, {q, 0});
  list.add({k, 3}, {q, 3});
  // Query head h reads key/value head h / (Hq / Hkv).
  list.add({q, 1}, {k, 1}, /*multiple=*/true);
  const TensorDim full[4] = {{q, 0}, {q, 1}, {q, 2}, {k, 2}};
  if (Value mask = op.getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    for (int64_t i = 0, rank = type.getRank(); i < rank; ++i)
      if (type.getDimSize(i) != 1)
        list.add({mask, i}, full[4 - rank + i]);
  }
  list.addEach(op.getKvLens(), {full[0]});
}

/// value [B, Hkv, Skv, Dv] against key.
static void addValueRelations(Value value, Value key, RelationList &list) {
  for (int64_t d = 0; d < 3; ++d)
    list.add({value, d}, {key, d});
}

static void addMultiheadRelations(MultiheadOp op, RelationList &list) {
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  int64_t rank = op.getQuery().getType().getRank();
  bool batched = rank == 3;
  int64_t seqDim = batched && op.getBatchFirst() ? 1 : 0;
  TensorDim embed{query, rank - 1}, kdim{key, rank - 1}, vdim{value, rank - 1};
  TensorDim tgtLen{query, seqDim}, srcLen{key, seqDim};
  if (batched) {
    int64_t batchDim = op.getBatchFirst() ? 0 : 1;
    list.add({key, batchDim}, {query, batchDim});
    list.add({value, batchDim}, {query, batchDim});
    list.addEach(op.getKeyPaddingMask(), {{query, batchDim}, srcLen});
  } else {
    list.addEach(op.getKeyPaddingMask(), {srcLen});
  }
  list.add({value, seqDim}, srcLen);
  if (Value inProj = op.getInProjWeight()) {
    list.add(kdim, embed);
    list.add(vdim, embed);
    list.add({inProj, 1}, embed);
  }
  list.addEach(op.getQProjWeight(), {embed, embed});
  list.addEach(op.getKProjWeight(), {embed, kdim});
  list.addEach(op.getVProjWeight(), {embed, vdim});
  list.addEach(op.getOutProjWeight(), {embed, embed});
  list.addEach(op.getOutProjBias(), {embed});
  for (Value bias : {op.getBiasK(), op.getBiasV()})
    if (bias)
      list.add({bias, 2}, embed);
  if (Value mask = op.getAttnMask()) {
    int64_t maskRank = cast<RankedTensorType>(mask.getType()).getRank();
    list.add({mask, maskRank - 2}, tgtLen);
    list.add({mask, maskRank - 1}, srcLen);
  }
  list.addAll(op.getOutput(), query);
  if (Value weights = op.getWeights()) {
    int64_t weightsRank = cast<RankedTensorType>(weights.getType()).getRank();
    if (batched)
      list.add({weights, 0}, {query, op.getBatchFirst() ? 0 : 1});
    list.add({weights, weightsRank - 2}, tgtLen);
    // bias_kv and add_zero_attn lengthen the rows by a key each.
    if (!op.getBiasK() && !op.getAddZeroAttn())
      list.add({weights, weightsRank - 1}, srcLen);
  }
}

void attn::getSizeRelations(Operation *op,
                            SmallVectorImpl<SizeRelation> &result) {
  RelationList list{result};
  if (auto sdpa = dyn_cast<SdpaOp>(op)) {
    Value q = sdpa.getQuery(), v = sdpa.getValue();
    addScoreRelations(sdpa, list);
    addValueRelations(v, sdpa.getKey(), list);
    list.addEach(sdpa.getResult(), {{q, 0}, {q, 1}, {q, 2}, {v, 3}});
    list.addEach(sdpa.getLse(), {{q, 0}, {q, 1}, {q, 2}});
  } else if (auto weights = dyn_cast<WeightsOp>(op)) {
    Value q = weights.getQuery();
    addScoreRelations(weights, list);
    list.addEach(weights.getResult(),
                 {{q, 0}, {q, 1}, {q, 2}, {weights.getKey(), 2}});
  } else if (auto grad = dyn_cast<SdpaGradOp>(op)) {
    Value q = grad.getQuery(), v = grad.getValue();
    addScoreRelations(grad, list);
    addValueRelations(v, grad.getKey(), list);
    list.addEach(grad.getOut(), {{q, 0}, {q, 1}, {q, 2}, {v, 3}});
    list.addAll(grad.getOutGrad(), grad.getOut());
    list.addEach(grad.getLse(), {{q, 0}, {q, 1}, {q, 2}});
    list.addAll(grad.getQueryGrad(), q);
    list.addAll(grad.getKeyGrad(), grad.getKey());
    list.addAll(grad.getValueGrad(), v);
  } else if (auto multihead = dyn_cast<MultiheadOp>(op)) {
    addMultiheadRelations(multihead, list);
  }
}

void attn::getValueChecks(Operation *op, SmallVectorImpl<ValueCheck> &result) {
  // The key lengths of an op against its keys, and the pages of those keys
  // where a key or value operand is read from a paged cache.
  auto addLengths = [&](Value lens, Value key, ValueRange operands) {
    if (!lens)
      return;
    result.push_back({ValueCheckKind::LengthsWithin, {lens}, {{key, 2}}});
    for (Value operand : operands)
      if (auto gather = operand.getDefiningOp<GatherPagesOp>())
        result.push_back({ValueCheckKind::PagesWithin,
                          {gather.getPageTable(), lens},
                          {{gather.getPages(), 0},
                           {gather.getPages(), gather.getCacheDims().slot}}});
  };
  if (auto sdpa = dyn_cast<SdpaOp>(op))
    addLengths(sdpa.getKvLens(), sdpa.getKey(),
               {sdpa.getKey(), sdpa.getValue()});
  else if (auto weights = dyn_cast<WeightsOp>(op))
    addLengths(weights.getKvLens(), weights.getKey(), {weights.getKey()});
  else if (auto grad = dyn_cast<SdpaGradOp>(op))
    addLengths(grad.getKvLens(), grad.getKey(),
               {grad.getKey(), grad.getValue()});
  else if (auto append = dyn_cast<AppendPagesOp>(op))
    result.push_back({ValueCheckKind::PageWrites,
                      {append.getPageTable(), append.getPositions()},
                      {{append.getCache(), 0},
                       {append.getCache(), append.getCacheDims().slot},
                       {append.getRows(), 2}}});
}

bool attn::isRowStridedLayout(Attribute layout, int64_t rank) {
  auto strided = dyn_cast<StridedLayoutAttr>(layout);
  if (!strided || rank < 1 || !ShapedType::isDynamic(strided.getOffset()))
    return false;
  ArrayRef<int64_t> strides = strided.getStrides();
  return static_cast<int64_t>(strides.size()) == rank && strides.back() == 1 &&
         llvm::all_of(strides.drop_back(), ShapedType::isDynamic);
}
