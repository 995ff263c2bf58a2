// Autotuning: --autotune times the candidate sizes on this machine, keeps
// the fastest in the tuning cache, and later compiles use the cache's entry
// without timing. Entries attnc must not use (corrupt, measured for another
// target, sizes that do not fit) are ignored with a warning.
// RUN: rm -rf %t && mkdir -p %t

// Tuning: every candidate is timed; the fastest is stored under the key.
// Sequence lengths round up to a power of two (200 -> 256); the head size
// does not.
// RUN: attnc %s --autotune --tuning-cache=%t/tuning.json -v --emit=mlir \
// RUN:   -o %t/tuned.mlir 2>&1 | FileCheck %s --check-prefix=TUNE
// TUNE: autotune: {{[5-7]}} candidates timed on this machine
// TUNE: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block={{[0-9]+}} n-block={{[0-9]+}}: {{[0-9.]+}} ms
// TUNE: <- fastest
// TUNE: autotune: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block={{[0-9]+}} n-block={{[0-9]+}}, stored in {{.*}}tuning.json
// TUNE: autotune: key: cpu '{{.+}}', dtype f32, problem 'sdpa(1x2x256x32, 1x2x256x32, 1x2x256x32, 1x2x256x32) {{.*}}causal
// RUN: FileCheck %s --check-prefix=FILE < %t/tuning.json
// FILE: "cpu": "{{.+}}",
// FILE: "dtype": "f32",
// FILE: "problem": "sdpa(1x2x256x32,
// FILE: "sizes": {
// FILE-NEXT: "kv-tile": {{[0-9]+}},
// FILE-NEXT: "m-block": {{[0-9]+}},
// FILE-NEXT: "n-block": {{[0-9]+}},
// FILE-NEXT: "q-tile": {{[0-9]+}}
// FILE: "target": "x86_64-{{.*}}"
// FILE: "format": 1

// A second compile takes the entry and times nothing.
// RUN: attnc %s --autotune --tuning-cache=%t/tuning.json -v --emit=mlir \
// RUN:   -o %t/again.mlir 2>&1 | FileCheck %s --check-prefix=HIT
// HIT-NOT: candidates timed
// HIT: autotune: q-tile={{[0-9]+}} kv-tile={{[0-9]+}} m-block={{[0-9]+}} n-block={{[0-9]+}}, from the tuning cache {{.*}}tuning.json

// The entry's sizes are the ones compiled with (here sizes every x86-64
// target can use, written into the entry), and the code they make is right.
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/pinned.json 'sizes.q-tile=32' 'sizes.kv-tile=32' \
// RUN:   'sizes.m-block=2' 'sizes.n-block=16'
// RUN: attnc %s --tuning-cache=%t/pinned.json --print-pipeline --emit=mlir \
// RUN:   -o %t/pinned.mlir 2>&1 | FileCheck %s --check-prefix=PINNED
// PINNED: attn-tile{bf16-pairs={{true|false}} decode-key-chunks=0 grad-head-sums=true grad-key-chunks=0 kv-tile=32 q-tile=32 short-kv-tile=16 small-head-kv-tile=0 value-panel=16}
// PINNED: attn-vectorize-tiles{bf16-dot={{true|false}} contraction-m-block={{6|12}} contraction-n-block={{16|32}} lanes={{8|16}} m-block=2 max-m-block=2 n-block=16
// RUN: attn-run %s --tuning-cache=%t/pinned.json --check 2>&1 | FileCheck %s --check-prefix=CORRECT
// RUN: attn-run %s --tuning-cache=%t/tuning.json --check 2>&1 | FileCheck %s --check-prefix=CORRECT
// CORRECT-NOT: warning
// CORRECT: relative error {{.*}} ok

