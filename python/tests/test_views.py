# ===- test_views.py - strided query, key and value read in place ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Transformers hand attention [B, H, L, D] views of [B, L, H, D]
# projections. The compiled functions take query, key and value as
# row-strided buffers (docs/CpuABI.md): such views reach the kernel without
# a copy, and the results equal those of contiguous inputs.
#
# ===----------------------------------------------------------------------=== #

import tracemalloc

import numpy as np
import pytest

from conftest import require

import attn_mlir

torch = require("torch")
F = torch.nn.functional


def _heads_view(x):
    """[B, L, H, D] -> the [B, H, L, D] view transformers passes."""
    return x.transpose(1, 2)


def _copies(fn):
    """The aten copy operators `fn` runs (torch's profiler)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    names = ("aten::copy_", "aten::clone", "aten::contiguous")
    return [e.name for e in prof.events() if e.name in names]


@pytest.mark.parametrize("causal", [False, True])
def test_projection_views_match_contiguous_inputs(causal):
    generator = torch.Generator().manual_seed(0)
    # Grouped-query: 4 query heads, 2 key/value heads; lengths 37 and 53.
    xq = torch.randn(2, 37, 4, 64, generator=generator)
    xk, xv = (torch.randn(2, 53, 2, 64, generator=generator) for _ in range(2))
    q, k, v = (_heads_view(x) for x in (xq, xk, xv))
    assert not q.is_contiguous()
    got = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    want = attn_mlir.scaled_dot_product_attention(q.contiguous(), k.contiguous(), v.contiguous(),
                                                  is_causal=causal, enable_gqa=True)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_allclose(got.numpy(), F.scaled_dot_product_attention(
        q, k, v, is_causal=causal, enable_gqa=True).numpy(), rtol=1e-5, atol=2e-6)


def test_projection_views_are_not_copied():
    generator = torch.Generator().manual_seed(1)
    q, k, v = (_heads_view(torch.randn(1, 96, 4, 64, generator=generator)) for _ in range(3))
    call = lambda: attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True)
    call()  # compiled, and the call remembered
    assert _copies(call) == []
    # The same call again on the views' rows read through another slice
    # (an offset into the buffer): no copy either.
    base = torch.randn(1, 4, 120, 64, generator=generator)
    sliced = base[:, :, 10:106]
    assert _copies(lambda: attn_mlir.scaled_dot_product_attention(
        sliced, sliced, sliced, is_causal=True)) == []
    # A view whose last dimension is strided is copied (the kernel reads
    # rows of contiguous elements): the check above can see copies.
    columns = torch.randn(1, 4, 64, 96, generator=generator).transpose(-1, -2)
    assert _copies(lambda: attn_mlir.scaled_dot_product_attention(
        columns, columns, columns, is_causal=True))


def test_numpy_views_are_not_copied():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 256, 4, 64)).astype(np.float32)
    q = x.transpose(0, 2, 1, 3)
    want = attn_mlir.scaled_dot_product_attention(np.ascontiguousarray(q),
                                                  np.ascontiguousarray(q),
                                                  np.ascontiguousarray(q))
    tracemalloc.start()
    try:
        got = attn_mlir.scaled_dot_product_attention(q, q, q)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, want)
    # A copy of the query alone would be x.nbytes (256 KiB); the result
    # comes from the compiled code's allocator, which tracemalloc does
    # not see.
    assert peak < x.nbytes // 2, f"{peak} bytes allocated: the views were copied"


def test_gradients_through_views():
    generator = torch.Generator().manual_seed(3)
    xs = [torch.randn(2, 24, 4, 16, generator=generator, requires_grad=True) for _ in range(3)]
    grads = []
    for sdpa in (attn_mlir.scaled_dot_product_attention, F.scaled_dot_product_attention):
        for x in xs:
            x.grad = None
        out = sdpa(*(_heads_view(x) for x in xs), is_causal=True)
        (out * torch.arange(out.numel()).reshape(out.shape).sin()).sum().backward()
        grads.append([x.grad.clone() for x in xs])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


# out=: the output written in place into a caller's view.

@pytest.mark.parametrize("dynamic", [False, True])
def test_out_view_is_written_in_place(dynamic):
    generator = torch.Generator().manual_seed(4)
    q = _heads_view(torch.randn(2, 29, 4, 32, generator=generator))
    k, v = (_heads_view(torch.randn(2, 41, 2, 32, generator=generator)) for _ in range(2))
    want = attn_mlir.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True,
                                                  dynamic=dynamic)
    for _ in range(2):  # the first call compiles, the second is remembered
        # [B, L, H, D] storage with a row of NaN on either side, written
        # through its [B, H, L, D] view at an offset.
        storage = torch.full((2, 31, 4, 32), float("nan"))
        out = _heads_view(storage[:, 1:30])
        got = attn_mlir.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True,
                                                     dynamic=dynamic, out=out)
        assert got is out
        np.testing.assert_array_equal(out.numpy(), want.numpy())
        assert torch.isnan(storage[:, 0]).all() and torch.isnan(storage[:, 30]).all()


def test_out_costs_no_copy_and_no_result():
    generator = torch.Generator().manual_seed(5)
    q, k, v = (_heads_view(torch.randn(1, 96, 4, 64, generator=generator)) for _ in range(3))
    storage = torch.empty(1, 96, 4, 64)
    call = lambda: attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True,  # noqa: E731
                                                          out=_heads_view(storage))
    call()
    assert _copies(call) == []
    # NumPy: nothing the size of the output is allocated.
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 256, 4, 64)).astype(np.float32)
    qn = x.transpose(0, 2, 1, 3)
    target = np.empty_like(x)
    attn_mlir.scaled_dot_product_attention(qn, qn, qn, out=target.transpose(0, 2, 1, 3))
    tracemalloc.start()
    try:
        attn_mlir.scaled_dot_product_attention(qn, qn, qn, out=target.transpose(0, 2, 1, 3))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < x.nbytes // 4, f"{peak} bytes allocated"
    np.testing.assert_allclose(target.transpose(0, 2, 1, 3),
                               attn_mlir.scaled_dot_product_attention(qn, qn, qn),
                               rtol=0, atol=0)


def test_out_errors():
    q = torch.randn(1, 2, 8, 16)
    sdpa = attn_mlir.scaled_dot_product_attention
    with pytest.raises(ValueError, match=r"out has shape \[1, 2, 8, 8\]; the output's is "
                                         r"\[1, 2, 8, 16\]"):
        sdpa(q, q, q, out=torch.empty(1, 2, 8, 8))
    with pytest.raises(TypeError, match="out is f64; the output is f32"):
        sdpa(q, q, q, out=torch.empty(1, 2, 8, 16, dtype=torch.float64))
    with pytest.raises(TypeError, match="out must be a Tensor like the query"):
        sdpa(q, q, q, out=np.empty((1, 2, 8, 16), np.float32))
    with pytest.raises(ValueError, match=r"last dimension contiguous \(stride 1\), got "
                                         r"strides \[256, 128, 1, 8\]"):
        sdpa(q, q, q, out=torch.empty(1, 2, 16, 8).transpose(-1, -2))
    with pytest.raises(ValueError, match="out overlaps query"):
        sdpa(q, q.clone(), q.clone(), out=q)
    with pytest.raises(ValueError, match="out overlaps value"):
        buffer = torch.randn(1, 2, 8, 32)
        sdpa(q, q, buffer[..., 16:], out=buffer[..., :16])
    x = torch.randn(1, 2, 8, 16, requires_grad=True)
    with pytest.raises(RuntimeError, match="out= does not support automatic differentiation"):
        sdpa(x, x, x, out=torch.empty(1, 2, 8, 16))
    with pytest.raises(ValueError, match="read-only NumPy array"):
        a = np.zeros((1, 2, 8, 16), np.float32)
        frozen = np.zeros((1, 2, 8, 16), np.float32)
        frozen.flags.writeable = False
        sdpa(a, a, a, out=frozen)


def test_flex_attention_out_view():
    generator = torch.Generator().manual_seed(7)
    q, k, v = (_heads_view(torch.randn(1, 33, 2, 16, generator=generator)) for _ in range(3))
    bias = torch.randn(33, generator=generator)

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + bias[kv_idx]

    want = attn_mlir.flex_attention(q, k, v, score_mod=score_mod)
    storage = torch.full((1, 33, 2, 16), float("nan"))
    got = attn_mlir.flex_attention(q, k, v, score_mod=score_mod, out=_heads_view(storage))
    assert got.data_ptr() == storage.data_ptr()
    np.testing.assert_array_equal(storage.transpose(1, 2).numpy(), want.numpy())
    # A captured array is read while out is written: it may not overlap.
    shared = torch.zeros(1, 2, 33, 16)
    with pytest.raises(ValueError, match="out overlaps the captured array cap0"):
        attn_mlir.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + shared[b, h, i, 0],
                                 out=shared)
    x = torch.randn(1, 2, 33, 16, requires_grad=True)
    with pytest.raises(RuntimeError, match="out= does not support automatic differentiation"):
        attn_mlir.flex_attention(x, x, x, out=torch.empty(1, 2, 33, 16))
