//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The verifiers here are the user-facing contract of the dialect: every rule
// reports the offending numbers, and nothing reachable from parsed IR asserts.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "attn/Dialect/Attn/IR/RegionDerivative.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static constexpr int64_t kDynamic = ShapedType::kDynamic;

/// Renders a shape the way users write it in diagnostics: `[2, ?, 64]`.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (ShapedType::isDynamic(dim))
      os << '?';
    else
      os << dim;
  });
  os << ']';
  return text;
}

/// Renders a float attribute value compactly (`0.1`, `1`, `inf`).
static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// Two extents agree unless both are static and differ.
static bool extentsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Product of extents, dynamic if either is.
static int64_t mulExtents(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
    return kDynamic;
  return a * b;
}

/// Checks that `type` has the `expected` shape. `layout` names the dimensions
/// (e.g. "[3 * embed_dim, embed_dim]") so the message says what was meant as
/// well as what was found.
static LogicalResult verifyShape(Operation *op, StringRef what,
                                 RankedTensorType type,
                                 ArrayRef<int64_t> expected, StringRef layout) {
  bool ok =
      type.getRank() == static_cast<int64_t>(expected.size()) &&
      llvm::all_of(llvm::zip_equal(type.getShape(), expected), [](auto pair) {
        return extentsAgree(std::get<0>(pair), std::get<1>(pair));
      });
  if (ok)
    return success();
  return op->emitOpError() << what << " must have shape " << layout << " = "
                           << formatShape(expected) << ", got "
                           << formatShape(type.getShape());
}

/// Checks that `type` has the element type `expected`.
static LogicalResult verifyElementType(Operation *op, StringRef what,
                                       ShapedType type, Type expected,
                                       StringRef reference) {
  if (type.getElementType() == expected)
    return success();
  return op->emitOpError() << what << " element type (" << type.getElementType()
                           << ") must match " << reference << " element type ("
                           << expected << ")";
}

/// The dropout probability, the seed attribute and the run-time seed
/// operand (null when absent).
static LogicalResult verifyDropout(Operation *op, double dropout, int64_t seed,
                                   Value seedOperand) {
  if (!(dropout >= 0.0 && dropout < 1.0))
    return op->emitOpError()
           << "dropout (" << formatNumber(dropout) << ") must be in [0, 1)";
  if (dropout == 0.0 && seed != 0)
    return op->emitOpError()
           << "seed (" << seed << ") has no effect without dropout";
  if (dropout == 0.0 && seedOperand)
    return op->emitOpError() << "dropout_seed has no effect without dropout";
  return success();
}

//===----------------------------------------------------------------------===//
// Score ops (attn.sdpa, attn.weights)
//===----------------------------------------------------------------------===//

namespace {
/// The extents every score op is checked against, read from query and key.
struct ScoreDims {
  int64_t batch, qHeads, qLen, headDim, kvHeads, kvLen;
};
} // namespace

static LogicalResult verifyRank4(Operation *op, StringRef what,
                                 RankedTensorType type, StringRef layout) {
  if (type.getRank() == 4)
    return success();
  return op->emitOpError() << what << " must be a rank-4 tensor " << layout
                           << ", got rank " << type.getRank();
}

/// Checks that a region either is empty or has one block whose arguments
/// have the types `expected` and whose terminator yields `yieldType`.
static LogicalResult verifyModifierRegion(Operation *op, Region &region,
                                          StringRef name,
                                          ArrayRef<Type> expected,
                                          StringRef signature, Type yieldType) {
  if (region.empty())
    return success();
  Block &block = region.front();
  if (block.getArgumentTypes() != TypeRange(expected))
    return op->emitOpError()
           << name << " region must take " << signature << ", got "
           << block.getNumArguments() << " argument(s) of types ("
           << block.getArgumentTypes() << ")";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError() << name << " region must end in attn.yield";
  if (yield.getValue().getType() != yieldType)
    return op->emitOpError() << name << " region must yield " << yieldType
                             << ", got " << yield.getValue().getType();
  return success();
}

/// ceil(a / b) for a static `a`, dynamic otherwise.
static int64_t ceilDivExtent(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? kDynamic : llvm::divideCeil(a, b);
}

