// RUN: attn-opt %s --attn-parallel-loops-to-runtime --split-input-file --verify-diagnostics | FileCheck %s

// A two-dimensional loop: its body becomes a private function of an
// iteration range; what it uses from outside (a float, a buffer, the trip
// count of the dynamic dimension) travels in one record on the caller's
// stack, allocated at the function's entry (noalias in the body: nothing
// the body writes is the record); the bounds and steps that are
// constants are re-created in the body. Iteration i is (1 + 2 * (i / 8),
// i % 8), each between a save and a restore of the stack pointer.
// CHECK-LABEL: func.func private @two_dims_parallel_0(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr {llvm.noalias}, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[REC:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.struct<(f32, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, i64)>
// CHECK: %[[X:.*]] = llvm.extractvalue %[[REC]][0]
// CHECK: %[[DESC:.*]] = llvm.extractvalue %[[REC]][1]
// CHECK: %[[BUF:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : {{.*}} to memref<?x8xf32>
// CHECK: %[[B:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[E:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[I:.*]] = %[[B]] to %[[E]]
// CHECK: %[[J:.*]] = arith.remui %[[I]], %[[C8]]
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %[[C8]]
// CHECK: %[[SCALED:.*]] = arith.muli %[[ROW]], %[[C2]]
// CHECK: %[[II:.*]] = arith.addi %[[SCALED]], %[[C1]]
// CHECK: %[[SP:.*]] = llvm.intr.stacksave
// CHECK: memref.store %[[X]], %[[BUF]][%[[II]], %[[J]]]
// CHECK: llvm.intr.stackrestore %[[SP]]
// CHECK-LABEL: func.func @two_dims(
// CHECK-SAME: %[[ARG:.*]]: memref<?x8xf32>, %[[N:.*]]: index, %[[XV:.*]]: f32)
// CHECK: %[[RECORD:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(f32, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, i64)>
// CHECK: %[[SPAN:.*]] = arith.subi %[[N]], %{{.*}}
// CHECK: %[[CEIL:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}}
// CHECK: %[[TRIPS:.*]] = arith.maxsi %[[CEIL]], %{{.*}}
// CHECK: llvm.insertvalue %[[XV]]
// CHECK: builtin.unrealized_conversion_cast %[[ARG]] : memref<?x8xf32> to !llvm.struct
// CHECK: llvm.store %{{.*}}, %[[RECORD]]
// CHECK: %[[TOTAL:.*]] = arith.muli %[[TRIPS]], %{{.*}}
// CHECK: %[[TOTAL64:.*]] = arith.index_cast %[[TOTAL]] : index to i64
// CHECK: %[[FN:.*]] = constant @two_dims_parallel_0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: call @__attn_parallel_for(%[[FN]], %[[RECORD]], %[[TOTAL64]])
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @two_dims(%buf: memref<?x8xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c1, %c0) to (%n, %c8) step (%c2, %c1) {
    memref.store %x, %buf[%i, %j] : memref<?x8xf32>
    scf.reduce
  }
  return
}

// A parallel loop inside another runs sequentially in its body (the pool
// gives each iteration one thread). A loop inside a sequential loop is
// called each time, its record allocated once at the function's entry. A
// loop with results (a reduction) is left to the OpenMP lowering.
// CHECK-LABEL: func.func private @nested_parallel_0(
// CHECK: scf.for %[[I:.*]] =
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: scf.for %[[J:.*]] =
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]]
// CHECK-LABEL: func.func @nested(
// CHECK-NEXT: llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[RECORD:.*]] = llvm.alloca
// CHECK: scf.for
// CHECK: llvm.store %{{.*}}, %[[RECORD]]
// CHECK: %[[TRIPS:.*]] = arith.constant 4 : i64
// CHECK: call @__attn_parallel_for(%{{.*}}, %[[RECORD]], %[[TRIPS]])
// CHECK-LABEL: func.func @reduction(
// CHECK: scf.parallel
// CHECK: scf.reduce(
func.func @nested(%buf: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %t = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
        memref.store %one, %buf[%i, %j] : memref<4x8xf32>
        scf.reduce
      }
      scf.reduce
    }
  }
  return
}

func.func @reduction(%buf: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %v = memref.load %buf[%i] : memref<8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %s : f32
}

// The dispatcher, defined once: the hook attn_set_parallel_for stores,
// called when set; the OpenMP fallback (one body call per iteration) when
// it is not or when it returns nonzero.
// CHECK: llvm.mlir.global internal @__attn_parallel_for_hook()
// CHECK: llvm.func @attn_set_parallel_for(%[[HOOK:.*]]: !llvm.ptr)
// CHECK: llvm.store %[[HOOK]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: func.func private @__attn_parallel_for(%[[BODY:.*]]: (!llvm.ptr, i64, i64) -> (), %[[C:.*]]: !llvm.ptr, %[[T:.*]]: i64)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK: %[[H:.*]] = llvm.load
// CHECK: %[[SET:.*]] = llvm.icmp "ne" %[[H]]
// CHECK: %[[DECLINED:.*]] = scf.if %[[SET]] -> (i1)
// CHECK: %[[FP:.*]] = builtin.unrealized_conversion_cast %[[BODY]]
// CHECK: %[[STATUS:.*]] = llvm.call %[[H]](%[[FP]], %[[C]], %[[T]])
// CHECK: arith.cmpi ne, %[[STATUS]]
// CHECK: scf.if %[[DECLINED]]
// CHECK: scf.parallel (%[[IT:.*]]) =
// CHECK: %[[FROM:.*]] = arith.index_cast %[[IT]]
// CHECK: %[[TO:.*]] = arith.addi %[[FROM]]
// CHECK: func.call_indirect %[[BODY]](%[[C]], %[[FROM]], %[[TO]])
// CHECK-NOT: func.func

// -----

// No parallel loop: nothing is added.
// CHECK-LABEL: func.func @serial(
// CHECK-NOT: attn_set_parallel_for
// CHECK-NOT: __attn_parallel_for
func.func @serial(%buf: memref<8xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %x, %buf[%i] : memref<8xf32>
  }
  return
}

// -----

// A value with no LLVM form cannot be passed to the body.
func.func @tensor_capture(%t: tensor<8xf32>, %buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{a parallel loop uses a value of type 'tensor<8xf32>' from outside, which has no LLVM form to pass it in}}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = tensor.extract %t[%i] : tensor<8xf32>
    memref.store %v, %buf[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
