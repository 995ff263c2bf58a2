// RUN: attn-opt %s --attn-tile="q-tile=32 kv-tile=64" --split-input-file | FileCheck %s
// RUN: not attn-opt %s --attn-tile="q-tile=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-opt %s --attn-tile="grad-key-chunks=-2" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-CHUNKS
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=8 grad-key-chunks=1" --split-input-file | FileCheck %s --check-prefix=GRAD
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=8 grad-key-chunks=1" --split-input-file | FileCheck %s --check-prefix=SUMS
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=8 grad-key-chunks=1 grad-head-sums=false" --split-input-file | FileCheck %s --check-prefix=ONE-SUM
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=8" --split-input-file | FileCheck %s --check-prefix=CHUNK

// BAD: error: attn-tile: tile sizes must be positive, got q-tile = 0 and kv-tile = 64
// BAD-CHUNKS: error: attn-tile: grad-key-chunks must be 0 (automatic) or positive, got -2

// The loop nest: a parallel loop over (batch, head, query tile), a loop over
// key tiles carrying the running max, sum and output tile, the score tile
// scaled and masked on global indices, and no 128x256 score tensor.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[CM128:.*]] = arith.constant -128 : index
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.180336878 : f32
// K is packed once, outside the loops, into contiguous K_t^T tiles
// [B, Hkv, Skv / 64, D, 64].
// CHECK: %[[KS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3], [4]] output_shape [2, 2, 4, 64, 64] : tensor<2x2x256x64xf32> into tensor<2x2x4x64x64xf32>
// CHECK: %[[KP:.*]] = linalg.transpose ins(%[[KS]] : tensor<2x2x4x64x64xf32>) outs(%{{.*}} : tensor<2x2x4x64x64xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in (2, 8, 4) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<2x8x128x64xf32>)
// CHECK: %[[ROW0:.*]] = arith.muli %[[T]], %[[C32]]
// GQA: 8 query heads over 2 key/value heads, query head h reads h / 4.
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %[[C4]] : index
// 128 rows and 256 keys are whole tiles: every tile size is the constant
// tile (@uneven below has edge tiles).
// CHECK: %[[QS:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[C32]], 64] [1, 1, 1, 1] : tensor<2x8x128x64xf32> to tensor<?x64xf32>
// The score is linear in the scale (no additive mask, no score_mod): the
// query tile is scaled once, in log2 units (log2(e) folded into the scale
// 1/sqrt(64)), rather than every step's score tile.
// CHECK: %[[QT:.*]] = linalg.generic {{.*}} ins(%[[QS]] : tensor<?x64xf32>)
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// Causal, bottom-right (diagonal offset 256 - 128): the band of row i is
// [0, i + 128 + 1). Keys every row of the tile sees end at the first row's
// diagonal, rounded down to a tile (or Skv); keys any row sees end at the
// last row's.
// CHECK: %[[LAST:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK: %[[PAST:.*]] = arith.addi %[[LAST]], %[[C1]] : index
// CHECK: %[[SHIFT:.*]] = arith.addi %[[PAST]], %[[C256]] : index
// CHECK: %[[DIAGEND:.*]] = arith.addi %[[SHIFT]], %[[CM128]] : index
// CHECK: %[[ENDC:.*]] = arith.minsi %[[DIAGEND]], %[[C256]] : index
// CHECK: %[[END:.*]] = arith.maxsi %[[ENDC]], %[[C0:.*]] : index
// CHECK: %[[FIRSTPAST:.*]] = arith.addi %[[ROW0]], %[[C1]] : index
// CHECK: %[[FULLTILES:.*]] = arith.divui %[[ALLEND:.*]], %[[C64]] : index
// CHECK: %[[FULLFLOOR:.*]] = arith.muli %[[FULLTILES]], %[[C64]] : index
// CHECK: %[[REACHES:.*]] = arith.cmpi eq, %[[ALLEND]], %[[C256]] : index
// CHECK: %[[FULLEND:.*]] = arith.select %[[REACHES]], %[[C256]], %[[FULLFLOOR]] : index
// CHECK: %[[MID0:.*]] = arith.minsi %[[END]], %[[C0]] : index
// CHECK: %[[MID1:.*]] = arith.maxsi %[[MID0]], %[[FULLEND]] : index
// The partial tiles before the full ones ([0, MID0): none here) and after
// them ([MID1, END)) share one loop over tile numbers, and so one copy of
// the masked step.
// CHECK: %[[NBEFORE:.*]] = arith.ceildivui %{{.*}}, %[[C64]] : index
// CHECK: %[[AFTERLEN:.*]] = arith.subi %[[END]], %[[MID1]] : index
// CHECK: %[[AFTERPOS:.*]] = arith.maxsi %[[AFTERLEN]], %[[C0]] : index
// CHECK: %[[NAFTER:.*]] = arith.ceildivui %[[AFTERPOS]], %[[C64]] : index
// CHECK: %[[N:.*]] = arith.addi %[[NBEFORE]], %[[NAFTER]] : index
// CHECK: %[[MASKED:.*]]:3 = scf.for %[[T:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
// CHECK: %[[INBEFORE:.*]] = arith.cmpi ult, %[[T]], %[[NBEFORE]] : index
// CHECK: %[[J0:.*]] = arith.select %[[INBEFORE]], %{{.*}}, %{{.*}} : index
// CHECK: %[[TILE:.*]] = arith.divui %[[J0]], %[[C64]]
// CHECK: %[[KT:.*]] = tensor.extract_slice %[[KP]][%[[B]], %[[KVH]], %[[TILE]], 0, 0] [1, 1, 1, 64, %[[C64]]] [1, 1, 1, 1, 1] : tensor<2x2x4x64x64xf32> to tensor<64x?xf32>
// CHECK: tensor.extract_slice %{{.*}}[%[[B]], %[[KVH]], %[[J0]], 0] [1, 1, %[[C64]], 64]
// The contraction's innermost loop runs over keys.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[QT]], %[[KT]] :
// The causal mask on global indices; the scale is not applied again.
// CHECK-NOT: %[[SCALE]]
// CHECK: arith.addi %[[ROW0]],
// CHECK: arith.addi %[[J0]],
// CHECK-NOT: %[[SCALE]]
// CHECK: arith.cmpi sle
// CHECK: arith.select
// The row maximum is marked as only a bound for the exponentials.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} {{.*}} attrs = {attn.softmax_max}
// CHECK: arith.maximumf {{.*}} fastmath<reassoc>
// CHECK: math.exp2
// CHECK: math.exp2
// P V with the output features innermost.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: scf.yield
// The full tiles: no mask evaluated, and so no pass over the scores before
// their row max.
// CHECK: %[[FULL:.*]]:3 = scf.for %{{.*}} = %[[MID0]] to %[[MID1]] step %[[C64]] iter_args(%{{.*}} = %[[MASKED]]#0, %{{.*}} = %[[MASKED]]#1, %{{.*}} = %[[MASKED]]#2)
// CHECK-NOT: arith.cmpi
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[B]], %[[H]], %[[ROW0]], 0]
// CHECK-NOT: tensor<128x256xf32>
// CHECK-NOT: tensor<?x256xf32>
// CHECK-NOT: attn.sdpa
func.func @causal_gqa(%q: tensor<2x8x128x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x64xf32>)
    -> tensor<2x8x128x64xf32> {
  %e = tensor.empty() : tensor<2x8x128x64xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal align = <bottom_right>
     : tensor<2x8x128x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32> -> tensor<2x8x128x64xf32>
  return %o : tensor<2x8x128x64xf32>
}