/// The block-sparse layout (CSR offsets/indices), the block classes and
/// `block_size`: they come together, the shapes follow the block grid, and
/// layouts given as constants are checked entry by entry.
template <typename OpTy>
static LogicalResult verifyBlockSparsity(OpTy op, const ScoreDims &dims) {
  std::optional<ArrayRef<int64_t>> blockSize = op.getBlockSize();
  Value offsets = op.getBlockOffsets(), indices = op.getBlockIndices();
  Value classes = op.getBlockClasses();
  if (!blockSize) {
    if (offsets || classes)
      return op.emitOpError()
             << (offsets ? "blocks" : "block_classes")
             << " requires block_size = [query block, key block]";
    return success();
  }
  if (!offsets && !classes)
    return op.emitOpError()
           << "block_size needs blocks(offsets, indices) or block_classes";
  if (offsets && classes)
    return op.emitOpError()
           << "blocks and block_classes are exclusive (--attn-sparsify turns "
              "a layout into classes)";
  if (blockSize->size() != 2 || (*blockSize)[0] <= 0 || (*blockSize)[1] <= 0)
    return op.emitOpError()
           << "block_size must be 2 positive extents [query block, key "
              "block], got "
           << formatShape(*blockSize);
  int64_t qBlocks = ceilDivExtent(dims.qLen, (*blockSize)[0]);
  int64_t kBlocks = ceilDivExtent(dims.kvLen, (*blockSize)[1]);
  if (offsets) {
    auto offsetsType = cast<RankedTensorType>(offsets.getType());
    int64_t rows = ShapedType::isDynamic(qBlocks) ? kDynamic : qBlocks + 1;
    if (failed(verifyShape(op, "block offsets", offsetsType, {rows},
                           "[ceil(Sq / bq) + 1]")))
      return failure();
    // Constant layouts (the usual case: a pattern fixed at compile time) are
    // checked here rather than read out of bounds at run time.
    DenseIntElementsAttr offsetValues, indexValues;
    if (matchPattern(offsets, m_Constant(&offsetValues)) &&
        matchPattern(indices, m_Constant(&indexValues))) {
      SmallVector<int64_t> off, idx;
      for (const APInt &v : offsetValues.getValues<APInt>())
        off.push_back(v.getSExtValue());
      for (const APInt &v : indexValues.getValues<APInt>())
        idx.push_back(v.getSExtValue());
      if (off.front() != 0 || off.back() != static_cast<int64_t>(idx.size()))
        return op.emitOpError()
               << "block offsets must start at 0 and end at the number of "
                  "block indices ("
               << idx.size() << "), got " << off.front() << " and "
               << off.back();
      for (size_t r = 0; r + 1 < off.size(); ++r)
        if (off[r + 1] < off[r])
          return op.emitOpError()
                 << "block offsets must not decrease, got " << off[r]
                 << " then " << off[r + 1] << " at query block " << r;
      for (auto [n, k] : llvm::enumerate(idx))
        if (k < 0 || (!ShapedType::isDynamic(kBlocks) && k >= kBlocks))
          return op.emitOpError()
                 << "block index " << n << " (" << k
                 << ") is out of range: key blocks are 0 to "
                 << (ShapedType::isDynamic(kBlocks) ? kDynamic : kBlocks - 1);
    }
  }
  if (classes) {
    auto classesType = cast<RankedTensorType>(classes.getType());
    ArrayRef<int64_t> shape = classesType.getShape();
    const int64_t grid[4] = {dims.batch, dims.qHeads, qBlocks, kBlocks};
    for (int64_t d = 0; d < 4; ++d)
      if (!extentsAgree(shape[d], grid[d]) && !(d < 2 && shape[d] == 1))
        return op.emitOpError()
               << "block_classes must be [B or 1, Hq or 1, ceil(Sq / bq), "
                  "ceil(Skv / bk)] = "
               << formatShape(grid) << ", got " << formatShape(shape);
  }
  return success();
}

