# ===- attn_mlir/integrations/torch_sdpa.py - F.sdpa routed to attn_mlir -=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

from .. import _arrays
from ..functional import scaled_dot_product_attention

# The element types the compiled attention takes (_plan._FLOATS).
_FLOATS = ("f32", "f16", "bf16", "f64")
# torch.nn.functional.scaled_dot_product_attention's parameters, in order.
_SDPA_PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal",
                    "scale", "enable_gqa")


def _runs_here(query, key, value, attn_mask):
    """Whether attn_mlir computes this call: CPU tensors of a float type
    it compiles (masks bool or of the query's type)."""
    tensors = [x for x in (query, key, value, attn_mask) if x is not None]
    if not all(_arrays.is_torch(x) and x.device.type == "cpu" for x in tensors):
        return False
    return _arrays.element(query) in _FLOATS


def _mode_class():
    import torch

    class SdpaMode(torch.overrides.TorchFunctionMode):
        """Routes torch.nn.functional.scaled_dot_product_attention to
        attn_mlir.scaled_dot_product_attention while active."""

        def __init__(self, strict):
            super().__init__()
            self.strict = strict
            self.calls = 0  # computed by attn_mlir
            self.passed_on = 0  # left to torch (see `strict`)

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is not torch.nn.functional.scaled_dot_product_attention:
                return func(*args, **kwargs)
            bound = dict(zip(_SDPA_PARAMETERS, args), **kwargs)
            if _runs_here(bound.get("query"), bound.get("key"), bound.get("value"),
                          bound.get("attn_mask")):
                self.calls += 1
                return scaled_dot_product_attention(**bound)
            if self.strict:
                raise TypeError(
                    "attn_mlir.sdpa_mode(strict=True): this scaled_dot_product_attention "
                    "call has tensors attn_mlir does not compute (it takes CPU tensors of "
                    f"float32, float16, bfloat16 or float64; got query {bound.get('query').dtype} "
                    f"on {bound.get('query').device})")
            self.passed_on += 1
            return func(*args, **kwargs)

    return SdpaMode


_MODE = None


def sdpa_mode(strict=False):
    """A context manager (a torch TorchFunctionMode) under which every call
    of torch.nn.functional.scaled_dot_product_attention is
    attn_mlir.scaled_dot_product_attention: one line puts the compiled
    attention into any torch model,

        with attn_mlir.sdpa_mode():
            logits = model(tokens)

    Calls attn_mlir does not compute (tensors on another device, integer
    types) go to torch, counted in the mode's `passed_on`; with
    `strict=True` they raise TypeError instead. `calls` counts the calls
    attn_mlir computed. attn_mlir's semantics apply (a row with no visible
    key gives 0, not NaN; dropout draws from attn-mlir's generator)."""
    global _MODE
    if _MODE is None:
        _MODE = _mode_class()
    return _MODE(strict)
