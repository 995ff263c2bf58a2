//===- RandomInputs.cpp - seeded inputs that look like real ones ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/RandomInputs.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Runner/JitRunner.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::attn;

/// For an argument used as the kv_lens of an attention op, the number of
/// keys (so that random lengths are meaningful); nullopt otherwise.
static std::optional<int64_t> getLengthBound(func::FuncOp func,
                                             unsigned argument,
                                             ShapeEvaluator &evaluator) {
  for (Operation *user : func.getArgument(argument).getUsers()) {
    Value key, lens;
    if (auto sdpa = dyn_cast<SdpaOp>(user)) {
      key = sdpa.getKey();
      lens = sdpa.getKvLens();
    } else if (auto weights = dyn_cast<WeightsOp>(user)) {
      key = weights.getKey();
      lens = weights.getKvLens();
    }
    if (lens && lens == func.getArgument(argument)) {
      FailureOr<int64_t> keys = evaluator.getDim(key, 2);
      if (succeeded(keys))
        return *keys;
    }
  }
  return std::nullopt;
}

/// For an argument used as the page table of attn.gather_pages or
/// attn.append_pages, the number of pages it indexes; nullopt otherwise.
static std::optional<int64_t> getPageCount(func::FuncOp func, unsigned argument,
                                           ShapeEvaluator &evaluator) {
  Value arg = func.getArgument(argument);
  for (Operation *user : arg.getUsers()) {
    Value pages;
    if (auto gather = dyn_cast<GatherPagesOp>(user);
        gather && gather.getPageTable() == arg)
      pages = gather.getPages();
    else if (auto append = dyn_cast<AppendPagesOp>(user);
             append && append.getPageTable() == arg)
      pages = append.getCache();
    if (!pages)
      continue;
    FailureOr<int64_t> count = evaluator.getDim(pages, 0);
    if (succeeded(count) && *count > 0)
      return *count;
  }
  return std::nullopt;
}

/// For an argument used as the positions of attn.append_pages, the last
/// position its new rows fit after (the table's keys less the rows);
/// nullopt otherwise.
static std::optional<int64_t> getLastPosition(func::FuncOp func,
                                              unsigned argument,
                                              ShapeEvaluator &evaluator) {
  Value arg = func.getArgument(argument);
  for (Operation *user : arg.getUsers()) {
    auto append = dyn_cast<AppendPagesOp>(user);
    if (!append || append.getPositions() != arg)
      continue;
    FailureOr<int64_t> width = evaluator.getDim(append.getPageTable(), 1);
    FailureOr<int64_t> pageSize =
        evaluator.getDim(append.getCache(), append.getCacheDims().slot);
    FailureOr<int64_t> rows = evaluator.getDim(append.getRows(), 2);
    if (succeeded(width) && succeeded(pageSize) && succeeded(rows))
      return std::max<int64_t>(*width * *pageSize - *rows, 0);
  }
  return std::nullopt;
}

namespace {
/// The packed rows (T) and the padded length (S) of a packed batch.
struct PackedBatch {
  int64_t rows, padded;
};
} // namespace

/// For an argument used as the cu_seqlens of attn.pad_sequences or
/// attn.unpad_sequences, the batch it describes; nullopt otherwise.
static std::optional<PackedBatch> getPackedBatch(func::FuncOp func,
                                                 unsigned argument,
                                                 ShapeEvaluator &evaluator) {
  Value arg = func.getArgument(argument);
  for (Operation *user : arg.getUsers()) {
    Value packed, padded;
    if (auto pad = dyn_cast<PadSequencesOp>(user)) {
      packed = pad.getPacked();
      padded = pad.getResult();
    } else if (auto unpad = dyn_cast<UnpadSequencesOp>(user)) {
      packed = unpad.getInit();
      padded = unpad.getPadded();
    } else {
      continue;
    }
    FailureOr<int64_t> rows = evaluator.getDim(packed, 0);
    FailureOr<int64_t> length = evaluator.getDim(padded, 2);
    if (succeeded(rows) && succeeded(length))
      return PackedBatch{*rows, *length};
  }
  return std::nullopt;
}

