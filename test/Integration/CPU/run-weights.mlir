// attn.weights (the attention probabilities) in its forms, against the
// float64 reference.
// RUN: attn-run %s --check --entry=plain | FileCheck %s
// RUN: attn-run %s --check --entry=gqa_mask_causal | FileCheck %s
// RUN: attn-run %s --check --entry=kv_lens_window_f16 | FileCheck %s
// RUN: attn-run %s --check --entry=score_mod_dropout_bf16 | FileCheck %s
// RUN: attn-run %s --check --entry=block_classes_unaligned | FileCheck %s
// RUN: attn-run %s --check --entry=score_mod_index_terms --input-shapes=3x1x130x38,3x1x16x38 | FileCheck %s
// RUN: attn-run %s --check --entry=gqa_bf16_rows_of_17 --input-shapes=1x2x16x17,1x2x138x17, | FileCheck %s
// The same, compiled for a CPU with AVX512-BF16 (on any x86-64 host):
// RUN: attnc %s --emit=obj --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids -o %t.spr.o
// RUN: attnc %s --emit=obj --mtriple=x86_64-linux-gnu --mcpu=sapphirerapids --cpu-pipeline=lowering=reference -o %t.spr-ref.o
// --check compares with a float64 build of the same lowering; the same forms
// against the independent NumPy oracle (attn_check.py):
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --Sq 5 --Skv 7 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --Hq 4 --Hkv 2 --Sq 9 --Skv 12 --mask bool:9x12 --causal | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --dtype f16 --Sq 10 --Skv 16 --kv-lens 13,5 --window 4,3 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --dtype bf16 --Sq 6 --Skv 9 --score-mod alibi --dropout 0.2 --seed 7 | FileCheck %s
// Short heads, several per row block (8 x 6 heads of 5 rows: blocks of 3
// heads; the score mod and dropout take each row's own head), and with
// grouped-query keys (blocks of one head):
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --B 8 --Hq 6 --Hkv 6 --Sq 5 --Skv 7 --score-mod alibi --dropout 0.2 --seed 3 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --B 8 --Hq 6 --Hkv 6 --Sq 5 --Skv 7 --causal --mask bool:8x6x5x7 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --B 8 --Hq 6 --Hkv 6 --Sq 5 --Skv 7 --mask bool:8x1x5x7 | FileCheck %s
// RUN: %python %attn_src_root/test/lib/attn_check.py --attn-run attn-run --op weights --B 8 --Hq 6 --Hkv 3 --Sq 5 --Skv 9 --causal | FileCheck %s
// CHECK: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @plain(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x7x8xf32>) -> tensor<2x2x5x7xf32> {
  %e = tensor.empty() : tensor<2x2x5x7xf32>
  %p = attn.weights %q, %k outs(%e) : tensor<2x2x5x8xf32>, tensor<2x2x7x8xf32> -> tensor<2x2x5x7xf32>
  return %p : tensor<2x2x5x7xf32>
}

func.func @gqa_mask_causal(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<1x4x6x6xi1>)
    -> tensor<1x4x6x6xf32> {
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %p = attn.weights %q, %k mask(%m : tensor<1x4x6x6xi1>) outs(%e) causal
     : tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x4x6x6xf32>
  return %p : tensor<1x4x6x6xf32>
}

func.func @kv_lens_window_f16(%q: tensor<2x2x6x16xf16>, %k: tensor<2x2x10x16xf16>, %l: tensor<2xi32>)
    -> tensor<2x2x6x10xf16> {
  %e = tensor.empty() : tensor<2x2x6x10xf16>
  %p = attn.weights %q, %k kv_lens(%l : tensor<2xi32>) outs(%e) window = [2, 2] align = <bottom_right>
     : tensor<2x2x6x16xf16>, tensor<2x2x10x16xf16> -> tensor<2x2x6x10xf16>
  return %p : tensor<2x2x6x10xf16>
}

