// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of attn.sdpa, attn.weights and attn.yield.

func.func @f(%q: tensor<2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{query must be a rank-4 tensor [B, Hq, Sq, D], got rank 3}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{key must be a rank-4 tensor [B, Hkv, Skv, D], got rank 2}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{key element type ('f16') must match query element type ('f32')}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16> {
  // expected-error @+1 {{result element type ('bf16') must match query element type ('f32')}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xbf16>
  return %o : tensor<1x2x4x8xbf16>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<3x2x4x8xf32>, %v: tensor<3x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{key batch (3) must match query batch (1)}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<3x2x4x8xf32>, tensor<3x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{key head dim (16) must match query head dim (8)}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x0x4x8xf32>, %v: tensor<1x0x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{key/value heads must be at least 1}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x0x4x8xf32>, tensor<1x0x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x6x4x8xf32>, %k: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>, %init: tensor<1x6x4x8xf32>) -> tensor<1x6x4x8xf32> {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x6x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32> -> tensor<1x6x4x8xf32>
  return %o : tensor<1x6x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>, %m: tensor<1x1x2x4x4xi1>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{mask must have rank 1 to 4 (broadcast to [B, Hq, Sq, Skv]), got rank 5}}
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<1x1x2x4x4xi1>) outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>, %m: tensor<3x4xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{mask dim 0 (3) must be 1 or Sq (4) to broadcast to [B, Hq, Sq, Skv] = [1, 2, 4, 4]}}
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<3x4xf32>) outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>, %l: tensor<2xi32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{kv_lens must have shape [B] = [1], got [2]}}
  %o = attn.sdpa %q, %k, %v kv_lens(%l : tensor<2xi32>) outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{scale (0) must be finite and non-zero}}
  %o = attn.sdpa %q, %k, %v outs(%init) scale = 0.0 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{window must have 2 entries [left, right], got 3}}
  %o = attn.sdpa %q, %k, %v outs(%init) window = [1, 2, 3] : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{window extents must be non-negative, got [-1, 0]}}
  %o = attn.sdpa %q, %k, %v outs(%init) window = [-1, 0] : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{align = bottom_right has no effect without causal or window}}
  %o = attn.sdpa %q, %k, %v outs(%init) align = <bottom_right> : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{dropout (1) must be in [0, 1)}}
  %o = attn.sdpa %q, %k, %v outs(%init) dropout = 1.0 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{seed (5) has no effect without dropout}}
  %o = attn.sdpa %q, %k, %v outs(%init) seed = 5 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{score_mod region must take (score: f32, b: index, h: index, q_idx: index, kv_idx: index), got 2 argument(s) of types ('f32', 'index')}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
       score_mod {
       ^bb0(%s: f32, %i: index):
         attn.yield %s : f32
       }
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{score_mod region must yield 'f32', got 'f16'}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
       score_mod {
       ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
         %t = arith.truncf %s : f32 to f16
         attn.yield %t : f16
       }
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{mask_mod region must take (b: index, h: index, q_idx: index, kv_idx: index), got 4 argument(s) of types ('i32', 'index', 'index', 'index')}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
       mask_mod {
       ^bb0(%b: i32, %h: index, %i: index, %j: index):
         %t = arith.constant true
         attn.yield %t : i1
       }
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{mask_mod region must yield 'i1', got 'index'}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
       mask_mod {
       ^bb0(%b: index, %h: index, %i: index, %j: index):
         attn.yield %i : index
       }
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{value must be a rank-4 tensor [B, Hkv, Skv, Dv], got rank 3}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf16>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{value element type ('f16') must match query element type ('f32')}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf16> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x5x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{value shape [1, 2, 5, 8] must agree with key on [B, Hkv, Skv] = [1, 2, 4]}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x16xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{result must have shape [B, Hq, Sq, Dv] = [1, 2, 4, 16], got [1, 2, 4, 8]}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xi32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<1x2x4x8xi32>'}}
  %o = attn.sdpa %q, %k, %v outs(%init) : tensor<1x2x4x8xi32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{result must have shape [B, Hq, Sq, Skv] = [1, 2, 4, 6], got [1, 2, 4, 8]}}
  %p = attn.weights %q, %k outs(%init) : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x3x6x8xf32>, %init: tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32> {
  // expected-error @+1 {{query heads (2) must be a multiple of key/value heads (3)}}
  %p = attn.weights %q, %k outs(%init) : tensor<1x2x4x8xf32>, tensor<1x3x6x8xf32> -> tensor<1x2x4x6xf32>
  return %p : tensor<1x2x4x6xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32> {
  // expected-error @+1 {{dropout (-0.5) must be in [0, 1)}}
  %p = attn.weights %q, %k outs(%init) dropout = -0.5 : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x6xf32>
  return %p : tensor<1x2x4x6xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{all of {init, result} have same type}}
  %o = "attn.sdpa"(%q, %k, %v, %init) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0>, resultSegmentSizes = array<i32: 1, 0>}> ({}, {}) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @f(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.sdpa, attn.weights, attn.sdpa_grad'}}
  attn.yield %x : f32
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+2 {{expected ::mlir::attn::Alignment to be one of: top_left, bottom_right}}
  // expected-error @+1 {{failed to parse Attn_AlignmentAttr parameter 'value' which is to be a `::mlir::attn::Alignment`}}
  %o = attn.sdpa %q, %q, %q outs(%init) causal align = <middle> : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @blocks_without_size(%q: tensor<1x1x8x4xf32>, %o: tensor<2xi32>, %i: tensor<1xi32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{blocks requires block_size = [query block, key block]}}
  %r = attn.sdpa %q, %q, %q blocks(%o, %i : tensor<2xi32>, tensor<1xi32>) outs(%q)
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @block_size_alone(%q: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{block_size needs blocks(offsets, indices) or block_classes}}
  %r = attn.sdpa %q, %q, %q outs(%q) block_size = [4, 4]
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @block_size_bad(%q: tensor<1x1x8x4xf32>, %o: tensor<2xi32>, %i: tensor<1xi32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{block_size must be 2 positive extents [query block, key block], got [8, 0]}}
  %r = attn.sdpa %q, %q, %q blocks(%o, %i : tensor<2xi32>, tensor<1xi32>) outs(%q) block_size = [8, 0]
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @offsets_shape(%q: tensor<1x1x8x4xf32>, %o: tensor<2xi32>, %i: tensor<1xi32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{block offsets must have shape [ceil(Sq / bq) + 1] = [3], got [2]}}
  %r = attn.sdpa %q, %q, %q blocks(%o, %i : tensor<2xi32>, tensor<1xi32>) outs(%q) block_size = [4, 4]
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @index_out_of_range(%q: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = arith.constant dense<[0, 1, 2]> : tensor<3xi32>
  %i = arith.constant dense<[0, 2]> : tensor<2xi32>
  // expected-error @+1 {{block index 1 (2) is out of range: key blocks are 0 to 1}}
  %r = attn.sdpa %q, %q, %q blocks(%o, %i : tensor<3xi32>, tensor<2xi32>) outs(%q) block_size = [4, 4]
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @offsets_decrease(%q: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = arith.constant dense<[0, 2, 1]> : tensor<3xi32>
  %i = arith.constant dense<[0]> : tensor<1xi32>
  // expected-error @+1 {{block offsets must not decrease, got 2 then 1 at query block 1}}
  %r = attn.sdpa %q, %q, %q blocks(%o, %i : tensor<3xi32>, tensor<1xi32>) outs(%q) block_size = [4, 4]
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @classes_shape(%q: tensor<1x2x8x4xf32>, %c: tensor<1x1x2x3xi8>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{block_classes must be [B or 1, Hq or 1, ceil(Sq / bq), ceil(Skv / bk)] = [1, 2, 2, 2], got [1, 1, 2, 3]}}
  %r = attn.sdpa %q, %q, %q block_classes(%c : tensor<1x1x2x3xi8>) outs(%q) block_size = [4, 4]
     : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %r : tensor<1x2x8x4xf32>
}

// -----

func.func @lse_shape(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x7xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{lse must have shape [B, Hq, Sq] = [1, 2, 8], got [1, 2, 7]}}
  %r, %lse = attn.sdpa %q, %q, %q outs(%q) lse(%l : tensor<1x2x7xf32>)
     : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x7xf32>
  return %r : tensor<1x2x8x4xf32>
}

// -----

func.func @lse_type(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{lse element type ('f64') must be the accumulator type of 'f32' ('f32')}}
  %r, %lse = attn.sdpa %q, %q, %q outs(%q) lse(%l : tensor<1x2x8xf64>)
     : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x8xf64>
  return %r : tensor<1x2x8x4xf32>
}

