// RUN: attn-opt %s --attn-bf16-memory-as-i16 | FileCheck %s

// A bf16 row of 17 elements copied from memory to memory: loaded and
// stored as i16 (LLVM 22's X86 backend stops on the bf16 form with
// AVX512-BF16), the bits unchanged, the load's alignment kept.
// CHECK-LABEL: llvm.func @copy_row_of_17
// CHECK: %[[BITS:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<17xi16>
// CHECK: %[[ROW:.*]] = llvm.bitcast %[[BITS]] : vector<17xi16> to vector<17xbf16>
// CHECK: %[[OUT:.*]] = llvm.bitcast %[[ROW]] : vector<17xbf16> to vector<17xi16>
// CHECK: llvm.store %[[OUT]], %{{.*}} {alignment = 2 : i64} : vector<17xi16>, !llvm.ptr
llvm.func @copy_row_of_17(%p: !llvm.ptr, %q: !llvm.ptr) {
  %v = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<17xbf16>
  llvm.store %v, %q {alignment = 2 : i64} : vector<17xbf16>, !llvm.ptr
  llvm.return
}

// Lengths the backend handles, other element types and scalars stay.
// CHECK-LABEL: llvm.func @others
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<16xbf16>
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<18xbf16>
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<17xf16>
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> bf16
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<33xi16>
// CHECK-NOT: llvm.bitcast %{{.*}} : vector<16xbf16>
llvm.func @others(%p: !llvm.ptr, %q: !llvm.ptr) {
  %a = llvm.load %p : !llvm.ptr -> vector<16xbf16>
  llvm.store %a, %q : vector<16xbf16>, !llvm.ptr
  %b = llvm.load %p : !llvm.ptr -> vector<18xbf16>
  llvm.store %b, %q : vector<18xbf16>, !llvm.ptr
  %c = llvm.load %p : !llvm.ptr -> vector<17xf16>
  llvm.store %c, %q : vector<17xf16>, !llvm.ptr
  %d = llvm.load %p : !llvm.ptr -> bf16
  llvm.store %d, %q : bf16, !llvm.ptr
  %e = llvm.load %p : !llvm.ptr -> vector<33xbf16>
  llvm.return
}