/// Offsets `[B + 1]` of B sequences of random lengths in [0, S] that cover
/// the T packed rows from row 0 (all of them when B * S >= T), as
/// FlashAttention's cu_seqlens do.
static void fillSequenceOffsets(HostArray &array, PackedBatch batch,
                                std::mt19937_64 &rng) {
  int64_t sequences = array.getNumElements() - 1;
  if (sequences < 0)
    return;
  std::uniform_int_distribution<int64_t> lengthOf(0, batch.padded);
  SmallVector<int64_t> lengths(sequences);
  int64_t total = 0;
  for (int64_t &length : lengths)
    total += length = lengthOf(rng);
  // Trim or grow random sequences one row at a time until they cover T.
  std::uniform_int_distribution<int64_t> pick(
      0, std::max<int64_t>(sequences - 1, 0));
  while (sequences > 0 && total > batch.rows) {
    int64_t &length = lengths[pick(rng)];
    if (length > 0)
      --length, --total;
  }
  while (sequences > 0 && total < batch.rows &&
         total < sequences * batch.padded) {
    int64_t &length = lengths[pick(rng)];
    if (length < batch.padded)
      ++length, ++total;
  }
  int64_t offset = 0;
  array.setInt(0, 0);
  for (int64_t b = 0; b < sequences; ++b)
    array.setInt(b + 1, offset += lengths[b]);
}

/// Whether the argument is a boolean mask of attn.multihead, where true
/// means "masked out" (PyTorch's convention).
static bool isMultiheadMask(func::FuncOp func, unsigned argument) {
  Value arg = func.getArgument(argument);
  return llvm::any_of(arg.getUsers(), [&](Operation *user) {
    auto mha = dyn_cast<MultiheadOp>(user);
    return mha && (arg == mha.getKeyPaddingMask() || arg == mha.getAttnMask());
  });
}

/// For an argument used as a projection weight of attn.multihead ([out,
/// in]), its fan-in; nullopt otherwise.
static std::optional<int64_t> getFanIn(func::FuncOp func, unsigned argument,
                                       ShapeEvaluator &evaluator) {
  Value arg = func.getArgument(argument);
  for (Operation *user : arg.getUsers()) {
    auto mha = dyn_cast<MultiheadOp>(user);
    if (!mha)
      continue;
    if (arg == mha.getInProjWeight() || arg == mha.getQProjWeight() ||
        arg == mha.getKProjWeight() || arg == mha.getVProjWeight() ||
        arg == mha.getOutProjWeight()) {
      FailureOr<int64_t> fanIn = evaluator.getDim(arg, 1);
      if (succeeded(fanIn) && *fanIn > 0)
        return *fanIn;
    }
  }
  return std::nullopt;
}

SmallVector<HostArray>
attn::makeRandomInputs(func::FuncOp func, const FunctionAbi &abi,
                       ArrayRef<SmallVector<int64_t>> shapes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::bernoulli_distribution keep(0.8), drop(0.2);
  ShapeEvaluator evaluator(func, shapes);
  SmallVector<HostArray> inputs;
  for (unsigned i = 0; i < abi.numInputs; ++i) {
    HostArray &array = inputs.emplace_back(abi.params[i].element, shapes[i]);
    AbiElement element = array.getElement();
    std::optional<int64_t> bound, fanIn;
    if (!isFloatElement(element) && element != AbiElement::i1) {
      if (std::optional<PackedBatch> batch =
              getPackedBatch(func, i, evaluator)) {
        fillSequenceOffsets(array, *batch, rng);
        continue;
      }
      // Page tables: the pages of a shuffled pool, each used once where the
      // pool has enough (as a server allocates them: two sequences never
      // append into one page), every entry a page of the cache (the
      // compiled entry refuses others where they hold keys).
      if (std::optional<int64_t> pages = getPageCount(func, i, evaluator)) {
        SmallVector<int64_t> pool =
            llvm::to_vector(llvm::seq<int64_t>(0, *pages));
        std::shuffle(pool.begin(), pool.end(), rng);
        for (int64_t k = 0, e = array.getNumElements(); k < e; ++k)
          array.setInt(k, pool[k % *pages]);
        continue;
      }
      bound = getLengthBound(func, i, evaluator);
      // Positions of appended rows: in [0, the last one they fit after].
      if (std::optional<int64_t> last = getLastPosition(func, i, evaluator)) {
        std::uniform_int_distribution<int64_t> positions(0, *last);
        for (int64_t k = 0, e = array.getNumElements(); k < e; ++k)
          array.setInt(k, positions(rng));
        continue;
      }
    }
    if (isFloatElement(element))
      fanIn = getFanIn(func, i, evaluator);
    std::bernoulli_distribution &mask =
        element == AbiElement::i1 && isMultiheadMask(func, i) ? drop : keep;
    double scale = fanIn ? 1.0 / std::sqrt(static_cast<double>(*fanIn)) : 1.0;
    std::uniform_int_distribution<int64_t> integers(bound ? 1 : 0,
                                                    bound ? *bound : 7);
    for (int64_t k = 0, e = array.getNumElements(); k < e; ++k) {
      if (isFloatElement(element))
        array.set(k, scale * uniform(rng));
      else if (element == AbiElement::i1)
        array.set(k, mask(rng));
      else
        array.setInt(k, integers(rng));
    }
  }
  return inputs;
}
