// RUN: attn-opt %s --attn-prefetch-streams --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-prefetch-streams="key-tiles=false" --split-input-file | FileCheck %s --check-prefix=OFF

// OFF-NOT: memref.prefetch
// OFF-NOT: attn.key_tile_loop

// attn-tile's key loop after bufferization, as the AVX-512 pipeline makes
// it at D = 128: each step reads a packed K^T tile (128 x 64 f32, 32 KiB)
// in the Q K^T blocks and a V tile (64 rows of 128 f32) in the P V blocks.
// The next step's tiles are the same views at key j + 64, next to the
// current ones; K^T's 512 lines are spread over the 32 iterations of the
// loop that reads the current tile (16 per iteration: 4 rows of 4 lines),
// V's 512 over the 32 of its own (2 rows of 8 lines), after the register
// blocks' loops, into the L2. The Q rows (%q: no key offset) and the
// scores (allocated in the loop) are not prefetched, and the marker is
// removed.
// CHECK-DAG: #[[$ROW0:.*]] = affine_map<(d0) -> ((d0 floordiv 4) * 4)>
// CHECK-DAG: #[[$ROW3:.*]] = affine_map<(d0) -> ((d0 floordiv 4) * 4 + 3)>
// CHECK-DAG: #[[$VROW0:.*]] = affine_map<(d0) -> ((d0 floordiv 4) * 2)>
// CHECK-DAG: #[[$VROW1:.*]] = affine_map<(d0) -> ((d0 floordiv 4) * 2 + 1)>
// CHECK-LABEL: func.func @key_tiles
// CHECK-SAME: (%[[KT:.*]]: memref<8x64x128x64xf32>, %[[V:.*]]: memref<4096x128xf32>, %[[Q:.*]]: memref<128x128xf32>, %[[H:.*]]: index)
// CHECK: scf.for %[[J:.*]] = %c0 to %c4096 step %c64 {
// CHECK: %[[NEXT:.*]] = arith.addi %[[J]], %c64
// CHECK: %[[T:.*]] = arith.divui %[[J]], %c64
// CHECK: memref.subview %[[KT]][%[[H]], %[[T]], 0, 0]
// CHECK: %[[NT:.*]] = arith.divui %[[NEXT]], %c64
// CHECK: %[[NEXTK:.*]] = memref.subview %[[KT]][%[[H]], %[[NT]], 0, 0] [1, 1, 128, 64]
// CHECK: memref.subview %[[V]][%[[J]], 0]
// CHECK: %[[NEXTV:.*]] = memref.subview %[[V]][%[[NEXT]], 0] [64, 128]
// CHECK: scf.for %[[M:.*]] = %c0 to %c128 step %c4 {
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_write
// CHECK-NEXT: %[[R0:.*]] = affine.apply #[[$ROW0]](%[[M]])
// CHECK: memref.prefetch %[[NEXTK]][%[[R0]], %c0{{.*}}], read, locality<2>, data
// CHECK: memref.prefetch %[[NEXTK]][%[[R0]], %c16], read, locality<2>, data
// CHECK: memref.prefetch %[[NEXTK]][%[[R0]], %c32], read, locality<2>, data
// CHECK: memref.prefetch %[[NEXTK]][%[[R0]], %c48], read, locality<2>, data
// CHECK-COUNT-8: memref.prefetch %[[NEXTK]]
// CHECK: %[[R3:.*]] = affine.apply #[[$ROW3]](%[[M]])
// CHECK-COUNT-3: memref.prefetch %[[NEXTK]][%[[R3]]
// CHECK-NEXT: memref.prefetch %[[NEXTK]][%[[R3]], %c48], read, locality<2>, data
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %[[M2:.*]] = %c0 to %c128 step %c4 {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c128 step %c64 {
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_write
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: %[[W0:.*]] = affine.apply #[[$VROW0]](%[[M2]])
// CHECK: memref.prefetch %[[NEXTV]][%[[W0]], %c0{{.*}}], read, locality<2>, data
// CHECK-COUNT-7: memref.prefetch %[[NEXTV]][%[[W0]]
// CHECK-NEXT: %[[W1:.*]] = affine.apply #[[$VROW1]](%[[M2]])
// CHECK-COUNT-7: memref.prefetch %[[NEXTV]][%[[W1]]
// CHECK-NEXT: memref.prefetch %[[NEXTV]][%[[W1]], %c112{{.*}}], read, locality<2>, data
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NOT: memref.prefetch
// CHECK-NOT: attn.key_tile_loop
// CHECK: return
func.func @key_tiles(%kt: memref<8x64x128x64xf32>, %v: memref<4096x128xf32>, %q: memref<128x128xf32>, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  scf.for %j = %c0 to %c4096 step %c64 {
    %t = arith.divui %j, %c64 : index
    %ktile = memref.subview %kt[%h, %t, 0, 0] [1, 1, 128, 64] [1, 1, 1, 1] : memref<8x64x128x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
    %vtile = memref.subview %v[%j, 0] [64, 128] [1, 1] : memref<4096x128xf32> to memref<64x128xf32, strided<[128, 1], offset: ?>>
    %qrows = memref.subview %q[0, 0] [128, 64] [1, 1] : memref<128x128xf32> to memref<128x64xf32, strided<[128, 1]>>
    %s = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
    scf.for %m = %c0 to %c128 step %c4 {
      %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%a = %zero) -> (vector<64xf32>) {
        %row = vector.transfer_read %ktile[%k, %c0], %pad {in_bounds = [true]} : memref<128x64xf32, strided<[64, 1], offset: ?>>, vector<64xf32>
        %x = vector.transfer_read %qrows[%m, %c0], %pad {in_bounds = [true]} : memref<128x64xf32, strided<[128, 1]>>, vector<64xf32>
        %f = vector.fma %x, %row, %a : vector<64xf32>
        scf.yield %f : vector<64xf32>
      }
      vector.transfer_write %acc, %s[%m, %c0] {in_bounds = [true]} : vector<64xf32>, memref<128x64xf32>
    }
    scf.for %m = %c0 to %c128 step %c4 {
      scf.for %n = %c0 to %c128 step %c64 {
        %acc = scf.for %k = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (vector<64xf32>) {
          %row = vector.transfer_read %vtile[%k, %n], %pad {in_bounds = [true]} : memref<64x128xf32, strided<[128, 1], offset: ?>>, vector<64xf32>
          %p = vector.transfer_read %s[%m, %c0], %pad {in_bounds = [true]} : memref<128x64xf32>, vector<64xf32>
          %f = vector.fma %p, %row, %a : vector<64xf32>
          scf.yield %f : vector<64xf32>
        }
        vector.transfer_write %acc, %q[%m, %n] {in_bounds = [true]} : vector<64xf32>, memref<128x128xf32>
      }
    }
    memref.dealloc %s : memref<128x64xf32>
  } {attn.key_tile_loop}
  return
}

// -----

// Few row blocks (ten of 6 rows: a 64-row query tile, the generic
// model's) would take 52 of the K^T tile's 512 lines each: the
// prefetches go one loop deeper, into the column loop (4 iterations, not
// a register block's own loop), 13 per iteration of the 40. 40 x 13 = 520
// lines: the last 8 wrap around to the tile's first rows (the row taken
// modulo 128).
// CHECK-DAG: #[[$FIRST:.*]] = affine_map<(d0, d1) -> (((d0 floordiv 6) * 13 + ((d1 floordiv 16) * 13) floordiv 4) mod 128)>
// CHECK-LABEL: func.func @deeper
// CHECK: scf.for %[[M:.*]] = %c0 to %c60 step %c6 {
// CHECK-NEXT: scf.for %[[N:.*]] = %c0 to %c64 step %c16 {
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_write
// CHECK-NEXT: %[[ROW:.*]] = affine.apply #[[$FIRST]](%[[M]], %[[N]])
// CHECK-COUNT-13: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}], read, locality<2>, data
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: {{^ *}}}{{$}}
func.func @deeper(%kt: memref<64x128x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %c60 = arith.constant 60 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.for %j = %c0 to %c4096 step %c64 {
    %t = arith.divui %j, %c64 : index
    %ktile = memref.subview %kt[%t, 0, 0] [1, 128, 64] [1, 1, 1] : memref<64x128x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
    scf.for %m = %c0 to %c60 step %c6 {
      scf.for %n = %c0 to %c64 step %c16 {
        %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%a = %zero) -> (vector<16xf32>) {
          %row = vector.transfer_read %ktile[%k, %n], %pad {in_bounds = [true]} : memref<128x64xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
          %f = arith.addf %row, %a : vector<16xf32>
          scf.yield %f : vector<16xf32>
        }
        vector.transfer_write %acc, %out[%m, %n] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
      }
    }
  } {attn.key_tile_loop}
  return
}

