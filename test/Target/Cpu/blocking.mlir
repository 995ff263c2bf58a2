// The CPU target decides the code: attnc builds a target model for the CPU
// named by --mcpu (or --mtriple), picks tiles and register blocks that fit
// its register file, and the hot loops of the machine code, the K loops of
// the register-blocked Q K^T and P V, keep everything in registers. The
// spill check takes the innermost loops that issue exactly as many FMAs per
// step as the block has accumulator registers (--block-fmas) and counts
// LLVM's Spill/Reload comments in them, so a block that stops fitting, or a
// model that picks another block, fails here on any build host.

// AVX2 (16 x 256-bit): the power-of-two block 4 x 16 keeps only 8
// accumulators, as many as FMA latency x pipes, so the model takes 6 x 16
// (12 accumulators) and a 192-row query tile, a multiple of both sides and
// of the key tile whose working set still fits the L2.
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=znver3 2>&1 | FileCheck %s --check-prefix=ZNVER3
// ZNVER3: vectors: 16 x 256 bits (8 f32 lanes), FMA yes
// ZNVER3: kernel: q-tile=192 kv-tile=64 m-block=6 n-block=16 row-elements=128
// ZNVER3: 4 x 16 keeps only 8 accumulators, no more than FMA latency x pipes (8): 6 rows instead, q-tile 192 (a multiple of 6, 16 and the key tile; 304 KiB at D = 128, within the L2)
// ZNVER3: m-block x n-block: 6 x 16: 12 accumulators + 2 row vectors + 1 broadcast = 15 of 16 vector registers
// Projections: 6 x 16 register blocks too, their cache blocks from the L2
// (512 KiB: a 128 KiB weight block).
// ZNVER3: contraction-m-block x contraction-n-block: 6 x 16: 12 accumulators + 2 row vectors + 1 broadcast = 15 of 16 vector registers (at most 12 rows); weight panels of 16 columns
// Its 6-row register blocks leave a row stride nowhere to put 8 lines in
// one set: no left operand is copied.
// ZNVER3: contraction-conflict-stride: 0: no row stride puts 8 lines of a 6-row register block in one of the L1d's 64 sets of 8 ways
// ZNVER3: contraction-depth x contraction-columns: 256 x 128: a weight block of 128 KiB, at most a quarter of the L2 (128 KiB)
// ZNVER3-NOT: exp2:
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=znver3 -o %t.znver3.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.znver3.s --block-fmas 12 | FileCheck %s --check-prefix=HOT12
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=x86-64-v3 -o %t.v3.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.v3.s --block-fmas 12 | FileCheck %s --check-prefix=HOT12
// Two K loops for the whole 192-row tiles, two for the last tile of 128
// rows (512 = 2 x 192 + 128), whose 2-row remainder block is vector code too.
// HOT12-COUNT-4: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 12 fma, 0 spills, 0 reloads
// HOT12: 4 hot loops (the largest 12 fma), 0 with spills or reloads
// Haswell's 256 KiB L2 takes no 192-row tile: the power-of-two block stays.
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=haswell 2>&1 | FileCheck %s --check-prefix=HASWELL
// HASWELL: kernel: q-tile=32 kv-tile=64 m-block=4 n-block=16
// HASWELL-NOT: rows instead
// The 4 x 16 block it replaced on 128-row tiles, given explicitly, still fits.
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=znver3 --cpu-pipeline="m-block=4 q-tile=128" -o %t.znver3.m4.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.znver3.m4.s --block-fmas 8 | FileCheck %s --check-prefix=HOT8
// HOT8-COUNT-2: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 8 fma, 0 spills, 0 reloads
// HOT8: 2 hot loops (the largest 8 fma), 0 with spills or reloads

