# ===- test_varlen.py - varlen_attention (flash_attn_varlen_func-style) ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir.functional import scaled_dot_product_attention, varlen_attention
from conftest import reference_sdpa, relative_error, require


def packed(rng, lengths, heads, d):
    """Sequences of `lengths` rows packed one after another: [total, heads, d]."""
    return rng.standard_normal((sum(lengths), heads, d)).astype(np.float32)


def offsets(lengths, dtype=np.int32):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(dtype)


def per_sequence(q, k, v, q_lens, k_lens, attend):
    """`attend(q [H, lq, D], k, v)` on each sequence alone, packed again."""
    out, cq, ck = [], offsets(q_lens), offsets(k_lens)
    for b in range(len(q_lens)):
        qs, ks = slice(cq[b], cq[b + 1]), slice(ck[b], ck[b + 1])
        if k_lens[b] == 0:  # no key: rows of zeros
            out.append(np.zeros((q_lens[b],) + q.shape[1:-1] + v.shape[-1:]))
            continue
        o = attend(*(np.swapaxes(x, 0, 1) for x in (q[qs], k[ks], v[ks])))
        out.append(np.swapaxes(np.asarray(o), 0, 1))
    return np.concatenate(out)


@pytest.mark.parametrize("causal", [True, False])
def test_self_attention_matches_reference(rng, causal):
    lengths = [37, 1, 128, 0, 90]
    q, k, v = packed(rng, lengths, 8, 64), packed(rng, lengths, 2, 64), packed(rng, lengths, 2, 64)
    cu = offsets(lengths)
    got = varlen_attention(q, k, v, cu, cu, max(lengths), max(lengths), causal=causal)
    want = per_sequence(q, k, v, lengths, lengths,
                        lambda q, k, v: reference_sdpa(q, k, v, causal=causal))
    assert got.shape == (sum(lengths), 8, 64) and got.dtype == np.float32
    assert relative_error(got, want) < 1e-5


def test_equals_per_sequence_runs(rng):
    """Varlen equals attn_mlir's own attention run on each sequence alone."""
    q_lens, k_lens = [5, 64, 17], [70, 9, 33]
    q, k, v = packed(rng, q_lens, 4, 32), packed(rng, k_lens, 4, 32), packed(rng, k_lens, 4, 48)
    got = varlen_attention(q, k, v, offsets(q_lens), offsets(k_lens), causal=True)
    want = per_sequence(q, k, v, q_lens, k_lens, lambda q, k, v: scaled_dot_product_attention(
        q, k, v, is_causal=True, alignment="bottom_right"))
    assert relative_error(got, want) < 1e-6


def test_window_and_scale_int64_offsets(rng):
    q_lens, k_lens = [20, 3, 50], [30, 3, 50]
    q, k, v = packed(rng, q_lens, 2, 16), packed(rng, k_lens, 1, 16), packed(rng, k_lens, 1, 16)
    got = varlen_attention(q, k, v, offsets(q_lens, np.int64), offsets(k_lens, np.int64),
                           softmax_scale=0.3, window_size=(6, 2))
    want = per_sequence(q, k, v, q_lens, k_lens, lambda q, k, v: reference_sdpa(
        q, k, v, scale=0.3, window=(6, 2), align="bottom_right"))
    assert relative_error(got, want) < 1e-5


def test_causal_more_queries_than_keys_gives_zero_rows(rng):
    """FlashAttention's rule: a query row that sees no key is zeros."""
    q_lens, k_lens = [6], [2]
    q, k, v = packed(rng, q_lens, 1, 8), packed(rng, k_lens, 1, 8), packed(rng, k_lens, 1, 8)
    got = varlen_attention(q, k, v, offsets(q_lens), offsets(k_lens), causal=True)
    assert np.all(got[:4] == 0) and np.all(np.abs(got[4:]) > 0)


def test_batches_of_other_lengths_do_not_recompile(rng):
    """A serving loop: each batch has other lengths and counts; after the
    shape-generic function is compiled, later batches reuse it."""
    def batch(lengths):
        q, k, v = (packed(rng, lengths, 4, 32) for _ in range(3))
        cu = offsets(lengths)
        got = varlen_attention(q, k, v, cu, cu, causal=True)
        want = per_sequence(q, k, v, lengths, lengths,
                            lambda q, k, v: reference_sdpa(q, k, v, causal=True))
        assert relative_error(got, want) < 1e-5

    batch([30, 64, 2])
    batch([50, 10, 10, 41])
    compiles = attn_mlir.stats()["compiles"]
    for lengths in ([60, 33], [1, 2, 3, 4, 5, 40], [64] * 3):  # longest in (32, 64]
        batch(lengths)
    assert attn_mlir.stats()["compiles"] == compiles


def test_torch_tensors_match_torch(rng):
    torch = require("torch")
    lengths = [12, 40, 7]
    q, k, v = (torch.from_numpy(packed(rng, lengths, 4, 16)) for _ in range(3))
    cu = torch.tensor(offsets(lengths))
    got = varlen_attention(q, k, v, cu, cu, causal=True)
    assert isinstance(got, torch.Tensor) and got.shape == (59, 4, 16)
    want = torch.cat([torch.nn.functional.scaled_dot_product_attention(
        *(x[s:e].transpose(0, 1) for x in (q, k, v)), is_causal=True).transpose(0, 1)
        for s, e in zip(cu[:-1].tolist(), cu[1:].tolist())])
    assert relative_error(got.numpy(), want.numpy().astype(np.float64)) < 1e-5


def test_bad_arguments_say_what_is_wrong(rng):
    q = packed(rng, [4, 4], 2, 8)
    cu = offsets([4, 4])
    with pytest.raises(ValueError, match=r"non-decreasing offsets .* 8 packed rows, got \[0, 6, 3\]"):
        varlen_attention(q, q, q, np.array([0, 6, 3], np.int32), cu)
    with pytest.raises(ValueError, match=r"max_seqlen_q \(3\) is shorter than the longest sequence \(4\)"):
        varlen_attention(q, q, q, cu, cu, max_seqlen_q=3)
    with pytest.raises(ValueError, match=r"must describe the same sequences"):
        varlen_attention(q, q, q, cu, offsets([8]))
    with pytest.raises(ValueError, match=r"q must have 3 dimensions"):
        varlen_attention(q[None], q, q, cu, cu)
    with pytest.raises(TypeError, match=r"must both be int32 or both int64, got i32 and i64"):
        varlen_attention(q, q, q, cu, cu.astype(np.int64))


def test_refuses_tensors_that_want_gradients(rng):
    """No backward: a result cut from the graph would be a silent error."""
    torch = require("torch")
    q = torch.from_numpy(packed(rng, [4, 4], 2, 8)).requires_grad_()
    cu = torch.tensor(offsets([4, 4]))
    with pytest.raises(ValueError, match=r"varlen_attention computes no gradients"):
        varlen_attention(q, q, q, cu, cu)
    with torch.no_grad():
        assert varlen_attention(q, q, q, cu, cu).shape == (8, 2, 8)
