// RUN: attn-opt %s --attn-omp-dynamic-schedule | FileCheck %s
// RUN: attn-opt %s --attn-omp-dynamic-schedule="chunks-per-thread=0" | FileCheck %s --check-prefix=ONE

// A worksharing loop without a schedule gets a dynamic one whose chunk
// gives each thread about 8 chunks: max(1, trips / (threads * 8)), the
// trips counted from the nest's bounds and steps (rounded up), the team's
// size from the OpenMP runtime, declared once. A chosen schedule is kept.
// CHECK: llvm.func @omp_get_num_threads() -> i32
// CHECK-NOT: llvm.func @omp_get_num_threads
// CHECK-LABEL: func.func @loops
// CHECK-SAME: (%[[N:.*]]: index, %[[LB:.*]]: index, %[[STEP:.*]]: index)
// CHECK: omp.parallel {
// CHECK: %[[SPAN:.*]] = arith.subi %[[N]], %[[LB]] : index
// CHECK: %[[COUNT:.*]] = arith.ceildivui %[[SPAN]], %[[STEP]] : index
// CHECK: %[[TRIPS:.*]] = arith.muli %{{.*}}, %[[COUNT]] : index
// CHECK: %[[TEAM:.*]] = llvm.call @omp_get_num_threads() : () -> i32
// CHECK: %[[THREADS:.*]] = arith.index_castui %[[TEAM]] : i32 to index
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: %[[CHUNKS:.*]] = arith.muli %[[THREADS]], %[[EIGHT]] : index
// CHECK: %[[PER:.*]] = arith.divui %[[TRIPS]], %[[CHUNKS]] : index
// CHECK: %[[CHUNK:.*]] = arith.maxui %[[PER]], %{{.*}} : index
// CHECK: omp.wsloop schedule(dynamic = %[[CHUNK]] : index) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}) : index = (%[[LB]]) to (%[[N]]) step (%[[STEP]])
// CHECK: omp.wsloop schedule(static) {
// Both loops of a collapsed nest count.
// CHECK: arith.ceildivui
// CHECK: arith.muli
// CHECK: arith.ceildivui
// CHECK: %[[TRIPS2:.*]] = arith.muli
// CHECK: llvm.call @omp_get_num_threads()
// CHECK: arith.divui %[[TRIPS2]],
// CHECK: %[[CHUNK2:.*]] = arith.maxui
// CHECK: omp.wsloop schedule(dynamic = %[[CHUNK2]] : index) {
// CHECK-NEXT: omp.loop_nest ({{.*}}) collapse(2)

// With chunks-per-thread=0 the runtime's chunk (one iteration).
// ONE-NOT: omp_get_num_threads
// ONE-LABEL: func.func @loops
// ONE: omp.wsloop schedule(dynamic) {
// ONE: omp.wsloop schedule(static) {
// ONE: omp.wsloop schedule(dynamic) {
func.func @loops(%n: index, %lb: index, %step: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%lb) to (%n) step (%step) {
        omp.yield
      }
    }
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%n, %n) step (%c8, %c1) collapse(2) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
