# ===- attn_mlir/_plan.py - one attention call, checked and written as IR -=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The call plan of scaled_dot_product_attention and flex_attention, and of
# the torch custom ops both become under autograd: the arguments checked
# as PyTorch checks them (prepare), viewed as [B, H, L, E], and the attn.sdpa
# (or attn.sdpa_grad) function written for them, compiled through the
# cache and run (SdpaCall). The public functions (functional, flex) and
# the custom ops (_autograd) call it; it calls none of them.
#
# ===----------------------------------------------------------------------=== #

import math

import numpy as np

from . import _arrays, _ir
from ._compile import compile_shaped
from ._trace import _INDEX_ARGS, _Tracer, tanh

# f64 computes in float64 throughout (torch.autograd.gradcheck's inputs).
_FLOATS = ("f32", "f16", "bf16", "f64")
# The parameter of a caller's output view the function writes (out=).
DESTINATION = "out"


def _dims(x, name):
    s = _arrays.shape(x)
    if len(s) < 2:
        raise ValueError(f"{name} must have at least 2 dimensions (..., L, E), "
                         f"got shape {list(s)}")
    return s


class SdpaCall:
    """One attn.sdpa call being put together: the checked arguments as
    [B, H, L, E] views, the function's parameters and the op's attributes.
    scaled_dot_product_attention and flex_attention share it."""

    def __init__(self, query, key, value, elem, shapes):
        qs, ks, vs = shapes
        lead = qs[:-3] if len(qs) > 3 else ()
        batch = math.prod(lead) if lead else 1
        hq = qs[-3] if len(qs) >= 3 else 1
        hkv = ks[-3] if len(ks) >= 3 else 1
        # The output as the caller sees it: the query's leading dimensions.
        self._start(elem, shapes, (batch, hq, qs[-2], qs[-1]), (batch, hkv, ks[-2], ks[-1]),
                    (batch, hkv, vs[-2], vs[-1]), qs[:-1] + (vs[-1],))
        for name, x, s in (("q", query, self.q4), ("k", key, self.k4),
                           ("v", value, self.v4)):
            self.add_input(name, x, s, elem, "v.v.", view=True)

    def _start(self, elem, shapes, q4, k4, v4, out_shape):
        """The fields of a call with no parameter yet: the caller's shapes,
        the op's [B, H, L, E] operands and the output's shape."""
        self.elem, (self.qs, self.ks, self.vs) = elem, shapes
        # The log-sum-exp's type: the accumulator's.
        self.stat_elem = "f64" if elem == "f64" else "f32"
        self.q4, self.k4, self.v4 = q4, k4, v4
        self.out4 = q4[:3] + v4[3:]
        self.out_shape = out_shape
        self.args, self.inputs, self.originals = [], [], []
        # Parameters whose values the call's options fix (a run-time scale,
        # softcap's constants), not the caller's arrays: name -> input.
        self.bound = {}
        # Parameters read in place from the caller's strided views (a
        # transposed [B, L, H, D] projection): query, key and value.
        self.views = set()
        self.attrs = []
        self.destination = False

    def add_input(self, name, x, shape, elem, pattern="", view=False, bound=False,
                  varying=None):
        """Appends a function parameter `%name` bound to `x` (viewed as
        `shape`); `pattern` marks the dimensions a shape-generic build
        leaves dynamic (_ir.varying_dims), or `varying` lists them; with
        `view`, the parameter takes `x` as the strided view it is
        (_arrays.as_view), not a copy; with `bound`, `x` is a value the
        call's options fix (see `bound`)."""
        if varying is None:
            varying = _ir.varying_dims(shape, pattern)
        self.args.append((name, shape, elem, tuple(varying)))
        if view:
            self.views.add(name)
        x_native = _arrays.as_view(x, name) if view else _arrays.as_array(x, name)
        self.inputs.append(_arrays.reshape(x_native, shape))
        self.originals.append(x)
        if bound:
            self.bound[name] = self.inputs[-1]

    def set_destination(self, out, read):
        """Makes the call write its output into `out` (out=): a view of the
        output's shape and element type, on the CPU, its last dimension
        contiguous, overlapping none of the arrays the call reads, `read`
        as [(name, array or None)] with the query first, passed as the
        destination parameter %out (docs/CpuABI.md, "Destinations"): no
        result, no copy. Call it after every other parameter is added."""
        query = read[0][1]
        if _arrays.is_torch(out) != _arrays.is_torch(query):
            raise TypeError(f"out must be a {type(query).__name__} like the query, "
                            f"got a {type(out).__name__}")
        if tuple(_arrays.shape(out)) != self.out_shape:
            raise ValueError(f"out has shape {list(_arrays.shape(out))}; the output's is "
                             f"{list(self.out_shape)}")
        if _arrays.element(out) != self.elem:
            raise TypeError(f"out is {_arrays.element(out)}; the output is {self.elem}")
        if _arrays.device(out) != "cpu":
            raise ValueError(f"out= writes CPU memory; out is on {_arrays.device(out)}")
        check_destination(out, read)
        out_native = _arrays.reshape_view(_arrays.as_destination(out, "out"), self.out4, "out")
        self.args.append((DESTINATION, self.out4, self.elem, _ir.varying_dims(self.out4, "v.v.")))
        self.views.add(DESTINATION)
        self.inputs.append(out_native)
        self.originals.append(out)
        self.destination = True

    def add_capture(self, name, array):
        """Appends parameter `%name` for an array a modifier captures. Its
        sizes follow the shape-class policy of the main operands (every
        dimension but those of size 1 dynamic in a shape-generic build): a
        decode step's mask that grows by a key per token (Gemma 2's under
        flex_attention) compiles twice, not once per token."""
        shape = _arrays.shape(array)
        self.add_input(name, array, shape, _arrays.element(array), "v" * len(shape))

    def add_captures(self, captures):
        """add_capture for each (name, array) of `captures`."""
        for name, array in captures:
            self.add_capture(name, array)

    def add_scalar(self, name, value, elem):
        """Appends a 0-D parameter `%name` of type `elem` holding `value`,
        fixed by the call's options: a value the function reads at run
        time, so that calls differing only in it share one compile."""
        dtype = {"f32": np.float32, "f64": np.float64, "i64": np.int64}[elem]
        self.add_input(name, np.array(value, dtype), (), elem, bound=True)

    def _empty(self, name, shape, elem, like, dynamic, types, body, pattern="v.v."):
        """Appends `%name = tensor.empty` of `shape` to `body`, its varying
        sizes (with `dynamic`; `pattern` as _ir.varying_dims's) read from
        the same dimensions of parameter `%like`; returns its type."""
        varying = _ir.varying_dims(shape, pattern) if dynamic else ()
        sizes = []
        for i in varying:
            body += [f"%{name}_c{i} = arith.constant {i} : index",
                     f"%{name}_d{i} = tensor.dim %{like}, %{name}_c{i} : {types[like]}"]
            sizes.append(f"%{name}_d{i}")
        type = _ir.tensor_type(shape, elem, varying)
        body.append(f"%{name} = tensor.empty({', '.join(sizes)}) : {type}")
        return type

    def _mask_operand(self, types):
        """The mask, key lengths (%kl, a varlen call's), run-time dropout
        seed and scale clauses of the op."""
        clauses = f"mask(%m : {types['m']}) " if "m" in types else ""
        if "kl" in types:
            clauses += f"kv_lens(%kl : {types['kl']}) "
        if "ds" in types:
            clauses += f"dropout_seed(%ds : {types['ds']}) "
        if "sc" in types:
            clauses += f"scale_value(%sc : {types['sc']}) "
        return clauses

    def sdpa_line(self, values, outs, result_types, types, regions, operands=("q", "k", "v")):
        """`values = attn.sdpa %q, %k, %v ...` of this call, `types` giving
        the types of its operands by name (`operands`: the names of its
        query, key and value)."""
        q, k, v = operands
        return (f"{values} = attn.sdpa %{q}, %{k}, %{v} {self._mask_operand(types)}{outs} "
                f"{' '.join(self.attrs)} : {types[q]}, {types[k]}, {types[v]} "
                f"-> {result_types}{_ir.bind_parameter_types(regions, types)}")

    def grad_line(self, types, regions, operands=("q", "k", "v", "o", "do")):
        """`%dq, %dk, %dv = attn.sdpa_grad` of this call into %eq, %ek, %ev,
        from the forward's operands, its output and the output's gradient
        (named by `operands`) and %lse."""
        q, k, v, o, do = operands
        return (f"%dq, %dk, %dv = attn.sdpa_grad %{q}, %{k}, %{v}, %{o}, %{do}, %lse "
                f"{self._mask_operand(types)}outs(%eq, %ek, %ev) "
                f"{' '.join(self.attrs)} : {types[q]}, {types[k]}, {types[v]}, "
                f"{types[o]}, {types['lse']}{_ir.bind_parameter_types(regions, types)}")

    def source(self, regions, dynamic, lse=False):
        """The function's text; with `dynamic`, the batch size and sequence
        lengths are left to run time (a shape-generic build). With `lse`,
        the function also returns the rows' log-sum-exp [B, Hq, L] (f32)."""
        types = _ir.parameter_types(self.args, dynamic)
        body = []
        # The output's dynamic sizes are the query's (batch, query length).
        out_type = self._empty("e", self.out4, self.elem, "q", dynamic, types, body)
        results, outs, result_types = [("%o", out_type)], "outs(%e)", out_type
        if lse:
            lse_type = self._empty("l", self.q4[:3], self.stat_elem, "q", dynamic, types,
                                   body, pattern="v.v")
            results.append(("%lse", lse_type))
            outs += f" lse(%l : {lse_type})"
            result_types += f", {lse_type}"
        values = ", ".join(v for v, _ in results)
        body.append(self.sdpa_line(values, outs, result_types, types, regions))
        params = [(name, types[name]) for name, *_ in self.args]
        views = self.views
        if self.destination:
            # The output stored in the caller's view: empty-tensor
            # elimination makes the op write there directly.
            _, shape, elem, varying = self.args[-1]  # set_destination's, added last
            dest_type = _ir.destination_type(shape, elem, varying if dynamic else ())
            params[-1] = (DESTINATION, dest_type)
            views = views - {DESTINATION}
            body.append(f"bufferization.materialize_in_destination %o in restrict writable "
                        f"%{DESTINATION} : ({out_type}, {dest_type}) -> ()")
            results = results[1:]  # the log-sum-exp, if asked for
        return _ir.function("sdpa", params, results, body, views)

    def grad_source(self, regions, dynamic):
        """The text of the backward: parameters the forward's, then its
        result `o`, the result's gradient `do` and the log-sum-exp `lse`;
        returns dq, dk, dv."""
        types = _ir.parameter_types(self.args, dynamic)
        body = []
        grad_types = [self._empty(f"e{name}", shape, self.elem, name, dynamic, types, body)
                      for name, shape in (("q", self.q4), ("k", self.k4), ("v", self.v4))]
        body.append(self.grad_line(types, regions))
        return _ir.function("sdpa_grad", [(name, types[name]) for name, *_ in self.args],
                            list(zip(("%dq", "%dk", "%dv"), grad_types)), body, self.views)

    def _run(self, source, regions, target, dynamic, kind):
        if target != "cpu":
            # Views are the CPU ABI's (docs/CpuABI.md): elsewhere, copies.
            self.views = set()
            self.inputs = [_arrays.contiguous(x) for x in self.inputs]
        key = (kind, tuple((name, tuple(shape), elem, varying)
                           for name, shape, elem, varying in self.args),
               self.q4, self.k4, self.out4, self.elem, tuple(self.attrs), regions, tuple(sorted(self.views)))
        function = compile_shaped(lambda d: source(regions, d), dynamic, target, key=key)
        self.function = function
        like = _arrays.first_torch(self.originals)
        return function.run_arrays(self.inputs, like)

    def run(self, regions, target, dynamic=None, lse=False):
        """Compiles (or reuses) the function for these arguments, static or
        shape-generic as `dynamic` says (compile_shaped), and runs it: the
        output, or with `lse` (output, log-sum-exp), shaped as the query's
        leading dimensions."""
        source = (lambda r, d: self.source(r, d, lse=True)) if lse else self.source
        result = self._run(source, regions, target, dynamic, "lse" if lse else "forward")
        if self.destination:
            out, stats = self.originals[-1], result
        elif lse:
            out, stats = _arrays.reshape(result[0], self.out_shape), result[1]
        else:
            return _arrays.reshape(result, self.out_shape)
        return (out, _arrays.reshape(stats, self.qs[:-1])) if lse else out

    def run_grad(self, out, out_grad, lse, regions, target, dynamic=None):
        """The gradients (dq, dk, dv), shaped as query, key and value, of the
        forward this call describes, given its output, the output's gradient
        and its log-sum-exp."""
        self.add_input("o", out, self.out4, self.elem, "v.v.")
        self.add_input("do", out_grad, self.out4, self.elem, "v.v.")
        self.add_input("lse", lse, self.q4[:3], self.stat_elem, "v.v")
        dq, dk, dv = self._run(self.grad_source, regions, target, dynamic, "grad")
        return (_arrays.reshape(dq, self.qs), _arrays.reshape(dk, self.ks),
                _arrays.reshape(dv, self.vs))


