// The tensor-core flash kernel attn-lower-to-gpu builds, and which ops it
// leaves for the reference lowering.
// RUN: attn-opt %s --attn-lower-to-gpu -canonicalize -split-input-file 2>/dev/null | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-gpu=explain=true -split-input-file -verify-diagnostics -o /dev/null 2>&1

// One block of 4 warps per (64-row query tile, head, batch): grid (2, 2, 1)
// for Sq = 100, Hq = 2, B = 1; 128 threads; the K and V tiles (64 keys,
// rows padded from 16 to 24 elements) in 6144 bytes of dynamic shared memory.
// CHECK-LABEL: func.func @causal_gqa_f16
// CHECK-DAG:     %[[Q:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-DAG:     %[[K:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG:     %[[V:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x2x100x16xf16>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c6144_i32
// CHECK:           %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK:           %[[KT:.*]] = memref.view %[[SMEM]][%c0][] {{.*}} to memref<64x24xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[VT:.*]] = memref.view %[[SMEM]][%c3072][] {{.*}} to memref<64x24xf16, #gpu.address_space<workgroup>>
// GQA: key head = query head / 2.
// CHECK:           arith.divui %{{.*}}, %c2 : index
// Q fragments: 32-bit loads, kept in registers for the whole loop.
// CHECK:           vector.load %[[Q]]{{.*}} {alignment = 4 : i64} : memref<1x2x100x16xf16>, vector<2xf16>
// Three key loops (partial, full, partial tiles of the causal band).
// CHECK:           scf.for {{.*}} step %c64 iter_args
// Each step: K and V copied with cp.async, zero-filled past Skv...
// CHECK:             nvgpu.device_async_copy %[[K]][{{.*}}], %[[KT]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK:             %[[KG:.*]] = nvgpu.device_async_create_group
// CHECK:             nvgpu.device_async_copy %[[V]][{{.*}}], %[[VT]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK:             %[[VG:.*]] = nvgpu.device_async_create_group
// ... S = Q K^T on tensor cores once K has landed...
// CHECK:             nvgpu.device_async_wait %[[KG]] {numGroups = 1 : i32}
// CHECK-NEXT:        gpu.barrier
// CHECK:             vector.load %[[KT]]{{.*}} {alignment = 4 : i64}
// CHECK:             nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// ... the row maximum across the four lanes of a row...
// CHECK:             gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK:             llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// ... and P V once V has landed; barrier before the next copies.
// CHECK:             nvgpu.device_async_wait %[[VG]] {numGroups = 0 : i32}
// CHECK:             memref.load %[[VT]]
// CHECK:             nvvm.mma.sync
// CHECK:             gpu.barrier
// CHECK-NEXT:        scf.yield
// CHECK:           scf.for
// CHECK:           scf.for
// Row sums reduced once, rows past Sq not stored.
// CHECK:           gpu.shuffle  xor
// CHECK:           arith.cmpi ult, %{{.*}}, %c100 : index
// CHECK:           scf.if
// CHECK:             vector.store %{{.*}}, %[[OUT]]{{.*}} {alignment = 4 : i64} : memref<1x2x100x16xf16>, vector<2xf16>
// CHECK:         bufferization.to_tensor %[[OUT]] restrict writable
func.func @causal_gqa_f16(%q: tensor<1x2x100x16xf16>, %k: tensor<1x1x130x16xf16>, %v: tensor<1x1x130x16xf16>) -> tensor<1x2x100x16xf16> {
  %e = tensor.empty() : tensor<1x2x100x16xf16>
  // expected-remark @below {{flash kernel: 4 warps, 64 query rows x 64 keys per step, 6144 bytes of shared memory}}
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x2x100x16xf16>, tensor<1x1x130x16xf16>, tensor<1x1x130x16xf16> -> tensor<1x2x100x16xf16>
  return %o : tensor<1x2x100x16xf16>
}

// -----

