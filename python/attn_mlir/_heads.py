# ===- attn_mlir/_heads.py - attention on heads split in the function ------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The attention core of a multi-head attention layer between its
# projections, as one compiled function each way: Q, K and V are column
# ranges of the projections' outputs [N, T, W] (all three of one [N, L, 3E]
# tensor in self-attention), split into heads and transposed to
# [N, H, T, D] inside the function, and the output is merged back to
# [N, L, E] there too; the backward takes the merged output's gradient and
# returns one gradient per projection output. The head split and merge are
# then the compiled code's copies: as torch ops (views made contiguous, the
# gradients' concatenation) they woke torch's OpenMP threads between the
# compiled calls, whose spinning took the cores from the next compiled
# call (attn_mlir.nn's training step).
#
# ===----------------------------------------------------------------------=== #

from . import _arrays, _ir
from ._plan import SdpaCall

_C = "%c{0} = arith.constant {0} : index"


class HeadSplitCall(SdpaCall):
    """attn.sdpa (forward with its log-sum-exp, or attn.sdpa_grad) on heads
    split from `sources` ([N, T, W] arrays): `refs` gives, for Q, K and V,
    (index of the source, first column); each is `heads` heads of `head_dim`
    columns. Masks and dropout are added as for SdpaCall (add_input "m"
    [N or 1, H or 1, L, S], "ds" and the attributes)."""

    def __init__(self, sources, refs, heads, head_dim, elem):
        self.elem, self.refs = elem, list(refs)
        self.stat_elem = "f64" if elem == "f64" else "f32"
        self.heads, self.head_dim = heads, head_dim
        self.embed = heads * head_dim
        self.shapes = [_arrays.shape(s) for s in sources]
        n, L = self.shapes[refs[0][0]][:2]
        S = self.shapes[refs[1][0]][1]
        self.q4 = self.out4 = (n, heads, L, head_dim)
        self.k4 = self.v4 = (n, heads, S, head_dim)
        self.args, self.inputs, self.originals, self.attrs = [], [], [], []
        self.views = set()  # the sources are dense
        for i, source in enumerate(sources):
            self.add_input(f"s{i}", source, self.shapes[i], elem, "vv.")

    def _sizes(self, name, dynamic, body, types):
        """(N, T) of parameter `%name` as IR operands: constants, or with
        `dynamic` its tensor.dim values."""
        shape = [a for a in self.args if a[0] == name][0][1]
        if not dynamic:
            return str(shape[0]), str(shape[1])
        if f"{name}_n" not in types:  # each read once
            body += [f"%{name}_n = tensor.dim %{name}, %c0 : {types[name]}",
                     f"%{name}_t = tensor.dim %{name}, %c1 : {types[name]}"]
            types[f"{name}_n"] = "index"
        return f"%{name}_n", f"%{name}_t"

    def _types(self, T, dynamic):
        """The types of [N, T, E], [N, T, H, D] and [N, H, T, D]."""
        n, E, H, D = self.q4[0], self.embed, self.heads, self.head_dim
        dims = (0, 1) if dynamic else ()
        return (_ir.tensor_type((n, T, E), self.elem, dims),
                _ir.tensor_type((n, T, H, D), self.elem, dims),
                _ir.tensor_type((n, H, T, D), self.elem, (0, 2) if dynamic else ()))

    def _split(self, name, source, column, T, dynamic, body, types):
        """`%name` = the heads [N, H, T, D] of columns [column, column + E) of
        parameter `%source`."""
        n, t = self._sizes(source, dynamic, body, types)
        rows, split, heads = self._types(T, dynamic)
        dyn = [x for x in (n, t) if x.startswith("%")]
        offsets_sizes = f"[0, 0, {column}] [{n}, {t}, {self.embed}] [1, 1, 1]"
        body += [f"%{name}_cols = tensor.extract_slice %{source}{offsets_sizes} : "
                 f"{types[source]} to {rows}",
                 f"%{name}_split = tensor.expand_shape %{name}_cols [[0], [1], [2, 3]] "
                 f"output_shape [{n}, {t}, {self.heads}, {self.head_dim}] : {rows} into {split}",
                 f"%{name}_e = tensor.empty({', '.join(dyn)}) : {heads}",
                 f"%{name} = linalg.transpose ins(%{name}_split : {split}) "
                 f"outs(%{name}_e : {heads}) permutation = [0, 2, 1, 3]"]
        types[name] = heads
        return n, t

    def _merge(self, name, heads_name, n, t, T, dynamic, body, into=None):
        """`%name` = [N, T, E] of the heads `%heads_name` [N, H, T, D];
        returns its type. With `into` = (tensor, its type, first column),
        the heads are written into those columns of that [N, T, W] tensor
        (a view of its slice, so that the result is computed in place) and
        `%name` is the tensor with them."""
        rows, split, heads = self._types(T, dynamic)
        dyn = [x for x in (n, t) if x.startswith("%")]
        if into is None:
            body.append(f"%{name}_e = tensor.empty({', '.join(dyn)}) : {split}")
        else:
            dest, dest_type, column = into
            window = f"[0, 0, {column}] [{n}, {t}, {self.embed}] [1, 1, 1]"
            body += [f"%{name}_slot = tensor.extract_slice %{dest}{window} : "
                     f"{dest_type} to {rows}",
                     f"%{name}_e = tensor.expand_shape %{name}_slot [[0], [1], [2, 3]] "
                     f"output_shape [{n}, {t}, {self.heads}, {self.head_dim}] : "
                     f"{rows} into {split}"]
        merged = f"{name}_m" if into else name
        body += [f"%{name}_t = linalg.transpose ins(%{heads_name} : {heads}) "
                 f"outs(%{name}_e : {split}) permutation = [0, 2, 1, 3]",
                 f"%{merged} = tensor.collapse_shape %{name}_t [[0], [1], [2, 3]] : "
                 f"{split} into {rows}"]
        if into is None:
            return rows
        body.append(f"%{name} = tensor.insert_slice %{merged} into %{dest}{window} : "
                    f"{rows} into {dest_type}")
        return dest_type

    def _operands(self, dynamic, body, types):
        """%q, %k, %v from the sources; returns the query's (N, L) and the
        keys' (N, S) operands."""
        body += [_C.format(0), _C.format(1)]
        sizes = []
        for name, (source, column), shape in zip("qkv", self.refs,
                                                 (self.q4, self.k4, self.v4)):
            sizes.append(self._split(name, f"s{source}", column, shape[2], dynamic, body,
                                     types))
        return sizes[0], sizes[1]

    def source(self, regions, dynamic, lse=True):
        """The forward: returns the output [N, L, E] and the log-sum-exp
        [N, H, L]."""
        types = _ir.parameter_types(self.args, dynamic)
        body = []
        (n, l), _ = self._operands(dynamic, body, types)
        L = self.q4[2]
        heads = types["q"]
        dyn = [x for x in (n, l) if x.startswith("%")]
        lse_type = _ir.tensor_type(self.q4[:3], self.stat_elem, (0, 2) if dynamic else ())
        body += [f"%e = tensor.empty({', '.join(dyn)}) : {heads}",
                 f"%l = tensor.empty({', '.join(dyn)}) : {lse_type}",
                 self.sdpa_line("%o, %lse", f"outs(%e) lse(%l : {lse_type})",
                                f"{heads}, {lse_type}", types, regions)]
        types["o"] = heads
        out = self._merge("out", "o", n, l, L, dynamic, body)
        return _ir.function("mha_core", [(a[0], types[a[0]]) for a in self.args],
                            [("%out", out), ("%lse", lse_type)], body)

    def grad_source(self, regions, dynamic):
        """The backward (parameters: the forward's, then its output `om`,
        the output's gradient `dom` and the log-sum-exp): one gradient per
        source, zero in the columns no operand reads."""
        types = _ir.parameter_types(self.args, dynamic)
        body = []
        (n, l), (_, s) = self._operands(dynamic, body, types)
        L, S = self.q4[2], self.k4[2]
        for merged, heads in (("om", "o"), ("dom", "do")):
            self._split(heads, merged, 0, L, dynamic, body, types)
        for name, (a, t) in (("eq", (n, l)), ("ek", (n, s)), ("ev", (n, s))):
            body.append(f"%{name} = tensor.empty({', '.join(x for x in (a, t) if x.startswith('%'))}) "
                        f": {types[name[1]]}")
        body.append(self.grad_line(types, regions))
        results = []
        for i, shape in enumerate(self.shapes):
            source = f"s{i}"
            sn, st = self._sizes(source, dynamic, body, types)
            columns = sorted((column, name) for name, (j, column) in zip("qkv", self.refs)
                             if j == i)
            whole = [c for c, _ in columns] == list(range(0, shape[2], self.embed))
            dyn = [x for x in (sn, st) if x.startswith("%")]
            current = f"g{i}_0"
            body.append(f"%{current} = tensor.empty({', '.join(dyn)}) : {types[source]}")
            if not whole:
                body += [f"%zero{i} = arith.constant 0.0 : {self.elem}",
                         f"%g{i}_z = linalg.fill ins(%zero{i} : {self.elem}) "
                         f"outs(%{current} : {types[source]}) -> {types[source]}"]
                current = f"g{i}_z"
            T = shape[1]
            for j, (column, name) in enumerate(columns):
                self._merge(f"g{i}_{j + 1}", f"d{name}", sn, st, T, dynamic, body,
                            into=(current, types[source], column))
                current = f"g{i}_{j + 1}"
            results.append((f"%{current}", types[source]))
        return _ir.function("mha_core_grad", [(a[0], types[a[0]]) for a in self.args],
                            results, body)

    def run(self, target, dynamic=None):
        """(output [N, L, E], log-sum-exp [N, H, L])."""
        return self._run(lambda r, d: self.source(r, d), "", target, dynamic,
                         ("heads", tuple(self.refs)))

    def run_grad(self, out, out_grad, lse, target, dynamic=None):
        """The gradient of every source, given the forward's output, its
        gradient and the log-sum-exp."""
        self.add_input("om", out, _arrays.shape(out), self.elem, "vv.")
        self.add_input("dom", out_grad, _arrays.shape(out), self.elem, "vv.")
        self.add_input("lse", lse, self.q4[:3], self.stat_elem, "v.v")
        grads = self._run(self.grad_source, "", target, dynamic,
                          ("heads_grad", tuple(self.refs)))
        return list(grads) if isinstance(grads, tuple) else [grads]
