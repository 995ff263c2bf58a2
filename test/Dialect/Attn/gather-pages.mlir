// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// attn.gather_pages round-trips, static and dynamic; its verifier rules are
// in gather-pages-invalid.mlir.

// CHECK-LABEL: func.func @static
// CHECK: attn.gather_pages %{{.*}}[%{{.*}}] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
func.func @static(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x128x64xf32> {
  %k = attn.gather_pages %pages[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  return %k : tensor<4x2x128x64xf32>
}

// CHECK-LABEL: func.func @dynamic
// CHECK: attn.gather_pages %{{.*}}[%{{.*}}] : tensor<?x32x8x128xbf16>, tensor<?x?xi64> -> tensor<?x8x?x128xbf16>
func.func @dynamic(%pages: tensor<?x32x8x128xbf16>, %table: tensor<?x?xi64>) -> tensor<?x8x?x128xbf16> {
  %k = attn.gather_pages %pages[%table] : tensor<?x32x8x128xbf16>, tensor<?x?xi64> -> tensor<?x8x?x128xbf16>
  return %k : tensor<?x8x?x128xbf16>
}
