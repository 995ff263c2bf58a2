// RUN: attn-opt %s --attn-omp-dynamic-schedule | FileCheck %s

// A worksharing loop without a schedule gets a guided one (chunks of the
// remaining iterations shrinking to one); a chosen schedule is kept.
// CHECK-LABEL: func.func @loops
// CHECK: omp.wsloop schedule(guided) {
// CHECK: omp.wsloop schedule(static) {
// CHECK: omp.wsloop schedule(dynamic = %{{.*}} : i32) {
func.func @loops(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %chunk = arith.constant 4 : i32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.wsloop schedule(dynamic = %chunk : i32) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