/// The rules attn.sdpa, attn.weights and attn.sdpa_grad share: query/key
/// consistency, masks, attributes and regions. On success `dims` holds the
/// extents read from query and key.
template <typename OpTy>
static LogicalResult verifyScoreOp(OpTy op, ScoreDims &dims) {
  Operation *raw = op.getOperation();
  auto queryType = op.getQuery().getType();
  auto keyType = op.getKey().getType();
  if (failed(verifyRank4(raw, "query", queryType, "[B, Hq, Sq, D]")) ||
      failed(verifyRank4(raw, "key", keyType, "[B, Hkv, Skv, D]")))
    return failure();
  Type elementType = queryType.getElementType();
  if (failed(verifyElementType(raw, "key", keyType, elementType, "query")))
    return failure();

  ArrayRef<int64_t> q = queryType.getShape(), k = keyType.getShape();
  dims = {q[0], q[1], q[2], q[3], k[1], k[2]};
  if (!extentsAgree(k[0], dims.batch))
    return op.emitOpError()
           << "key batch (" << k[0] << ") must match query batch ("
           << dims.batch << ")";
  if (!extentsAgree(k[3], dims.headDim))
    return op.emitOpError()
           << "key head dim (" << k[3] << ") must match query head dim ("
           << dims.headDim << ")";
  if (dims.kvHeads == 0)
    return op.emitOpError() << "key/value heads must be at least 1";
  if (!ShapedType::isDynamic(dims.qHeads) &&
      !ShapedType::isDynamic(dims.kvHeads) && dims.qHeads % dims.kvHeads != 0)
    return op.emitOpError() << "query heads (" << dims.qHeads
                            << ") must be a multiple of key/value heads ("
                            << dims.kvHeads << ")";

  // The mask broadcasts to [B, Hq, Sq, Skv] aligned on the right.
  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    int64_t rank = maskType.getRank();
    if (rank < 1 || rank > 4)
      return op.emitOpError() << "mask must have rank 1 to 4 (broadcast to "
                                 "[B, Hq, Sq, Skv]), got rank "
                              << rank;
    const int64_t full[4] = {dims.batch, dims.qHeads, dims.qLen, dims.kvLen};
    const char *names[4] = {"B", "Hq", "Sq", "Skv"};
    for (int64_t i = 0; i < rank; ++i) {
      int64_t target = 4 - rank + i;
      int64_t extent = maskType.getDimSize(i);
      if (extent != 1 && !extentsAgree(extent, full[target]))
        return op.emitOpError()
               << "mask dim " << i << " (" << extent << ") must be 1 or "
               << names[target] << " (" << full[target]
               << ") to broadcast to [B, Hq, Sq, Skv] = " << formatShape(full);
    }
  }

  if (Value kvLens = op.getKvLens()) {
    auto lensType = cast<RankedTensorType>(kvLens.getType());
    if (failed(verifyShape(raw, "kv_lens", lensType, {dims.batch}, "[B]")))
      return failure();
  }

  if (failed(verifyBlockSparsity(op, dims)))
    return failure();

  if (std::optional<APFloat> scale = op.getScale()) {
    if (!scale->isFinite() || scale->isZero())
      return op.emitOpError()
             << "scale (" << formatNumber(scale->convertToDouble())
             << ") must be finite and non-zero";
  }
  if (op.getScale() && op.getScaleValue())
    return op.emitOpError() << "takes a scale attribute ("
                            << formatNumber(op.getScale()->convertToDouble())
                            << ") or a scale_value operand, not both";

  if (std::optional<ArrayRef<int64_t>> window = op.getWindow()) {
    if (window->size() != 2)
      return op.emitOpError() << "window must have 2 entries [left, right], "
                                 "got "
                              << window->size();
    if ((*window)[0] < 0 || (*window)[1] < 0)
      return op.emitOpError() << "window extents must be non-negative, got "
                              << formatShape(*window);
  }

  if (op.getAlignment() != Alignment::top_left && !op.getCausal() &&
      !op.getWindow())
    return op.emitOpError()
           << "align = " << stringifyAlignment(op.getAlignment())
           << " has no effect without causal or window";

  if (failed(verifyDropout(raw, op.getDropoutP().convertToDouble(),
                           op.getSeed(), op.getDropoutSeed())))
    return failure();

  Builder b(op.getContext());
  Type index = b.getIndexType();
  if (failed(verifyModifierRegion(
          raw, op.getScoreMod(), "score_mod",
          {b.getF32Type(), index, index, index, index},
          "(score: f32, b: index, h: index, q_idx: index, kv_idx: index)",
          b.getF32Type())) ||
      failed(verifyModifierRegion(
          raw, op.getMaskMod(), "mask_mod", {index, index, index, index},
          "(b: index, h: index, q_idx: index, kv_idx: index)", b.getI1Type())))
    return failure();
  return success();
}

