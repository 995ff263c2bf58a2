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


def ulps(got, want):
    """|got - want| in ULPs of f32 at the exact value."""
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got - want) / spacing


# The functions of score modifiers: upstream's polynomials, as compiled here
# (--attn-polynomial-math), against float64. The bounds are above the
# worst cases measured over 8 million random arguments each (tanh 4.7, erf
# 4.8, log 0.85, log2 1.6, log1p 2.4 ULP: docs/Numerics.md); log's
# arguments sweep its normal range logarithmically.
@pytest.mark.parametrize("name, exact, low, high, bound", [
    ("tanh", np.tanh, -20.0, 20.0, 6),
    ("erf", np.vectorize(__import__("math").erf), -6.0, 6.0, 6),
    ("log", np.log, 1.2e-38, 3.0e38, 1),
    ("log2", np.log2, 1.2e-38, 3.0e38, 2),
    ("log1p", np.log1p, -0.999, 1.0e6, 3)])
def test_modifier_functions_in_ulps(rng, name, exact, low, high, bound):
    if name in ("log", "log2"):
        x = np.exp(rng.uniform(np.log(low), np.log(high), 300000))
    else:
        x = np.concatenate([np.linspace(low, high, 200001), rng.uniform(low, high, 100000),
                            rng.uniform(-1.0, 1.0, 50000) * min(1.0, high)])
        x = x[(x >= low) & (x <= high)]
    x = x.astype(np.float32)
    got = attn_mlir.compile(elementwise(f"math.{name}", x.size))(x).astype(np.float64)
    error = ulps(got, exact(x.astype(np.float64)))
    worst = int(np.argmax(error))
    assert error[worst] <= bound, f"{name}({x[worst]!r}) is {error[worst]:.1f} ULP off"


def test_modifier_functions_special_values():
    x = np.array([0.0, np.inf, -np.inf, np.nan, -1.0], np.float32)
    run = {n: attn_mlir.compile(elementwise(f"math.{n}", x.size))(x)
           for n in ("tanh", "erf", "log", "log1p")}
    np.testing.assert_array_equal(run["tanh"][:3], [0.0, 1.0, -1.0])
    np.testing.assert_array_equal(run["erf"][:3], [0.0, 1.0, -1.0])
    np.testing.assert_array_equal(run["log"][:2], [-np.inf, np.inf])
    assert np.isnan(run["log"][2]) and np.isnan(run["log"][4])
    assert run["log1p"][4] == -np.inf and np.isnan(run["log1p"][2])
    assert all(np.isnan(r[3]) for r in run.values())
