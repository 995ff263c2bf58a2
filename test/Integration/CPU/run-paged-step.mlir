// A generation step in one function: K and V appended to paged caches
// (attn.append_pages) at random positions, then attended over with their
// lengths, the appended rows included; against the compiler's float64
// reference (the NumPy oracle's decode steps are in paged-kv.test). The
// CUDA pipeline does not take attn.append_pages yet and says so.
// RUN: attn-run %s --check | FileCheck %s
// CHECK: relative error {{.*}} ok
// RUN: not attnc --target=cuda --emit=ptx %s -o %t.ptx 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA: error: 'attn.append_pages' op is not supported by the CUDA pipeline yet
func.func @step(%q: tensor<2x4x1x32xf32>, %kn: tensor<2x2x1x32xf32>, %vn: tensor<2x2x1x32xf32>,
                %kc: tensor<10x16x2x32xf32>, %vc: tensor<10x16x2x32xf32>, %table: tensor<2x4xi32>,
                %pos: tensor<2xi32>, %lens: tensor<2xi32>) -> tensor<2x4x1x32xf32> {
  %kc2 = attn.append_pages %kn into %kc[%table] at %pos : tensor<2x2x1x32xf32>, tensor<10x16x2x32xf32>, tensor<2x4xi32>, tensor<2xi32> -> tensor<10x16x2x32xf32>
  %vc2 = attn.append_pages %vn into %vc[%table] at %pos : tensor<2x2x1x32xf32>, tensor<10x16x2x32xf32>, tensor<2x4xi32>, tensor<2xi32> -> tensor<10x16x2x32xf32>
  %k = attn.gather_pages %kc2[%table] : tensor<10x16x2x32xf32>, tensor<2x4xi32> -> tensor<2x2x64x32xf32>
  %v = attn.gather_pages %vc2[%table] : tensor<10x16x2x32xf32>, tensor<2x4xi32> -> tensor<2x2x64x32xf32>
  %e = tensor.empty() : tensor<2x4x1x32xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi32>) outs(%e) causal align = <bottom_right>
     : tensor<2x4x1x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32> -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}