// AVX-512 (32 x 512-bit): 4 x 64, 16 accumulators.
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=skylake-avx512 2>&1 | FileCheck %s --check-prefix=AVX512
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids 2>&1 | FileCheck %s --check-prefixes=AVX512,SPR
// AVX512: vectors: 32 x 512 bits (16 f32 lanes), FMA yes
// SPR: dot-product extensions: avx512bf16, amx-bf16
// SPR: caches: L1d 48 KiB 12-way, L2 2048 KiB
// AVX512: kernel: q-tile=128 kv-tile=64 m-block=4 n-block=64 row-elements=256
// Projections stream their weight block from the L2: 12 x 32 blocks, two
// row loads per 24 FMAs.
// AVX512: contraction-m-block x contraction-n-block: 12 x 32: 24 accumulators + 2 row vectors + 1 broadcast = 27 of 32 vector registers (at most 12 rows); weight panels of 32 columns
// 12 rows 4 KiB apart fill one set of its 12-way L1d (and of Zen 4's
// 8-way one): products with K = 1024 f32 copy their left operand first.
// SPR: contraction-conflict-stride: 4096: left-operand rows this many bytes apart (or a multiple) put at least 12 lines of a 12-row register block in one of the L1d's 64 sets of 12 ways
// SPR: contraction-depth x contraction-columns: 256 x 512: a weight block of 512 KiB, at most a quarter of the L2 (512 KiB)
// SPR: contraction-prefetch: 2048: bytes of weight rows ahead a projection's K loop prefetches
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=znver4 2>&1 | FileCheck %s --check-prefix=ZNVER4
// ZNVER4: caches: L1d 32 KiB 8-way, L2 1024 KiB
// ZNVER4: kernel: {{.*}} contraction-conflict-stride=4096 contraction-prefetch=2048
// ZNVER4: contraction-conflict-stride: 4096: left-operand rows this many bytes apart (or a multiple) put at least 8 lines of a 12-row register block in one of the L1d's 64 sets of 8 ways
// The softmax's exp2 rounds down and scales with AVX-512 instructions.
// AVX512: exp2: vrndscaleps and vscalefps (avx512f)
// Given explicitly, the cache blocks are those (32 panels of 32 columns,
// 128 steps of K per block).
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids --cpu-pipeline="contraction-depth=128 contraction-columns=1024 contraction-prefetch=0 contraction-conflict-stride=0" 2>&1 | FileCheck %s --check-prefix=GIVEN
// GIVEN: kernel: {{.*}} contraction-depth=128 contraction-columns=1024 {{.*}} contraction-prefetch=0 exp2-scalef=true{{$}}
// GIVEN: contraction-depth=128: given explicitly
// GIVEN: contraction-columns=1024: given explicitly
// GIVEN: contraction-conflict-stride=0: given explicitly
// GIVEN: contraction-prefetch=0: given explicitly
// RUN: attn-opt %S/Inputs/matmul-1024x512x1536.mlir --attn-cpu-pipeline="target-cpu=sapphirerapids contraction-depth=128 contraction-columns=1024" --mlir-print-ir-after=attn-parallelize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=GIVEN-IR
// (Row blocks of 128 rows: 8 of them, by 2 column blocks, make 16
// parallel iterations.)
// GIVEN-IR: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1024, 48) step (128, 32)
// GIVEN-IR: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// GIVEN-IR: scf.for %{{.*}} = %{{.*}} to %c512 step %c128
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=skylake-avx512 -o %t.skx.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.skx.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids -o %t.spr.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.spr.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16
// HOT16-COUNT-2: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 16 fma, 0 spills, 0 reloads
// HOT16: 2 hot loops (the largest 16 fma), 0 with spills or reloads
// The softmax rows' exp2 scales by vscalefps on AVX-512 (zero-masked: the
// lanes below -126), and no AVX2 code has it; exp2-scalef=false takes the
// portable form.
// RUN: FileCheck %s --check-prefix=SCALEF < %t.spr.s
// RUN: not grep -q vscalefps %t.znver3.s
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids --cpu-pipeline="exp2-scalef=false" -o %t.spr.bits.s
// RUN: not grep -q vscalefps %t.spr.bits.s
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids --cpu-pipeline="exp2-scalef=false" 2>&1 | FileCheck %s --check-prefix=NO-SCALEF
// SCALEF: vrndscaleps
// SCALEF: vscalefps {{.*}} {%k{{[0-7]}}} {z}
// NO-SCALEF: exp2-scalef=false: given explicitly
// The projection blocks' K loop, on both AVX-512 CPUs and (6 x 16) AVX2,
// threaded or not, prefetching the weight row 2 KiB ahead: a row of 32 f32
// is two lines, of 16 one (attn-prefetch-streams):
// RUN: attnc %S/Inputs/matmul-1024x512x1536.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids -o %t.mm.spr.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.mm.spr.s --block-fmas 24 | FileCheck %s --check-prefix=MM24
// RUN: attnc %S/Inputs/matmul-1024x512x1536.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=skylake-avx512 --cpu-pipeline=threads=false -o %t.mm.skx.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.mm.skx.s --block-fmas 24 | FileCheck %s --check-prefix=MM24
// MM24: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 24 fma, 0 spills, 0 reloads, 2 prefetches
// MM24: 1 hot loops (the largest 24 fma), 0 with spills or reloads
// RUN: attnc %S/Inputs/matmul-1024x512x1536.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=znver3 -o %t.mm.znver3.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.mm.znver3.s --block-fmas 12 | FileCheck %s --check-prefix=MM12
// MM12: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 12 fma, 0 spills, 0 reloads, 1 prefetches
// The rows register blocks leave (257 = 4 x 64 + 1: 64 = 5 x 12 + 4, then
// the last one) run as 4- and 1-row blocks of broadcast FMAs, 8 and 2 per
// K step (upstream's lowering of a one-row block's contraction was
// scalar vmulss and inserts).
// RUN: attnc %S/Inputs/matmul-257x1024x768.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids -o %t.mm257.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.mm257.s --block-fmas 24 | FileCheck %s --check-prefix=ROWS
// ROWS-DAG: loop BB{{[0-9_]+}} depth {{[0-9]+}}: 8 fma, 0 spills, 0 reloads, 2 prefetches, {{[0-9]+}} instructions [8 vfmadd231ps]
// ROWS-DAG: loop BB{{[0-9_]+}} depth {{[0-9]+}}: 2 fma, 0 spills, 0 reloads, 2 prefetches, {{[0-9]+}} instructions [2 vfmadd231ps]
// ROWS-DAG: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 24 fma, 0 spills, 0 reloads, 2 prefetches
// 48 keys: Q K^T's 4 x 48 blocks run as 4 x 32 and 4 x 16 in one K loop,
// 12 FMAs per step, in registers (a 4 x 48 block was carried element by
// element: 178 spills and 178 reloads per step). Every multiply-add loop
// of the kernel is checked (--all).
// RUN: attnc %S/Inputs/sdpa-48-keys.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids -o %t.k48.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.k48.s --all | FileCheck %s --check-prefix=KEYS48
// KEYS48: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 12 fma, 0 spills, 0 reloads, 0 prefetches, {{[0-9]+}} instructions [12 vfmadd231ps]
// KEYS48: 3 hot loops (the largest 18 fma), 0 with spills or reloads
// Without prefetches (contraction-prefetch=0):
// RUN: attnc %S/Inputs/matmul-1024x512x1536.mlir --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids --cpu-pipeline=contraction-prefetch=0 -o %t.mm.nopf.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.mm.nopf.s --block-fmas 24 | FileCheck %s --check-prefix=NOPF
// NOPF: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 24 fma, 0 spills, 0 reloads, 0 prefetches
// MM12: 1 hot loops (the largest 12 fma), 0 with spills or reloads

