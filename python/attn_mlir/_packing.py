# ===- attn_mlir/_packing.py - weights packed once into panels -------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The CPU pipeline reads a projection's weight W [N, K] (torch layout) from
# panels [N / p, K, p], p the register block's width on this machine
# (attn-pack-weights; docs/CpuABI.md "Pre-packed weights"). A module whose
# weights are parameters packs each parameter array once, here, and passes
# the panels to a function that takes them (`linalg.unpack` of an argument,
# which the compiler folds away): no call transposes or copies a weight.
#
# ===----------------------------------------------------------------------=== #

from . import _arrays, _ir, _native
from ._compile import _stats, compile

_panel = None


def panel():
    """Columns of a panel on this machine with the default pipeline (0:
    the pipeline packs nothing)."""
    global _panel
    if _panel is None:
        _panel = _native.weight_panel("")
    return _panel


def packable(shape):
    """Whether a weight [N, K] is passed as panels: N a whole number of
    panels (otherwise the compiled function reads it as it is)."""
    p = panel()
    return len(shape) == 2 and p > 0 and shape[0] % p == 0


def panels_shape(shape):
    """The shape of the panels of a weight [N, K]."""
    p = panel()
    return (shape[0] // p, shape[1], p)


def panels_type(shape, elem):
    """The type of the panels of a weight [N, K]."""
    return _ir.tensor_type(panels_shape(shape), elem)


def unpack_lines(name, shape, elem):
    """IR lines defining %name, the weight [N, K] of the panels argument
    %{name}_panels (what the compiler folds into the reading product)."""
    full = _ir.tensor_type(shape, elem)
    return [f"%{name}_unpacked = tensor.empty() : {full}",
            f"%{name} = linalg.unpack %{name}_panels inner_dims_pos = [0] "
            f"inner_tiles = [{panel()}] into %{name}_unpacked : "
            f"{panels_type(shape, elem)} -> {full}"]


def pack(weight, elem):
    """The panels of `weight` [N, K] (a NumPy array of element `elem`),
    packed by a compiled function (the `pack` entry of docs/CpuABI.md)."""
    shape = tuple(weight.shape)
    full, packed = _ir.tensor_type(shape, elem), panels_type(shape, elem)
    source = _ir.function("pack", [("w", full)], [("%p", packed)], [
        f"%e = tensor.empty() : {packed}",
        f"%p = linalg.pack %w inner_dims_pos = [0] inner_tiles = [{panel()}] "
        f"into %e : {full} -> {packed}"])
    _stats["weight_packs"] += 1
    # In the form compiled calls take (bf16 as its bit patterns).
    return _arrays.as_array(compile(source)(weight), "panels")
