// Autotuning bf16 attention on a CPU with vdpbf16ps: whether the pairs on
// vdpbf16ps or bf16 widened to f32 are faster depends on the core (Zen 4:
// the pairs, 1.5-1.9x; Sapphire Rapids: widened, 1.2-1.6x), so the
// candidates include the model's sizes with the other bf16-dot choice, and
// the winner's choice is kept in the tuning cache and compiled with.
// REQUIRES: host-avx512bf16
// RUN: rm -rf %t && mkdir -p %t

// RUN: attnc %s --autotune --tuning-cache=%t/tuning.json -v --emit=mlir \
// RUN:   -o %t/tuned.mlir 2>&1 | FileCheck %s --check-prefix=TUNE
// TUNE: autotune: {{[6-8]}} candidates timed on this machine
// TUNE: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block={{[0-9]+}} n-block={{[0-9]+}} bf16-dot={{true|false}}: {{[0-9.]+}} ms
// TUNE: autotune: key: cpu '{{.+}}', dtype bf16, problem 'sdpa(1x2x256x64,

// A cached choice is the one compiled with, either way, and computes the
// right result.
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/widened.json 'sizes.bf16-dot=false'
// RUN: attnc %s --tuning-cache=%t/widened.json -v --print-pipeline \
// RUN:   --emit=mlir -o %t/w.mlir 2>&1 | FileCheck %s --check-prefix=WIDE
// WIDE: autotune: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block={{[0-9]+}} n-block={{[0-9]+}} bf16-dot=false, from the tuning cache
// WIDE: attn-tile{bf16-pairs=false
// WIDE-SAME: attn-vectorize-tiles{bf16-dot=false
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/pairs.json 'sizes.bf16-dot=true'
// RUN: attnc %s --tuning-cache=%t/pairs.json --print-pipeline --emit=mlir \
// RUN:   -o %t/p.mlir 2>&1 | FileCheck %s --check-prefix=PAIRS
// PAIRS: attn-tile{bf16-pairs=true
// PAIRS-SAME: attn-vectorize-tiles{bf16-dot=true
// RUN: attn-run %s --tuning-cache=%t/widened.json --check 2>&1 | FileCheck %s --check-prefix=CORRECT
// RUN: attn-run %s --tuning-cache=%t/pairs.json --check 2>&1 | FileCheck %s --check-prefix=CORRECT
// CORRECT-NOT: warning
// CORRECT: relative error {{.*}} ok

// A bf16-dot that is not a boolean makes the entry malformed.
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/bad.json 'sizes.bf16-dot="yes"'
// RUN: attnc %s --tuning-cache=%t/bad.json -v --emit=mlir -o %t/b.mlir \
// RUN:   2>&1 | FileCheck %s --check-prefix=BAD
// BAD: warning: the tuning cache {{.*}}bad.json: entry #0 is malformed ("sizes"."bf16-dot" is not a boolean); ignoring it

// bf16-dot given explicitly is kept in every candidate and is part of the
// key.
// RUN: attnc %s --autotune --tuning-cache=%t/given.json -v --emit=mlir \
// RUN:   --cpu-pipeline="bf16-dot=false" -o %t/g.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GIVEN
// GIVEN-NOT: bf16-dot=true
// GIVEN: autotune: key: cpu '{{.+}}', dtype bf16, problem '{{.*}} [bf16-dot=false]'

func.func @attn(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>,
                %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %e = tensor.empty() : tensor<1x2x256x64xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
