// On x86-64 without AVX512-BF16 LLVM legalises bf16 vectors through f32
// and rounds back with a call to compiler-rt's __truncsfbf2, which libgcc
// does not define: the JIT resolves it to its own routine, shared libraries
// link compiler-rt's builtins. (Found by attn-gen-fuzzer on a Zen 3: every
// bf16 multi-head program failed to link, in the JIT and as a library.)
// --mcpu=znver3 makes AVX2 code on any x86-64 host (the JIT run without
// AMD's SSE4a, which an Intel host lacks).
// REQUIRES: host-avx2
// RUN: attnc %s --emit=asm --mcpu=znver3 --cpu-pipeline="lowering=reference row-elements=16" -o - | FileCheck %s --check-prefix=CALL
// CALL: call{{.*}}__truncsfbf2
// RUN: attnc %s --emit=shared --mcpu=znver3 --cpu-pipeline="lowering=reference row-elements=16" -o %t.so
// RUN: %python -c "import ctypes; ctypes.CDLL('%t.so')"
// RUN: attn-run %s --mcpu=znver3 --mattr=-sse4a --cpu-pipeline="lowering=reference row-elements=16" --check | FileCheck %s --check-prefix=JIT
// JIT-COUNT-2: relative error {{.*}} ok

func.func @main(%query: tensor<3x2x2xbf16>, %key: tensor<15x2x2xbf16>, %value: tensor<15x2x2xbf16>, %in_proj: tensor<6x2xbf16>, %in_proj_bias: tensor<6xbf16>, %out_proj: tensor<2x2xbf16>, %out_proj_bias: tensor<2xbf16>, %key_padding_mask: tensor<2x15xi1>, %attn_mask: tensor<3x15xbf16>) -> (tensor<3x2x2xbf16>, tensor<2x3x15xbf16>) {
  %out, %weights = attn.multihead %query, %key, %value in_proj(%in_proj : tensor<6x2xbf16>) in_proj_bias(%in_proj_bias : tensor<6xbf16>) out_proj(%out_proj : tensor<2x2xbf16>) out_proj_bias(%out_proj_bias : tensor<2xbf16>) key_padding_mask(%key_padding_mask : tensor<2x15xi1>) attn_mask(%attn_mask : tensor<3x15xbf16>) num_heads = 1 : tensor<3x2x2xbf16>, tensor<15x2x2xbf16>, tensor<15x2x2xbf16> -> tensor<3x2x2xbf16>, tensor<2x3x15xbf16>
  return %out, %weights : tensor<3x2x2xbf16>, tensor<2x3x15xbf16>
}
