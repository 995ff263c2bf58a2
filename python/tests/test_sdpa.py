# ===- test_sdpa.py - scaled_dot_product_attention -------------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from conftest import reference_sdpa, relative_error, require

TOL = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}


def cast(x, dtype):
    if dtype == "f32":
        return x.astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)
    ml_dtypes = require("ml_dtypes")
    return x.astype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
def test_dtypes_and_causal(rng, dtype, causal):
    q, k, v = (cast(rng.standard_normal((2, 3, 37, 16)), dtype) for _ in range(3))
    got = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert got.dtype == q.dtype and got.shape == (2, 3, 37, 16)
    want = reference_sdpa(q.astype(np.float64), k.astype(np.float64),
                          v.astype(np.float64), causal=causal)
    assert relative_error(got.astype(np.float64), want) < TOL[dtype]


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("mask_shape", [(45,), (37, 45), (1, 3, 37, 45), (2, 1, 1, 45)])
def test_masks(rng, mask_kind, mask_shape):
    q = rng.standard_normal((2, 3, 37, 16)).astype(np.float32)
    k = rng.standard_normal((2, 3, 45, 16)).astype(np.float32)
    v = rng.standard_normal((2, 3, 45, 8)).astype(np.float32)
    if mask_kind == "bool":
        mask = rng.random(mask_shape) < 0.7
    else:
        mask = rng.standard_normal(mask_shape).astype(np.float32)
    got = attn_mlir.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.2)
    want = reference_sdpa(q, k, v, mask=mask, scale=0.2)
    assert relative_error(got, want) < 1e-5


def test_gqa_and_leading_dims(rng):
    q = rng.standard_normal((2, 2, 8, 5, 16)).astype(np.float32)
    k = rng.standard_normal((2, 2, 2, 9, 16)).astype(np.float32)
    v = rng.standard_normal((2, 2, 2, 9, 16)).astype(np.float32)
    got = attn_mlir.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert got.shape == (2, 2, 8, 5, 16)
    assert relative_error(got, reference_sdpa(q, k, v)) < 1e-5


def test_rank3_and_rank2(rng):
    q = rng.standard_normal((4, 6, 8)).astype(np.float32)
    got = attn_mlir.scaled_dot_product_attention(q, q, q)
    assert relative_error(got, reference_sdpa(q, q, q)) < 1e-5
    got = attn_mlir.scaled_dot_product_attention(q[0], q[1], q[2])
    assert got.shape == (6, 8)
    assert relative_error(got, reference_sdpa(q[0], q[1], q[2])) < 1e-5


def test_window_and_alignment(rng):
    q = rng.standard_normal((1, 2, 20, 8)).astype(np.float32)
    k = rng.standard_normal((1, 2, 50, 8)).astype(np.float32)
    got = attn_mlir.scaled_dot_product_attention(q, k, k, is_causal=True, window=(6, 0),
                                                 alignment="bottom_right")
    want = reference_sdpa(q, k, k, causal=True, window=(6, 0), align="bottom_right")
    assert relative_error(got, want) < 1e-5


def test_fully_masked_rows_give_zero(rng):
    q = rng.standard_normal((1, 1, 4, 8)).astype(np.float32)
    mask = np.ones((4, 4), bool)
    mask[1] = False
    got = attn_mlir.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert np.all(got[0, 0, 1] == 0)
    assert relative_error(got, reference_sdpa(q, q, q, mask=mask)) < 1e-5


def test_torch_parity():
    torch = require("torch")
    import torch.nn.functional as F

    q = torch.randn(2, 8, 33, 32)
    k = torch.randn(2, 2, 40, 32)
    v = torch.randn(2, 2, 40, 24)
    mask = torch.rand(33, 40) < 0.9
    for kwargs in (dict(), dict(attn_mask=mask), dict(attn_mask=mask.float() * -1.5),
                   dict(scale=0.1)):
        want = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)
        got = attn_mlir.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
        assert (got - want).abs().max().item() < 1e-4
    qs = torch.randn(2, 4, 17, 16)
    want = F.scaled_dot_product_attention(qs, qs, qs, is_causal=True)
    got = attn_mlir.scaled_dot_product_attention(qs, qs, qs, is_causal=True)
    assert (got - want).abs().max().item() < 1e-4
    bf = qs.bfloat16()
    got = attn_mlir.scaled_dot_product_attention(bf, bf, bf, is_causal=True)
    assert got.dtype == torch.bfloat16
    assert (got.float() - want).abs().max().item() < 5e-2


def test_torch_input_is_not_copied():
    torch = require("torch")
    q = torch.randn(1, 1, 4, 8)
    # A view with the right layout goes through DLPack as is; the result is
    # a new tensor and the input is left alone.
    before = q.clone()
    attn_mlir.scaled_dot_product_attention(q, q, q)
    assert torch.equal(q, before)


def _softcap_reference(q, k, v, scale, cap):
    s = scale * np.asarray(q, np.float64) @ np.swapaxes(np.asarray(k, np.float64), -1, -2)
    s = cap * np.tanh(s / cap)
    s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ np.asarray(v, np.float64)


@pytest.mark.parametrize("torch_inputs", [False, True])
def test_scale_and_softcap_values_share_one_compile(rng, torch_inputs):
    # scale and softcap are read at run time: after the first call, other
    # values compile nothing, and each call (the remembered one of the
    # same signature, too) computes with its own values, not the first's.
    # (Lengths of their own: no other test compiled these functions.)
    length = 21 if torch_inputs else 19
    q, k, v = (rng.standard_normal((1, 2, length, 16)).astype(np.float32) for _ in range(3))
    if torch_inputs:
        torch = require("torch")
        q, k, v = (torch.from_numpy(x) for x in (q, k, v))
    sdpa = attn_mlir.scaled_dot_product_attention
    def builds():  # compiled here or loaded from the disk cache
        stats = attn_mlir.stats()
        return stats["compiles"] + stats["disk_hits"]

    sdpa(q, k, v, is_causal=True, scale=0.5, softcap=20.0)
    before = builds()
    for scale, cap in ((0.9, 3.0), (0.05, 50.0), (0.9, 3.0), (2.0, 1.5), (2.0, 1.5)):
        got = np.asarray(sdpa(q, k, v, is_causal=True, scale=scale, softcap=cap))
        want = _softcap_reference(q, k, v, scale, cap)
        assert relative_error(got, want) < 1e-5, (scale, cap)
    for scale in (0.3, 1.7, 0.3):
        got = np.asarray(sdpa(q, k, v, scale=scale))
        assert relative_error(got, reference_sdpa(q, k, v, scale=scale)) < 1e-5, scale
    # The second group's first call compiles (no softcap region, no causal).
    assert builds() - before <= 1