// -----

// kv_lens is read once per (batch, head, query tile); attn.weights, whose
// result is the score matrix itself, is not tiled.
// CHECK-LABEL: func.func @lens_and_weights
// CHECK: scf.forall
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<1xi32>
// CHECK: scf.for
// CHECK: attn.weights
func.func @lens_and_weights(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %l: tensor<1xi32>)
    -> (tensor<1x1x8x16xf32>, tensor<1x1x8x8xf32>) {
  %e = tensor.empty() : tensor<1x1x8x16xf32>
  %o = attn.sdpa %q, %k, %k kv_lens(%l : tensor<1xi32>) outs(%e)
     : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  %ew = tensor.empty() : tensor<1x1x8x8xf32>
  %w = attn.weights %q, %k outs(%ew) : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x8xf32>
  return %o, %w : tensor<1x1x8x16xf32>, tensor<1x1x8x8xf32>
}

// -----

// A window [3, 1] (top-left): the band of row i is [i - 3, i + 2). Keys
// any row sees start at max(0, row0 - 3), rounded down to a tile boundary;
// full tiles start where the last row's band does, rounded up.
// CHECK-LABEL: func.func @window
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[CM3:.*]] = arith.constant -3 : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 2)
// CHECK: %[[ROW0:.*]] = arith.muli
// CHECK: %[[LOW:.*]] = arith.addi %[[ROW0]], %[[CM3]] : index
// CHECK: %[[LOWEST:.*]] = arith.maxsi %[[LOW]], %[[C0]] : index
// CHECK: %[[TILE:.*]] = arith.divui %[[LOWEST]], %[[C64:.*]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[TILE]], %[[C64]] : index
// CHECK: %[[LASTLOW:.*]] = arith.addi %{{.*}}, %[[CM3]] : index
// CHECK: %[[LASTLOWEST:.*]] = arith.maxsi %[[LASTLOW]], %[[C0]] : index
// CHECK: %[[FULLTILE:.*]] = arith.ceildivui %[[LASTLOWEST]], %[[C64]] : index
// The partial tiles (from FIRST, and after the full ones) in one loop over
// tile numbers, then the full tiles.
// CHECK: %[[BEFORELEN:.*]] = arith.subi %{{.*}}, %[[FIRST]] : index
// CHECK: %[[MASKED:.*]]:3 = scf.for %[[T:.*]] = %[[C0]] to
// CHECK: %[[OFFSET:.*]] = arith.muli %[[T]], %[[C64]] : index
// CHECK: %[[FROMFIRST:.*]] = arith.addi %[[FIRST]], %[[OFFSET]] : index
// CHECK: arith.select %{{.*}}, %[[FROMFIRST]], %{{.*}} : index
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[MASKED]]#0, %{{.*}} = %[[MASKED]]#1, %{{.*}} = %[[MASKED]]#2)
// CHECK-NOT: scf.for
// CHECK: scf.forall.in_parallel
func.func @window(%q: tensor<1x1x64x8xf32>) -> tensor<1x1x64x8xf32> {
  %e = tensor.empty() : tensor<1x1x64x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e) window = [3, 1]
     : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %o : tensor<1x1x64x8xf32>
}

