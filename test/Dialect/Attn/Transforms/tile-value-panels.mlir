// value-panel: V is packed once per call in panels of that many columns,
// [B, Hkv, key tiles, Dv / panel, kv-tile, panel], where Dv makes at least
// 4 of them and several query tiles read V; P V_t then contracts against
// the step's [Dv / panel, keys, panel] slice through a [rows, Dv / panel,
// panel] view of the accumulator (the panel innermost in both).
// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64 value-panel=16" --split-input-file \
// RUN:   | FileCheck %s
// RUN: not attn-opt %s --attn-tile="value-panel=-1" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: error: attn-tile: value-panel must be 0 (off) or positive, got -1

// Dv = 128: 8 panels of 16; the padded keys (300 -> 320) in 5 tiles.
// CHECK-LABEL: func.func @panels
// CHECK: linalg.transpose ins({{.*}} : tensor<1x2x5x64x8x16xf32>) outs({{.*}} : tensor<1x2x5x8x64x16xf32>) permutation = [0, 1, 2, 4, 3, 5]
// CHECK: scf.forall
// CHECK: tensor.extract_slice {{.*}} : tensor<1x2x5x8x64x16xf32> to tensor<8x?x16xf32>
// CHECK: %[[VIEW:.*]] = tensor.expand_shape {{.*}} {{\[}}[0], [1, 2]] output_shape [{{.*}}, 8, 16] : tensor<?x128xf32> into tensor<?x8x16xf32>
// CHECK: %[[PV:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins({{.*}} : tensor<?x?xf32>, tensor<8x?x16xf32>) outs(%[[VIEW]] : tensor<?x8x16xf32>)
// CHECK: tensor.collapse_shape %[[PV]] {{\[}}[0], [1, 2]] : tensor<?x8x16xf32> into tensor<?x128xf32>
func.func @panels(%q: tensor<1x2x100x128xf32>, %k: tensor<1x2x300x128xf32>, %v: tensor<1x2x300x128xf32>)
    -> tensor<1x2x100x128xf32> {
  %e = tensor.empty() : tensor<1x2x100x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x100x128xf32>, tensor<1x2x300x128xf32>, tensor<1x2x300x128xf32> -> tensor<1x2x100x128xf32>
  return %o : tensor<1x2x100x128xf32>
}

// -----

// Dv = 32 is 2 panels: V is read where it is.
// CHECK-LABEL: func.func @few_panels
// CHECK-NOT: permutation = [0, 1, 2, 4, 3, 5]
// CHECK-NOT: tensor<?x2x16xf32>
// CHECK: return
func.func @few_panels(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>)
    -> tensor<1x2x100x32xf32> {
  %e = tensor.empty() : tensor<1x2x100x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x100x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x100x32xf32>
  return %o : tensor<1x2x100x32xf32>
}

// -----

// One query tile per head (decode): nothing else would read a packed V.
// CHECK-LABEL: func.func @one_query_tile
// CHECK-NOT: permutation = [0, 1, 2, 4, 3, 5]
// CHECK: return
func.func @one_query_tile(%q: tensor<1x2x1x128xf32>, %k: tensor<1x2x300x128xf32>, %v: tensor<1x2x300x128xf32>)
    -> tensor<1x2x1x128xf32> {
  %e = tensor.empty() : tensor<1x2x1x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x1x128xf32>, tensor<1x2x300x128xf32>, tensor<1x2x300x128xf32> -> tensor<1x2x1x128xf32>
  return %o : tensor<1x2x1x128xf32>
}
