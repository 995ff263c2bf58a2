// The PTX of the flash kernel for a Llama-like head (f16, D = 128, GQA,
// causal): tensor-core MMAs, cp.async into 16-byte aligned shared memory,
// butterfly shuffles, ex2; ptxas accepts it for sm_90a and sm_80 with no
// spills and no local memory.
// REQUIRES: ptxas
// RUN: attnc --target=cuda --emit=ptx %s -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attnc --target=cuda --gpu-arch=sm_80 --emit=ptx %s -o %t80.ptx
// RUN: FileCheck %s --check-prefix=SM80 --input-file=%t80.ptx
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attnc --target=cuda --emit=cubin %s -o %t.attnc.cubin
// RUN: od -An -c -N4 %t.attnc.cubin | FileCheck %s --check-prefix=ELF

// CHECK:       .target sm_90a
// CHECK:       .entry llama_attention_kernel(
// CHECK:       .maxntid 128, 1, 1
// CHECK:       .shared .align 16 .b8 __dynamic_shmem__0
// CHECK-NOT:   .local
// CHECK:       cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// CHECK:       cp.async.commit_group;
// CHECK:       cp.async.wait_group 1;
// CHECK:       bar.sync 0;
// CHECK:       ld.shared.b32
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:       shfl.sync.bfly.b32
// CHECK:       shfl.sync.bfly.b32
// CHECK:       ex2.approx
// CHECK:       cp.async.wait_group 0;
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:       st.global.b32

// SM80: .target sm_80
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// PTXAS:     Compiling entry function 'llama_attention_kernel'
// PTXAS:     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// ELF: 177   E   L   F

func.func @llama_attention(%q: tensor<1x32x256x128xf16>, %k: tensor<1x8x256x128xf16>,
                           %v: tensor<1x8x256x128xf16>) -> tensor<1x32x256x128xf16> {
  %init = tensor.empty() : tensor<1x32x256x128xf16>
  %o = attn.sdpa %q, %k, %v outs(%init) causal
     : tensor<1x32x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
       -> tensor<1x32x256x128xf16>
  return %o : tensor<1x32x256x128xf16>
}
