// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// attn.pad_sequences and attn.unpad_sequences round-trip, static and
// dynamic, in both alignments; their verifier rules are in
// pad-sequences-invalid.mlir.

// CHECK-LABEL: func.func @pad
// CHECK: attn.pad_sequences %{{.*}}[%{{.*}}] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf32>, tensor<3xi32>
func.func @pad(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> (tensor<3x8x128x64xf32>, tensor<3xi32>) {
  %p, %lens = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf32>, tensor<3xi32>
  return %p, %lens : tensor<3x8x128x64xf32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @pad_dynamic
// CHECK: attn.pad_sequences %{{.*}}[%{{.*}}] align = <bottom_right> : tensor<?x?x128xbf16>, tensor<?xi64> -> tensor<?x?x64x128xbf16>, tensor<?xi64>
func.func @pad_dynamic(%packed: tensor<?x?x128xbf16>, %cu: tensor<?xi64>) -> tensor<?x?x64x128xbf16> {
  %p, %lens = attn.pad_sequences %packed[%cu] align = <bottom_right> : tensor<?x?x128xbf16>, tensor<?xi64> -> tensor<?x?x64x128xbf16>, tensor<?xi64>
  return %p : tensor<?x?x64x128xbf16>
}

// CHECK-LABEL: func.func @unpad
// CHECK: attn.unpad_sequences %{{.*}}[%{{.*}}] align = <bottom_right> outs(%{{.*}}) : tensor<3x8x128x64xf32>, tensor<4xi32> -> tensor<300x8x64xf32>
func.func @unpad(%padded: tensor<3x8x128x64xf32>, %cu: tensor<4xi32>, %init: tensor<300x8x64xf32>) -> tensor<300x8x64xf32> {
  %o = attn.unpad_sequences %padded[%cu] align = <bottom_right> outs(%init) : tensor<3x8x128x64xf32>, tensor<4xi32> -> tensor<300x8x64xf32>
  return %o : tensor<300x8x64xf32>
}

// CHECK-LABEL: func.func @unpad_dynamic
// CHECK: attn.unpad_sequences %{{.*}}[%{{.*}}] outs(%{{.*}}) : tensor<?x4x?x32xf16>, tensor<?xi64> -> tensor<?x4x32xf16>
func.func @unpad_dynamic(%padded: tensor<?x4x?x32xf16>, %cu: tensor<?xi64>, %init: tensor<?x4x32xf16>) -> tensor<?x4x32xf16> {
  %o = attn.unpad_sequences %padded[%cu] outs(%init) : tensor<?x4x?x32xf16>, tensor<?xi64> -> tensor<?x4x32xf16>
  return %o : tensor<?x4x32xf16>
}
