// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of attn.multihead.

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{query, key and value must all be rank 3 (batched) or all rank 2 (unbatched), got ranks 3, 2, 3}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<5x16xf32>, %k: tensor<6x16xf32>, %v: tensor<6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{batch_first needs batched (rank-3) inputs}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<5x16xf32>, tensor<6x16xf32>, tensor<6x16xf32> -> tensor<5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %wo16: tensor<16x16xf16>) {
  // expected-error @+1 {{operand #4 element type ('f16') must match query element type ('f32')}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo16 : tensor<16x16xf16>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<3x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{key batch (3) and value batch (2) must match query batch (2)}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<3x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x7x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{value length (7) must match key length (6)}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x7x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{embed_dim (16) must be divisible by num_heads (3)}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 3 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{expects either in_proj or all three of q_proj, k_proj and v_proj}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) q_proj(%wo : tensor<16x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{expects either in_proj or all three of q_proj, k_proj and v_proj}}
  %r0 = attn.multihead %q, %k, %v q_proj(%wo : tensor<16x16xf32>) k_proj(%wo : tensor<16x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{in_proj requires kdim (8) and vdim (16) to equal embed_dim (16); use q_proj, k_proj and v_proj}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %w: tensor<48x8xf32>) {
  // expected-error @+1 {{in_proj must have shape [3 * embed_dim, embed_dim] = [48, 16], got [48, 8]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%w : tensor<48x8xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{k_proj must have shape [embed_dim, kdim] = [16, 8], got [16, 16]}}
  %r0 = attn.multihead %q, %k, %v q_proj(%wo : tensor<16x16xf32>) k_proj(%wo : tensor<16x16xf32>) v_proj(%wo : tensor<16x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{in_proj_bias must have shape [3 * embed_dim] = [48], got [16]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) in_proj_bias(%b : tensor<16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %bk: tensor<1x1x16xf32>) {
  // expected-error @+1 {{bias_k and bias_v must be given together}}
  %r = "attn.multihead"(%q, %k, %v, %wi, %bk, %wo) <{num_heads = 4 : i64, batch_first, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0>}> : (tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<48x16xf32>, tensor<1x1x16xf32>, tensor<16x16xf32>) -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %bk: tensor<1x16xf32>) {
  // expected-error @+1 {{bias_k must have shape [1, 1, embed_dim] = [1, 1, 16], got [1, 16]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) bias_kv(%bk, %bk : tensor<1x16xf32>, tensor<1x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{out_proj must have shape [embed_dim, embed_dim] = [16, 16], got [48, 16]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wi : tensor<48x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %b: tensor<48xf32>) {
  // expected-error @+1 {{out_proj_bias must have shape [embed_dim] = [16], got [48]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) out_proj_bias(%b : tensor<48xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %m: tensor<2x5xi1>) {
  // expected-error @+1 {{key_padding_mask must have shape [N, S] = [2, 6], got [2, 5]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) key_padding_mask(%m : tensor<2x5xi1>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<5x16xf32>, %k: tensor<6x16xf32>, %v: tensor<6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %m: tensor<2x6xi1>) {
  // expected-error @+1 {{key_padding_mask must have shape [S] = [6], got [2, 6]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) key_padding_mask(%m : tensor<2x6xi1>) num_heads = 4 : tensor<5x16xf32>, tensor<6x16xf32>, tensor<6x16xf32> -> tensor<5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %m: tensor<6x5xf32>) {
  // expected-error @+1 {{attn_mask must have shape [L, S] = [5, 6], got [6, 5]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) attn_mask(%m : tensor<6x5xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %m: tensor<4x5x6xi1>) {
  // expected-error @+1 {{attn_mask must have shape [N * num_heads, L, S] = [8, 5, 6], got [4, 5, 6]}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) attn_mask(%m : tensor<4x5x6xi1>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %m: tensor<2x4x5x6xi1>) {
  // expected-error @+1 {{attn_mask must be 2-D [L, S] or 3-D [N * num_heads, L, S], got rank 4}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) attn_mask(%m : tensor<2x4x5x6xi1>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{dropout (1.5) must be in [0, 1)}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first dropout = 1.5 : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{seed (3) has no effect without dropout}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first seed = 3 : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{output type ('tensor<2x5x8xf32>') must match query type ('tensor<2x5x16xf32>')}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{per_head_weights needs the weights result}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first per_head_weights : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{weights must have shape [N, L, S'] = [2, 5, 6], got [2, 4, 5, 6]}}
  %r0, %r1 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>, tensor<2x4x5x6xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>, %bk: tensor<1x1x16xf32>) {
  // expected-error @+1 {{weights must have shape [N, num_heads, L, S'] = [2, 4, 5, 8], got [2, 4, 5, 6]}}
  %r0, %r1 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) bias_kv(%bk, %bk : tensor<1x1x16xf32>, tensor<1x1x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 batch_first add_zero_attn per_head_weights : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>, tensor<2x4x5x6xf32>
  return
}

// -----

func.func @f(%q: tensor<5x16xf32>, %k: tensor<6x16xf32>, %v: tensor<6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{weights must have shape [L, S'] = [5, 6], got [5, 7]}}
  %r0, %r1 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 4 : tensor<5x16xf32>, tensor<6x16xf32>, tensor<6x16xf32> -> tensor<5x16xf32>, tensor<5x7xf32>
  return
}

// -----

func.func @f(%q: tensor<2x5x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x16xf32>, %wi: tensor<48x16xf32>, %wo: tensor<16x16xf32>) {
  // expected-error @+1 {{'attn.multihead' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r0 = attn.multihead %q, %k, %v in_proj(%wi : tensor<48x16xf32>) out_proj(%wo : tensor<16x16xf32>) num_heads = 0 batch_first : tensor<2x5x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x5x16xf32>
  return
}
