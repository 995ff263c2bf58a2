// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s --check-prefix=THREADS
// RUN: attn-opt %s --attn-cpu-pipeline="threads=false" | FileCheck %s --check-prefix=SERIAL
// RUN: attn-opt %s --attn-cpu-pipeline="lowering=reference threads=false" | FileCheck %s --check-prefix=SERIAL
// The reference lowering's contractions run on threads too
// (attn-parallelize-contractions):
// RUN: attn-opt %s --attn-cpu-pipeline="lowering=reference" | FileCheck %s --check-prefix=REFTHREADS
// REFTHREADS-LABEL: llvm.func @sdpa(
// REFTHREADS: omp.wsloop schedule(dynamic = %{{.*}} : i64)

// The tiled lowering's (batch, head, query tile) loop runs on OpenMP
// threads by default: one worksharing loop over 1 * 4 * 2 tiles, scheduled
// dynamically (causal tiles differ in cost) in chunks sized from the
// team's size at run time (attn-omp-dynamic-schedule).
// THREADS: llvm.func @omp_get_num_threads() -> i32
// THREADS-LABEL: llvm.func @sdpa(
// THREADS: omp.parallel
// THREADS: llvm.call @omp_get_num_threads()
// THREADS: omp.wsloop schedule(dynamic = %{{.*}} : i64)
// THREADS: omp.loop_nest
// SERIAL-LABEL: llvm.func @sdpa(
// SERIAL-NOT: omp.
func.func @sdpa(%q: tensor<1x4x100x16xf32>, %k: tensor<1x4x100x16xf32>, %v: tensor<1x4x100x16xf32>)
    -> tensor<1x4x100x16xf32> {
  %e = tensor.empty() : tensor<1x4x100x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x100x16xf32>, tensor<1x4x100x16xf32>, tensor<1x4x100x16xf32> -> tensor<1x4x100x16xf32>
  return %o : tensor<1x4x100x16xf32>
}
