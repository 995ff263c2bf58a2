# ===- test_stress.py - numerics at the edges ------------------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Attention where numerics break first: logits of +-1e4 in f32 and near
# the f16 limit in f16, one visible key, S = 1, S = 65536 through the tiled
# loop, NaN and Inf in the inputs (propagated where torch propagates them,
# never hidden), and results that are bit-identical from run to run and
# from one thread count to another (forward and backward).
#
# ===----------------------------------------------------------------------=== #

import os
import subprocess
import sys

import numpy as np
import pytest

import attn_mlir
from conftest import reference_sdpa, relative_error, require

torch = require("torch")
F = torch.nn.functional


def inputs(rng, B=1, H=2, L=33, S=47, D=16, dtype=np.float32):
    return [rng.standard_normal(shape).astype(dtype)
            for shape in ((B, H, L, D), (B, H, S, D), (B, H, S, D))]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sign", [1, -1])
def test_logits_of_ten_thousand_f32(rng, causal, sign):
    """|q.k| / sqrt(D) up to about 1e4: the max subtraction keeps exp in
    range (nothing overflows, no NaN); results as the float64 reference's
    within what f32 scores allow: a logit of size x carries an error of
    about x * 2^-24 per rounding, which exp passes on to the weights."""
    q, k, v = inputs(rng)
    q, k = q * 100, sign * k * 100
    largest = np.abs(q[0, 0] @ k[0, 0].T / 4).max()
    assert largest > 5e3
    got = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal)
    tolerance = 2 * largest * 2.0**-24
    assert relative_error(got, reference_sdpa(q, k, v, causal=causal)) < tolerance


def test_logits_near_the_f16_limit(rng):
    """f16 inputs whose logits reach 3e4 (f16's largest finite is 65504):
    scores accumulate in f32, so nothing overflows."""
    q, k, v = (x.astype(np.float16) for x in inputs(rng, D=64))
    # Row 0 meets key 0 at 61 * 61 * 64 / 8 = 29768 (the dot product itself,
    # 238144, is past f16's range); row 1 meets key 2 at -29768.
    q[0, 0, 0], k[0, 0, 0] = 61, 61
    q[0, 0, 1], k[0, 0, 2] = 61, -61
    logits = q.astype(np.float64)[0, 0] @ k.astype(np.float64)[0, 0].T / 8
    assert np.abs(logits).max() > 2.9e4
    got = attn_mlir.scaled_dot_product_attention(q, k, v)
    assert got.dtype == np.float16 and np.all(np.isfinite(got))
    assert relative_error(got, reference_sdpa(q, k, v)) < 1e-2


def test_one_visible_key_and_one_key(rng):
    q, k, v = inputs(rng)
    mask = np.zeros((33, 47), bool)
    mask[:, 5] = True
    got = attn_mlir.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert np.array_equal(got, np.broadcast_to(v[:, :, 5:6], got.shape))
    got = attn_mlir.scaled_dot_product_attention(q, k[:, :, :1], v[:, :, :1])
    assert np.array_equal(got, np.broadcast_to(v[:, :, :1], got.shape))


def test_sixty_five_thousand_keys(rng):
    """S = 65536 through the tiled loop (hundreds of key tiles), causal
    bottom-right so that every row sees most of them."""
    q, k, v = inputs(rng, H=1, L=40, S=65536)
    got = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 alignment="bottom_right")
    want = reference_sdpa(q, k, v, causal=True, align="bottom_right")
    assert relative_error(got, want) < 1e-5


@pytest.mark.parametrize("where", ["q", "k", "v"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_propagate_as_in_torch(rng, where, value):
    """A NaN or an infinity in one element of Q, K or V: the rows torch
    gives NaN (or infinity) are the rows we do, elsewhere the results agree.
    Nothing non-finite is hidden, nothing finite made non-finite."""
    q, k, v = inputs(rng)
    x = {"q": q, "k": k, "v": v}[where]
    x[0, 1, 7, 3] = value
    got = np.asarray(attn_mlir.scaled_dot_product_attention(q, k, v), np.float64)
    want = F.scaled_dot_product_attention(*(torch.from_numpy(t).double()
                                            for t in (q, k, v))).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isposinf(got), np.isposinf(want))
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    assert finite.any()
    assert np.abs(got[finite] - want[finite]).max() < 1e-5 * np.abs(want[finite]).max()


def test_nan_in_a_float_mask_is_that_row_only(rng):
    q, k, v = inputs(rng)
    mask = np.zeros((33, 47), np.float32)
    mask[2, 3] = np.nan
    got = np.asarray(attn_mlir.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert np.isnan(got[:, :, 2]).all()
    rows = np.arange(33) != 2
    want = reference_sdpa(q, k, v, mask=np.where(np.isnan(mask), 0, mask))
    assert relative_error(got[:, :, rows], want[:, :, rows]) < 1e-5


DETERMINISM = """
import sys, numpy as np, torch, attn_mlir
torch.manual_seed(0)
q, k, v = (torch.randn(2, 4, 300, 64, requires_grad=True) for _ in range(3))
outs = []
for _ in range(2):
    for x in (q, k, v):
        x.grad = None
    o = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True)
    o.backward(torch.ones_like(o))
    outs.append(np.concatenate([t.detach().numpy().ravel() for t in (o, q.grad, k.grad, v.grad)]))
assert np.array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32)), "runs differ"
np.save(sys.argv[1], outs[0])
"""


def test_bit_identical_across_runs_and_thread_counts(tmp_path):
    """Forward and backward (with the backward's key chunks, whose dQ
    shares are summed in a fixed order) give the same bits twice in a
    process, and with 1, 2 and 3 OpenMP threads."""
    results = []
    for threads in (1, 2, 3):
        out = tmp_path / f"t{threads}.npy"
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        subprocess.run([sys.executable, "-c", DETERMINISM, str(out)], env=env, check=True)
        results.append(np.load(out))
    assert all(np.array_equal(r.view(np.uint32), results[0].view(np.uint32)) for r in results)
