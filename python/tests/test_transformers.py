# ===- test_transformers.py - attn_mlir inside Hugging Face transformers ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Small random-init models of each attention family transformers has
# (encoder, decoder with GQA, sliding window, softcap, vision, cross
# attention), built from configs, run with attn_implementation="attn_mlir"
# against the same weights with transformers' eager attention: outputs,
# greedy generate() and parameter gradients; and which structure reaches
# the kernel (no dense mask where the pattern is causal).
#
# ===----------------------------------------------------------------------=== #

import copy

import numpy as np
import pytest

from conftest import require

torch = require("torch")
transformers = require("transformers")

import attn_mlir
import attn_mlir.integrations.transformers as integration

VOCAB = 97
# Two layers, four heads of 16: enough for every code path, small enough
# to compile few kernels.
TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96,
            vocab_size=VOCAB, max_position_embeddings=128)


def _configs():
    T = transformers
    decoders = {
        "gpt2": T.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=128,
                             bos_token_id=0, eos_token_id=0),
        "llama": T.LlamaConfig(**TEXT, num_key_value_heads=2),  # GQA 4 -> 2
        "mistral": T.MistralConfig(**TEXT, num_key_value_heads=2, sliding_window=6),
        "gemma2": T.Gemma2Config(**TEXT, num_key_value_heads=2, head_dim=16, sliding_window=6,
                                 attn_logit_softcapping=5.0),
    }
    return decoders


DECODERS = _configs()


def _pair(cls, config, **kwargs):
    """The same random weights with eager attention and with attn_mlir's
    (a config each: from_config records the implementation in it)."""
    models = []
    for implementation in ("eager", "attn_mlir"):
        torch.manual_seed(0)
        models.append(cls.from_config(copy.deepcopy(config), attn_implementation=implementation,
                                      **kwargs).eval())
    return models


def _tokens(batch, length, seed=1):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, VOCAB, (batch, length), generator=generator)
    # Row 1 left-padded by 5 (what generate() on a batch does), the rest whole.
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[1:, :5] = 0
    return ids, mask


