# ===- test_lse.py - the log-sum-exp every entry point can return ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# return_lse=True (FlashAttention's return_softmax_lse, torch flex_attention's
# return_lse): the rows' log-sum-exp of their scaled, masked scores, checked
# against float64, and used for what users need it for: merging attentions
# computed over parts of the keys (e.g. on different devices) into the
# attention over all of them.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir.flex import flex_attention
from conftest import reference_sdpa, relative_error, require


def reference_lse(q, k, keep=None, scale=None):
    """log(sum_j exp(s_ij)) over the kept keys in float64 (-inf where none
    is kept); q [B, Hq, L, E], k [B, Hkv, S, E]."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    s = (scale if scale is not None else q.shape[-1] ** -0.5) * q @ np.swapaxes(k, -1, -2)
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    safe = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(s - safe).sum(-1, keepdims=True)) + safe)[..., 0]


def assert_lse_close(got, want):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_lse_against_float64(rng, causal):
    q = rng.standard_normal((2, 4, 33, 16)).astype(np.float32)
    k = rng.standard_normal((2, 2, 70, 16)).astype(np.float32)
    v = rng.standard_normal((2, 2, 70, 8)).astype(np.float32)
    out, lse = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                      enable_gqa=True, return_lse=True)
    keep = np.tril(np.ones((33, 70), bool)) if causal else None
    assert relative_error(out, reference_sdpa(q, k, v, causal=causal)) < 1e-5
    assert lse.dtype == np.float32
    assert_lse_close(lse, reference_lse(q, k, keep))


def test_rows_with_no_key_have_minus_infinity(rng):
    q = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    k = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    mask = np.ones((6, 9), bool)
    mask[2] = False
    out, lse = attn_mlir.scaled_dot_product_attention(q, k, k, attn_mask=mask,
                                                      return_lse=True)
    assert np.all(np.isneginf(lse[..., 2])) and np.all(out[..., 2, :] == 0)
    assert_lse_close(lse, reference_lse(q, k, np.broadcast_to(mask, (1, 2, 6, 9))))


def test_partial_attentions_merge_into_the_whole(rng):
    """Attention over the first and the last keys separately, merged by
    their log-sum-exps, is the attention over all keys (what a user does
    with lse: keys split across devices, or a cache and new keys)."""
    q = rng.standard_normal((1, 4, 20, 32)).astype(np.float32)
    k = rng.standard_normal((1, 4, 100, 32)).astype(np.float32)
    v = rng.standard_normal((1, 4, 100, 32)).astype(np.float32)
    parts = [attn_mlir.scaled_dot_product_attention(q, k[:, :, s], v[:, :, s], return_lse=True)
             for s in (slice(0, 37), slice(37, 100))]
    (o1, l1), (o2, l2) = parts
    whole_lse = np.logaddexp(l1, l2)
    merged = (np.exp(l1 - whole_lse)[..., None] * o1 + np.exp(l2 - whole_lse)[..., None] * o2)
    whole, lse = attn_mlir.scaled_dot_product_attention(q, k, v, return_lse=True)
    assert relative_error(merged, reference_sdpa(q, k, v)) < 1e-5
    np.testing.assert_allclose(whole_lse, lse, rtol=1e-5, atol=1e-5)


def test_lse_under_autograd_and_with_out(rng):
    torch = require("torch")
    q, k, v = (torch.from_numpy(rng.standard_normal((1, 2, 12, 16)).astype(np.float32))
               .requires_grad_() for _ in range(3))
    out, lse = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                      return_lse=True)
    assert not lse.requires_grad and lse.shape == (1, 2, 12)
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
    keep = np.tril(np.ones((12, 12), bool))
    assert_lse_close(lse.numpy(), reference_lse(q.detach().numpy(), k.detach().numpy(), keep))
    # out=: the output written in place, the lse returned beside it.
    with torch.no_grad():
        dest = torch.full((1, 12, 2, 16), float("nan")).transpose(1, 2)
        got, lse2 = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                           out=dest, return_lse=True)
    assert got is dest and torch.allclose(dest, out.detach(), atol=1e-6)
    assert torch.equal(lse2, lse)


def test_flex_attention_lse(rng):
    torch = require("torch")
    q, k, v = (torch.from_numpy(rng.standard_normal((1, 2, 10, 8)).astype(np.float32))
               for _ in range(3))
    out, lse = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + (j - i) * 0.1,
                              mask_mod=lambda b, h, i, j: j <= i, return_lse=True)
    qd, kd = q.double().numpy(), k.double().numpy()
    s = qd @ np.swapaxes(kd, -1, -2) / np.sqrt(8) + (np.arange(10)[None, :] -
                                                   np.arange(10)[:, None]) * 0.1
    s = np.where(np.tril(np.ones((10, 10), bool)), s, -np.inf)
    want = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    np.testing.assert_allclose(lse.numpy(), want, rtol=1e-5, atol=1e-5)
    assert torch.allclose(out, flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + (j - i) * 0.1,
                                              mask_mod=lambda b, h, i, j: j <= i))


def test_paged_attention_lse(rng):
    from test_paged import make_cache
    lengths = [40, 9]
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, 2, 16, "nhd")
    q = rng.standard_normal((2, 3, 4, 16)).astype(np.float32)
    out, lse = attn_mlir.paged_attention(q, kc, vc, table, np.array(lengths, np.int32),
                                         return_lse=True)
    assert lse.shape == (2, 4, 3) and lse.dtype == np.float32
    np.testing.assert_array_equal(out, attn_mlir.paged_attention(
        q, kc, vc, table, np.array(lengths, np.int32)))
    for b, (k, n) in enumerate(zip(keys, lengths)):
        # Bottom-right causal: query row i of 3 sees keys j <= n - 3 + i.
        keep = np.arange(n)[None, :] <= n - 3 + np.arange(3)[:, None]
        want = reference_lse(np.swapaxes(q[b:b + 1], 1, 2), np.swapaxes(k, 0, 1)[None],
                             np.broadcast_to(keep, (1, 4, 3, n)))
        assert_lse_close(lse[b:b + 1], want)
