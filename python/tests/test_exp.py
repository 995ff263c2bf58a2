# ===- test_exp.py - the compiled f32 exponentials against float64 ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #
#
# The CPU pipeline replaces f32 math.exp2 (the softmax of every tiled
# attention) and math.exp with polynomials (--attn-polynomial-math). Their
# error is measured here on compiled code, over the whole f32 range and its
# special values, against NumPy's float64 exponentials.

import numpy as np
import pytest

import attn_mlir

# An f32 ULP at 1 (relative): exp2 is ours (0.7 ULP as fitted and evaluated
# in f32), exp is upstream's polynomial.
ULP = 2.0 ** -23


def elementwise(op, n):
    t = f"tensor<{n}xf32>"
    return (f"#id = affine_map<(d0) -> (d0)>\n"
            f"func.func @f(%x: {t}) -> {t} {{\n"
            f"  %e = tensor.empty() : {t}\n"
            f"  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = [\"parallel\"]}}\n"
            f"      ins(%x : {t}) outs(%e : {t}) {{\n"
            f"  ^bb0(%a: f32, %b: f32):\n"
            f"    %s = {op} %a : f32\n"
            f"    linalg.yield %s : f32\n"
            f"  }} -> {t}\n"
            f"  return %r : {t}\n}}\n")


def inputs(rng, low, high):
    """A dense sweep of [low, high], random points in it, the integers and
    half-integers (where the rounding of k turns), and the special values."""
    sweep = np.linspace(low, high, 200001)
    steps = np.arange(np.ceil(low), np.floor(high) + 1)
    x = np.concatenate([sweep, rng.uniform(low, high, 100000), steps, steps + 0.5,
                        steps - 0.5, np.nextafter(steps + 0.5, np.inf),
                        [0.0, -0.0, np.inf, -np.inf, np.nan]])
    return x.astype(np.float32)


@pytest.mark.parametrize("name, op, exact, low, high, ulps", [
    ("exp2", "math.exp2", np.exp2, -140.0, 140.0, 1),
    ("exp", "math.exp", np.exp, -100.0, 100.0, 3)])
def test_relative_error(rng, name, op, exact, low, high, ulps):
    x = inputs(rng, low, high)
    got = attn_mlir.compile(elementwise(op, x.size))(x).astype(np.float64)
    want = exact(x.astype(np.float64))
    # Results in the f32 normal range: relative error of a few ULP.
    normal = np.isfinite(want) & (want >= 2.0 ** -126) & (want <= np.finfo(np.float32).max)
    error = np.abs(got[normal] - want[normal]) / want[normal]
    worst = int(np.argmax(error))
    assert error[worst] < ulps * ULP, \
        f"{name}({x[normal][worst]!r}) = {got[normal][worst]!r}, off by {error[worst]:.2e}"
    # Below the normal range: 0 or a denormal no larger than the smallest normal.
    tiny = np.isfinite(x) & (want < 2.0 ** -126)
    assert np.all((got[tiny] >= 0) & (got[tiny] <= 2.0 ** -126))
    # Overflow and the special values.
    assert np.all(got[np.isfinite(x) & (want > np.finfo(np.float32).max)] == np.inf)
    assert got[x == np.inf][0] == np.inf and got[x == -np.inf][0] == 0.0
    assert np.isnan(got[np.isnan(x)][0])
    assert np.all(got[x == 0] == 1.0)
