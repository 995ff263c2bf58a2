# ===- attn_mlir/integrations/transformers.py - Hugging Face transformers -=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# attn_mlir as an attention implementation of Hugging Face transformers:
#
#     import attn_mlir.integrations.transformers
#     model = AutoModelForCausalLM.from_config(cfg, attn_implementation="attn_mlir")
#
# Importing this module registers two functions under the name "attn_mlir":
# the attention itself with transformers' AttentionInterface and its mask
# builder with AttentionMaskInterface. Both are needed: a model whose
# implementation has no registered mask builder is handed the raw 2-D
# padding mask (or none), which an attention function cannot tell from
# "no mask".
#
# Structure travels as the kernel's attributes, not as a dense mask: a mask
# that is exactly the causal triangle (with the layer's sliding window, if
# any) is dropped by the mask builder and the attention runs with `causal`
# and `window`; padding, static-cache tails and any other pattern travel as
# transformers' boolean mask. Grouped-query attention reads the key/value
# heads as they are (no repeat), softcap (Gemma 2) is the kernel's
# score_mod, dropout its counter-based dropout, and gradients flow through
# the compiled backward.
#
# ===----------------------------------------------------------------------=== #

import inspect

import torch
from transformers import AttentionInterface
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from ..functional import scaled_dot_product_attention

NAME = "attn_mlir"

_SDPA_MASK_SIGNATURE = inspect.signature(sdpa_mask)


def _causal(q_length, kv_length, window, device):
    """The top-left causal triangle [q_length, kv_length] (True takes part),
    limited to `window` keys (the query's own included) when not None: what
    attention_forward computes for a mask the builder dropped."""
    q = torch.arange(q_length, device=device)[:, None]
    kv = torch.arange(kv_length, device=device)[None, :]
    keep = kv <= q
    if window is not None:
        keep &= kv > q - window
    return keep


def attention_mask(*args, **kwargs):
    """transformers' mask builder for "attn_mlir" (the signature of
    masking_utils.sdpa_mask, which builds the mask): None where the
    attention needs none, or a boolean [B, 1, L, S] mask (True takes part).

    Beyond sdpa_mask's own cases (no padding, one query or as many queries
    as keys), a mask that equals the causal triangle, with the sliding
    window `local_size` where the layer has one, is dropped too: the
    attention then runs with `causal` (and `window`) and skips the tiles
    above the diagonal instead of reading a dense mask."""
    mask = sdpa_mask(*args, **kwargs)
    if mask is None or mask.dtype != torch.bool:
        return mask
    call = _SDPA_MASK_SIGNATURE.bind(*args, **kwargs)
    call.apply_defaults()
    q_length, kv_length = mask.shape[-2], mask.shape[-1]
    # One query is not causal in attention_forward (as in transformers'
    # sdpa): it sees every key, a dense mask says otherwise.
    if not call.arguments["allow_is_causal_skip"] or q_length == 1:
        return mask
    expected = _causal(q_length, kv_length, call.arguments["local_size"], mask.device)
    if torch.equal(mask, expected.expand(mask.shape)):
        return None
    return mask


def attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
                      is_causal=None, sliding_window=None, softcap=None, position_bias=None,
                      **kwargs):
    """transformers' attention function for "attn_mlir": query
    [B, Hq, L, D], key and value [B, Hkv, S, D] -> ([B, L, Hq, D], None).

    `attention_mask` as attention_mask() builds it: None means the layer's
    own causality (`is_causal`, else the module's) for more than one query,
    with `sliding_window` keys at most; a tensor is the whole pattern."""
    if kwargs.get("s_aux") is not None:
        raise NotImplementedError(
            f"attn_mlir attention has no attention sinks (s_aux, {type(module).__name__})")
    if query.device.type != "cpu":
        raise NotImplementedError(
            f"the attn_mlir attention implementation runs on CPU tensors; "
            f"{type(module).__name__} gave it {query.device} ones")
    q_length = query.shape[2]
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    causal = bool(q_length > 1 and attention_mask is None and causal)
    window = None
    if causal and sliding_window is not None:
        window = (int(sliding_window) - 1, 0)
    if causal and key.shape[2] > q_length:
        # A static cache's first fill: the keys past the queries are its
        # empty tail, which the top-left triangle leaves out anyway.
        key, value = key[:, :, :q_length], value[:, :, :q_length]
    if position_bias is not None:
        # T5-style relative position biases: a float mask, built as
        # transformers' sdpa builds it.
        from transformers.integrations.sdpa_attention import create_position_bias_mask

        attention_mask = create_position_bias_mask(position_bias, attention_mask, causal,
                                                   query, key)
        causal = False
    options = dict(attn_mask=attention_mask, dropout_p=dropout, is_causal=causal,
                   scale=scaling, enable_gqa=query.shape[1] != key.shape[1], window=window,
                   softcap=softcap)
    if torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value)):
        out = scaled_dot_product_attention(query, key, value, **options)
        return out.transpose(1, 2).contiguous(), None
    # Without autograd the kernel writes the [B, L, Hq, Dv] result the
    # model wants through its [B, Hq, L, Dv] view: no transpose copy.
    B, Hq, L = query.shape[:3]
    out = torch.empty(B, L, Hq, value.shape[-1], dtype=query.dtype)
    scaled_dot_product_attention(query, key, value, out=out.transpose(1, 2), **options)
    return out, None


def register():
    """Registers "attn_mlir" with transformers' attention and mask
    interfaces (done on import; calling it again changes nothing)."""
    AttentionInterface.register(NAME, attention_forward)
    AttentionMaskInterface.register(NAME, attention_mask)


register()
