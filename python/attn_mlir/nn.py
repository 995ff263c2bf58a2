# ===- attn_mlir/nn.py - torch.nn-style attention modules ------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# MultiheadAttention comes in two forms sharing one compiled forward (the
# attn.multihead op with pre-packed projection weights): a torch.nn.Module
# when torch is installed (trainable: under autograd its forward is torch
# projections around the differentiable attention core), and a class whose
# parameters are NumPy arrays (inference without torch). The name
# `MultiheadAttention` is the first when torch can be imported, the second
# otherwise; `NumpyMultiheadAttention` is always the second. torch is
# imported when the name is first looked up, not with the package.
#
# ===----------------------------------------------------------------------=== #

import importlib.util
import math

import numpy as np

from . import _arrays, _autograd, _ir, _linear, _packing, _plan, functional
from ._compile import compile_shaped

# PyTorch's parameter names, in its module's order.
_PARAMETERS = ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
               "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias")


class _Multihead:
    """What both forms share: the constructor's checks, the parameters'
    shapes, the call's checks and the compiled forward. A form provides
    `_weight_panels(name, weight)` (the packed weight, cached)."""

    def _configure(self, embed_dim, num_heads, dropout, kdim, vdim, batch_first,
                   add_zero_attn, device, target, seed, dynamic):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim ({embed_dim}) and num_heads ({num_heads}) "
                             f"must be positive")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        if device is not None and str(device) != "cpu":
            raise ValueError(f"device {str(device)!r}: attn_mlir modules live on the CPU")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.add_zero_attn, self.target, self.seed = add_zero_attn, target, seed
        self.dynamic = dynamic
        self.head_dim = embed_dim // num_heads

    def _parameter_shapes(self, bias, add_bias_kv):
        """name -> shape of each parameter the configuration has."""
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            shapes = {"in_proj_weight": (3 * E, E)}
        else:
            shapes = {"q_proj_weight": (E, E), "k_proj_weight": (E, self.kdim),
                      "v_proj_weight": (E, self.vdim)}
        if bias:
            shapes["in_proj_bias"] = (3 * E,)
        if add_bias_kv:
            shapes["bias_k"] = shapes["bias_v"] = (1, 1, E)
        shapes["out_proj.weight"] = (E, E)
        if bias:
            shapes["out_proj.bias"] = (E,)
        return shapes

    def _check_call(self, query, key, value, key_padding_mask, attn_mask, is_causal,
                    elem):
        """Checks a call's arguments against the module (parameters of
        element `elem`); returns the query's and key's shapes and whether
        the call is batched (what the compiled forward needs)."""
        if is_causal and attn_mask is None:
            raise ValueError("is_causal is a hint that attn_mask is the causal mask: "
                             "attn_mask is required (PyTorch's rule)")
        qs, ks, vs = (_arrays.shape(x) for x in (query, key, value))
        batched = len(qs) == 3
        if len(qs) not in (2, 3) or len(ks) != len(qs) or len(vs) != len(qs):
            raise ValueError(f"query, key and value must all be 3-D (batched) or 2-D "
                             f"(unbatched), got shapes {list(qs)}, {list(ks)}, {list(vs)}")
        for name, s, dim in (("query", qs, self.embed_dim), ("key", ks, self.kdim),
                             ("value", vs, self.vdim)):
            if s[-1] != dim:
                raise ValueError(f"{name}'s last dimension ({s[-1]}) must be "
                                 f"{'embed_dim' if name == 'query' else name[0] + 'dim'} ({dim})")
        for name, x in (("query", query), ("key", key), ("value", value)):
            if _arrays.element(x) != elem:
                raise TypeError(f"{name} is {_arrays.element(x)}, the module's "
                                f"parameters are {elem}")
        if ks[:-1] != vs[:-1]:
            raise ValueError(f"key {list(ks)} and value {list(vs)} must agree in "
                             f"every dimension but the last")
        for name, mask in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
            if mask is not None and _arrays.element(mask) not in ("i1", elem):
                raise TypeError(f"{name} must be bool or {elem}, got "
                                f"{_arrays.element(mask)}")
        self._check_extents(qs, ks, key_padding_mask, attn_mask, batched)
        return qs, ks, batched

    def _check_extents(self, qs, ks, key_padding_mask, attn_mask, batched):
        """The batch and mask extents attn.multihead's verifier checks, in its
        words, checked here so that every path (compiled, or torch ops under
        autograd) gives the same ValueError before any work."""
        L, S = (qs[1], ks[1]) if batched and self.batch_first else (qs[0], ks[0])
        N = (qs[0] if self.batch_first else qs[1]) if batched else None
        if batched:
            key_batch = ks[0] if self.batch_first else ks[1]
            if key_batch != N:
                raise ValueError(f"key's batch size ({key_batch}) must be query's ({N})")
        expected = []
        if key_padding_mask is not None:
            expected.append(("key_padding_mask", key_padding_mask,
                             ([N, S], "[N, S]") if batched else ([S], "[S]")))
        if attn_mask is not None:
            rank = len(_arrays.shape(attn_mask))
            if rank not in (2, 3):
                raise ValueError(f"attn_mask must be 2-D [L, S] or 3-D [N * num_heads, L, S], "
                                 f"got rank {rank}")
            heads = (N * self.num_heads, "[N * num_heads, L, S]") if batched else (
                self.num_heads, "[num_heads, L, S]")
            expected.append(("attn_mask", attn_mask, ([L, S], "[L, S]") if rank == 2 else
                             ([heads[0], L, S], heads[1])))
        for name, mask, (shape, spelled) in expected:
            got = list(_arrays.shape(mask))
            if got != shape:
                raise ValueError(f"{name} must have shape {spelled} = {shape}, got {got}")

    def _compiled_forward(self, params, query, key, value, key_padding_mask, need_weights,
                          attn_mask, average_attn_weights, elem, qs, ks, batched):
        """The attn.multihead call: `params` maps PyTorch's parameter names
        to arrays or tensors."""
        # Parameters with the dimensions a shape-generic build leaves dynamic
        # (_ir.varying_dims): batch and sequence lengths, never features.
        args, inputs, clauses = [], [], []
        originals = [query, key, value]

        def add(name, x, what=None, pattern=""):
            shape = _arrays.shape(x)
            args.append((name, shape, _arrays.element(x), _ir.varying_dims(shape, pattern)))
            inputs.append(_arrays.as_array(x, what or name))
            return f"%{name}"

        # Projection weights as panels where this machine's code reads
        # them so (_packing): %name is then the unpack of %name_panels.
        unpacked = []

        def add_weight(name, param):
            w = params[param]
            if self.target != "cpu" or not _packing.packable(w.shape):
                return add(name, w)
            args.append((name + "_panels", _packing.panels_shape(w.shape), _arrays.element(w), ()))
            inputs.append(self._weight_panels(param, w))
            unpacked.append((name, tuple(w.shape), _arrays.element(w)))
            return f"%{name}"

        # A tensor given for several inputs is passed once and named once in
        # the op: the compiler then projects those inputs together (one
        # product for self-attention's Q, K and V).
        operands = ["q", "q" if key is query else "k",
                    "q" if value is query else "k" if value is key else "v"]
        add("q", query, "query", "vv.")
        if "k" in operands:
            add("k", key, "key", "vv.")
        if "v" in operands:
            add("v", value, "value", "vv.")
        p = params
        if self._qkv_same_embed_dim:
            clauses.append(("in_proj", add_weight("wi", "in_proj_weight")))
        else:
            clauses.append(("q_proj", add_weight("wq", "q_proj_weight")))
            clauses.append(("k_proj", add_weight("wk", "k_proj_weight")))
            clauses.append(("v_proj", add_weight("wv", "v_proj_weight")))
        if "in_proj_bias" in p:
            clauses.append(("in_proj_bias", add("bi", p["in_proj_bias"])))
        if "bias_k" in p:
            clauses.append(("bias_kv", add("bk", p["bias_k"]), add("bv", p["bias_v"])))
        clauses.append(("out_proj", add_weight("wo", "out_proj.weight")))
        if "out_proj.bias" in p:
            clauses.append(("out_proj_bias", add("bo", p["out_proj.bias"])))
        for name, mask in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
            if mask is None:
                continue
            originals.append(mask)
            clauses.append((name, add(name, mask, pattern="vvv")))
        flags = [f"num_heads = {self.num_heads}"]
        if self.batch_first and batched:
            flags.append("batch_first")
        if self.add_zero_attn:
            flags.append("add_zero_attn")
        if need_weights and not average_attn_weights:
            flags.append("per_head_weights")
        if self.training and self.dropout > 0:
            flags.append(f"dropout = {_ir.float_literal(self.dropout)}")
            # The seed is an argument: a fresh one per call costs no compile.
            seed = self.seed if self.seed is not None else _plan.draw_seed(query)
            clauses.append(("dropout_seed", add("ds", np.array(seed, np.int64))))

        # Result types: the output has the query's layout; the weights are
        # [N,] [H,] L, S + the appended keys.
        s_extra = ("bias_k" in p) + bool(self.add_zero_attn)
        S = (ks[1] if batched and self.batch_first else ks[0]) + s_extra
        if batched:
            N, L = (qs[0], qs[1]) if self.batch_first else (qs[1], qs[0])
            wshape = (N, L, S) if average_attn_weights else (N, self.num_heads, L, S)
        else:
            L = qs[0]
            wshape = (L, S) if average_attn_weights else (self.num_heads, L, S)
        results = [("%o", qs, "vv.")]
        if need_weights:
            results.append(("%w", wshape, "vvv" if average_attn_weights else "v.vv"))

        def source(dynamic):
            types = _ir.parameter_types(args, dynamic)
            body = []
            for name, shape, e in unpacked:
                types[name] = _ir.tensor_type(shape, e)
                body += _packing.unpack_lines(name, shape, e)
            result_types = [_ir.tensor_type(shape, elem, _ir.varying_dims(shape, pattern)
                                            if dynamic else ())
                            for _, shape, pattern in results]
            words = [f"{c[0]}({', '.join(c[1:])} : {', '.join(types[v[1:]] for v in c[1:])})"
                     for c in clauses] + flags
            names = ", ".join(r for r, *_ in results)
            body += [f"{names} = attn.multihead {', '.join('%' + n for n in operands)} "
                     f"{' '.join(words)} : {', '.join(types[n] for n in operands)} -> "
                     f"{', '.join(result_types)}"]
            return _ir.function("multihead", [(n, types[n]) for n, *_ in args],
                                list(zip((r for r, *_ in results), result_types)), body)

        key = (tuple((name, tuple(shape), e, varying) for name, shape, e, varying in args),
               tuple(tuple(c) for c in clauses), tuple(flags), elem, tuple(unpacked),
               tuple((r, tuple(shape), pattern) for r, shape, pattern in results))
        function = compile_shaped(source, self.dynamic, self.target, key=key)
        like = _arrays.first_torch(originals)
        out = function.run_arrays(inputs, like)
        if need_weights:
            return out[0], out[1]
        return out, None