func.func @score_mod_dropout_bf16(%q: tensor<1x2x6x16xbf16>, %k: tensor<1x2x6x16xbf16>)
    -> tensor<1x2x6x6xbf16> {
  %e = tensor.empty() : tensor<1x2x6x6xbf16>
  %p = attn.weights %q, %k outs(%e) dropout = 0.25 seed = 7
     : tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16> -> tensor<1x2x6x6xbf16>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %half = arith.constant 0.5 : f32
       %r = arith.mulf %s, %half : f32
       attn.yield %r : f32
     }
  return %p : tensor<1x2x6x6xbf16>
}

// Block classes of 56 x 61 (a fuzzer's finding): the CPU pipeline computes
// the probabilities in blocks of rows that do not start on a class block's
// first row; whole class blocks are skipped (class 0) in one head and not
// the other, a broadcast mask on top.
func.func @block_classes_unaligned(%q: tensor<1x2x189x48xf32>, %k: tensor<1x1x65x48xf32>, %mask: tensor<2x1x65xi1>)
    -> tensor<1x2x189x65xf32> {
  %classes = arith.constant dense<[[[[1, 0], [0, 0], [1, 1], [0, 1]], [[0, 0], [1, 1], [0, 0], [1, 1]]]]> : tensor<1x2x4x2xi8>
  %e = tensor.empty() : tensor<1x2x189x65xf32>
  %p = attn.weights %q, %k mask(%mask : tensor<2x1x65xi1>) block_classes(%classes : tensor<1x2x4x2xi8>) outs(%e) block_size = [56, 61]
     : tensor<1x2x189x48xf32>, tensor<1x1x65x48xf32> -> tensor<1x2x189x65xf32>
  return %p : tensor<1x2x189x65xf32>
}

// A score_mod term computed from the indices alone, (j - i) / 8, added to
// the score, D dynamic (a fuzzer's finding: the row's vectorisation made
// the term a malformed reduction and the folder crashed).
func.func @score_mod_index_terms(%q: tensor<3x1x130x?xf32>, %k: tensor<3x1x16x?xf32>)
    -> tensor<3x1x130x16xf32> {
  %e = tensor.empty() : tensor<3x1x130x16xf32>
  %p = attn.weights %q, %k outs(%e) scale = 1.0
     : tensor<3x1x130x?xf32>, tensor<3x1x16x?xf32> -> tensor<3x1x130x16xf32>
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %d = arith.subi %j, %i : index
       %di = arith.index_cast %d : index to i64
       %df = arith.sitofp %di : i64 to f32
       %c = arith.constant 0.125 : f32
       %bias = arith.mulf %df, %c : f32
       %r = arith.addf %s, %bias : f32
       attn.yield %r : f32
     }
  return %p : tensor<3x1x130x16xf32>
}

// bf16 K with rows of 17 elements and a dynamic number of heads, copied a
// row at a time for the query heads (a fuzzer's finding: LLVM 22's X86
// backend stopped on the copy of a <17 x bfloat> on AVX512-BF16 CPUs;
// attn-bf16-memory-as-i16).
func.func @gqa_bf16_rows_of_17(%q: tensor<1x2x?x17xbf16>, %k: tensor<1x?x138x17xbf16>, %seed: tensor<i64>)
    -> tensor<1x2x?x138xbf16> {
  %c2 = arith.constant 2 : index
  %rows = tensor.dim %q, %c2 : tensor<1x2x?x17xbf16>
  %e = tensor.empty(%rows) : tensor<1x2x?x138xbf16>
  %p = attn.weights %q, %k dropout_seed(%seed : tensor<i64>) outs(%e) causal dropout = 0.5
     : tensor<1x2x?x17xbf16>, tensor<1x?x138x17xbf16> -> tensor<1x2x?x138xbf16>
  return %p : tensor<1x2x?x138xbf16>
}
