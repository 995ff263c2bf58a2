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
