"""Automatic dynamic shapes (compile_shaped): a loop over many sequence
lengths compiles the first shape and then one shape-generic function, and
both give the float64 reference's numbers."""

import numpy as np
import pytest

import attn_mlir
from attn_mlir import _packing, nn
from conftest import reference_sdpa, relative_error


def _compiles():
    s = attn_mlir.stats()
    return s["compiles"] + s["disk_hits"], s["dynamic_compiles"]


@pytest.fixture(autouse=True)
def _fresh():
    attn_mlir.clear_cache()


@pytest.mark.parametrize("decode", [True, False])
def test_length_sweep_compiles_twice(rng, decode):
    before, dynamic_before = _compiles()
    for S in range(100, 200):
        L = 1 if decode else S
        q = rng.standard_normal((1, 4, L, 32)).astype(np.float32)
        k, v = (rng.standard_normal((1, 2, S, 32)).astype(np.float32) for _ in range(2))
        got = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=not decode,
                                                     enable_gqa=True)
        assert got.shape == q.shape
        if S % 9 == 0 or S in (100, 101, 199):
            want = reference_sdpa(q, k, v, causal=not decode)
            assert relative_error(got, want) < 1e-5, S
    compiles, dynamic = _compiles()
    assert compiles - before == 2 and dynamic - dynamic_before == 1


def test_batch_and_mask_vary(rng):
    """Batch sizes and a [L, S] mask's sizes vary with the lengths; a size-1
    mask dimension keeps broadcasting. (A size of 1 stays static, so the
    batch going from 1 to 3 starts a second family, as in torch.compile.)"""
    _, dynamic_before = _compiles()
    for B, L, S in [(1, 5, 7), (3, 9, 13), (2, 17, 4), (3, 4, 30)]:
        q = rng.standard_normal((B, 2, L, 8)).astype(np.float32)
        k, v = (rng.standard_normal((B, 2, S, 8)).astype(np.float32) for _ in range(2))
        mask = rng.random((L, S)) < 0.7
        row_mask = rng.random((1, S)) < 0.7
        for m in (mask, row_mask):
            got = attn_mlir.scaled_dot_product_attention(q, k, v, attn_mask=m)
            assert relative_error(got, reference_sdpa(q, k, v, mask=m)) < 1e-5
    # One shape-generic function per mask form, from the third call on.
    assert _compiles()[1] - dynamic_before == 2


def test_dynamic_flag(rng):
    shapes = [(1, 2, L, 16) for L in (20, 21, 22)]
    before, _ = _compiles()
    for s in shapes:
        q = rng.standard_normal(s).astype(np.float32)
        attn_mlir.scaled_dot_product_attention(q, q, q, dynamic=False)
    assert _compiles()[0] - before == 3
    before, dynamic_before = _compiles()
    for s in shapes:
        q = rng.standard_normal(s).astype(np.float32)
        got = attn_mlir.scaled_dot_product_attention(q, q, q, dynamic=True)
        assert relative_error(got, reference_sdpa(q, q, q)) < 1e-5
    assert _compiles() == (before + 1, dynamic_before + 1)


def test_multihead_sweep(rng):
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    ref = nn.MultiheadAttention(16, 4, batch_first=True, dynamic=False).eval()
    ref.load_state_dict(mha.state_dict())
    before, _ = _compiles()
    for N, L in [(2, 5), (3, 9), (1, 12), (2, 31)]:
        x = rng.standard_normal((N, L, 16)).astype(np.float32)
        pad = rng.random((N, L)) < 0.2
        pad[:, 0] = False
        out, w = mha(x, x, x, key_padding_mask=pad, average_attn_weights=False)
        want, want_w = ref(x, x, x, key_padding_mask=pad, average_attn_weights=False)
        assert out.shape == (N, L, 16) and w.shape == (N, 4, L, L)
        assert relative_error(out, want) < 1e-5 and relative_error(w, want_w) < 1e-5
    # 4 static functions for ref; the automatic module's first shape is the
    # same function as ref's, then one shape-generic function. Where this
    # machine's weight panels divide the projections' rows (AVX2: 16 columns;
    # AVX-512: 64, which 16 and 48 are not), the packing function of each
    # weight shape (in_proj [48, 16], out_proj [16, 16]) compiles once too.
    packs = sum(_packing.packable(shape) for shape in [(48, 16), (16, 16)])
    assert _compiles()[0] - before == 5 + packs


def test_flex_sweep(rng):
    def alibi(score, b, h, q_idx, kv_idx):
        return score - (h + 1) * abs(q_idx - kv_idx) * 0.1

    before, _ = _compiles()
    for L in (10, 11, 12, 40):
        q = rng.standard_normal((1, 2, L, 8)).astype(np.float32)
        got = attn_mlir.flex_attention(q, q, q, score_mod=alibi,
                                       mask_mod=lambda b, h, i, j: j <= i)
        i = np.arange(L)
        bias = -(np.arange(2)[:, None, None] + 1) * np.abs(i[:, None] - i[None, :]) * 0.1
        want = reference_sdpa(q, q, q, mask=bias + np.where(i[:, None] >= i[None, :], 0, -np.inf))
        assert relative_error(got, want) < 1e-5
    assert _compiles()[0] - before == 2
