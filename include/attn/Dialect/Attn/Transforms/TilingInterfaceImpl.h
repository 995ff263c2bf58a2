//===- TilingInterfaceImpl.h - attn ops as upstream tileable ops --*- C++
//-*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TILINGINTERFACEIMPL_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TILINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace attn {

/// Attaches upstream's TilingInterface to attn.sdpa (an external model), so
/// that the transform dialect's tiling (transform.structured.tile_using_for
/// / tile_using_forall) and scf's tiling and fusion apply to it: its
/// iteration domain is (batch, query head, query row), every point of
/// which is independent.
void registerTilingInterfaceExternalModels(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TILINGINTERFACEIMPL_H