// -----

func.func @lse_result_type(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{lse result type ('tensor<1x2x?xf32>') must match its init ('tensor<1x2x8xf32>')}}
  %r, %lse = attn.sdpa %q, %q, %q outs(%q) lse(%l : tensor<1x2x8xf32>)
     : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>, tensor<1x2x?xf32>
  return %r : tensor<1x2x8x4xf32>
}

// -----

func.func @grad_out_shape(%q: tensor<1x2x8x4xf32>, %o: tensor<1x2x8x5xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{out must have shape [B, Hq, Sq, Dv] = [1, 2, 8, 4], got [1, 2, 8, 5]}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %l outs(%q, %q, %q)
     : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x5xf32>, tensor<1x2x8xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

func.func @grad_lse_shape(%q: tensor<1x2x8x4xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{lse must have shape [B, Hq, Sq] = [1, 2, 8], got [1, 1, 8]}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %l outs(%q, %q, %q)
     : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1x8xf32>
  return %dq : tensor<1x2x8x4xf32>
}

// -----

func.func @grad_shared_rules(%q: tensor<1x3x8x4xf32>, %k: tensor<1x2x8x4xf32>, %l: tensor<1x3x8xf32>) -> tensor<1x3x8x4xf32> {
  // expected-error @+1 {{query heads (3) must be a multiple of key/value heads (2)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %k, %q, %q, %l outs(%q, %k, %k) dropout = 0.5 seed = 1
     : tensor<1x3x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x3x8x4xf32>, tensor<1x3x8xf32>
  return %dq : tensor<1x3x8x4xf32>
}

// -----

func.func @grad_score_mod_not_differentiable(%q: tensor<1x1x8x4xf32>, %l: tensor<1x1x8xf32>) -> tensor<1x1x8x4xf32> {
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %l outs(%q, %q, %q)
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       // expected-error @+1 {{'math.floor' in score_mod cannot be differentiated for attn.sdpa_grad}}
       %f = math.floor %s : f32
       attn.yield %f : f32
     }
  return %dq : tensor<1x1x8x4xf32>
}

// -----

func.func @scale_twice(%q: tensor<1x1x8x4xf32>, %s: tensor<f32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{takes a scale attribute (0.5) or a scale_value operand, not both}}
  %r = attn.sdpa %q, %q, %q scale_value(%s : tensor<f32>) outs(%q) scale = 0.5
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @scale_not_scalar(%q: tensor<1x1x8x4xf32>, %s: tensor<1xf32>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{operand #3 must be 0D tensor of 32-bit float or 64-bit float values}}
  %r = attn.sdpa %q, %q, %q scale_value(%s : tensor<1xf32>) outs(%q)
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

func.func @seed_without_dropout(%q: tensor<1x1x8x4xf32>, %s: tensor<i64>) -> tensor<1x1x8x4xf32> {
  // expected-error @+1 {{dropout_seed has no effect without dropout}}
  %r = attn.sdpa %q, %q, %q dropout_seed(%s : tensor<i64>) outs(%q)
     : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}
