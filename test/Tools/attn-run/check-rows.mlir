// --check judges every output row (one query's features), not only the
// whole tensor: one wrong row fails although the Frobenius error of the
// whole output stays within tolerance, and the failure names the row.
// --expected compares with given arrays (an independent oracle's) instead
// of the float64 reference lowering.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --check --seed=7 --dump=%t | FileCheck %s --check-prefix=OK
// OK: @attn result #0 tensor<1x2x64x32xbf16>: relative error {{[0-9.]+}}e-03, largest row error {{[0-9.]+}}e-03 at [{{[01]}}, {{[01]}}, {{[0-9]+}}] (tolerance 1.000000e-02, per row 4.000000e-02) ok

// The float64 reference as the expected arrays: the same verdict.
// RUN: attn-run %s --check --inputs=%t/in0.npy,%t/in1.npy,%t/in2.npy \
// RUN:   --expected=%t/ref0.npy | FileCheck %s --check-prefix=OK

// Row [0, 1, 37] of the expected output 8% off: the whole output's error
// stays under its 1% tolerance (one row of 128), the row's 8% is over 4%.
// RUN: %python -c "import numpy as np; r = np.load('%t/ref0.npy'); r[0, 1, 37] *= 1.08; np.save('%t/row.npy', r)"
// RUN: not attn-run %s --check --inputs=%t/in0.npy,%t/in1.npy,%t/in2.npy \
// RUN:   --expected=%t/row.npy | FileCheck %s --check-prefix=ROW
// ROW: relative error {{[0-9.]+}}e-03, largest row error {{[0-9.]+}}e-02 at [0, 1, 37] (tolerance 1.000000e-02, per row 4.000000e-02) FAIL

// A finite but wrong f32 result: one element 0.1% off (its row's error
// is about 3e-4) fails the row check.
// RUN: attn-run %S/Inputs/sdpa-f32.mlir --check --seed=3 --dump=%t | FileCheck %s --check-prefix=F32OK
// F32OK: largest row error {{.*}} ok
// RUN: %python -c "import numpy as np; r = np.load('%t/ref0.npy'); r[0, 0, 5, 2] *= 1.001; np.save('%t/elem.npy', r)"
// RUN: not attn-run %S/Inputs/sdpa-f32.mlir --check --inputs=%t/in0.npy,%t/in1.npy,%t/in2.npy \
// RUN:   --expected=%t/elem.npy | FileCheck %s --check-prefix=ELEM
// ELEM: largest row error {{.*}} at [0, 0, 5] (tolerance 1.000000e-05, per row 1.000000e-04) FAIL

// Mistakes in --expected are diagnosed.
// RUN: not attn-run %s --expected=%t/ref0.npy 2>&1 | FileCheck %s --check-prefix=NOCHECK
// NOCHECK: error: --expected gives what --check compares with; add --check
// RUN: not attn-run %s --check --expected=%t/ref0.npy,%t/ref0.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: @attn has 1 results, --expected names 2 files
// RUN: not attn-run %s --check --expected=%t/elem.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: {{.*}}elem.npy holds a 1x2x16x8 array, result #0 of @attn is 1x2x64x32

func.func @attn(%q: tensor<1x2x64x32xbf16>, %k: tensor<1x2x100x32xbf16>, %v: tensor<1x2x100x32xbf16>)
    -> tensor<1x2x64x32xbf16> {
  %e = tensor.empty() : tensor<1x2x64x32xbf16>
  %o = attn.sdpa %q, %k, %v outs(%e) causal
     : tensor<1x2x64x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16> -> tensor<1x2x64x32xbf16>
  return %o : tensor<1x2x64x32xbf16>
}