// -----

// No prefetch where spreading is impossible: a tile read by a loop with a
// bound known only at run time, and one whose only reader is a single
// register block (one iteration: all 512 lines at once); a dynamically
// sized tile (a ragged last tile) has no static line count. The markers
// are removed.
// CHECK-LABEL: func.func @not_spread
// CHECK-NOT: memref.prefetch
// CHECK-NOT: attn.key_tile_loop
// CHECK: return
func.func @not_spread(%kt: memref<64x128x64xf32>, %v: memref<?x64xf32>, %rows: index, %out: memref<128x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  scf.for %j = %c0 to %c4096 step %c64 {
    %t = arith.divui %j, %c64 : index
    %ktile = memref.subview %kt[%t, 0, 0] [1, 128, 64] [1, 1, 1] : memref<64x128x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
    scf.for %m = %c0 to %rows step %c1 {
      %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%a = %zero) -> (vector<64xf32>) {
        %row = vector.transfer_read %ktile[%k, %c0], %pad {in_bounds = [true]} : memref<128x64xf32, strided<[64, 1], offset: ?>>, vector<64xf32>
        %f = arith.addf %row, %a : vector<64xf32>
        scf.yield %f : vector<64xf32>
      }
      vector.transfer_write %acc, %out[%m, %c0] {in_bounds = [true]} : vector<64xf32>, memref<128x64xf32>
    }
  } {attn.key_tile_loop}
  scf.for %j = %c0 to %c4096 step %c64 {
    %t = arith.divui %j, %c64 : index
    %ktile = memref.subview %kt[%t, 0, 0] [1, 128, 64] [1, 1, 1] : memref<64x128x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
    %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%a = %zero) -> (vector<64xf32>) {
      %row = vector.transfer_read %ktile[%k, %c0], %pad {in_bounds = [true]} : memref<128x64xf32, strided<[64, 1], offset: ?>>, vector<64xf32>
      %f = arith.addf %row, %a : vector<64xf32>
      scf.yield %f : vector<64xf32>
    }
    vector.transfer_write %acc, %out[%c0, %c0] {in_bounds = [true]} : vector<64xf32>, memref<128x64xf32>
  } {attn.key_tile_loop}
  %n = memref.dim %v, %c0 : memref<?x64xf32>
  scf.for %j = %c0 to %n step %c64 {
    %len = affine.min affine_map<(d0)[s0] -> (64, s0 - d0)>(%j)[%n]
    %vtile = memref.subview %v[%j, 0] [%len, 64] [1, 1] : memref<?x64xf32> to memref<?x64xf32, strided<[64, 1], offset: ?>>
    scf.for %m = %c0 to %c128 step %c1 {
      %row = vector.transfer_read %vtile[%c0, %c0], %pad {in_bounds = [true]} : memref<?x64xf32, strided<[64, 1], offset: ?>>, vector<64xf32>
      vector.transfer_write %row, %out[%m, %c0] {in_bounds = [true]} : vector<64xf32>, memref<128x64xf32>
    }
  } {attn.key_tile_loop}
  return
}