// AArch64 NEON (32 x 128-bit): 4 x 16, 16 accumulators. Neoverse V2's SVE
// vectors are 128 bits too: no wider than NEON's, so the code stays NEON.
// RUN: attnc --print-target --mtriple=aarch64-linux-gnu --mcpu=neoverse-v2 2>&1 | FileCheck %s --check-prefix=NV2
// NV2: triple aarch64-unknown-linux-gnu, cpu neoverse-v2
// NV2: vectors: 32 x 128 bits (4 f32 lanes), FMA yes
// NV2: dot-product extensions: bf16, i8mm, sve{{$}}
// NV2: kernel: q-tile=128 kv-tile=64 m-block=4 n-block=16 row-elements=64
// NV2: contraction-m-block x contraction-n-block: 12 x 8: 24 accumulators
// A 64 KiB 4-way L1d has 256 sets: rows 8 KiB apart put 4 in one.
// NV2: contraction-conflict-stride: 8192: left-operand rows this many bytes apart (or a multiple) put at least 4 lines of a 12-row register block in one of the L1d's 256 sets of 4 ways
// RUN: attnc %S/Inputs/matmul-1024x512x1536.mlir --emit=asm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v2 -o %t.mm.nv2.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.mm.nv2.s --block-fmas 24 | FileCheck %s --check-prefix=MM24-NEON
// MM24-NEON: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 24 fma, 0 spills, 0 reloads, 1 prefetches
// MM24-NEON: 1 hot loops (the largest 24 fma), 0 with spills or reloads
// RUN: FileCheck %s --check-prefix=PRFM < %t.mm.nv2.s
// PRFM: prfm pldl1keep
// RUN: attnc %s --emit=asm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v2 -o %t.nv2.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.nv2.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16
// RUN: FileCheck %s --check-prefix=NEON < %t.nv2.s
// NEON: fmla v{{[0-9]+}}.4s
// NEON-NOT: fmla z