/// `value` against the extents read from query and key; on success `dv` is
/// its head dimension.
static LogicalResult verifyValue(Operation *op,
                                 TypedValue<RankedTensorType> value,
                                 Type elementType, const ScoreDims &dims,
                                 int64_t &dv) {
  auto valueType = value.getType();
  if (failed(verifyRank4(op, "value", valueType, "[B, Hkv, Skv, Dv]")) ||
      failed(verifyElementType(op, "value", valueType, elementType, "query")))
    return failure();
  ArrayRef<int64_t> v = valueType.getShape();
  if (!extentsAgree(v[0], dims.batch) || !extentsAgree(v[1], dims.kvHeads) ||
      !extentsAgree(v[2], dims.kvLen))
    return op->emitOpError()
           << "value shape " << formatShape(v)
           << " must agree with key on [B, Hkv, Skv] = "
           << formatShape({dims.batch, dims.kvHeads, dims.kvLen});
  dv = v[3];
  return success();
}

/// A row log-sum-exp `lse` ([B, Hq, Sq], the accumulator type of the
/// inputs' `elementType`).
static LogicalResult verifyLse(Operation *op, StringRef what,
                               RankedTensorType lse, Type elementType,
                               const ScoreDims &dims) {
  Type acc = elementType.isF64() ? Type(Float64Type::get(op->getContext()))
                                 : Type(Float32Type::get(op->getContext()));
  if (lse.getElementType() != acc)
    return op->emitOpError()
           << what << " element type (" << lse.getElementType()
           << ") must be the accumulator type of " << elementType << " (" << acc
           << ")";
  return verifyShape(op, what, lse, {dims.batch, dims.qHeads, dims.qLen},
                     "[B, Hq, Sq]");
}

/// `value` and the attention output `what` ([B, Hq, Sq, Dv], the query's
/// element type) of attn.sdpa and attn.sdpa_grad.
static LogicalResult
verifyValueAndOutput(Operation *op, TypedValue<RankedTensorType> value,
                     StringRef what, RankedTensorType output, Type elementType,
                     const ScoreDims &dims) {
  int64_t dv;
  if (failed(verifyValue(op, value, elementType, dims, dv)) ||
      failed(verifyElementType(op, what, output, elementType, "query")))
    return failure();
  return verifyShape(op, what, output, {dims.batch, dims.qHeads, dims.qLen, dv},
                     "[B, Hq, Sq, Dv]");
}

LogicalResult SdpaOp::verify() {
  ScoreDims dims;
  Type elementType = getQuery().getType().getElementType();
  if (failed(verifyScoreOp(*this, dims)) ||
      failed(verifyValueAndOutput(*this, getValue(), "result",
                                  getResult().getType(), elementType, dims)))
    return failure();
  if (static_cast<bool>(getLseInit()) != static_cast<bool>(getLse()))
    return emitOpError() << "lse result and lse init must come together, got "
                         << (getLse() ? "a result without an init"
                                      : "an init without a result");
  if (getLse()) {
    if (getLse().getType() != getLseInit().getType())
      return emitOpError() << "lse result type (" << getLse().getType()
                           << ") must match its init ("
                           << getLseInit().getType() << ")";
    return verifyLse(*this, "lse", getLse().getType(), elementType, dims);
  }
  return success();
}

/// The dimensions of a paged cache in `layout`, as diagnostics name them.
static StringRef getPageCacheLayout(PageLayout layout) {
  return layout == PageLayout::nhd ? "[num_pages, page_size, heads, head_dim]"
                                   : "[num_pages, heads, page_size, head_dim]";
}

/// A static page size (dimension `slot` of the cache `what`) is positive.
static LogicalResult verifyPageSize(Operation *op, StringRef what,
                                    RankedTensorType cache, unsigned slot) {
  int64_t pageSize = cache.getDimSize(slot);
  if (ShapedType::isDynamic(pageSize) || pageSize >= 1)
    return success();
  return op->emitOpError() << "page_size (" << what << " dimension " << slot
                           << ") must be at least 1, got " << pageSize;
}

LogicalResult GatherPagesOp::verify() {
  RankedTensorType pages = getPages().getType();
  PageCacheDims dims = getCacheDims();
  if (failed(verifyRank4(*this, "pages", pages,
                         getPageCacheLayout(getLayout()))) ||
      failed(verifyPageSize(*this, "pages", pages, dims.slot)))
    return failure();
  int64_t pageSize = pages.getDimSize(dims.slot);
  RankedTensorType table = getPageTable().getType();
  RankedTensorType result = getResult().getType();
  if (failed(verifyElementType(*this, "result", result, pages.getElementType(),
                               "pages")))
    return failure();
  return verifyShape(*this, "result", result,
                     {table.getDimSize(0), pages.getDimSize(dims.head),
                      mulExtents(table.getDimSize(1), pageSize),
                      pages.getDimSize(3)},
                     "[batch, heads, max_pages * page_size, head_dim]");
}

