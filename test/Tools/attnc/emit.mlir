// Every --emit kind of attnc on one module with a static and a dynamic
// function.
// RUN: attnc %s --emit=mlir -o - | FileCheck %s --check-prefix=MLIR
// RUN: attnc %s --emit=llvm -O2 -o - | FileCheck %s --check-prefix=LLVM
// RUN: attnc %s --emit=asm -o - | FileCheck %s --check-prefix=ASM
// RUN: attnc %s --emit=asm --mcpu=x86-64 -O0 -o - | FileCheck %s --check-prefix=ASM
// --mcpu/--mattr reach code generation: Sapphire Rapids code uses 256/512-bit
// registers, and none are left once AVX is turned off.
// RUN: attnc %s --emit=asm --mcpu=sapphirerapids -o - | FileCheck %s --check-prefix=WIDE
// RUN: attnc %s --emit=asm --mcpu=sapphirerapids --mattr=-avx -o - | FileCheck %s --check-prefix=NARROW
// RUN: attnc %s --emit=obj -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=SYM
// RUN: attnc %s --emit=shared -o %t.so
// RUN: llvm-nm -D --defined-only %t.so | FileCheck %s --check-prefix=SYM
// RUN: attnc %s --emit=header -o - | FileCheck %s --check-prefix=HEADER
// Without -o the output is named after the input.
// RUN: rm -rf %t.dir && mkdir -p %t.dir && cd %t.dir && attnc %s --emit=header
// RUN: ls %t.dir | FileCheck %s --check-prefix=NAME

// MLIR: llvm.func @_mlir_ciface_fixed(
// MLIR: llvm.func @_mlir_ciface_dynamic(
// LLVM: define {{.*}}i32 @_mlir_ciface_fixed(ptr
// LLVM: define {{.*}}i32 @_mlir_ciface_dynamic(ptr
// ASM: _mlir_ciface_fixed:
// WIDE: %{{[yz]}}mm
// NARROW-NOT: %{{[yz]}}mm
// SYM-DAG: T _mlir_ciface_fixed
// SYM-DAG: T _mlir_ciface_dynamic
// SYM-DAG: T fixed
// NAME: emit.h

// HEADER: #ifndef {{.*}}
// HEADER: #include <stdint.h>
// HEADER: typedef struct attn_memref_f16_4d {
// HEADER-NEXT:   uint16_t *allocated;
// HEADER-NEXT:   uint16_t *aligned;
// HEADER-NEXT:   int64_t offset;
// HEADER-NEXT:   int64_t sizes[4];
// HEADER-NEXT:   int64_t strides[4];
// HEADER-NEXT: } attn_memref_f16_4d;
// HEADER: typedef struct attn_memref_i32_1d {
// HEADER-NEXT:   int32_t *allocated;
// HEADER: typedef struct attn_memref_f32_4d {
// HEADER: /* fixed
// HEADER-NEXT:  *   in0: tensor<1x2x4x8xf16>
// HEADER-NEXT:  *   in1: tensor<1x2x6x8xf16>
// HEADER-NEXT:  *   in2: tensor<1x2x6x8xf16>
// HEADER-NEXT:  *   in3: tensor<1xi32>
// HEADER-NEXT:  *   out0: tensor<1x2x4x8xf16>  (written by the call)
// HEADER: int32_t _mlir_ciface_fixed(attn_memref_f16_4d *in0, attn_memref_f16_4d *in1, attn_memref_f16_4d *in2, attn_memref_i32_1d *in3, attn_memref_f16_4d *out0);
// HEADER: static inline int32_t attn_fixed(const uint16_t *in0, const uint16_t *in1, const uint16_t *in2, const int32_t *in3, uint16_t *out0) {
// HEADER: int32_t _mlir_ciface_dynamic(attn_memref_f32_4d *in0, attn_memref_f32_4d *in1, attn_memref_f32_4d *in2, attn_memref_f32_4d *out0);
// HEADER: static inline int32_t attn_dynamic(const float *in0, const int64_t *in0_sizes, const float *in1, const int64_t *in1_sizes, const float *in2, const int64_t *in2_sizes, float *out0, const int64_t *out0_sizes) {
// HEADER: attn_memref_f32_4d d_in0 = {(float *)in0, (float *)in0, 0, {in0_sizes[0], 2, in0_sizes[2], 8}, {0}};
// HEADER: _mlir_ciface_dynamic(&d_in0, &d_in1, &d_in2, &d_out0);
// HEADER: #endif

func.func @fixed(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x6x8xf16>, %v: tensor<1x2x6x8xf16>,
                 %lens: tensor<1xi32>) -> tensor<1x2x4x8xf16> {
  %e = tensor.empty() : tensor<1x2x4x8xf16>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<1xi32>) outs(%e)
     : tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf16> -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}

func.func @dynamic(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>,
                   %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x2x?x8xf32>
  %s = tensor.dim %q, %c2 : tensor<?x2x?x8xf32>
  %e = tensor.empty(%b, %s) : tensor<?x2x?x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// A private helper is not part of the ABI.
// HEADER-NOT: helper
func.func private @helper() {
  return
}
