# ===- attn_mlir/_ir.py - text of attn-dialect functions -------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import re


def _shape_text(shape, dynamic):
    return "".join("?x" if i in dynamic else f"{d}x" for i, d in enumerate(shape))


def _view_strides(rank):
    """The strides and offset of a view (docs/CpuABI.md's row-strided
    buffers): every stride and the offset the caller's, the last 1."""
    return "strided<[" + "?, " * (rank - 1) + "1], offset: ?>"


def tensor_type(shape, elem, dynamic=()):
    """tensor<shape x elem>, the dimensions whose indices are in `dynamic`
    written as ? (sizes a shape-generic function takes at run time)."""
    return f"tensor<{_shape_text(shape, dynamic)}{elem}>"


def destination_type(shape, elem, dynamic=()):
    """The memref type of a destination parameter (docs/CpuABI.md,
    "Destinations") that takes views: the sizes as tensor_type's, the
    strides and offset of view_layout."""
    return f"memref<{_shape_text(shape, dynamic)}{elem}, {_view_strides(len(shape))}>"


def varying_dims(shape, pattern):
    """The indices of `shape` that hold a sequence length or batch size, for
    a tensor laid out as `pattern` aligned to its last dimension: a string
    of "v" (varies from call to call) and "." (fixed) per dimension, e.g.
    "v.v." for [B, H, L, E]. A dimension of size 1 where the pattern
    varies stays fixed (it broadcasts)."""
    pattern = pattern[-len(shape):] if shape else ""
    offset = len(shape) - len(pattern)
    return tuple(offset + i for i, c in enumerate(pattern)
                 if c == "v" and shape[offset + i] != 1)


def parameter_types(params, dynamic):
    """{name: tensor type} of function parameters given as (name, shape,
    element type, varying dims): the varying dims `?` when `dynamic`."""
    return {name: tensor_type(shape, elem, varying if dynamic else ())
            for name, shape, elem, varying in params}


def parameter_type_slot(name):
    """Stands for the type of parameter `%name` in a modifier region's
    text, written before the function's types are known (static or
    shape-generic): bind_parameter_types fills it in. An MLIR type alias
    that nothing defines, so a slot left unfilled is a parse error."""
    return f"!parameter_type.{name}"


def bind_parameter_types(text, types):
    """`text` with the slots of parameter_type_slot replaced by the
    parameters' types ({name: type})."""
    if "!parameter_type." not in text:
        return text
    # Whole names: the slot of %q is a prefix of %ql's, %cap1's of %cap10's.
    return _SLOT.sub(lambda slot: types.get(slot.group(1), slot.group(0)), text)


_SLOT = re.compile(r"!parameter_type\.([A-Za-z0-9_]+)")


def float_literal(x):
    """A float attribute MLIR parses back to the same double."""
    return repr(float(x)) if float(x) == float(x) else "0x7FF8000000000000"


# The layout of a parameter that takes views (the C ABI's row-strided
# buffers, docs/CpuABI.md): every stride and the offset the caller's, the
# last dimension contiguous.
def view_layout(rank):
    return "{bufferization.buffer_layout = " + _view_strides(rank) + "}"


def function(name, args, results, body, views=()):
    """func.func @name(args) -> results { body; return }: `args` are (name,
    type) pairs, `results` (value, type) pairs; the parameters named in
    `views` take strided views (view_layout)."""
    def parameter(n, t):
        if n not in views:
            return f"%{n}: {t}"
        return f"%{n}: {t} {view_layout(t.count('x'))}"
    signature = ", ".join(parameter(n, t) for n, t in args)
    types = ", ".join(t for _, t in results)
    values = ", ".join(v for v, _ in results)
    lines = [f"func.func @{name}({signature}) -> ({types}) {{"]
    lines += ["  " + line for line in body]
    lines.append(f"  return {values} : {types}" if results else "  return")
    lines.append("}")
    return "\n".join(lines) + "\n"