LogicalResult AppendPagesOp::verify() {
  RankedTensorType cache = getCache().getType();
  RankedTensorType rows = getRows().getType();
  PageCacheDims dims = getCacheDims();
  if (failed(verifyRank4(*this, "cache", cache,
                         getPageCacheLayout(getLayout()))) ||
      failed(verifyRank4(*this, "rows", rows, "[B, heads, T, head_dim]")) ||
      failed(verifyElementType(*this, "rows", rows, cache.getElementType(),
                               "cache")) ||
      failed(verifyPageSize(*this, "cache", cache, dims.slot)))
    return failure();
  RankedTensorType table = getPageTable().getType();
  int64_t batch = table.getDimSize(0);
  std::string layout =
      llvm::formatv("[B (page table rows), heads (cache dimension {0}), T, "
                    "head_dim (cache dimension 3)]",
                    dims.head);
  if (failed(verifyShape(*this, "rows", rows,
                         {batch, cache.getDimSize(dims.head),
                          rows.getDimSize(2), cache.getDimSize(3)},
                         layout)))
    return failure();
  return verifyShape(*this, "positions", getPositions().getType(), {batch},
                     "[B (page table rows)]");
}

/// The batch a [B + 1] offsets tensor describes (dynamic if it is), after
/// checking that a static one has an entry to start from.
static FailureOr<int64_t> verifySequenceOffsets(Operation *op,
                                                RankedTensorType offsets) {
  int64_t entries = offsets.getDimSize(0);
  if (ShapedType::isDynamic(entries))
    return kDynamic;
  if (entries < 1)
    return op->emitOpError()
           << "cu_seqlens must have B + 1 >= 1 entries, got " << entries;
  return entries - 1;
}

/// The padded [B, H, S, D] and packed [T, H, D] sides of a (un)pad op
/// agree with each other and with the offsets.
static LogicalResult verifySequenceBatch(Operation *op, StringRef paddedName,
                                         RankedTensorType padded,
                                         StringRef packedName,
                                         RankedTensorType packed,
                                         RankedTensorType offsets) {
  if (failed(verifyRank4(op, paddedName, padded, "[B, heads, S, head_dim]")))
    return failure();
  if (packed.getRank() != 3)
    return op->emitOpError() << packedName
                             << " must be a rank-3 tensor [T, heads, "
                                "head_dim], got rank "
                             << packed.getRank();
  FailureOr<int64_t> batch = verifySequenceOffsets(op, offsets);
  if (failed(batch) ||
      failed(verifyElementType(op, paddedName, padded, packed.getElementType(),
                               packedName)))
    return failure();
  std::string layout = llvm::formatv(
      "[B (cu_seqlens entries - 1), heads ({0} dimension 1), S, head_dim "
      "({0} dimension 2)]",
      packedName);
  return verifyShape(op, paddedName, padded,
                     {*batch, packed.getDimSize(1), padded.getDimSize(2),
                      packed.getDimSize(2)},
                     layout);
}

LogicalResult PadSequencesOp::verify() {
  RankedTensorType result = getResult().getType();
  RankedTensorType offsets = getCuSeqlens().getType();
  if (failed(verifySequenceBatch(*this, "result", result, "packed",
                                 getPacked().getType(), offsets)))
    return failure();
  int64_t padded = result.getDimSize(2);
  if (ShapedType::isDynamic(padded))
    return emitOpError() << "the padded length S (result dimension 2) must "
                            "be static: it bounds the longest sequence";
  RankedTensorType lengths = getLengths().getType();
  if (failed(verifyElementType(*this, "lengths", lengths,
                               offsets.getElementType(), "cu_seqlens")))
    return failure();
  return verifyShape(*this, "lengths", lengths, {result.getDimSize(0)},
                     "[B (cu_seqlens entries - 1)]");
}

LogicalResult UnpadSequencesOp::verify() {
  return verifySequenceBatch(*this, "padded", getPadded().getType(), "init",
                             getInit().getType(), getCuSeqlens().getType());
}

