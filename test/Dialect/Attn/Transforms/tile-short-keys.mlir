// short-kv-tile: an attn.sdpa whose Skv is dynamic is tiled twice, with
// short-kv-tile keys per step where padding Skv to whole kv-tiles gives
// more than 9/8 of the keys whole short tiles give, else kv-tile; a static
// Skv, tiles a block layout sets, paged keys and a varlen output keep one
// tiling.
// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64 short-kv-tile=16" --split-input-file \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64" --split-input-file \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: not attn-opt %s --attn-tile="short-kv-tile=-2" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: error: attn-tile: short-kv-tile must be 0 (off) or positive, got -2

// CHECK-DAG: #[[$LONG:.*]] = affine_map<()[s0] -> ((s0 ceildiv 64) * 512)>
// CHECK-DAG: #[[$SHORT:.*]] = affine_map<()[s0] -> ((s0 ceildiv 16) * 144)>
// CHECK-LABEL: func.func @dynamic_keys
// CHECK-SAME: %{{.*}}: tensor<2x4x?x64xf32>, %[[K:.*]]: tensor<2x4x?x64xf32>, %{{.*}}: tensor<2x4x?x64xf32>)
// CHECK: %[[SKV:.*]] = tensor.dim %[[K]], %c2
// CHECK: %[[PADLONG:.*]] = affine.apply #[[$LONG]]()[%[[SKV]]]
// CHECK: %[[PADSHORT:.*]] = affine.apply #[[$SHORT]]()[%[[SKV]]]
// CHECK: %[[USESHORT:.*]] = arith.cmpi ugt, %[[PADLONG]], %[[PADSHORT]]
// CHECK: %[[R:.*]] = scf.if %[[USESHORT]] -> (tensor<2x4x?x64xf32>) {
// CHECK:   tensor.expand_shape {{.*}} into tensor<2x4x?x16x64xf32>
// CHECK:   %[[SHORTLOOP:.*]] = scf.forall
// CHECK:     scf.for %{{.*}} step %c16
// CHECK:   scf.yield %[[SHORTLOOP]]
// CHECK: } else {
// CHECK:   tensor.expand_shape {{.*}} into tensor<2x4x?x64x64xf32>
// CHECK:   %[[LONGLOOP:.*]] = scf.forall
// CHECK:     scf.for %{{.*}} step %c64
// CHECK:   scf.yield %[[LONGLOOP]]
// CHECK: }
// CHECK-NOT: attn.sdpa
// CHECK: return %[[R]]
// OFF-LABEL: func.func @dynamic_keys
// OFF-NOT: x16x64xf32
// OFF: scf.forall (
// OFF-NOT: scf.forall (
// OFF: return
func.func @dynamic_keys(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>,
                        %v: tensor<2x4x?x64xf32>) -> tensor<2x4x?x64xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<2x4x?x64xf32>
  %e = tensor.empty(%l) : tensor<2x4x?x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  return %o : tensor<2x4x?x64xf32>
}

// -----

// Both results (the output and its log-sum-exp) come out of the branches.
// CHECK-LABEL: func.func @with_lse
// CHECK: %[[R:.*]]:2 = scf.if %{{.*}} -> (tensor<1x2x8x32xf32>, tensor<1x2x8xf32>)
// CHECK: scf.forall
// CHECK: } else {
// CHECK: scf.forall
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @with_lse(%q: tensor<1x2x8x32xf32>, %k: tensor<1x2x?x32xf32>,
                    %v: tensor<1x2x?x32xf32>) -> (tensor<1x2x8x32xf32>, tensor<1x2x8xf32>) {
  %e = tensor.empty() : tensor<1x2x8x32xf32>
  %el = tensor.empty() : tensor<1x2x8xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%el : tensor<1x2x8xf32>)
     : tensor<1x2x8x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x8x32xf32>, tensor<1x2x8xf32>
  return %o, %lse : tensor<1x2x8x32xf32>, tensor<1x2x8xf32>
}

// -----

// A static Skv shorter than a tile is one tile of its own length: one
// tiling.
// CHECK-LABEL: func.func @static_keys
// CHECK-NOT: scf.if %{{.*}} -> (tensor<2x4x10x64xf32>)
// CHECK: scf.forall
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @static_keys(%q: tensor<2x4x10x64xf32>, %k: tensor<2x4x10x64xf32>,
                       %v: tensor<2x4x10x64xf32>) -> tensor<2x4x10x64xf32> {
  %e = tensor.empty() : tensor<2x4x10x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x4x10x64xf32>, tensor<2x4x10x64xf32>, tensor<2x4x10x64xf32> -> tensor<2x4x10x64xf32>
  return %o : tensor<2x4x10x64xf32>
}

// -----

// Block classes are tiles of their block_size: one tiling.
// CHECK-LABEL: func.func @block_classes
// CHECK: scf.forall
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @block_classes(%q: tensor<1x1x256x64xf32>, %k: tensor<1x1x?x64xf32>,
                         %v: tensor<1x1x?x64xf32>, %classes: tensor<1x1x2x2xi8>)
    -> tensor<1x1x256x64xf32> {
  %e = tensor.empty() : tensor<1x1x256x64xf32>
  %o = attn.sdpa %q, %k, %v block_classes(%classes : tensor<1x1x2x2xi8>) outs(%e)
     block_size = [128, 128]
     : tensor<1x1x256x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x256x64xf32>
  return %o : tensor<1x1x256x64xf32>
}

// -----

// Keys read from pages: the steps' tiles must fit the pages; one tiling.
// CHECK-LABEL: func.func @paged
// CHECK: scf.forall
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @paged(%q: tensor<2x2x1x64xf32>, %kc: tensor<40x16x2x64xf32>,
                 %vc: tensor<40x16x2x64xf32>, %table: tensor<2x?xi32>,
                 %lens: tensor<2xi32>) -> tensor<2x2x1x64xf32> {
  %k = attn.gather_pages %kc[%table] : tensor<40x16x2x64xf32>, tensor<2x?xi32> -> tensor<2x2x?x64xf32>
  %v = attn.gather_pages %vc[%table] : tensor<40x16x2x64xf32>, tensor<2x?xi32> -> tensor<2x2x?x64xf32>
  %e = tensor.empty() : tensor<2x2x1x64xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi32>) outs(%e)
     : tensor<2x2x1x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x64xf32> -> tensor<2x2x1x64xf32>
  return %o : tensor<2x2x1x64xf32>
}
