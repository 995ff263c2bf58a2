# ===- test_multihead.py - nn.MultiheadAttention ---------------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from conftest import reference_sdpa, relative_error, require


@pytest.fixture(params=["torch", "numpy"])
def Mha(request):
    """Both forms of the module: the torch.nn.Module and the NumPy one."""
    if request.param == "torch":
        require("torch")
        return attn_mlir.nn.MultiheadAttention
    return attn_mlir.nn.NumpyMultiheadAttention


def load(mha, state):
    """load_state_dict with NumPy arrays, as tensors for the torch module."""
    if type(mha) is not attn_mlir.nn.NumpyMultiheadAttention:
        import torch
        state = {name: torch.as_tensor(np.asarray(value)) for name, value in state.items()}
    mha.load_state_dict(state)


def state_arrays(mha):
    return {name: np.array(value.numpy() if hasattr(value, "detach") else value)
            for name, value in mha.state_dict().items()}


def reference_mha(mha, q, k, v, key_padding_mask=None, attn_mask=None, average=True):
    """PyTorch's multi_head_attention_forward in float64 for the batched,
    seq-first, packed-projection case without bias_kv (0 for fully masked
    rows)."""
    p = {n: a.astype(np.float64) for n, a in state_arrays(mha).items()}
    E, H = mha.embed_dim, mha.num_heads
    L, N, _ = q.shape
    S = k.shape[0]
    w, b = p["in_proj_weight"], p.get("in_proj_bias", np.zeros(3 * E))
    qp, kp, vp = (x @ w[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E]
                  for i, x in enumerate((q, k, v)))

    def heads(x, n):  # [n, N, E] -> [N, H, n, E/H]
        return x.reshape(n, N, H, E // H).transpose(1, 2, 0, 3)

    mask = np.zeros((N, H, L, S))
    if attn_mask is not None:
        mask = mask + (np.where(attn_mask, -np.inf, 0) if attn_mask.dtype == bool else attn_mask)
    if key_padding_mask is not None:
        kpm = np.where(key_padding_mask, -np.inf, 0) if key_padding_mask.dtype == bool \
            else key_padding_mask
        mask = mask + kpm[:, None, None, :]
    qh, kh, vh = heads(qp, L), heads(kp, S), heads(vp, S)
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(E // H) + mask
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    probs = np.where(t > 0, e / np.where(t > 0, t, 1), 0)
    o = (probs @ vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    o = o @ p["out_proj.weight"].T + p.get("out_proj.bias", 0)
    return o, probs.mean(1) if average else probs


def _random_biases(mha, rng):
    state = state_arrays(mha)
    for name in ("in_proj_bias", "out_proj.bias"):
        state[name] = rng.standard_normal(state[name].shape).astype(np.float32)
    load(mha, state)


@pytest.mark.parametrize("average", [True, False])
def test_float64_reference(rng, average, Mha):
    mha = Mha(16, 4).eval()
    _random_biases(mha, rng)
    q, k, v = (rng.standard_normal((n, 3, 16)).astype(np.float32) for n in (5, 7, 7))
    kpm = rng.random((3, 7)) < 0.3
    amask = rng.standard_normal((5, 7)).astype(np.float32)
    out, w = mha(q, k, v, key_padding_mask=kpm, attn_mask=amask,
                 average_attn_weights=average)
    want_out, want_w = reference_mha(mha, q, k, v, kpm, amask, average)
    assert relative_error(out, want_out) < 1e-5
    assert relative_error(w, want_w) < 1e-5


def test_need_weights_false(rng, Mha):
    mha = Mha(8, 2).eval()
    x = rng.standard_normal((4, 2, 8)).astype(np.float32)
    out, w = mha(x, x, x, need_weights=False)
    assert w is None and out.shape == (4, 2, 8)
    assert relative_error(out, reference_mha(mha, x, x, x)[0]) < 1e-5


@pytest.mark.parametrize("kwargs", [
    dict(), dict(batch_first=True), dict(kdim=12, vdim=20),
    dict(add_bias_kv=True, add_zero_attn=True), dict(bias=False)])
@pytest.mark.parametrize("form", ["compiled", "autograd", "numpy"])
def test_torch_parity(kwargs, form):
    """Against torch's module on torch tensors: the torch module's compiled
    forward (no grad), its autograd forward (grad mode, parameters
    requiring grad) and the NumPy form given torch's state dict."""
    torch = require("torch")
    ref = torch.nn.MultiheadAttention(16, 4, **kwargs).eval()
    Mha = attn_mlir.nn.NumpyMultiheadAttention if form == "numpy" \
        else attn_mlir.nn.MultiheadAttention
    mine = Mha(16, 4, **kwargs).eval()
    mine.load_state_dict(ref.state_dict())
    grad_mode = torch.enable_grad() if form == "autograd" else torch.no_grad()
    N, L, S = 3, 5, 7
    kd, vd = kwargs.get("kdim", 16), kwargs.get("vdim", 16)
    bf = kwargs.get("batch_first", False)
    q = torch.randn(N, L, 16) if bf else torch.randn(L, N, 16)
    k = torch.randn(N, S, kd) if bf else torch.randn(S, N, kd)
    v = torch.randn(N, S, vd) if bf else torch.randn(S, N, vd)
    kpm = torch.rand(N, S) < 0.3
    amask = torch.rand(L, S) < 0.2
    # No fully masked row (PyTorch gives NaN there, we give 0): key 0 is
    # masked by neither mask. (amask alone could mask it, and with kpm
    # masking the rest, about one run in ten met a NaN.)
    kpm[:, 0] = False
    amask[:, 0] = False
    for average in (True, False):
        want_o, want_w = ref(q, k, v, key_padding_mask=kpm, attn_mask=amask,
                             average_attn_weights=average)
        with grad_mode:
            got_o, got_w = mine(q, k, v, key_padding_mask=kpm, attn_mask=amask,
                                average_attn_weights=average)
        assert isinstance(got_o, torch.Tensor)
        assert (got_o.grad_fn is not None) == (form == "autograd")
        assert (got_o - want_o).abs().max().item() < 1e-4
        assert (got_w - want_w).abs().max().item() < 1e-4
    # Unbatched inputs.
    want_o, _ = ref(q[:, 0] if not bf else q[0], k[:, 0] if not bf else k[0],
                    v[:, 0] if not bf else v[0], need_weights=False)
    with grad_mode:
        got_o, _ = mine(q[:, 0] if not bf else q[0], k[:, 0] if not bf else k[0],
                        v[:, 0] if not bf else v[0], need_weights=False)
    assert (got_o - want_o).abs().max().item() < 1e-4




@pytest.mark.parametrize("E,H,batch_first", [(128, 2, True), (192, 4, False), (256, 4, True)])
def test_packed_weights_float64(rng, E, H, batch_first, Mha):
    """Widths that are whole panels on every host: the projections read
    pre-packed weights, write heads directly where a head is one panel
    (D = 64 on AVX-512 hosts) and through a transpose where not (D = 48),
    in both layouts."""
    mha = Mha(E, H, batch_first=batch_first).eval()
    _random_biases(mha, rng)
    q, k, v = (rng.standard_normal((n, 3, E)).astype(np.float32) for n in (9, 13, 13))
    args = [x.transpose(1, 0, 2).copy() for x in (q, k, v)] if batch_first else (q, k, v)
    out, w = mha(*args)
    if batch_first:
        out = out.transpose(1, 0, 2)
    want_out, want_w = reference_mha(mha, q, k, v)
    assert relative_error(out, want_out) < 1e-5
    assert relative_error(w, want_w) < 1e-5


def test_one_tensor_for_several_inputs(rng, monkeypatch, Mha):
    """A tensor given as query, key and value (or as key and value) is
    passed once and named once in the op, so that the compiler projects
    those inputs together; results equal the float64 reference and those
    of equal but distinct tensors."""
    from attn_mlir import nn

    ops = []
    compile_shaped = nn.compile_shaped

    def recording(source, dynamic, target, key):
        ops.append(next(line for line in source(False).splitlines() if "attn.multihead" in line))
        return compile_shaped(source, dynamic, target, key=key)

    monkeypatch.setattr(nn, "compile_shaped", recording)
    mha = Mha(128, 2, batch_first=True).eval()
    _random_biases(mha, rng)
    x = rng.standard_normal((3, 9, 128)).astype(np.float32)
    m = rng.standard_normal((3, 13, 128)).astype(np.float32)
    together, w = mha(x, x, x)
    assert "attn.multihead %q, %q, %q " in ops[-1]
    apart, w_apart = mha(x, x.copy(), x.copy())
    assert "attn.multihead %q, %k, %v " in ops[-1]
    t = lambda a: a.transpose(1, 0, 2)
    want, want_w = reference_mha(mha, t(x), t(x), t(x))
    assert relative_error(together, t(want)) < 1e-5
    assert relative_error(w, want_w) < 1e-5
    assert relative_error(together, apart) < 1e-6
    cross, _ = mha(x, m, m, need_weights=False)
    assert "attn.multihead %q, %k, %k " in ops[-1]
    assert relative_error(cross, t(reference_mha(mha, t(x), t(m), t(m))[0])) < 1e-5
    # Shape-generic: K and V are views of the product, V padded to whole
    # key tiles only when the length needs it (here 77: it does).
    mha.dynamic = True
    y = rng.standard_normal((2, 77, 128)).astype(np.float32)
    out, _ = mha(y, y, y, need_weights=False)
    assert relative_error(out, t(reference_mha(mha, t(y), t(y), t(y))[0])) < 1e-5


def test_weights_packed_once(rng):
    """Each projection weight is packed once, not on every call; a replaced
    parameter is packed again and its new values are the ones used; the
    module's parameter arrays cannot change under their packed copies."""
    mha = attn_mlir.nn.NumpyMultiheadAttention(128, 2).eval()
    x = rng.standard_normal((6, 2, 128)).astype(np.float32)
    packable = attn_mlir._packing.packable((128, 128))
    before = attn_mlir.stats()["weight_packs"]
    for _ in range(4):
        out, _ = mha(x, x, x)
    assert attn_mlir.stats()["weight_packs"] - before == (2 if packable else 0)
    assert relative_error(out, reference_mha(mha, x, x, x)[0]) < 1e-5
    if packable:
        with pytest.raises(ValueError, match="read-only"):
            mha.in_proj_weight[0, 0] = 1.0
    # New weights at an initialisation's scale (1/sqrt(fan-in)): unit-normal
    # ones make scores in the hundreds, whose softmax amplifies f32 rounding
    # to ~1e-5 (seed 1238680302: 1.1e-5), while weights left stale would be
    # off by O(1) either way.
    state = mha.state_dict()
    scale = 1 / np.sqrt(128)
    state["out_proj.weight"] = (scale * rng.standard_normal((128, 128))).astype(np.float32)
    mha.load_state_dict(state)
    mha.in_proj_weight = (scale * rng.standard_normal((384, 128))).astype(np.float32)
    before = attn_mlir.stats()["weight_packs"]
    out, _ = mha(x, x, x)
    out, _ = mha(x, x, x)
    assert attn_mlir.stats()["weight_packs"] - before == (2 if packable else 0)
    assert relative_error(out, reference_mha(mha, x, x, x)[0]) < 1e-5


def test_packed_weights_bf16(rng):
    """bf16 parameters are packed as bf16 (the pack entry moves bits)."""
    ml_dtypes = require("ml_dtypes")
    mha = attn_mlir.nn.NumpyMultiheadAttention(128, 2, dtype=ml_dtypes.bfloat16).eval()
    q = rng.standard_normal((7, 3, 128)).astype(ml_dtypes.bfloat16)
    out, w = mha(q, q, q)
    x = q.astype(np.float64)
    want_out, want_w = reference_mha(mha, x, x, x)
    assert relative_error(out.astype(np.float64), want_out) < 2e-2
    assert relative_error(w.astype(np.float64), want_w) < 2e-2
