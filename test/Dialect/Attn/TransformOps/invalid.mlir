// What transform.attn.* refuses, and why: a payload op of the wrong kind,
// an attn.sdpa with a block-sparse layout given to tile before sparsify, a
// register_block target without regions, and sizes that are not positive
// (the op's verifier).
// RUN: attn-opt %s --transform-interpreter --split-input-file --verify-diagnostics

func.func @not_attention(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-note @below {{payload op}}
  %0 = linalg.transpose ins(%a : tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) permutation = [1, 0]
  return %0 : tensor<4x4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.transpose"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{expected attn.sdpa or attn.sdpa_grad, got 'linalg.transpose'}}
    %loop = transform.attn.tile %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @not_sdpa(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-note @below {{payload op}}
  %0 = linalg.transpose ins(%a : tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) permutation = [1, 0]
  return %0 : tensor<4x4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.transpose"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{expected attn.sdpa, got 'linalg.transpose'}}
    %same = transform.attn.sparsify %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @layout(%q: tensor<1x1x64x16xf32>, %off: tensor<3xi32>, %idx: tensor<3xi32>) -> tensor<1x1x64x16xf32> {
  %init = tensor.empty() : tensor<1x1x64x16xf32>
  // expected-note @below {{payload op: it has a block-sparse layout: classify its blocks (attn-sparsify) before tiling it}}
  %0 = attn.sdpa %q, %q, %q blocks(%off, %idx : tensor<3xi32>, tensor<3xi32>) outs(%init) block_size = [32, 32]
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{cannot tile this op}}
    %loop = transform.attn.tile %sdpa : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @no_regions(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-note @below {{payload op}}
  %0 = linalg.transpose ins(%a : tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) permutation = [1, 0]
  return %0 : tensor<4x4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.transpose"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{expected an op that holds tiles (a loop or a function), got 'linalg.transpose'}}
    %blocked = transform.attn.register_block %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sdpa = transform.structured.match ops{["attn.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{attribute 'q_tile' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
    %loop = transform.attn.tile %sdpa {q_tile = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{attribute 'max_m_block' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
    %blocked = transform.attn.register_block %funcs {max_m_block = -1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
