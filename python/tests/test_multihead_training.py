# ===- test_multihead_training.py - nn.MultiheadAttention under autograd ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# attn_mlir.nn.MultiheadAttention as a torch.nn.Module: PyTorch's
# parameters and state dicts, and every gradient (parameters and inputs)
# against torch.nn.MultiheadAttention run in float64, for fresh random
# weights, inputs and output gradients.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from conftest import require

torch = require("torch")

CONFIGS = [dict(), dict(batch_first=True), dict(kdim=12, vdim=20),
           dict(add_bias_kv=True, add_zero_attn=True), dict(bias=False)]


def pair(rng, dtype=torch.float32, **kwargs):
    """Ours (in `dtype`) and torch's module in float64 with the same random
    parameters (biases too, which torch starts at zero)."""
    ref = torch.nn.MultiheadAttention(16, 4, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
    mine = attn_mlir.nn.MultiheadAttention(16, 4, dtype=dtype, **kwargs)
    mine.load_state_dict(ref.state_dict())
    return mine, ref


def relative(got, want):
    got = got.detach().double()
    assert torch.all(torch.isfinite(got)), "non-finite values"
    return ((got - want).norm() / max(want.norm(), 1e-300)).item()


def compare(rng, mine, ref, inputs, tol, **call):
    """Runs both modules on the same inputs (leaves requiring grad) and a
    random gradient of the output and the weights; asserts outputs, weights
    and the gradients of every parameter and input agree within `tol`.
    Float masks in `call` are given to each module in its element type."""
    dtype = next(mine.parameters()).dtype
    # One tensor given several times stays one tensor (self-attention,
    # shared keys and values).
    first = [next(i for i, y in enumerate(inputs) if y is x) for x in inputs]
    ours_in = [x.to(dtype).requires_grad_() for x in inputs]
    theirs_in = [x.double().requires_grad_() for x in inputs]
    ours_in = [ours_in[i] for i in first]
    theirs_in = [theirs_in[i] for i in first]
    results = []
    for module, args in ((mine, ours_in), (ref, theirs_in)):
        elem = next(module.parameters()).dtype
        out, weights = module(*args, **{
            n: m.to(elem) if torch.is_tensor(m) and m.is_floating_point() else m
            for n, m in call.items()})
        g = torch.from_numpy(rng.standard_normal(tuple(out.shape)))
        if not results:
            grads = [g]
        loss = (out * grads[0].to(out.dtype)).sum()
        if weights is not None:
            if len(grads) == 1:
                grads.append(torch.from_numpy(rng.standard_normal(tuple(weights.shape))))
            loss = loss + (weights * grads[1].to(weights.dtype)).sum()
        loss.backward()
        results.append((out, weights, args, dict(module.named_parameters())))
    (out, weights, args, params), (want, want_w, ref_args, ref_params) = results
    assert out.grad_fn is not None and out.dtype == dtype
    assert relative(out, want) < tol
    if want_w is not None:
        assert relative(weights, want_w) < tol
    assert params.keys() == ref_params.keys()
    for name, p in params.items():
        error = relative(p.grad, ref_params[name].grad)
        assert error < tol, f"{name}'s gradient off by {error:.2e}"
    for name, x, y in zip(("query", "key", "value"), args, ref_args):
        error = relative(x.grad, y.grad)
        assert error < tol, f"{name}'s gradient off by {error:.2e}"


def random_inputs(rng, kwargs, N=3, L=5, S=7, batched=True):
    kd, vd = kwargs.get("kdim", 16), kwargs.get("vdim", 16)
    shape = (lambda n, e: (N, n, e) if kwargs.get("batch_first") else (n, N, e)) \
        if batched else (lambda n, e: (n, e))
    return [torch.from_numpy(rng.standard_normal(shape(n, e)))
            for n, e in ((L, 16), (S, kd), (S, vd))]


@pytest.mark.parametrize("kwargs", CONFIGS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gradients_match_torch_float64(rng, kwargs, dtype):
    mine, ref = pair(rng, dtype, **kwargs)
    kpm = torch.from_numpy(rng.random((3, 7)) < 0.3)
    amask = torch.from_numpy(rng.random((5, 7)) < 0.2)
    kpm[:, 0] = amask[:, 0] = False  # no fully masked row: torch gives NaN
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    for average in (True, False):
        compare(rng, mine, ref, random_inputs(rng, kwargs), tol, key_padding_mask=kpm,
                attn_mask=amask, average_attn_weights=average)
    compare(rng, mine, ref, random_inputs(rng, kwargs), tol, key_padding_mask=kpm,
            attn_mask=amask, need_weights=False)
    compare(rng, mine, ref, random_inputs(rng, kwargs, batched=False), tol,
            need_weights=False)


# torch warns about a bool key_padding_mask with a float attn_mask (mixed
# on purpose: both are combined into one additive mask).
@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("case", ["float-masks", "per-head-mask", "self-attention",
                                  "shared-kv", "unbatched-masks", "causal"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_gradients_of_other_forms(rng, case, need_weights):
    kwargs = dict(batch_first=True) if case == "per-head-mask" else {}
    mine, ref = pair(rng, **kwargs)
    inputs = random_inputs(rng, kwargs)
    call = {}
    if case == "float-masks":
        call = dict(key_padding_mask=torch.from_numpy(rng.standard_normal((3, 7))),
                    attn_mask=torch.from_numpy(rng.standard_normal((5, 7))))
    elif case == "per-head-mask":  # [N * H, L, S], bool
        m = torch.from_numpy(rng.random((12, 5, 7)) < 0.3)
        m[..., 0] = False
        call = dict(attn_mask=m, average_attn_weights=False)
    elif case == "self-attention":
        inputs = [inputs[0]] * 3
    elif case == "shared-kv":
        inputs[2] = inputs[1]
    elif case == "unbatched-masks":
        inputs = random_inputs(rng, kwargs, batched=False)
        kpm = torch.from_numpy(rng.random(7) < 0.3)
        kpm[0] = False
        call = dict(key_padding_mask=kpm, attn_mask=torch.from_numpy(
            rng.standard_normal((4, 5, 7))))
    elif case == "causal":
        inputs = random_inputs(rng, kwargs, S=5)
        call = dict(attn_mask=torch.ones(5, 5, dtype=torch.bool).triu(1), is_causal=True)
    compare(rng, mine, ref, inputs, 1e-5, need_weights=need_weights, **call)


@pytest.mark.parametrize("batch_first", [True, False])
def test_training_step_runs_no_torch_op_between_compiled_ones(rng, batch_first):
    """Without weights to return, a step's autograd graph is the compiled
    ops only (the projections, the attention core on their outputs) and
    the leaves' accumulation: the head split and merge, the slices of the
    packed projection and the gradients' concatenation are inside the
    compiled functions (torch's ops between them woke torch's threads,
    whose spinning took the cores from the next compiled call). Seq-first
    inputs add only the transposes of the layout."""
    mine, ref = pair(rng, batch_first=batch_first)
    x = torch.from_numpy(rng.standard_normal((3, 5, 16))).float().requires_grad_()
    out = mine(x, x, x, need_weights=False)[0]
    seen, todo = set(), [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        todo += [next_fn for next_fn, _ in node.next_functions]
    names = {type(node).__name__ for node in seen}
    allowed = {"AccumulateGrad"} | ({"TransposeBackward0"} if not batch_first else set())
    others = {n for n in names if "attn_mlir" not in n} - allowed
    assert not others, f"torch ops in the step: {sorted(others)}"
    assert any("heads_forward" in n for n in names), sorted(names)
    assert sum("linear_forward" in n for n in names) >= 1, sorted(names)
    compare(rng, mine, ref, [x.detach().double()] * 3, 1e-5, need_weights=False)


def test_dropout_without_weights_drops_what_the_weights_show(rng):
    """With a fixed seed, the step that returns no weights (the attention
    core on the projections' outputs) drops the same elements as the one
    that returns them: same outputs, same gradients."""
    mine = attn_mlir.nn.MultiheadAttention(16, 4, dropout=0.4, seed=5, batch_first=True)
    mine.load_state_dict(pair(rng, batch_first=True)[1].state_dict())
    x = torch.from_numpy(rng.standard_normal((2, 6, 16)).astype(np.float32))
    g = torch.from_numpy(rng.standard_normal((2, 6, 16)).astype(np.float32))
    results = []
    for need_weights in (True, False):
        mine.zero_grad()
        xs = x.clone().requires_grad_()
        out = mine(xs, xs, xs, need_weights=need_weights)[0]
        out.backward(g)
        results.append((out.detach(), xs.grad, {n: p.grad.clone()
                                                for n, p in mine.named_parameters()}))
    (out, dx, grads), (out2, dx2, grads2) = results
    assert relative(out2, out.double()) < 1e-5
    assert relative(dx2, dx.double()) < 1e-5
    for name in grads:
        assert relative(grads2[name], grads[name].double()) < 1e-5, name


def test_is_a_torch_module(rng):
    """PyTorch's parameters under PyTorch's names; state dicts both ways;
    train/eval; .to(dtype); an optimizer step reaches the compiled
    (no_grad) forward, its packed weights packed again."""
    for kwargs in CONFIGS:
        ref = torch.nn.MultiheadAttention(16, 4, **kwargs)
        mine = attn_mlir.nn.MultiheadAttention(16, 4, **kwargs)
        assert isinstance(mine, torch.nn.Module)
        assert [(n, p.shape) for n, p in mine.named_parameters()] == \
            [(n, p.shape) for n, p in ref.named_parameters()]
        assert all(isinstance(p, torch.nn.Parameter) for p in mine.parameters())
        ref.load_state_dict(mine.state_dict())
        mine.load_state_dict(ref.state_dict())
    mine = attn_mlir.nn.MultiheadAttention(128, 2)
    assert mine.training and not mine.eval().training and mine.train().training
    x = torch.from_numpy(rng.standard_normal((6, 2, 128)).astype(np.float32))
    optimizer = torch.optim.SGD(mine.parameters(), lr=0.5)
    with torch.no_grad():
        before = mine(x, x, x)[0]
    mine(x, x, x)[0].square().sum().backward()
    optimizer.step()
    ref = torch.nn.MultiheadAttention(128, 2)
    ref.load_state_dict(mine.state_dict())
    with torch.no_grad():
        after, want = mine(x, x, x)[0], ref(x, x, x)[0]
    assert relative(after, want.double()) < 1e-5
    assert relative(before, want.double()) > 1e-3  # the step changed the result
    mine.to(torch.float64)
    with torch.no_grad():
        out = mine(x.double(), x.double(), x.double())[0]
    assert out.dtype == torch.float64
    assert relative(out, ref.double()(x.double(), x.double(), x.double())[0]) < 1e-10


def test_dropout_weights_are_the_outputs_and_gradients(rng):
    """In training with dropout the per-head weights returned are the
    probabilities the compiled attention applied (dropped elements
    included), and the gradients are those of weights @ V: the backward
    drops the forward's elements."""
    mine = attn_mlir.nn.MultiheadAttention(16, 4, dropout=0.4, seed=11)
    mine.load_state_dict(pair(rng)[1].state_dict())
    E, H = 16, 4
    x = torch.from_numpy(rng.standard_normal((5, 3, E)).astype(np.float32))
    x.requires_grad_()
    out, weights = mine(x, x, x, average_attn_weights=False)
    assert 0.2 < (weights == 0).float().mean().item() < 0.6
    g = torch.from_numpy(rng.standard_normal(tuple(out.shape)).astype(np.float32))
    out.backward(g)
    ours = {n: p.grad.clone() for n, p in mine.named_parameters()}

    # The same module written out: weights (kept as computed, detached)
    # times V, then the out-projection; its parameter gradients through V
    # and the out-projection must equal ours there.
    mine.zero_grad()
    w, b = mine.in_proj_weight, mine.in_proj_bias
    v = torch.nn.functional.linear(x.detach(), w[2 * E:], b[2 * E:])
    heads = v.reshape(5, 3, H, E // H).permute(1, 2, 0, 3)
    merged = (weights.detach() @ heads).permute(2, 0, 1, 3).reshape(5, 3, E)
    written = mine.out_proj(merged)
    assert relative(out, written.detach().double()) < 1e-5
    written.backward(g)
    assert relative(ours["out_proj.weight"], mine.out_proj.weight.grad.double()) < 1e-5
    assert relative(ours["in_proj_weight"][2 * E:],
                    mine.in_proj_weight.grad[2 * E:].double()) < 1e-5


def test_bf16_module(rng):
    """A bf16 module: the compiled forward with bf16 panels, and training."""
    mine, ref = pair(rng, torch.bfloat16, batch_first=True)
    x = torch.from_numpy(rng.standard_normal((2, 9, 16)))
    with torch.no_grad():
        out, w = mine(x.bfloat16(), x.bfloat16(), x.bfloat16())
        want, want_w = ref(x, x, x)
    assert relative(out, want) < 2e-2 and relative(w, want_w) < 2e-2
    compare(rng, mine, ref, [x, x, x], 3e-2)


def test_torch_compile_traces_the_module(rng):
    """torch.compile(fullgraph=True) traces the module's autograd forward
    (the attention as the custom op), and its gradients are the eager ones."""
    mine, _ = pair(rng, batch_first=True)
    x = torch.from_numpy(rng.standard_normal((2, 5, 16)).astype(np.float32))
    compiled = torch.compile(lambda t: mine(t, t, t, need_weights=False)[0], fullgraph=True)
    compiled(x.requires_grad_()).sum().backward()
    traced = {n: p.grad.clone() for n, p in mine.named_parameters()}
    mine.zero_grad()
    mine(x, x, x, need_weights=False)[0].sum().backward()
    for name, p in mine.named_parameters():
        assert relative(traced[name], p.grad.double()) < 1e-5, name


BAD_CALLS = [
    # (what is wrong, keyword arguments over batch_first inputs N2 L3 S5 E8, message)
    ("2-D attn_mask", {"attn_mask": np.zeros((2, 2), bool)},
     r"attn_mask must have shape \[L, S\] = \[3, 5\], got \[2, 2\]"),
    ("3-D attn_mask", {"attn_mask": np.zeros((2, 3, 5), bool)},
     r"attn_mask must have shape \[N \* num_heads, L, S\] = \[4, 3, 5\], got \[2, 3, 5\]"),
    ("4-D attn_mask", {"attn_mask": np.zeros((2, 2, 3, 5), bool)},
     r"attn_mask must be 2-D \[L, S\] or 3-D \[N \* num_heads, L, S\], got rank 4"),
    ("key_padding_mask", {"key_padding_mask": np.zeros((2, 4), bool)},
     r"key_padding_mask must have shape \[N, S\] = \[2, 5\], got \[2, 4\]"),
    ("key batch", {"key": np.zeros((1, 5, 8), np.float32), "value": np.zeros((1, 5, 8), np.float32)},
     r"key's batch size \(1\) must be query's \(2\)"),
]


@pytest.mark.parametrize("what,kwargs,message", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_one_validation_on_every_path(rng, what, kwargs, message):
    """The same ValueError under autograd (torch ops around the compiled
    attention), under no_grad (the compiled attn.multihead) and for the
    NumPy module: a wrong mask used to reach a reshape inside the autograd
    path as an unchecked RuntimeError."""
    torch = require("torch")
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    kv = rng.standard_normal((2, 5, 8)).astype(np.float32)
    module = attn_mlir.nn.MultiheadAttention(8, 2, batch_first=True)
    numpy_module = attn_mlir.nn.NumpyMultiheadAttention(8, 2, batch_first=True)
    args = {"query": x, "key": kv, "value": kv, **kwargs}
    tensors = {name: torch.from_numpy(a) for name, a in args.items()}
    for grad in (True, False):
        with torch.set_grad_enabled(grad), pytest.raises(ValueError, match=message):
            module(**tensors)
    with pytest.raises(ValueError, match=message):
        numpy_module(**args)
