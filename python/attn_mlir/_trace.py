# ===- attn_mlir/_trace.py - Python modifiers traced to attn regions -------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# A modifier (flex_attention's score_mod and mask_mod, sdpa's softcap) is
# called once, on symbolic values, and what it computes is recorded as the
# body of an attn.sdpa `score_mod` / `mask_mod` region: no IR writing. Index
# arguments (b, h, q_idx, kv_idx) are `index` values, the score an `f32`;
# Python operators become arith ops, comparisons `cmpi`/`cmpf`, `&`, `|`,
# `~` the i1 logic, and `tanh`/`exp`/`where`/... below the math and select
# ops. NumPy arrays or torch tensors the modifier reads from its closure or
# module globals (document ids, ALiBi slopes) become extra arguments of the
# compiled function, indexed with `tensor.extract`; their contents are not
# part of the compiled code, so new values need no recompilation.
#
# ===----------------------------------------------------------------------=== #

import types

import numpy as np

from . import _arrays, _ir

_INT_TYPES = ("index", "i64", "i32", "i8")
_FLOAT_TYPES = ("f32", "f16", "bf16", "f64")


class TraceError(TypeError):
    """A modifier did something that cannot be recorded as IR."""


class _Region:
    """The ops of one region, as text lines."""

    def __init__(self, prefix):
        self.prefix, self.lines, self.count = prefix, [], 0

    def emit(self, text, type_):
        name = f"%{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {text}")
        return Value(self, name, type_)

    def constant(self, x, type_):
        if type_ == "i1":
            return self.emit(f"arith.constant {'true' if x else 'false'}", "i1")
        if type_ in _FLOAT_TYPES:
            return self.emit(f"arith.constant {_ir.float_literal(x)} : {type_}", type_)
        return self.emit(f"arith.constant {int(x)} : {type_}", type_)


