# ===- test_varlen.py - varlen_attention (flash_attn_varlen_func-style) ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir.functional import scaled_dot_product_attention, varlen_attention
from conftest import alibi, modified_reference, reference_sdpa, relative_error, require


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


def doc_prefix(b, h, q_idx, kv_idx):
    """A mask_mod on sequence positions: keys 0..2 (a prefix) always, else
    the last 5 positions before the query's own."""
    return (kv_idx < 3) | ((kv_idx <= q_idx) & (kv_idx > q_idx - 5))


@pytest.mark.parametrize("options", [
    dict(softcap=2.0, slopes="heads", causal=True),
    dict(slopes="batch", window=(7, 3)),
    dict(score_mod=lambda s, b, h, i, j: s + 0.05 * (i - j) * (h + 1), mask_mod=doc_prefix),
], ids=["softcap-alibi-causal", "alibi-per-sequence-window", "score-and-mask-mod"])
def test_modifiers_match_float64(rng, options):
    """Softcap, ALiBi (per head and per sequence and head), windows,
    score_mod and mask_mod on sequence positions, against float64, with GQA
    and sequences whose query and key lengths differ."""
    torch = require("torch")
    q_lens, k_lens = [9, 1, 40, 0, 23], [30, 5, 40, 7, 23]
    hq, hkv = 4, 2
    q, k, v = (torch.from_numpy(packed(rng, n, h, 16)) for n, h in
               ((q_lens, hq), (k_lens, hkv), (k_lens, hkv)))
    cu_q, cu_k = offsets(q_lens), offsets(k_lens)
    slopes = {"heads": alibi(hq), "batch": rng.uniform(0.1, 1.0, (5, hq)).astype(np.float32),
              None: None}[options.pop("slopes", None)]
    window = options.pop("window", None)
    got, lse = varlen_attention(q, k, v, torch.from_numpy(cu_q), torch.from_numpy(cu_k),
                                window_size=window or (-1, -1), alibi_slopes=slopes,
                                return_lse=True, **options)

    def mask(b, h, i, j):
        return options["mask_mod"](b, h, i, j)

    def score(s, b, h, i, j):
        return options["score_mod"](s, b, h, i, j)

    want, want_lse = modified_reference(
        q.double(), k.double(), v.double(), cu_q, cu_k, causal=options.get("causal", False),
        window=window, softcap=options.get("softcap", 0.0),
        slopes=None if slopes is None else torch.from_numpy(slopes).double(),
        score_mod=score if "score_mod" in options else None,
        mask_mod=mask if "mask_mod" in options else None)
    assert relative_error(got.numpy(), want.numpy()) < 1e-5
    assert lse.shape == (hq, sum(q_lens)) and lse.dtype == torch.float32
    finite = torch.isfinite(want_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert relative_error(lse[finite].numpy(), want_lse[finite].numpy()) < 1e-6


def test_dropout_keeps_what_the_identity_shows(rng):
    """Dropout's keep decisions, read from one call with V = I (so O =
    dropout(P) / (1 - p)), are those of a call with the same seed on other
    values: the output is dropout(P) V, against float64."""
    torch = require("torch")
    p, seed = 0.25, 11
    q_lens, k_lens = [12, 30, 5], [17, 30, 24]
    q, k = packed(rng, q_lens, 2, 16), packed(rng, k_lens, 2, 16)
    cu_q, cu_k = offsets(q_lens), offsets(k_lens)
    eye = np.zeros((sum(k_lens), 2, 32), np.float32)  # key j of its sequence -> column j
    for b in range(3):
        for j in range(k_lens[b]):
            eye[cu_k[b] + j, :, j] = 1
    dropped = varlen_attention(q, k, eye, cu_q, cu_k, dropout_p=p, seed=seed, causal=True)
    keep = [torch.from_numpy(dropped[cu_q[b]:cu_q[b + 1], :, :k_lens[b]] != 0)
            .transpose(0, 1).double() for b in range(3)]
    # Among the keys the causal mask leaves, about 1 - p are kept.
    kept = torch.cat([x[:, np.arange(lq)[:, None] + lk - lq >= np.arange(lk)].flatten()
                      for x, lq, lk in zip(keep, q_lens, k_lens)])
    assert 0.65 < kept.mean() < 0.85
    v = packed(rng, k_lens, 2, 24)
    got = varlen_attention(q, k, v, cu_q, cu_k, dropout_p=p, seed=seed, causal=True)
    want, _ = modified_reference(*(torch.from_numpy(x).double() for x in (q, k, v)), cu_q, cu_k,
                                 causal=True, keep=keep, dropout_p=p)
    assert relative_error(got, want.numpy()) < 1e-5
    assert not np.array_equal(got, varlen_attention(q, k, v, cu_q, cu_k, dropout_p=p,
                                                    seed=seed + 1, causal=True))


def test_gradcheck(rng):
    """The compiled backward is the forward's derivative (float64
    gradcheck): causal, a window, GQA and dropout (a fixed seed), with a
    sequence without queries and rows past the last sequence. (score_mod
    regions compute in f32 whatever the inputs (AttnOps.td), too coarse for
    gradcheck's differences: the next test checks them.)"""
    torch = require("torch")
    q_lens, k_lens = [3, 0, 5], [4, 2, 6]
    q = torch.from_numpy(rng.standard_normal((sum(q_lens) + 1, 2, 4))).requires_grad_()
    k, v = (torch.from_numpy(rng.standard_normal((sum(k_lens), 1, 4))).requires_grad_()
            for _ in range(2))
    cu_q, cu_k = torch.from_numpy(offsets(q_lens)), torch.from_numpy(offsets(k_lens))

    def attend(q, k, v):
        return varlen_attention(q, k, v, cu_q, cu_k, causal=True, window_size=(3, -1),
                                dropout_p=0.3, seed=7)

    assert torch.autograd.gradcheck(attend, (q, k, v), atol=1e-7, rtol=1e-5)


def test_gradients_match_float64_with_dropout(rng):
    """float32 gradients through softcap, ALiBi, a mask_mod and dropout
    against float64 autograd on the reference with the same keep
    decisions."""
    torch = require("torch")
    p, seed = 0.2, 3
    q_lens, k_lens = [33, 7, 64], [40, 7, 64]
    hq, hkv, d = 4, 1, 32
    q, k, v = (torch.from_numpy(packed(rng, n, h, d)).requires_grad_() for n, h in
               ((q_lens, hq), (k_lens, hkv), (k_lens, hkv)))
    cu_q, cu_k = offsets(q_lens), offsets(k_lens)
    eye = torch.zeros((sum(k_lens), hkv, 64))
    for b in range(3):
        for j in range(k_lens[b]):
            eye[cu_k[b] + j, :, j] = 1
    slopes = alibi(hq)
    options = dict(dropout_p=p, seed=seed, mask_mod=doc_prefix, softcap=4.0,
                   alibi_slopes=slopes)
    with torch.no_grad():
        dropped = varlen_attention(q, k, eye, torch.from_numpy(cu_q), torch.from_numpy(cu_k),
                                   **options)
    keep = [(dropped[cu_q[b]:cu_q[b + 1], :, :k_lens[b]] != 0).transpose(0, 1).double()
            for b in range(3)]
    out = varlen_attention(q, k, v, torch.from_numpy(cu_q), torch.from_numpy(cu_k), **options)
    grad = torch.from_numpy(rng.standard_normal(out.shape).astype(np.float32))
    got = torch.autograd.grad(out, (q, k, v), grad)
    leaves = [x.detach().double().requires_grad_() for x in (q, k, v)]
    want_out, _ = modified_reference(*leaves, cu_q, cu_k, mask_mod=doc_prefix, keep=keep,
                                     dropout_p=p, softcap=4.0,
                                     slopes=torch.from_numpy(slopes).double())
    want = torch.autograd.grad(want_out, leaves, grad.double())
    assert relative_error(out.detach().numpy(), want_out.detach().numpy()) < 1e-5
    for g, w in zip(got, want):
        assert relative_error(g.numpy(), w.numpy()) < 1e-5


def test_lse_rows_past_the_sequences_and_offsets_from_the_middle(rng):
    """Offsets need not start at row 0 or end at the last row: those rows
    are zeros in the output and -inf in the log-sum-exp."""
    q = packed(rng, [10], 2, 8)
    cu = np.array([2, 5, 9], np.int32)
    out, lse = varlen_attention(q, q, q, cu, cu, return_lse=True)
    assert np.all(out[:2] == 0) and np.all(out[9:] == 0)
    assert np.all(np.isneginf(lse[:, :2])) and np.all(np.isneginf(lse[:, 9:]))
    for s, e in ((2, 5), (5, 9)):
        x = np.swapaxes(q[s:e], 0, 1).astype(np.float64)
        scores = x @ np.swapaxes(x, 1, 2) / np.sqrt(8)
        want = np.log(np.exp(scores).sum(-1))
        assert relative_error(lse[:, s:e], want) < 1e-6


def test_modifier_arguments_are_checked(rng):
    q = packed(rng, [4, 4], 2, 8)
    cu = offsets([4, 4])
    with pytest.raises(ValueError, match=r"alibi_slopes must be float32 of shape \[2\] or "
                                         r"\[2, 2\], got f32 \[3\]"):
        varlen_attention(q, q, q, cu, cu, alibi_slopes=np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"alibi_slopes must be float32 .* got f64"):
        varlen_attention(q, q, q, cu, cu, alibi_slopes=np.ones(2))
    with pytest.raises(ValueError, match=r"softcap must be finite and >= 0 .* got -1"):
        varlen_attention(q, q, q, cu, cu, softcap=-1)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        varlen_attention(q, q, q, cu, cu, dropout_p=1.0)
    with pytest.raises(ValueError, match=r"query heads \(2\) must be a multiple of key/value "
                                         r"heads \(3\)"):
        varlen_attention(q, packed(rng, [4, 4], 3, 8), packed(rng, [4, 4], 3, 8), cu, cu)


def test_custom_ops_pass_opcheck():
    """The custom ops' schema, fake tensors (torch.compile) and autograd
    registration, as torch.library.opcheck checks them."""
    torch = require("torch")
    from attn_mlir import _autograd
    q = torch.randn(9, 2, 8, requires_grad=True)
    k, v = (torch.randn(11, 1, 8, requires_grad=True) for _ in range(2))
    cu_q, cu_k = torch.tensor([0, 4, 9], dtype=torch.int32), torch.tensor([0, 5, 11],
                                                                          dtype=torch.int32)
    _autograd.ops()
    result = torch.library.opcheck(
        torch.ops.attn_mlir.varlen_forward.default,
        (q, k, v, cu_q, cu_k, [8, 8], 0.0, None, True, None, "", [], "", None, "cpu"))
    assert set(result.values()) == {"SUCCESS"}, result
