// RUN: attn-opt %s --attn-cpu-pipeline --split-input-file | FileCheck %s

// Static shapes: the result becomes an out parameter after the inputs, the
// function and its C wrapper are LLVM functions, and nothing of attn, linalg,
// memref or tensor is left.
// CHECK-LABEL: llvm.func @static_sdpa(
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-NOT: attn.
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: tensor<
// Three inputs and one out parameter: four memref pointers; the status
// attn-check-abi adds (docs/CpuABI.md).
// CHECK-LABEL: llvm.func @_mlir_ciface_static_sdpa({{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr) -> i32 attributes
func.func @static_sdpa(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>,
                       %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Two results (output and weights) give two out parameters: three inputs
// and two outputs, five memref pointers.
// CHECK-LABEL: llvm.func @mha(
// CHECK-NOT: attn.
// CHECK-LABEL: llvm.func @_mlir_ciface_mha({{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr) -> i32 attributes
func.func @mha(%x: tensor<2x3x8xf32>, %w_in: tensor<24x8xf32>, %w_out: tensor<8x8xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x3xf32>) {
  %out, %weights = attn.multihead %x, %x, %x in_proj(%w_in : tensor<24x8xf32>)
      out_proj(%w_out : tensor<8x8xf32>) num_heads = 2 batch_first
    : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
      -> tensor<2x3x8xf32>, tensor<2x3x3xf32>
  return %out, %weights : tensor<2x3x8xf32>, tensor<2x3x3xf32>
}

// -----

// Dynamic shapes and half precision: the result is computed in the out
// parameter, a dynamic buffer, not in a scratch buffer copied into it; f16
// arithmetic widens to f32; exp is a polynomial (llvm.intr.fma), not a libm
// call; the output rows (of no constant bound) are narrowed back to f16 a
// vector at a time, by each of the two tilings of the dynamic Skv (short
// key tiles first, then kv-tile ones: attn-tile short-kv-tile), and
// nothing is copied after the last. The work is in the parallel loops'
// bodies, functions of their own printed before the function
// (attn-parallel-loops-to-runtime).
// CHECK-LABEL: llvm.func internal @dynamic_f16_parallel_0(
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.intr.fma
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.fptrunc %{{.*}} : vector<{{[0-9]+}}xf32> to vector<{{[0-9]+}}xf16>
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.fptrunc %{{.*}} : vector<{{[0-9]+}}xf32> to vector<{{[0-9]+}}xf16>
// CHECK-NOT: "llvm.intr.memcpy"
// CHECK-LABEL: llvm.func @_mlir_ciface_dynamic_f16({{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr, {{%[a-z0-9_]+}}: !llvm.ptr) -> i32 attributes
func.func @dynamic_f16(%q: tensor<?x?x?x?xf16>, %k: tensor<?x?x?x?xf16>,
                       %v: tensor<?x?x?x?xf16>) -> tensor<?x?x?x?xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x?xf16>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x?xf16>
  %s = tensor.dim %q, %c2 : tensor<?x?x?x?xf16>
  %d = tensor.dim %v, %c3 : tensor<?x?x?x?xf16>
  %e = tensor.empty(%b, %h, %s, %d) : tensor<?x?x?x?xf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16> -> tensor<?x?x?x?xf16>
  return %o : tensor<?x?x?x?xf16>
}
