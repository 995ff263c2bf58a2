// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of attn.gather_pages.

func.func @f(%pages: tensor<40x16x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x128x64xf32> {
  // expected-error @+1 {{pages must be a rank-4 tensor [num_pages, page_size, heads, head_dim], got rank 3}}
  %k = attn.gather_pages %pages[%table] : tensor<40x16x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  return %k : tensor<4x2x128x64xf32>
}

// -----

func.func @f(%pages: tensor<40x0x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x0x64xf32> {
  // expected-error @+1 {{page_size (pages dimension 1) must be at least 1, got 0}}
  %k = attn.gather_pages %pages[%table] : tensor<40x0x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x0x64xf32>
  return %k : tensor<4x2x0x64xf32>
}

// -----

func.func @f(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x128x64xbf16> {
  // expected-error @+1 {{result element type ('bf16') must match pages element type ('f32')}}
  %k = attn.gather_pages %pages[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xbf16>
  return %k : tensor<4x2x128x64xbf16>
}

// -----

func.func @f(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x100x64xf32> {
  // expected-error @+1 {{result must have shape [batch, heads, max_pages * page_size, head_dim] = [4, 2, 128, 64], got [4, 2, 100, 64]}}
  %k = attn.gather_pages %pages[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x100x64xf32>
  return %k : tensor<4x2x100x64xf32>
}

// -----

func.func @f(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<3x2x128x64xf32> {
  // expected-error @+1 {{result must have shape [batch, heads, max_pages * page_size, head_dim] = [4, 2, 128, 64], got [3, 2, 128, 64]}}
  %k = attn.gather_pages %pages[%table] : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<3x2x128x64xf32>
  return %k : tensor<3x2x128x64xf32>
}

// -----

func.func @f(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xf32>) -> tensor<4x2x128x64xf32> {
  // expected-error @+1 {{operand #1 must be 2D tensor of 32-bit signless integer or 64-bit signless integer values}}
  %k = attn.gather_pages %pages[%table] : tensor<40x16x2x64xf32>, tensor<4x8xf32> -> tensor<4x2x128x64xf32>
  return %k : tensor<4x2x128x64xf32>
}
