// RUN: attn-opt %s --attn-record-abi-sizes --split-input-file | FileCheck %s

// The value's keys are the key's; the output's rows the query's (traced
// through the init's tensor.empty and tensor.dim). Quadruples are (param,
// dimension, other param, other dimension, kind), the output numbered after the
// three inputs, and the kind last: 0 equal.
// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: attn.abi_size_relations = array<i64: 2, 2, 1, 2, 0, 3, 2, 0, 2, 0>
func.func @sdpa(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

// A mask's `?` is read at full extent: its heads against the query's (a
// constant: the query's are static), its rows and keys against the
// query's and the key's. The static 1 broadcasts and is not listed; a
// static size was the verifier's to compare.
// CHECK-LABEL: func.func @mask
// CHECK-SAME: attn.abi_size_relations = array<i64: 2, 1, -1, 4, 0, 2, 2, 0, 2, 0, 2, 3, 1, 2, 0, 3, 2, 0, 2, 0>
func.func @mask(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>,
                %m: tensor<1x?x?x?xf32>) -> tensor<2x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<2x4x?x16xf32>
  %e = tensor.empty(%n) : tensor<2x4x?x16xf32>
  %o = attn.sdpa %q, %k, %k mask(%m : tensor<1x?x?x?xf32>) outs(%e)
     : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// attn.weights: a [B, Hq, Sq, Skv] result whose init was sized by hand
// from other arguments than the ones the op reads: its rows must be the
// query's and its columns the key's.
// CHECK-LABEL: func.func @weights
// CHECK-SAME: attn.abi_size_relations = array<i64: 2, 0, 0, 2, 0, 3, 0, 1, 2, 0, 4, 2, 2, 0, 0, 4, 3, 3, 0, 0>
func.func @weights(%q: tensor<1x1x?x8xf32>, %k: tensor<1x1x?x8xf32>,
                   %rows: tensor<?xf32>, %cols: tensor<?xf32>) -> tensor<1x1x?x?xf32> {
  %c0 = arith.constant 0 : index
  %r = tensor.dim %rows, %c0 : tensor<?xf32>
  %c = tensor.dim %cols, %c0 : tensor<?xf32>
  %e = tensor.empty(%r, %c) : tensor<1x1x?x?xf32>
  %w = attn.weights %q, %k outs(%e) : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x?xf32>
  return %w : tensor<1x1x?x?xf32>
}

// -----

// A linalg contraction: the reduction's extent of B against A's (which
// bounds the loop), the output's rows and columns against A's and B's.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: attn.abi_size_relations = array<i64: 1, 0, 0, 1, 0, 2, 0, 0, 0, 0, 2, 1, 1, 1, 0>
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %p = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %p : tensor<?x?xf32>
}

// -----

// attn.multihead (not in destination style): key and value batches
// against the query's, the value's length against the key's, the
// padding mask against [N, S]; the output is the query's shape.
// CHECK-LABEL: func.func @multihead
// CHECK-SAME: attn.abi_size_relations = array<i64: 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 1, 1, 1, 0, 2, 1, 1, 1, 0, 6, 0, 0, 0, 0, 6, 1, 0, 1, 0>
func.func @multihead(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>,
                     %wi: tensor<24x8xf32>, %wo: tensor<8x8xf32>,
                     %pad: tensor<?x?xi1>) -> tensor<?x?x8xf32> {
  %out = attn.multihead %q, %k, %v in_proj(%wi : tensor<24x8xf32>) out_proj(%wo : tensor<8x8xf32>)
      key_padding_mask(%pad : tensor<?x?xi1>) num_heads = 2 batch_first
    : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %out : tensor<?x?x8xf32>
}

// -----

// Grouped-query heads: dynamic query heads a multiple of the dynamic
// key/value heads (kind 1); with static query heads (4), dynamic key/value
// heads a divisor of 4 (kind 2). The value's heads are the key's; the
// init given as an argument and the output have the query's heads.
// CHECK-LABEL: func.func @gqa
// CHECK-SAME: attn.abi_size_relations = array<i64: 0, 1, 1, 1, 1, 2, 1, 1, 1, 0, 3, 1, 0, 1, 0, 4, 1, 3, 1, 0>
// CHECK-LABEL: func.func @gqa_static_query_heads
// CHECK-SAME: attn.abi_size_relations = array<i64: 1, 1, -1, 4, 2, 2, 1, 1, 1, 0>
func.func @gqa(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x4x8xf32>,
               %v: tensor<1x?x4x8xf32>, %e: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32> -> tensor<1x?x4x8xf32>
  return %o : tensor<1x?x4x8xf32>
}

