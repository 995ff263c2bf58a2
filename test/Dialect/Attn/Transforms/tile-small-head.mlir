// small-head-kv-tile: ops whose head sizes (D and Dv) are at most 64 and
// static take that key tile, the others kv-tile; attn-sparsify and attn-tile
// choose it per op alike, so run-time block classes describe the tiles the
// loop steps over.
// RUN: attn-opt %s --attn-sparsify="q-tile=32 kv-tile=64 small-head-kv-tile=128" \
// RUN:   --attn-tile="q-tile=32 kv-tile=64 small-head-kv-tile=128" --split-input-file \
// RUN:   | FileCheck %s
// RUN: not attn-opt %s --attn-tile="small-head-kv-tile=-1" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: error: attn-tile: small-head-kv-tile must be 0 (off) or positive, got -1

// D = Dv = 64: key tiles of 128.
// CHECK-LABEL: func.func @small_head
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 2, 3, 128, 64] : tensor<1x2x384x64xf32> into tensor<1x2x3x128x64xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C128]]
func.func @small_head(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>)
    -> tensor<1x2x100x64xf32> {
  %e = tensor.empty() : tensor<1x2x100x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x100x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32> -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}

// -----

// D = 64 but Dv = 128: kv-tile.
// CHECK-LABEL: func.func @wide_value
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 2, 5, 64, 64] : tensor<1x2x320x64xf32> into tensor<1x2x5x64x64xf32>
func.func @wide_value(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x128xf32>)
    -> tensor<1x2x100x128xf32> {
  %e = tensor.empty() : tensor<1x2x100x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x100x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x128xf32> -> tensor<1x2x100x128xf32>
  return %o : tensor<1x2x100x128xf32>
}

// -----

// Run-time block classes (a mask_mod that is no band) are made for the same
// 32 x 128 tiles the loop uses.
// (4 query tiles of 32 by 3 key tiles of 128.)
// CHECK-LABEL: func.func @classes
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: tensor.empty() : tensor<1x1x4x3xi8>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C128]]
func.func @classes(%q: tensor<1x1x100x32xf32>, %k: tensor<1x1x300x32xf32>, %v: tensor<1x1x300x32xf32>)
    -> tensor<1x1x100x32xf32> {
  %e = tensor.empty() : tensor<1x1x100x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x1x100x32xf32>, tensor<1x1x300x32xf32>, tensor<1x1x300x32xf32> -> tensor<1x1x100x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c7 = arith.constant 7 : index
       %r = arith.remui %j, %c7 : index
       %c0 = arith.constant 0 : index
       %keep = arith.cmpi ne, %r, %c0 : index
       attn.yield %keep : i1
     }
  return %o : tensor<1x1x100x32xf32>
}
