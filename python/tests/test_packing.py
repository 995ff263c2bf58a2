# ===- test_packing.py - contractions on packed weight panels ---------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# attn-pack-weights (docs/CpuABI.md "Pre-packed weights"): products whose
# weights are read from panels, packed per call, at compile time for
# constants, or given packed, against NumPy in float64.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir import _packing
from conftest import relative_error


def _matmul(M, K, N, weight=None):
    a, c = f"tensor<{M}x{K}xf32>", f"tensor<{M}x{N}xf32>"
    b = f"tensor<{K}x{N}xf32>"
    if weight is None:
        params, define = f"%a: {a}, %b: {b}", ""
    else:
        rows = ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]" for row in weight)
        params, define = f"%a: {a}", f"  %b = arith.constant dense<[{rows}]> : {b}\n"
    return (f"func.func @mm({params}) -> {c} {{\n{define}"
            f"  %z = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {c}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {c}) -> {c}\n"
            f"  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%f : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")


@pytest.mark.parametrize("M,K,N", [(67, 130, 256), (5, 3, 192), (130, 64, 100), (1, 257, 512)])
def test_matmul_weight_argument(rng, M, K, N):
    """Whole panels (packed per call) and not (N = 100: read as it is)."""
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    got = attn_mlir.compile(_matmul(M, K, N))(a, b)
    assert relative_error(got, a.astype(np.float64) @ b) < 1e-5


def test_matmul_constant_weight(rng):
    """A constant weight packed at compile time."""
    M, K, N = 9, 6, 128
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    got = attn_mlir.compile(_matmul(M, K, N, weight=b))(a)
    assert relative_error(got, a.astype(np.float64) @ b) < 1e-5


def test_prepacked_weight(rng):
    """A torch-layout weight [N, K] given as panels and unpacked in the
    function: the pack entry's panels give the product of the weight."""
    p = _packing.panel()
    if p == 0:
        pytest.skip("the pipeline packs nothing")  # vectorize=false only
    M, K, N = 33, 48, 2 * p
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    panels = _packing.pack(w, "f32")
    assert panels.shape == (N // p, K, p)
    assert np.array_equal(panels[1, :, 3], w[p + 3])
    t, y = f"tensor<{N}x{K}xf32>", f"tensor<{M}x{N}xf32>"
    source = "\n".join([
        f"func.func @f(%x: tensor<{M}x{K}xf32>, %w_panels: {_packing.panels_type((N, K), 'f32')}) -> {y} {{",
        *("  " + line for line in _packing.unpack_lines("w", (N, K), "f32")),
        f"  %z = arith.constant 0.0 : f32",
        f"  %e = tensor.empty() : {y}",
        f"  %f = linalg.fill ins(%z : f32) outs(%e : {y}) -> {y}",
        f"  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
        f"affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] "
        f"ins(%x, %w : tensor<{M}x{K}xf32>, {t}) outs(%f : {y}) -> {y}",
        f"  return %r : {y}", "}", ""])
    got = attn_mlir.compile(source)(x, panels)
    assert relative_error(got, x.astype(np.float64) @ w.T) < 1e-5
