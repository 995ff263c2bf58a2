// The tensor-core backward attn-lower-to-gpu builds for attn.sdpa_grad, and
// which ops it leaves for the reference lowering.
// RUN: attn-opt %s --attn-lower-to-gpu -canonicalize -split-input-file 2>/dev/null | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-gpu=explain=true -split-input-file -verify-diagnostics -o /dev/null 2>&1

// Two launches. The dQ kernel: one block of 4 warps per (64 query rows,
// query head, batch), grid (2, 4, 2) for Sq = 100, Hq = 4, B = 2; K and V
// tiles of 32 keys in shared memory (rows padded from 16 to 24 elements);
// rowsum(dO O) of each row reduced across its four lanes (two shuffles)
// and stored by one lane for the second kernel; three key loops (partial,
// full, partial tiles of the causal band) carrying the dQ accumulators
// (16 x 16 per warp: two C tiles, 8 values per lane); rows below Sq stored.
// CHECK-LABEL: func.func @causal_gqa
// CHECK:         %[[DQ:.*]] = memref.alloc() : memref<2x4x100x16xf16>
// CHECK:         %[[DK:.*]] = memref.alloc() : memref<2x2x90x16xf16>
// CHECK:         %[[DV:.*]] = memref.alloc() : memref<2x2x90x16xf16>
// CHECK:         %[[ROWS:.*]] = memref.alloc() : memref<2x4x100xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c4, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c3072_i32
// CHECK:           memref.view {{.*}} to memref<32x24xf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32x24xf16, #gpu.address_space<workgroup>>
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK:           memref.store %{{.*}}, %[[ROWS]]
// CHECK:           %[[L1:.*]]:8 = scf.for {{.*}} step %c32 iter_args
// CHECK:             nvgpu.device_async_copy
// CHECK:             nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK:             nvvm.mma.sync
// CHECK:             nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK:             nvvm.mma.sync
// CHECK:             gpu.barrier
// CHECK:           %[[L2:.*]]:8 = scf.for {{.*}} step %c32 iter_args(%{{.*}} = %[[L1]]#0
// CHECK:           %[[L3:.*]]:8 = scf.for {{.*}} step %c32 iter_args(%{{.*}} = %[[L2]]#0
// CHECK:           vector.store %{{.*}}, %[[DQ]]
// CHECK:           gpu.terminator
// The dK/dV kernel: one block per (64 keys, key/value head, batch), grid
// (2, 2, 2) for Skv = 90; Q and dO tiles of 32 queries in shared memory;
// loops over the group's 2 query heads and the 4 query steps, each step
// skipped when its rows see none of the block's keys and unmasked when
// they see all; dK and dV (4 C tiles, 16 values per lane) stored for keys
// below Skv.
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c3072_i32
// CHECK:           %[[HEADS:.*]]:16 = scf.for {{.*}} = %c0 to %c2 step %c1 iter_args
// CHECK:             scf.for {{.*}} = %c0 to %c4 step %c1 iter_args
// CHECK:               %[[VISIBLE:.*]]:16 = scf.if %{{.*}} -> (f32,
// CHECK:                 scf.if %{{.*}} -> (f32,
// CHECK:                   memref.load %[[ROWS]]
// CHECK:           vector.store %{{.*}}, %[[DK]]
// CHECK:           vector.store %{{.*}}, %[[DV]]
// CHECK:           gpu.terminator
// CHECK:         bufferization.to_tensor %[[DQ]] restrict writable
// CHECK:         bufferization.to_tensor %[[DK]] restrict writable
// CHECK:         bufferization.to_tensor %[[DV]] restrict writable
func.func @causal_gqa(%q: tensor<2x4x100x16xf16>, %k: tensor<2x2x90x16xf16>, %v: tensor<2x2x90x16xf16>,
                      %o: tensor<2x4x100x16xf16>, %do: tensor<2x4x100x16xf16>, %lse: tensor<2x4x100xf32>)
    -> (tensor<2x4x100x16xf16>, tensor<2x2x90x16xf16>, tensor<2x2x90x16xf16>) {
  %eq = tensor.empty() : tensor<2x4x100x16xf16>
  %ek = tensor.empty() : tensor<2x2x90x16xf16>
  // expected-remark @+1 {{flash backward kernels: dQ over 32 keys per step (3072 bytes of shared memory), dK and dV over 32 queries per step (3072 bytes of shared memory)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%eq, %ek, %ek) causal
    : tensor<2x4x100x16xf16>, tensor<2x2x90x16xf16>, tensor<2x2x90x16xf16>, tensor<2x4x100x16xf16>, tensor<2x4x100xf32>
  return %dq, %dk, %dv : tensor<2x4x100x16xf16>, tensor<2x2x90x16xf16>, tensor<2x2x90x16xf16>
}

