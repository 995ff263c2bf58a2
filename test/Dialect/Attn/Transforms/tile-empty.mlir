// RUN: attn-opt %s --attn-tile | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline -o /dev/null
// RUN: attn-opt %s --attn-cpu-pipeline="contraction-conflict-stride=4096" -o /dev/null
// RUN: attn-run %s --entry=no_batch --check | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry=no_keys --check | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry=grad_no_keys --check | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry=grad_no_keys --check --cpu-pipeline="lowering=reference" | FileCheck %s --check-prefix=CHECKED
// Empty operands, each found by attn-mutate-fuzzer (which set a size of a
// test to 0; docs/Testing.md): a batch of 0 made attn-tile's choice of key
// chunks for few (batch, head) pairs divide by their count; no keys made
// the key tile 0 keys long (a division by it), and, through the reference
// lowering that --check builds, the cache and register blocks of
// attn-parallelize-contractions and attn-vectorize-tiles divide by the
// extents; sdpa_grad's padded tiles sliced past an empty operand's end.
// Now: one chunk, a key tile of one, empty products left to their loops,
// and an empty sdpa_grad to the reference lowering. Every row sees no key:
// the output is 0, and so are the gradients.
// CHECKED-NOT: FAIL
// CHECKED: result #0 {{.*}} ok
// CHECKED-NOT: FAIL

// CHECK-LABEL: func.func @no_batch
// CHECK: scf.forall {{.*}} in (0, 2, 1)
func.func @no_batch(%q: tensor<0x2x100x128xf32>, %k: tensor<0x2x300x128xf32>,
                    %v: tensor<0x2x300x128xf32>) -> tensor<0x2x100x128xf32> {
  %e = tensor.empty() : tensor<0x2x100x128xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<0x2x100x128xf32>, tensor<0x2x300x128xf32>, tensor<0x2x300x128xf32> -> tensor<0x2x100x128xf32>
  return %o : tensor<0x2x100x128xf32>
}

// CHECK-LABEL: func.func @no_keys
// CHECK: scf.forall
// CHECK-NOT: attn.sdpa
func.func @no_keys(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x0x32xf32>,
                   %v: tensor<1x2x0x16xf32>) -> tensor<1x2x64x16xf32> {
  %e = tensor.empty() : tensor<1x2x64x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x64x32xf32>, tensor<1x2x0x32xf32>, tensor<1x2x0x16xf32> -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// CHECK-LABEL: func.func @grad_no_keys
// CHECK: attn.sdpa_grad
func.func @grad_no_keys(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x0x16xf32>,
                        %v: tensor<1x2x0x16xf32>, %do: tensor<1x2x9x16xf32>)
    -> (tensor<1x2x9x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>) {
  %e = tensor.empty() : tensor<1x2x9x16xf32>
  %ek = tensor.empty() : tensor<1x2x0x16xf32>
  %l = tensor.empty() : tensor<1x2x9xf32>
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<1x2x9xf32>)
      : tensor<1x2x9x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32> -> tensor<1x2x9x16xf32>, tensor<1x2x9xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%e, %ek, %ek)
      : tensor<1x2x9x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9xf32>
  return %dq, %dk, %dv : tensor<1x2x9x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>
}

// A projection of a sequence-first input with no batch (the mutation of
// run-projections.mlir's @conflicting_sequence_first_dynamic: batch 3 set to
// 0): attn-parallelize-contractions split the transpose [0, ?, 1024] into
// blocks of its leading extents and divided by the 0.
// CHECK-LABEL: func.func @empty_sequence_first
#lhs = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#rhs = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @empty_sequence_first(%x: tensor<?x0x1024xf32>, %w: tensor<1024x160xf32>)
    -> tensor<0x?x160xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x0x1024xf32>
  %t_init = tensor.empty(%n) : tensor<0x?x1024xf32>
  %t = linalg.transpose ins(%x : tensor<?x0x1024xf32>) outs(%t_init : tensor<0x?x1024xf32>) permutation = [1, 0, 2]
  %o_init = tensor.empty(%n) : tensor<0x?x160xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<0x?x160xf32>) -> tensor<0x?x160xf32>
  %o = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%t, %w : tensor<0x?x1024xf32>, tensor<1024x160xf32>) outs(%o_zero : tensor<0x?x160xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<0x?x160xf32>
  return %o : tensor<0x?x160xf32>
}
