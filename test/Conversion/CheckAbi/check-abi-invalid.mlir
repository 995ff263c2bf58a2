// RUN: attn-opt %s --attn-check-abi --split-input-file --verify-diagnostics

// Relations must name buffer dimensions (or a non-negative constant) and a
// kind.
// expected-error @+1 {{attn.abi_size_relations entry 0 (0, 2, 1, 0, 0) is not two buffer dimensions, or one and a size, and a kind (0 equal, 1 a multiple, 2 a divisor)}}
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

// Kinds 0-2: the values of lengths are value checks of their own.
// expected-error @+1 {{attn.abi_size_relations entry 1 (0, 0, 1, 0, 3) is not two buffer dimensions}}
func.func @kind(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 0, 1, 0, 0, 0, 0, 1, 0, 3>} {
  return
}

// -----

// Value checks: a kind, its integer buffers, its sizes. Lengths are a 1-D
// integer buffer, not floats.
// expected-error @+1 {{attn.abi_value_checks entry 0 (array<i64: 0, 0, 1, 0>) is not a kind (0 lengths within a size, 1 pages of keys within a cache, 2 rows appended into pages) with its integer buffers (lengths; block table, lengths; block table, positions) and sizes (a buffer dimension, or -1 and a constant)}}
func.func @values_of_floats(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_value_checks = [array<i64: 0, 0, 1, 0>]} {
  return
}

// -----

// A block table is 2-D.
// expected-error @+1 {{attn.abi_value_checks entry 1 (array<i64: 1, 1, 1, 2, 0, 2, 1>) is not a kind}}
func.func @flat_table(%table: memref<2x4xi32>, %lens: memref<2xi32>,
                      %pages: memref<9x16x4x16xf32>)
    attributes {attn.abi_value_checks = [array<i64: 1, 0, 1, 2, 0, 2, 1>, array<i64: 1, 1, 1, 2, 0, 2, 1>]} {
  return
}

// -----

// A kind with too few fields, an unknown kind, a parameter past the last,
// a negative constant size.
// expected-error @+1 {{attn.abi_value_checks entry 0 (array<i64: 2, 0, 1, 2, 0, 2, 1>) is not a kind}}
func.func @short_append(%table: memref<2x4xi32>, %pos: memref<2xi32>,
                        %pages: memref<9x16x4x16xf32>)
    attributes {attn.abi_value_checks = [array<i64: 2, 0, 1, 2, 0, 2, 1>]} {
  return
}

// -----

// expected-error @+1 {{attn.abi_value_checks entry 0 (array<i64: 3, 0, 0, 0>) is not a kind}}
func.func @unknown_kind(%a: memref<?xi32>)
    attributes {attn.abi_value_checks = [array<i64: 3, 0, 0, 0>]} {
  return
}

// -----

// expected-error @+1 {{attn.abi_value_checks entry 0 (array<i64: 0, 3, 0, 0>) is not a kind}}
func.func @past_the_parameters(%a: memref<?xi32>)
    attributes {attn.abi_value_checks = [array<i64: 0, 3, 0, 0>]} {
  return
}

// -----

// expected-error @+1 {{attn.abi_value_checks entry 0 (array<i64: 0, 0, -1, -5>) is not a kind}}
func.func @negative_bound(%a: memref<?xi32>)
    attributes {attn.abi_value_checks = [array<i64: 0, 0, -1, -5>]} {
  return
}

// -----

// expected-error @+1 {{attn.abi_value_checks must be an array of i64 arrays, got array<i64: 0, 0, -1, 5>}}
func.func @flat(%a: memref<?xi32>)
    attributes {attn.abi_value_checks = array<i64: 0, 0, -1, 5>} {
  return
}

// -----

// expected-error @+1 {{attn.abi_size_relations must be an i64 array of (param, dimension, other param, other dimension, kind) tuples, got array<i64: 0, 0, 1, 0>}}
func.func @short(%a: memref<?xf32>, %b: memref<?xf32>)
    attributes {attn.abi_size_relations = array<i64: 0, 0, 1, 0>} {
  return
}
