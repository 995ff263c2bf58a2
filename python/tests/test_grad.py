# ===- test_grad.py - gradients of scaled_dot_product_attention ------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# attn_mlir.scaled_dot_product_attention under torch autograd: its dQ, dK
# and dV (the compiled attn.sdpa_grad) against torch autograd through a
# float64 implementation of attn.sdpa's semantics written with torch ops
# (docs/Numerics.md: bool masks keep, float masks add, a row with no visible
# key gives 0), for fresh random inputs and output gradients.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from conftest import require

torch = require("torch")

# Relative error (Frobenius norm) of f32 gradients against float64.
TOL = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 2e-2}


def reference(q, k, v, mask=None, causal=False, scale=None, window=None,
              align="top_left", keep_dropped=None, dropout_p=0.0):
    """attn.sdpa in float64 torch ops (differentiable); `keep_dropped` is the
    dropout's keep decision per element, applied as keep / (1 - p)."""
    groups = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(groups, dim=-3)
    v = v.repeat_interleave(groups, dim=-3)
    L, S = q.shape[-2], k.shape[-2]
    s = (scale if scale is not None else q.shape[-1] ** -0.5) * q @ k.transpose(-1, -2)
    keep = torch.ones(s.shape, dtype=torch.bool)
    if mask is not None:
        if mask.dtype == torch.bool:
            keep = keep & mask
        else:
            s = s + mask.double()
    i = torch.arange(L)[:, None]
    j = torch.arange(S)[None, :]
    diag = i + (S - L if align == "bottom_right" else 0)
    if causal:
        keep = keep & (j <= diag)
    if window is not None:
        keep = keep & (j >= diag - window[0]) & (j <= diag + window[1])
    s = torch.where(keep, s, -torch.inf)
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    total = e.sum(-1, keepdim=True)
    p = torch.where(total > 0, e / torch.where(total > 0, total, torch.ones_like(total)),
                    torch.zeros_like(e))
    if keep_dropped is not None:
        p = p * keep_dropped / (1 - dropout_p)
    return p @ v


def leaves(rng, shapes, dtype=torch.float32):
    return [torch.from_numpy(rng.standard_normal(s)).to(dtype).requires_grad_()
            for s in shapes]


def relative(got, want):
    got = got.detach().double()
    assert torch.all(torch.isfinite(got)), "non-finite values in the gradient"
    return ((got - want).norm() / max(want.norm(), 1e-300)).item()


def assert_agree(out, want, leaves, reference_leaves, tol):
    """The output and the gradients of `leaves` (q, k, v) within `tol` of the
    float64 reference's."""
    assert relative(out, want.detach()) < tol
    for name, ours, theirs in zip(("dq", "dk", "dv"), leaves, reference_leaves):
        error = relative(ours.grad, theirs.grad)
        assert error < tol, f"{name} off by {error:.2e}"


def check(rng, shapes, dtype=torch.float32, keep_dropped=None, **kwargs):
    """Runs ours and the reference on the same inputs and output gradient;
    asserts the output and the three gradients agree."""
    q, k, v = leaves(rng, shapes, dtype)
    out = attn_mlir.scaled_dot_product_attention(
        q, k, v, enable_gqa=shapes[0][-3] != shapes[1][-3], **kwargs)
    assert out.grad_fn is not None and out.dtype == dtype
    grad = torch.from_numpy(rng.standard_normal(tuple(out.shape))).to(dtype)
    out.backward(grad)

    ref_kwargs = {"mask": kwargs.get("attn_mask"), "causal": kwargs.get("is_causal", False),
                  "scale": kwargs.get("scale"), "window": kwargs.get("window"),
                  "align": kwargs.get("alignment", "top_left"),
                  "keep_dropped": keep_dropped, "dropout_p": kwargs.get("dropout_p", 0.0)}
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    want = reference(q64, k64, v64, **ref_kwargs)
    want.backward(grad.double())
    for ours, theirs in zip((q, k, v), (q64, k64, v64)):
        assert ours.grad.shape == theirs.grad.shape and ours.grad.dtype == dtype
    assert_agree(out, want, (q, k, v), (q64, k64, v64), TOL[dtype])


