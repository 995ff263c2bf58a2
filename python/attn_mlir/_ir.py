# ===- attn_mlir/_ir.py - text of attn-dialect functions -------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #


def tensor_type(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{elem}>"


def float_literal(x):
    """A float attribute MLIR parses back to the same double."""
    return repr(float(x)) if float(x) == float(x) else "0x7FF8000000000000"


def function(name, args, results, body):
    """func.func @name(args) -> results { body; return }: `args` are (name,
    type) pairs, `results` (value, type) pairs."""
    signature = ", ".join(f"%{n}: {t}" for n, t in args)
    types = ", ".join(t for _, t in results)
    values = ", ".join(v for v, _ in results)
    lines = [f"func.func @{name}({signature}) -> ({types}) {{"]
    lines += ["  " + line for line in body]
    lines.append(f"  return {values} : {types}")
    lines.append("}")
    return "\n".join(lines) + "\n"
