// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// attn.gather_pages and attn.append_pages round-trip, static and dynamic;
// their verifier rules are in gather-pages-invalid.mlir.

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

// attn.append_pages round-trips, static and dynamic.
// CHECK-LABEL: func.func @append
// CHECK: attn.append_pages %{{.*}} into %{{.*}}[%{{.*}}] at %{{.*}} : tensor<4x2x1x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
func.func @append(%rows: tensor<4x2x1x64xf32>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x2x64xf32> {
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x1x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}

// CHECK-LABEL: func.func @append_dynamic
// CHECK: attn.append_pages %{{.*}} into %{{.*}}[%{{.*}}] at %{{.*}} : tensor<?x8x?x128xbf16>, tensor<?x32x8x128xbf16>, tensor<?x?xi64>, tensor<?xi64> -> tensor<?x32x8x128xbf16>
func.func @append_dynamic(%rows: tensor<?x8x?x128xbf16>, %cache: tensor<?x32x8x128xbf16>, %table: tensor<?x?xi64>, %pos: tensor<?xi64>) -> tensor<?x32x8x128xbf16> {
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<?x8x?x128xbf16>, tensor<?x32x8x128xbf16>, tensor<?x?xi64>, tensor<?xi64> -> tensor<?x32x8x128xbf16>
  return %c : tensor<?x32x8x128xbf16>
}

// The hnd layout ([num_pages, heads, page_size, head_dim]) is printed; nhd,
// the default, is not.
// CHECK-LABEL: func.func @hnd
// CHECK: attn.gather_pages %{{.*}}[%{{.*}}] layout = <hnd> : tensor<40x2x16x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
// CHECK: attn.append_pages %{{.*}} into %{{.*}}[%{{.*}}] at %{{.*}} layout = <hnd> : tensor<4x2x1x64xf32>, tensor<40x2x16x64xf32>
// CHECK: attn.gather_pages %{{.*}}[%{{.*}}] : tensor<40x16x2x64xf32>
func.func @hnd(%pages: tensor<40x2x16x64xf32>, %nhd: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %rows: tensor<4x2x1x64xf32>, %pos: tensor<4xi32>) -> (tensor<4x2x128x64xf32>, tensor<40x2x16x64xf32>, tensor<4x2x128x64xf32>) {
  %k = attn.gather_pages %pages[%table] layout = <hnd> : tensor<40x2x16x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  %c = attn.append_pages %rows into %pages[%table] at %pos layout = <hnd> : tensor<4x2x1x64xf32>, tensor<40x2x16x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x2x16x64xf32>
  %n = attn.gather_pages %nhd[%table] layout = <nhd> : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  return %k, %c, %n : tensor<4x2x128x64xf32>, tensor<40x2x16x64xf32>, tensor<4x2x128x64xf32>
}