class Value:
    """A symbolic scalar of a modifier region."""

    def __init__(self, region, name, type_):
        self.region, self.name, self.type = region, name, type_

    # -- conversions ------------------------------------------------------- #

    def _to(self, type_):
        r, t = self.region, self.type
        if t == type_:
            return self
        if t in _INT_TYPES and type_ in _INT_TYPES:
            if "index" in (t, type_):
                return r.emit(f"arith.index_cast {self.name} : {t} to {type_}", type_)
            op = "arith.extsi" if int(t[1:]) < int(type_[1:]) else "arith.trunci"
            return r.emit(f"{op} {self.name} : {t} to {type_}", type_)
        if t in _INT_TYPES and type_ == "f32":
            wide = self._to("i64")
            return r.emit(f"arith.sitofp {wide.name} : i64 to f32", "f32")
        if t in ("f16", "bf16") and type_ == "f32":
            return r.emit(f"arith.extf {self.name} : {t} to f32", "f32")
        if t == "f64" and type_ == "f32":
            return r.emit(f"arith.truncf {self.name} : f64 to f32", "f32")
        raise TraceError(f"cannot convert a {t} value to {type_}")

    def _lift(self, other):
        """(self, other) as values of one type: floats win over integers,
        index over narrower integers."""
        if isinstance(other, Value):
            a, b = self, other
        elif isinstance(other, (bool, np.bool_)) and self.type == "i1":
            return self, self.region.constant(bool(other), "i1")
        elif isinstance(other, (int, np.integer)):
            return self, self.region.constant(int(other), self.type if self.type != "i1" else "index")
        elif isinstance(other, (float, np.floating)):
            a = self._to("f32") if self.type not in ("f32",) else self
            return a, self.region.constant(float(other), "f32")
        else:
            raise TraceError(f"cannot combine a traced value with {type(other).__name__}")
        if a.type == b.type:
            return a, b
        if a.type in _FLOAT_TYPES or b.type in _FLOAT_TYPES:
            return a._to("f32"), b._to("f32")
        return a._to("index"), b._to("index")

    # -- arithmetic --------------------------------------------------------- #

    def _binary(self, other, int_op, float_op, reverse=False):
        a, b = self._lift(other)
        if reverse:
            a, b = b, a
        if a.type == "i1":
            raise TraceError("arithmetic on booleans: use & | ~ for logic")
        op = float_op if a.type in _FLOAT_TYPES else int_op
        if op is None:
            raise TraceError(f"this operator is not defined on {a.type} values")
        return self.region.emit(f"{op} {a.name}, {b.name} : {a.type}", a.type)

    def __add__(self, o): return self._binary(o, "arith.addi", "arith.addf")
    def __radd__(self, o): return self._binary(o, "arith.addi", "arith.addf", True)
    def __sub__(self, o): return self._binary(o, "arith.subi", "arith.subf")
    def __rsub__(self, o): return self._binary(o, "arith.subi", "arith.subf", True)
    def __mul__(self, o): return self._binary(o, "arith.muli", "arith.mulf")
    def __rmul__(self, o): return self._binary(o, "arith.muli", "arith.mulf", True)
    def __floordiv__(self, o): return self._binary(o, "arith.floordivsi", None)
    def __rfloordiv__(self, o): return self._binary(o, "arith.floordivsi", None, True)
    def __mod__(self, o): return self._binary(o, "arith.remsi", None)
    def __rmod__(self, o): return self._binary(o, "arith.remsi", None, True)

    def __truediv__(self, o):
        return self._to("f32")._binary(o, None, "arith.divf")

    def __rtruediv__(self, o):
        return self._to("f32")._binary(o, None, "arith.divf", True)

    def __neg__(self):
        return 0 - self if self.type in _INT_TYPES else self._binary(-1.0, None, "arith.mulf")

    def __abs__(self):
        op = "math.absf" if self.type in _FLOAT_TYPES else "math.absi"
        return self.region.emit(f"{op} {self.name} : {self.type}", self.type)

    # -- comparisons and logic --------------------------------------------- #

    def _compare(self, other, pred):
        a, b = self._lift(other)
        if a.type in _FLOAT_TYPES:
            fpred = {"slt": "olt", "sle": "ole", "sgt": "ogt", "sge": "oge",
                     "eq": "oeq", "ne": "une"}[pred]
            return self.region.emit(f"arith.cmpf {fpred}, {a.name}, {b.name} : {a.type}", "i1")
        return self.region.emit(f"arith.cmpi {pred}, {a.name}, {b.name} : {a.type}", "i1")

    def __lt__(self, o): return self._compare(o, "slt")
    def __le__(self, o): return self._compare(o, "sle")
    def __gt__(self, o): return self._compare(o, "sgt")
    def __ge__(self, o): return self._compare(o, "sge")
    def __eq__(self, o): return self._compare(o, "eq")
    def __ne__(self, o): return self._compare(o, "ne")
    __hash__ = object.__hash__

    def _logic(self, other, op):
        a, b = self._lift(other)
        if a.type != "i1" or b.type != "i1":
            raise TraceError("& | ^ combine conditions (comparisons), not numbers")
        return self.region.emit(f"{op} {a.name}, {b.name} : i1", "i1")

    def __and__(self, o): return self._logic(o, "arith.andi")
    def __rand__(self, o): return self._logic(o, "arith.andi")
    def __or__(self, o): return self._logic(o, "arith.ori")
    def __ror__(self, o): return self._logic(o, "arith.ori")
    def __xor__(self, o): return self._logic(o, "arith.xori")

    def __invert__(self):
        return self._logic(True, "arith.xori")

    def __bool__(self):
        raise TraceError("a traced value has no truth value while tracing: use "
                         "& | ~ instead of and/or/not, and where() instead of if")

    def __index__(self):
        raise TraceError("a traced index cannot index a Python sequence; index "
                         "a NumPy array or torch tensor captured by the modifier")


def _unary(name):
    def op(x):
        x = x._to("f32")
        return x.region.emit(f"math.{name} {x.name} : f32", "f32")
    op.__name__ = name
    op.__doc__ = f"math.{name} of a traced f32 value"
    return op


tanh, exp, exp2, log, log2, log1p, sqrt, rsqrt, erf, sin, cos = (
    _unary(n) for n in ("tanh", "exp", "exp2", "log", "log2", "log1p", "sqrt", "rsqrt", "erf",
                        "sin", "cos"))


def sigmoid(x):
    """1 / (1 + exp(-x)) of a traced f32 value (vectorised through exp's
    polynomial, differentiable like its pieces)."""
    return 1.0 / (1.0 + exp(-x))


