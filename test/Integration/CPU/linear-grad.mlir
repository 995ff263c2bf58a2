// A linear layer's backward as the CPU pipeline compiles it, against the
// float64 reference: dX = dY W, dW = dY^T X (the left operand read K-major:
// attn-pack-weights reads a transpose of it) and db = the column sums of dY,
// with a static and a dynamic token count, an output width that fills
// whole panels and one that does not, and a transpose that is no whole
// number of register blocks.
// RUN: attn-run %s --check --entry=grad | FileCheck %s
// RUN: attn-run %s --check --entry=grad_dynamic --input-shapes=77x100,77x96,100x96 | FileCheck %s
// RUN: attn-run %s --check --entry=grad_dynamic --input-shapes=300x100,300x96,100x96 | FileCheck %s
// The same as attn_mlir.functional.linear writes it (python/attn_mlir/_linear.py):
// linalg.matmul reading the torch-layout weight [N, K] and dY K-major through
// indexing maps, the bias broadcast, the column sums a linalg.reduce.
// RUN: attn-run %s --check --entry=named_grad --input-shapes=77x100,77x96,100x96 | FileCheck %s
// RUN: attn-run %s --check --entry=named_forward --input-shapes=77x96,192x96,192 | FileCheck %s --check-prefix=ONE
// CHECK-COUNT-3: relative error {{.*}} ok
// CHECK-NOT: relative error
// ONE-COUNT-1: relative error {{.*}} ok
// ONE-NOT: relative error

#dy_mn = affine_map<(m, k, n) -> (m, n)>
#w_nk = affine_map<(m, k, n) -> (n, k)>
#x_mk = affine_map<(m, k, n) -> (m, k)>
#gw_dy = affine_map<(n, k, m) -> (m, n)>
#gw_x = affine_map<(n, k, m) -> (m, k)>
#gw_out = affine_map<(n, k, m) -> (n, k)>
#rows = affine_map<(m, n) -> (m, n)>
#cols = affine_map<(m, n) -> (n)>

func.func @grad(%dy: tensor<130x192xf32>, %x: tensor<130x96xf32>, %w: tensor<192x96xf32>)
    -> (tensor<130x96xf32>, tensor<192x96xf32>, tensor<192xf32>) {
  %z = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<130x96xf32>
  %fx = linalg.fill ins(%z : f32) outs(%ex : tensor<130x96xf32>) -> tensor<130x96xf32>
  %dx = linalg.generic {indexing_maps = [#dy_mn, #w_nk, #x_mk], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : tensor<130x192xf32>, tensor<192x96xf32>) outs(%fx : tensor<130x96xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<130x96xf32>
  %ew = tensor.empty() : tensor<192x96xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<192x96xf32>) -> tensor<192x96xf32>
  %dw = linalg.generic {indexing_maps = [#gw_dy, #gw_x, #gw_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : tensor<130x192xf32>, tensor<130x96xf32>) outs(%fw : tensor<192x96xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<192x96xf32>
  %eb = tensor.empty() : tensor<192xf32>
  %fb = linalg.fill ins(%z : f32) outs(%eb : tensor<192xf32>) -> tensor<192xf32>
  %db = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<130x192xf32>) outs(%fb : tensor<192xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<192xf32>
  return %dx, %dw, %db : tensor<130x96xf32>, tensor<192x96xf32>, tensor<192xf32>
}

func.func @grad_dynamic(%dy: tensor<?x100xf32>, %x: tensor<?x96xf32>, %w: tensor<100x96xf32>)
    -> (tensor<?x96xf32>, tensor<100x96xf32>, tensor<100xf32>) {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %dy, %c0 : tensor<?x100xf32>
  %ex = tensor.empty(%m) : tensor<?x96xf32>
  %fx = linalg.fill ins(%z : f32) outs(%ex : tensor<?x96xf32>) -> tensor<?x96xf32>
  %dx = linalg.generic {indexing_maps = [#dy_mn, #w_nk, #x_mk], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : tensor<?x100xf32>, tensor<100x96xf32>) outs(%fx : tensor<?x96xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x96xf32>
  %ew = tensor.empty() : tensor<100x96xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<100x96xf32>) -> tensor<100x96xf32>
  %dw = linalg.generic {indexing_maps = [#gw_dy, #gw_x, #gw_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : tensor<?x100xf32>, tensor<?x96xf32>) outs(%fw : tensor<100x96xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<100x96xf32>
  %eb = tensor.empty() : tensor<100xf32>
  %fb = linalg.fill ins(%z : f32) outs(%eb : tensor<100xf32>) -> tensor<100xf32>
  %db = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<?x100xf32>) outs(%fb : tensor<100xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<100xf32>
  return %dx, %dw, %db : tensor<?x96xf32>, tensor<100x96xf32>, tensor<100xf32>
}

func.func @named_forward(%x: tensor<?x96xf32>, %w: tensor<192x96xf32>, %b: tensor<192xf32>) -> (tensor<?x192xf32>) {
  %e_c0 = arith.constant 0 : index
  %e_m = tensor.dim %x, %e_c0 : tensor<?x96xf32>
  %e = tensor.empty(%e_m) : tensor<?x192xf32>
  %init = linalg.broadcast ins(%b : tensor<192xf32>) outs(%e : tensor<?x192xf32>) dimensions = [0]
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<?x96xf32>, tensor<192x96xf32>) outs(%init : tensor<?x192xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

func.func @named_grad(%dy: tensor<?x100xf32>, %x: tensor<?x96xf32>, %w: tensor<100x96xf32>) -> (tensor<?x96xf32>, tensor<100x96xf32>, tensor<100xf32>) {
  %zero = arith.constant 0.0 : f32
  %ex_c0 = arith.constant 0 : index
  %ex_m = tensor.dim %dy, %ex_c0 : tensor<?x100xf32>
  %ex = tensor.empty(%ex_m) : tensor<?x96xf32>
  %fx = linalg.fill ins(%zero : f32) outs(%ex : tensor<?x96xf32>) -> tensor<?x96xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, k, n) -> (m, n)>, affine_map<(m, k, n) -> (n, k)>, affine_map<(m, k, n) -> (m, k)>] ins(%dy, %w : tensor<?x100xf32>, tensor<100x96xf32>) outs(%fx : tensor<?x96xf32>) -> tensor<?x96xf32>
  %ew = tensor.empty() : tensor<100x96xf32>
  %fw = linalg.fill ins(%zero : f32) outs(%ew : tensor<100x96xf32>) -> tensor<100x96xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(n, k, m) -> (m, n)>, affine_map<(n, k, m) -> (m, k)>, affine_map<(n, k, m) -> (n, k)>] ins(%dy, %x : tensor<?x100xf32>, tensor<?x96xf32>) outs(%fw : tensor<100x96xf32>) -> tensor<100x96xf32>
  %eb = tensor.empty() : tensor<100xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<100xf32>) -> tensor<100xf32>
  %db = linalg.reduce ins(%dy : tensor<?x100xf32>) outs(%fb : tensor<100xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %dx, %dw, %db : tensor<?x96xf32>, tensor<100x96xf32>, tensor<100xf32>
}