def check_out_options(out, grad, target):
    """Whether out= goes with the rest of the call: no autograd (as torch's
    out= functions), the CPU target."""
    if grad or (_arrays.is_torch(out) and out.requires_grad and
                _arrays._torch().is_grad_enabled()):
        raise RuntimeError("out= does not support automatic differentiation (as torch's "
                           "out= functions)")
    if target != "cpu":
        raise ValueError(f"out= writes CPU memory; target is {target!r}")


def check_destination(out, read):
    """What out= needs of `out` beyond its type, shape and device (which a
    remembered call's signature fixes): writable, and overlapping none of
    the arrays the call reads, `read` as [(name, array or None)]."""
    if not _arrays.is_torch(out) and not out.flags.writeable:
        raise ValueError("out is a read-only NumPy array")
    for name, x in read:
        if x is not None and _arrays.may_overlap(out, x):
            raise ValueError(f"out overlaps {name}: the call reads {name} while it "
                             f"writes out")


def draw_seed(like):
    """A fresh dropout seed: from torch's generator for torch tensors (so
    torch.manual_seed reproduces a run), NumPy's global one otherwise."""
    if _arrays.is_torch(like):
        torch = _arrays._torch()
        return int(torch.randint(0, 2**62, ()))
    return int(np.random.randint(0, 2**62, dtype=np.int64))