// With the lse result (the backward's input): a second buffer, and per row
// (m + lg2.approx(l)) ln 2 stored by one lane of the four; dropout halves
// the key tile (its hash is 64-bit arithmetic per score).
// CHECK-LABEL: func.func @lse_dropout
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x2x100x16xf16>
// CHECK:         %[[LSE:.*]] = memref.alloc() : memref<1x2x100xf32>
// CHECK:         gpu.launch
// CHECK:           scf.for {{.*}} step %c32
// CHECK:           scf.if
// CHECK:             llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK:             arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK:             arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK:             scf.if
// CHECK:               memref.store %{{.*}}, %[[LSE]]
// CHECK:             vector.store %{{.*}}, %[[OUT]]
// CHECK:         %[[O:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:         %[[L:.*]] = bufferization.to_tensor %[[LSE]] restrict writable
// CHECK:         return %[[O]], %[[L]]
func.func @lse_dropout(%q: tensor<1x2x100x16xf16>, %k: tensor<1x1x130x16xf16>, %v: tensor<1x1x130x16xf16>)
    -> (tensor<1x2x100x16xf16>, tensor<1x2x100xf32>) {
  %e = tensor.empty() : tensor<1x2x100x16xf16>
  %l = tensor.empty() : tensor<1x2x100xf32>
  // expected-remark @below {{flash kernel: 4 warps, 64 query rows x 32 keys per step, 3072 bytes of shared memory}}
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : tensor<1x2x100xf32>) dropout = 0.1 seed = 3
     : tensor<1x2x100x16xf16>, tensor<1x1x130x16xf16>, tensor<1x1x130x16xf16> -> tensor<1x2x100x16xf16>, tensor<1x2x100xf32>
  return %o, %lse : tensor<1x2x100x16xf16>, tensor<1x2x100xf32>
}

// -----

// bf16 registers are passed to mma.sync as i32; D = 256 takes 16-key tiles
// and keeps Q in shared memory (64 x 264 bf16 after the K and V tiles),
// copied once before the key loop.
// CHECK-LABEL: func.func @bf16_d256
// CHECK:         dynamic_shared_memory_size %c50688_i32
// CHECK:         %[[QT:.*]] = memref.view %{{.*}}[%c16896][] {{.*}} to memref<64x264xbf16, #gpu.address_space<workgroup>>
// CHECK:         nvgpu.device_async_copy %{{.*}}[{{.*}}], %[[QT]][{{.*}}], 8
// CHECK:         nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-NEXT:    gpu.barrier
// CHECK:         scf.for {{.*}} step %c16
// CHECK:           vector.load %[[QT]]
// CHECK:           vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:           nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32)
func.func @bf16_d256(%q: tensor<2x1x8x256xbf16>, %k: tensor<2x1x40x256xbf16>, %v: tensor<2x1x40x256xbf16>) -> tensor<2x1x8x256xbf16> {
  %e = tensor.empty() : tensor<2x1x8x256xbf16>
  // expected-remark @below {{flash kernel: 4 warps, 64 query rows x 16 keys per step, 50688 bytes of shared memory, Q in shared memory}}
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<2x1x8x256xbf16>, tensor<2x1x40x256xbf16>, tensor<2x1x40x256xbf16> -> tensor<2x1x8x256xbf16>
  return %o : tensor<2x1x8x256xbf16>
}

// -----

// What the kernel does not take stays an attn.sdpa.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: attn.sdpa
// CHECK-NOT:     gpu.launch
func.func @left_alone(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>,
                      %qh: tensor<1x1x8x72xf16>, %kh: tensor<1x1x8x72xf16>, %vh: tensor<1x1x8x72xf16>,
                      %q2: tensor<1x1x8x16xf16>, %k2: tensor<1x1x8x16xf16>, %v2: tensor<1x1x8x16xf16>,
                      %off: tensor<2xi32>, %idx: tensor<1xi32>)
    -> (tensor<1x1x8x16xf32>, tensor<1x1x8x72xf16>, tensor<1x1x8x16xf16>) {
  %e = tensor.empty() : tensor<1x1x8x16xf32>
  // expected-remark @below {{left for the reference lowering: element type f32 (the tensor-core kernel takes f16 or bf16)}}
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  %eh = tensor.empty() : tensor<1x1x8x72xf16>
  // expected-remark @below {{left for the reference lowering: D = 72 (the kernel needs a static multiple of 16, at most 256)}}
  %oh = attn.sdpa %qh, %kh, %vh outs(%eh)
     : tensor<1x1x8x72xf16>, tensor<1x1x8x72xf16>, tensor<1x1x8x72xf16> -> tensor<1x1x8x72xf16>
  %e2 = tensor.empty() : tensor<1x1x8x16xf16>
  // expected-remark @below {{left for the reference lowering: a block-sparse layout or block classes}}
  %o2 = attn.sdpa %q2, %k2, %v2 blocks(%off, %idx : tensor<2xi32>, tensor<1xi32>) outs(%e2) block_size = [8, 8]
     : tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16> -> tensor<1x1x8x16xf16>
  return %o, %oh, %o2 : tensor<1x1x8x16xf32>, tensor<1x1x8x72xf16>, tensor<1x1x8x16xf16>
}

