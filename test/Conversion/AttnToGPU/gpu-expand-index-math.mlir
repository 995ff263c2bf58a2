// RUN: attn-opt %s --attn-gpu-expand-index-math | FileCheck %s

// CHECK-LABEL: func.func @distance
// CHECK:         %[[D:.*]] = arith.subi %arg0, %arg1 : index
// CHECK:         %[[NEG:.*]] = arith.subi %c0, %[[D]] : index
// CHECK:         %[[ABS:.*]] = arith.maxsi %[[D]], %[[NEG]] : index
// CHECK:         math.absi %arg2 : i32
// CHECK:         return %[[ABS]]
func.func @distance(%i: index, %j: index, %x: i32) -> (index, i32) {
  %d = arith.subi %i, %j : index
  %a = math.absi %d : index
  %b = math.absi %x : i32
  return %a, %b : index, i32
}
