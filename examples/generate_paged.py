#!/usr/bin/env python3
# ===- generate_paged.py - a generation loop over a paged KV cache ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   PYTHONPATH=build/python_packages build/venv/bin/python3 examples/generate_paged.py \
#       [--layers 2] [--steps 100] [--layout nhd|hnd]
#
# A GPT-2-small-shaped decoder (width 768, 12 heads of 64, random weights)
# generates for several sequences of different prompt lengths at once. Its
# keys and values live in a paged cache shared by all sequences (16-key
# pages handed out as a sequence grows, so the sequences' pages interleave),
# and every attention is attn_mlir.paged_attention: each prompt's prefill
# appends its keys and values and attends causally over them, then each
# decode step appends one key and value per sequence and attends over the
# whole cache of every sequence in one batched call.
#
# Next to it the same model in plain torch keeps one contiguous K/V tensor
# per sequence and layer and calls torch's scaled_dot_product_attention. Both
# consume the same tokens (greedy choices of the paged model); the script
# compares their logits at every step and exits 1 when any step's relative
# difference exceeds --tolerance.
#
# ===----------------------------------------------------------------------=== #

import argparse
import sys

import numpy as np
import torch
import torch.nn.functional as F

import attn_mlir

WIDTH, HEADS, HEAD_DIM, VOCAB = 768, 12, 64, 512


class Weights:
    """One random decoder's parameters (pre-norm blocks, GPT-2 style)."""

    def __init__(self, layers, generator):
        def normal(*shape, scale=0.02):
            return torch.randn(*shape, generator=generator) * scale

        self.embed = normal(VOCAB, WIDTH, scale=1.0)
        self.position = normal(4096, WIDTH, scale=0.1)
        self.layers = [{
            "qkv": normal(3 * WIDTH, WIDTH), "qkv_bias": normal(3 * WIDTH),
            "out": normal(WIDTH, WIDTH), "out_bias": normal(WIDTH),
            "up": normal(4 * WIDTH, WIDTH), "up_bias": normal(4 * WIDTH),
            "down": normal(WIDTH, 4 * WIDTH), "down_bias": normal(WIDTH),
        } for _ in range(layers)]


def block_parts(w, x):
    """The layer's query/key/value [B, L, H, D] of x [B, L, E]."""
    qkv = F.linear(F.layer_norm(x, (WIDTH,)), w["qkv"], w["qkv_bias"])
    return [t.reshape(x.shape[0], x.shape[1], HEADS, HEAD_DIM) for t in qkv.chunk(3, dim=-1)]


def block_rest(w, x, attended):
    """The residual stream after attention ([B, L, H, D]) and the MLP."""
    x = x + F.linear(attended.reshape(x.shape), w["out"], w["out_bias"])
    hidden = F.gelu(F.linear(F.layer_norm(x, (WIDTH,)), w["up"], w["up_bias"]))
    return x + F.linear(hidden, w["down"], w["down_bias"])


def logits(weights, x):
    return F.layer_norm(x, (WIDTH,)) @ weights.embed.T


