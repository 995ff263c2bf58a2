//===- Passes.td - the attn-ext example's passes -----------*- tablegen -*-===//
//
// An example project built on the installed attn-mlir (docs/Install.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXT_PASSES
#define ATTN_EXT_PASSES

include "mlir/Pass/PassBase.td"

def AttnExtSlidingWindow : Pass<"attn-ext-sliding-window"> {
  let summary = "limit causal attention to a sliding window of keys";
  let description = [{
    Every causal `attn.sdpa` without a window attends to the last `size`
    keys of each row only (`window = [size - 1, 0]`), as models trained with
    sliding-window attention do. Ops that are not causal, or that already
    have a window, are left alone (`remarks=true` says why for each).
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
  let options = [
    Option<"size", "size", "int64_t", /*default=*/"0",
           "keys each query row attends to (its own and size - 1 before it)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "a remark on every attn.sdpa saying what was done">,
  ];
}

#endif // ATTN_EXT_PASSES
