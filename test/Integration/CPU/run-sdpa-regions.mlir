// attn.sdpa with modifier regions (a tanh soft-cap score_mod, an ALiBi-like
// score_mod with head slopes, a document-style mask_mod) and dropout,
// against the float64 reference.
// RUN: attn-run %s --check --entry=softcap | FileCheck %s
// RUN: attn-run %s --check --entry=alibi_causal | FileCheck %s
// RUN: attn-run %s --check --entry=documents | FileCheck %s
// RUN: attn-run %s --check --entry=both_regions_bf16 | FileCheck %s
// RUN: attn-run %s --check --entry=dropout | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @softcap(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>)
    -> tensor<1x2x6x8xf32> {
  %e = tensor.empty() : tensor<1x2x6x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %cap = arith.constant 0.5 : f32
       %x = arith.divf %s, %cap : f32
       %t = math.tanh %x : f32
       %r = arith.mulf %t, %cap : f32
       attn.yield %r : f32
     }
  return %o : tensor<1x2x6x8xf32>
}

func.func @alibi_causal(%q: tensor<1x4x9x8xf32>, %k: tensor<1x4x9x8xf32>, %v: tensor<1x4x9x8xf32>)
    -> tensor<1x4x9x8xf32> {
  %e = tensor.empty() : tensor<1x4x9x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x4x9x8xf32>, tensor<1x4x9x8xf32>, tensor<1x4x9x8xf32> -> tensor<1x4x9x8xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %d = arith.subi %j, %i : index
       %c1 = arith.constant 1 : index
       %h1 = arith.addi %h, %c1 : index
       %di = arith.index_cast %d : index to i64
       %hi = arith.index_cast %h1 : index to i64
       %df = arith.sitofp %di : i64 to f32
       %hf = arith.sitofp %hi : i64 to f32
       %slope = arith.constant 0.125 : f32
       %m = arith.mulf %hf, %slope : f32
       %bias = arith.mulf %df, %m : f32
       %r = arith.addf %s, %bias : f32
       attn.yield %r : f32
     }
  return %o : tensor<1x4x9x8xf32>
}

// Three documents of 4, 5 and 3 tokens: a query sees only keys of its own
// document (boundaries at 4 and 9).
func.func @documents(%q: tensor<1x2x12x8xf32>, %k: tensor<1x2x12x8xf32>, %v: tensor<1x2x12x8xf32>)
    -> tensor<1x2x12x8xf32> {
  %e = tensor.empty() : tensor<1x2x12x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x12x8xf32>, tensor<1x2x12x8xf32>, tensor<1x2x12x8xf32> -> tensor<1x2x12x8xf32>
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c4 = arith.constant 4 : index
       %c9 = arith.constant 9 : index
       %i4 = arith.cmpi uge, %i, %c4 : index
       %i9 = arith.cmpi uge, %i, %c9 : index
       %j4 = arith.cmpi uge, %j, %c4 : index
       %j9 = arith.cmpi uge, %j, %c9 : index
       %same4 = arith.cmpi eq, %i4, %j4 : i1
       %same9 = arith.cmpi eq, %i9, %j9 : i1
       %same = arith.andi %same4, %same9 : i1
       attn.yield %same : i1
     }
  return %o : tensor<1x2x12x8xf32>
}

func.func @both_regions_bf16(%q: tensor<1x2x8x16xbf16>, %k: tensor<1x2x8x16xbf16>, %v: tensor<1x2x8x16xbf16>)
    -> tensor<1x2x8x16xbf16> {
  %e = tensor.empty() : tensor<1x2x8x16xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %two = arith.constant 2.0 : f32
       %r = arith.mulf %s, %two : f32
       attn.yield %r : f32
     } mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %c2 = arith.constant 2 : index
       %r = arith.remui %j, %c2 : index
       %c0 = arith.constant 0 : index
       %even = arith.cmpi eq, %r, %c0 : index
       attn.yield %even : i1
     }
  return %o : tensor<1x2x8x16xbf16>
}

func.func @dropout(%q: tensor<2x2x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>)
    -> tensor<2x2x8x8xf32> {
  %e = tensor.empty() : tensor<2x2x8x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal dropout = 0.3 seed = 1234
     : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  return %o : tensor<2x2x8x8xf32>
}
