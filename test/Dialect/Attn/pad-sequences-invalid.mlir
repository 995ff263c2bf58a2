// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of attn.pad_sequences and attn.unpad_sequences.

func.func @f(%packed: tensor<300x64xf32>, %cu: tensor<4xi32>) -> tensor<3x8x128x64xf32> {
  // expected-error @+1 {{packed must be a rank-3 tensor [T, heads, head_dim], got rank 2}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf32>, tensor<3xi32>
  return %p : tensor<3x8x128x64xf32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<3x8x64xf32> {
  // expected-error @+1 {{result must be a rank-4 tensor [B, heads, S, head_dim], got rank 3}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x64xf32>, tensor<3xi32>
  return %p : tensor<3x8x64xf32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<0xi32>) -> tensor<3x8x128x64xf32> {
  // expected-error @+1 {{cu_seqlens must have B + 1 >= 1 entries, got 0}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<0xi32> -> tensor<3x8x128x64xf32>, tensor<3xi32>
  return %p : tensor<3x8x128x64xf32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<3x8x128x64xf16> {
  // expected-error @+1 {{result element type ('f16') must match packed element type ('f32')}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf16>, tensor<3xi32>
  return %p : tensor<3x8x128x64xf16>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<4x8x128x64xf32> {
  // expected-error @+1 {{result must have shape [B (cu_seqlens entries - 1), heads (packed dimension 1), S, head_dim (packed dimension 2)] = [3, 8, 128, 64], got [4, 8, 128, 64]}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<4x8x128x64xf32>, tensor<4xi32>
  return %p : tensor<4x8x128x64xf32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<3x4x128x32xf32> {
  // expected-error @+1 {{result must have shape [B (cu_seqlens entries - 1), heads (packed dimension 1), S, head_dim (packed dimension 2)] = [3, 8, 128, 64], got [3, 4, 128, 32]}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x4x128x32xf32>, tensor<3xi32>
  return %p : tensor<3x4x128x32xf32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<3x8x?x64xf32> {
  // expected-error @+1 {{the padded length S (result dimension 2) must be static: it bounds the longest sequence}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x?x64xf32>, tensor<3xi32>
  return %p : tensor<3x8x?x64xf32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<3xi64> {
  // expected-error @+1 {{lengths element type ('i64') must match cu_seqlens element type ('i32')}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf32>, tensor<3xi64>
  return %l : tensor<3xi64>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{lengths must have shape [B (cu_seqlens entries - 1)] = [3], got [2]}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xi32> -> tensor<3x8x128x64xf32>, tensor<2xi32>
  return %l : tensor<2xi32>
}

// -----

func.func @f(%packed: tensor<300x8x64xf32>, %cu: tensor<4xf32>) -> tensor<3x8x128x64xf32> {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values}}
  %p, %l = attn.pad_sequences %packed[%cu] : tensor<300x8x64xf32>, tensor<4xf32> -> tensor<3x8x128x64xf32>, tensor<3xi32>
  return %p : tensor<3x8x128x64xf32>
}

// -----

func.func @f(%padded: tensor<3x8x128x64xf32>, %cu: tensor<4xi32>, %init: tensor<300x8x64x1xf32>) -> tensor<300x8x64x1xf32> {
  // expected-error @+1 {{init must be a rank-3 tensor [T, heads, head_dim], got rank 4}}
  %o = attn.unpad_sequences %padded[%cu] outs(%init) : tensor<3x8x128x64xf32>, tensor<4xi32> -> tensor<300x8x64x1xf32>
  return %o : tensor<300x8x64x1xf32>
}

// -----

func.func @f(%padded: tensor<2x8x128x64xf32>, %cu: tensor<4xi32>, %init: tensor<300x8x64xf32>) -> tensor<300x8x64xf32> {
  // expected-error @+1 {{padded must have shape [B (cu_seqlens entries - 1), heads (init dimension 1), S, head_dim (init dimension 2)] = [3, 8, 128, 64], got [2, 8, 128, 64]}}
  %o = attn.unpad_sequences %padded[%cu] outs(%init) : tensor<2x8x128x64xf32>, tensor<4xi32> -> tensor<300x8x64xf32>
  return %o : tensor<300x8x64xf32>
}

// -----

func.func @f(%padded: tensor<3x8x128x64xbf16>, %cu: tensor<4xi32>, %init: tensor<300x8x64xf32>) -> tensor<300x8x64xf32> {
  // expected-error @+1 {{padded element type ('bf16') must match init element type ('f32')}}
  %o = attn.unpad_sequences %padded[%cu] outs(%init) : tensor<3x8x128x64xbf16>, tensor<4xi32> -> tensor<300x8x64xf32>
  return %o : tensor<300x8x64xf32>
}