@pytest.mark.parametrize("causal", [False, True])
def test_plain_and_causal(rng, causal):
    check(rng, [(2, 3, 37, 16), (2, 3, 45, 16), (2, 3, 45, 16)], is_causal=causal)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("mask_shape", [(45,), (37, 45), (1, 3, 37, 45), (2, 1, 1, 45)])
def test_masks(rng, mask_kind, mask_shape):
    if mask_kind == "bool":
        mask = torch.from_numpy(rng.random(mask_shape) > 0.3)
    else:
        mask = torch.from_numpy(rng.standard_normal(mask_shape)).float()
    check(rng, [(2, 3, 37, 16), (2, 3, 45, 16), (2, 3, 45, 16)], attn_mask=mask)


@pytest.mark.parametrize("align", ["top_left", "bottom_right"])
def test_alignment_and_empty_rows(rng, align):
    # 30 queries over 20 keys: bottom-right leaves the first 10 rows with no
    # key, whose gradients are 0.
    check(rng, [(1, 2, 30, 8), (1, 2, 20, 8), (1, 2, 20, 8)], is_causal=True,
          alignment=align)


def test_window_gqa_value_width(rng):
    # 8 query heads over 2 key/value heads, Dv = 24 != D = 16.
    check(rng, [(2, 8, 50, 16), (2, 2, 50, 16), (2, 2, 50, 24)], window=(5, 3),
          scale=0.3)


def test_long_rows_tiled(rng):
    # Several key tiles and query tiles: the tiled forward's log-sum-exp.
    check(rng, [(1, 2, 300, 64), (1, 2, 520, 64), (1, 2, 520, 64)], is_causal=True,
          alignment="bottom_right")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(rng, dtype):
    check(rng, [(1, 2, 33, 16), (1, 2, 41, 16), (1, 2, 41, 16)], dtype=dtype,
          is_causal=True)


def test_dropout_drops_the_forwards_elements(rng):
    # The forward's dropout decisions, read from its output with V = I (so
    # that O = dropout(P)): the backward must drop the same elements.
    p = 0.3
    q = torch.from_numpy(rng.standard_normal((1, 2, 20, 8))).float()
    k = torch.from_numpy(rng.standard_normal((1, 2, 24, 8))).float()
    eye = torch.eye(24).expand(1, 2, 24, 24).contiguous()
    dropped = attn_mlir.scaled_dot_product_attention(q, k, eye, dropout_p=p, seed=5)
    keep = (dropped != 0).double()
    assert 0.5 < keep.mean().item() < 0.9
    check(rng, [(1, 2, 20, 8), (1, 2, 24, 8), (1, 2, 24, 24)], keep_dropped=keep,
          dropout_p=p, seed=5)


def test_dropout_draws_a_seed_per_call(rng):
    # Without a seed every call drops other elements (one compile for all);
    # torch.manual_seed repeats them; a given seed drops the same ones.
    q, k, v = (torch.from_numpy(rng.standard_normal((1, 2, 16, 8))).float()
               for _ in range(3))
    before = attn_mlir.stats()["compiles"] + attn_mlir.stats()["disk_hits"]

    def run(**kwargs):
        return attn_mlir.scaled_dot_product_attention(q, k, v, dropout_p=0.5, **kwargs)

    torch.manual_seed(3)
    first, second = run(), run()
    torch.manual_seed(3)
    again = run()
    assert not torch.equal(first, second)
    assert torch.equal(first, again)
    assert torch.equal(run(seed=9), run(seed=9))
    assert attn_mlir.stats()["compiles"] + attn_mlir.stats()["disk_hits"] - before <= 1
    # NumPy inputs draw from NumPy's global generator.
    qn, kn, vn = (x.numpy() for x in (q, k, v))
    a = attn_mlir.scaled_dot_product_attention(qn, kn, vn, dropout_p=0.5)
    b = attn_mlir.scaled_dot_product_attention(qn, kn, vn, dropout_p=0.5)
    assert not np.array_equal(a, b)