def prepare(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
             window, alignment, require_rank4=False, seed=None):
    """Checks the arguments as PyTorch does (with its messages' numbers) and
    returns the SdpaCall with the masks and attributes in place."""
    qs, ks, vs = _dims(query, "query"), _dims(key, "key"), _dims(value, "value")
    if require_rank4 and not (len(qs) == len(ks) == len(vs) == 4):
        raise ValueError(f"query, key and value must be 4-D (B, H, L, E), got shapes "
                         f"{list(qs)}, {list(ks)}, {list(vs)}")
    elem = _arrays.element(query)
    if elem not in _FLOATS:
        raise TypeError(f"query must be float32, float16, bfloat16 or float64, got {elem}")
    for name, x in (("key", key), ("value", value)):
        if _arrays.element(x) != elem:
            raise TypeError(f"query, key and value must have the same dtype: query "
                            f"is {elem}, {name} is {_arrays.element(x)}")
    if not (len(qs) == len(ks) == len(vs)):
        raise ValueError(f"query, key and value must have the same rank, got "
                         f"{len(qs)}, {len(ks)} and {len(vs)}")
    if ks[-1] != qs[-1]:
        raise ValueError(f"key's last dimension ({ks[-1]}) must equal query's "
                         f"embedding size E ({qs[-1]})")
    if ks[-2] != vs[-2]:
        raise ValueError(f"key and value must have the same sequence length S, "
                         f"got {ks[-2]} and {vs[-2]}")
    if ks[:-2] != vs[:-2] or (len(qs) > 3 and qs[:-3] != ks[:-3]):
        raise ValueError(f"batch dimensions of query {list(qs[:-2])}, key "
                         f"{list(ks[:-2])} and value {list(vs[:-2])} do not match")
    hq = qs[-3] if len(qs) >= 3 else 1
    hkv = ks[-3] if len(ks) >= 3 else 1
    if hq != hkv:
        if not enable_gqa:
            raise ValueError(f"query heads ({hq}) and key/value heads ({hkv}) differ; "
                             f"pass enable_gqa=True for grouped-query attention")
        if hq % hkv:
            raise ValueError(f"query heads ({hq}) must be a multiple of key/value "
                             f"heads ({hkv})")
    if is_causal and attn_mask is not None:
        raise ValueError("attn_mask and is_causal cannot both be set (PyTorch's rule)")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if alignment not in ("top_left", "bottom_right"):
        raise ValueError(f"alignment must be 'top_left' or 'bottom_right', got {alignment!r}")
    if alignment != "top_left" and not is_causal and window is None:
        raise ValueError("alignment has no effect without is_causal or window")
    if window is not None and (len(window) != 2 or min(window) < 0):
        raise ValueError(f"window must be (left, right) with non-negative "
                         f"extents, got {tuple(window)}")
    if scale is not None and (not math.isfinite(scale) or scale == 0):
        raise ValueError(f"scale must be finite and non-zero, got {scale}")

    call = SdpaCall(query, key, value, elem, (qs, ks, vs))
    if attn_mask is not None:
        mask_elem = _arrays.element(attn_mask)
        if mask_elem not in ("i1",) + _FLOATS:
            raise TypeError(f"attn_mask must be bool or float, got {mask_elem}")
        ms = _arrays.shape(attn_mask)
        target_shape = qs[:-1] + (ks[-2],)
        if len(ms) > len(target_shape) or any(
                m != 1 and m != t for m, t in zip(ms[::-1], target_shape[::-1])):
            raise ValueError(f"attn_mask of shape {list(ms)} does not broadcast to "
                             f"(..., Hq, L, S) = {list(target_shape)}")
        mask = attn_mask
        if len(ms) > 4:  # leading dimensions flattened like the query's
            mask = broadcast(_arrays.as_array(attn_mask, "attn_mask"), target_shape)
            ms = call.q4[:3] + (ks[-2],)
        call.add_input("m", mask, ms, mask_elem, "v.vv")
    if scale is not None:
        # A run-time operand, not an attribute: layers that differ only in
        # their scale (GPT-2's scale_attn_by_inverse_layer_idx) share one
        # compile, and a constant makes the kernel no faster
        # (benchmarks/RESULTS.md, session 41). f64 calls keep every bit.
        call.add_scalar("sc", scale, "f64" if elem == "f64" else "f32")
    if is_causal:
        call.attrs.append("causal")
    if window is not None:
        call.attrs.append(f"window = [{int(window[0])}, {int(window[1])}]")
    if alignment != "top_left":
        call.attrs.append(f"align = <{alignment}>")
    if dropout_p > 0:
        call.attrs.append(f"dropout = {_ir.float_literal(dropout_p)}")
        # The seed is an argument, not an attribute: a new one each call
        # needs no new compile.
        seed = draw_seed(query) if seed is None else int(seed)
        call.add_scalar("ds", seed, "i64")
    return call


