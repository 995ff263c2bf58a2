# ===- conftest.py - shared fixtures of the attn_mlir tests ---------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import importlib
import os
import tempfile

import numpy as np
import pytest

# The tests' compiled functions go to a cache of their own, not ~/.cache.
os.environ.setdefault("ATTN_MLIR_CACHE_DIR", tempfile.mkdtemp(prefix="attn-mlir-test-cache-"))
# Temporaries and results are filled with NaN when handed out: code that
# leaves an element unwritten fails (as in the lit suite).
os.environ.setdefault("ATTN_MLIR_ALLOCATOR_POISON", "1")


# Why a test may skip: the machine lacks a GPU, or the CUDA toolkit whose
# driver library the CUDA runtime links. Every other dependency (torch,
# ml_dtypes, matplotlib) is one scripts/deps.sh installs, so its absence is
# a failure: a skip would report untested code as fine.
GPU_SKIP = "needs a CUDA GPU"
TOOLKIT_SKIP = "needs the CUDA toolkit"


def require(module):
    """Imports a test dependency, failing the test when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        missing = error
    pytest.fail(f"{module} is not installed ({missing}); scripts/deps.sh "
                "installs every test dependency", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turns a skip for any reason but missing hardware into a failure."""
    report = (yield).get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    if not reason.startswith((GPU_SKIP, TOOLKIT_SKIP)):
        report.outcome = "failed"
        report.longrepr = (f"skipped ({reason}), but tests skip only for a "
                           f"missing GPU or CUDA toolkit")


# A one-op module (self-attention of a [1, 1, 4, 8] tensor) for the tests of
# compile() itself.
TINY_SDPA = """
func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %o = attn.sdpa %q, %q, %q outs(%e) : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}"""


@pytest.fixture
def rng():
    """Fresh random inputs for every test (the seed is printed on failure)."""
    seed = np.random.SeedSequence().entropy % (2**32)
    print(f"input seed {seed}")
    return np.random.default_rng(seed)


def reference_sdpa(q, k, v, mask=None, causal=False, scale=None, window=None,
                   align="top_left"):
    """attn.sdpa's semantics in float64 (docs/Numerics.md): bool masks keep,
    float masks add, fully masked rows give 0; q [..., Hq, L, E] with
    Hq a multiple of Hkv."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    groups = q.shape[-3] // k.shape[-3] if q.ndim >= 3 else 1
    if groups > 1:
        k = np.repeat(k, groups, axis=-3)
        v = np.repeat(v, groups, axis=-3)
    L, S = q.shape[-2], k.shape[-2]
    s = (scale if scale is not None else 1 / np.sqrt(q.shape[-1])) * q @ np.swapaxes(k, -1, -2)
    keep = np.ones(s.shape, bool)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == np.bool_:
            keep &= np.broadcast_to(mask, s.shape)
        else:
            s = s + mask.astype(np.float64)
    i, j = np.arange(L)[:, None], np.arange(S)[None, :]
    diag = i + (S - L if align == "bottom_right" else 0)
    if causal:
        keep &= np.broadcast_to(j <= diag, s.shape)
    if window is not None:
        left, right = window
        keep &= np.broadcast_to((j >= diag - left) & (j <= diag + right), s.shape)
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    p = np.where(total > 0, e / np.where(total > 0, total, 1), 0)
    return p @ v


def relative_error(got, want):
    got = np.asarray(got, np.float64)
    assert np.all(np.isfinite(got)), "non-finite values in the result"
    denom = np.linalg.norm(want)
    return np.linalg.norm(got - want) / (denom if denom > 0 else 1.0)


def modified_reference(q, k, v, cu_q, cu_k, scale=None, causal=False, window=None,
                       softcap=0.0, slopes=None, score_mod=None, mask_mod=None, keep=None,
                       dropout_p=0.0):
    """varlen attention in float64 torch, one sequence at a time, with
    FlashAttention's order: scale, softcap, ALiBi, score_mod, masks (causal
    and window bottom-right, mask_mod), softmax (a row with no key gives
    zeros), dropout by `keep` [b][Hq, lq, lk]. Returns (output, lse
    [Hq, total_q]); differentiable in q, k, v."""
    torch = require("torch")
    hq, hkv = q.shape[1], k.shape[1]
    outs, lses = [], []
    for b in range(len(cu_q) - 1):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        Q = q[qs].transpose(0, 1)
        K, V = (x[ks].transpose(0, 1).repeat_interleave(hq // hkv, 0) for x in (k, v))
        lq, lk = Q.shape[1], K.shape[1]
        s = (Q @ K.transpose(1, 2)) * (scale if scale is not None else Q.shape[-1] ** -0.5)
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        i = torch.arange(lq).view(1, lq, 1)
        j = torch.arange(lk).view(1, 1, lk)
        h = torch.arange(hq).view(hq, 1, 1)
        if slopes is not None:
            slope = slopes[h] if slopes.ndim == 1 else slopes[b][h]
            s = s - slope * (i + lk - lq - j).abs()
        if score_mod is not None:
            s = score_mod(s, b, h, i, j)
        visible = torch.ones(hq, lq, lk, dtype=torch.bool)
        if causal:
            visible &= j <= i + lk - lq
        if window is not None:
            visible &= (j >= i + lk - lq - window[0]) & (j <= i + lk - lq + window[1])
        if mask_mod is not None:
            visible &= mask_mod(b, h, i, j)
        s = s.masked_fill(~visible, float("-inf"))
        lse = torch.logsumexp(s, -1)
        p = torch.where(visible, torch.exp(s - lse.unsqueeze(-1).clamp_min(-1e300)),
                        torch.zeros((), dtype=s.dtype))
        if dropout_p:
            p = p * keep[b] / (1 - dropout_p)
        outs.append((p @ V).transpose(0, 1))
        lses.append(lse)
    return torch.cat(outs), torch.cat(lses, 1)


def alibi(heads):
    """ALiBi's slopes (Press et al.): 2^(-8 h / heads)."""
    return (2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)).astype(np.float32)
