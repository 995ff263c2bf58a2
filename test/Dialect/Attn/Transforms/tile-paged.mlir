// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64" --split-input-file | FileCheck %s

// Decode over 16-key pages with 64-key tiles: each step assembles its K and
// V tiles from the four pages that make them up, each read from the page
// table (clamped to the cache's pages) and sliced straight out of the
// cache; the gathered tensors are never built.
// CHECK-LABEL: func.func @decode_whole_pages
// CHECK-SAME: (%{{.*}}: tensor<4x8x1x64xf32>, %[[KC:[^:]*]]: tensor<40x16x2x64xf32>, %[[VC:[^:]*]]: tensor<40x16x2x64xf32>, %[[T:[^:]*]]: tensor<4x8xi32>
// CHECK-NOT: attn.gather_pages
// CHECK: scf.for
// CHECK: %[[E:.*]] = tensor.extract %[[T]][%{{.*}}, %{{.*}}] : tensor<4x8xi32>
// CHECK: %[[P:.*]] = arith.index_cast %[[E]]
// CHECK: %[[LO:.*]] = arith.maxsi %[[P]], %{{.*}}
// CHECK: %[[PAGE:.*]] = arith.minsi %[[LO]], %{{.*}}
// CHECK: %[[S:.*]] = tensor.extract_slice %[[KC]][%[[PAGE]], 0, %{{.*}}, 0] [1, 16, 1, 64] [1, 1, 1, 1] : tensor<40x16x2x64xf32> to tensor<16x64xf32>
// CHECK: tensor.insert_slice %[[S]] into %{{.*}}[0, 0] [16, 64] [1, 1] : tensor<16x64xf32> into tensor<64x64xf32>
// CHECK-COUNT-3: tensor.insert_slice %{{.*}} into %{{.*}} [16, 64] [1, 1] : tensor<16x64xf32> into tensor<64x64xf32>
// CHECK: tensor.extract_slice %[[VC]]
// CHECK-NOT: attn.gather_pages
func.func @decode_whole_pages(%q: tensor<4x8x1x64xf32>, %kc: tensor<40x16x2x64xf32>,
                              %vc: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>,
                              %lens: tensor<4xi32>) -> tensor<4x8x1x64xf32> {
  %k = attn.gather_pages %kc[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  %v = attn.gather_pages %vc[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  %e = tensor.empty() : tensor<4x8x1x64xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<4xi32>) outs(%e)
     : tensor<4x8x1x64xf32>, tensor<4x2x128x64xf32>, tensor<4x2x128x64xf32> -> tensor<4x8x1x64xf32>
  return %o : tensor<4x8x1x64xf32>
}

// -----

// 128-key pages hold two 64-key tiles each: a tile is one slice of its
// page, at the tile's offset within it.
// CHECK-LABEL: func.func @decode_within_page
// CHECK-SAME: %[[KC:[^:]*]]: tensor<9x128x1x32xf32>
// CHECK-NOT: attn.gather_pages
// CHECK: %[[OFF:.*]] = arith.remui %{{.*}}, %c128
// CHECK: tensor.extract_slice %[[KC]][%{{.*}}, %[[OFF]], %{{.*}}, 0] [1, 64, 1, 32] [1, 1, 1, 1] : tensor<9x128x1x32xf32> to tensor<64x32xf32>
// CHECK-NOT: tensor.insert_slice {{.*}} into {{.*}}tensor<64x32xf32>
func.func @decode_within_page(%q: tensor<2x4x1x32xf32>, %kc: tensor<9x128x1x32xf32>,
                              %vc: tensor<9x128x1x32xf32>, %table: tensor<2x4xi64>,
                              %lens: tensor<2xi64>) -> tensor<2x4x1x32xf32> {
  %k = attn.gather_pages %kc[%table] : tensor<9x128x1x32xf32>, tensor<2x4xi64> -> tensor<2x1x512x32xf32>
  %v = attn.gather_pages %vc[%table] : tensor<9x128x1x32xf32>, tensor<2x4xi64> -> tensor<2x1x512x32xf32>
  %e = tensor.empty() : tensor<2x4x1x32xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi64>) outs(%e)
     : tensor<2x4x1x32xf32>, tensor<2x1x512x32xf32>, tensor<2x1x512x32xf32> -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}

// -----

// Prefill (several query tiles per head): K is packed once for all of
// them, from the gathered tensor (attn-lower-to-linalg writes it); V's
// tiles still come from the pages.
// CHECK-LABEL: func.func @prefill
// CHECK: %[[K:.*]] = attn.gather_pages
// CHECK-NOT: attn.gather_pages
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x2x64x32xf32>)
func.func @prefill(%q: tensor<1x1x100x32xf32>, %kc: tensor<5x64x1x32xf32>,
                   %vc: tensor<5x64x1x32xf32>, %table: tensor<1x2xi32>,
                   %lens: tensor<1xi32>) -> tensor<1x1x100x32xf32> {
  %k = attn.gather_pages %kc[%table] : tensor<5x64x1x32xf32>, tensor<1x2xi32> -> tensor<1x1x128x32xf32>
  %v = attn.gather_pages %vc[%table] : tensor<5x64x1x32xf32>, tensor<1x2xi32> -> tensor<1x1x128x32xf32>
  %e = tensor.empty() : tensor<1x1x100x32xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<1xi32>) outs(%e) causal
     : tensor<1x1x100x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32> -> tensor<1x1x100x32xf32>
  return %o : tensor<1x1x100x32xf32>
}

// -----

// The hnd layout: a tile within a page is a slice of its head's contiguous
// run, [page, head, offset, 0].
// CHECK-LABEL: func.func @decode_hnd
// CHECK-SAME: %[[KC:[^:]*]]: tensor<9x1x128x32xf32>
// CHECK-NOT: attn.gather_pages
// CHECK: %[[OFF:.*]] = arith.remui %{{.*}}, %c128
// CHECK: tensor.extract_slice %[[KC]][%{{.*}}, %{{.*}}, %[[OFF]], 0] [1, 1, 64, 32] [1, 1, 1, 1] : tensor<9x1x128x32xf32> to tensor<64x32xf32>
func.func @decode_hnd(%q: tensor<2x4x1x32xf32>, %kc: tensor<9x1x128x32xf32>,
                      %vc: tensor<9x1x128x32xf32>, %table: tensor<2x4xi64>,
                      %lens: tensor<2xi64>) -> tensor<2x4x1x32xf32> {
  %k = attn.gather_pages %kc[%table] layout = <hnd> : tensor<9x1x128x32xf32>, tensor<2x4xi64> -> tensor<2x1x512x32xf32>
  %v = attn.gather_pages %vc[%table] layout = <hnd> : tensor<9x1x128x32xf32>, tensor<2x4xi64> -> tensor<2x1x512x32xf32>
  %e = tensor.empty() : tensor<2x4x1x32xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi64>) outs(%e)
     : tensor<2x4x1x32xf32>, tensor<2x1x512x32xf32>, tensor<2x1x512x32xf32> -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}