// An entry measured for another target under the same CPU name (another
// VM reporting "AMD EPYC"), sizes that do not fit the register file, a
// malformed entry, a file that is not JSON or not a tuning cache: ignored
// with a warning; the target model's sizes are used.
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/foreign.json 'target="x86_64-pc-linux-gnu znver3 0"'
// RUN: attnc %s --tuning-cache=%t/foreign.json -v --emit=mlir -o %t/f.mlir \
// RUN:   2>&1 | FileCheck %s --check-prefix=FOREIGN
// FOREIGN: warning: the tuning cache {{.*}}foreign.json has an entry for this CPU's name measured for another target ('x86_64-pc-linux-gnu znver3 0', this is '{{.+}}'); ignoring it
// FOREIGN: autotune: {{.*}}foreign.json has no entry for this problem; the target model's sizes are used
// Pipeline switches that change the code are part of the key.
// RUN: attnc %s --tuning-cache=%t/tuning.json -v --emit=mlir -o %t/np.mlir \
// RUN:   --cpu-pipeline="value-panels=false" 2>&1 | FileCheck %s --check-prefix=SWITCH
// SWITCH: autotune: {{.*}}tuning.json has no entry for this problem
// SWITCH: autotune: key: {{.*}} [value-panels=false]
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/spills.json 'sizes.m-block=64' 'sizes.n-block=64' 'sizes.kv-tile=64'
// RUN: attnc %s --tuning-cache=%t/spills.json --emit=mlir -o %t/s.mlir \
// RUN:   2>&1 | FileCheck %s --check-prefix=SPILLS
// SPILLS: warning: the tuning cache {{.*}}spills.json has an entry with sizes this target cannot use (a 64 x 64 block needs {{[0-9]+}} vector registers, the target has {{[0-9]+}}); ignoring it
// RUN: %python %attn_src_root/test/lib/edit_tuning_cache.py %t/tuning.json \
// RUN:   %t/malformed.json 'sizes.q-tile="128"'
// RUN: attnc %s --tuning-cache=%t/malformed.json --emit=mlir -o %t/m.mlir \
// RUN:   2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: warning: the tuning cache {{.*}}malformed.json: entry #0 is malformed (no integer "sizes"."q-tile"); ignoring it
// RUN: echo 'garbage {' > %t/garbage.json
// RUN: attnc %s --tuning-cache=%t/garbage.json --emit=mlir -o %t/g.mlir \
// RUN:   2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: warning: the tuning cache {{.*}}garbage.json is not valid JSON ({{.*}}); ignoring it (the next tuning rewrites it)
// RUN: echo '{"format": 2, "entries": []}' > %t/format.json
// RUN: attnc %s --tuning-cache=%t/format.json --emit=mlir -o %t/g.mlir \
// RUN:   2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: warning: the tuning cache {{.*}}format.json is not an attn-mlir tuning cache of format 1; ignoring it

// Tuning needs this machine, static shapes and the CPU target.
// RUN: not attnc %s --autotune --tuning-cache=%t/x.json --mtriple=aarch64-linux-gnu \
// RUN:   --emit=mlir -o %t/x.mlir 2>&1 | FileCheck %s --check-prefix=CROSS
// CROSS: error: --autotune: autotuning times the code on this machine; the target (aarch64-unknown-linux-gnu, generic) is not this machine
// RUN: not attnc %s --autotune --target=cuda --emit=mlir -o %t/x.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA
// CUDA: error: --autotune and --tuning-cache tune the CPU pipeline; --target=cuda has no tuning yet
// RUN: not attnc %S/Inputs/dynamic-sdpa.mlir --autotune --tuning-cache=%t/x.json \
// RUN:   --emit=mlir -o %t/x.mlir 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: error: --autotune: autotuning runs the real shapes, and parameter #0 of @attn is tensor<1x2x?x32xf32>: give it static dimensions

func.func @attn(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>)
    -> tensor<1x2x200x32xf32> {
  %e = tensor.empty() : tensor<1x2x200x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) {causal}
     : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  return %o : tensor<1x2x200x32xf32>
}
