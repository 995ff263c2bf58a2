// RUN: attn-opt %s --attn-widen-to-f64 --split-input-file --verify-diagnostics

// A linalg.generic whose body converts types or calls math functions other
// than exp: its float64 form is not the same computation retyped, so the
// pass refuses.
#id = affine_map<(d0) -> (d0)>
func.func @generic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{'linalg.generic' op has float tensors but no float64 form}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = math.tanh %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// tensor.splat takes a scalar of the element type: not a shape-only op.
func.func @splat(%x: f32) -> tensor<4xf32> {
  // expected-error @below {{'tensor.splat' op has float tensors but no float64 form}}
  %r = tensor.splat %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A pack's padding value is a scalar of the element type.
func.func @padded_pack(%x: tensor<6x8xf32>, %pad: f32) -> tensor<2x8x4xf32> {
  %e = tensor.empty() : tensor<2x8x4xf32>
  // expected-error @below {{'linalg.pack' op has float tensors but no float64 form}}
  %p = linalg.pack %x padding_value(%pad : f32) inner_dims_pos = [0] inner_tiles = [4] into %e : tensor<6x8xf32> -> tensor<2x8x4xf32>
  return %p : tensor<2x8x4xf32>
}