// -----

// D = 80: a 32-key tile is 320 chunks of 16 bytes, two whole rounds of 128
// threads and a partial third, in which only the threads that have a chunk
// copy (spare threads zero-filling the padding column raced: more spare
// threads than rows; compute-sanitizer racecheck on an H200).
// CHECK-LABEL: func.func @d80_partial_round
// CHECK:         scf.for
// CHECK:           %[[K0:.*]] = nvgpu.device_async_copy %{{.*}}, %[[KT:.*]][%{{.*}}, %{{.*}}], 8
// CHECK:           %[[K1:.*]] = nvgpu.device_async_copy %{{.*}}, %[[KT]][%{{.*}}, %{{.*}}], 8
// CHECK:           %[[LAST:.*]] = arith.addi %{{.*}}, %c256 : index
// CHECK:           %[[REAL:.*]] = arith.cmpi ult, %[[LAST]], %c320 : index
// CHECK-NEXT:      scf.if %[[REAL]] {
// CHECK:             nvgpu.device_async_copy %{{.*}}, %[[KT]][%{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} :{{.*}}
// CHECK-NEXT:      }
// CHECK-NEXT:      nvgpu.device_async_create_group %[[K0]], %[[K1]]{{$}}
func.func @d80_partial_round(%q: tensor<1x2x90x80xf16>, %k: tensor<1x2x90x80xf16>, %v: tensor<1x2x90x80xf16>) -> tensor<1x2x90x80xf16> {
  %e = tensor.empty() : tensor<1x2x90x80xf16>
  // expected-remark @below {{flash kernel: 4 warps, 64 query rows x 32 keys per step, 11264 bytes of shared memory}}
  %o = attn.sdpa %q, %k, %v outs(%e)
     : tensor<1x2x90x80xf16>, tensor<1x2x90x80xf16>, tensor<1x2x90x80xf16> -> tensor<1x2x90x80xf16>
  return %o : tensor<1x2x90x80xf16>
}

// -----

// A run-time scale: the kernel reads it from its buffer once per thread (a
// load that canonicalization turns back into an extract of the tensor) and
// folds log2(e) into it there; the host computes no scale.
// CHECK-LABEL: func.func @runtime_scale
// CHECK-SAME:    %[[S:[a-z0-9]+]]: tensor<f32>
// CHECK-NOT:     tensor.extract %[[S]]
// CHECK:         gpu.launch
// CHECK:           %[[X:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK:           arith.mulf %[[X]], %cst{{.*}} : f32
func.func @runtime_scale(%q: tensor<1x2x100x16xf16>, %k: tensor<1x1x130x16xf16>, %v: tensor<1x1x130x16xf16>, %s: tensor<f32>) -> tensor<1x2x100x16xf16> {
  %init = tensor.empty() : tensor<1x2x100x16xf16>
  // expected-remark @below {{flash kernel: 4 warps, 64 query rows x 64 keys per step, 6144 bytes of shared memory}}
  %o = attn.sdpa %q, %k, %v scale_value(%s : tensor<f32>) outs(%init) causal
    : tensor<1x2x100x16xf16>, tensor<1x1x130x16xf16>, tensor<1x1x130x16xf16> -> tensor<1x2x100x16xf16>
  return %o : tensor<1x2x100x16xf16>
}
