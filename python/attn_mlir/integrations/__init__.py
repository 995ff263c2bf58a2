# ===- attn_mlir/integrations/__init__.py - attn_mlir inside other frameworks === #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Ways to put the compiled attention inside code written for something
# else: `sdpa_mode` (any torch model calling
# torch.nn.functional.scaled_dot_product_attention) and `transformers`
# (Hugging Face transformers' attention interface; imported on demand, it
# imports transformers).
#
# ===----------------------------------------------------------------------=== #

from .torch_sdpa import sdpa_mode

__all__ = ["sdpa_mode"]
