// RUN: attn-opt %s --attn-check-abi --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-check-abi --split-input-file --canonicalize | FileCheck %s --check-prefix=CANON

// A public function with buffers takes them fully dynamic, returns a
// status (0: ran, 1: refused its buffers), reads their sizes and strides,
// compares the static size (4), the dense strides of the sizes given, the
// offset (0) and the data pointer, and runs its old body only when all
// match, on the buffers viewed as their compiled types; otherwise it records the first
// mismatch. Non-buffer arguments pass through.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[N:.*]]: index, %[[OUT:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>) -> i32
// CHECK: %{{.*}}, %[[OFFSET:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK: arith.cmpi ne, %[[SIZES]]#0, %c4
// CHECK: arith.cmpi slt, %[[SIZES]]#1
// CHECK: arith.cmpi ne, %[[STRIDES]]#0, %{{.*}}
// CHECK: arith.cmpi ne, %[[STRIDES]]#1, %{{.*}}
// CHECK: arith.cmpi ne, %[[OFFSET]], %{{.*}}
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[CA:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [4, %[[SIZES]]#1], strides: [%{{.*}}, 1] : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<4x?xf32>
// CHECK: memref.extract_strided_metadata %[[OUT]]
// CHECK: %[[CO:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [4, %{{.*}}], strides: [%{{.*}}, 1] : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<4x?xf32>
// CHECK: scf.if %[[FAILED:.*]] {
// CHECK-NEXT: llvm.call @__attn_abi_mismatch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64) -> ()
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.copy %[[CA]], %[[CO]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[STATUS:.*]] = arith.extui %[[FAILED]] : i1 to i32
// CHECK-NEXT: return %[[STATUS]] : i32
// Private functions and functions with results are left as they are.
// CHECK: func.func private @helper(%{{.*}}: memref<4xf32>)
// CHECK: func.func @with_result(%{{.*}}: memref<4xf32>) -> index
// The record and the query the library exports.
// CHECK: llvm.mlir.global internal @__attn_abi_info
// CHECK: llvm.func internal @__attn_abi_mismatch
// CHECK: llvm.func @attn_abi_error(%{{.*}}: !llvm.ptr) -> i32
// CANON-LABEL: func.func @entry
// CANON: memref.reinterpret_cast
// CANON: scf.if
func.func @entry(%a: memref<4x?xf32>, %n: index, %out: memref<4x?xf32>) {
  memref.copy %a, %out : memref<4x?xf32> to memref<4x?xf32>
  return
}
func.func private @helper(%a: memref<4xf32>) {
  return
}
func.func @with_result(%a: memref<4xf32>) -> index {
  %c = arith.constant 4 : index
  return %c : index
}

// -----

// A strided layout: the strides and offset it fixes are compared (the
// stride 2, the offset 0), those it leaves dynamic are the caller's: the
// row stride and offset of a view (AbiParam::rowStrided) are read, not
// compared, and the view is reinterpreted with them; its last stride must
// be 1.
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[S:.*]]: memref<?xf32, strided<[?], offset: ?>>) -> i32
// CHECK: %{{.*}}, %[[SOFF:.*]], %[[SSIZE:.*]], %[[SSTRIDE:.*]] = memref.extract_strided_metadata %[[S]]
// CHECK: arith.cmpi ne, %[[SSTRIDE]], %c2
// CHECK: arith.cmpi ne, %[[SOFF]], %c0
// CHECK: memref.reinterpret_cast %[[S]] to offset: [0], sizes: [4], strides: [2]
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[V:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %{{.*}}: memref<?x?xf32, strided<[?, ?], offset: ?>>) -> i32
// CHECK: %{{.*}}, %[[VOFF:.*]], %[[VSIZES:.*]]:2, %[[VSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[V]]
// CHECK-NOT: arith.cmpi ne, %[[VSTRIDES]]#0
// CHECK-NOT: arith.cmpi ne, %[[VOFF]]
// CHECK: arith.cmpi ne, %[[VSTRIDES]]#1, %c1
// CHECK-NOT: arith.cmpi ne, %[[VSTRIDES]]#0
// CHECK-NOT: arith.cmpi ne, %[[VOFF]]
// CHECK: memref.reinterpret_cast %[[V]] to offset: [%[[VOFF]]], sizes: [4, %[[VSIZES]]#1], strides: [%[[VSTRIDES]]#0, 1]
// CHECK-SAME: to memref<4x?xf32, strided<[?, 1], offset: ?>>
func.func @strided(%a: memref<4xf32, strided<[2]>>) {
  return
}
func.func @views(%a: memref<4x?xf32, strided<[?, 1], offset: ?>>, %out: memref<4x?xf32>) {
  memref.copy %a, %out : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32>
  return
}