class _Spy:
    """Records what reaches the registered attention function."""

    def __init__(self, monkeypatch):
        self.calls = []
        original = integration.attention_forward

        def spy(module, query, key, value, attention_mask, **kwargs):
            self.calls.append((attention_mask, kwargs.get("sliding_window"),
                               query.shape[2], key.shape[2]))
            return original(module, query, key, value, attention_mask, **kwargs)

        monkeypatch.setitem(transformers.AttentionInterface._global_mapping, "attn_mlir", spy)


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoder_logits_match_eager(name):
    eager, ours = _pair(transformers.AutoModelForCausalLM, DECODERS[name])
    ids, mask = _tokens(2, 24)
    with torch.no_grad():
        for attention_mask in (None, mask):
            want = eager(input_ids=ids, attention_mask=attention_mask).logits
            got = ours(input_ids=ids, attention_mask=attention_mask).logits
            # Padded positions' rows are the models' own business (eager
            # gives them a uniform softmax, attn_mlir zeros): the tokens.
            keep = torch.ones_like(want, dtype=torch.bool) if attention_mask is None else \
                attention_mask.bool()[..., None].expand_as(want)
            np.testing.assert_allclose(got[keep].numpy(), want[keep].numpy(), rtol=1e-5,
                                       atol=2e-6, err_msg=f"{name}, mask {attention_mask is not None}")


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoder_generate_matches_eager(name):
    eager, ours = _pair(transformers.AutoModelForCausalLM, DECODERS[name])
    ids, mask = _tokens(2, 9, seed=2)
    settings = dict(max_new_tokens=12, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        # One sequence (decode without a mask) and a left-padded batch.
        for inputs in (dict(input_ids=ids[:1]), dict(input_ids=ids, attention_mask=mask)):
            want = eager.generate(**inputs, **settings)
            got = ours.generate(**inputs, **settings)
            assert torch.equal(got, want), f"{name}: {got.tolist()} != {want.tolist()}"


def test_static_cache_generate_matches_eager():
    eager, ours = _pair(transformers.AutoModelForCausalLM, DECODERS["llama"])
    ids, _ = _tokens(1, 7, seed=3)
    settings = dict(max_new_tokens=8, do_sample=False, cache_implementation="static",
                    pad_token_id=0)
    with torch.no_grad():
        assert torch.equal(ours.generate(ids, **settings), eager.generate(ids, **settings))


@pytest.mark.parametrize("name", ["llama", "gemma2"])
def test_gradients_match_eager(name):
    eager, ours = _pair(transformers.AutoModelForCausalLM, DECODERS[name])
    ids, mask = _tokens(2, 16, seed=4)
    # A loss of the tokens' logits only: padded positions' rows see no key,
    # which eager and attn_mlir answer differently (see the logits test).
    keep = mask.bool()
    weights = torch.randn(2, 16, VOCAB, generator=torch.Generator().manual_seed(5))
    grads = []
    for model in (eager, ours):
        model.zero_grad()
        logits = model(input_ids=ids, attention_mask=mask).logits
        (logits[keep] * weights[keep]).sum().backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys() and grads[0]
    for n, want in grads[0].items():
        scale = max(want.abs().max().item(), 1e-6)
        err = (grads[1][n] - want).abs().max().item() / scale
        assert err < 1e-4, f"{name} {n}: gradient off by {err:.2e} of its largest entry"


def test_dropout_in_training_mode_runs_and_differs_per_call():
    config = copy.deepcopy(DECODERS["llama"])
    config.attention_dropout = 0.5
    _, ours = _pair(transformers.AutoModelForCausalLM, config)
    ours.train()
    ids, _ = _tokens(1, 12, seed=5)
    first, second = ours(input_ids=ids).logits, ours(input_ids=ids).logits
    assert torch.isfinite(first).all()
    assert not torch.equal(first, second)


def test_structure_reaches_the_kernel_without_a_dense_mask(monkeypatch):
    spy = _Spy(monkeypatch)
    _, ours = _pair(transformers.AutoModelForCausalLM, DECODERS["mistral"])
    ids, mask = _tokens(2, 20, seed=6)
    with torch.no_grad():
        ours(input_ids=ids)
    # Causal with the sliding window (6 keys): attributes, no mask.
    assert spy.calls and all(m is None and w == 6 for m, w, _, _ in spy.calls), spy.calls
    spy.calls.clear()
    with torch.no_grad():
        ours(input_ids=ids, attention_mask=mask)
    # Padding: the boolean mask, the window inside it.
    assert all(m is not None and m.dtype == torch.bool for m, *_ in spy.calls)


def test_mask_builder_keeps_what_is_not_the_causal_triangle():
    causal = integration.attention_mask(batch_size=1, q_length=5, kv_length=5,
                                        allow_is_causal_skip=True)
    assert causal is None
    # A static cache's later chunk: the triangle is not top-left, the mask stays.
    chunk = integration.attention_mask(batch_size=1, q_length=3, kv_length=8, q_offset=4,
                                       allow_is_causal_skip=True)
    assert chunk is not None and chunk[0, 0].tolist() == [
        [k <= q + 4 for k in range(8)] for q in range(3)]
    # Without the skip the caller asked for a dense mask: it gets one.
    dense = integration.attention_mask(batch_size=1, q_length=5, kv_length=5,
                                       allow_is_causal_skip=False)
    assert dense is not None and dense.dtype == torch.bool


def test_encoder_and_vision_models_match_eager():
    T = transformers
    bert = T.BertConfig(**TEXT)
    eager, ours = _pair(T.AutoModel, bert)
    ids, mask = _tokens(2, 19, seed=7)
    with torch.no_grad():
        want = eager(input_ids=ids, attention_mask=mask).last_hidden_state
        got = ours(input_ids=ids, attention_mask=mask).last_hidden_state
    keep = mask.bool()
    np.testing.assert_allclose(got[keep].numpy(), want[keep].numpy(), rtol=1e-5, atol=2e-6)

    vit = T.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=96, image_size=32, patch_size=8)
    eager, ours = _pair(T.AutoModel, vit)
    pixels = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        np.testing.assert_allclose(ours(pixel_values=pixels).last_hidden_state.numpy(),
                                   eager(pixel_values=pixels).last_hidden_state.numpy(),
                                   rtol=1e-5, atol=2e-6)


def test_cross_attention_model_matches_eager():
    T = transformers
    whisper = T.WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=4, decoder_attention_heads=4, d_model=64,
                              encoder_ffn_dim=96, decoder_ffn_dim=96, max_source_positions=20,
                              max_target_positions=32, pad_token_id=0, bos_token_id=1,
                              eos_token_id=2, decoder_start_token_id=1)
    eager, ours = _pair(T.AutoModelForSpeechSeq2Seq, whisper)
    features = torch.randn(1, 16, 40, generator=torch.Generator().manual_seed(9))
    ids, _ = _tokens(1, 6, seed=10)
    with torch.no_grad():
        want = eager(input_features=features, decoder_input_ids=ids).logits
        got = ours(input_features=features, decoder_input_ids=ids).logits
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=2e-6)


