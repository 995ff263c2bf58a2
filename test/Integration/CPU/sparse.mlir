// Block sparsity end to end (attn-sparsify + attn-tile in the default CPU
// pipeline, and with small tiles so that every kind of tile occurs): every
// sparse variant against the float64 reference lowering, which applies the
// same masks densely. Shapes are not tile multiples (300 rows and keys).
//   logsparse_causal    LogSparse-style CSR layout (own, previous, 2 and 4
//                       blocks back) intersected with causal: run-time classes
//   logsparse_causal_grad  the same forward with its lse, and its backward
//                       (attn.sdpa_grad with the layout: the reference
//                       backward, which evaluates it element by element)
//   documents           document masking from a tensor of ids: run-time classes
//   prefix_lm           mask_mod `kv < 45 or kv <= q`: a static band
//   dilated_band        affine mask_mod with coefficients, unsigned compares
//                       and the head index: a static band
//   window_wider_than_s every tile full
//   late_rows_only      rows < 201 see no key at all (result 0)
//   window_2d           2-D local attention over a 20 x 15 image, radius 2
//   dynamic_prefix_window, bool_mask_gqa (below)
// RUN: attn-run %s --check --entry=logsparse_causal | FileCheck %s
// RUN: attn-run %s --check --entry=logsparse_causal --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=logsparse_causal_grad | FileCheck %s
// RUN: attn-run %s --check --entry=logsparse_causal_grad --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=documents | FileCheck %s
// RUN: attn-run %s --check --entry=documents --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=prefix_lm | FileCheck %s
// RUN: attn-run %s --check --entry=prefix_lm --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=dilated_band | FileCheck %s
// RUN: attn-run %s --check --entry=dilated_band --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=window_wider_than_s | FileCheck %s
// RUN: attn-run %s --check --entry=window_wider_than_s --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=late_rows_only | FileCheck %s
// RUN: attn-run %s --check --entry=late_rows_only --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=window_2d | FileCheck %s
// RUN: attn-run %s --check --entry=window_2d --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_prefix_window --input-shapes=1x2x300x32,1x2x333x32,1x2x333x32 | FileCheck %s
// RUN: attn-run %s --check --entry=dynamic_prefix_window --input-shapes=1x2x7x32,1x2x20x32,1x2x20x32 --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// RUN: attn-run %s --check --entry=bool_mask_gqa | FileCheck %s
// RUN: attn-run %s --check --entry=bool_mask_gqa --cpu-pipeline="q-tile=16 kv-tile=8" | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @logsparse_causal(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %off = arith.constant dense<[0, 2, 6, 12, 18, 26]> : tensor<6xi32>
  %idx = arith.constant dense<[0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 6, 7, 0, 1, 4, 5, 6, 7, 8, 9]> : tensor<26xi32>
  %o = attn.sdpa %q, %k, %v blocks(%off, %idx : tensor<6xi32>, tensor<26xi32>) outs(%e) causal block_size = [64, 32]
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
  return %o : tensor<1x2x300x32xf32>
}

func.func @logsparse_causal_grad(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>, %do: tensor<1x2x300x32xf32>)
    -> (tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>) {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %el = tensor.empty() : tensor<1x2x300xf32>
  %off = arith.constant dense<[0, 2, 6, 12, 18, 26]> : tensor<6xi32>
  %idx = arith.constant dense<[0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 6, 7, 0, 1, 4, 5, 6, 7, 8, 9]> : tensor<26xi32>
  %o, %lse = attn.sdpa %q, %k, %v blocks(%off, %idx : tensor<6xi32>, tensor<26xi32>) outs(%e) lse(%el : tensor<1x2x300xf32>) causal block_size = [64, 32]
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>, tensor<1x2x300xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse blocks(%off, %idx : tensor<6xi32>, tensor<26xi32>) outs(%e, %e, %e) causal block_size = [64, 32]
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>
}

