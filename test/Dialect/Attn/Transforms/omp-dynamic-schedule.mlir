// RUN: attn-opt %s --attn-omp-dynamic-schedule --split-input-file | FileCheck %s

// A worksharing loop without a schedule gets a dynamic one whose chunks
// are 1/16 of a thread's share of the iterations (at least one): the
// iterations (the product of each dimension's ceil((ub - lb) / step)) over
// omp_get_num_threads() * 16, asked in the parallel region. A chosen
// schedule is kept.
// CHECK: llvm.func @omp_get_num_threads() -> i32
// CHECK-LABEL: func.func @loops
// CHECK-SAME: (%[[N:.*]]: index, %[[M:.*]]: index)
// CHECK: omp.parallel {
// CHECK: %[[EXTENT:.*]] = arith.subi %[[M]], %[[N]] : index
// CHECK: %[[TRIPS:.*]] = arith.ceildivsi %[[EXTENT]], %[[C3:.*]] : index
// CHECK: %[[ITERATIONS:.*]] = arith.muli %[[TRIPS]], %[[C8:.*]] : index
// CHECK: %[[T32:.*]] = llvm.call @omp_get_num_threads() : () -> i32
// CHECK: %[[T:.*]] = arith.index_cast %[[T32]] : i32 to index
// CHECK: %[[CHUNKS:.*]] = arith.muli %[[T]], %[[C16:.*]] : index
// CHECK: %[[Q:.*]] = arith.divsi %[[ITERATIONS]], %[[CHUNKS]] : index
// CHECK: %[[CHUNK:.*]] = arith.maxsi %[[Q]], %[[C1:.*]] : index
// CHECK: omp.wsloop schedule(dynamic = %[[CHUNK]] : index) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}, %{{.*}}) : index = (%[[N]], %{{.*}}) to (%[[M]], %{{.*}}) step
// CHECK: omp.wsloop schedule(static) {
func.func @loops(%n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%n, %c0) to (%m, %c8) step (%c3, %c1) {
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

// -----

// One declaration for all the loops of a module.
// CHECK: llvm.func @omp_get_num_threads() -> i32
// CHECK-NOT: @omp_get_num_threads() -> i32
// CHECK-LABEL: func.func @two
// CHECK-COUNT-2: omp.wsloop schedule(dynamic =
func.func @two(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
