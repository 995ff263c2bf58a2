// RUN: attn-opt %s --attn-cpu-allocator-hooks --split-input-file --verify-diagnostics | FileCheck %s

// The generic allocation functions a module calls are defined, internal,
// as calls through the hooks attn_set_allocator stores, malloc and free
// while a hook is null; malloc's existing declaration is kept.
// CHECK-LABEL: module
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK: llvm.func @compute(%[[N:.*]]: i64)
// CHECK: %[[P:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%[[N]])
// CHECK: llvm.call @_mlir_memref_to_llvm_free(%[[P]])
// CHECK-DAG: llvm.mlir.global internal @__attn_alloc_hook() {{.*}} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global internal @__attn_free_hook() {{.*}} : !llvm.ptr
// CHECK: llvm.func @attn_set_allocator(%[[A:.*]]: !llvm.ptr, %[[F:.*]]: !llvm.ptr)
// CHECK: llvm.store %[[A]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: llvm.store %[[F]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: llvm.func internal @_mlir_memref_to_llvm_alloc(%[[SIZE:.*]]: i64) -> !llvm.ptr
// CHECK: %[[HOOK:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[UNSET:.*]] = llvm.icmp "eq" %[[HOOK]], %{{.*}} : !llvm.ptr
// CHECK: llvm.cond_br %[[UNSET]], ^[[MALLOC:.*]], ^[[HOOKED:.*]]
// CHECK: ^[[MALLOC]]:
// CHECK: llvm.call @malloc(%[[SIZE]])
// CHECK: ^[[HOOKED]]:
// CHECK: llvm.call %[[HOOK]](%[[SIZE]]) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK: llvm.func internal @_mlir_memref_to_llvm_free(%{{.*}}: !llvm.ptr)
// CHECK: llvm.call @free(
// CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK: llvm.func @free(!llvm.ptr)
// CHECK-NOT: llvm.func @malloc
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @compute(%n: i64) {
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// A module that allocates nothing still exports the setter, so that a
// runtime can call it on every library.
// CHECK-LABEL: module
// CHECK: llvm.func @attn_set_allocator
module {
  llvm.func @nothing() {
    llvm.return
  }
}

// -----

// A 32-bit index: the declaration does not match the definitions.
module {
  // expected-error @+1 {{'llvm.func' op attn-cpu-allocator-hooks: _mlir_memref_to_llvm_alloc has type '!llvm.func<ptr (i32)>', expected '!llvm.func<ptr (i64)>' (64-bit index)}}
  llvm.func @_mlir_memref_to_llvm_alloc(i32) -> !llvm.ptr
}

// -----

module {
  // expected-error @+1 {{'llvm.func' op attn-cpu-allocator-hooks: _mlir_memref_to_llvm_free is already defined}}
  llvm.func @_mlir_memref_to_llvm_free(%p: !llvm.ptr) {
    llvm.return
  }
}

// -----

module {
  // expected-error @+1 {{'llvm.mlir.global' op attn-cpu-allocator-hooks: the symbol __attn_alloc_hook is taken}}
  llvm.mlir.global internal @__attn_alloc_hook(0 : i64) : i64
}
