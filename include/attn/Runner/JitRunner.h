//===- JitRunner.h - JIT-compile and call attn functions --------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What attn-run (and later the Python package) needs to run a module: the
// CPU pipeline plus LLVM's JIT behind one call, and the shapes and FLOP
// count of a call worked out from the IR for concrete input shapes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_JITRUNNER_H
#define ATTN_RUNNER_JITRUNNER_H

#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/HostArray.h"
#include "attn/Target/Cpu/CpuABI.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <optional>

namespace mlir {
class ExecutionEngine;

namespace attn {

/// The address range one JitFunction's code and data are placed in
/// (JitRunner.cpp).
class JitMemory;

/// One public function of a module, compiled for the host by the JIT.
class JitFunction {
public:
  /// Runs `buildCpuPipeline` with `pipeline` for `model` (the model of
  /// `options`' target) on a copy of `module` and JIT-compiles the function
  /// `abi` describes for `options`. Pipeline diagnostics go to the
  /// context's handler; the error says which step failed.
  static llvm::Expected<std::unique_ptr<JitFunction>>
  compile(ModuleOp module, const FunctionAbi &abi,
          const CpuTargetOptions &options, const CpuTargetModel &model,
          const CpuPipelineOptions &pipeline);

  /// The same through `buildCudaPipeline`: the host code is JIT-compiled
  /// for `host` and calls libattn_cuda_runtime (loaded into the process);
  /// the kernels are the binaries the pipeline embedded. Buffers given to
  /// `call` must then be device memory (see CudaDevice).
  static llvm::Expected<std::unique_ptr<JitFunction>>
  compileCuda(ModuleOp module, const FunctionAbi &abi,
              const CpuTargetOptions &host,
              const CudaPipelineOptions &pipeline);

  ~JitFunction();

  /// A dense row-major buffer the caller owns (a HostArray, a NumPy array,
  /// a CPU tensor through DLPack).
  struct Buffer {
    AbiElement element;
    ArrayRef<int64_t> shape;
    void *data;
  };

  /// Calls the function on `buffers`: one per ABI parameter, inputs then
  /// outputs. Fails, without calling, if a buffer's element kind or a
  /// static dimension disagrees with the ABI, or, for CUDA code, if sizes
  /// the ABI says must agree do not; fails with the compiled CPU code's own
  /// report (attn_abi_error) if it refused the buffers.
  llvm::Error call(ArrayRef<Buffer> buffers);
  llvm::Error call(MutableArrayRef<HostArray> arrays);

  /// The C view of the compiled function.
  const FunctionAbi &getAbi() const { return abi; }

private:
  JitFunction(std::unique_ptr<JitMemory> memory,
              std::unique_ptr<ExecutionEngine> engine, FunctionAbi abi,
              bool checksAbi);

  /// Declared before the engine, so that it outlives the engine's sections.
  std::unique_ptr<JitMemory> memory;
  std::unique_ptr<ExecutionEngine> engine;
  FunctionAbi abi;
  /// CPU code checks its buffers (attn-check-abi): its entry point returns
  /// a status, and attn_abi_error says why it refused a call.
  bool checksAbi;
};

/// Evaluates tensor dimensions and index values of one function for
/// concrete argument shapes by following the IR backwards (destinations,
/// casts, `tensor.dim`, index arithmetic, shape reification).
class ShapeEvaluator {
public:
  ShapeEvaluator(func::FuncOp func, ArrayRef<SmallVector<int64_t>> argShapes)
      : func(func), argShapes(argShapes) {}

  /// Size of dimension `dim` of the ranked tensor `value`.
  FailureOr<int64_t> getDim(Value value, int64_t dim);
  /// Value of the index- or integer-typed `value`.
  FailureOr<int64_t> getIndex(Value value);

private:
  func::FuncOp func;
  ArrayRef<SmallVector<int64_t>> argShapes;
};

/// What a call with given input shapes does, read off the reference
/// lowering of the function.
struct CallAnalysis {
  /// The shape of every result.
  SmallVector<SmallVector<int64_t>> resultShapes;
  /// Multiply-adds of every contraction, times two; nullopt when some loop
  /// bound could not be evaluated.
  std::optional<int64_t> flops;
};

/// Lowers a copy of `module` with the reference pipeline and analyses the
/// function `name` for `inputShapes`. Fails with an error naming the result
/// and dimension it could not size.
llvm::Expected<CallAnalysis>
analyzeCall(ModuleOp module, StringRef name,
            ArrayRef<SmallVector<int64_t>> inputShapes);

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_JITRUNNER_H