// -----

// Nothing to check: nothing added.
// CHECK-LABEL: func.func @scalars
// CHECK-NOT: attn_abi
func.func @scalars(%x: f32) {
  return
}

// -----

// Recorded relations (the value's keys equal to the key's, a size equal to
// the constant 4, the query heads a multiple of the key's) are compared
// after each buffer's own checks, with the other side's size as the
// expected one and kind 4; a multiple is of a positive size (no division
// by zero). The attribute goes.
// CHECK-LABEL: func.func @relations
// CHECK-NOT: attn.abi_size_relations
// CHECK: %{{.*}}, %{{.*}}, %[[K:.*]]:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %{{.*}}, %{{.*}}, %[[V:.*]]:2, %{{.*}}:2 = memref.extract_strided_metadata %arg1
// CHECK: %{{.*}}, %{{.*}}, %[[Q:.*]]:2, %{{.*}}:2 = memref.extract_strided_metadata %arg2
// CHECK: %[[DIFFERS:.*]] = arith.cmpi ne, %[[V]]#0, %[[K]]#0 : index
// CHECK: %[[EXPECTED:.*]] = arith.index_cast %[[K]]#0 : index to i64
// CHECK: %[[ACTUAL:.*]] = arith.index_cast %[[V]]#0 : index to i64
// CHECK: arith.select %{{.*}}, %c4_i64, %{{.*}} : i64
// CHECK: arith.select %{{.*}}, %[[EXPECTED]], %{{.*}} : i64
// CHECK: arith.select %{{.*}}, %[[ACTUAL]], %{{.*}} : i64
// CHECK: arith.cmpi ne, %[[V]]#1, %c4 : index
// CHECK: %[[DIVISOR:.*]] = arith.maxsi %[[K]]#0, %c1
// CHECK: %[[REM:.*]] = arith.remsi %[[Q]]#0, %[[DIVISOR]]
// CHECK: %[[NONPOSITIVE:.*]] = arith.cmpi sle, %[[K]]#0, %c0
// CHECK: %[[INEXACT:.*]] = arith.cmpi ne, %[[REM]], %c0
// CHECK: arith.ori %[[NONPOSITIVE]], %[[INEXACT]]
// CHECK: scf.if
func.func @relations(%k: memref<?x8xf32>, %v: memref<?x?xf32>, %q: memref<?x8xf32>)
    attributes {attn.abi_size_relations = array<i64: 1, 0, 0, 0, 0, 1, 1, -1, 4, 0, 2, 0, 0, 0, 1>} {
  return
}

// -----

// Value check kind 0: every element of the lengths (input #1) within [0,
// the keys' size (input #0 dimension 1)], read by a loop only once every
// other check
// passed (its trip count 0 otherwise); the first element outside is
// recorded as (argument, element index, 5, bound, element).
// CHECK-LABEL: func.func @lengths
// CHECK-SAME: (%[[K:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[L:.*]]: memref<?xi32, strided<[?], offset: ?>>) -> i32
// CHECK: %[[COUNT:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[I:.*]] = %{{.*}} to %[[COUNT]] step %{{.*}} iter_args(
// CHECK: %[[E:.*]] = memref.load %[[L]][%[[I]]]
// CHECK: arith.extsi %[[E]] : i32 to i64
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sgt
// CHECK: scf.yield
// CHECK: %[[FIVE:.*]] = arith.constant 5 : i64
// CHECK: arith.select %{{.*}}, %[[FIVE]]
// CHECK: scf.if
func.func @lengths(%k: memref<4x?xf32>, %lens: memref<?xi32>)
    attributes {attn.abi_value_checks = [array<i64: 0, 1, 0, 1>]} {
  return
}

// -----

