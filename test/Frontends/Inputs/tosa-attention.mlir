// Attention written in TOSA, as a TOSA producer (a framework's TOSA
// legalisation) emits it: K^T by tosa.transpose, two tosa.matmul, the scale
// as a multiply by a [1, 1, 1] constant, and the softmax TOSA has no op for
// decomposed into reduce_max, sub, exp, reduce_sum, reciprocal and mul.
// test/Frontends/tosa.test lowers it with upstream tosa-to-linalg.
func.func @attention(%q: tensor<8x96x32xf32>, %k: tensor<8x112x32xf32>, %v: tensor<8x112x48xf32>) -> tensor<8x96x48xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x112x32xf32>) -> tensor<8x32x112xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x96x32xf32>, tensor<8x32x112xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x96x112xf32>
  %scale = "tosa.const"() {values = dense<0.17677669> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %ss = tosa.mul %s, %scale, %shift : (tensor<8x96x112xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<8x96x112xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<8x96x112xf32>) -> tensor<8x96x1xf32>
  %d = tosa.sub %ss, %m : (tensor<8x96x112xf32>, tensor<8x96x1xf32>) -> tensor<8x96x112xf32>
  %e = tosa.exp %d : (tensor<8x96x112xf32>) -> tensor<8x96x112xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x96x112xf32>) -> tensor<8x96x1xf32>
  %r = tosa.reciprocal %sum : (tensor<8x96x1xf32>) -> tensor<8x96x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x96x112xf32>, tensor<8x96x1xf32>, tensor<1xi8>) -> tensor<8x96x112xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x96x112xf32>, tensor<8x112x48xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x96x48xf32>
  return %o : tensor<8x96x48xf32>
}

// Not a softmax: the exponentials over the reciprocal of the row maximum,
// not of their row sum.
func.func @not_softmax(%s: tensor<8x96x112xf32>) -> tensor<8x96x112xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = tosa.reduce_max %s {axis = 2 : i32} : (tensor<8x96x112xf32>) -> tensor<8x96x1xf32>
  %d = tosa.sub %s, %m : (tensor<8x96x112xf32>, tensor<8x96x1xf32>) -> tensor<8x96x112xf32>
  %e = tosa.exp %d : (tensor<8x96x112xf32>) -> tensor<8x96x112xf32>
  %r = tosa.reciprocal %m : (tensor<8x96x1xf32>) -> tensor<8x96x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x96x112xf32>, tensor<8x96x1xf32>, tensor<1xi8>) -> tensor<8x96x112xf32>
  return %p : tensor<8x96x112xf32>
}
