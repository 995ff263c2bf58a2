// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of attn.gather_pages and attn.append_pages.

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

// -----

// attn.append_pages

func.func @f(%rows: tensor<4x2x64xf32>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x2x64xf32> {
  // expected-error @+1 {{rows must be a rank-4 tensor [B, heads, T, head_dim], got rank 3}}
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}

// -----

func.func @f(%rows: tensor<4x2x1x64xf32>, %cache: tensor<40x16x128xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x128xf32> {
  // expected-error @+1 {{cache must be a rank-4 tensor [num_pages, page_size, heads, head_dim], got rank 3}}
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x1x64xf32>, tensor<40x16x128xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x128xf32>
  return %c : tensor<40x16x128xf32>
}

// -----

func.func @f(%rows: tensor<4x2x1x64xf16>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x2x64xf32> {
  // expected-error @+1 {{rows element type ('f16') must match cache element type ('f32')}}
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x1x64xf16>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}

// -----

func.func @f(%rows: tensor<4x2x1x64xf32>, %cache: tensor<40x0x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x0x2x64xf32> {
  // expected-error @+1 {{page_size (cache dimension 1) must be at least 1, got 0}}
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x1x64xf32>, tensor<40x0x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x0x2x64xf32>
  return %c : tensor<40x0x2x64xf32>
}

// -----

func.func @f(%rows: tensor<4x8x1x64xf32>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x2x64xf32> {
  // expected-error @+1 {{rows must have shape [B (page table rows), heads (cache dimension 2), T, head_dim (cache dimension 3)] = [4, 2, 1, 64], got [4, 8, 1, 64]}}
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x8x1x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}

// -----

func.func @f(%rows: tensor<4x2x1x64xf32>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<3xi32>) -> tensor<40x16x2x64xf32> {
  // expected-error @+1 {{positions must have shape [B (page table rows)] = [4], got [3]}}
  %c = attn.append_pages %rows into %cache[%table] at %pos : tensor<4x2x1x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<3xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}

// -----

func.func @f(%pages: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x128x64xf32> {
  // expected-error @+1 {{result must have shape [batch, heads, max_pages * page_size, head_dim] = [4, 16, 16, 64], got [4, 2, 128, 64]}}
  %k = attn.gather_pages %pages[%table] layout = <hnd> : tensor<40x16x2x64xf32>, tensor<4x8xi32> -> tensor<4x2x128x64xf32>
  return %k : tensor<4x2x128x64xf32>
}

// -----

func.func @f(%pages: tensor<40x2x0x64xf32>, %table: tensor<4x8xi32>) -> tensor<4x2x0x64xf32> {
  // expected-error @+1 {{page_size (pages dimension 2) must be at least 1, got 0}}
  %k = attn.gather_pages %pages[%table] layout = <hnd> : tensor<40x2x0x64xf32>, tensor<4x8xi32> -> tensor<4x2x0x64xf32>
  return %k : tensor<4x2x0x64xf32>
}

// -----

func.func @f(%rows: tensor<4x2x1x64xf32>, %cache: tensor<40x16x2x64xf32>, %table: tensor<4x8xi32>, %pos: tensor<4xi32>) -> tensor<40x16x2x64xf32> {
  // expected-error @+1 {{rows must have shape [B (page table rows), heads (cache dimension 1), T, head_dim (cache dimension 3)] = [4, 16, 1, 64], got [4, 2, 1, 64]}}
  %c = attn.append_pages %rows into %cache[%table] at %pos layout = <hnd> : tensor<4x2x1x64xf32>, tensor<40x16x2x64xf32>, tensor<4x8xi32>, tensor<4xi32> -> tensor<40x16x2x64xf32>
  return %c : tensor<40x16x2x64xf32>
}