// -----

// Wide heads: 16 keys (dQ) and 16 queries (dK/dV) per step; the block's K
// and V wait in shared memory, and the queries are swept twice (dV, then
// dK), each sweep's accumulators stored before the next.
// CHECK-LABEL: func.func @wide_bf16
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %c8704_i32
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %c43520_i32
// CHECK:           %[[V:.*]]:64 = scf.for
// CHECK:           vector.store {{.*}} memref<1x2x70x128xbf16>, vector<2xbf16>
// CHECK:           %[[K:.*]]:64 = scf.for
// CHECK:           vector.store {{.*}} memref<1x2x70x128xbf16>, vector<2xbf16>
// CHECK:           gpu.terminator
func.func @wide_bf16(%q: tensor<1x2x70x128xbf16>, %o: tensor<1x2x70x128xbf16>, %lse: tensor<1x2x70xf32>)
    -> (tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>) {
  %e = tensor.empty() : tensor<1x2x70x128xbf16>
  // expected-remark @+1 {{flash backward kernels: dQ over 16 keys per step (8704 bytes of shared memory), dK and dV over 16 queries per step (43520 bytes of shared memory, K and V in shared memory)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %lse outs(%e, %e, %e)
    : tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70xf32>
  return %dq, %dk, %dv : tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>
}

// -----

// Left for the reference lowering, with the reason.
func.func @f32(%q: tensor<1x1x8x16xf32>, %lse: tensor<1x1x8xf32>) -> tensor<1x1x8x16xf32> {
  // expected-remark @+1 {{left for the reference lowering: element type f32 (the tensor-core kernels take f16 or bf16)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse outs(%q, %q, %q)
    : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8xf32>
  return %dq : tensor<1x1x8x16xf32>
}

// -----

func.func @d256(%q: tensor<1x1x8x256xf16>, %lse: tensor<1x1x8xf32>) -> tensor<1x1x8x256xf16> {
  // expected-remark @+1 {{left for the reference lowering: D = 256 (the backward kernels need a static multiple of 16, at most 128)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse outs(%q, %q, %q)
    : tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16>, tensor<1x1x8xf32>
  return %dq : tensor<1x1x8x256xf16>
}

// -----

// A run-time dropout seed: each launch reads it once per thread (a load of
// its buffer, which canonicalization turns back into an extract of the
// tensor; bufferization makes it a load again) and hashes with it (the
// first mix adds 0x9E3779B97F4A7C15 to seed ^ batch, batch 0 here).
// CHECK-LABEL: func.func @runtime_seed
// CHECK:         gpu.launch
// CHECK:           %[[S1:.*]] = tensor.extract %arg2[] : tensor<i64>
// CHECK:           arith.addi %[[S1]], %c-7046029254386353131_i64
// CHECK:         gpu.launch
// CHECK:           %[[S2:.*]] = tensor.extract %arg2[] : tensor<i64>
// CHECK:           arith.addi %[[S2]], %c-7046029254386353131_i64
func.func @runtime_seed(%q: tensor<1x1x8x16xf16>, %lse: tensor<1x1x8xf32>, %s: tensor<i64>) -> tensor<1x1x8x16xf16> {
  // expected-remark @+1 {{flash backward kernels}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse dropout_seed(%s : tensor<i64>) outs(%q, %q, %q) dropout = 0.5
    : tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8xf32>
  return %dq : tensor<1x1x8x16xf16>
}

// -----

// A run-time scale: each of the two launches reads it once per thread.
// CHECK-LABEL: func.func @runtime_scale
// CHECK:         gpu.launch
// CHECK:           tensor.extract %arg2[] : tensor<f32>
// CHECK:         gpu.launch
// CHECK:           tensor.extract %arg2[] : tensor<f32>
func.func @runtime_scale(%q: tensor<1x1x8x16xf16>, %lse: tensor<1x1x8xf32>, %s: tensor<f32>) -> tensor<1x1x8x16xf16> {
  // expected-remark @+1 {{flash backward kernels}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse scale_value(%s : tensor<f32>) outs(%q, %q, %q)
    : tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8xf32>
  return %dq : tensor<1x1x8x16xf16>
}
