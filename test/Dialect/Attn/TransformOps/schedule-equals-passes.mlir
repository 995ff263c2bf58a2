// transform.attn.sparsify, .tile and .register_block build what
// attn-sparsify, attn-tile and attn-vectorize-tiles build with the same
// sizes (Inputs/cpu-schedule.mlir against the pass options below): the
// two outputs, canonicalised, are the same text but for the order in which
// the constants are materialised at the top of each region. Cases: a boolean mask
// (block classes computed at run time), causal GQA with a partial query
// tile (a static band), decode split into key chunks, and the backward.
// RUN: attn-opt %s --attn-sparsify="q-tile=32 kv-tile=16" --attn-tile="q-tile=32 kv-tile=16" --attn-vectorize-tiles="m-block=6 n-block=16 row-elements=64" --canonicalize --cse -o %t.passes.mlir
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/cpu-schedule.mlir --transform-interpreter --canonicalize --cse -o %t.script.mlir
// RUN: grep -v "= arith.constant" %t.passes.mlir > %t.passes.body
// RUN: grep -v "= arith.constant" %t.script.mlir > %t.script.body
// RUN: diff %t.passes.body %t.script.body
// RUN: FileCheck %s < %t.script.mlir
// Tiles alone (no register blocks after them) verify: the last query
// tile's row count (bool_mask: 40 = 32 + 8 rows) is defined before the
// branch that reads it.
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/cpu-tile-schedule.mlir --transform-interpreter | FileCheck %s --check-prefix=TILES
// TILES-LABEL: func.func @bool_mask
// TILES: scf.forall
// TILES: %[[EIGHT:.*]] = arith.constant 8 : index
// TILES: scf.if
// TILES: tensor.extract_slice %{{.*}} [1, 1, %[[EIGHT]], 8]

// CHECK-NOT: attn.sdpa
// CHECK-LABEL: func.func @bool_mask
// CHECK: scf.forall
// CHECK: arith.cmpi
// CHECK: scf.forall
// CHECK: vector.fma
// CHECK-LABEL: func.func @causal_gqa
// CHECK: scf.forall ({{.*}}) in (4, 4)
// CHECK: vector.fma
// CHECK-LABEL: func.func @decode
// CHECK: scf.forall ({{.*}}) in (2, 8)
// CHECK-LABEL: func.func @grad
// CHECK: scf.forall
// CHECK: vector.fma
// CHECK-NOT: attn.sdpa

func.func @bool_mask(%q: tensor<1x2x40x8xf32>, %k: tensor<1x2x40x8xf32>, %v: tensor<1x2x40x8xf32>,
                     %m: tensor<2x40x40xi1>) -> tensor<1x2x40x8xf32> {
  %init = tensor.empty() : tensor<1x2x40x8xf32>
  %0 = attn.sdpa %q, %k, %v mask(%m : tensor<2x40x40xi1>) outs(%init)
      : tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32> -> tensor<1x2x40x8xf32>
  return %0 : tensor<1x2x40x8xf32>
}

func.func @causal_gqa(%q: tensor<1x4x100x32xf32>, %k: tensor<1x2x100x32xf32>,
                      %v: tensor<1x2x100x32xf32>) -> tensor<1x4x100x32xf32> {
  %init = tensor.empty() : tensor<1x4x100x32xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init) causal
      : tensor<1x4x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<1x4x100x32xf32>
  return %0 : tensor<1x4x100x32xf32>
}

func.func @decode(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x1024x64xf32>,
                  %v: tensor<1x2x1024x64xf32>) -> tensor<1x2x1x64xf32> {
  %init = tensor.empty() : tensor<1x2x1x64xf32>
  %0 = attn.sdpa %q, %k, %v outs(%init)
      : tensor<1x2x1x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32> -> tensor<1x2x1x64xf32>
  return %0 : tensor<1x2x1x64xf32>
}

func.func @grad(%q: tensor<2x2x40x16xf32>, %k: tensor<2x2x40x16xf32>, %v: tensor<2x2x40x16xf32>,
                %o: tensor<2x2x40x16xf32>, %do: tensor<2x2x40x16xf32>, %lse: tensor<2x2x40xf32>)
    -> (tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>) {
  %e = tensor.empty() : tensor<2x2x40x16xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%e, %e, %e) causal
      : tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40xf32>
  return %dq, %dk, %dv : tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>
}
