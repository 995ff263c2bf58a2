# ===- attn_mlir/_varlen.py - packed variable-length batches as IR ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The call plan of varlen_attention and of the torch custom ops it becomes
# under autograd: packed [T, H, D] rows and their offsets, padded per
# sequence by attn.pad_sequences (queries at the end of their rows, keys at
# the start), the attn.sdpa or attn.sdpa_grad of _plan.SdpaCall over the
# keys' lengths, packed back by attn.unpad_sequences. The backward pads the
# forward's output and its gradient the same way and reads the forward's
# padded log-sum-exp, so that padding rows contribute nothing.
#
# Modifiers (score_mod, mask_mod, ALiBi, softcap: _plan.flash_modifiers)
# see each sequence's own positions: q_idx and kv_idx count from the
# sequence's first query and key, b is the sequence. The padded query
# index the op gives the region becomes the sequence's by the query
# lengths the function computed (%ql), which the region reads like a
# captured array.
#
# ===----------------------------------------------------------------------=== #

import numpy as np

from . import _arrays, _ir
from ._plan import SdpaCall, draw_seed


def padded_length(longest):
    """The padded length a varlen call compiles for: the longest sequence
    rounded up to a power of two up to 64 and to a multiple of 64 beyond,
    so that batches whose longest sequence differs a little share one
    function."""
    longest = max(int(longest), 1)
    if longest <= 64:
        return 1 << (longest - 1).bit_length()
    return -(-longest // 64) * 64


def sequence_lengths(cu_seqlens, total, name):
    """The lengths cu_seqlens (B + 1 offsets into `total` rows) describes,
    after checking that it does describe them."""
    cu = np.asarray(cu_seqlens.detach().cpu() if _arrays.is_torch(cu_seqlens) else cu_seqlens)
    if cu.ndim != 1 or cu.size < 1:
        raise ValueError(f"{name} must have B + 1 >= 1 entries, got shape {list(cu.shape)}")
    lengths = np.diff(cu.astype(np.int64))
    if cu[0] < 0 or cu[-1] > total or (lengths < 0).any():
        raise ValueError(f"{name} must be non-decreasing offsets from >= 0 to at most "
                         f"the {total} packed rows, got {cu.tolist()}")
    return lengths


class VarlenCall(SdpaCall):
    """One varlen attention call being put together: parameters %q, %k, %v
    (packed), %cuq, %cuk (offsets), then those of SdpaCall (captures,
    dropout seed); the op's operands are the padded %qp, %kp, %vp."""

    def __init__(self, q, k, v, cu_q, cu_k, elem, cu_elem, padded):
        (T, Hq, D), (_, Hkv, _), Dv = _arrays.shape(q), _arrays.shape(k), _arrays.shape(v)[2]
        B = _arrays.shape(cu_q)[0] - 1
        Sq, Skv = padded
        self._start(elem, tuple(tuple(_arrays.shape(x)) for x in (q, k, v)), (B, Hq, Sq, D),
                    (B, Hkv, Skv, D), (B, Hkv, Skv, Dv), (T, Hq, Dv))
        self.cu_elem = cu_elem
        for name, x in (("q", q), ("k", k), ("v", v)):
            self.add_input(name, x, _arrays.shape(x), elem, "v..")
        for name, x in (("cuq", cu_q), ("cuk", cu_k)):
            self.add_input(name, x, _arrays.shape(x), cu_elem, "v")
        # The batch size is dynamic where the offsets' size is.
        self.batch_varying = self.args[-1][3]

    def _padded_types(self, dynamic):
        """The parameters' types and those of the padded values: qp, kp,
        vp, op and dop ([B, H, S, D]), kl and ql (lengths) and lse."""
        types = _ir.parameter_types(self.args, dynamic)
        batch = self.batch_varying if dynamic else ()
        for name, shape in (("qp", self.q4), ("kp", self.k4), ("vp", self.v4), ("op", self.out4),
                            ("dop", self.out4)):
            types[name] = _ir.tensor_type(shape, self.elem, batch)
        types["kl"] = types["ql"] = _ir.tensor_type(self.q4[:1], self.cu_elem, batch)
        types.setdefault("lse", _ir.tensor_type(self.q4[:3], self.stat_elem, batch))
        return types

    def _pad(self, name, offsets, queries, types, body):
        """%{name}p, %{name}l: parameter %name padded per sequence by the
        offsets %{offsets}, at the end of the rows for `queries`."""
        align = " align = <bottom_right>" if queries else ""
        body.append(f"%{name}p, %{name}l = attn.pad_sequences %{name}[%{offsets}]{align} : "
                    f"{types[name]}, {types[offsets]} -> {types[name + 'p']}, {types['kl']}")

    def _padded_empty(self, name, type_, dynamic, body):
        sizes = "%nb" if dynamic and self.batch_varying else ""
        body.append(f"%{name} = tensor.empty({sizes}) : {type_}")

    def _unpad(self, result, padded, padded_type, offsets, queries, like, shape, dynamic, types,
               body):
        """%result: the packed rows of `padded` (shaped as parameter %like),
        zeros in the rows no sequence covers; returns its type."""
        packed = self._empty(f"{result}_e", shape, self.elem, like, dynamic, types, body, "v..")
        align = " align = <bottom_right>" if queries else ""
        body += [f"%{result}_z = arith.constant 0.0 : {self.elem}",
                 f"%{result}_f = linalg.fill ins(%{result}_z : {self.elem}) "
                 f"outs(%{result}_e : {packed}) -> {packed}",
                 f"%{result} = attn.unpad_sequences %{padded}[%{offsets}]{align} "
                 f"outs(%{result}_f) : {padded_type}, {types[offsets]} -> {packed}"]
        return packed

    def _batch(self, dynamic, types, body):
        body.append("%c0 = arith.constant 0 : index")
        if dynamic and self.batch_varying:
            body.append(f"%nb = tensor.dim %qp, %c0 : {types['qp']}")

    def source(self, regions, dynamic, lse=False):
        """The forward's text: the packed output, and with `lse` the padded
        rows' log-sum-exp [B, Hq, Sq] (what the backward reads)."""
        types = self._padded_types(dynamic)
        body = []
        self._pad("q", "cuq", True, types, body)
        self._pad("k", "cuk", False, types, body)
        self._pad("v", "cuk", False, types, body)
        self._batch(dynamic, types, body)
        self._padded_empty("e", types["op"], dynamic, body)
        values, outs, result_types = "%o", "outs(%e)", types["op"]
        if lse:
            self._padded_empty("l", types["lse"], dynamic, body)
            values, outs = "%o, %lse", f"outs(%e) lse(%l : {types['lse']})"
            result_types += f", {types['lse']}"
        body.append(self.sdpa_line(values, outs, result_types, types, regions,
                                   ("qp", "kp", "vp")))
        out = self._unpad("r", "o", types["op"], "cuq", True, "q", self.out_shape, dynamic,
                          types, body)
        results = [("%r", out)] + ([("%lse", types["lse"])] if lse else [])
        return _ir.function("varlen", [(name, types[name]) for name, *_ in self.args],
                            results, body)

    def grad_source(self, regions, dynamic):
        """The backward's text: parameters the forward's, then its packed
        output %o, that output's gradient %do and the padded %lse; returns
        the packed dq, dk, dv."""
        types = self._padded_types(dynamic)
        body = []
        for name, offsets, queries in (("q", "cuq", True), ("k", "cuk", False),
                                       ("v", "cuk", False), ("o", "cuq", True),
                                       ("do", "cuq", True)):
            self._pad(name, offsets, queries, types, body)
        self._batch(dynamic, types, body)
        for name, padded in (("eq", "qp"), ("ek", "kp"), ("ev", "vp")):
            self._padded_empty(name, types[padded], dynamic, body)
        body.append(self.grad_line(types, regions, ("qp", "kp", "vp", "op", "dop")))
        results = []
        for grad, padded, offsets, queries, like in (("dq", "qp", "cuq", True, "q"),
                                                     ("dk", "kp", "cuk", False, "k"),
                                                     ("dv", "vp", "cuk", False, "v")):
            packed = self._unpad(f"g{grad}", grad, types[padded], offsets, queries, like,
                                 self.qs if like == "q" else self.ks if like == "k" else self.vs,
                                 dynamic, types, body)
            results.append((f"%g{grad}", packed))
        return _ir.function("varlen_grad", [(name, types[name]) for name, *_ in self.args],
                            results, body)

    def run(self, regions, target, dynamic=None, lse=False):
        """The packed output, or with `lse` (output, padded log-sum-exp)."""
        source = (lambda r, d: self.source(r, d, lse=True)) if lse else self.source
        return self._run(source, regions, target, dynamic, "varlen-lse" if lse else "varlen")

    def run_grad(self, out, out_grad, lse, regions, target, dynamic=None):
        """The packed gradients (dq, dk, dv) of the forward this call
        describes, from its packed output, that output's gradient and its
        padded log-sum-exp."""
        self.add_input("o", out, self.out_shape, self.elem, "v..")
        self.add_input("do", out_grad, self.out_shape, self.elem, "v..")
        self.add_input("lse", lse, self.q4[:3], self.stat_elem, varying=self.batch_varying)
        return self._run(self.grad_source, regions, target, dynamic, "varlen-grad")


def prepare(q, k, v, cu_q, cu_k, elem, cu_elem, padded, dropout_p, scale, causal, window,
            seed):
    """The VarlenCall of checked arguments, with its attributes and the
    dropout seed (drawn when None and dropout_p > 0)."""
    call = VarlenCall(q, k, v, cu_q, cu_k, elem, cu_elem, padded)
    if scale is not None:
        call.attrs.append(f"scale = {_ir.float_literal(scale)}")
    if causal:
        call.attrs.append("causal")
    if window is not None:
        call.attrs.append(f"window = [{int(window[0])}, {int(window[1])}]")
    if causal or window is not None:
        call.attrs.append("align = <bottom_right>")
    if dropout_p > 0:
        call.attrs.append(f"dropout = {_ir.float_literal(dropout_p)}")
        call.add_scalar("ds", draw_seed(q) if seed is None else int(seed), "i64")
    return call


def packed_lse(lse, offsets, padded_q, total):
    """The padded log-sum-exp [B, Hq, Sq] as FlashAttention's varlen one,
    [Hq, total_q]: row offsets[b] + r is sequence b's query r; rows no
    sequence covers are -inf (no key took part)."""
    offsets = np.asarray(offsets, np.int64)
    lengths = np.diff(offsets)
    seq = np.repeat(np.arange(len(lengths)), lengths)
    rows = np.arange(offsets[0], offsets[-1])
    column = padded_q - lengths[seq] + rows - offsets[seq]
    shape = (_arrays.shape(lse)[1], total)
    if _arrays.is_torch(lse):
        torch = _arrays._torch()
        packed = torch.full(shape, float("-inf"), dtype=lse.dtype)
        seq, column, rows = (torch.from_numpy(x) for x in (seq, column, rows))
    else:
        packed = np.full(shape, -np.inf, dtype=lse.dtype)
    packed[:, rows] = lse[seq, :, column].T
    return packed
