#!/usr/bin/env python3
# ===- train_reverse.py - a transformer trained through attn-mlir ----------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   PYTHONPATH=build/python_packages build/venv/bin/python3 examples/train_reverse.py [--steps 200]
#
# A small transformer encoder learns to reverse a sequence of tokens. Two
# copies start from the same weights and see the same batches: one's
# self-attention layers are torch.nn.MultiheadAttention, the other's
# attn_mlir.nn.MultiheadAttention (a torch.nn.Module with the same
# parameters: under autograd torch's projections around the compiled
# attn.sdpa forward and attn.sdpa_grad backward; under torch.no_grad, as in
# the final accuracy check, the fused compiled attn.multihead). Everything
# else (embeddings, MLPs, the optimiser) is the same torch code. The losses
# must agree step by step: the script exits 1 when they drift apart by more
# than --tolerance (relative), and prints the table and the final accuracy
# of both.
#
# ===----------------------------------------------------------------------=== #

import argparse
import sys

import torch

import attn_mlir


class Block(torch.nn.Module):
    """Pre-norm encoder block: multi-head self-attention and an MLP."""

    def __init__(self, width, heads, attention):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(width)
        self.attention = attention(width, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                       torch.nn.Linear(4 * width, width))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Reverser(torch.nn.Module):
    def __init__(self, vocab, length, width, heads, layers, attention):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.position = torch.nn.Parameter(torch.randn(length, width))
        self.blocks = torch.nn.ModuleList(Block(width, heads, attention)
                                          for _ in range(layers))
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def batch(generator, size, length, vocab):
    tokens = torch.randint(0, vocab, (size, length), generator=generator)
    return tokens, tokens.flip(1)


def train(steps, tolerance, log=print):
    """Trains both copies; returns (losses ours, losses torch, accuracy ours,
    accuracy torch, largest relative loss difference)."""
    vocab, length, width, heads, layers = 16, 12, 64, 4, 2
    torch.manual_seed(0)
    reference = Reverser(vocab, length, width, heads, layers, torch.nn.MultiheadAttention)
    ours = Reverser(vocab, length, width, heads, layers, attn_mlir.nn.MultiheadAttention)
    # The same initial weights: PyTorch's state dict loads into ours.
    ours.load_state_dict(reference.state_dict())
    optimizers = [torch.optim.Adam(m.parameters(), lr=3e-3) for m in (ours, reference)]
    generator = torch.Generator().manual_seed(1)
    losses = ([], [])
    worst = 0.0
    log("| step | loss (attn-mlir) | loss (torch) | relative difference |")
    log("|---|---|---|---|")
    for step in range(steps):
        tokens, target = batch(generator, 32, length, vocab)
        for model, optimizer, history in zip((ours, reference), optimizers, losses):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(tokens).reshape(-1, vocab),
                                                     target.reshape(-1))
            loss.backward()
            optimizer.step()
            history.append(loss.item())
        # Relative to the loss, or to 0.01 once it is smaller (a loss near 0
        # has no relative precision left).
        difference = abs(losses[0][-1] - losses[1][-1]) / max(losses[1][-1], 0.01)
        worst = max(worst, difference)
        if step % 20 == 0 or step == steps - 1:
            log(f"| {step} | {losses[0][-1]:.6f} | {losses[1][-1]:.6f} | {difference:.1e} |")
    tokens, target = batch(generator, 256, length, vocab)
    with torch.no_grad():
        accuracy = [float((m(tokens).argmax(-1) == target).float().mean())
                    for m in (ours, reference)]
    return losses, accuracy, worst


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--tolerance", type=float, default=1e-3,
                   help="largest relative difference of the two losses at any step")
    args = p.parse_args()
    losses, accuracy, worst = train(args.steps, args.tolerance)
    print(f"accuracy after {args.steps} steps: attn-mlir {accuracy[0]:.3f}, "
          f"torch {accuracy[1]:.3f}; largest relative loss difference {worst:.1e}")
    if worst > args.tolerance:
        print(f"FAIL: the losses drifted apart by more than {args.tolerance}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
