// RUN: attn-opt %s --attn-stack-iteration-buffers --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-stack-iteration-buffers="max-bytes=1024" --split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s --attn-stack-iteration-buffers="max-bytes=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: attn-opt %s --attn-stack-iteration-buffers="poison=true" --split-input-file | FileCheck %s --check-prefix=POISON

// BAD: error: attn-stack-iteration-buffers: max-bytes must be non-negative, got -1

// A parallel iteration's row vector (64 B) and score tile (4 KiB), freed
// in the iteration, go on the stack (alignment kept, deallocs gone); the
// 64 KiB accumulator does not fit what is left of the 64 KiB, and a buffer
// of a dynamic shape stays on the heap. With max-bytes=1024 only the row
// vector does.
// CHECK-LABEL: func.func @tiles
// CHECK: scf.forall
// CHECK: %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK: %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK: %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
// CHECK: %[[DYN:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NOT: memref.dealloc %[[ROW]]
// CHECK-NOT: memref.dealloc %[[TILE]]
// CHECK: memref.dealloc %[[ACC]]
// CHECK: memref.dealloc %[[DYN]]
// With poison (the test suites' ATTN_MLIR_ALLOCATOR_POISON), each stack
// tile is filled with all-ones bits (NaN) where it is allocated, as heap
// blocks are; the heap buffers are the allocator's to poison.
// POISON-LABEL: func.func @tiles
// POISON: %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// POISON: %[[NAN:.*]] = arith.constant 0xFFFFFFFF : f32
// POISON: linalg.fill ins(%[[NAN]] : f32) outs(%[[ROW]] : memref<16xf32>)
// POISON: %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// POISON: linalg.fill ins(%{{.*}} : f32) outs(%[[TILE]] : memref<16x64xf32>)
// POISON: memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
// POISON-NOT: linalg.fill ins(%[[NAN]] : f32) outs(%{{.*}} : memref<128x128xf32>)
// SMALL-LABEL: func.func @tiles
// SMALL: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// SMALL: memref.alloc() {alignment = 64 : i64} : memref<16x64xf32>
func.func @tiles(%out: memref<8x16xf32>, %n: index) {
  %cst = arith.constant 0.0 : f32
  scf.forall (%i) in (8) {
    %row = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    %tile = memref.alloc() {alignment = 64 : i64} : memref<16x64xf32>
    %acc = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
    %dyn = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%cst : f32) outs(%tile : memref<16x64xf32>)
    linalg.fill ins(%cst : f32) outs(%acc : memref<128x128xf32>)
    linalg.fill ins(%cst : f32) outs(%dyn : memref<?xf32>)
    %view = memref.subview %tile[0, 0] [16, 1] [1, 1] : memref<16x64xf32> to memref<16xf32, strided<[64]>>
    memref.copy %view, %row : memref<16xf32, strided<[64]>> to memref<16xf32>
    %dst = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.copy %row, %dst : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.dealloc %row : memref<16xf32>
    memref.dealloc %tile : memref<16x64xf32>
    memref.dealloc %acc : memref<128x128xf32>
    memref.dealloc %dyn : memref<?xf32>
  }
  return
}

// -----

// What could outlive the iteration or be freed elsewhere stays on the
// heap: a buffer yielded by a loop, one freed under a condition, one
// without a dealloc, one outside any parallel loop, and one in a serial
// loop inside the iteration (its stack would grow with each of that
// loop's iterations).
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @escapes(%out: memref<8x16xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %outside = memref.alloc() : memref<16xf32>
  scf.forall (%i) in (8) {
    %carried = memref.alloc() : memref<16xf32>
    %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%b = %carried) -> (memref<16xf32>) {
      scf.yield %b : memref<16xf32>
    }
    memref.dealloc %carried : memref<16xf32>
    %maybe = memref.alloc() : memref<16xf32>
    scf.if %c {
      memref.dealloc %maybe : memref<16xf32>
    }
    %kept = memref.alloc() : memref<16xf32>
    scf.for %j = %c0 to %c4 step %c1 {
      %inner = memref.alloc() : memref<16xf32>
      memref.dealloc %inner : memref<16xf32>
    }
  }
  memref.dealloc %outside : memref<16xf32>
  return
}
