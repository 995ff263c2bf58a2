//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir {
namespace attn {
/// The dimensions of a paged cache ([num_pages, ..., head_dim]) that index
/// a page's keys (`slot`) and the heads (`head`) in `layout`.
struct PageCacheDims {
  unsigned slot, head;

  /// (page, slot, head, feature) in the cache's dimension order: an index,
  /// offsets or sizes of a slice.
  template <typename T>
  SmallVector<T, 4> order(T page, T slot, T head, T feature) const {
    SmallVector<T, 4> result = {page, T(), T(), feature};
    result[this->slot] = slot;
    result[this->head] = head;
    return result;
  }
};
inline PageCacheDims getPageCacheDims(PageLayout layout) {
  return layout == PageLayout::nhd ? PageCacheDims{1, 2} : PageCacheDims{2, 1};
}

/// Dimension `dim` of the tensor `value`.
struct TensorDim {
  Value value;
  int64_t dim;
};

/// Two dimensions the lowering of an op takes to have one extent, or, with
/// `multiple`, `size` to be a multiple of a positive `other` (the query
/// heads of a grouped-query attention and the key/value heads): the
/// verifier accepts a `?` against any extent, and the code then reads both
/// tensors with the one loop bound.
struct SizeRelation {
  TensorDim size, other;
  bool multiple = false;
};

/// The relations of sizes the lowering of `op` (an attn op) assumes where
/// its verifier cannot check them: pairs of dimensions with a dynamic side,
/// `other` the dimension the op's loops are bounded by (query, key, the
/// embedding). A mask dimension that is not a static 1 is one the lowering
/// reads at full extent. Extents in products (3 * embed, ceil(Sq / bq)) and
/// the attn ops on pages are not listed.
void getSizeRelations(Operation *op, SmallVectorImpl<SizeRelation> &result);

/// What the lowering of an op reads from the values of integer tensors and
/// must hold there. The verifier cannot see values; the lowerings take a
/// value outside as the nearest one inside, or skip what it names, so that
/// nothing is read or written out of bounds, but the result is then not
/// the one asked for (docs/CpuABI.md: the ABI checks refuse such calls).
enum class ValueCheckKind : int64_t {
  /// Every element of `values[0]` (1-D, lengths) lies in [0, `sizes[0]`]:
  /// the `kv_lens` of attn.sdpa, attn.weights and attn.sdpa_grad against
  /// the keys.
  LengthsWithin = 0,
  /// In each row b of the block table `values[0]` (2-D), the entries of the
  /// pages holding keys, the first ceil(`values[1]`[b] / P) (the lengths,
  /// 1-D), lie in [0, `sizes[0]`), with P = `sizes[1]`: attn.gather_pages
  /// read by an op with `kv_lens`.
  PagesWithin = 1,
  /// Each sequence b's `sizes[2]` new rows, written from position
  /// `values[1]`[b] (1-D) on, fit the P = `sizes[1]` keys per page of its
  /// row of the block table `values[0]` (2-D), the pages they are written
  /// to lie in [0, `sizes[0]`), and no page is written by two sequences:
  /// attn.append_pages.
  PageWrites = 2
};

/// One value check of an op: the integer tensors whose values it reads and
/// the extents it compares them with (ValueCheckKind says which).
struct ValueCheck {
  ValueCheckKind kind;
  SmallVector<Value, 2> values;
  SmallVector<TensorDim, 3> sizes;
};

/// The ValueChecks of `op` (an attn op).
void getValueChecks(Operation *op, SmallVectorImpl<ValueCheck> &result);

/// Whether `layout` is the one strided layout the pipelines take for a
/// function argument given as a view (its `bufferization.buffer_layout`):
/// strided<[?, ..., ?, 1], offset: ?> of `rank` dimensions, rows contiguous.
bool isRowStridedLayout(Attribute layout, int64_t rank);
} // namespace attn
} // namespace mlir

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