// -----

// Lengths that are not whole tiles. 100 static rows: the last query tile (4
// rows) and the whole ones (32 rows) are built apart in one parallel loop,
// each with a constant size; 250 keys: K and V are padded with zero keys to
// 256, every key tile holds 64 keys, the full tiles are the whole ones
// ([0, 192)) and the steps that may reach past key 250 mask the padding
// (with nothing that reads a tensor at the key's index, the index is not
// clamped).
// CHECK-LABEL: func.func @uneven
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C192:.*]] = arith.constant 192 : index
// CHECK-DAG: %[[C250:.*]] = arith.constant 250 : index
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 6, 0]
// CHECK: %[[VP:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 6, 0]
// CHECK: } : tensor<1x2x250x16xf32> to tensor<1x2x256x16xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %[[T:.*]]) in (1, 2, 4)
// CHECK: %[[ROW0:.*]] = arith.muli %[[T]], %[[C32]]
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[T]], %[[C3]]
// CHECK: %[[OUT:.*]] = scf.if %[[LAST]] -> (tensor<?x16xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW0]], 0] [1, 1, %[[C4]], 16]
// CHECK: %[[MASKED:.*]]:3 = scf.for %{{.*}} = %[[C0]] to %[[C1]] step %[[C1]]
// CHECK: %[[J:.*]] = arith.select
// CHECK: tensor.extract_slice %[[VP]][%{{.*}}, %{{.*}}, %[[J]], 0] [1, 1, %[[C64]], 16]
// CHECK: arith.cmpi slt, %{{.*}}, %[[C250]]
// CHECK-NOT: arith.minsi
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C192]] step %[[C64]] iter_args(%{{.*}} = %[[MASKED]]#0
// CHECK-NOT: arith.cmpi
// CHECK: scf.yield
// CHECK: } else {
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW0]], 0] [1, 1, %[[C32]], 16]
// CHECK: %[[ROWS:.*]] = arith.select %[[LAST]], %[[C4]], %[[C32]]
// CHECK: tensor.parallel_insert_slice %[[OUT]] into %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW0]], 0] [1, 1, %[[ROWS]], 16]
func.func @uneven(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x250x16xf32>, %v: tensor<1x2x250x16xf32>)
    -> tensor<1x2x100x16xf32> {
  %e = tensor.empty() : tensor<1x2x100x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x100x16xf32>, tensor<1x2x250x16xf32>, tensor<1x2x250x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// -----

// A mask on padded keys: the steps that may reach past the 250 keys read
// the mask (and would run the modifiers) at key min(j, 249), never past the
// end, and give the padding keys -inf whatever the mask says (j < 250 is
// one more keep condition).
// CHECK-LABEL: func.func @uneven_mask
// CHECK-DAG: %[[C249:.*]] = arith.constant 249 : index
// CHECK-DAG: %[[C250:.*]] = arith.constant 250 : index
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[J:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[J]], %[[C250]] : index
// CHECK: %[[JC:.*]] = arith.minsi %[[J]], %[[C249]] : index
// CHECK: %[[KEEP:.*]] = tensor.extract %{{.*}}[%[[I]], %[[JC]]] : tensor<100x250xi1>
// CHECK: %[[BOTH:.*]] = arith.andi %[[IN]], %[[KEEP]] : i1
// CHECK: arith.select %[[BOTH]], %{{.*}}, %[[NINF]] : f32
func.func @uneven_mask(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x250x16xf32>,
                       %v: tensor<1x2x250x16xf32>, %m: tensor<100x250xi1>)
    -> tensor<1x2x100x16xf32> {
  %e = tensor.empty() : tensor<1x2x100x16xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<100x250xi1>) outs(%e)
     : tensor<1x2x100x16xf32>, tensor<1x2x250x16xf32>, tensor<1x2x250x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// -----

// A dynamic key count: K is packed padded as always; V is padded only when
// the run-time count is no whole number of tiles (a whole number costs no
// copy); the padding keys are masked in the partial-tile loop only.
// CHECK-LABEL: func.func @dynamic_keys
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<1x2x?x16xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[SKV:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<1x2x?x16xf32>
// CHECK: %[[REM:.*]] = arith.remui %[[SKV]], %[[C64]] : index
// CHECK: %[[PARTIAL:.*]] = arith.cmpi ne, %[[REM]], %[[C0]] : index
// CHECK: %[[VS:.*]] = scf.if %[[PARTIAL]] -> (tensor<1x2x?x16xf32>) {
// CHECK: %[[VP:.*]] = tensor.pad %[[V]] low[0, 0, 0, 0]
// CHECK: scf.yield %[[VP]] : tensor<1x2x?x16xf32>
// CHECK: } else {
// CHECK: scf.yield %[[V]] : tensor<1x2x?x16xf32>
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[VS]]
// CHECK: arith.cmpi slt, %{{.*}}, %[[SKV]] : index
// CHECK: scf.for %{{.*}} step %[[C64]]
// CHECK-NOT: arith.cmpi
// CHECK: scf.forall.in_parallel
func.func @dynamic_keys(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>)
    -> tensor<1x2x32x16xf32> {
  %e = tensor.empty() : tensor<1x2x32x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x32x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}

// -----

// A static key count shorter than the key tile is the tile: K is packed
// as one 10-key tile, not padded to 64 keys on every call.
// CHECK-LABEL: func.func @short_keys
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 2, 1, 10, 16]
// CHECK: linalg.transpose {{.*}} outs(%{{.*}} : tensor<1x2x1x16x10xf32>)
// CHECK-NOT: tensor.pad
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C10:.*]] step %[[C10]]
func.func @short_keys(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x10x16xf32>, %v: tensor<1x2x10x16xf32>)
    -> tensor<1x2x40x16xf32> {
  %e = tensor.empty() : tensor<1x2x40x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x40x16xf32>, tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32> -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}

