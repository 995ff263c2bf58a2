// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s --check-prefix=THREADS
// RUN: attn-opt %s --attn-cpu-pipeline="threads=false" | FileCheck %s --check-prefix=SERIAL
// RUN: attn-opt %s --attn-cpu-pipeline="lowering=reference threads=false" | FileCheck %s --check-prefix=SERIAL
// The reference lowering's contractions run on threads too
// (attn-parallelize-contractions):
// RUN: attn-opt %s --attn-cpu-pipeline="lowering=reference" | FileCheck %s --check-prefix=REFTHREADS
// REFTHREADS-LABEL: llvm.func @sdpa(
// REFTHREADS: omp.wsloop schedule(dynamic = %{{.*}} : i64)

// The tiled lowering's (batch, head, query tile) loop runs on threads by
// default: its body outlined into a function of an iteration range
// (attn-parallel-loops-to-runtime), called for its iterations through
// __attn_parallel_for, which hands them to the pool a host installs with
// attn_set_parallel_for or else to one OpenMP worksharing loop, scheduled
// dynamically (causal tiles differ in cost) in chunks sized from the
// team's size at run time (attn-omp-dynamic-schedule).
// THREADS: llvm.func @omp_get_num_threads() -> i32
// THREADS: llvm.func internal @sdpa_parallel_0(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64)
// THREADS-NOT: omp.
// THREADS-LABEL: llvm.func @sdpa(
// THREADS: %[[BODY:.*]] = llvm.mlir.addressof @sdpa_parallel_0
// THREADS: llvm.call @__attn_parallel_for(%[[BODY]], %{{.*}}, %{{.*}})
// THREADS: llvm.func @attn_set_parallel_for(
// THREADS: llvm.func internal @__attn_parallel_for(
// THREADS: omp.parallel
// THREADS: llvm.call @omp_get_num_threads()
// THREADS: omp.wsloop schedule(dynamic = %{{.*}} : i64)
// THREADS: omp.loop_nest
// THREADS: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
// SERIAL-LABEL: llvm.func @sdpa(
// SERIAL-NOT: omp.
func.func @sdpa(%q: tensor<1x4x100x16xf32>, %k: tensor<1x4x100x16xf32>, %v: tensor<1x4x100x16xf32>)
    -> tensor<1x4x100x16xf32> {
  %e = tensor.empty() : tensor<1x4x100x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x100x16xf32>, tensor<1x4x100x16xf32>, tensor<1x4x100x16xf32> -> tensor<1x4x100x16xf32>
  return %o : tensor<1x4x100x16xf32>
}