LogicalResult WeightsOp::verify() {
  ScoreDims dims;
  if (failed(verifyScoreOp(*this, dims)) ||
      failed(verifyElementType(*this, "result", getResult().getType(),
                               getQuery().getType().getElementType(), "query")))
    return failure();
  return verifyShape(*this, "result", getResult().getType(),
                     {dims.batch, dims.qHeads, dims.qLen, dims.kvLen},
                     "[B, Hq, Sq, Skv]");
}

LogicalResult SdpaGradOp::verify() {
  ScoreDims dims;
  Type elementType = getQuery().getType().getElementType();
  if (failed(verifyScoreOp(*this, dims)) ||
      failed(verifyValueAndOutput(*this, getValue(), "out", getOut().getType(),
                                  elementType, dims)))
    return failure();
  if (failed(verifyLse(*this, "lse", getLse().getType(), elementType, dims)))
    return failure();
  if (!getScoreMod().empty())
    if (Operation *op = findNonDifferentiableOp(getScoreMod()))
      return op->emitError()
             << "'" << op->getName()
             << "' in score_mod cannot be differentiated for attn.sdpa_grad "
                "(see RegionDerivative.h for the ops that can)";
  return success();
}

//===----------------------------------------------------------------------===//
// MultiheadOp
//===----------------------------------------------------------------------===//

