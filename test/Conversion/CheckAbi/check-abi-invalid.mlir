// RUN: attn-opt %s --attn-check-abi --split-input-file --verify-diagnostics

// Relations must name buffer dimensions (or a non-negative constant) and a
// kind.
// expected-error @+1 {{attn.abi_size_relations entry 0 (0, 2, 1, 0, 0) is not two buffer dimensions, or one and a size, and a kind (0 equal, 1 a multiple, 2 a divisor, 3 the elements of a 1-D integer buffer within the size, 4 a 2-D integer buffer, a 1-D one and a buffer dimension: block table, lengths, pages)}}
func.func @past_rank(%a: memref<?x?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 2, 1, 0, 0>} {
  return
}

// -----

// expected-error @+1 {{attn.abi_size_relations entry 0 (1, 0, -1, 3, 0) is not two buffer dimensions}}
func.func @scalar(%a: memref<?xf32>, %n: index)
    attributes {attn.abi_size_relations = array<i64: 1, 0, -1, 3, 0>} {
  return
}

// -----

// expected-error @+1 {{attn.abi_size_relations entry 1 (0, 0, 1, 0, 5) is not two buffer dimensions}}
func.func @kind(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 0, 1, 0, 0, 0, 0, 1, 0, 5>} {
  return
}

// -----

// Kind 4 reads a 2-D integer block table (0), 1-D integer lengths (1) and
// a dimension of the pages (2): here the table is a float buffer.
// expected-error @+1 {{attn.abi_size_relations entry 0 (0, 1, 2, 1, 4) is not two buffer dimensions}}
func.func @pages_of_floats(%table: memref<2x4xf32>, %lens: memref<2xi32>,
                           %pages: memref<9x16x4x16xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 1, 2, 1, 4>} {
  return
}

// -----

// The lengths must be a parameter of the function (here: past its last).
// expected-error @+1 {{attn.abi_size_relations entry 0 (0, 3, 2, 1, 4) is not two buffer dimensions}}
func.func @pages_without_lengths(%table: memref<2x4xi32>, %lens: memref<2xi32>,
                                 %pages: memref<9x16x4x16xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 3, 2, 1, 4>} {
  return
}

// -----

// Kind 3 bounds the elements of a 1-D integer buffer (lengths), not floats.
// expected-error @+1 {{attn.abi_size_relations entry 0 (0, 0, 1, 0, 3) is not two buffer dimensions}}
func.func @values_of_floats(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 0, 1, 0, 3>} {
  return
}

// -----

// expected-error @+1 {{attn.abi_size_relations must be an i64 array of (param, dimension, other param, other dimension, kind) tuples, got array<i64: 0, 0, 1, 0>}}
func.func @short(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 0, 1, 0>} {
  return
}
