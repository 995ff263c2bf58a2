// RUN: attn-opt %s --attn-tile="q-tile=64 kv-tile=64" --split-input-file | FileCheck %s

// The varlen form: an attn.sdpa whose only reader is attn.unpad_sequences.
// Query rows outside a batch's sequence (bottom_right: before S - len)
// are read by no one, so a query tile made only of them visits no key
// tile: its key-tile bounds collapse to the first one. Non-causal, where
// the key band alone would visit every key for them.
// CHECK-LABEL: func.func @varlen
// CHECK-SAME: %[[CU:[a-z0-9]+]]: tensor<4xi32>, %{{.*}}: tensor<300x4x64xf32>)
// CHECK: scf.forall (%[[B:.*]], %{{.*}}, %[[TILE:.*]]) in (3, 4, 2)
// CHECK: %[[ROW0:.*]] = arith.muli %[[TILE]], %c64
// CHECK: tensor.extract %[[CU]][%[[B]]]
// CHECK: tensor.extract %[[CU]]
// CHECK: %[[LEN:.*]] = arith.minsi %{{.*}}, %c128
// CHECK: %[[LIVE:.*]] = arith.subi %c128, %[[LEN]]
// CHECK: %[[ROWEND:.*]] = arith.addi %[[ROW0]], %c64
// CHECK: %[[BEFORE:.*]] = arith.cmpi sle, %[[ROWEND]], %[[LIVE]]
// CHECK: %[[AFTER:.*]] = arith.cmpi sge, %[[ROW0]], %c128
// CHECK: %[[DEAD:.*]] = arith.ori %[[BEFORE]], %[[AFTER]]
// CHECK: arith.select %[[DEAD]], %c0,
// CHECK: arith.select %[[DEAD]], %c0,
// CHECK: arith.select %[[DEAD]], %c0,
// CHECK: scf.for
// CHECK: attn.unpad_sequences
func.func @varlen(%qp: tensor<3x4x128x64xf32>, %kp: tensor<3x4x128x64xf32>, %vp: tensor<3x4x128x64xf32>, %kl: tensor<3xi32>, %cu: tensor<4xi32>, %init: tensor<300x4x64xf32>) -> tensor<300x4x64xf32> {
  %e = tensor.empty() : tensor<3x4x128x64xf32>
  %o = attn.sdpa %qp, %kp, %vp kv_lens(%kl : tensor<3xi32>) outs(%e) : tensor<3x4x128x64xf32>, tensor<3x4x128x64xf32>, tensor<3x4x128x64xf32> -> tensor<3x4x128x64xf32>
  %r = attn.unpad_sequences %o[%cu] align = <bottom_right> outs(%init) : tensor<3x4x128x64xf32>, tensor<4xi32> -> tensor<300x4x64xf32>
  return %r : tensor<300x4x64xf32>
}

// -----

// The result is read elsewhere too: every row is live, nothing is skipped.
// CHECK-LABEL: func.func @also_returned
// CHECK-SAME: %[[CU:[a-z0-9]+]]: tensor<4xi32>, %{{.*}}: tensor<300x4x64xf32>)
// CHECK-NOT: tensor.extract %[[CU]]
// CHECK: attn.unpad_sequences
func.func @also_returned(%qp: tensor<3x4x128x64xf32>, %kp: tensor<3x4x128x64xf32>, %vp: tensor<3x4x128x64xf32>, %kl: tensor<3xi32>, %cu: tensor<4xi32>, %init: tensor<300x4x64xf32>) -> (tensor<300x4x64xf32>, tensor<3x4x128x64xf32>) {
  %e = tensor.empty() : tensor<3x4x128x64xf32>
  %o = attn.sdpa %qp, %kp, %vp kv_lens(%kl : tensor<3xi32>) outs(%e) : tensor<3x4x128x64xf32>, tensor<3x4x128x64xf32>, tensor<3x4x128x64xf32> -> tensor<3x4x128x64xf32>
  %r = attn.unpad_sequences %o[%cu] align = <bottom_right> outs(%init) : tensor<3x4x128x64xf32>, tensor<4xi32> -> tensor<300x4x64xf32>
  return %r, %o : tensor<300x4x64xf32>, tensor<3x4x128x64xf32>
}

// -----

// The destination made after the op (as attn_mlir.varlen_attention writes
// it), dynamic batch and rows: the dead-row test reads the offsets alone,
// not the destination's rows, which do not exist yet where it runs.
// CHECK-LABEL: func.func @init_after
// CHECK-SAME: %[[CU:[a-z0-9]+]]: tensor<?xi32>
// CHECK: scf.forall
// CHECK: tensor.extract %[[CU]]
// CHECK: %[[DEAD:.*]] = arith.ori
// CHECK: arith.select %[[DEAD]]
// CHECK: linalg.fill
// CHECK: attn.unpad_sequences
func.func @init_after(%qp: tensor<?x4x128x64xf32>, %kp: tensor<?x4x128x64xf32>, %vp: tensor<?x4x128x64xf32>, %kl: tensor<?xi32>, %cu: tensor<?xi32>, %rows: index) -> tensor<?x4x64xf32> {
  %c0 = arith.constant 0 : index
  %nb = tensor.dim %qp, %c0 : tensor<?x4x128x64xf32>
  %e = tensor.empty(%nb) : tensor<?x4x128x64xf32>
  %o = attn.sdpa %qp, %kp, %vp kv_lens(%kl : tensor<?xi32>) outs(%e) causal align = <bottom_right> : tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32> -> tensor<?x4x128x64xf32>
  %zero = arith.constant 0.0 : f32
  %ie = tensor.empty(%rows) : tensor<?x4x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ie : tensor<?x4x64xf32>) -> tensor<?x4x64xf32>
  %r = attn.unpad_sequences %o[%cu] align = <bottom_right> outs(%init) : tensor<?x4x128x64xf32>, tensor<?xi32> -> tensor<?x4x64xf32>
  return %r : tensor<?x4x64xf32>
}
