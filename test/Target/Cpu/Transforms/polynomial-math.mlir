// RUN: attn-opt %s --attn-polynomial-math | FileCheck %s

// f32 exp becomes arithmetic (no libm call left to block vectorisation);
// f64 exp, which the float64 reference computes, stays.
// CHECK-LABEL: func.func @exps
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK: arith.mulf
// CHECK: math.exp %{{.*}} : f64
func.func @exps(%x: f32, %y: f64) -> (f32, f64) {
  %a = math.exp %x : f32
  %b = math.exp %y : f64
  return %a, %b : f32, f64
}

// The functions of score modifiers (a softcap's tanh, logs, erf), scalar
// and vector f32, become polynomials (FMAs); f64 ones and the functions
// left to libm (sin and cos: upstream's range reduction loses accuracy at
// large arguments; atan) stay.
// CHECK-LABEL: func.func @modifier_functions
// CHECK-NOT: math.{{tanh|log|log2|log1p|erf}} %{{.*}} : {{f32|vector<8xf32>}}
// CHECK-DAG: math.fma %{{.*}} : vector<8xf32>
// CHECK-DAG: math.sin %{{.*}} : f32
// CHECK-DAG: math.cos %{{.*}} : f32
// CHECK-DAG: math.sin %{{.*}} : vector<8xf32>
// CHECK-DAG: math.tanh %{{.*}} : f64
// CHECK-DAG: math.atan %{{.*}} : f32
// CHECK-NOT: math.{{tanh|log|log2|log1p|erf}} %{{.*}} : {{f32|vector<8xf32>}}
// CHECK: return
func.func @modifier_functions(%x: f32, %v: vector<8xf32>, %y: f64)
    -> (f32, f32, f32, f32, f32, f32, f32, vector<8xf32>, vector<8xf32>,
        vector<8xf32>, f64, f32) {
  %a = math.tanh %x : f32
  %b = math.log %x : f32
  %c = math.log2 %x : f32
  %d = math.log1p %x : f32
  %e = math.erf %x : f32
  %f = math.sin %x : f32
  %g = math.cos %x : f32
  %h = math.tanh %v : vector<8xf32>
  %i = math.erf %v : vector<8xf32>
  %j = math.sin %v : vector<8xf32>
  %k = math.tanh %y : f64
  %l = math.atan %x : f32
  return %a, %b, %c, %d, %e, %f, %g, %h, %i, %j, %k, %l
      : f32, f32, f32, f32, f32, f32, f32, vector<8xf32>, vector<8xf32>,
        vector<8xf32>, f64, f32
}

// f32 exp2, scalar and vector: x clamped to [-126.5, 128], k = floor(x) as
// roundeven(x - 1/2) by the 1.5 * 2^23 shifter, the degree-6 polynomial in
// x - k (six FMAs), 2^k from the shifted sum's bits; no float-to-int
// conversion and no NaN select (NaN propagates); f64 exp2 stays.
// CHECK-LABEL: func.func @exp2s
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[LO:.*]] = arith.constant -1.265000e+02 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 1.280000e+02 : f32
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant 0x4B400000 : f32
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 127 : i32
// CHECK-DAG: %[[C23:.*]] = arith.constant 23 : i32
// CHECK: %[[MIN:.*]] = arith.minimumf %[[X:.*]], %[[HI]] : f32
// CHECK: %[[C:.*]] = arith.maximumf %[[MIN]], %[[LO]] : f32
// CHECK: %[[U:.*]] = arith.subf %[[C]], %[[HALF]] : f32
// CHECK: %[[T:.*]] = arith.addf %[[U]], %[[SHIFT]] : f32
// CHECK: %[[K:.*]] = arith.subf %[[T]], %[[SHIFT]] : f32
// CHECK: %[[F:.*]] = arith.subf %[[C]], %[[K]] : f32
// CHECK-COUNT-6: math.fma %{{.*}}, %[[F]], %{{.*}} : f32
// CHECK-NOT: math.fma
// CHECK: %[[TBITS:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK: %[[E:.*]] = arith.addi %[[TBITS]], %[[BIAS]] : i32
// CHECK: %[[SH:.*]] = arith.shli %[[E]], %[[C23]] : i32
// CHECK: %[[P2K:.*]] = arith.bitcast %[[SH]] : i32 to f32
// CHECK: arith.mulf %{{.*}}, %[[P2K]] : f32
// CHECK-NOT: arith.fptosi
// CHECK-NOT: arith.select
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: math.exp2 %{{.*}} : f64
func.func @exp2s(%x: f32, %v: vector<16xf32>, %y: f64) -> (f32, vector<16xf32>, f64) {
  %a = math.exp2 %x : f32
  %b = math.exp2 %v : vector<16xf32>
  %c = math.exp2 %y : f64
  return %a, %b, %c : f32, vector<16xf32>, f64
}

// With scalef (AVX-512 targets), a 1-D vector of a multiple of 16 lanes:
// k = floor(min(x, 128)) (vrndscaleps), the same polynomial in x - k, 2^k
// times it by one x86vector scalef per 16 lanes, and 0 where x < -126
// (unordered compares keep NaN); other vectors and scalars as above.
// RUN: attn-opt %s --attn-polynomial-math=scalef=true | FileCheck %s --check-prefix=SCALEF
// SCALEF-LABEL: func.func @exp2s
// SCALEF: arith.shli %{{.*}} : i32
// SCALEF-COUNT-1: x86vector.avx512.mask.scalef
// SCALEF-NOT: x86vector
// SCALEF: math.exp2 %{{.*}} : f64
// SCALEF-LABEL: func.func @rows
// SCALEF-DAG: %[[HI:.*]] = arith.constant dense<1.280000e+02> : vector<64xf32>
// SCALEF-DAG: %[[LO:.*]] = arith.constant dense<-1.260000e+02> : vector<64xf32>
// SCALEF-DAG: %[[ALL:.*]] = arith.constant -1 : i16
// SCALEF-DAG: %[[CUR:.*]] = arith.constant 4 : i32
// SCALEF: %[[C:.*]] = arith.minimumf %[[X:.*]], %[[HI]] : vector<64xf32>
// SCALEF: %[[K:.*]] = math.floor %[[C]] : vector<64xf32>
// SCALEF: %[[Y:.*]] = arith.subf %[[C]], %[[K]] : vector<64xf32>
// SCALEF-COUNT-6: math.fma %{{.*}}, %[[Y]], %{{.*}} : vector<64xf32>
// SCALEF-COUNT-4: x86vector.avx512.mask.scalef %{{.*}}, %{{.*}}, %{{.*}}, %[[ALL]], %[[CUR]] : vector<16xf32>
// SCALEF: %[[KEEP:.*]] = arith.cmpf uge, %[[X]], %[[LO]] : vector<64xf32>
// SCALEF: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : vector<64xi1>, vector<64xf32>
// SCALEF-NOT: arith.shli
// SCALEF: arith.shli %{{.*}} : vector<8xi32>
func.func @rows(%x: vector<64xf32>, %y: vector<8xf32>) -> (vector<64xf32>, vector<8xf32>) {
  %a = math.exp2 %x : vector<64xf32>
  %b = math.exp2 %y : vector<8xf32>
  return %a, %b : vector<64xf32>, vector<8xf32>
}
