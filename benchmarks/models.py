#!/usr/bin/env python3
# ===- models.py - attn_mlir as the attention of Hugging Face models -------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/models.py [--rounds 5] [--only gpt2 llama]
#                          [--tokens 24 512] [--new-tokens 32] [--hidden 256]
#                          [--layers 2] [--heads 4] [--json out.json]
#
# What a transformers user gets from attn_implementation="attn_mlir"
# (attn_mlir.integrations.transformers): random-init BERT, GPT-2, Llama
# (GQA), Mistral (sliding window), Gemma 2 (softcap, window), ViT and
# Whisper (cross-attention), built from configs (no weights are
# downloaded), f32, no_grad:
#
#   forward-N: one forward over N tokens (ViT: the patches of an image of
#              about N patches; Whisper: N decoder tokens over the
#              encoder's 1500 positions of 30 s of audio), batch 1;
#   generate:  a 32-token greedy generate() from an 8-token prompt
#              (decoders only).
#
# The peer is the same model, same weights, with transformers' "sdpa"
# (torch's F.scaled_dot_product_attention); for Gemma 2, which
# transformers runs without sdpa (no softcap there), "eager". Both models
# live in one process (torch's thread pool shared, as a user's would be),
# and the two are timed in alternation, round after round: the printed
# time is the median over rounds of a round's best of `--reps` calls, the
# ratio is peer / attn_mlir (> 1: attn_mlir is faster). After a warm-up
# (the shapes of each row run once, and every forward length twice more,
# so that the shape-generic build a second length triggers is in place),
# the compiles column counts attn_mlir compiles during the timed rounds:
# it should be 0.
#
# ===----------------------------------------------------------------------=== #

import argparse
import copy
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "build", "python_packages"))

import torch  # noqa: E402
import transformers as T  # noqa: E402

import attn_mlir  # noqa: E402
import attn_mlir.integrations.transformers  # noqa: E402,F401

VOCAB = 1000


def configs(hidden, layers, heads):
    text = dict(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                intermediate_size=4 * hidden, vocab_size=VOCAB, max_position_embeddings=2048)
    head_dim = hidden // heads
    return {
        "bert": (T.AutoModel, T.BertConfig(**text), False),
        "gpt2": (T.AutoModelForCausalLM,
                 T.GPT2Config(n_embd=hidden, n_layer=layers, n_head=heads, vocab_size=VOCAB,
                              n_positions=2048, bos_token_id=0, eos_token_id=0), True),
        "llama": (T.AutoModelForCausalLM,
                  T.LlamaConfig(**text, num_key_value_heads=max(1, heads // 2)), True),
        "mistral": (T.AutoModelForCausalLM,
                    T.MistralConfig(**text, num_key_value_heads=max(1, heads // 2),
                                    sliding_window=128), True),
        "gemma2": (T.AutoModelForCausalLM,
                   T.Gemma2Config(**text, num_key_value_heads=max(1, heads // 2),
                                  head_dim=head_dim, sliding_window=128), True),
        "vit": (T.AutoModel,
                T.ViTConfig(hidden_size=hidden, num_hidden_layers=layers,
                            num_attention_heads=heads, intermediate_size=4 * hidden,
                            image_size=384, patch_size=16), False),
        "whisper": (T.AutoModelForSpeechSeq2Seq,
                    T.WhisperConfig(vocab_size=VOCAB, num_mel_bins=80, encoder_layers=layers,
                                    decoder_layers=layers, encoder_attention_heads=heads,
                                    decoder_attention_heads=heads, d_model=hidden,
                                    encoder_ffn_dim=4 * hidden, decoder_ffn_dim=4 * hidden,
                                    max_source_positions=1500, max_target_positions=1024,
                                    pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                    decoder_start_token_id=1), False),
    }


def peer_of(name):
    # transformers runs Gemma 2 without sdpa (it has no softcap).
    return "eager" if name == "gemma2" else "sdpa"


def inputs(name, config, tokens, generator):
    """The forward's keyword arguments for about `tokens` tokens."""
    if name == "vit":
        # The image whose patch grid has about `tokens` patches.
        side = max(1, round(tokens ** 0.5)) * config.patch_size
        return dict(pixel_values=torch.randn(1, 3, side, side, generator=generator),
                    interpolate_pos_encoding=True)
    ids = torch.randint(3, VOCAB, (1, tokens), generator=generator)
    if name == "whisper":
        # The encoder takes 3000 frames (30 s of audio, 1500 positions)
        # whatever the transcript's length.
        frames = torch.randn(1, config.num_mel_bins, 3000, generator=generator)
        return dict(input_features=frames, decoder_input_ids=ids)
    return dict(input_ids=ids)


def best_of(fn, reps):
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def rows_of(name, cls, config, generates, args):
    models = {}
    for impl in ("attn_mlir", peer_of(name)):
        torch.manual_seed(0)
        models[impl] = cls.from_config(copy.deepcopy(config), attn_implementation=impl).eval()
    generator = torch.Generator().manual_seed(0)
    cases = [(f"forward-{n}", inputs(name, config, n, generator)) for n in args.tokens]
    if generates:
        prompt = torch.randint(3, VOCAB, (1, 8), generator=generator)
        settings = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                        do_sample=False, pad_token_id=0)
        cases.append(("generate", dict(prompt=prompt, settings=settings)))

    def runner(model, case):
        if "prompt" in case:
            return lambda: model.generate(case["prompt"], **case["settings"])
        return lambda: model(**case)

    rows = []
    with torch.no_grad():
        # Warm-up: every case once, every forward twice more (the
        # shape-generic build that a second length triggers is made here).
        for _, case in cases:
            for model in models.values():
                runner(model, case)()
        for _ in range(2):
            for _, case in cases:
                runner(models["attn_mlir"], case)()
        for label, case in cases:
            compiles = attn_mlir.stats()["compiles"]
            times = {impl: [] for impl in models}
            for _ in range(args.rounds):
                for impl, model in models.items():
                    times[impl].append(best_of(runner(model, case), args.reps))
            ours = statistics.median(times["attn_mlir"])
            peer = statistics.median(times[peer_of(name)])
            rows.append(dict(model=name, case=label, ours_ms=ours * 1e3, peer=peer_of(name),
                             peer_ms=peer * 1e3, ratio=peer / ours,
                             compiles=attn_mlir.stats()["compiles"] - compiles))
    return rows


def main():
    parser = argparse.ArgumentParser(description="attn_mlir as the attention of Hugging Face models")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tokens", type=int, nargs="+", default=[24, 512])
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--only", nargs="+")
    parser.add_argument("--json")
    args = parser.parse_args()
    print(f"# CPU: {cpu_model(os.path.join(ROOT, 'build'))}; torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"transformers {T.__version__}; hidden {args.hidden}, {args.layers} layers, "
          f"{args.heads} heads, f32")
    print(f"{'model':8} {'case':12} {'attn_mlir ms':>12} {'peer':>6} {'peer ms':>9} "
          f"{'peer/ours':>9} {'compiles':>8}")
    rows = []
    for name, (cls, config, generates) in configs(args.hidden, args.layers, args.heads).items():
        if args.only and name not in args.only:
            continue
        for row in rows_of(name, cls, config, generates, args):
            rows.append(row)
            print(f"{row['model']:8} {row['case']:12} {row['ours_ms']:12.3f} {row['peer']:>6} "
                  f"{row['peer_ms']:9.3f} {row['ratio']:9.2f} {row['compiles']:8d}", flush=True)
    print(f"# attn_mlir's parallel loops ran on: {attn_mlir.thread_pool()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
