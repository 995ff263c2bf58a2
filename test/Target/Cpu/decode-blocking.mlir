// Decode (one query row per head, a GQA group of 4 folded into the rows of
// one tile): the scores are dot products of the group's Q rows and K rows
// where they lie, in blocks that keep as many accumulators as the target's
// register block, each a vector of partial sums (attn-vectorize-tiles'
// dot form); P V is the usual register block. Both K loops keep
// everything in registers on every target: the hot loops are those with as
// many FMAs per step as the blocks have accumulators, and the check fails
// on a spill or reload in them, or when there are not two of them.
//
// AVX2 (16 x 8 lanes): 6 x 16 keeps 12 accumulators; 4 rows x 2 keys
// (a power of two) of dot products, and P V's 4 x 16: 8 FMAs per step each.
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=znver3 -o %t.znver3.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.znver3.s --block-fmas 8 | FileCheck %s --check-prefix=HOT8
// HOT8-COUNT-2: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 8 fma, 0 spills, 0 reloads
// HOT8: 2 hot loops (the largest 8 fma), 0 with spills or reloads
//
// AVX-512 (32 x 16 lanes): 4 x 64, 16 accumulators: 4 rows x 4 keys. The
// same in bf16 on Sapphire Rapids (decode widens bf16, no pairs).
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=skylake-avx512 -o %t.skx.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.skx.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16
// RUN: sed 's/xf32>/xbf16>/g' %s > %t.bf16.mlir
// RUN: attnc %t.bf16.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids -o %t.spr.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.spr.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16
// HOT16-COUNT-2: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 16 fma, 0 spills, 0 reloads
// HOT16: 2 hot loops (the largest 16 fma), 0 with spills or reloads
//
// AArch64 NEON (32 x 4 lanes): 4 x 16, 16 accumulators: 4 rows x 4 keys.
// RUN: attnc %s --emit=asm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v2 -o %t.nv2.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.nv2.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16

func.func @decode(%q: tensor<1x32x1x128xf32>, %k: tensor<1x8x1024x128xf32>, %v: tensor<1x8x1024x128xf32>) -> tensor<1x32x1x128xf32> {
  %e = tensor.empty() : tensor<1x32x1x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) : tensor<1x32x1x128xf32>, tensor<1x8x1024x128xf32>, tensor<1x8x1024x128xf32> -> tensor<1x32x1x128xf32>
  return %o : tensor<1x32x1x128xf32>
}
