// RUN: attn-opt %s --attn-lower-to-linalg | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-linalg=row-copies=1 | FileCheck %s --check-prefix=ROWS

// attn.pad_sequences becomes two linalg.generic ops: the lengths (offsets
// clamped to the packed rows, lengths to S), and the padded tensor, whose
// element (b, h, s, d) reads packed row start + (s - off) under an scf.if
// (no read out of bounds) and is 0 elsewhere.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<300x8x64xf32>, %[[CU:.*]]: tensor<4xi32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[T:.*]] = arith.constant 300 : index
// CHECK-DAG: %[[S:.*]] = arith.constant 128 : index
// CHECK: %[[LENS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xi32>)
// CHECK: %[[FIRST:.*]] = tensor.extract %[[CU]][%[[B:.*]]] : tensor<4xi32>
// CHECK: tensor.extract %[[CU]]
// CHECK: %[[LO:.*]] = arith.maxsi %{{.*}}, %[[C0]]
// CHECK: %[[START:.*]] = arith.minsi %[[LO]], %[[T]]
// CHECK: %[[ENDLO:.*]] = arith.maxsi %{{.*}}, %[[START]]
// CHECK: %[[END:.*]] = arith.minsi %[[ENDLO]], %[[T]]
// CHECK: %[[N:.*]] = arith.subi %[[END]], %[[START]]
// CHECK: %[[LEN:.*]] = arith.minsi %[[N]], %[[S]]
// CHECK: %[[L32:.*]] = arith.index_cast %[[LEN]] : index to i32
// CHECK: linalg.yield %[[L32]]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<3x8x128x64xf32>)
// CHECK: %[[H:.*]] = linalg.index 1
// CHECK: %[[POS:.*]] = linalg.index 2
// CHECK: %[[D:.*]] = linalg.index 3
// CHECK: %[[START2:.*]] = arith.minsi %{{.*}}, %[[T]]
// CHECK: %[[LEN2:.*]] = arith.minsi %{{.*}}, %[[S]]
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[POS]], %[[C0]]
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[POS]], %[[LEN2]]
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK: %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:   %[[ROW:.*]] = arith.addi %[[START2]], %[[POS]]
// CHECK:   %[[E:.*]] = tensor.extract %[[X]][%[[ROW]], %[[H]], %[[D]]]
// CHECK:   scf.yield %[[E]]
// CHECK: } else {
// CHECK:   scf.yield %[[ZERO]]
// CHECK: linalg.yield %[[V]]
// CHECK: return %[[P]], %[[LENS]]
// With row-copies (the tiled CPU pipeline): an scf.forall over the
// sequences, each writing its own [1, H, S, D] block in place (a slice of
// the forall's output, inserted once): its [len, H, D] rows transposed into
// [off, off + len) and zeros after them (top_left: none before).
// ROWS-LABEL: func.func @pad
// ROWS-SAME: (%[[X:.*]]: tensor<300x8x64xf32>, %[[CU:.*]]: tensor<4xi32>)
// ROWS: %[[LENS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xi32>)
// ROWS: %[[E:.*]] = tensor.empty() : tensor<3x8x128x64xf32>
// ROWS-NOT: linalg.fill
// ROWS: %[[P:.*]] = scf.forall (%[[B:.*]]) in (%c3) shared_outs(%[[OUT:.*]] = %[[E]])
// ROWS: %[[START:.*]] = arith.minsi %{{.*}}, %c300
// ROWS: %[[LEN:.*]] = arith.minsi %{{.*}}, %c128
// ROWS: %[[AFTER:.*]] = arith.subi %c128, %[[LEN]]
// ROWS: %[[ROWS:.*]] = tensor.extract_slice %[[X]][%[[START]], 0, 0] [%[[LEN]], 8, 64] [1, 1, 1] : tensor<300x8x64xf32> to tensor<?x8x64xf32>
// ROWS: %[[BLOCK:.*]] = tensor.extract_slice %[[OUT]][%[[B]], 0, 0, 0] [1, 8, 128, 64] [1, 1, 1, 1] : tensor<3x8x128x64xf32> to tensor<8x128x64xf32>
// ROWS: %[[DST:.*]] = tensor.extract_slice %[[BLOCK]][0, %c0, 0] [8, %[[LEN]], 64]
// ROWS: %[[T:.*]] = linalg.transpose ins(%[[ROWS]] : tensor<?x8x64xf32>) outs(%[[DST]] : tensor<8x?x64xf32>) permutation = [1, 0, 2]
// ROWS: %[[B1:.*]] = tensor.insert_slice %[[T]] into %[[BLOCK]][0, %c0, 0] [8, %[[LEN]], 64]
// ROWS: %[[Z:.*]] = tensor.extract_slice %[[B1]][0, %[[LEN]], 0] [8, %[[AFTER]], 64]
// ROWS: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] : tensor<8x?x64xf32>)
// ROWS: %[[B2:.*]] = tensor.insert_slice %[[F]] into %[[B1]][0, %[[LEN]], 0] [8, %[[AFTER]], 64]
// ROWS: scf.forall.in_parallel
// ROWS-NEXT: tensor.parallel_insert_slice %[[B2]] into %[[OUT]][%[[B]], 0, 0, 0] [1, 8, 128, 64]
// ROWS: return %[[P]], %[[LENS]]
func.func @pad(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> (tensor<3x8x128x64xf32>, tensor<3xi32>) {
  %p, %lens = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf32>, tensor<3xi32>
  return %p, %lens : tensor<3x8x128x64xf32>, tensor<3xi32>
}

// bottom_right: a sequence starts at S - len; dynamic sizes come from the
// packed tensor and the offsets (B = entries - 1).
// CHECK-LABEL: func.func @pad_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x128xbf16>, %[[CU:.*]]: tensor<?xi64>)
// CHECK-DAG: %[[S:.*]] = arith.constant 64 : index
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[ENTRIES:.*]] = tensor.dim %[[CU]], %c0
// CHECK: %[[B:.*]] = arith.subi %[[ENTRIES]], %c1
// CHECK: %[[HEADS:.*]] = tensor.dim %[[X]], %c1
// CHECK: tensor.empty(%[[B]], %[[HEADS]]) : tensor<?x?x64x128xbf16>
// CHECK: %[[POS:.*]] = linalg.index 2
// CHECK: %[[LEN:.*]] = arith.minsi %{{.*}}, %[[S]]
// CHECK: %[[OFF:.*]] = arith.subi %[[S]], %[[LEN]]
// CHECK: %[[R:.*]] = arith.subi %[[POS]], %[[OFF]]
// CHECK: arith.cmpi sge, %[[R]]
// CHECK: arith.cmpi slt, %[[R]], %[[LEN]]
func.func @pad_dynamic(%packed: tensor<?x?x128xbf16>, %cu: tensor<?xi64>) -> tensor<?x?x64x128xbf16> {
  %p, %lens = attn.pad_sequences %packed[%cu] align = <bottom_right> : tensor<?x?x128xbf16>, tensor<?xi64> -> tensor<?x?x64x128xbf16>, tensor<?xi64>
  return %p : tensor<?x?x64x128xbf16>
}

