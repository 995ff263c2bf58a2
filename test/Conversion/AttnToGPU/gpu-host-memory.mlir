// RUN: attn-opt %s --attn-gpu-host-memory -split-input-file -verify-diagnostics | FileCheck %s

// Allocations become device allocations freed at the end of the block;
// whole-buffer copies become gpu.memcpy; kernels are left alone.
// CHECK-LABEL: func.func @buffers
// CHECK:         %[[T:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK:         %[[D:.*]] = gpu.alloc (%arg2) : memref<?xf32>
// CHECK:         gpu.launch
// CHECK:           memref.store {{.*}}, %[[T]]
// CHECK:         gpu.memcpy  %arg1, %[[T]] : memref<4x8xf32>, memref<4x8xf32>
// CHECK-DAG:     gpu.dealloc  %[[T]] : memref<4x8xf32>
// CHECK-DAG:     gpu.dealloc  %[[D]] : memref<?xf32>
// CHECK:         return
func.func @buffers(%in: memref<4x8xf32>, %out: memref<4x8xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %t = memref.alloc() : memref<4x8xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %v = memref.load %in[%tx, %ty] : memref<4x8xf32>
    memref.store %v, %t[%tx, %ty] : memref<4x8xf32>
    gpu.terminator
  }
  memref.copy %t, %out : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// Sequential code over buffers (the CSR block table) becomes a kernel of
// one thread.
// CHECK-LABEL: func.func @sequential
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:.*]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK-NEXT:      scf.for
// CHECK:             memref.load %arg0
// CHECK:             memref.store {{.*}}, %arg1
// CHECK:           gpu.terminator
func.func @sequential(%offsets: memref<5xi32>, %table: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %offsets[%i] : memref<5xi32>
    memref.store %v, %table[%i] : memref<4xi32>
  }
  return
}

// -----

func.func @strided_copy(%in: memref<2x4xf32>, %out: memref<2x8xf32>) {
  %view = memref.subview %out[0, 4] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  // expected-error @below {{copies a strided view on the host; compiled for CUDA, only whole contiguous buffers can be copied there ('memref<2x4xf32>' to 'memref<2x4xf32, strided<[8, 1], offset: 4>>')}}
  memref.copy %in, %view : memref<2x4xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  return
}

// -----

func.func @host_needs_value(%lens: memref<2xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{would read or write a device buffer on the host, and its results are needed there}}
  %v = memref.load %lens[%c0] : memref<2xi32>
  return %v : i32
}

// -----

// Constant buffers are copied to the device where the host takes them.
memref.global "private" constant @docs : memref<4xi64> = dense<[0, 0, 1, 1]>
// CHECK-LABEL: func.func @constant
// CHECK:         %[[HOST:.*]] = memref.get_global @docs : memref<4xi64>
// CHECK:         %[[DEV:.*]] = gpu.alloc () : memref<4xi64>
// CHECK:         gpu.memcpy  %[[DEV]], %[[HOST]] : memref<4xi64>, memref<4xi64>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[DEV]]
// CHECK:         gpu.dealloc  %[[DEV]]
func.func @constant(%out: memref<4xi64>) {
  %c1 = arith.constant 1 : index
  %docs = memref.get_global @docs : memref<4xi64>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %v = memref.load %docs[%tx] : memref<4xi64>
    memref.store %v, %out[%tx] : memref<4xi64>
    gpu.terminator
  }
  return
}

// -----

// Calls and loops of kernel launches stay on the host: the callee and the
// kernels are device code already.
func.func private @callee(%b: memref<4xf32>)
// CHECK-LABEL: func.func @calls_and_launch_loops
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0
// CHECK:         call @callee(%arg0)
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @calls_and_launch_loops(%buf: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  call @callee(%buf) : (memref<4xf32>) -> ()
  scf.for %i = %c0 to %c2 step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
      %v = memref.load %buf[%i] : memref<4xf32>
      memref.store %v, %buf[%tx] : memref<4xf32>
      gpu.terminator
    }
  }
  return
}
