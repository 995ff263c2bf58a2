# ===- attn_mlir/_linear.py - linear layers, compiled -----------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# torch.nn.functional.linear and its backward as compiled contractions, so
# that a training step of attn_mlir.nn.MultiheadAttention runs its
# projections (forward and backward) in the compiled code's threads rather
# than torch's: two OpenMP runtimes taking turns on the same cores cost each
# other their spinning threads at every handover. The contractions are
# linalg.matmul with the weight in torch's [N, K] layout (attn-pack-weights
# reads it as panels) and the left operand of the weight gradient dY^T read
# K-major (attn-pack-weights transposes it per row block).
#
# ===----------------------------------------------------------------------=== #

import math

from . import _arrays, _ir
from ._compile import compile_shaped

# Element types the compiled linear takes (f64: torch.autograd.gradcheck).
ELEMENTS = ("f32", "f64")

_MAP_XW = ("affine_map<(m, n, k) -> (m, k)>", "affine_map<(m, n, k) -> (n, k)>",
           "affine_map<(m, n, k) -> (m, n)>")
_MAP_DX = ("affine_map<(m, k, n) -> (m, n)>", "affine_map<(m, k, n) -> (n, k)>",
           "affine_map<(m, k, n) -> (m, k)>")
_MAP_DW = ("affine_map<(n, k, m) -> (m, n)>", "affine_map<(n, k, m) -> (m, k)>",
           "affine_map<(n, k, m) -> (n, k)>")


