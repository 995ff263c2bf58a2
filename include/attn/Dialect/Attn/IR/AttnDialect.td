//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention operations: scaled dot-product and multi-head";
  let description = [{
    The `attn` dialect describes attention at the level an ML engineer writes
    it: scaled dot-product attention (`attn.sdpa`) with every masking scheme
    modern models use, and PyTorch-style multi-head attention
    (`attn.multihead`). Passes decompose `attn.multihead` into projections
    around `attn.sdpa`, and lower `attn.sdpa` to `linalg`, either as the
    unfused reference or as tiled FlashAttention-style loop nests.

    All operations have tensor (value) semantics. Inputs may be `f32`, `f16`
    or `bf16`; scores and softmax are always accumulated in `f32`. `f64`
    inputs are accepted too and accumulate in `f64`: that is the float64
    reference `attn-run --check` compares against.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
