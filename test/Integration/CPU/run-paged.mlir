// attn.sdpa over paged caches (attn.gather_pages) against the compiler's
// float64 reference, on random page tables (attn-run draws entries over
// all pages, now and then one out of range) and random key lengths: f32
// decode with GQA over 16-key pages (tiles assembled from pages), and f16
// prefill over 64-key pages in the hnd layout, causal bottom-right (K packed from the
// gathered tensor, V's tiles sliced from the pages). The NumPy oracle
// checks in paged-kv.test; CUDA compiles these in compile-all.test.
// RUN: attn-run %s --check --entry=decode | FileCheck %s
// RUN: attn-run %s --check --entry=prefill_f16 | FileCheck %s
// CHECK: relative error {{.*}} ok
func.func @decode(%q: tensor<4x8x1x64xf32>, %kc: tensor<40x16x2x64xf32>,
                  %vc: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>,
                  %lens: tensor<4xi32>) -> tensor<4x8x1x64xf32> {
  %k = attn.gather_pages %kc[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  %v = attn.gather_pages %vc[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  %e = tensor.empty() : tensor<4x8x1x64xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<4xi32>) outs(%e) causal align = <bottom_right>
     : tensor<4x8x1x64xf32>, tensor<4x2x128x64xf32>, tensor<4x2x128x64xf32> -> tensor<4x8x1x64xf32>
  return %o : tensor<4x8x1x64xf32>
}
func.func @prefill_f16(%q: tensor<2x4x150x64xf16>, %kc: tensor<12x4x64x64xf16>,
                       %vc: tensor<12x4x64x64xf16>, %table: tensor<2x4xi64>,
                       %lens: tensor<2xi64>) -> tensor<2x4x150x64xf16> {
  %k = attn.gather_pages %kc[%table] layout = <hnd> : tensor<12x4x64x64xf16>, tensor<2x4xi64> -> tensor<2x4x256x64xf16>
  %v = attn.gather_pages %vc[%table] layout = <hnd> : tensor<12x4x64x64xf16>, tensor<2x4xi64> -> tensor<2x4x256x64xf16>
  %e = tensor.empty() : tensor<2x4x150x64xf16>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi64>) outs(%e) causal align = <bottom_right>
     : tensor<2x4x150x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16> -> tensor<2x4x150x64xf16>
  return %o : tensor<2x4x150x64xf16>
}