def test_new_sizes_reuse_the_shape_generic_build(rng):
    # A second sequence length: the automatic dynamic build, forward and
    # backward.
    check(rng, [(2, 2, 17, 16), (2, 2, 19, 16), (2, 2, 19, 16)], is_causal=True)
    check(rng, [(2, 2, 29, 16), (2, 2, 23, 16), (2, 2, 23, 16)], is_causal=True)


def test_gradcheck_float64(rng):
    q, k, v = leaves(rng, [(1, 2, 6, 4), (1, 2, 7, 4), (1, 2, 7, 3)], torch.float64)
    assert torch.autograd.gradcheck(
        lambda q, k, v: attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True),
        (q, k, v))


def test_no_grad_is_the_plain_call(rng):
    q, k, v = leaves(rng, [(1, 1, 5, 4)] * 3)
    with torch.no_grad():
        out = attn_mlir.scaled_dot_product_attention(q, k, v)
    assert out.grad_fn is None


def test_mask_requiring_grad_is_refused(rng):
    q, k, v = leaves(rng, [(1, 1, 5, 4)] * 3)
    mask = torch.zeros(5, 5, requires_grad=True)
    with pytest.raises(ValueError, match="attn_mask requires grad"):
        attn_mlir.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_torch_compile_traces_without_graph_break(rng):
    q, k, v = leaves(rng, [(1, 2, 9, 8)] * 3)

    def f(q, k, v):
        return attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True).sum()

    explained = torch._dynamo.explain(f)(q, k, v)
    assert explained.graph_break_count == 0
    compiled = torch.compile(f, fullgraph=True, backend="eager")
    compiled(q, k, v).backward()
    want = q.grad.clone()
    q.grad = None
    f(q, k, v).backward()
    assert torch.equal(q.grad, want)


def test_torch_compile_with_scale_and_softcap(rng):
    # The run-time scale and softcap's parameters are built inside the
    # traced function: no graph break (softcap's region used to be traced
    # from NumPy arrays, which dynamo refused), the same values and
    # gradients as eager torch.
    q, k, v = leaves(rng, [(1, 2, 9, 16)] * 3)

    def f(q, k, v):
        return attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3,
                                                      softcap=4.0)

    def reference(q, k, v):
        s = 4.0 * torch.tanh(0.3 * q @ k.transpose(-1, -2) / 4.0)
        s = s.masked_fill(~torch.ones(9, 9, dtype=torch.bool).tril(), float("-inf"))
        return torch.softmax(s, -1) @ v

    out = torch.compile(f, fullgraph=True, backend="eager")(q, k, v)
    out.sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    want = reference(q, k, v)
    want.sum().backward()
    assert (out - want).abs().max().item() < 1e-5
    for got, t in zip(grads, (q, k, v)):
        assert (got - t.grad).abs().max().item() < 1e-5