def where(condition, a, b):
    """arith.select: `a` where `condition` holds, else `b`."""
    if not isinstance(condition, Value) or condition.type != "i1":
        raise TraceError("where() takes a traced condition")
    if not isinstance(a, Value):
        a, b = b, a
        condition = ~condition
    x, y = a._lift(b)
    return condition.region.emit(f"arith.select {condition.name}, {x.name}, {y.name} : {x.type}", x.type)


def minimum(a, b):
    x, y = a._lift(b)
    op = "arith.minimumf" if x.type in _FLOAT_TYPES else "arith.minsi"
    return x.region.emit(f"{op} {x.name}, {y.name} : {x.type}", x.type)


def maximum(a, b):
    x, y = a._lift(b)
    op = "arith.maximumf" if x.type in _FLOAT_TYPES else "arith.maxsi"
    return x.region.emit(f"{op} {x.name}, {y.name} : {x.type}", x.type)


class _Captured:
    """An array read by a modifier: indexing it with traced values emits a
    tensor.extract from the function argument that carries it."""

    def __init__(self, tracer, array, arg, shape=None, elem=None):
        self.tracer, self.array, self.arg = tracer, array, arg
        self.shape = _arrays.shape(array) if shape is None else tuple(shape)
        self.elem = _arrays.element(array) if elem is None else elem

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        if len(idx) != len(self.shape):
            raise TraceError(f"a captured array of shape {list(self.shape)} takes "
                             f"{len(self.shape)} indices, got {len(idx)}")
        region = self.tracer.region
        names = []
        for i in idx:
            if isinstance(i, Value):
                names.append(i._to("index").name)
            else:
                names.append(region.constant(int(i), "index").name)
        # The parameter's type is static or shape-generic as the build is.
        ttype = _ir.parameter_type_slot(self.arg)
        return region.emit(f"tensor.extract %{self.arg}[{', '.join(names)}] : {ttype}", self.elem)


class _Tracer:
    """Records the modifiers of one call and the arrays they capture."""

    def __init__(self):
        self.captures = []  # (arg name, array)
        self.region = None

    def wrap(self, x):
        if isinstance(x, np.ndarray) or _arrays.is_torch(x):
            for name, array in self.captures:
                if array is x:
                    return _Captured(self, x, name)
            name = f"cap{len(self.captures)}"
            self.captures.append((name, x))
            return _Captured(self, x, name)
        return x

    def local(self, name, shape, elem):
        """A tensor `%name` that the function computes before the op (not
        a parameter: varlen_attention's sequence lengths), for a modifier
        to index like a captured array; its type goes in
        bind_parameter_types' slot for `name`."""
        return _Captured(self, None, name, shape, elem)

    def rebind(self, fn):
        """`fn` with the arrays in its closure and globals replaced by
        captured wrappers."""
        if not isinstance(fn, types.FunctionType):
            return fn
        closure = None
        if fn.__closure__:
            closure = tuple(types.CellType(self.wrap(c.cell_contents))
                            if _has_contents(c) else c for c in fn.__closure__)
        env = dict(fn.__globals__)
        for name in fn.__code__.co_names:
            if name in env:
                env[name] = self.wrap(env[name])
        return types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, closure)

    def trace(self, fn, prefix, args, result_type):
        self.region = _Region(prefix)
        params = [Value(self.region, f"%{prefix}_{n}", t) for n, t in args]
        out = self.rebind(fn)(*params)
        if not isinstance(out, Value):
            if result_type == "i1" and isinstance(out, (bool, np.bool_)):
                out = self.region.constant(bool(out), "i1")
            elif result_type == "f32" and isinstance(out, (int, float, np.number)):
                out = self.region.constant(float(out), "f32")
            else:
                raise TraceError(f"the modifier must return a traced {result_type} value, "
                                 f"got {type(out).__name__}")
        if result_type == "i1" and out.type != "i1":
            raise TraceError(f"mask_mod must return a condition (i1), got {out.type}")
        if result_type == "f32":
            out = out._to("f32")
        header = "^bb0(" + ", ".join(f"%{prefix}_{n}: {t}" for n, t in args) + "):"
        body = [header] + ["  " + l for l in self.region.lines] + \
               [f"  attn.yield {out.name} : {result_type}"]
        return "{\n" + "\n".join("       " + l for l in body) + "\n     }"


def _has_contents(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


_INDEX_ARGS = [("b", "index"), ("h", "index"), ("q_idx", "index"), ("kv_idx", "index")]