// -----

// One query tile per (batch, head) (8 rows, q-tile 32): no other tile
// would read a packed K again, so K is not packed; each step reads its key
// tile from K where it is, [keys, D], and its scores are dot products of
// Q rows and K rows (K's tile the second operand, indexed (j, k), of a
// (parallel, parallel, reduction) contraction), with no transposed copy.
// CHECK-LABEL: func.func @one_query_tile
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: %[[KT:.*]] = tensor.extract_slice %arg1[%{{.*}}, %{{.*}}, %{{.*}}, 0] [1, 1, %{{.*}}, 16] [1, 1, 1, 1] : tensor<1x2x10x16xf32> to tensor<?x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[KT]] : tensor<?x16xf32>, tensor<?x16xf32>) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK-NOT: linalg.transpose
func.func @one_query_tile(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x10x16xf32>, %v: tensor<1x2x10x16xf32>)
    -> tensor<1x2x8x16xf32> {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x8x16xf32>, tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The log-sum-exp: a second shared output of the forall, each query tile's
// rows (m + log2 l) ln 2 from its running max m (log2 units, 0 where no key
// took part) and sum l; the uneven last tile (70 = 2 x 32 + 6) yields it
// from its branch too.
// CHECK-LABEL: func.func @lse
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK: %[[R:.*]]:2 = scf.forall (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in (2, 4, 3) shared_outs(%[[O:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}) -> (tensor<2x4x70x16xf32>, tensor<2x4x70xf32>)
// CHECK: %[[TILES:.*]]:2 = scf.if %{{.*}} -> (tensor<?x16xf32>, tensor<?xf32>)
// CHECK: math.log2
// CHECK: arith.mulf %{{.*}}, %[[LN2]] : f32
// CHECK: else
// CHECK: math.log2
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[TILES]]#0 into %[[O]]
// CHECK-NEXT: tensor.parallel_insert_slice %[[TILES]]#1 into %[[L]][%[[B]], %[[H]], %{{.*}}] [1, 1, %{{.*}}] [1, 1, 1] : tensor<?xf32> into tensor<2x4x70xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @lse(%q: tensor<2x4x70x32xf32>, %k: tensor<2x2x90x32xf32>, %v: tensor<2x2x90x16xf32>)
    -> (tensor<2x4x70x16xf32>, tensor<2x4x70xf32>) {
  %e = tensor.empty() : tensor<2x4x70x16xf32>
  %l = tensor.empty() : tensor<2x4x70xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<2x4x70xf32>) causal
     : tensor<2x4x70x32xf32>, tensor<2x2x90x32xf32>, tensor<2x2x90x16xf32> -> tensor<2x4x70x16xf32>, tensor<2x4x70xf32>
  return %o, %lse : tensor<2x4x70x16xf32>, tensor<2x4x70xf32>
}

// -----

// The backward: a parallel loop over (batch, key/value head) owning the
// group's dQ rows and the head's dK and dV; loops over the group's query
// heads and query tiles (rows padded to whole tiles: 24 -> 32, keys 20 ->
// 24); Q_i (scaled into log2 units) and dO_i transposed once per query
// tile; per visible key tile the five products on [keys, rows] tiles:
// S^T = K_j Q_i^T, then P^T = exp2(S^T - lse) in one pass with the causal
// mask, dV_j += P^T dO_i, dP^T = V_j dO_i^T, dS^T, dK_j += dS^T Q_i,
// dQ_i^T += K_j^T dS^T; dQ_i transposed back. No [rows, Skv] tensor. As in
// the forward, the partial key tiles (the diagonal's, and the last padded
// one) are one masked loop over tile numbers, the full tiles a second loop
// over key starts whose step evaluates no mask and bounds no key.
// With the default grad-key-chunks, B x Hkv = 4 iterations are too few:
// the keys are split into chunks (3 here: 16 / 4, bounded by the 3 key
// tiles), each iteration owning its chunk's rows of dK and dV and writing
// its share of dQ, summed after the loop.
// CHUNK-LABEL: func.func @grad_causal_gqa
// CHUNK: %[[SHARES:.*]] = tensor.empty() : tensor<3x2x4x32x16xf32>
// CHUNK: %[[R:.*]]:3 = scf.forall (%[[B:.*]], %[[G:.*]], %[[C:.*]]) in (2, 2, 3) shared_outs(%[[DQ:.*]] = %[[SHARES]], %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}}) -> (tensor<3x2x4x32x16xf32>, tensor<2x2x24x16xf32>, tensor<2x2x24x8xf32>)
// CHUNK: %[[START:.*]] = arith.minui %{{.*}}, %c24 : index
// CHUNK: %[[END:.*]] = arith.minui %{{.*}}, %c24 : index
// CHUNK: %[[KEYS:.*]] = arith.subi %[[END]], %[[START]] : index
// CHUNK: tensor.empty(%[[KEYS]]) : tensor<?x16xf32>
// CHUNK: scf.forall.in_parallel
// CHUNK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[DQ]][%[[C]], %[[B]], %{{.*}}, 0, 0] [1, 1, %c2, %c32, 16]
// CHUNK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[DK]][%[[B]], %[[G]], %[[START]], 0] [1, 1, %[[KEYS]], 16]
// CHUNK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[DV]][%[[B]], %[[G]], %[[START]], 0] [1, 1, %[[KEYS]], 8]
// CHUNK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%[[R]]#0 : tensor<3x2x4x32x16xf32>)
// GRAD-LABEL: func.func @grad_causal_gqa
// GRAD: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 8, 0]
// GRAD: %[[R:.*]]:3 = scf.forall (%[[B:.*]], %[[G:.*]]) in (2, 2) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x4x32x16xf32>, tensor<2x2x24x16xf32>, tensor<2x2x24x8xf32>)
// GRAD: scf.for
// GRAD: scf.for
// GRAD: %[[QT:.*]] = linalg.transpose ins(%{{.*}} : tensor<?x16xf32>) outs(%{{.*}} : tensor<16x?xf32>) permutation = [1, 0]
// GRAD: %[[DOT:.*]] = linalg.transpose ins(%{{.*}} : tensor<?x8xf32>) outs(%{{.*}} : tensor<8x?xf32>) permutation = [1, 0]
// GRAD: %[[MASKED:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[DQT:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<16x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>)
// GRAD: %[[ST:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[QT]] : {{.*}}) outs(%{{.*}} : tensor<8x16xf32>)
// GRAD: %[[PT:.*]] = linalg.generic {{.*}} ins(%[[LSE:.*]] : tensor<16xf32>) outs(%[[ST]] : tensor<8x16xf32>)
// GRAD: arith.cmpi slt
// GRAD: arith.cmpi sle
// GRAD: math.exp2
// GRAD: linalg.generic {{.*}} ins(%[[PT]], %[[DO:.*]] : {{.*}}) outs(%{{.*}} : tensor<8x8xf32>)
// GRAD: %[[DPT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[DOT]] : {{.*}}) outs(%{{.*}} : tensor<8x16xf32>)
// GRAD: %[[DST:.*]] = linalg.generic {{.*}} ins(%[[PT]], %[[DPT]], %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>)
// GRAD: linalg.generic {{.*}} ins(%[[DST]], %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<8x16xf32>)
// GRAD: linalg.generic {{.*}} ins(%{{.*}}, %[[DST]] : {{.*}}) outs(%[[DQT]] : tensor<16x16xf32>)
// GRAD: scf.yield
// GRAD: %[[FULL:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8 iter_args(%{{.*}} = %[[MASKED]]#0, %{{.*}} = %[[MASKED]]#1, %{{.*}} = %[[MASKED]]#2)
// GRAD: linalg.generic {{.*}} ins(%{{.*}} : tensor<16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// GRAD-NOT: arith.cmpi
// GRAD: math.exp2
// GRAD: scf.yield
// GRAD: linalg.transpose ins(%[[FULL]]#0 : tensor<16x16xf32>) outs(%{{.*}} : tensor<16x16xf32>) permutation = [1, 0]
// GRAD: scf.forall.in_parallel
// GRAD-NOT: tensor<{{[0-9?]+}}x20xf32>
// GRAD-NOT: tensor<{{[0-9?]+}}x24xf32>
// GRAD: return
// Each query head of a group sums its dK and dV in fresh accumulators
// (the query-tile loop starts from zeros, not from the group's sums),
// added into the group's after its rows; with grad-head-sums=false the
// rows add into the group's sums directly, and nothing is added after.
// SUMS-LABEL: func.func @grad_causal_gqa
// SUMS: scf.for %{{.*}} iter_args(%[[DQ:.*]] = %{{.*}}, %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}}) -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>)
// SUMS-NOT: iter_args({{.*}} = %[[DK]]
// SUMS: %[[TILES:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %[[DQ]], %{{.*}} = %{{[^,]*}}, %{{.*}} = %{{[^)]*}}) -> (tensor<?x?x16xf32>
// SUMS: %[[SUMK:.*]] = linalg.generic {{.*}} ins(%[[DK]] : tensor<?x16xf32>) outs(%[[TILES]]#1 : tensor<?x16xf32>)
// SUMS: arith.addf
// SUMS: %[[SUMV:.*]] = linalg.generic {{.*}} ins(%[[DV]] : tensor<?x8xf32>) outs(%[[TILES]]#2 : tensor<?x8xf32>)
// SUMS: arith.addf
// SUMS: scf.yield %[[TILES]]#0, %[[SUMK]], %[[SUMV]] :
// ONE-SUM-LABEL: func.func @grad_causal_gqa
// ONE-SUM: scf.for %{{.*}} iter_args(%[[DQ:.*]] = %{{.*}}, %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}}) -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>)
// ONE-SUM: %[[TILES:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %[[DQ]], %{{.*}} = %[[DK]], %{{.*}} = %[[DV]])
// ONE-SUM: scf.yield %[[TILES]]#0, %[[TILES]]#1, %[[TILES]]#2 :
// ONE-SUM: scf.forall.in_parallel
func.func @grad_causal_gqa(%q: tensor<2x4x24x16xf32>, %k: tensor<2x2x20x16xf32>, %v: tensor<2x2x20x8xf32>,
                           %o: tensor<2x4x24x8xf32>, %do: tensor<2x4x24x8xf32>, %lse: tensor<2x4x24xf32>)
    -> (tensor<2x4x24x16xf32>, tensor<2x2x20x16xf32>, tensor<2x2x20x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%q, %k, %v) causal
     : tensor<2x4x24x16xf32>, tensor<2x2x20x16xf32>, tensor<2x2x20x8xf32>, tensor<2x4x24x8xf32>, tensor<2x4x24xf32>
  return %dq, %dk, %dv : tensor<2x4x24x16xf32>, tensor<2x2x20x16xf32>, tensor<2x2x20x8xf32>
}

