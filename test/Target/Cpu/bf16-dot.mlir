// bf16 attention on CPUs with AVX512-BF16: where the core issues
// vdpbf16ps as fast as an FMA (Zen 4 and 5) the target model turns bf16-dot
// on, and both contractions are register blocks of vdpbf16ps (a 4 x 64
// block: 16 dot products per K step, on bf16 pairs) with no spills. Cores
// with AMX-BF16 (Sapphire Rapids) issue it at half the FMA rate: the model
// widens bf16 to f32 there, as on CPUs without it (Zen 3, Skylake-X) and
// with bf16-dot=false; bf16-dot=true given explicitly takes the pairs.
// RUN: attnc %s --mcpu=znver4 --print-target --emit=asm -o %t.zen4.s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODEL-DOT
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.zen4.s --block-fmas 16 | FileCheck %s --check-prefix=DOT
// RUN: attnc %s --mcpu=znver5 --print-target 2>&1 | FileCheck %s --check-prefix=MODEL-DOT
// MODEL-DOT: dot-product extensions: avx512bf16
// MODEL-DOT: kernel: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block=4 n-block=64 row-elements=256 bf16-dot=true
// MODEL-DOT: bf16: Q K^T and P V on bf16 pairs with vdpbf16ps (avx512bf16)
// DOT-COUNT-4: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 16 fma, 0 spills, 0 reloads, 0 prefetches, {{[0-9]+}} instructions [16 vdpbf16ps]
// DOT: {{[0-9]+}} hot loops (the largest 16 fma), 0 with spills or reloads

// RUN: attnc %s --mcpu=sapphirerapids --print-target --emit=asm -o %t.spr.s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODEL-AMX
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.spr.s --block-fmas 16 | FileCheck %s --check-prefix=WIDE16
// RUN: attnc %s --mcpu=graniterapids --print-target 2>&1 | FileCheck %s --check-prefix=MODEL-AMX
// MODEL-AMX: dot-product extensions: avx512bf16, amx-bf16
// MODEL-AMX: bf16-dot=false
// MODEL-AMX: bf16: widened to f32: cores with amx-bf16 issue vdpbf16ps at half the FMA rate
// MODEL-AMX-NOT: given explicitly
// RUN: attnc %s --mcpu=sapphirerapids --cpu-pipeline="bf16-dot=true" --print-target \
// RUN:   --emit=asm -o %t.on.s 2>&1 | FileCheck %s --check-prefix=ON
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.on.s --block-fmas 16 | FileCheck %s --check-prefix=DOT
// ON: bf16-dot=true
// ON: bf16-dot=true: given explicitly

// RUN: attnc %s --mcpu=znver3 --print-target --emit=asm -o %t.zen3.s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODEL-WIDE
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.zen3.s --block-fmas 12 | FileCheck %s --check-prefix=WIDE12
// RUN: attnc %s --mcpu=skylake-avx512 --print-target --emit=asm -o %t.skx.s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODEL-WIDE
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.skx.s --block-fmas 16 | FileCheck %s --check-prefix=WIDE16
// MODEL-WIDE: bf16-dot=false
// MODEL-WIDE: bf16: widened to f32 (no avx512bf16)
// WIDE12-COUNT-4: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 12 fma, 0 spills, 0 reloads, 0 prefetches, {{[0-9]+}} instructions [12 vfmadd231ps]
// WIDE16-COUNT-4: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 16 fma, 0 spills, 0 reloads, 0 prefetches, {{[0-9]+}} instructions [16 vfmadd231ps]

// RUN: attnc %s --mcpu=znver4 --cpu-pipeline="bf16-dot=false" --print-target \
// RUN:   --emit=asm -o %t.off.s 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.off.s --block-fmas 16 | FileCheck %s --check-prefix=WIDE16
// OFF: bf16-dot=false: given explicitly
// Given true where the target has no vdpbf16ps, the pairs stay off.
// RUN: attnc %s --mcpu=znver3 --cpu-pipeline="bf16-dot=true" --print-target 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODEL-WIDE

// The IR: K packed in pairs of the head dimension, V in pairs of keys (in
// key tiles of 128: the head size is 64), P rounded to bf16 and padded to
// whole pairs; every block's K step is dots.
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=znver4" \
// RUN:   --mlir-print-ir-after=attn-tile -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILE
// TILE: linalg.transpose ins({{.*}} : tensor<1x2x3x128x32x2xbf16>) outs({{.*}} : tensor<1x2x3x32x128x2xbf16>) permutation = [0, 1, 2, 4, 3, 5]
// TILE: linalg.transpose ins({{.*}} : tensor<1x2x3x64x2x64xbf16>) outs({{.*}} : tensor<1x2x3x64x64x2xbf16>) permutation = [0, 1, 2, 3, 5, 4]
// TILE: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins({{.*}} : tensor<?x32x2xbf16>, tensor<32x?x2xbf16>) outs({{.*}} : tensor<?x?xf32>)
// TILE: tensor.pad {{.*}} low[0, 0] high[{{.*}}]
// TILE: tensor<?x?xbf16>
// TILE: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins({{.*}} : tensor<?x?x2xbf16>, tensor<?x64x2xbf16>) outs({{.*}} : tensor<?x64xf32>)
// RUN: attn-opt %s --attn-cpu-pipeline="target-cpu=znver4" \
// RUN:   --mlir-print-ir-after=attn-vectorize-tiles -o /dev/null 2>&1 | FileCheck %s --check-prefix=VEC
// VEC-COUNT-16: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// VEC: scf.yield {{.*}} : vector<4x64xf32>

// 48 keys in bf16 pairs: 4 x 32 and 4 x 16 blocks of vdpbf16ps in one K
// loop, in registers (a 4 x 48 block spilled 178 times per step).
// RUN: attnc %S/Inputs/sdpa-48-keys-bf16.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=znver4 -o %t.k48.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.k48.s --all | FileCheck %s --check-prefix=KEYS48
// KEYS48: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 12 fma, 0 spills, 0 reloads, 0 prefetches, {{[0-9]+}} instructions [12 vdpbf16ps]
// KEYS48: 3 hot loops (the largest 18 fma), 0 with spills or reloads

// An odd head size has no pairs: widened, whatever the target. (One query
// tile of 100 rows: K^T packed, widened to f32 once; each step widens the
// bf16 rows of V it reads, D = 33 as a 32-column block and a 1-column one.)
// RUN: attn-opt %S/Inputs/bf16-odd-head.mlir \
// RUN:   --attn-cpu-pipeline="target-cpu=znver4" \
// RUN:   --mlir-print-ir-after=attn-vectorize-tiles -o /dev/null 2>&1 | FileCheck %s --check-prefix=ODD
// ODD-NOT: x86vector.avx512.dot
// ODD: arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// ODD: vector.fma {{.*}} : vector<32xf32>

func.func @attn(%q: tensor<1x2x200x64xbf16>, %k: tensor<1x2x300x64xbf16>, %v: tensor<1x2x300x64xbf16>)
    -> tensor<1x2x200x64xbf16> {
  %e = tensor.empty() : tensor<1x2x200x64xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e) {causal}
     : tensor<1x2x200x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16> -> tensor<1x2x200x64xbf16>
  return %o : tensor<1x2x200x64xbf16>
}
