// RUN: attn-opt %s --attn-omp-dynamic-schedule | FileCheck %s

// A worksharing loop without a schedule gets a dynamic one; a chosen
// schedule is kept.
// CHECK-LABEL: func.func @loops
// CHECK: omp.wsloop schedule(dynamic) {
// CHECK: omp.wsloop schedule(static) {
func.func @loops(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
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
    omp.terminator
  }
  return
}
