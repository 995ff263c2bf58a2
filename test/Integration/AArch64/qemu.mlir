// Attention compiled for AArch64 (NEON on neoverse-n1 and neoverse-v2,
// whose SVE vectors are no wider than NEON's; 256-bit SVE on neoverse-v1,
// 512-bit on a64fx, run on qemu CPUs of those vector lengths) runs under
// qemu-user on the cross C library and matches the float64 reference
// computed on this machine, row by row, on fresh random inputs: several
// query and key tiles with partial edges, causal GQA, a sliding window with
// f16 data. SVE code is for one vector length: neoverse-v1's on a CPU of
// 128-bit vectors computes garbage, and the check says so.
// REQUIRES: aarch64-qemu
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-v2 --qemu %qemu_aarch64 --sysroot %aarch64_sysroot --work %t.v2 %s cross causal_gqa f16_window | FileCheck %s
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-n1 --qemu %qemu_aarch64 --sysroot %aarch64_sysroot --work %t.n1 %s cross | FileCheck %s --check-prefix=N1
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-v1 --qemu %qemu_aarch64 --qemu-cpu max,sve256=on --sysroot %aarch64_sysroot --work %t.v1 %s cross causal_gqa f16_window | FileCheck %s --check-prefix=V1
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu a64fx --qemu %qemu_aarch64 --qemu-cpu max,sve512=on --sysroot %aarch64_sysroot --work %t.fx %s causal_gqa | FileCheck %s --check-prefix=FX
// RUN: not %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-v1 --qemu %qemu_aarch64 --qemu-cpu max,sve128=on --sysroot %aarch64_sysroot --work %t.v1short %s cross | FileCheck %s --check-prefix=SHORT
// Varlen attention (attn.pad_sequences / attn.unpad_sequences around the
// tiled attn.sdpa, run-varlen.mlir) for NEON:
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-v2 --qemu %qemu_aarch64 --sysroot %aarch64_sysroot --work %t.varlen %S/../CPU/run-varlen.mlir prefill | FileCheck %s --check-prefix=VARLEN
// VARLEN: @prefill result #0 on neoverse-v2 under qemu {{.*}} ok
// CHECK: @cross result #0 on neoverse-v2 under qemu (seed {{[0-9]+}}): largest row relative error {{.*}} ok
// CHECK: @causal_gqa result #0 on neoverse-v2 under qemu (seed {{[0-9]+}}): largest row relative error {{.*}} ok
// CHECK: @f16_window result #0 on neoverse-v2 under qemu (seed {{[0-9]+}}): largest row relative error {{.*}} ok
// N1: @cross result #0 on neoverse-n1 under qemu {{.*}} ok
// V1: @cross result #0 on neoverse-v1 under qemu {{.*}} ok
// V1: @causal_gqa result #0 on neoverse-v1 under qemu {{.*}} ok
// V1: @f16_window result #0 on neoverse-v1 under qemu {{.*}} ok
// FX: @causal_gqa result #0 on a64fx under qemu {{.*}} ok
// SHORT: @cross result #0 on neoverse-v1 under qemu {{.*}} FAILED

func.func @cross(%q: tensor<1x2x200x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>)
    -> tensor<1x2x200x64xf32> {
  %e = tensor.empty() : tensor<1x2x200x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x200x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32> -> tensor<1x2x200x64xf32>
  return %o : tensor<1x2x200x64xf32>
}

func.func @causal_gqa(%q: tensor<1x4x257x32xf32>, %k: tensor<1x2x257x32xf32>, %v: tensor<1x2x257x32xf32>)
    -> tensor<1x4x257x32xf32> {
  %e = tensor.empty() : tensor<1x4x257x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x257x32xf32>, tensor<1x2x257x32xf32>, tensor<1x2x257x32xf32> -> tensor<1x4x257x32xf32>
  return %o : tensor<1x4x257x32xf32>
}

func.func @f16_window(%q: tensor<1x2x130x64xf16>, %k: tensor<1x2x130x64xf16>, %v: tensor<1x2x130x64xf16>)
    -> tensor<1x2x130x64xf16> {
  %e = tensor.empty() : tensor<1x2x130x64xf16>
  %o = attn.sdpa %q, %k, %v outs(%e) window = [40, 0]
     : tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16> -> tensor<1x2x130x64xf16>
  return %o : tensor<1x2x130x64xf16>
}
