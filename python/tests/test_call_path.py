# ===- test_call_path.py - the hot path of a call from Python --------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# A call whose arguments were checked before skips the checks (a remembered
# signature), and compiled CPU functions are called from C++ on the arrays'
# buffers (_native.CifaceFunction). Neither may change what a call computes
# or which errors it reports.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir import _native
from conftest import TINY_SDPA, require


def reference(q, k, v, mask=None):
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[-3] // k.shape[-3]
    k, v = (np.repeat(x, group, axis=-3) for x in (k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def test_remembered_call_computes_each_calls_inputs(rng):
    attn_mlir.clear_cache()
    q, k, v = (rng.standard_normal((2, 4, 3, 16)).astype(np.float32) for _ in range(3))
    first = attn_mlir.scaled_dot_product_attention(q, k, v)
    hits = attn_mlir.stats()["cache_hits"]
    for _ in range(3):
        q2, k2, v2 = (rng.standard_normal((2, 4, 3, 16)).astype(np.float32)
                      for _ in range(3))
        out = attn_mlir.scaled_dot_product_attention(q2, k2, v2)
        np.testing.assert_allclose(out, reference(q2, k2, v2), rtol=1e-5, atol=1e-5)
    assert attn_mlir.stats()["cache_hits"] == hits + 3
    assert not np.allclose(first, out)


def test_remembered_call_with_mask_gqa_and_views(rng):
    torch = require("torch")
    q = torch.randn(1, 8, 1, 32)
    k, v = torch.randn(1, 2, 40, 32), torch.randn(1, 2, 40, 32)
    for step in range(3):
        mask = torch.rand(1, 1, 1, 40) > 0.3
        mask[..., 0] = True
        # A transposed view on the last call: copied to a contiguous one.
        kk = k if step < 2 else k.transpose(-1, -2).contiguous().transpose(-1, -2)
        out = attn_mlir.scaled_dot_product_attention(q, kk, v, attn_mask=mask,
                                                     enable_gqa=True)
        assert isinstance(out, torch.Tensor) and out.shape == (1, 8, 1, 32)
        np.testing.assert_allclose(out.numpy(), reference(q, kk, v, mask.numpy()),
                                   rtol=1e-5, atol=1e-5)


def test_remembered_call_still_rejects_other_arguments(rng):
    q = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
    attn_mlir.scaled_dot_product_attention(q, q, q)
    # Same shapes, other element type: a new signature, checked.
    with pytest.raises(TypeError, match="same dtype"):
        attn_mlir.scaled_dot_product_attention(q, q.astype(np.float16), q)
    with pytest.raises(ValueError, match="attn_mask"):
        attn_mlir.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((3, 5), bool))


def test_direct_call_reports_what_the_checks_do(rng):
    torch = require("torch")
    f = attn_mlir.compile(TINY_SDPA)
    elem, shape = f.inputs[0]
    good = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(f(torch.from_numpy(good)).numpy(), f(good), rtol=0, atol=0)
    with pytest.raises(TypeError, match=f"input #0 of @{f.name} has element type f64"):
        f(good.astype(np.float64))
    with pytest.raises(TypeError, match=f"input #0 of @{f.name} has element type f64"):
        f(torch.from_numpy(good.astype(np.float64)))
    with pytest.raises(ValueError, match="has shape"):
        f(np.zeros([s + 1 for s in shape], np.float32))


def test_ciface_function_refuses_what_it_cannot_pass():
    torch = require("torch")
    # Address 0 is never called: each of these is refused first.
    f = _native.CifaceFunction(0, ["f32", "f32"])
    ok = np.zeros(4, np.float32)
    assert f([ok, np.zeros(4, np.float64)]) == -2
    assert f([np.zeros(8, np.float32)[::2], ok]) == -1
    assert f([torch.zeros(4, dtype=torch.float64), ok]) == -1
    assert f([torch.zeros(4, 2).t(), ok]) == -1
    assert f(["not an array", ok]) == -1
    with pytest.raises(TypeError, match="takes 2 arrays, 1 were given"):
        f([ok])
    with pytest.raises(ValueError, match="element type c64"):
        _native.CifaceFunction(0, ["c64"])