def test_flex_attention_through_score_mod(rng):
    # Soft-capping (tanh), an ALiBi bias from a captured slope table and a
    # document mask from captured ids: the gradients flow through the
    # traced score_mod by the chain rule; the captured tables get none.
    from attn_mlir import flex

    B, H, Hkv, L, S, E = 2, 4, 2, 21, 21, 8
    q, k, v = leaves(rng, [(B, H, L, E), (B, Hkv, S, E), (B, Hkv, S, E)])
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    docs = torch.from_numpy(np.repeat(np.arange(3), 7).astype(np.int32))

    def score_mod(score, b, h, q_idx, kv_idx):
        return 3.0 * flex.tanh(score / 3.0) + slopes[h] * (kv_idx - q_idx)

    def mask_mod(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    out = attn_mlir.flex_attention(q, k, v, score_mod=score_mod, mask_mod=mask_mod,
                                   enable_gqa=True)
    grad = torch.from_numpy(rng.standard_normal(tuple(out.shape))).float()
    out.backward(grad)

    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    k2, v2 = (x.repeat_interleave(H // Hkv, dim=1) for x in (k64, v64))
    s = q64 @ k2.transpose(-1, -2) * E ** -0.5
    i, j = torch.arange(L)[:, None], torch.arange(S)[None, :]
    s = 3.0 * torch.tanh(s / 3.0) + slopes.double()[None, :, None, None] * (j - i)
    s = torch.where(docs[:, None] == docs[None, :], s, -torch.inf)
    want = torch.softmax(s, dim=-1) @ v2
    want.backward(grad.double())
    assert_agree(out, want, (q, k, v), (q64, k64, v64), 1e-5)


def test_training_example_matches_torch():
    # examples/train_reverse.py: a transformer trained with our attention
    # and the same one with torch's, same initial weights and batches, for
    # 50 steps: the losses agree step by step (and the model learns).
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                        "train_reverse.py")
    spec = importlib.util.spec_from_file_location("train_reverse", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    losses, accuracy, worst = example.train(50, 1e-3, log=lambda *args: None)
    assert worst < 1e-4, f"losses drifted apart by {worst:.1e}"
    assert losses[0][-1] < 0.5 * losses[0][0]
    assert accuracy[0] == accuracy[1]


def test_score_mod_derivative_of_every_function(rng):
    # Each function flex_attention traces, differentiated through the
    # region (RegionDerivative): the gradients against torch autograd of the
    # same score_mod written with torch ops, in float64.
    from attn_mlir import flex

    def ours_mod(s, b, h, i, j):
        positive = flex.where(s > 0.0, flex.sqrt(s + 1.0), flex.exp(s) * 0.5)
        return (positive + flex.rsqrt(s * s + 1.0) + flex.maximum(s, -0.5)
                + flex.minimum(s, 0.25) + 0.1 * flex.log(s * s + 2.0)
                + 0.2 * flex.exp2(s / 4.0) - s / (s * s + 3.0) + flex.tanh(s)
                + 0.3 * flex.erf(s) + 0.2 * flex.sin(2.0 * s) - 0.1 * flex.cos(s)
                + 0.1 * flex.log1p(s * s) + 0.05 * flex.log2(s * s + 1.0)
                + flex.sigmoid(s))

    def torch_mod(s):
        positive = torch.where(s > 0.0, torch.sqrt(torch.clamp(s, min=0) + 1.0),
                               torch.exp(s) * 0.5)
        return (positive + torch.rsqrt(s * s + 1.0) + torch.maximum(s, torch.tensor(-0.5))
                + torch.minimum(s, torch.tensor(0.25)) + 0.1 * torch.log(s * s + 2.0)
                + 0.2 * torch.exp2(s / 4.0) - s / (s * s + 3.0) + torch.tanh(s)
                + 0.3 * torch.erf(s) + 0.2 * torch.sin(2.0 * s) - 0.1 * torch.cos(s)
                + 0.1 * torch.log1p(s * s) + 0.05 * torch.log2(s * s + 1.0)
                + torch.sigmoid(s))

    q, k, v = leaves(rng, [(1, 2, 9, 8), (1, 2, 11, 8), (1, 2, 11, 8)])
    out = attn_mlir.flex_attention(q, k, v, score_mod=ours_mod)
    grad = torch.from_numpy(rng.standard_normal(tuple(out.shape))).float()
    out.backward(grad)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    want = torch.softmax(torch_mod(q64 @ k64.transpose(-1, -2) * 8 ** -0.5), -1) @ v64
    want.backward(grad.double())
    assert_agree(out, want, (q, k, v), (q64, k64, v64), 1e-5)


def test_multihead_dropout_draws_a_seed_per_call(rng):
    # nn.MultiheadAttention in training mode: other elements dropped every
    # call (one compile), the same ones with a fixed seed.
    mha = attn_mlir.nn.MultiheadAttention(16, 4, dropout=0.5)
    x = rng.standard_normal((5, 2, 16)).astype(np.float32)
    first, second = mha(x, x, x)[0], mha(x, x, x)[0]
    assert not np.array_equal(first, second)
    fixed = attn_mlir.nn.MultiheadAttention(16, 4, dropout=0.5, seed=4)
    fixed.load_state_dict(mha.state_dict())
    assert np.array_equal(fixed(x, x, x)[0], fixed(x, x, x)[0])


# The first call of a fresh process under torch.compile(fullgraph=True): the
# custom ops must exist before tracing starts, whichever of torch and
# attn_mlir was imported first (the rest of this suite defines them early,
# so only a fresh process sees this).
FRESH_PROCESS = r"""
import sys
if sys.argv[1] == "attn_mlir first":
    import attn_mlir, torch
else:
    import torch, attn_mlir
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 16, 8, dtype=torch.float64).float().requires_grad_()
           for _ in range(3))
def f(q, k, v):
    return attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True)
out = torch.compile(f, fullgraph=True)(q, k, v)
out.sum().backward()
grads = [t.grad.clone() for t in (q, k, v)]
for t in (q, k, v):
    t.grad = None
ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
ref.sum().backward()
errors = [float((out - ref).abs().max())] + [float((g - t.grad).abs().max())
                                             for g, t in zip(grads, (q, k, v))]
print(max(errors))
"""


@pytest.mark.parametrize("order", ["attn_mlir first", "torch first"])
def test_fullgraph_compile_as_a_fresh_process_first_call(order):
    import os
    import subprocess
    import sys
    require("torch")
    out = subprocess.run([sys.executable, "-c", FRESH_PROCESS, order], env=dict(os.environ),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.split()[-1]) < 1e-5


def gqa_gradient_errors(q, k, v, out_grad):
    """The relative errors of float32 dK and dV of causal attention (with
    GQA where q has more heads than k and v) against float64, attn_mlir's
    and torch's, for float64 inputs: ((ours, torch's) for dK, for dV)."""
    def grads(sdpa, dtype):
        leaves = [x.detach().to(dtype).requires_grad_() for x in (q, k, v)]
        sdpa(*leaves, is_causal=True, enable_gqa=True).backward(out_grad.to(dtype))
        return leaves[1].grad, leaves[2].grad

    torch_sdpa = torch.nn.functional.scaled_dot_product_attention
    want = grads(torch_sdpa, torch.float64)
    theirs = grads(torch_sdpa, torch.float32)
    ours = grads(attn_mlir.scaled_dot_product_attention, torch.float32)
    return tuple((relative(o, w), relative(t, w)) for o, t, w in zip(ours, theirs, want))


@pytest.mark.parametrize("group", [3, 8])
def test_gqa_gradient_error_does_not_grow_with_the_group(rng, group):
    """dK and dV sum over every query head of a group: one running sum over
    the group's rows made the float32 error grow with the group (2.0-2.3x
    torch's at 3:1, 2.9-3.5x at 8:1, 1.6-1.9x at 1:1: benchmarks/RESULTS.md);
    each head now sums in its own accumulators. Pinned as a ratio to torch's
    error on the same inputs: at G:1 within 1.25x of what it is at 1:1 (the
    same keys and values, the group's first query head), and within 2.25x
    torch's (the 2x of issue 57 with room for the spread over fresh inputs:
    1.5-1.9x at 8:1 over eight seeds)."""
    L, S, D = 512, 511, 64
    q = torch.from_numpy(rng.standard_normal((1, group, L, D)))
    k, v = (torch.from_numpy(rng.standard_normal((1, 1, S, D))) for _ in range(2))
    out_grad = torch.from_numpy(rng.standard_normal((1, group, L, D)))
    grouped = gqa_gradient_errors(q, k, v, out_grad)
    single = gqa_gradient_errors(q[:, :1], k, v, out_grad[:, :1])
    for name, (ours, theirs), (ours1, theirs1) in zip(("dK", "dV"), grouped, single):
        ratio, ratio1 = ours / theirs, ours1 / theirs1
        assert ratio <= 1.25 * ratio1 and ratio <= 2.25, (
            f"{name} of {group}:1 GQA: relative error {ours:.3g}, torch's {theirs:.3g} "
            f"({ratio:.2f}x; at 1:1 {ratio1:.2f}x)")
