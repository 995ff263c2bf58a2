// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-gpu-tile-parallel-loops{threads-per-block=64}))" | FileCheck %s
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-gpu-tile-parallel-loops{threads-per-block=2000}))" -verify-diagnostics -o /dev/null

// The last dimension steps by 64 in the outer loop; the inner loop is one
// dimension of 64 iterations, guarded against the bound.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME:    %[[N:[^:]*]]: index
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[STEP:.*]] = arith.muli %c1, %[[C64]] : index
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c3, %[[N]]) step (%c1, %[[STEP]])
// CHECK:           scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C64]]) step (%{{.*}})
// CHECK:             %[[OFF:.*]] = arith.muli %[[T]], %c1 : index
// CHECK:             %[[COL:.*]] = arith.addi %[[J]], %[[OFF]] : index
// CHECK:             %[[IN:.*]] = arith.cmpi slt, %[[COL]], %[[N]] : index
// CHECK:             scf.if %[[IN]]
// CHECK:               memref.load %arg0[%[[I]], %[[COL]]]
// CHECK-NOT:     scf.parallel
// CHECK:         return
// expected-error @below {{threads-per-block must be in [1, 1024], got 2000}}
func.func @elementwise(%a: memref<3x?xf32>, %b: memref<3x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<3x?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%i, %j] : memref<3x?xf32>
    scf.reduce
  }
  return
}
