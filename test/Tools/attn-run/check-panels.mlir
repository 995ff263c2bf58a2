// --check builds its float64 reference for a module whose weights come
// pre-packed in panels, the function attn_mlir.nn.MultiheadAttention
// compiles (each weight the linalg.unpack of an argument): the unpacks are
// widened with the rest. It refused such modules before.
// RUN: attn-run %s --check --seed=5 | FileCheck %s
// CHECK: @multihead result #0 tensor<2x7x64xf32>: relative error {{.*}} ok
// CHECK: @multihead result #1 tensor<2x7x9xf32>: relative error {{.*}} ok
func.func @multihead(%q: tensor<2x7x64xf32>, %k: tensor<2x9x96xf32>, %wq_panels: tensor<2x64x32xf32>, %wk_panels: tensor<2x96x32xf32>, %wv_panels: tensor<2x96x32xf32>, %bi: tensor<192xf32>, %wo_panels: tensor<2x64x32xf32>, %bo: tensor<64xf32>) -> (tensor<2x7x64xf32>, tensor<2x7x9xf32>) {
  %wq_unpacked = tensor.empty() : tensor<64x64xf32>
  %wq = linalg.unpack %wq_panels inner_dims_pos = [0] inner_tiles = [32] into %wq_unpacked : tensor<2x64x32xf32> -> tensor<64x64xf32>
  %wk_unpacked = tensor.empty() : tensor<64x96xf32>
  %wk = linalg.unpack %wk_panels inner_dims_pos = [0] inner_tiles = [32] into %wk_unpacked : tensor<2x96x32xf32> -> tensor<64x96xf32>
  %wv_unpacked = tensor.empty() : tensor<64x96xf32>
  %wv = linalg.unpack %wv_panels inner_dims_pos = [0] inner_tiles = [32] into %wv_unpacked : tensor<2x96x32xf32> -> tensor<64x96xf32>
  %wo_unpacked = tensor.empty() : tensor<64x64xf32>
  %wo = linalg.unpack %wo_panels inner_dims_pos = [0] inner_tiles = [32] into %wo_unpacked : tensor<2x64x32xf32> -> tensor<64x64xf32>
  %o, %w = attn.multihead %q, %k, %k q_proj(%wq : tensor<64x64xf32>) k_proj(%wk : tensor<64x96xf32>) v_proj(%wv : tensor<64x96xf32>) in_proj_bias(%bi : tensor<192xf32>) out_proj(%wo : tensor<64x64xf32>) out_proj_bias(%bo : tensor<64xf32>) num_heads = 2 batch_first : tensor<2x7x64xf32>, tensor<2x9x96xf32>, tensor<2x9x96xf32> -> tensor<2x7x64xf32>, tensor<2x7x9xf32>
  return %o, %w : tensor<2x7x64xf32>, tensor<2x7x9xf32>
}
