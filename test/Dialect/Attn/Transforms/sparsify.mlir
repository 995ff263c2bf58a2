// RUN: attn-opt %s --attn-sparsify="explain=true q-tile=32 kv-tile=16" --split-input-file -verify-diagnostics -o /dev/null
// RUN: attn-opt %s --attn-sparsify="q-tile=32 kv-tile=16" --split-input-file 2>/dev/null | FileCheck %s
// RUN: not attn-opt %s --attn-sparsify="kv-tile=0" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-sparsify: tile sizes must be positive, got q-tile = 128 and kv-tile = 0

// Masks that are bands are classified from the op alone: the remark gives
// the band [lower(i), upper(i)) of row i (L: keys of the batch, Sq: query
// length) and the op is left as it is.

// CHECK-LABEL: func.func @causal
// CHECK: attn.sdpa %{{.*}} outs(%{{.*}}) causal :
func.func @causal(%q: tensor<1x2x100x8xf32>) -> tensor<1x2x100x8xf32> {
  %e = tensor.empty() : tensor<1x2x100x8xf32>
  // expected-remark @+1 {{keys of row i: [0, i + 1); classified statically}}
  %o = attn.sdpa %q, %q, %q outs(%e) causal
     : tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32> -> tensor<1x2x100x8xf32>
  return %o : tensor<1x2x100x8xf32>
}

// -----

func.func @causal_bottom_right(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %e: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-remark @+1 {{keys of row i: [0, i + L - Sq + 1); classified statically}}
  %o = attn.sdpa %q, %k, %k outs(%e) causal align = <bottom_right>
     : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// Sliding window, key lengths and causal together: the intersection.
func.func @window_lens_causal(%q: tensor<2x2x64x8xf32>, %l: tensor<2xi32>) -> tensor<2x2x64x8xf32> {
  %e = tensor.empty() : tensor<2x2x64x8xf32>
  // expected-remark @+1 {{keys of row i: [i + L - Sq - 4, min(min(L, i + L - Sq + 1), i + L - Sq + 3)); classified statically}}
  %o = attn.sdpa %q, %q, %q kv_lens(%l : tensor<2xi32>) outs(%e) causal window = [4, 2] align = <bottom_right>
     : tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32> -> tensor<2x2x64x8xf32>
  return %o : tensor<2x2x64x8xf32>
}

// -----

// Prefix-LM as a mask_mod: a union of two bands that share their start.
func.func @prefix_lm(%q: tensor<1x1x64x8xf32>) -> tensor<1x1x64x8xf32> {
  %e = tensor.empty() : tensor<1x1x64x8xf32>
  // expected-remark @+1 {{keys of row i: [0, max(8, i + 1)); classified statically}}
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %p = arith.constant 8 : index
       %prefix = arith.cmpi slt, %j, %p : index
       %past = arith.cmpi sle, %j, %i : index
       %keep = arith.ori %prefix, %past : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x1x64x8xf32>
}

// -----

// Affine comparisons with coefficients, unsigned predicates on values that
// cannot be negative, a captured bound and the head index.
func.func @affine(%q: tensor<1x2x64x8xf32>, %n: index) -> tensor<1x2x64x8xf32> {
  %e = tensor.empty() : tensor<1x2x64x8xf32>
  // expected-remark @+1 {{keys of row i: [max(i - 16, h), min(2*i + 5, ext)); classified statically}}
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c16 = arith.constant 16 : index
       %c2 = arith.constant 2 : index
       %c4 = arith.constant 4 : index
       %j16 = arith.addi %j, %c16 : index
       %lo = arith.cmpi sge, %j16, %i : index
       %i2 = arith.muli %i, %c2 : index
       %hi0 = arith.addi %i2, %c4 : index
       %hi = arith.cmpi ule, %j, %hi0 : index
       %cap = arith.cmpi slt, %j, %n : index
       %head = arith.cmpi sle, %h, %j : index
       %a = arith.andi %lo, %hi : i1
       %b2 = arith.andi %a, %cap : i1
       %keep = arith.andi %b2, %head : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x2x64x8xf32>
}

// -----

func.func @nothing(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  // expected-remark @+1 {{keys of row i: empty; classified statically}}
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %f = arith.constant false
       attn.yield %f : i1
     }
  return %o : tensor<1x1x8x8xf32>
}

// -----

// What is not a band: each gets run-time classes, with the reason.
func.func @decreasing(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  // expected-remark @+1 {{keys of row i: [0, Skv); run-time block classes for mask_mod: a key bound that decreases as q_idx grows}}
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c8 = arith.constant 8 : index
       %r = arith.subi %c8, %i : index
       %keep = arith.cmpi slt, %j, %r : index
       attn.yield %keep : i1
     }
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @hole(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  // expected-remark @+1 {{keys of row i: [0, Skv); run-time block classes for mask_mod: a union of bands with no common end ('arith.ori')}}
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c2 = arith.constant 2 : index
       %early = arith.cmpi slt, %j, %c2 : index
       %near = arith.cmpi sge, %j, %i : index
       %keep = arith.ori %early, %near : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x1x8x8xf32>
}

// -----