func.func @gqa_static_query_heads(%q: tensor<1x4x4x8xf32>, %k: tensor<1x?x4x8xf32>,
                                  %v: tensor<1x?x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x4x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32> -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// Sizes the function computes by arithmetic are not traced (nothing is
// recorded for the output); functions with static shapes and private
// functions get no attribute.
// CHECK-LABEL: func.func @doubled
// CHECK-NOT: attn.abi_size_relations
// CHECK-LABEL: func.func @static
// CHECK-NOT: attn.abi_size_relations
// CHECK-LABEL: func.func private @private
// CHECK-NOT: attn.abi_size_relations
func.func @doubled(%a: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %m = arith.muli %n, %c2 : index
  %e = tensor.empty(%m) : tensor<?xf32>
  return %e : tensor<?xf32>
}

func.func @static(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func private @private(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %s = linalg.add ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%a : tensor<?xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

// Key lengths read from a parameter: each element in [0, Skv], here the
// static 64 keys the block table's pages hold (the gathered key tensor's
// extent, a constant); beside them the size relation of the lengths against
// the batch (3, 0 equal to the query's 2: a constant).
// Value checks (attn.abi_value_checks: kind, parameters, then (param,
// dimension) per size, -1 for a constant): the lengths within the 64 keys
// (kind 0: lengths 3; -1, 64), and the block table's entries that name
// pages of keys against the cache's 9 pages of 16 keys (kind 1: table 2,
// lengths 3; -1, 9; -1, 16), once though both key and value read it.
// CHECK-LABEL: func.func @paged_lengths
// CHECK-SAME: attn.abi_size_relations = array<i64: 3, 0, -1, 2, 0>
// CHECK-SAME: attn.abi_value_checks = [array<i64: 0, 3, -1, 64>, array<i64: 1, 2, 3, -1, 9, -1, 16>]
func.func @paged_lengths(%q: tensor<2x4x1x16xf32>, %kc: tensor<9x16x4x16xf32>,
                         %pt: tensor<2x4xi32>, %lens: tensor<?xi32>) -> tensor<2x4x1x16xf32> {
  %k = attn.gather_pages %kc[%pt] : tensor<9x16x4x16xf32>, tensor<2x4xi32> -> tensor<2x4x64x16xf32>
  %e = tensor.empty() : tensor<2x4x1x16xf32>
  %o = attn.sdpa %q, %k, %k kv_lens(%lens : tensor<?xi32>) outs(%e)
     : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// Lengths against a dynamic key count: the key's dimension 2.
// CHECK-LABEL: func.func @lengths_against_keys
// CHECK-SAME: attn.abi_value_checks = [array<i64: 0, 3, 1, 2>]
func.func @lengths_against_keys(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x?x16xf32>,
                                %v: tensor<2x4x?x16xf32>, %lens: tensor<2xi64>) -> tensor<2x4x8x16xf32> {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi64>) outs(%e)
     : tensor<2x4x8x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// The hnd layout keeps a page's keys in dimension 2; the key cache's
// pages are a parameter's size (1, 0), the value cache's a constant: one
// check each. A table or lengths the function computes are not recorded
// (only parameters' values are read).
// CHECK-LABEL: func.func @paged_hnd
// CHECK-SAME: attn.abi_value_checks = [array<i64: 0, 4, -1, 64>, array<i64: 1, 2, 4, 1, 0, -1, 16>, array<i64: 1, 2, 4, -1, 9, -1, 16>]
// CHECK-LABEL: func.func @paged_computed_lengths
// CHECK-NOT: attn.abi_value_checks
// CHECK: return
func.func @paged_hnd(%q: tensor<2x4x1x16xf32>, %kc: tensor<?x4x16x16xf32>,
                     %pt: tensor<2x4xi32>, %vc: tensor<9x4x16x16xf32>,
                     %lens: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
  %k = attn.gather_pages %kc[%pt] layout = <hnd> : tensor<?x4x16x16xf32>, tensor<2x4xi32> -> tensor<2x4x64x16xf32>
  %v = attn.gather_pages %vc[%pt] layout = <hnd> : tensor<9x4x16x16xf32>, tensor<2x4xi32> -> tensor<2x4x64x16xf32>
  %e = tensor.empty() : tensor<2x4x1x16xf32>
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : tensor<2xi32>) outs(%e)
     : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}
func.func @paged_computed_lengths(%q: tensor<2x4x1x16xf32>, %kc: tensor<9x16x4x16xf32>,
                                  %pt: tensor<2x4xi32>, %lens: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
  %k = attn.gather_pages %kc[%pt] : tensor<9x16x4x16xf32>, tensor<2x4xi32> -> tensor<2x4x64x16xf32>
  %one = arith.constant dense<1> : tensor<2xi32>
  %more = arith.addi %lens, %one : tensor<2xi32>
  %e = tensor.empty() : tensor<2x4x1x16xf32>
  %o = attn.sdpa %q, %k, %k kv_lens(%more : tensor<2xi32>) outs(%e)
     : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// Rows appended into pages (kind 2: table 2, positions 3; the cache's
// pages (1, 0), its 16 keys per page, the 3 new rows): each sequence's rows
// fit its table row, their pages are the cache's, no page written twice.
// CHECK-LABEL: func.func @append
// CHECK-SAME: attn.abi_value_checks = [array<i64: 2, 2, 3, 1, 0, -1, 16, -1, 3>]
func.func @append(%rows: tensor<2x4x3x16xf32>, %cache: tensor<?x16x4x16xf32>,
                  %pt: tensor<2x?xi32>, %pos: tensor<2xi64>) -> tensor<?x16x4x16xf32> {
  %c = attn.append_pages %rows into %cache[%pt] at %pos
     : tensor<2x4x3x16xf32>, tensor<?x16x4x16xf32>, tensor<2x?xi32>, tensor<2xi64> -> tensor<?x16x4x16xf32>
  return %c : tensor<?x16x4x16xf32>
}
