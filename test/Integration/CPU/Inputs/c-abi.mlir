// Two functions for the C ABI test: static shapes (called through the
// descriptor entry point) and fully dynamic shapes (called through the
// plain-pointer wrapper with sizes).
func.func @static_gqa_causal(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>,
                             %v: tensor<2x2x7x8xf32>) -> tensor<2x4x5x8xf32> {
  %e = tensor.empty() : tensor<2x4x5x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32> -> tensor<2x4x5x8xf32>
  return %o : tensor<2x4x5x8xf32>
}

func.func @dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                   %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x?xf32>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x?xf32>
  %s = tensor.dim %q, %c2 : tensor<?x?x?x?xf32>
  %d = tensor.dim %v, %c3 : tensor<?x?x?x?xf32>
  %e = tensor.empty(%b, %h, %s, %d) : tensor<?x?x?x?xf32>
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}

// The destination passed in as an argument: it is an input like any other,
// which the call must leave untouched (the result goes to the out buffer).
func.func @init_argument(%q: tensor<1x2x3x8xf32>, %init: tensor<1x2x3x8xf32>)
    -> tensor<1x2x3x8xf32> {
  %o = attn.sdpa %q, %q, %q outs(%init)
     : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf32>
  return %o : tensor<1x2x3x8xf32>
}

// Query, key and value taken as views (the C ABI's row-strided buffers):
// [B, H, L, D] read from [B, L, H, D] projections in place, any offset.
func.func @views(
    %q: tensor<2x4x5x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>},
    %k: tensor<2x2x7x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>},
    %v: tensor<2x2x7x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>})
    -> tensor<2x4x5x8xf32> {
  %e = tensor.empty() : tensor<2x4x5x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32> -> tensor<2x4x5x8xf32>
  return %o : tensor<2x4x5x8xf32>
}

// The output written into a destination the caller lends: a [B, H, L, D]
// view of a [B, L, H, D] buffer (docs/CpuABI.md, "Destinations"); no
// result, no copy.
func.func @destination(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>,
                       %v: tensor<2x2x7x8xf32>,
                       %out: memref<2x4x5x8xf32, strided<[?, ?, ?, 1], offset: ?>>) {
  %e = tensor.empty() : tensor<2x4x5x8xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32> -> tensor<2x4x5x8xf32>
  bufferization.materialize_in_destination %o in restrict writable %out
     : (tensor<2x4x5x8xf32>, memref<2x4x5x8xf32, strided<[?, ?, ?, 1], offset: ?>>) -> ()
  return
}
