// RUN: attn-opt %s --attn-prefetch-streams --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-prefetch-streams="distance=0" --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: not attn-opt %s --attn-prefetch-streams="distance=-64" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-prefetch-streams: distance must be non-negative, got -64

// The K loop of a 12 x 32 register block as attn-vectorize-tiles marks it,
// after bufferization: each step reads a weight row of 32 f32 (128 bytes)
// through subviews of the loop-invariant K block %w, and a 12 x 1 column
// of the left operand (broadcast). The row 2048 bytes ahead is 16 steps
// ahead: two prefetches per step, one per 64-byte line, at the read's
// indices in %w with k + 16, last in the body (LLVM moves no load across
// a prefetch); the broadcast column gets none. The marker is removed.
// CHECK-LABEL: func.func @panel_rows
// CHECK-SAME: (%[[X:.*]]: memref<12x256xf32>, %[[W:.*]]: memref<4x256x32xf32>, %[[P:.*]]: index
// CHECK: scf.for %[[K:.*]] = %c0 to %c256 step %c1 iter_args
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %c16
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read {{.*}} vector<12x1xf32>
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read {{.*}} vector<32xf32>
// CHECK: vector.fma
// CHECK: memref.prefetch %[[W]][%[[P]], %[[AHEAD]], %c0{{(_[0-9]+)?}}], read, locality<3>, data
// CHECK: memref.prefetch %[[W]][%[[P]], %[[AHEAD]], %c16{{(_[0-9]+)?}}], read, locality<3>, data
// CHECK-NEXT: scf.yield
// CHECK-NOT: attn.stream_loop
// NONE-LABEL: func.func @panel_rows
// NONE-NOT: memref.prefetch
// NONE-NOT: attn.stream_loop
func.func @panel_rows(%x: memref<12x256xf32>, %w: memref<4x256x32xf32>, %p: index, %acc: vector<12x32xf32>) -> vector<12x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%a = %acc) -> (vector<12x32xf32>) {
    %row3 = memref.subview %w[%p, %k, 0] [1, 1, 32] [1, 1, 1] : memref<4x256x32xf32> to memref<1x1x32xf32, strided<[8192, 32, 1], offset: ?>>
    %column = memref.subview %x[0, %k] [12, 1] [1, 1] : memref<12x256xf32> to memref<12x1xf32, strided<[256, 1], offset: ?>>
    %row = memref.subview %row3[0, 0, 0] [1, 1, 32] [1, 1, 1] : memref<1x1x32xf32, strided<[8192, 32, 1], offset: ?>> to memref<1x32xf32, strided<[8192, 1], offset: ?>>
    %lhs = vector.transfer_read %column[%c0, %c0], %pad {in_bounds = [true, true]} : memref<12x1xf32, strided<[256, 1], offset: ?>>, vector<12x1xf32>
    %rhs = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : memref<1x32xf32, strided<[8192, 1], offset: ?>>, vector<32xf32>
    %l = vector.extract %lhs[0, 0] : f32 from vector<12x1xf32>
    %b = vector.broadcast %l : f32 to vector<32xf32>
    %a0 = vector.extract %a[0] : vector<32xf32> from vector<12x32xf32>
    %f = vector.fma %b, %rhs, %a0 : vector<32xf32>
    %n = vector.insert %f, %a [0] : vector<32xf32> into vector<12x32xf32>
    scf.yield %n : vector<12x32xf32>
  } {attn.stream_loop}
  return %r : vector<12x32xf32>
}

// -----

// A row of 16 f32 (AVX2's 6 x 16 blocks) is one line, 2048 bytes ahead
// is 32 steps; with a step of 2 the loop's variable runs 64 ahead. The
// row is read at an index computed in the loop (k + 1): the prefetch
// computes it again from the advanced variable.
// CHECK-LABEL: func.func @computed_index
// CHECK-SAME: (%[[W:.*]]: memref<512x16xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c256 step %c2 iter_args
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %c64
// CHECK: %[[NEXT:.*]] = arith.addi %[[AHEAD]], %c1
// CHECK: memref.prefetch %[[W]][%[[NEXT]], %c0], read, locality<3>, data
// CHECK-NEXT: scf.yield
func.func @computed_index(%w: memref<512x16xf32>, %acc: vector<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  %r = scf.for %k = %c0 to %c256 step %c2 iter_args(%a = %acc) -> (vector<16xf32>) {
    %next = arith.addi %k, %c1 : index
    %rhs = vector.transfer_read %w[%next, %c0], %pad {in_bounds = [true]} : memref<512x16xf32>, vector<16xf32>
    %s = arith.addf %rhs, %a : vector<16xf32>
    scf.yield %s : vector<16xf32>
  } {attn.stream_loop}
  return %r : vector<16xf32>
}

// -----

// Unmarked loops (attention's, whose key tiles stay in the L1) get no
// prefetches; neither do reads a marked loop repeats every iteration
// (their address does not depend on the loop variable) nor a column read
// with a stride (not a contiguous row).
// CHECK-LABEL: func.func @not_streamed
// CHECK-NOT: memref.prefetch
// CHECK-NOT: attn.stream_loop
// CHECK: return
func.func @not_streamed(%w: memref<256x32xf32>, %t: memref<32x256xf32>, %acc: vector<32xf32>) -> vector<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%a = %acc) -> (vector<32xf32>) {
    %rhs = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true]} : memref<256x32xf32>, vector<32xf32>
    %s = arith.addf %rhs, %a : vector<32xf32>
    scf.yield %s : vector<32xf32>
  }
  %q = scf.for %k = %c0 to %c256 step %c1 iter_args(%a = %r) -> (vector<32xf32>) {
    %same = vector.transfer_read %w[%c0, %c0], %pad {in_bounds = [true]} : memref<256x32xf32>, vector<32xf32>
    %column = vector.transfer_read %t[%c0, %k], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<32x256xf32>, vector<32xf32>
    %s = arith.addf %same, %a : vector<32xf32>
    %u = arith.addf %column, %s : vector<32xf32>
    scf.yield %u : vector<32xf32>
  } {attn.stream_loop}
  return %q : vector<32xf32>
}

// -----

// A step known only at run time: the variable runs step x 32 ahead (a row
// of 16 f32, 2048 bytes).
// CHECK-LABEL: func.func @dynamic_step
// CHECK-SAME: (%[[W:.*]]: memref<?x16xf32>, %[[N:.*]]: index, %[[STEP:.*]]: index
// CHECK: scf.for %[[K:.*]] = %c0 to %[[N]] step %[[STEP]] iter_args
// CHECK: %[[FAR:.*]] = arith.muli %[[STEP]], %c32
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %[[FAR]]
// CHECK: memref.prefetch %[[W]][%[[AHEAD]], %c0], read, locality<3>, data
// CHECK-NEXT: scf.yield
func.func @dynamic_step(%w: memref<?x16xf32>, %n: index, %step: index, %acc: vector<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %r = scf.for %k = %c0 to %n step %step iter_args(%a = %acc) -> (vector<16xf32>) {
    %rhs = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true]} : memref<?x16xf32>, vector<16xf32>
    %s = arith.addf %rhs, %a : vector<16xf32>
    scf.yield %s : vector<16xf32>
  } {attn.stream_loop}
  return %r : vector<16xf32>
}