// attn.unpad_sequences: the sequence of each packed row (a scan over the
// sequences, -1 where none covers it), then the packed tensor: a covered
// row reads its sequence's padded position, any other keeps init's value.
// CHECK-LABEL: func.func @unpad
// CHECK-SAME: (%[[P:.*]]: tensor<3x8x128x64xf32>, %[[CU:.*]]: tensor<4xi32>, %[[INIT:.*]]: tensor<300x8x64xf32>)
// CHECK-DAG: %[[NONE:.*]] = arith.constant -1 : index
// CHECK-DAG: %[[NB:.*]] = arith.constant 3 : index
// CHECK: %[[IDS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<300xi64>)
// CHECK: %[[ROW:.*]] = linalg.index 0
// CHECK: %[[SEQ:.*]] = scf.for %[[I:.*]] = %c0 to %[[NB]] step %c1 iter_args(%[[FOUND:.*]] = %[[NONE]]) -> (index)
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %c300
// CHECK: %[[LEN:.*]] = arith.minsi %{{.*}}, %c128
// CHECK: %[[END:.*]] = arith.addi %[[START]], %[[LEN]]
// CHECK: arith.cmpi sge, %[[ROW]], %[[START]]
// CHECK: arith.cmpi slt, %[[ROW]], %[[END]]
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[NEXT:.*]] = arith.select %[[IN]], %[[I]], %[[FOUND]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: arith.index_cast %[[SEQ]] : index to i64
// CHECK: linalg.generic {{.*}} ins(%[[IDS]] : tensor<300xi64>) outs(%[[INIT]] : tensor<300x8x64xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i64, %[[OLD:.*]]: f32):
// CHECK: %[[B:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[COVERED:.*]] = arith.cmpi sge, %[[B]], %c0
// CHECK: scf.if %[[COVERED]] -> (f32) {
// CHECK: %[[LEN2:.*]] = arith.minsi %{{.*}}, %c128
// CHECK: %[[OFF:.*]] = arith.subi %c128, %[[LEN2]]
// CHECK: tensor.extract %[[P]][%[[B]], %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: } else {
// CHECK: scf.yield %[[OLD]]
// ROWS-LABEL: func.func @unpad
// ROWS-SAME: (%[[P:.*]]: tensor<3x8x128x64xf32>, %[[CU:.*]]: tensor<4xi32>, %[[INIT:.*]]: tensor<300x8x64xf32>)
// ROWS: scf.forall (%[[B:.*]]) in (%c3) shared_outs(%[[OUT:.*]] = %[[INIT]])
// ROWS: %[[START:.*]] = arith.minsi %{{.*}}, %c300
// ROWS: %[[LEN:.*]] = arith.minsi %{{.*}}, %c128
// ROWS: %[[OFF:.*]] = arith.subi %c128, %[[LEN]]
// ROWS: %[[ROWS:.*]] = tensor.extract_slice %[[P]][%[[B]], 0, %[[OFF]], 0] [1, 8, %[[LEN]], 64] [1, 1, 1, 1] : tensor<3x8x128x64xf32> to tensor<8x?x64xf32>
// ROWS: %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[START]], 0, 0] [%[[LEN]], 8, 64]
// ROWS: %[[T:.*]] = linalg.transpose ins(%[[ROWS]] : tensor<8x?x64xf32>) outs(%[[DST]] : tensor<?x8x64xf32>) permutation = [1, 0, 2]
// ROWS: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[START]], 0, 0] [%[[LEN]], 8, 64]
func.func @unpad(%padded: tensor<3x8x128x64xf32>, %cu: tensor<4xi32>, %init: tensor<300x8x64xf32>) -> tensor<300x8x64xf32> {
  %o = attn.unpad_sequences %padded[%cu] align = <bottom_right> outs(%init) : tensor<3x8x128x64xf32>, tensor<4xi32> -> tensor<300x8x64xf32>
  return %o : tensor<300x8x64xf32>
}