def check(input, weight, bias):
    """PyTorch's checks of F.linear's arguments, with the numbers; returns
    (M, K, N, element) with M the product of input's leading dimensions."""
    xs, ws = _arrays.shape(input), _arrays.shape(weight)
    if len(xs) < 1 or len(ws) != 2:
        raise ValueError(f"linear: input must have at least 1 dimension and weight 2 "
                         f"(out_features, in_features), got shapes {list(xs)} and {list(ws)}")
    if xs[-1] != ws[1]:
        raise ValueError(f"linear: input's last dimension ({xs[-1]}) must equal "
                         f"weight's in_features ({ws[1]})")
    elem = _arrays.element(input)
    if elem not in ELEMENTS:
        raise TypeError(f"linear: input must be float32 or float64, got {elem}")
    others = [("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    for name, x in others:
        if _arrays.element(x) != elem:
            raise TypeError(f"linear: {name} is {_arrays.element(x)}, input is {elem}")
    if bias is not None and _arrays.shape(bias) != (ws[0],):
        raise ValueError(f"linear: bias must have shape [{ws[0]}] (out_features), got "
                         f"{list(_arrays.shape(bias))}")
    return math.prod(xs[:-1]), ws[1], ws[0], elem


def _product(name, maps, left, right, init, types, result_type):
    """`%name = linalg.matmul` of `left` and `right` into `init` through
    `maps` (one line)."""
    return (f"%{name} = linalg.matmul indexing_maps = [{', '.join(maps)}] "
            f"ins(%{left}, %{right} : {types[left]}, {types[right]}) "
            f"outs(%{init} : {result_type}) -> {result_type}")


def _empty_rows(name, rows, cols, elem, like, types, dynamic, body):
    """Appends `%name = tensor.empty` of [rows, cols] to `body`, with
    `dynamic` its rows read from parameter `%like`'s first dimension;
    returns its type."""
    type = _ir.tensor_type((rows, cols), elem, (0,) if dynamic else ())
    if dynamic:
        body += [f"%{name}_c0 = arith.constant 0 : index",
                 f"%{name}_m = tensor.dim %{like}, %{name}_c0 : {types[like]}",
                 f"%{name} = tensor.empty(%{name}_m) : {type}"]
    else:
        body.append(f"%{name} = tensor.empty() : {type}")
    return type


def _forward_source(M, K, N, elem, bias, dynamic):
    args = [("x", (M, K), elem, (0,)), ("w", (N, K), elem, ())]
    if bias:
        args.append(("b", (N,), elem, ()))
    types = _ir.parameter_types(args, dynamic)
    body = []
    y = _empty_rows("e", M, N, elem, "x", types, dynamic, body)
    if bias:
        body.append(f"%init = linalg.broadcast ins(%b : {types['b']}) outs(%e : {y}) "
                    f"dimensions = [0]")
    else:
        body += [f"%zero = arith.constant 0.0 : {elem}",
                 f"%init = linalg.fill ins(%zero : {elem}) outs(%e : {y}) -> {y}"]
    body.append(_product("y", _MAP_XW, "x", "w", "init", types, y))
    return _ir.function("linear", [(n, types[n]) for n, *_ in args], [("%y", y)], body)


def _backward_source(M, K, N, elem, needs, dynamic):
    """dX = dY W, dW = dY^T X, db = column sums of dY: those `needs` asks
    for (a (dx, dw, db) triple of bools)."""
    args = [("dy", (M, N), elem, (0,)), ("x", (M, K), elem, (0,)), ("w", (N, K), elem, ())]
    types = _ir.parameter_types(args, dynamic)
    body = [f"%zero = arith.constant 0.0 : {elem}"]
    results = []
    if needs[0]:
        dx = _empty_rows("ex", M, K, elem, "dy", types, dynamic, body)
        body += [f"%fx = linalg.fill ins(%zero : {elem}) outs(%ex : {dx}) -> {dx}",
                 _product("dx", _MAP_DX, "dy", "w", "fx", types, dx)]
        results.append(("%dx", dx))
    if needs[1]:
        dw = types["w"]
        body += [f"%ew = tensor.empty() : {dw}",
                 f"%fw = linalg.fill ins(%zero : {elem}) outs(%ew : {dw}) -> {dw}",
                 _product("dw", _MAP_DW, "dy", "x", "fw", types, dw)]
        results.append(("%dw", dw))
    if needs[2]:
        db = _ir.tensor_type((N,), elem)
        body += [f"%eb = tensor.empty() : {db}",
                 f"%fb = linalg.fill ins(%zero : {elem}) outs(%eb : {db}) -> {db}",
                 f"%db = linalg.reduce ins(%dy : {types['dy']}) outs(%fb : {db}) "
                 f"dimensions = [0]",
                 f"  (%a: {elem}, %acc: {elem}) {{",
                 f"    %s = arith.addf %a, %acc : {elem}",
                 f"    linalg.yield %s : {elem}",
                 "  }"]
        results.append(("%db", db))
    return _ir.function("linear_grad", [(n, types[n]) for n, *_ in args], results, body)


def _rows(x, M, K):
    return _arrays.reshape(_arrays.as_array(x, "input"), (M, K))


def forward(input, weight, bias, target="cpu", dynamic=None):
    """input @ weight^T + bias, compiled (shapes as F.linear's)."""
    M, K, N, elem = check(input, weight, bias)
    inputs = [_rows(input, M, K), _arrays.as_array(weight, "weight")]
    if bias is not None:
        inputs.append(_arrays.as_array(bias, "bias"))
    function = compile_shaped(
        lambda d: _forward_source(M, K, N, elem, bias is not None, d), dynamic, target,
        key=("linear", M, K, N, elem, bias is not None))
    y = function.run_arrays(inputs, input if _arrays.is_torch(input) else None)
    return _arrays.reshape(y, _arrays.shape(input)[:-1] + (N,))


def backward(grad, input, weight, needs, target="cpu", dynamic=None):
    """The gradients of forward's (input, weight, bias) that `needs` asks
    for, in that order (input's shaped as input)."""
    M, K, N, elem = check(input, weight, None)
    function = compile_shaped(
        lambda d: _backward_source(M, K, N, elem, needs, d), dynamic, target,
        key=("linear_grad", M, K, N, elem, tuple(needs)))
    like = input if _arrays.is_torch(input) else None
    results = function.run_arrays(
        [_rows(grad, M, N), _rows(input, M, K), _arrays.as_array(weight, "weight")], like)
    results = list(results) if isinstance(results, tuple) else [results]
    if needs[0]:
        results[0] = _arrays.reshape(results[0], _arrays.shape(input))
    return results