// AArch64 SVE vectors wider than NEON's (Neoverse V1's 256 bits, LLVM's
// tuning vscale 2) are 32 registers of 8 f32 lanes, 4 x 32 blocks of 16
// accumulators, every function compiled for exactly that length
// (vscale_range(2,2)), so the blocks' multiply-adds are SVE fmla on z
// registers. The A64FX has 512 bits, and AVX-512's blocks.
// RUN: attnc --print-target --mtriple=aarch64-linux-gnu --mcpu=neoverse-v1 2>&1 | FileCheck %s --check-prefix=NV1
// NV1: vectors: 32 x 256 bits (8 f32 lanes), FMA yes
// NV1: dot-product extensions: bf16, i8mm, sve (code for 256-bit vectors: correct only on CPUs of that length)
// NV1: kernel: q-tile=128 kv-tile=64 m-block=4 n-block=32 row-elements=128
// RUN: attnc %s --emit=asm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v1 -o %t.nv1.s
// RUN: %python %attn_src_root/test/lib/check_spills.py %t.nv1.s --block-fmas 16 | FileCheck %s --check-prefix=HOT16
// RUN: FileCheck %s --check-prefix=SVE < %t.nv1.s
// SVE: fmla z{{[0-9]+}}.s, p{{[0-9]+}}/m
// SVE-NOT: fmla v{{[0-9]+}}.4s
// Every function has the vector length, the outlined parallel-loop bodies
// and the OpenMP body of their dispatcher too; with 128-bit SVE (Neoverse
// V2) none has.
// RUN: attnc %s --emit=llvm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v1 \
// RUN:   --cpu-pipeline="threads=true" -o - | FileCheck %s --check-prefix=VSCALE
// VSCALE: define internal void @sdpa_parallel_0({{.*}} #[[BODY:[0-9]+]]
// VSCALE: define internal void @__attn_parallel_for..omp_par{{.*}} #[[OMP:[0-9]+]]
// VSCALE: attributes #[[BODY]] = { {{.*}}vscale_range(2,2)
// VSCALE: attributes #[[OMP]] = { {{.*}}vscale_range(2,2)
// RUN: attnc %s --emit=llvm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v2 -o - \
// RUN:   | FileCheck %s --check-prefix=NOVSCALE
// NOVSCALE-NOT: vscale_range
// RUN: attnc --print-target --mtriple=aarch64-linux-gnu --mcpu=a64fx 2>&1 | FileCheck %s --check-prefix=A64FX
// A64FX: vectors: 32 x 512 bits (16 f32 lanes), FMA yes
// A64FX: sve (code for 512-bit vectors: correct only on CPUs of that length)
// A64FX: kernel: q-tile=128 kv-tile=64 m-block=4 n-block=64

// Plain x86-64 (SSE2, no FMA): 4 x 8, correct and slow; multiply-adds are
// mulps + addps, so there is no FMA loop to check, only the choice.
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=x86-64 2>&1 | FileCheck %s --check-prefix=SSE
// SSE: vectors: 16 x 128 bits (4 f32 lanes), FMA no
// SSE: kernel: q-tile=192 kv-tile=64 m-block=6 n-block=8 row-elements=64

