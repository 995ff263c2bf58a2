# ===- test_flex.py - flex_attention with traced modifiers -----------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir import flex
from conftest import relative_error, require


def reference_flex(q, k, v, score_mod=None, mask_mod=None, scale=None):
    """FlexAttention's definition in float64, calling the modifiers on
    NumPy index grids."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    B, H, L, E = q.shape
    S = k.shape[2]
    groups = H // k.shape[1]
    k, v = np.repeat(k, groups, 1), np.repeat(v, groups, 1)
    s = (scale if scale is not None else 1 / np.sqrt(E)) * q @ k.transpose(0, 1, 3, 2)
    b, h, i, j = np.meshgrid(np.arange(B), np.arange(H), np.arange(L), np.arange(S),
                             indexing="ij")
    if score_mod is not None:
        s = score_mod(s, b, h, i, j)
    if mask_mod is not None:
        s = np.where(mask_mod(b, h, i, j), s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    return np.where(t > 0, e / np.where(t > 0, t, 1), 0) @ v


def inputs(rng, B=2, H=4, Hkv=4, L=70, S=70, E=16):
    return (rng.standard_normal((B, H, L, E)).astype(np.float32),
            rng.standard_normal((B, Hkv, S, E)).astype(np.float32),
            rng.standard_normal((B, Hkv, S, E)).astype(np.float32))


def test_causal_and_sliding_window(rng):
    q, k, v = inputs(rng)

    def sliding(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx - kv_idx < 9)

    got = attn_mlir.flex_attention(q, k, v, mask_mod=sliding)
    assert relative_error(got, reference_flex(q, k, v, mask_mod=sliding)) < 1e-5


def test_documents_and_alibi_from_captured_arrays(rng):
    q, k, v = inputs(rng)
    docs = np.repeat(np.arange(5), 14).astype(np.int32)
    slopes = np.array([0.5, 0.25, 0.125, 0.0625], np.float32)

    def document(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    def alibi(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)

    got = attn_mlir.flex_attention(q, k, v, score_mod=alibi, mask_mod=document)
    want = reference_flex(q, k, v, alibi, document)
    assert relative_error(got, want) < 1e-5
    # New document boundaries: same kernel (the ids are an argument).
    before = attn_mlir.stats()["compiles"]
    docs[:] = np.repeat(np.arange(7), 10)
    got = attn_mlir.flex_attention(q, k, v, score_mod=alibi, mask_mod=document)
    assert attn_mlir.stats()["compiles"] == before
    assert relative_error(got, reference_flex(q, k, v, alibi, document)) < 1e-5


def test_captured_arrays_that_grow_compile_twice_not_per_size(rng):
    # A decode loop: one query row against a cache one key longer each
    # step, with a padding mask (captured, [B, S]) and per-key document ids
    # ([S]) that grow with it. The captured arrays follow the main
    # operands' shape classes: the first length static, the second one the
    # shape-generic function every later length runs.
    def builds():
        stats = attn_mlir.stats()
        return stats["compiles"] + stats["disk_hits"]

    before = builds()
    for length in range(13, 23):
        q, k, v = inputs(rng, B=2, L=1, S=length)
        keep = rng.random((2, length)) < 0.8
        keep[:, -1] = True
        docs = np.sort(rng.integers(0, 3, length)).astype(np.int32)
        query_docs = docs[-1:].copy()  # the query's: it sees its own key

        def padded(b, h, q_idx, kv_idx):
            return keep[b, kv_idx] & (docs[kv_idx] == query_docs[q_idx])

        def bias(score, b, h, q_idx, kv_idx):
            return score + 0.1 * docs[kv_idx]

        got = attn_mlir.flex_attention(q, k, v, score_mod=bias, mask_mod=padded)
        want = reference_flex(q, k, v, bias, padded)
        assert relative_error(got, want) < 1e-5, length
    assert builds() - before == 2


def test_softcap_prefix_lm_and_gqa(rng):
    q, k, v = inputs(rng, H=4, Hkv=2)

    def softcap(score, b, h, q_idx, kv_idx):
        return 4.0 * flex.tanh(score / 4.0)

    def prefix_lm(b, h, q_idx, kv_idx):
        return (kv_idx < 12) | (kv_idx <= q_idx)

    got = attn_mlir.flex_attention(q, k, v, score_mod=softcap, mask_mod=prefix_lm,
                                   enable_gqa=True, scale=0.3)
    want = reference_flex(q, k, v, lambda s, b, h, i, j: 4.0 * np.tanh(s / 4.0),
                          prefix_lm, scale=0.3)
    assert relative_error(got, want) < 1e-5


def test_image_window_with_floor_division(rng):
    q, k, v = inputs(rng, L=64, S=64)

    def window_2d(b, h, q_idx, kv_idx):
        dy = abs(q_idx // 8 - kv_idx // 8)
        dx = abs(q_idx % 8 - kv_idx % 8)
        return (dy <= 1) & (dx <= 2)

    got = attn_mlir.flex_attention(q, k, v, mask_mod=window_2d)
    assert relative_error(got, reference_flex(q, k, v, mask_mod=window_2d)) < 1e-5


def test_nothing_visible_gives_zero(rng):
    q, k, v = inputs(rng, L=8, S=8)
    got = attn_mlir.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: j > i + 100)
    assert np.all(got == 0)


def test_where_and_minimum(rng):
    q, k, v = inputs(rng, L=20, S=20)

    def clipped(score, b, h, q_idx, kv_idx):
        return flex.where(kv_idx > q_idx, flex.minimum(score, 0.0), score)

    want = reference_flex(q, k, v, lambda s, b, h, i, j: np.where(j > i, np.minimum(s, 0), s))
    assert relative_error(attn_mlir.flex_attention(q, k, v, score_mod=clipped), want) < 1e-5


def test_python_control_flow_is_an_error(rng):
    q, k, v = inputs(rng, L=8, S=8)

    def branching(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx and kv_idx > 0

    with pytest.raises(flex.TraceError, match="use & | ~ instead of and/or/not"):
        attn_mlir.flex_attention(q, k, v, mask_mod=branching)
    with pytest.raises(flex.TraceError, match="mask_mod must return a condition"):
        attn_mlir.flex_attention(q, k, v, mask_mod=lambda b, h, i, j: i - j)


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_torch_flex_attention_parity():
    torch = require("torch")
    fa = require("torch.nn.attention.flex_attention")
    q, k, v = (torch.randn(2, 4, 48, 16) for _ in range(3))
    docs = torch.repeat_interleave(torch.arange(4), 12)

    def document_causal(b, h, q_idx, kv_idx):
        return (docs[q_idx] == docs[kv_idx]) & (kv_idx <= q_idx)

    def rel_bias(score, b, h, q_idx, kv_idx):
        return score + 0.1 * (kv_idx - q_idx)

    block_mask = fa.create_block_mask(document_causal, 2, 4, 48, 48, device="cpu")
    want = fa.flex_attention(q, k, v, score_mod=rel_bias, block_mask=block_mask)
    got = attn_mlir.flex_attention(q, k, v, score_mod=rel_bias, mask_mod=document_causal)
    assert (got - want).abs().max().item() < 1e-4
