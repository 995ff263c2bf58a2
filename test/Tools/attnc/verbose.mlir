// -v reports the time of every stage, the pipeline's passes among them;
// --print-pipeline prints the pass pipeline attn-opt would run.
// RUN: attnc %s --emit=shared -o %t.so -v 2>&1 | FileCheck %s --check-prefix=TIME
// The pipeline's sizes come from the target (--mcpu; the host's without).
// RUN: attnc %s --emit=mlir -o /dev/null --print-pipeline --mcpu=skylake-avx512 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: attnc %s --emit=mlir -o /dev/null --print-pipeline --mcpu=znver3 2>&1 | FileCheck %s --check-prefix=AVX2

// TIME: target: {{.+}}
// TIME: kernel: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block={{[0-9]+}} n-block={{[0-9]+}} row-elements={{[0-9]+}} bf16-dot={{true|false}} {{.*}} exp2-scalef={{true|false}}
// TIME: Execution time report
// TIME: parse and verify
// TIME: MLIR pipeline
// TIME: AttnTile
// TIME: AttnLowerToLinalg
// TIME: OneShotBufferize
// TIME: ConvertToLLVMPass
// TIME: translate to LLVM IR
// TIME: LLVM -O3
// TIME: machine code and link

// RUN: attnc %s --emit=mlir -o /dev/null --print-pipeline --mcpu=skylake-avx512 --cpu-pipeline="lowering=reference" 2>&1 | FileCheck %s --check-prefix=REF
// RUN: not attnc %s --emit=mlir -o /dev/null --cpu-pipeline="lowering=flash" 2>&1 | FileCheck %s --check-prefix=BAD

// PIPE: attn-decompose-multihead,attn-fold-query-groups{max-rows=128},attn-sparsify{explain=false kv-tile=64 q-tile=128 small-head-kv-tile=128},attn-tile{bf16-pairs=false decode-key-chunks=0 grad-head-sums=true grad-key-chunks=0 kv-tile=64 q-tile=128 short-kv-tile=16 small-head-kv-tile=128 value-panel=64},attn-lower-to-linalg{fusion-marks=true row-copies=true},attn-fuse-weights{rows=64},attn-pack-weights{panel=32},attn-lower-packs,canonicalize
// The exponentials after vectorisation, on AVX-512 with vscalefps.
// PIPE-SAME: attn-vectorize-tiles{bf16-dot=false contraction-m-block=12 contraction-n-block=32 lanes=16 m-block=4 max-m-block=6 n-block=64 row-elements=256},attn-polynomial-math{scalef=true}
// PIPE-SAME: one-shot-bufferize
// PIPE-SAME: buffer-results-to-out-params
// PIPE-SAME: convert-to-llvm
// AVX2: attn-pack-weights{panel=16}
// AVX2-SAME: attn-vectorize-tiles{bf16-dot=false contraction-m-block=6 contraction-n-block=16 lanes=8 m-block=6 max-m-block=6 n-block=16 row-elements=128},attn-polynomial-math{scalef=false}
// REF: attn-decompose-multihead,attn-lower-to-linalg{fusion-marks=false row-copies=false},attn-pack-weights{panel=32},attn-lower-packs,canonicalize
// REF-SAME: attn-vectorize-tiles{{.*}},attn-polynomial-math{scalef=true}
// BAD: attnc: error: --cpu-pipeline: cannot parse 'lowering=flash'

func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
