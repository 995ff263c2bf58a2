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
