# ===- test_linear.py - attn_mlir.functional.linear ------------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The compiled linear layer against torch.nn.functional.linear run in
# float64: results, every gradient (only those asked for), gradcheck,
# NumPy inputs, shape-generic calls, torch.compile (the custom op; eager
# calls the autograd.Function), and PyTorch's errors.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir import functional
from conftest import require

torch = require("torch")
F = torch.nn.functional


def relative(got, want):
    got = torch.as_tensor(got).detach().double()
    assert torch.all(torch.isfinite(got)), "non-finite values"
    return ((got - want).norm() / max(want.norm(), 1e-300)).item()


# input shape, out_features: token counts that fill no register block,
# widths that fill no panel, 1-D and 3-D inputs.
SHAPES = [((37, 24), 40), ((2, 65, 96), 192), ((130,), 7), ((3, 1, 64), 64)]


@pytest.mark.parametrize("shape,n", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_forward_and_gradients_match_torch(rng, shape, n, bias, dtype):
    x = torch.from_numpy(rng.standard_normal(shape))
    w = torch.from_numpy(rng.standard_normal((n, shape[-1])))
    b = torch.from_numpy(rng.standard_normal(n)) if bias else None
    leaves = [t.to(dtype).clone().requires_grad_() for t in (x, w, b) if t is not None]
    refs = [t.clone().requires_grad_() for t in (x, w, b) if t is not None]
    out = functional.linear(*leaves)
    want = F.linear(*refs)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert out.dtype == dtype and out.shape == want.shape
    assert out.grad_fn is not None and "attn_mlir" in type(out.grad_fn).__name__
    assert relative(out, want) < tol
    g = torch.from_numpy(rng.standard_normal(tuple(want.shape)))
    out.backward(g.to(dtype))
    want.backward(g)
    for name, a, r in zip(("input", "weight", "bias"), leaves, refs):
        assert relative(a.grad, r.grad) < tol, f"{name}'s gradient"


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, True),
                                   (False, True, False), (True, True, True)])
def test_only_the_gradients_asked_for(rng, needs):
    """Leaves that do not require grad get none (and the backward computes
    none for them)."""
    x, w, b = (torch.from_numpy(rng.standard_normal(s)).float()
               for s in ((9, 32), (16, 32), (16,)))
    for t, need in zip((x, w, b), needs):
        t.requires_grad_(need)
    g = torch.from_numpy(rng.standard_normal((9, 16))).float()
    functional.linear(x, w, b).backward(g)
    want = {"x": g.double() @ w.double(), "w": g.double().T @ x.double(),
            "b": g.double().sum(0)}
    for (name, t), need in zip((("x", x), ("w", w), ("b", b)), needs):
        if need:
            assert relative(t.grad, want[name]) < 1e-5, name
        else:
            assert t.grad is None, name


def test_gradcheck(rng):
    x, w, b = (torch.from_numpy(rng.standard_normal(s)).requires_grad_()
               for s in ((2, 3, 6), (5, 6), (5,)))
    assert torch.autograd.gradcheck(functional.linear, (x, w, b))
    assert torch.autograd.gradcheck(lambda x, w: functional.linear(x, w), (x, w))


def test_numpy_inputs(rng):
    x = rng.standard_normal((11, 20)).astype(np.float32)
    w = rng.standard_normal((30, 20)).astype(np.float32)
    b = rng.standard_normal(30).astype(np.float32)
    out = functional.linear(x, w, b)
    assert isinstance(out, np.ndarray) and out.shape == (11, 30)
    want = x.astype(np.float64) @ w.astype(np.float64).T + b
    assert np.abs(out - want).max() / np.abs(want).max() < 1e-5


def test_token_counts_share_one_compile(rng):
    """A second token count compiles the shape-generic function, which then
    serves every later count (dynamic=None, as for attention)."""
    w = torch.from_numpy(rng.standard_normal((24, 40))).float().requires_grad_()
    before = attn_mlir.stats()["compiles"]
    for m in (3, 17, 50, 8):
        x = torch.from_numpy(rng.standard_normal((m, 40))).float().requires_grad_()
        out = functional.linear(x, w)
        assert relative(out, F.linear(x.double(), w.double())) < 1e-5
        out.sum().backward()
        assert relative(x.grad, torch.ones(m, 24).double() @ w.double()) < 1e-5
    # Forward and backward: a static and a generic function each.
    assert attn_mlir.stats()["compiles"] - before <= 4


def test_torch_compile_traces_it(rng):
    x, w, b = (torch.from_numpy(rng.standard_normal(s)).float().requires_grad_()
               for s in ((4, 8), (6, 8), (6,)))
    compiled = torch.compile(lambda x: functional.linear(x, w, b).square().sum(),
                             fullgraph=True)
    compiled(x).backward()
    traced = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    functional.linear(x, w, b).square().sum().backward()
    for a, t in zip(traced, (x, w, b)):
        assert relative(a, t.grad.double()) < 1e-5


def test_eager_calls_skip_the_custom_op_and_agree_with_it(rng):
    """An eager call is the autograd.Function (no custom-op dispatch); the
    custom op torch.compile traces computes the same values and
    gradients."""
    x, w, b = (torch.from_numpy(rng.standard_normal(s)).float().requires_grad_()
               for s in ((5, 16), (12, 16), (12,)))
    g = torch.from_numpy(rng.standard_normal((5, 12))).float()
    eager = functional.linear(x, w, b)
    assert type(eager.grad_fn).__name__ == "attn_mlir_linear_forwardBackward"
    eager.backward(g)
    grads = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    op = torch.ops.attn_mlir.linear_forward(x, w, b, "cpu", False)
    assert "attn_mlir" in type(op.grad_fn).__name__ and type(op.grad_fn) is not type(
        eager.grad_fn)
    assert relative(op, eager.detach().double()) == 0
    op.backward(g)
    for a, t in zip(grads, (x, w, b)):
        assert relative(a, t.grad.double()) == 0


def test_errors(rng):
    x = torch.zeros(3, 8)
    with pytest.raises(ValueError, match=r"input's last dimension \(8\) must equal "
                                         r"weight's in_features \(9\)"):
        functional.linear(x, torch.zeros(4, 9))
    with pytest.raises(ValueError, match=r"weight 2 \(out_features, in_features\), got "
                                         r"shapes \[3, 8\] and \[8\]"):
        functional.linear(x, torch.zeros(8))
    with pytest.raises(ValueError, match=r"bias must have shape \[4\] \(out_features\), "
                                         r"got \[5\]"):
        functional.linear(x, torch.zeros(4, 8), torch.zeros(5))
    with pytest.raises(TypeError, match="input must be float32 or float64, got f16"):
        functional.linear(x.half(), torch.zeros(4, 8).half())
    with pytest.raises(TypeError, match="weight is f64, input is f32"):
        functional.linear(x, torch.zeros(4, 8, dtype=torch.float64))
