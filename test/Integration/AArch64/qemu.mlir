// Attention compiled for AArch64 (NEON on neoverse-n1; SVE and BF16 on
// neoverse-v2) runs under qemu-user on the cross C library and matches the
// float64 reference computed on this machine, row by row, on fresh random
// inputs: several query and key tiles with partial edges, causal GQA, a
// sliding window with bf16 data.
// REQUIRES: aarch64-qemu
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-v2 --qemu %qemu_aarch64 --sysroot %aarch64_sysroot --work %t.v2 %s cross causal_gqa f16_window | FileCheck %s
// RUN: %python %attn_src_root/test/lib/qemu_check.py --cc %cc --tools %attn_obj_root/bin --triple aarch64-linux-gnu --mcpu neoverse-n1 --qemu %qemu_aarch64 --sysroot %aarch64_sysroot --work %t.n1 %s cross | FileCheck %s --check-prefix=N1
// CHECK: @cross result #0 on neoverse-v2 under qemu (seed {{[0-9]+}}): largest row relative error {{.*}} ok
// CHECK: @causal_gqa result #0 on neoverse-v2 under qemu (seed {{[0-9]+}}): largest row relative error {{.*}} ok
// CHECK: @f16_window result #0 on neoverse-v2 under qemu (seed {{[0-9]+}}): largest row relative error {{.*}} ok
// N1: @cross result #0 on neoverse-n1 under qemu {{.*}} ok

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