# softcap's score_mod: cap * tanh(s / cap) with the cap and its reciprocal
# as 0-D parameters (read at run time, so models with different caps share
# one compile; the kernel is as fast as with constants: benchmarks/
# RESULTS.md, session 41). Written out, not traced: it is the same text for
# every cap, and torch.compile traces the calls that build it.
_SOFTCAP_REGION = """ score_mod {
       ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
         %cap = tensor.extract %softcap[] : tensor<f32>
         %inverse = tensor.extract %softcap_inverse[] : tensor<f32>
         %x = arith.mulf %s, %inverse : f32
         %t = math.tanh %x : f32
         %capped = arith.mulf %cap, %t : f32
         attn.yield %capped : f32
     }"""


def softcap_region(softcap, attn_mask):
    """The score_mod region of `softcap` and the values of the 0-D f32
    parameters it reads, [(name, value)] (("", []) for None), checked: the
    op adds a float mask before its score_mod (AttnOps.td), where a soft
    cap must come first."""
    if softcap is None:
        return "", []
    if not math.isfinite(softcap) or softcap <= 0:
        raise ValueError(f"softcap must be finite and positive, got {softcap}")
    if attn_mask is not None and _arrays.element(attn_mask) != "i1":
        raise ValueError(f"softcap takes a bool attn_mask (True takes part), got a "
                         f"{_arrays.element(attn_mask)} one: a float mask would be added "
                         f"before the cap")
    return _SOFTCAP_REGION, [("softcap", float(softcap)),
                             ("softcap_inverse", 1.0 / float(softcap))]


