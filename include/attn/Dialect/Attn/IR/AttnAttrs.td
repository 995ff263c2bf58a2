//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Alignment_TopLeft : I32EnumAttrCase<"top_left", 0>;
def Attn_Alignment_BottomRight : I32EnumAttrCase<"bottom_right", 1>;

def Attn_Alignment : I32EnumAttr<"Alignment",
    "where query row 0 sits relative to the keys for causal and window masks",
    [Attn_Alignment_TopLeft, Attn_Alignment_BottomRight]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

/// `top_left`: query i sees keys j <= i (PyTorch `is_causal`, FlashAttention
/// < 2.1). `bottom_right`: the last query row is aligned with the last key,
/// so query i sees keys j <= i + (Skv - Sq) (FlashAttention >= 2.1, KV-cache
/// decoding). With per-batch KV lengths, Skv is that batch's length.
def Attn_AlignmentAttr : EnumAttr<Attn_Dialect, Attn_Alignment, "alignment"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_PageLayout_NHD : I32EnumAttrCase<"nhd", 0>;
def Attn_PageLayout_HND : I32EnumAttrCase<"hnd", 1>;

def Attn_PageLayout : I32EnumAttr<"PageLayout",
    "the order of a paged cache's dimensions within a page",
    [Attn_PageLayout_NHD, Attn_PageLayout_HND]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

/// The layout of a paged KV cache, named as FlashInfer names them: `nhd`,
/// `[num_pages, page_size, heads, head_dim]` (a key's heads together;
/// vLLM's FlashAttention backend), or `hnd`, `[num_pages, heads, page_size,
/// head_dim]` (a head's keys of a page together, one contiguous run).
def Attn_PageLayoutAttr : EnumAttr<Attn_Dialect, Attn_PageLayout, "page_layout"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
