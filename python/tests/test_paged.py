# ===- test_paged.py - paged_attention (flash_attn_with_kvcache-style) ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir.functional import paged_attention
from conftest import reference_sdpa, relative_error, require


def make_cache(rng, lengths, page_size, hkv, d, layout, spare=3, dv=None):
    """Sequences of `lengths` keys (head size d; values dv, default d)
    written into pages of a fresh cache at random places; returns
    (contiguous K, V per sequence, caches, table)."""
    dv = dv or d
    pages = [-(-n // page_size) + 1 for n in lengths]  # room to append
    max_pages = max(pages)
    num_pages = sum(pages) + spare
    order = rng.permutation(num_pages)
    table = np.zeros((len(lengths), max_pages), np.int32)
    def shape(size):
        return ((num_pages, page_size, hkv, size) if layout == "nhd"
                else (num_pages, hkv, page_size, size))

    k_cache = rng.uniform(-2, 2, shape(d)).astype(np.float32)
    v_cache = rng.uniform(-2, 2, shape(dv)).astype(np.float32)
    start = 0
    keys, values = [], []
    for b, n in enumerate(lengths):
        table[b, :pages[b]] = order[start:start + pages[b]]
        # Unused entries: out of range on purpose (clamped, masked by length).
        table[b, pages[b]:] = num_pages + 7
        start += pages[b]
        k = rng.standard_normal((n, hkv, d)).astype(np.float32)
        v = rng.standard_normal((n, hkv, dv)).astype(np.float32)
        for p in range(n):
            page, slot = table[b, p // page_size], p % page_size
            if layout == "nhd":
                k_cache[page, slot], v_cache[page, slot] = k[p], v[p]
            else:
                k_cache[page, :, slot], v_cache[page, :, slot] = k[p], v[p]
        keys.append(k)
        values.append(v)
    return keys, values, k_cache, v_cache, table


def reference(q, keys, values, causal=True):
    """Per sequence, bottom-right causal attention of q [Sq, Hq, D] over its
    keys [n, Hkv, D] in float64: [Sq, Hq, D]."""
    out = []
    for b, (k, v) in enumerate(zip(keys, values)):
        got = reference_sdpa(np.swapaxes(q[b], 0, 1), np.swapaxes(k, 0, 1),
                             np.swapaxes(v, 0, 1), causal=causal, align="bottom_right")
        out.append(np.swapaxes(got, 0, 1))
    return np.stack(out)


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
@pytest.mark.parametrize("page_size", [16, 64])
def test_decode_against_contiguous(rng, layout, page_size):
    lengths = [300, 77, 1]
    keys, values, kc, vc, table = make_cache(rng, lengths, page_size, 2, 64, layout)
    q = rng.standard_normal((3, 1, 8, 64)).astype(np.float32)
    got = paged_attention(q, kc, vc, table, np.array(lengths, np.int32), layout=layout)
    assert got.shape == (3, 1, 8, 64) and got.dtype == np.float32
    assert relative_error(got.astype(np.float64), reference(q, keys, values)) < 1e-5


def test_append_then_attend(rng):
    """k, v given: written into the caches in place at cache_seqlens, then
    attended over with them (what flash_attn_with_kvcache does)."""
    lengths = [40, 17]
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, 2, 32, "nhd")
    q = rng.standard_normal((2, 3, 4, 32)).astype(np.float32)
    k_new = rng.standard_normal((2, 3, 2, 32)).astype(np.float32)
    v_new = rng.standard_normal((2, 3, 2, 32)).astype(np.float32)
    seqlens = np.array(lengths, np.int32)
    got = paged_attention(q, kc, vc, table, seqlens, k=k_new, v=v_new)
    keys = [np.concatenate([k, k_new[b]]) for b, k in enumerate(keys)]
    values = [np.concatenate([v, v_new[b]]) for b, v in enumerate(values)]
    assert relative_error(got.astype(np.float64), reference(q, keys, values)) < 1e-5
    # The rows are in the cache now: a second call without them agrees.
    again = paged_attention(q, kc, vc, table, seqlens + 3)
    np.testing.assert_array_equal(again, got)


def test_torch_tensors_and_scale(rng):
    torch = require("torch")
    lengths = [100, 64]
    keys, values, kc, vc, table = make_cache(rng, lengths, 32, 1, 16, "hnd")
    q = rng.standard_normal((2, 1, 4, 16)).astype(np.float32)
    got = paged_attention(torch.from_numpy(q), torch.from_numpy(kc), torch.from_numpy(vc),
                          torch.from_numpy(table), torch.tensor(lengths, dtype=torch.int32),
                          softmax_scale=0.3, causal=False, layout="hnd")
    assert isinstance(got, torch.Tensor) and got.shape == (2, 1, 4, 16)
    want = []
    for b, (k, v) in enumerate(zip(keys, values)):
        want.append(np.swapaxes(reference_sdpa(np.swapaxes(q[b], 0, 1), np.swapaxes(k, 0, 1),
                                               np.swapaxes(v, 0, 1), scale=0.3), 0, 1))
    assert relative_error(got.double().numpy(), np.stack(want)) < 1e-5


def test_value_head_size_and_mismatched_caches(rng):
    """v_cache may have another head size than k_cache (Dv != D); caches
    whose heads disagree are the compiler's error, with the shapes."""
    lengths = [30, 9]
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, 2, 16, "nhd", dv=32)
    q = rng.standard_normal((2, 1, 4, 16)).astype(np.float32)
    got = paged_attention(q, kc, vc, table, np.array(lengths, np.int32))
    assert got.shape == (2, 1, 4, 32)
    assert relative_error(got.astype(np.float64), reference(q, keys, values)) < 1e-5
    with pytest.raises(ValueError, match=r"'attn.gather_pages' op result must have shape"):
        paged_attention(q, kc[:, :, :1], vc, table, np.array(lengths, np.int32))


def test_bad_arguments(rng):
    keys, values, kc, vc, table = make_cache(rng, [20], 16, 1, 16, "nhd")
    q = rng.standard_normal((1, 1, 2, 16)).astype(np.float32)
    lens = np.array([20], np.int32)
    with pytest.raises(ValueError, match="layout must be 'nhd' or 'hnd', got 'bhd'"):
        paged_attention(q, kc, vc, table, lens, layout="bhd")
    with pytest.raises(ValueError, match="block_table must have 2 dimensions, got shape"):
        paged_attention(q, kc, vc, table[0], lens)
    with pytest.raises(TypeError, match="cache_seqlens must be int32 or int64, got f32"):
        paged_attention(q, kc, vc, table, lens.astype(np.float32))
    with pytest.raises(TypeError, match=r"k_cache \(f16\) must have q's element type \(f32\)"):
        paged_attention(q, kc.astype(np.float16), vc, table, lens)
    with pytest.raises(ValueError, match="give both or neither"):
        paged_attention(q, kc, vc, table, lens, k=q)
