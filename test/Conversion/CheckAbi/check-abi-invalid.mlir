// RUN: attn-opt %s --attn-check-abi --split-input-file --verify-diagnostics

// Equalities must name buffer dimensions (or a non-negative constant).
// expected-error @+1 {{attn.abi_size_equalities entry 0 (0, 2, 1, 0) is not two buffer dimensions, or one and a size}}
func.func @past_rank(%a: memref<?x?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_equalities = array<i64: 0, 2, 1, 0>} {
  return
}

// -----

// expected-error @+1 {{attn.abi_size_equalities entry 0 (1, 0, -1, 3) is not two buffer dimensions, or one and a size}}
func.func @scalar(%a: memref<?xf32>, %n: index)
    attributes {attn.abi_size_equalities = array<i64: 1, 0, -1, 3>} {
  return
}

// -----

// expected-error @+1 {{attn.abi_size_equalities must be an i64 array of (param, dimension, other param, other dimension) quadruples, got array<i64: 0, 0, 1>}}
func.func @short(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_equalities = array<i64: 0, 0, 1>} {
  return
}
