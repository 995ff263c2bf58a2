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
} // namespace attn
} // namespace mlir

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
