# ===- attn_mlir/flex.py - FlexAttention-style modifiers, traced to IR -----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# `flex_attention(q, k, v, score_mod=..., mask_mod=...)`: the modifiers are
# traced (_trace) into the attn.sdpa `score_mod` / `mask_mod` regions, the
# arrays they capture become arguments of the compiled function. The math
# functions a modifier calls on traced values (`flex.tanh`, `flex.exp`,
# `flex.where`, ...) are _trace's.
#
# Affine comparisons of q_idx and kv_idx (causal, sliding windows,
# prefix-LM) are what `--attn-sparsify` turns into static tile bounds; the
# rest (document ids, 2-D windows with // and %) get run-time block classes.
#
# ===----------------------------------------------------------------------=== #

from . import _arrays, _autograd, _plan
from ._trace import (_INDEX_ARGS, TraceError, Value, _Tracer, cos, erf, exp, exp2, log, log1p,  # noqa: F401
                     log2, maximum, minimum, rsqrt, sigmoid, sin, sqrt, tanh,
                     where)


def flex_attention(query, key, value, score_mod=None, mask_mod=None, scale=None,
                   enable_gqa=False, target="cpu", dynamic=None, out=None,
                   return_lse=False):
    """FlexAttention with the modifiers traced into the compiled kernel.

    query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev).
    `score_mod(score, b, h, q_idx, kv_idx) -> score` rewrites each score
    (after scaling); `mask_mod(b, h, q_idx, kv_idx) -> bool` keeps the key
    where it is true. A row with no visible key gives 0. `dynamic`: as in
    scaled_dot_product_attention, for the arrays the modifiers capture too
    (a decode step's mask that grows by one key per token compiles twice,
    not once per length). Differentiable like scaled_dot_product_attention, through
    score_mod by the chain rule; tensors the modifiers capture get no
    gradient. `out`: as scaled_dot_product_attention's (written in place,
    not under autograd; it must overlap no captured array either).
    `return_lse=True` returns (output, lse) as torch's flex_attention does:
    lse (B, Hq, L) the rows' log-sum-exp (natural log) of the modified
    scores over the keys mask_mod keeps (-inf for a row with none), float32,
    no gradient.
    """
    grad = _arrays.is_torch(query) and _autograd.wanted(query, key, value, None)
    if out is not None:
        _plan.check_out_options(out, grad, target)
    call = _plan.prepare(query, key, value, None, 0.0, False, scale, enable_gqa, None,
                         "top_left", require_rank4=True)
    tracer = _Tracer()
    regions = ""
    if score_mod is not None:
        regions += " score_mod " + tracer.trace(score_mod, "s", [("score", "f32")] + _INDEX_ARGS, "f32")
    if mask_mod is not None:
        regions += " mask_mod " + tracer.trace(mask_mod, "m", _INDEX_ARGS, "i1")
    if grad:
        torch = _arrays._torch()
        names = [name for name, _ in tracer.captures]
        arrays = [array if _arrays.is_torch(array) else torch.as_tensor(array)
                  for _, array in tracer.captures]
        out, lse = _autograd.ops().sdpa(
            query, key, value, None, 0.0, False, None if scale is None else float(scale),
            bool(enable_gqa), None, "top_left", target, dynamic, regions, arrays,
            ",".join(names), None)
        return (out, lse) if return_lse else out
    call.add_captures(tracer.captures)
    if out is not None:
        call.set_destination(out, [("query", query), ("key", key), ("value", value)] +
                             [(f"the captured array {name}", array)
                              for name, array in tracer.captures])
    return call.run(regions, target, dynamic, lse=return_lse)