func.func @documents(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %docs = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]> : tensor<300xi64>
  %o = attn.sdpa %q, %k, %v outs(%e) 
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %di = tensor.extract %docs[%i] : tensor<300xi64>
       %dj = tensor.extract %docs[%j] : tensor<300xi64>
       %same = arith.cmpi eq, %di, %dj : i64
       attn.yield %same : i1
     }
  return %o : tensor<1x2x300x32xf32>
}

func.func @prefix_lm(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) 
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %p = arith.constant 45 : index
       %prefix = arith.cmpi slt, %j, %p : index
       %past = arith.cmpi sle, %j, %i : index
       %keep = arith.ori %prefix, %past : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x2x300x32xf32>
}

func.func @dilated_band(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) 
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c2 = arith.constant 2 : index
       %c40 = arith.constant 40 : index
       %i2 = arith.muli %i, %c2 : index
       %lo = arith.addi %j, %c40 : index
       %a = arith.cmpi uge, %lo, %i2 : index
       %bnd = arith.cmpi ule, %j, %i2 : index
       %hh = arith.addi %j, %h : index
       %c = arith.cmpi sge, %hh, %c2 : index
       %ab = arith.andi %a, %bnd : i1
       %keep = arith.andi %ab, %c : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x2x300x32xf32>
}

func.func @window_wider_than_s(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) window = [1000, 700]
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
  return %o : tensor<1x2x300x32xf32>
}

func.func @late_rows_only(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) 
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c200 = arith.constant 200 : index
       %lim = arith.subi %i, %c200 : index
       %keep = arith.cmpi slt, %j, %lim : index
       attn.yield %keep : i1
     }
  return %o : tensor<1x2x300x32xf32>
}

func.func @window_2d(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x300x32xf32>, %v: tensor<1x2x300x32xf32>) -> tensor<1x2x300x32xf32> {
  %e = tensor.empty() : tensor<1x2x300x32xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) 
     : tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x32xf32> -> tensor<1x2x300x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %w = arith.constant 15 : index
       %r = arith.constant 2 : index
       %yi = arith.divui %i, %w : index
       %xi = arith.remui %i, %w : index
       %yj = arith.divui %j, %w : index
       %xj = arith.remui %j, %w : index
       %dy = arith.subi %yi, %yj : index
       %dx = arith.subi %xi, %xj : index
       %ady = math.absi %dy : index
       %adx = math.absi %dx : index
       %ky = arith.cmpi sle, %ady, %r : index
       %kx = arith.cmpi sle, %adx, %r : index
       %keep = arith.andi %ky, %kx : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x2x300x32xf32>
}

// Dynamic shapes: the band bounds are computed from the run-time sizes
// and a captured value (a prefix of Sq / 4 in a bottom-right window).
func.func @dynamic_prefix_window(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<1x2x?x32xf32>
  %e = tensor.empty(%sq) : tensor<1x2x?x32xf32>
  %c4 = arith.constant 4 : index
  %p = arith.divui %sq, %c4 : index
  %o = attn.sdpa %q, %k, %v outs(%e) window = [70, 0] align = <bottom_right>
     : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %prefix = arith.cmpi slt, %j, %p : index
       %past = arith.cmpi sle, %j, %i : index
       %keep = arith.ori %prefix, %past : i1
       attn.yield %keep : i1
     }
  return %o : tensor<1x2x?x32xf32>
}

// Grouped-query attention with a per-head boolean mask: run-time classes
// per head, key/value heads shared by pairs of query heads.
func.func @bool_mask_gqa(%q: tensor<1x4x150x32xf32>, %k: tensor<1x2x170x32xf32>, %v: tensor<1x2x170x32xf32>,
                         %m: tensor<1x4x150x170xi1>) -> tensor<1x4x150x32xf32> {
  %e = tensor.empty() : tensor<1x4x150x32xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<1x4x150x170xi1>) outs(%e) causal align = <bottom_right>
     : tensor<1x4x150x32xf32>, tensor<1x2x170x32xf32>, tensor<1x2x170x32xf32> -> tensor<1x4x150x32xf32>
  return %o : tensor<1x4x150x32xf32>
}