class NumpyMultiheadAttention(_Multihead):
    """torch.nn.MultiheadAttention for inference without torch: the
    compiled attn.multihead op, parameters as NumPy arrays.

    Same constructor arguments, parameter names and shapes, forward
    arguments and results as PyTorch's. Parameters are NumPy arrays
    (float32 unless `dtype` says otherwise); `load_state_dict` takes
    PyTorch's state dict (tensors or arrays). Like a torch module it starts
    in training mode, where `dropout` applies; call `eval()` for inference.
    Differences from PyTorch: a query row with no visible key gives 0
    rather than NaN, and dropout draws from attn-mlir's counter-based
    generator: with `seed=None` a fresh seed every call (torch's generator
    for torch tensors, NumPy's global one otherwise), with an int `seed` the
    same elements on every call. No gradients: with torch installed,
    `MultiheadAttention` is the trainable torch.nn.Module.

    On the CPU the projection weights are packed once into the layout the
    compiled code reads (docs/CpuABI.md "Pre-packed weights"; counted by
    `attn_mlir.stats()["weight_packs"]`), so no call transposes a weight.
    The parameter arrays are therefore read-only: assign a new array
    (`mha.in_proj_weight = w`, or `load_state_dict`) to change one, which
    packs it again at the next call.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True,
                 add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None,
                 batch_first=False, device=None, dtype=None, target="cpu", seed=None,
                 dynamic=None):
        self._configure(embed_dim, num_heads, dropout, kdim, vdim, batch_first,
                        add_zero_attn, device, target, seed, dynamic)
        self.training = True
        self._dtype = np.dtype(dtype) if dtype is not None else np.dtype(np.float32)
        rng = np.random.default_rng()
        # PyTorch's initialisation: Xavier-uniform projections, zero biases,
        # Xavier-normal bias_k/bias_v, nn.Linear's uniform out-projection.
        init = {"out_proj.weight": lambda s: rng.uniform(-1, 1, s) / math.sqrt(s[1]),
                "in_proj_bias": np.zeros, "out_proj.bias": np.zeros,
                "bias_k": lambda s: rng.standard_normal(s) * math.sqrt(2.0 / (1 + s[-1])),
                "bias_v": lambda s: rng.standard_normal(s) * math.sqrt(2.0 / (1 + s[-1]))}

        def xavier(shape):
            bound = math.sqrt(6.0 / (shape[0] + shape[1]))
            return rng.uniform(-bound, bound, shape)

        self._params = {name: np.asarray(init.get(name, xavier)(shape), self._dtype)
                        for name, shape in self._parameter_shapes(bias, add_bias_kv).items()}
        # name -> (the parameter array packed, its panels).
        self._panels = {}

    # -- torch.nn.Module-like state ---------------------------------------- #

    def train(self, mode=True):
        self.training = bool(mode)
        return self

    def eval(self):
        return self.train(False)

    def state_dict(self):
        return {name: value.copy() for name, value in self._params.items()}

    def load_state_dict(self, state_dict, strict=True):
        """Loads PyTorch parameter names (`in_proj_weight`, `q_proj_weight`,
        `k_proj_weight`, `v_proj_weight`, `in_proj_bias`, `bias_k`, `bias_v`,
        `out_proj.weight`, `out_proj.bias`) from tensors or arrays."""
        missing = [n for n in self._params if n not in state_dict]
        unexpected = [n for n in state_dict if n not in self._params]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, "
                           f"unexpected keys {unexpected}")
        for name, value in state_dict.items():
            if name not in self._params:
                continue
            self._set_param(name, value, "load_state_dict")
        return self

    def _set_param(self, name, value, what):
        """Replaces parameter `name` by a copy of `value` (a tensor or an
        array; torch's load_state_dict copies too): the module's arrays are
        its own."""
        if _arrays.is_torch(value):
            value = value.detach().cpu().float().numpy()
        value = np.asarray(value)
        expected = self._params[name].shape
        if tuple(value.shape) != expected:
            raise ValueError(f"{what}: {name} has shape {list(value.shape)}, "
                             f"expected {list(expected)}")
        self._params[name] = np.array(value, dtype=self._dtype, order="C", copy=True)

    def __getattr__(self, name):
        params = self.__dict__.get("_params", {})
        if name in params:
            return params[name]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name in self.__dict__.get("_params", {}):
            self._set_param(name, value, f"setting {name}")
        else:
            object.__setattr__(self, name, value)

    def _weight_panels(self, name, weight):
        """The panels of projection weight `name`, packed at the first call
        that needs them and again only when the parameter was replaced."""
        cached = self._panels.get(name)
        if cached is None or cached[0] is not weight:
            panels = _packing.pack(weight, _arrays.element(weight))
            # The panels stand for this array: it must not change under them.
            weight.flags.writeable = False
            cached = self._panels[name] = (weight, panels)
        return cached[1]

    # -- forward ----------------------------------------------------------- #

    def __call__(self, query, key, value, key_padding_mask=None, need_weights=True,
                 attn_mask=None, average_attn_weights=True, is_causal=False):
        return self.forward(query, key, value, key_padding_mask, need_weights,
                            attn_mask, average_attn_weights, is_causal)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """Returns (attn_output, attn_output_weights or None) as PyTorch does.
        Boolean masks: True = masked out; float masks are added."""
        elem = _arrays.element(np.empty(0, self._dtype))
        qs, ks, batched = self._check_call(query, key, value, key_padding_mask,
                                           attn_mask, is_causal, elem)
        return self._compiled_forward(self._params, query, key, value, key_padding_mask,
                                      need_weights, attn_mask, average_attn_weights,
                                      elem, qs, ks, batched)


def _mix64(z):
    """docs/Numerics.md's 64-bit mix, on uint64 arrays (wrapping)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _dropout_factor(seed, p, shape):
    """What dropout multiplies each attention probability of a [B, H, L, S]
    problem by, with the compiled code's decisions (docs/Numerics.md step
    6): 0 where element (b, h, i, j) is dropped, 1 / (1 - p) elsewhere."""
    h = np.array(seed & (2**64 - 1), np.uint64)
    with np.errstate(over="ignore"):
        for axis, n in enumerate(shape):
            index = np.arange(n, dtype=np.uint64)
            h = _mix64(h ^ index.reshape([-1 if a == axis else 1 for a in range(len(shape))]))
    u = (h >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    return np.where(u >= np.float32(p), 1 / (1 - p), 0.0)


def _decomposed_forward(mha, query, key, value, key_padding_mask, need_weights,
                        attn_mask, average_attn_weights, batched):
    """PyTorch's multi-head attention forward as torch ops around the
    differentiable attention core (attn_mlir.scaled_dot_product_attention),
    so that autograd reaches every parameter: the projections and their
    gradients are torch's, the attention and its gradient compiled. The
    semantics are attn.multihead's (docs/generated/AttnDialect.md)."""
    import torch
    import torch.nn.functional as F

    E, H, D = mha.embed_dim, mha.num_heads, mha.head_dim

    # The projections compiled too where they can be (CPU, f32/f64): the
    # whole step then runs in the compiled code's threads.
    compiled = (mha.target == "cpu" and
                _arrays.element(mha.out_proj.weight) in _linear.ELEMENTS)

    def linear(x, w, b):
        if compiled:
            return functional.linear(x, w, b, target=mha.target, dynamic=mha.dynamic)
        return F.linear(x, w, b)

    def batch_first(x):  # [N, L, E]
        if not batched:
            return x.unsqueeze(0)
        return x if mha.batch_first else x.transpose(0, 1)

    q_in, k_in, v_in = (batch_first(x) for x in (query, key, value))
    b = mha.in_proj_bias
    bias = (lambda i, n: None) if b is None else (lambda i, n: b[i * E:(i + n) * E])
    # The projections' outputs, and (which, first column) of Q, K and V.
    refs = [(0, 0), (1, 0), (2, 0)]
    if mha._qkv_same_embed_dim:
        w = mha.in_proj_weight
        weight = lambda i, n: w[i * E:(i + n) * E]
        # One product for the inputs that are one tensor, as torch does.
        if key is query and value is query:
            projected, refs = [linear(q_in, w, b)], [(0, 0), (0, E), (0, 2 * E)]
        elif value is key:
            projected = [linear(q_in, weight(0, 1), bias(0, 1)),
                         linear(k_in, weight(1, 2), bias(1, 2))]
            refs = [(0, 0), (1, 0), (1, E)]
        else:
            projected = [linear(x, weight(i, 1), bias(i, 1))
                         for i, x in enumerate((q_in, k_in, v_in))]
    else:
        projected = [linear(x, w, bias(i, 1)) for i, (x, w) in enumerate(
            ((q_in, mha.q_proj_weight), (k_in, mha.k_proj_weight),
             (v_in, mha.v_proj_weight)))]
    q, k, v = (projected[i][..., c:c + E] for i, c in refs)
    N, L, S = q.shape[0], q.shape[1], k.shape[1]

    # Masks as [N or 1, H or 1, L or 1, S], True or -inf = masked out.
    masks = []
    if attn_mask is not None:
        masks.append(attn_mask.view(1, 1, L, S) if attn_mask.dim() == 2
                     else attn_mask.view(N, H, L, S))
    if key_padding_mask is not None:
        masks.append(key_padding_mask.view(N, 1, 1, S))

    def extend(x, k_extra, v_extra, dim):
        return torch.cat([x[0], k_extra], dim), torch.cat([x[1], v_extra], dim)

    def pad_masks():  # one more key that every mask lets through
        masks[:] = [F.pad(m, (0, 1)) for m in masks]

    # The combined mask: bool (True takes part, SDPA's sense) when every
    # mask is bool, else additive.
    def minus_inf(masked):
        return torch.zeros(masked.shape, dtype=q.dtype).masked_fill(masked, float("-inf"))

    def combined():
        if masks and all(m.dtype == torch.bool for m in masks):
            masked = masks[0] if len(masks) == 1 else masks[0] | masks[1]
            return ~masked, minus_inf(masked)
        if masks:
            additive = sum(minus_inf(m) if m.dtype == torch.bool else m for m in masks)
            return additive, additive
        return None, None

    dropout = mha.dropout if mha.training else 0.0
    seed = None
    if dropout > 0:
        seed = mha.seed if mha.seed is not None else _plan.draw_seed(query)

    def merged_output(out):  # [N, L, E] -> the query's layout, projected
        out = linear(out, mha.out_proj.weight, mha.out_proj.bias)
        return out.squeeze(0) if not batched else out if mha.batch_first else out.transpose(0, 1)

    if compiled and mha.bias_k is None and not mha.add_zero_attn and not need_weights:
        # The heads split from the projections and merged again inside the
        # compiled attention (_heads): no torch op between the compiled ones.
        out, _ = _autograd.ops().heads(
            projected, [x for ref in refs for x in ref], H, D, combined()[0], float(dropout),
            seed, mha.target, mha.dynamic)
        return merged_output(out), None

    if mha.bias_k is not None:
        k, v = extend((k, v), mha.bias_k.expand(N, 1, E), mha.bias_v.expand(N, 1, E), 1)
        pad_masks()
    q, k, v = (x.reshape(N, -1, H, D).transpose(1, 2) for x in (q, k, v))
    if mha.add_zero_attn:
        zeros = k.new_zeros(N, H, 1, D)
        k, v = extend((k, v), zeros, zeros, 2)
        pad_masks()
    sdpa_mask, additive = combined()
    out = functional.scaled_dot_product_attention(
        q, k, v, attn_mask=sdpa_mask, dropout_p=dropout, target=mha.target,
        dynamic=mha.dynamic, seed=seed)
    out = merged_output(out.transpose(1, 2).reshape(N, L, E))
    if not need_weights:
        return out, None

    # The weights torch returns (after dropout), differentiable: the
    # probabilities again, as torch ops; a row with no visible key gives 0.
    scores = (q * D**-0.5) @ k.transpose(-2, -1)
    if additive is not None:
        scores = scores + additive
    top = scores.detach().amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(torch.isfinite(top), top, 0))
    total = e.sum(-1, keepdim=True)
    weights = e / torch.where(total > 0, total, 1)
    if dropout > 0:
        weights = weights * torch.from_numpy(
            _dropout_factor(seed, dropout, tuple(weights.shape))).to(weights.dtype)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, weights.squeeze(0) if not batched else weights


def _torch_multihead_class():
    """MultiheadAttention as a torch.nn.Module (torch imported here)."""
    import torch

    # The attention's custom ops, defined now: torch.compile cannot trace
    # their definition at a first call inside a compiled function.
    _autograd.ops()

    class MultiheadAttention(torch.nn.Module, _Multihead):
        """torch.nn.MultiheadAttention, compiled: a torch.nn.Module.

        Same constructor arguments, parameters (`nn.Parameter`s under
        PyTorch's names: `state_dict`s load both ways), forward arguments
        and results as PyTorch's; train/eval, `.to(dtype)`, optimizers as
        for any module. Two forwards with one semantics (attn.multihead's):
        - when autograd records the call (grad mode on and a parameter or
          input requiring grad) or torch.compile traces it: torch's
          projections around the differentiable compiled attention
          (`attn_mlir.scaled_dot_product_attention`), so every parameter
          gets its gradient; `need_weights=True` adds the weights as torch
          ops (differentiable);
        - otherwise (`torch.no_grad()`, `torch.inference_mode()`, NumPy
          inputs): the fused compiled attn.multihead, projection weights
          packed once per parameter version (docs/CpuABI.md "Pre-packed
          weights").
        Differences from PyTorch: a query row with no visible key gives 0
        rather than NaN, and dropout draws from attn-mlir's counter-based
        generator (a fresh seed from torch's generator per call with
        `seed=None`; the same elements every call with an int `seed`).
        A parameter changed through `.data` escapes torch's version
        counter, and so the packed copy: change parameters in place under
        `torch.no_grad()` (as optimizers do) or through `load_state_dict`.
        """

        def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True,
                     add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None,
                     batch_first=False, device=None, dtype=None, target="cpu",
                     seed=None, dynamic=None):
            super().__init__()
            self._configure(embed_dim, num_heads, dropout, kdim, vdim, batch_first,
                            add_zero_attn, device, target, seed, dynamic)
            factory = {"device": device, "dtype": dtype}
            shapes = self._parameter_shapes(bias, add_bias_kv)
            for name in _PARAMETERS[:7]:
                self.register_parameter(name, torch.nn.Parameter(
                    torch.empty(shapes[name], **factory)) if name in shapes else None)
            self.out_proj = torch.nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
            # name -> ((storage, version, shape, dtype) packed, the panels).
            self._panels = {}
            self._reset_parameters()

        def _reset_parameters(self):
            """PyTorch's initialisation (out_proj keeps nn.Linear's)."""
            init = torch.nn.init
            for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight",
                         "v_proj_weight"):
                if getattr(self, name) is not None:
                    init.xavier_uniform_(getattr(self, name))
            if self.in_proj_bias is not None:
                init.constant_(self.in_proj_bias, 0.0)
                init.constant_(self.out_proj.bias, 0.0)
            if self.bias_k is not None:
                init.xavier_normal_(self.bias_k)
                init.xavier_normal_(self.bias_v)

        def _weight_panels(self, name, weight):
            """The panels of projection weight `name`, packed again only
            when the parameter changed: an in-place change (optimizer step,
            load_state_dict) moves its version counter."""
            stamp = (weight.data_ptr(), weight._version, tuple(weight.shape), weight.dtype)
            cached = self._panels.get(name)
            if cached is None or cached[0] != stamp:
                panels = _packing.pack(weight.detach(), _arrays.element(weight))
                cached = self._panels[name] = (stamp, panels)
            return cached[1]

        def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                    attn_mask=None, average_attn_weights=True, is_causal=False):
            """Returns (attn_output, attn_output_weights or None) as PyTorch
            does. Boolean masks: True = masked out; float masks are added."""
            params = dict(self.named_parameters())
            elem = _arrays.element(params["out_proj.weight"])
            qs, ks, batched = self._check_call(query, key, value, key_padding_mask,
                                                  attn_mask, is_causal, elem)
            if _arrays.is_torch(query) and (torch.compiler.is_compiling() or (
                    torch.is_grad_enabled() and any(
                        x.requires_grad for x in (query, key, value, *params.values())))):
                return _decomposed_forward(self, query, key, value, key_padding_mask,
                                           need_weights, attn_mask, average_attn_weights,
                                           batched)
            return self._compiled_forward(params, query, key, value, key_padding_mask,
                                          need_weights, attn_mask, average_attn_weights,
                                          elem, qs, ks, batched)

    MultiheadAttention.__module__ = __name__
    return MultiheadAttention


def __getattr__(name):
    """`MultiheadAttention`: the torch.nn.Module when torch can be imported,
    NumpyMultiheadAttention otherwise (decided at the first lookup)."""
    if name == "MultiheadAttention":
        global MultiheadAttention
        MultiheadAttention = (_torch_multihead_class() if importlib.util.find_spec("torch")
                              else NumpyMultiheadAttention)
        return MultiheadAttention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
