// RUN: attn-opt %s --attn-refine-branch-layouts --split-input-file | FileCheck %s

// A padded copy in one branch, a view of a larger buffer in the other:
// bufferization's fully dynamic result becomes the layout both share
// (rows contiguous, 64 apart), and the user's subview reads it directly.
// CHECK-LABEL: func.func @padded_or_view
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (memref<?x8x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>)
// CHECK: %[[COPY:.*]] = memref.alloc
// CHECK: %[[C1:.*]] = memref.cast %[[COPY]] : memref<?x8x?x64xf32> to memref<?x8x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>
// CHECK: scf.yield %[[C1]]
// CHECK: } else {
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: scf.yield %[[VIEW]] : memref<?x8x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>
// CHECK: memref.subview %[[R]][0, 0, 0, 0] [1, 1, 4, 64] [1, 1, 1, 1] : memref<?x8x?x64xf32, strided<[?, ?, 64, 1], offset: ?>> to memref<4x64xf32, strided<[64, 1], offset: ?>>
func.func @padded_or_view(%c: i1, %big: memref<3x?x8x?x64xf32>, %n: index, %l: index) -> memref<4x64xf32, strided<[?, ?], offset: ?>> {
  %r = scf.if %c -> (memref<?x8x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>) {
    %a = memref.alloc(%n, %l) : memref<?x8x?x64xf32>
    %ca = memref.cast %a : memref<?x8x?x64xf32> to memref<?x8x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
    scf.yield %ca : memref<?x8x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
  } else {
    %v = memref.subview %big[1, 0, 0, 0, 0] [1, %n, 8, %l, 64] [1, 1, 1, 1, 1] : memref<3x?x8x?x64xf32> to memref<?x8x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>
    %cv = memref.cast %v : memref<?x8x?x64xf32, strided<[?, ?, 64, 1], offset: ?>> to memref<?x8x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
    scf.yield %cv : memref<?x8x?x64xf32, strided<[?, ?, ?, ?], offset: ?>>
  }
  %s = memref.subview %r[0, 0, 0, 0] [1, 1, 4, 64] [1, 1, 1, 1] : memref<?x8x?x64xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<4x64xf32, strided<[?, ?], offset: ?>>
  return %s : memref<4x64xf32, strided<[?, ?], offset: ?>>
}

// -----

// Branches whose strides differ: those stay dynamic, what they agree on
// (here the offset, 0) becomes static. A result no branch makes more static
// is left alone.
// CHECK-LABEL: func.func @columns
// CHECK: scf.if %{{.*}} -> (memref<4x8xf32, strided<[?, ?]>>)
// CHECK-LABEL: func.func @as_static
// CHECK: scf.if %{{.*}} -> (memref<4x8xf32, strided<[?, ?], offset: ?>>)
func.func @columns(%c: i1, %a: memref<4x8xf32>, %b: memref<8x4xf32>) -> memref<4x8xf32, strided<[?, ?], offset: ?>> {
  %r = scf.if %c -> (memref<4x8xf32, strided<[?, ?], offset: ?>>) {
    %ca = memref.cast %a : memref<4x8xf32> to memref<4x8xf32, strided<[?, ?], offset: ?>>
    scf.yield %ca : memref<4x8xf32, strided<[?, ?], offset: ?>>
  } else {
    %t = memref.transpose %b (i, j) -> (j, i) : memref<8x4xf32> to memref<4x8xf32, strided<[1, 4]>>
    %ct = memref.cast %t : memref<4x8xf32, strided<[1, 4]>> to memref<4x8xf32, strided<[?, ?], offset: ?>>
    scf.yield %ct : memref<4x8xf32, strided<[?, ?], offset: ?>>
  }
  return %r : memref<4x8xf32, strided<[?, ?], offset: ?>>
}

func.func @as_static(%c: i1, %a: memref<4x8xf32, strided<[?, ?], offset: ?>>, %b: memref<4x8xf32, strided<[?, ?], offset: ?>>) -> memref<4x8xf32, strided<[?, ?], offset: ?>> {
  %r = scf.if %c -> (memref<4x8xf32, strided<[?, ?], offset: ?>>) {
    scf.yield %a : memref<4x8xf32, strided<[?, ?], offset: ?>>
  } else {
    scf.yield %b : memref<4x8xf32, strided<[?, ?], offset: ?>>
  }
  return %r : memref<4x8xf32, strided<[?, ?], offset: ?>>
}