// Block table entries that name pages of keys (value check kind 1: table
// 0, lengths 1; the pages' dimensions 0 and 1: how many, keys per page):
// for each row r of at most the lengths' count, its first
// ceil(max(lengths[r], 0) / P) entries, at most the row's width; the first
// outside [0, pages) is recorded as (argument, r * width + j, 6, pages,
// entry).
// CHECK-LABEL: func.func @pages
// CHECK-SAME: (%[[T:.*]]: memref<?x?xi64, strided<[?, ?], offset: ?>>, %[[L:.*]]: memref<?xi32, strided<[?], offset: ?>>, %[[P:.*]]: memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>) -> i32
// CHECK: %{{.*}}, %{{.*}}, %[[T_SIZES:.*]]:2, %{{.*}}:2 = memref.extract_strided_metadata %[[T]]
// CHECK: %{{.*}}, %{{.*}}, %[[L_SIZE:.*]], %{{.*}} = memref.extract_strided_metadata %[[L]]
// CHECK: %{{.*}}, %{{.*}}, %[[P_SIZES:.*]]:4, %{{.*}}:4 = memref.extract_strided_metadata %[[P]]
// CHECK-DAG: %[[ROWS:.*]] = arith.minsi %[[T_SIZES]]#0, %[[L_SIZE]] : index
// CHECK-DAG: %[[SIZE:.*]] = arith.maxsi %[[P_SIZES]]#1, %{{.*}} : index
// CHECK: %[[UPPER:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ROWS]] : index
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %[[UPPER]] step %{{.*}} iter_args(
// CHECK:   memref.load %[[L]][%[[R]]]
// CHECK:   arith.ceildivsi %{{.*}}, %[[SIZE]] : index
// CHECK:   %[[USED:.*]] = arith.minsi %{{.*}}, %[[T_SIZES]]#1 : index
// CHECK:   %[[END:.*]] = arith.select %{{.*}}, %{{.*}}, %[[USED]] : index
// CHECK:   scf.for %[[J:.*]] = %{{.*}} to %[[END]] step %{{.*}} iter_args(
// CHECK:     %[[E:.*]] = memref.load %[[T]][%[[R]], %[[J]]]
// CHECK:     arith.cmpi slt, %[[E]]
// CHECK:     arith.cmpi sgt, %[[E]]
// CHECK: %[[SIX:.*]] = arith.constant 6 : i64
// CHECK: arith.select %{{.*}}, %[[SIX]]
// CHECK: scf.if
func.func @pages(%table: memref<?x?xi64>, %lens: memref<?xi32>,
                 %pages: memref<?x?x?x?xf32>)
    attributes {attn.abi_value_checks = [array<i64: 1, 0, 1, 2, 0, 2, 1>]} {
  return
}

// -----

// Rows appended into pages (value check kind 2: table 0, positions 1; the
// cache's pages (2, 0), its keys per page (2, 1), the new rows: a constant
// 3): each position in [0, width * P - 3] (mismatch kind 7), the entries of
// the pages written, [pos / P, ceil((pos + 3) / P)) (none for no new rows),
// in [0, pages) (kind
// 6), then each written page's writer in a scratch array over the pages:
// first set to -1 where written, then to the sequence, a page already
// another sequence's recorded as (table, sequence, 8, the other, page).
// CHECK-LABEL: func.func @append
// CHECK-SAME: (%[[T:.*]]: memref<?x?xi32, strided<[?, ?], offset: ?>>, %[[POS:.*]]: memref<?xi64, strided<[?], offset: ?>>, %[[P:.*]]: memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>) -> i32
// CHECK: scf.for
// CHECK:   memref.load %[[POS]]
// CHECK: %[[SEVEN:.*]] = arith.constant 7 : i64
// CHECK: arith.select %{{.*}}, %[[SEVEN]]
// CHECK: scf.for
// CHECK:   memref.load %[[POS]]
// CHECK:   arith.divsi
// CHECK:   arith.ceildivsi
// CHECK:   scf.for
// CHECK:     memref.load %[[T]]
// CHECK: %[[SIX:.*]] = arith.constant 6 : i64
// CHECK: arith.select %{{.*}}, %[[SIX]]
// CHECK: %[[OWNERS:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %[[OWNERS]]
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     %[[OWNER:.*]] = memref.load %[[OWNERS]]
// CHECK:     arith.cmpi ne, %[[OWNER]]
// CHECK:     memref.store %{{.*}}, %[[OWNERS]]
// CHECK: memref.dealloc %[[OWNERS]]
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : i64
// CHECK: arith.select %{{.*}}, %[[EIGHT]]
// CHECK: scf.if
func.func @append(%table: memref<?x?xi32>, %pos: memref<?xi64>,
                  %pages: memref<?x?x?x?xf32>)
    attributes {attn.abi_value_checks = [array<i64: 2, 0, 1, 2, 0, 2, 1, -1, 3>]} {
  return
}