LogicalResult MultiheadOp::verify() {
  auto queryType = getQuery().getType();
  auto keyType = getKey().getType();
  auto valueType = getValue().getType();
  int64_t rank = queryType.getRank();
  if ((rank != 2 && rank != 3) || keyType.getRank() != rank ||
      valueType.getRank() != rank)
    return emitOpError() << "query, key and value must all be rank 3 "
                            "(batched) or all rank 2 (unbatched), got ranks "
                         << queryType.getRank() << ", " << keyType.getRank()
                         << ", " << valueType.getRank();
  bool batched = rank == 3;
  if (!batched && getBatchFirst())
    return emitOpError() << "batch_first needs batched (rank-3) inputs";

  // Every float operand and result shares the query's element type.
  Type elementType = queryType.getElementType();
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    auto type = cast<RankedTensorType>(operand.get().getType());
    if (isa<IntegerType>(type.getElementType()))
      continue;
    // Masks may be additive in any float type; they are widened to f32.
    if (operand.get() == getKeyPaddingMask() || operand.get() == getAttnMask())
      continue;
    if (type.getElementType() != elementType)
      return emitOpError() << "operand #" << operand.getOperandNumber()
                           << " element type (" << type.getElementType()
                           << ") must match query element type (" << elementType
                           << ")";
  }

  // [L, N, E] by default, [N, L, E] with batch_first, [L, E] unbatched.
  int64_t seqDim = batched && getBatchFirst() ? 1 : 0;
  int64_t batchDim = batched ? (getBatchFirst() ? 0 : 1) : -1;
  int64_t embed = queryType.getShape().back();
  int64_t kdim = keyType.getShape().back();
  int64_t vdim = valueType.getShape().back();
  int64_t tgtLen = queryType.getDimSize(seqDim);
  int64_t srcLen = keyType.getDimSize(seqDim);
  int64_t batch = batched ? queryType.getDimSize(batchDim) : 1;
  int64_t heads = getNumHeads();

  if (batched && (!extentsAgree(keyType.getDimSize(batchDim), batch) ||
                  !extentsAgree(valueType.getDimSize(batchDim), batch)))
    return emitOpError() << "key batch (" << keyType.getDimSize(batchDim)
                         << ") and value batch ("
                         << valueType.getDimSize(batchDim)
                         << ") must match query batch (" << batch << ")";
  if (!extentsAgree(valueType.getDimSize(seqDim), srcLen))
    return emitOpError() << "value length (" << valueType.getDimSize(seqDim)
                         << ") must match key length (" << srcLen << ")";
  if (!ShapedType::isDynamic(embed) && embed % heads != 0)
    return emitOpError() << "embed_dim (" << embed
                         << ") must be divisible by num_heads (" << heads
                         << ")";

  // In-projection: packed or three separate weights, never a mix.
  bool packed = static_cast<bool>(getInProjWeight());
  int numSeparate = static_cast<bool>(getQProjWeight()) +
                    static_cast<bool>(getKProjWeight()) +
                    static_cast<bool>(getVProjWeight());
  if (packed == (numSeparate != 0) || (!packed && numSeparate != 3))
    return emitOpError() << "expects either in_proj or all three of q_proj, "
                            "k_proj and v_proj";
  if (packed) {
    if (!extentsAgree(kdim, embed) || !extentsAgree(vdim, embed))
      return emitOpError() << "in_proj requires kdim (" << kdim
                           << ") and vdim (" << vdim << ") to equal embed_dim ("
                           << embed << "); use q_proj, k_proj and v_proj";
    if (failed(verifyShape(*this, "in_proj", getInProjWeight().getType(),
                           {mulExtents(3, embed), embed},
                           "[3 * embed_dim, embed_dim]")))
      return failure();
  } else if (failed(verifyShape(*this, "q_proj", getQProjWeight().getType(),
                                {embed, embed}, "[embed_dim, embed_dim]")) ||
             failed(verifyShape(*this, "k_proj", getKProjWeight().getType(),
                                {embed, kdim}, "[embed_dim, kdim]")) ||
             failed(verifyShape(*this, "v_proj", getVProjWeight().getType(),
                                {embed, vdim}, "[embed_dim, vdim]"))) {
    return failure();
  }
  if (getInProjBias() &&
      failed(verifyShape(*this, "in_proj_bias", getInProjBias().getType(),
                         {mulExtents(3, embed)}, "[3 * embed_dim]")))
    return failure();

  if (static_cast<bool>(getBiasK()) != static_cast<bool>(getBiasV()))
    return emitOpError() << "bias_k and bias_v must be given together";
  if (getBiasK() && (failed(verifyShape(*this, "bias_k", getBiasK().getType(),
                                        {1, 1, embed}, "[1, 1, embed_dim]")) ||
                     failed(verifyShape(*this, "bias_v", getBiasV().getType(),
                                        {1, 1, embed}, "[1, 1, embed_dim]"))))
    return failure();

  if (failed(verifyShape(*this, "out_proj", getOutProjWeight().getType(),
                         {embed, embed}, "[embed_dim, embed_dim]")))
    return failure();
  if (getOutProjBias() &&
      failed(verifyShape(*this, "out_proj_bias", getOutProjBias().getType(),
                         {embed}, "[embed_dim]")))
    return failure();

  if (Value padding = getKeyPaddingMask()) {
    auto type = cast<RankedTensorType>(padding.getType());
    if (batched ? failed(verifyShape(*this, "key_padding_mask", type,
                                     {batch, srcLen}, "[N, S]"))
                : failed(verifyShape(*this, "key_padding_mask", type, {srcLen},
                                     "[S]")))
      return failure();
  }
  if (Value mask = getAttnMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    if (type.getRank() == 2) {
      if (failed(verifyShape(*this, "attn_mask", type, {tgtLen, srcLen},
                             "[L, S]")))
        return failure();
    } else if (type.getRank() == 3) {
      if (failed(verifyShape(*this, "attn_mask", type,
                             {mulExtents(batch, heads), tgtLen, srcLen},
                             batched ? "[N * num_heads, L, S]"
                                     : "[num_heads, L, S]")))
        return failure();
    } else {
      return emitOpError() << "attn_mask must be 2-D [L, S] or 3-D "
                              "[N * num_heads, L, S], got rank "
                           << type.getRank();
    }
  }

  if (failed(verifyDropout(*this, getDropoutP().convertToDouble(), getSeed(),
                           getDropoutSeed())))
    return failure();

  if (getOutput().getType() != queryType)
    return emitOpError() << "output type (" << getOutput().getType()
                         << ") must match query type (" << queryType << ")";

  if (!getWeights()) {
    if (getPerHeadWeights())
      return emitOpError() << "per_head_weights needs the weights result";
    return success();
  }
  // bias_kv and add_zero_attn each append one key position.
  int64_t extra = (getBiasK() ? 1 : 0) + (getAddZeroAttn() ? 1 : 0);
  int64_t weightsLen =
      ShapedType::isDynamic(srcLen) ? kDynamic : srcLen + extra;
  SmallVector<int64_t> expected;
  if (batched)
    expected.push_back(batch);
  if (getPerHeadWeights())
    expected.push_back(heads);
  expected.append({tgtLen, weightsLen});
  StringRef layout = getPerHeadWeights() ? (batched ? "[N, num_heads, L, S']"
                                                    : "[num_heads, L, S']")
                                         : (batched ? "[N, L, S']" : "[L, S']");
  return verifyShape(*this, "weights", getWeights().getType(), expected,
                     layout);
}

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
