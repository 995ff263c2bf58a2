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

/// Values the lowering of an op reads as lengths: every element of the
/// integer tensor `values` must lie in [0, the extent of `bound`] (the
/// `kv_lens` of attn.sdpa, attn.weights and attn.sdpa_grad against the
/// keys). The verifier cannot see values; the lowering takes a length
/// outside as the nearest one inside (docs/CpuABI.md: the ABI checks
/// refuse it).
struct ValueBound {
  Value values;
  TensorDim bound;
};

/// The ValueBounds of `op` (an attn op).
void getValueBounds(Operation *op, SmallVectorImpl<ValueBound> &result);

/// Pages an op reads through a block table: in each row `b` of the 2-D
/// integer tensor `table`, the first ceil(lengths[b] / P) entries (the pages
/// holding the keys the op attends over) must lie in [0, the extent of
/// `pages`' dimension 0), where P is the extent of `pages`' dimension
/// `slot`. attn.gather_pages takes an entry outside as the nearest page (it
/// reads nothing out of bounds, but another sequence's keys); the verifier
/// cannot see values (docs/CpuABI.md: the ABI checks refuse it).
struct PageBound {
  Value table;
  Value lengths;
  Value pages;
  int64_t slot;
};

/// The PageBounds of `op` (an attn op whose key or value is an
/// attn.gather_pages and which has `kv_lens`).
void getPageBounds(Operation *op, SmallVectorImpl<PageBound> &result);
} // namespace attn
} // namespace mlir

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
