//===- Pipelines.cpp - named attn pass pipelines --------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void attn::buildReferencePipeline(OpPassManager &pm) {
  pm.addPass(createAttnDecomposeMultihead());
  pm.addPass(createAttnLowerToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-reference-pipeline",
      "Lower attn ops to the unfused reference computation in "
      "linalg/tensor/arith/math: decompose multihead, lower attention, clean "
      "up",
      buildReferencePipeline);
}
