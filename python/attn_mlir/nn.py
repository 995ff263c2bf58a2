# ===- attn_mlir/nn.py - torch.nn-style attention modules ------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import math

import numpy as np

from . import _arrays, _ir, _packing, functional
from ._compile import compile_shaped


class MultiheadAttention:
    """torch.nn.MultiheadAttention, compiled (the attn.multihead op).

    Same constructor arguments, parameter names and shapes, forward
    arguments and results as PyTorch's. Parameters are NumPy arrays
    (float32 unless `dtype` says otherwise); `load_state_dict` takes
    PyTorch's state dict (tensors or arrays). Like a torch module it starts
    in training mode, where `dropout` applies; call `eval()` for inference.
    Differences from PyTorch: a query row with no visible key gives 0
    rather than NaN, and dropout draws from attn-mlir's counter-based
    generator: with `seed=None` a fresh seed every call (torch's generator
    for torch tensors, NumPy's global one otherwise), with an int `seed` the
    same elements on every call.

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
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim ({embed_dim}) and num_heads ({num_heads}) "
                             f"must be positive")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        if device not in (None, "cpu"):
            raise ValueError(f"device {device!r}: attn_mlir modules live on the CPU")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.add_zero_attn, self.target, self.seed = add_zero_attn, target, seed
        self.dynamic = dynamic
        self.head_dim = embed_dim // num_heads
        self.training = True
        self._dtype = np.dtype(dtype) if dtype is not None else np.dtype(np.float32)
        rng = np.random.default_rng()
        E = embed_dim

        def xavier(shape):
            bound = math.sqrt(6.0 / (shape[0] + shape[1]))
            return rng.uniform(-bound, bound, shape).astype(self._dtype)

        self._params = {}
        # name -> (the parameter array packed, its panels).
        self._panels = {}
        if self._qkv_same_embed_dim:
            self._params["in_proj_weight"] = xavier((3 * E, E))
        else:
            self._params["q_proj_weight"] = xavier((E, E))
            self._params["k_proj_weight"] = xavier((E, self.kdim))
            self._params["v_proj_weight"] = xavier((E, self.vdim))
        if bias:
            self._params["in_proj_bias"] = np.zeros(3 * E, self._dtype)
        if add_bias_kv:
            std = math.sqrt(2.0 / (1 + E))
            self._params["bias_k"] = (rng.standard_normal((1, 1, E)) * std).astype(self._dtype)
            self._params["bias_v"] = (rng.standard_normal((1, 1, E)) * std).astype(self._dtype)
        bound = 1.0 / math.sqrt(E)
        self._params["out_proj.weight"] = rng.uniform(-bound, bound, (E, E)).astype(self._dtype)
        if bias:
            self._params["out_proj.bias"] = np.zeros(E, self._dtype)

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

    def _weight_panels(self, name):
        """The panels of projection weight `name`, packed at the first call
        that needs them and again only when the parameter was replaced."""
        weight = self._params[name]
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
        elem = _arrays.element(query)
        want = _arrays.element(np.empty(0, self._dtype))
        for name, x in (("query", query), ("key", key), ("value", value)):
            if _arrays.element(x) != want:
                raise TypeError(f"{name} is {_arrays.element(x)}, the module's "
                                f"parameters are {want}")
        if ks[:-1] != vs[:-1]:
            raise ValueError(f"key {list(ks)} and value {list(vs)} must agree in "
                             f"every dimension but the last")

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
            w = self._params[param]
            if self.target != "cpu" or not _packing.packable(w.shape):
                return add(name, w)
            args.append((name + "_panels", _packing.panels_shape(w.shape), _arrays.element(w), ()))
            inputs.append(self._weight_panels(param))
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
        p = self._params
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
            me = _arrays.element(mask)
            if me not in ("i1", elem):
                raise TypeError(f"{name} must be bool or {elem}, got {me}")
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
            seed = self.seed if self.seed is not None else functional._draw_seed(query)
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
        like = next((x for x in originals if _arrays.is_torch(x)), None)
        out = function.run_arrays(inputs, like)
        if need_weights:
            return out[0], out[1]
        return out, None
