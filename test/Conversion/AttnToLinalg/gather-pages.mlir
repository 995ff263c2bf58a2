// RUN: attn-opt %s --attn-lower-to-linalg | FileCheck %s

// attn.gather_pages becomes one linalg.generic over the result: element
// (b, h, j, d) reads pages[clamp(table[b, j / P]), j % P, h, d], the table
// entry clamped to [0, num_pages - 1].
// CHECK-LABEL: func.func @static
// CHECK-SAME: (%[[PAGES:.*]]: tensor<40x16x2x64xf32>, %[[T:.*]]: tensor<4x8xi32>)
// CHECK-DAG: %[[LAST:.*]] = arith.constant 39 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[P:.*]] = arith.constant 16 : index
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x128x64xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<4x2x128x64xf32>)
// CHECK: %[[B:.*]] = linalg.index 0
// CHECK: %[[H:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[D:.*]] = linalg.index 3
// CHECK: %[[SLOT:.*]] = arith.divui %[[J]], %[[P]]
// CHECK: %[[ENTRY:.*]] = tensor.extract %[[T]][%[[B]], %[[SLOT]]]
// CHECK: %[[I:.*]] = arith.index_cast %[[ENTRY]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[I]], %[[C0]]
// CHECK: %[[PAGE:.*]] = arith.minsi %[[LO]], %[[LAST]]
// CHECK: %[[OFF:.*]] = arith.remui %[[J]], %[[P]]
// CHECK: %[[X:.*]] = tensor.extract %[[PAGES]][%[[PAGE]], %[[OFF]], %[[H]], %[[D]]]
// CHECK: linalg.yield %[[X]]
func.func @static(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x128x64xf32> {
  %k = attn.gather_pages %pages[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  return %k : tensor<4x2x128x64xf32>
}

// Dynamic batch, pages and table width: the result's keys are the table's
// width times the page size.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[PAGES:.*]]: tensor<?x32x8x128xbf16>, %[[T:.*]]: tensor<?x?xi64>)
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[T]], %c0
// CHECK-DAG: %[[W:.*]] = tensor.dim %[[T]], %c1
// CHECK: %[[KEYS:.*]] = arith.muli %[[W]], %c32
// CHECK: tensor.empty(%[[B]], %[[KEYS]]) : tensor<?x8x?x128xbf16>
// CHECK: %[[N:.*]] = tensor.dim %[[PAGES]], %c0
// CHECK: arith.subi %[[N]], %c1
func.func @dynamic(%pages: tensor<?x32x8x128xbf16>, %table: tensor<?x?xi64>) -> tensor<?x8x?x128xbf16> {
  %k = attn.gather_pages %pages[%table] : tensor<?x32x8x128xbf16>, tensor<?x?xi64> -> tensor<?x8x?x128xbf16>
  return %k : tensor<?x8x?x128xbf16>
}

// attn.append_pages becomes loops over (sequence, new row) carrying the
// cache: row t of sequence b goes to position positions[b] + t, written
// (an insert_slice of its [H, D] row) only where the position is inside
// the table (128 = 8 pages of 16) and the page inside the cache (40).
// CHECK-LABEL: func.func @append
// CHECK-SAME: (%[[ROWS:[^:]*]]: tensor<4x2x1x64xf32>, %[[CACHE:[^:]*]]: tensor<40x16x2x64xf32>, %[[T:[^:]*]]: tensor<4x8xi32>, %[[POS:[^:]*]]: tensor<4xi32>)
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C40:.*]] = arith.constant 40 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[R:.*]] = scf.for %[[B:.*]] = %{{.*}} iter_args(%[[C0:.*]] = %[[CACHE]])
// CHECK: %[[START:.*]] = tensor.extract %[[POS]][%[[B]]]
// CHECK: %[[S:.*]] = arith.index_cast %[[START]]
// CHECK: scf.for %[[TT:.*]] = %{{.*}} iter_args(%[[C1:.*]] = %[[C0]])
// CHECK: %[[P:.*]] = arith.addi %[[S]], %[[TT]]
// CHECK: arith.cmpi slt, %[[P]], %[[C128]]
// CHECK: %[[SAFE:.*]] = arith.select
// CHECK: %[[SLOT:.*]] = arith.divui %[[SAFE]], %[[C16]]
// CHECK: %[[OFF:.*]] = arith.remui %[[SAFE]], %[[C16]]
// CHECK: %[[E:.*]] = tensor.extract %[[T]][%[[B]], %[[SLOT]]]
// CHECK: %[[PAGE:.*]] = arith.index_cast %[[E]]
// CHECK: arith.cmpi slt, %[[PAGE]], %[[C40]]
// CHECK: scf.if
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[ROWS]][%[[B]], 0, %[[TT]], 0] [1, 2, 1, 64] [1, 1, 1, 1] : tensor<4x2x1x64xf32> to tensor<2x64xf32>
// CHECK: tensor.insert_slice %[[ROW]] into %[[C1]][%[[PAGE]], %[[OFF]], 0, 0] [1, 1, 2, 64] [1, 1, 1, 1]
// CHECK: } else {
// CHECK: scf.yield %[[C1]]
// CHECK: return %[[R]]
func.func @append(%rows: tensor<4x2x1x64xf32>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x2x64xf32> {
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x1x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}

// hnd: the head before the slot, in the gather and in the append's writes.
// CHECK-LABEL: func.func @hnd
// CHECK: linalg.generic
// CHECK: %[[H:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[D:.*]] = linalg.index 3
// CHECK: %[[PAGE:.*]] = arith.minsi
// CHECK: %[[OFF:.*]] = arith.remui %[[J]], %c16
// CHECK: tensor.extract %{{.*}}[%[[PAGE]], %[[H]], %[[OFF]], %[[D]]] : tensor<40x2x16x64xf32>
// CHECK: scf.if
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, %{{.*}}, 0] [1, 2, 1, 64] [1, 1, 1, 1] : tensor<2x64xf32> into tensor<40x2x16x64xf32>
func.func @hnd(%pages: tensor<40x2x16x64xf32>, %table: tensor<4x8xi32>, %rows: tensor<4x2x1x64xf32>, %pos: tensor<4xi32>) -> (tensor<4x2x128x64xf32>, tensor<40x2x16x64xf32>) {
  %k = attn.gather_pages %pages[%table] layout = <hnd> : tensor<40x2x16x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  %c = attn.append_pages %rows into %pages[%table] at %pos layout = <hnd> : tensor<4x2x1x64xf32>, tensor<40x2x16x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x2x16x64xf32>
  return %k, %c : tensor<4x2x128x64xf32>, tensor<40x2x16x64xf32>
}