func.func @unsigned(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  // expected-remark @+1 {{keys of row i: [0, Skv); run-time block classes for mask_mod: an unsigned comparison of a possibly negative value}}
  %o = attn.sdpa %q, %q, %q outs(%e)
     : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c2 = arith.constant 2 : index
       %r = arith.subi %i, %c2 : index
       %keep = arith.cmpi ult, %j, %r : index
       attn.yield %keep : i1
     }
  return %o : tensor<1x1x8x8xf32>
}

// -----

// Document masking, together with causal: the band [0, i + 1) still rules
// out tiles above the diagonal without looking at them; the others are
// counted element by element, once per call, in a parallel loop over query
// tiles. Classes do not depend on batch or head here: one [1, 1, 4, 7]
// table (100 rows in tiles of 32, 100 keys in tiles of 16).
// CHECK-LABEL: func.func @documents
// CHECK: %[[CLASSES:.*]] = scf.forall (%{{.*}}, %{{.*}}, %[[QT:.*]]) in (1, 1, 4) shared_outs(%[[ALL:.*]] = %{{.*}}) -> (tensor<1x1x4x7xi8>)
// CHECK: scf.for %[[KT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<7xi8>)
// CHECK: %[[VISIT:.*]] = arith.andi
// CHECK: scf.if %[[VISIT]] -> (i8)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.extract %{{.*}} : tensor<100xi32>
// CHECK: tensor.extract %{{.*}} : tensor<100xi32>
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi sle
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[ALL]][%{{.*}}, %{{.*}}, %[[QT]], 0] [1, 1, 1, 7]
// CHECK: attn.sdpa %{{.*}} block_classes(%[[CLASSES]] : tensor<1x1x4x7xi8>) outs(%{{.*}}) causal block_size = [32, 16]
func.func @documents(%q: tensor<1x2x100x8xf32>, %docs: tensor<100xi32>) -> tensor<1x2x100x8xf32> {
  %e = tensor.empty() : tensor<1x2x100x8xf32>
  // expected-remark @+1 {{keys of row i: [0, i + 1); run-time block classes for mask_mod: an index computation that is not affine ('tensor.extract')}}
  %o = attn.sdpa %q, %q, %q outs(%e) causal
     : tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32> -> tensor<1x2x100x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %di = tensor.extract %docs[%i] : tensor<100xi32>
       %dj = tensor.extract %docs[%j] : tensor<100xi32>
       %same = arith.cmpi eq, %di, %dj : i32
       attn.yield %same : i1
     }
  return %o : tensor<1x2x100x8xf32>
}

// -----

// A boolean mask with a head dimension: one table per head.
// CHECK-LABEL: func.func @bool_mask
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x2x2x3xi8>)
// CHECK: attn.sdpa {{.*}} mask(%{{.*}} : tensor<2x40x40xi1>) block_classes(%{{.*}} : tensor<1x2x2x3xi8>) outs(%{{.*}}) block_size = [32, 16]
func.func @bool_mask(%q: tensor<1x2x40x8xf32>, %m: tensor<2x40x40xi1>) -> tensor<1x2x40x8xf32> {
  %e = tensor.empty() : tensor<1x2x40x8xf32>
  // expected-remark @+1 {{keys of row i: [0, Skv); run-time block classes for the boolean mask operand}}
  %o = attn.sdpa %q, %q, %q mask(%m : tensor<2x40x40xi1>) outs(%e)
     : tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32>, tensor<1x2x40x8xf32> -> tensor<1x2x40x8xf32>
  return %o : tensor<1x2x40x8xf32>
}

// -----

// A block-sparse layout: classes at the layout's own block size; listed
// blocks with no other keep condition are full without being looked at,
// unlisted ones empty. The layout itself is dropped.
// CHECK-LABEL: func.func @layout
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<1x1x?x?xi1>
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 3)
// CHECK: tensor.extract %{{.*}} : tensor<1x1x?x?xi1>
// CHECK: scf.if
// CHECK-NEXT: scf.yield %{{.*}} : i8
// CHECK: attn.sdpa %{{.*}} block_classes(%{{.*}} : tensor<1x1x3x2xi8>) outs(%{{.*}}) block_size = [16, 32]
// CHECK-NOT: blocks(
func.func @layout(%q: tensor<1x1x48x8xf32>, %k: tensor<1x1x64x8xf32>) -> tensor<1x1x48x8xf32> {
  %e = tensor.empty() : tensor<1x1x48x8xf32>
  %off = arith.constant dense<[0, 1, 3, 4]> : tensor<4xi32>
  %idx = arith.constant dense<[0, 0, 1, 1]> : tensor<4xi32>
  // The layout's blocks are the tiles, whatever the options chose, and
  // explain says so.
  // expected-remark @+1 {{keys of row i: [0, Skv); tiled by the block layout's 16 x 32 blocks, not 32 x 16; run-time block classes for the block-sparse layout}}
  %o = attn.sdpa %q, %k, %k blocks(%off, %idx : tensor<4xi32>, tensor<4xi32>) outs(%e) block_size = [16, 32]
     : tensor<1x1x48x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x48x8xf32>
  return %o : tensor<1x1x48x8xf32>
}