def test_bf16_forward_is_close_to_eager():
    eager, ours = _pair(transformers.AutoModelForCausalLM, DECODERS["llama"],
                        dtype=torch.bfloat16)
    ids, _ = _tokens(1, 16, seed=11)
    with torch.no_grad():
        want = eager(input_ids=ids).logits.float()
        got = ours(input_ids=ids).logits.float()
    # bf16 keeps 8 bits: the two attentions round differently.
    assert (got - want).abs().max().item() < 0.05 * want.abs().max().item()


def test_one_compile_per_shape_class_after_warm_up():
    _, ours = _pair(transformers.AutoModelForCausalLM, DECODERS["llama"])
    with torch.no_grad():
        for length in (10, 14):  # warm-up: static, then shape-generic
            ours(input_ids=_tokens(1, length)[0])
        before = attn_mlir.stats()["compiles"]
        for length in (11, 17, 23):
            ours(input_ids=_tokens(1, length)[0])
        assert attn_mlir.stats()["compiles"] == before


def test_layers_with_different_scales_share_one_compile():
    # GPT-2 scales layer i's scores by 1 / (sqrt(D) (i + 1)): a run-time
    # scale operand, so the 4 layers compile one function (per shape class),
    # not one each, and generate() compiles nothing once warm.
    config = transformers.GPT2Config(n_embd=64, n_layer=4, n_head=4, vocab_size=VOCAB,
                                     n_positions=128, bos_token_id=0, eos_token_id=0,
                                     scale_attn_by_inverse_layer_idx=True)
    eager, ours = _pair(transformers.AutoModelForCausalLM, config)
    ids, _ = _tokens(1, 12)

    def builds():  # compiled here or loaded from the disk cache
        stats = attn_mlir.stats()
        return stats["compiles"] + stats["disk_hits"]

    with torch.no_grad():
        before = builds()
        got = ours(input_ids=ids).logits
        assert builds() - before <= 1
        np.testing.assert_allclose(got.numpy(), eager(input_ids=ids).logits.numpy(),
                                   rtol=1e-5, atol=2e-6)
        want = eager.generate(ids, max_new_tokens=8, do_sample=False)
        ours.generate(ids, max_new_tokens=8, do_sample=False)  # warm-up: decode shapes
        before = builds()
        got = ours.generate(ids, max_new_tokens=8, do_sample=False)
        assert builds() == before
    assert torch.equal(got, want)


def test_sdpa_mode_routes_torch_sdpa_calls():
    F = torch.nn.functional
    generator = torch.Generator().manual_seed(12)
    q, k, v = (torch.randn(2, 4, 9, 16, generator=generator) for _ in range(3))
    with attn_mlir.integrations.sdpa_mode() as mode:
        got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        got_kw = F.scaled_dot_product_attention(query=q, key=k, value=v, scale=0.3)
    assert mode.calls == 2 and mode.passed_on == 0
    np.testing.assert_allclose(got.numpy(), F.scaled_dot_product_attention(
        q, k, v, is_causal=True).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_kw.numpy(), F.scaled_dot_product_attention(
        q, k, v, scale=0.3).numpy(), rtol=1e-5, atol=1e-6)
    # A call it does not compute goes to torch, counted; strict refuses it.
    meta = [x.to("meta") for x in (q, k, v)]
    with attn_mlir.integrations.sdpa_mode() as mode:
        F.scaled_dot_product_attention(*meta)
    assert mode.calls == 0 and mode.passed_on == 1
    with pytest.raises(TypeError, match="strict=True.*meta"):
        with attn_mlir.integrations.sdpa_mode(strict=True):
            F.scaled_dot_product_attention(*meta)


def test_softcap_needs_a_bool_mask():
    q = torch.randn(1, 2, 4, 8)
    with pytest.raises(ValueError, match="softcap takes a bool attn_mask"):
        attn_mlir.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(4, 4), softcap=3.0)
    with pytest.raises(ValueError, match="softcap must be finite and positive, got -1"):
        attn_mlir.scaled_dot_product_attention(q, q, q, softcap=-1.0)
