// RUN: attn-opt %s --attn-strided-copy-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @strided
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<4x4xf32, strided<[8, 1]>>) outs(%{{.*}} : memref<4x4xf32>)
func.func @strided(%src: memref<4x4xf32, strided<[8, 1]>>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// Contiguous copies stay: they lower to memcpy.
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x4xf32> to memref<4x4xf32>
func.func @contiguous(%src: memref<4x4xf32>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32> to memref<4x4xf32>
  return
}