// The check fails when a block does not fit: AVX-512's 4 x 64 block on
// AVX2 needs 32 accumulators of 16 registers, 8 x 64 on AVX-512 needs 37
// of 32.
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=znver3 --cpu-pipeline="m-block=4 n-block=64 q-tile=128" -o %t.bad.s
// RUN: not %python %attn_src_root/test/lib/check_spills.py %t.bad.s --block-fmas 32 | FileCheck %s --check-prefix=SPILLS
// RUN: attnc %s --emit=asm --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids --cpu-pipeline="m-block=8 n-block=64" -o %t.bad512.s
// RUN: not %python %attn_src_root/test/lib/check_spills.py %t.bad512.s --block-fmas 32 | FileCheck %s --check-prefix=SPILLS
// SPILLS: hot loop BB{{[0-9_]+}} depth {{[0-9]+}}: 32 fma, {{[1-9][0-9]*}} spills, {{[1-9][0-9]*}} reloads
// SPILLS: 2 hot loops (the largest 32 fma), 2 with spills or reloads

// Explicit sizes override the model's, and -v says so.
// RUN: attnc --print-target --mtriple=x86_64-linux-gnu --mcpu=znver3 --cpu-pipeline="m-block=2 n-block=32" 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT: kernel: q-tile=192 kv-tile=64 m-block=2 n-block=32 row-elements=128
// EXPLICIT: m-block=2: given explicitly
// EXPLICIT: n-block=32: given explicitly

// attn-opt's pipeline uses the generic model (x86-64-v3's registers) unless
// it is given a target.
// RUN: attn-opt %s --attn-cpu-pipeline --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=GENERIC
// GENERIC: attn-tile{bf16-pairs=false decode-key-chunks=0 grad-head-sums=true grad-key-chunks=0 kv-tile=64 q-tile=192 short-kv-tile=16 small-head-kv-tile=128 value-panel=16}
// GENERIC: attn-vectorize-tiles{bf16-dot=false contraction-m-block=6 contraction-n-block=16 lanes=8 m-block=6 max-m-block=6 n-block=16 row-elements=128}
// V in panels of the block's width (value-panel) unless value-panels=false.
// RUN: attn-opt %s --attn-cpu-pipeline="value-panels=false" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPANELS
// NOPANELS: attn-tile{{{.*}} value-panel=0}
// RUN: attn-opt %s --attn-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=sapphirerapids" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTSPR
// OPTSPR: attn-tile{bf16-pairs=false decode-key-chunks=0 grad-head-sums=true grad-key-chunks=0 kv-tile=64 q-tile=128 short-kv-tile=16 small-head-kv-tile=128 value-panel=64}
// OPTSPR: attn-vectorize-tiles{bf16-dot=false contraction-m-block=12 contraction-n-block=32 lanes=16 m-block=4 max-m-block=6 n-block=64 row-elements=256}
// RUN: not attn-opt %s --attn-cpu-pipeline="target-cpu=bogus" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTBAD
// OPTBAD-NOT: not a recognized processor
// OPTBAD: error: attn-cpu-pipeline: unknown CPU 'bogus' for {{.+}}

// Bad targets are errors that name them.
// RUN: not attnc %s --emit=asm -o /dev/null --mtriple=x86_64-linux-gnu --mcpu=pentium9000 2>&1 | FileCheck %s --check-prefix=BADCPU
// BADCPU: attnc: error: unknown CPU 'pentium9000' for x86_64-unknown-linux-gnu
// RUN: not attnc %s --emit=asm -o /dev/null --mtriple=nonsense-unknown-none 2>&1 | FileCheck %s --check-prefix=BADTRIPLE
// BADTRIPLE: attnc: error: no LLVM target for triple 'nonsense-unknown-none'
// RUN: not attnc %s --emit=asm -o /dev/null --cpu-pipeline="target-cpu=znver3" 2>&1 | FileCheck %s --check-prefix=PIPETARGET
// PIPETARGET: attnc: error: --cpu-pipeline: name the target with --mtriple, --mcpu and --mattr

func.func @sdpa(%q: tensor<1x4x512x64xf32>, %k: tensor<1x4x512x64xf32>, %v: tensor<1x4x512x64xf32>)
    -> tensor<1x4x512x64xf32> {
  %e = tensor.empty() : tensor<1x4x512x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x4x512x64xf32>, tensor<1x4x512x64xf32>, tensor<1x4x512x64xf32> -> tensor<1x4x512x64xf32>
  return %o : tensor<1x4x512x64xf32>
}