class PagedModel:
    """The decoder with its K/V in a paged cache and attention through
    attn_mlir.paged_attention."""

    def __init__(self, weights, sequences, max_len, page_size, layout):
        self.w, self.layout, self.page_size = weights, layout, page_size
        pages_per_sequence = -(-max_len // page_size)
        num_pages = sequences * pages_per_sequence
        shape = ((num_pages, page_size, HEADS, HEAD_DIM) if layout == "nhd"
                 else (num_pages, HEADS, page_size, HEAD_DIM))
        # Zeroed: positions past a sequence's length must be finite.
        self.k_cache = [torch.zeros(shape) for _ in weights.layers]
        self.v_cache = [torch.zeros(shape) for _ in weights.layers]
        self.table = torch.zeros((sequences, pages_per_sequence), dtype=torch.int32)
        self.lengths = torch.zeros(sequences, dtype=torch.int32)
        self.pages_used = [0] * sequences
        self.next_page = 0

    def _reserve(self, b, length):
        """Hands out pages to sequence b until it holds `length` keys."""
        while self.pages_used[b] * self.page_size < length:
            self.table[b, self.pages_used[b]] = self.next_page
            self.pages_used[b] += 1
            self.next_page += 1

    def forward(self, tokens, rows):
        """tokens [len(rows), L] appended to sequences `rows` (each at its
        own current length): the logits of their last positions."""
        L = tokens.shape[1]
        start = self.lengths[rows]
        for i, b in enumerate(rows):
            self._reserve(b, int(start[i]) + L)
        positions = start[:, None] + torch.arange(L)[None, :]
        x = self.w.embed[tokens] + self.w.position[positions]
        table, lengths = self.table[rows].contiguous(), start.contiguous()
        for w, kc, vc in zip(self.w.layers, self.k_cache, self.v_cache):
            q, k, v = block_parts(w, x)
            attended = attn_mlir.paged_attention(
                q.contiguous(), kc, vc, table, lengths, k=k.contiguous(), v=v.contiguous(),
                causal=True, layout=self.layout)
            x = block_rest(w, x, attended)
        self.lengths[rows] += L
        return logits(self.w, x[:, -1])


class TorchModel:
    """The same decoder with a contiguous K/V per sequence and layer and
    torch's scaled_dot_product_attention."""

    def __init__(self, weights, sequences):
        self.w = weights
        self.k = [[None] * sequences for _ in weights.layers]
        self.v = [[None] * sequences for _ in weights.layers]
        self.lengths = [0] * sequences

    def forward(self, tokens, rows):
        out = []
        for i, b in enumerate(rows):
            t = tokens[i:i + 1]
            L = t.shape[1]
            positions = torch.arange(self.lengths[b], self.lengths[b] + L)
            x = self.w.embed[t] + self.w.position[positions][None]
            for layer, w in enumerate(self.w.layers):
                q, k, v = (p.transpose(1, 2) for p in block_parts(w, x))  # [1, H, L, D]
                cache_k, cache_v = self.k[layer][b], self.v[layer][b]
                k = k if cache_k is None else torch.cat([cache_k, k], dim=2)
                v = v if cache_v is None else torch.cat([cache_v, v], dim=2)
                self.k[layer][b], self.v[layer][b] = k, v
                S = k.shape[2]
                # Bottom-right causal: query i sees keys j <= i + S - L.
                keep = (torch.arange(S)[None, :]
                        <= torch.arange(L)[:, None] + (S - L))
                attended = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
                x = block_rest(w, x, attended.transpose(1, 2))
            self.lengths[b] += L
            out.append(logits(self.w, x[:, -1]))
        return torch.cat(out)


def relative(a, b):
    return float((a - b).norm() / b.norm())


def main():
    p = argparse.ArgumentParser(
        description="A GPT-2-shaped decoder generating over a paged KV cache, checked "
        "against torch step by step")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--prompts", type=int, nargs="+", default=[5, 17, 33])
    p.add_argument("--page-size", type=int, default=16)
    p.add_argument("--layout", choices=["nhd", "hnd"], default="nhd")
    p.add_argument("--tolerance", type=float, default=1e-4)
    args = p.parse_args()

    torch.set_grad_enabled(False)
    generator = torch.Generator().manual_seed(0)
    weights = Weights(args.layers, generator)
    sequences = len(args.prompts)
    paged = PagedModel(weights, sequences, max(args.prompts) + args.steps + 1,
                       args.page_size, args.layout)
    reference = TorchModel(weights, sequences)

    worst = 0.0
    # Prefill: each prompt on its own (lengths differ), its logits compared.
    last = []
    for b, length in enumerate(args.prompts):
        prompt = torch.randint(0, VOCAB, (1, length), generator=generator)
        got, want = paged.forward(prompt, [b]), reference.forward(prompt, [b])
        worst = max(worst, relative(got, want))
        last.append(got.argmax(-1))
    tokens = torch.stack(last)  # [sequences, 1]
    print(f"prefill of {sequences} prompts ({args.prompts} tokens): "
          f"relative difference {worst:.2e}")
    every = list(range(sequences))
    for step in range(args.steps):
        got, want = paged.forward(tokens, every), reference.forward(tokens, every)
        difference = relative(got, want)
        worst = max(worst, difference)
        if step % 20 == 0 or step == args.steps - 1:
            print(f"decode step {step:3d}: lengths {paged.lengths.tolist()}, "
                  f"relative difference {difference:.2e}")
        tokens = got.argmax(-1, keepdim=True)
    ok = worst <= args.tolerance
    print(f"{args.steps} steps, {args.layers} layers, {args.layout} pages of "
          f"{args.page_size}: largest relative difference {worst:.2e} "
          f"({'ok' if ok else 'FAIL'}, tolerance {args.tolerance:.0e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