def broadcast(x, target_shape):
    if _arrays.is_torch(x):
        return x.broadcast_to(tuple(target_shape)).contiguous()
    return np.ascontiguousarray(np.broadcast_to(x, tuple(target_shape)))


def flash_modifiers(softcap, alibi_slopes, score_mod, mask_mod, batch, lens_elem, query_rows,
                    key_lens, query_lens=None):
    """The score_mod and mask_mod regions of FlashAttention's modifiers on
    sequences of their own lengths (varlen_attention, paged_attention) and
    the arrays they capture [(name, array)]: `softcap` (cap * tanh(s /
    cap)), then ALiBi (-slope * |i + len_k - len_q - j|, slopes [Hq] or
    [B, Hq]), then `score_mod`; `mask_mod`. The regions read the key
    lengths from the function's tensor %`key_lens` ([batch] of `lens_elem`)
    and the query lengths from %`query_lens`, or all `query_rows` when
    None; with query lengths the op's query index is padded: the sequence's
    queries are the last of its `query_rows`. q_idx and kv_idx, as the
    modifiers see them, count from the sequence's first query and key."""
    tracer = _Tracer()
    keys = tracer.local(key_lens, (batch,), lens_elem)
    queries = None if query_lens is None else tracer.local(query_lens, (batch,), lens_elem)

    def position(b, q_idx):
        return q_idx if queries is None else q_idx - (query_rows - queries[b])

    def query_len(b):
        return query_rows if queries is None else queries[b]

    regions = ""
    if softcap or alibi_slopes is not None or score_mod is not None:
        slopes = None if alibi_slopes is None else tracer.wrap(alibi_slopes)
        modify = None if score_mod is None else tracer.rebind(score_mod)

        def modified(score, b, h, q_idx, kv_idx):
            i = position(b, q_idx)
            if softcap:
                score = softcap * tanh(score * (1.0 / softcap))
            if slopes is not None:
                slope = slopes[h] if len(slopes.shape) == 1 else slopes[b, h]
                distance = 1.0 * (i + keys[b] - query_len(b) - kv_idx)  # in f32
                score = score - slope * abs(distance)
            return score if modify is None else modify(score, b, h, i, kv_idx)

        regions += " score_mod " + tracer.trace(modified, "s", [("score", "f32")] + _INDEX_ARGS,
                                                "f32")
    if mask_mod is not None:
        keep = tracer.rebind(mask_mod)
        regions += " mask_mod " + tracer.trace(
            lambda b, h, q_idx, kv_idx: keep(b, h, position(b, q_idx), kv_idx), "m",
            _INDEX_ARGS, "i1")
    return regions, tracer.captures


def check_flash_modifiers(dropout_p, softcap, alibi_slopes, batch, heads):
    """FlashAttention's modifier arguments, checked: dropout_p in [0, 1),
    softcap >= 0 (0: none), alibi_slopes float32 [heads] or [batch, heads]."""
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if softcap is None or not math.isfinite(softcap) or softcap < 0:
        raise ValueError(f"softcap must be finite and >= 0 (0: no cap), got {softcap}")
    if alibi_slopes is not None:
        shapes = ((heads,), (batch, heads))
        if _arrays.element(alibi_slopes) != "f32" or \
                tuple(_arrays.shape(alibi_slopes)) not in shapes:
            raise ValueError(f"alibi_slopes must be float32 of shape {list(shapes[0])} or "
                             f"{list(shapes[1])}, got {_arrays.element(alibi_slopes)} "
                             f"{list(_arrays.shape(alibi_slopes))}")
