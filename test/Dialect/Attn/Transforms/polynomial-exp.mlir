// RUN: attn-opt %s --attn-polynomial-exp | FileCheck %s

// f32 exp becomes arithmetic (no libm call left to block vectorisation);
// f64 exp, which the float64 reference computes, and other math ops stay.
// CHECK-LABEL: func.func @exps
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK: arith.mulf
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f32
func.func @exps(%x: f32, %y: f64) -> (f32, f64, f32) {
  %a = math.exp %x : f32
  %b = math.exp %y : f64
  %c = math.tanh %x : f32
  return %a, %b, %c : f32, f64, f32
}

// f32 exp2, scalar and vector: clamp to [-127, 128], k = roundeven(x), the
// degree-7 polynomial in x - k (seven FMAs), 2^k from the exponent bits,
// NaN passed through; f64 exp2 stays.
// CHECK-LABEL: func.func @exp2s
// CHECK: %[[LO:.*]] = arith.constant -1.270000e+02 : f32
// CHECK: %[[HI:.*]] = arith.constant 1.280000e+02 : f32
// CHECK: %[[MIN:.*]] = arith.minimumf %[[X:.*]], %[[HI]] : f32
// CHECK: %[[C:.*]] = arith.maximumf %[[MIN]], %[[LO]] : f32
// CHECK: %[[K:.*]] = math.roundeven %[[C]] : f32
// CHECK: %[[F:.*]] = arith.subf %[[C]], %[[K]] : f32
// CHECK-COUNT-7: math.fma
// CHECK: %[[E:.*]] = arith.fptosi %[[K]] : f32 to i32
// CHECK: arith.addi %[[E]], %{{.*}} : i32
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: arith.select %[[NAN]], %[[X]], %{{.*}} : f32
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: math.exp2 %{{.*}} : f64
func.func @exp2s(%x: f32, %v: vector<16xf32>, %y: f64) -> (f32, vector<16xf32>, f64) {
  %a = math.exp2 %x : f32
  %b = math.exp2 %v : vector<16xf32>
  %c = math.exp2 %y : f64
  return %a, %b, %c : f32, vector<16xf32>, f64
}