// -----

// Sequences shorter than a tile shrink the backward's tiles: 10 rows take
// a 16-row tile (a power of two, at least 16), not a 32-row one, and 12
// keys a 16-key one (whole multiples of 16), not a 64-key one: every tile
// is padded to its full size.
// CHECK-LABEL: func.func @grad_short
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 6, 0]
// CHECK: } : tensor<3x2x10x16xf32> to tensor<3x2x16x16xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 4, 0]
// CHECK: } : tensor<3x2x12x16xf32> to tensor<3x2x16x16xf32>
// CHECK-NOT: tensor<3x2x32x16xf32>
// CHECK-NOT: tensor<3x2x64x16xf32>
// CHECK: return
func.func @grad_short(%q: tensor<3x2x10x16xf32>, %k: tensor<3x2x12x16xf32>, %v: tensor<3x2x12x16xf32>,
                      %o: tensor<3x2x10x16xf32>, %do: tensor<3x2x10x16xf32>, %lse: tensor<3x2x10xf32>)
    -> (tensor<3x2x10x16xf32>, tensor<3x2x12x16xf32>, tensor<3x2x12x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%q, %k, %v)
     : tensor<3x2x10x16xf32>, tensor<3x2x12x16xf32>, tensor<3x2x12x16xf32>, tensor<3x2x10x16xf32>, tensor<3x2x10xf32>
  return %dq, %dk, %dv : tensor<3x2x10x16xf32>, tensor<3x2x12x16xf32>, tensor<3x2x12x16xf32>
}
