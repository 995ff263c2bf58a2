// RUN: attn-opt %s --attn-widen-to-f64 --split-input-file --verify-diagnostics

// A linalg.generic whose body converts types or calls math functions: its
// float64 form is not the same computation retyped, so the pass refuses.
#id = affine_map<(d0) -> (d0)>
func.func @generic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{'linalg.generic' op has float tensors but no float64 form}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = math.exp %a : f32
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
