#!/usr/bin/env python3
# ===- host_threads.py - compiled attention among torch's own operators ----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/host_threads.py [--rounds 5] [--calls 100]
#                                  [--busy 0 1] [--only pair|model]
#
# What a user of attn_mlir inside a torch program sees, as opposed to a
# kernel timed alone: the compiled code's threads and torch's share the
# process's cores. Each variant runs in a fresh process (a pool's threads
# spinning after one variant must not slow the next), variants alternate
# round by round, and calls follow each other with no sleep between them
# (sleeps would let spinning threads give up and hide the contention).
#
#   pair:  torch.mm of 256 x 256 then attn_mlir.scaled_dot_product_attention
#          (B1 H4 S128 D64, causal), back to back, per pair; and each alone.
#   model: the forward (no_grad) of a 2-layer transformer (hidden 128, 4
#          heads, GELU MLP) whose attention is attn_mlir's or torch's
#          F.scaled_dot_product_attention, at 24 and 256 tokens.
#
# Variants: attn_mlir with its loops on torch's OpenMP team
# (set_thread_pool("torch"), the default when torch is loaded), on the
# library's own OpenMP runtime (set_thread_pool("openmp"), what every call
# got before the pools were shared), and torch's own attention. --busy N
# runs N other busy processes during the measurement (a shared machine).
# Times: the median over rounds of a round's mean per call.
#
# ===----------------------------------------------------------------------=== #

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "build", "python_packages"))

VARIANTS = ["torch-pool", "openmp-pool", "torch-sdpa"]


def child(variant, case, tokens, calls, warmup):
    """Runs in a fresh process: one variant's mean seconds per call."""
    import torch
    import attn_mlir
    F = torch.nn.functional
    if variant != "torch-sdpa":
        attn_mlir.set_thread_pool("torch" if variant == "torch-pool" else "openmp")
    sdpa = (F.scaled_dot_product_attention if variant == "torch-sdpa"
            else attn_mlir.scaled_dot_product_attention)
    torch.manual_seed(0)
    if case in ("pair", "ours", "mm"):
        a = torch.randn(256, 256)
        q, k, v = (torch.randn(1, 4, 128, 64) for _ in range(3))

        def step():
            if case != "ours":
                torch.mm(a, a)
            if case != "mm":
                sdpa(q, k, v, is_causal=True)
    else:
        model = Model(torch, sdpa, width=128, heads=4, layers=2).eval()
        x = torch.randn(1, tokens, 128)

        def step():
            with torch.no_grad():
                model(x)
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(calls):
        step()
    return (time.perf_counter() - start) / calls


def Model(torch, sdpa, width, heads, layers):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.out = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x):
            B, L, E = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(B, L, 3, heads, E // heads).unbind(2)
            o = sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            x = x + self.out(o.transpose(1, 2).reshape(B, L, E))
            return x + self.mlp(self.norm2(x))

    return nn.Sequential(*[Block() for _ in range(layers)])


def busy():
    while True:
        pass


def measure(args, case, tokens, variants):
    """Median seconds per call of each variant: rounds alternate variants,
    each round a fresh process."""
    times = {v: [] for v in variants}
    for _ in range(args.rounds):
        for variant in variants:
            out = subprocess.run(
                [sys.executable, __file__, "--child", variant, case, str(tokens),
                 str(args.calls), str(args.warmup)],
                capture_output=True, text=True, check=True)
            times[variant].append(float(out.stdout.split()[-1]))
    return {v: statistics.median(t) for v, t in times.items()}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        variant, case, tokens, calls, warmup = sys.argv[2:7]
        print(child(variant, case, int(tokens), int(calls), int(warmup)))
        return
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--busy", type=int, nargs="+", default=[0, 1],
                   help="other busy processes during the measurement")
    p.add_argument("--only", choices=["pair", "model"])
    args = p.parse_args()
    build = os.path.join(ROOT, "build")
    print(f"CPU: {cpu_model(build)}")
    print(f"command: {' '.join(sys.argv)}")
    print("| busy | case | attn_mlir, torch's pool us | attn_mlir, own OpenMP us | "
          "torch sdpa us | own / torch's pool | torch sdpa / torch's pool |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for n in args.busy:
        others = [multiprocessing.Process(target=busy, daemon=True) for _ in range(n)]
        for proc in others:
            proc.start()
        try:
            cases = []
            if args.only in (None, "pair"):
                cases += [("pair", 0, "mm + sdpa pair"), ("ours", 0, "sdpa alone"),
                          ("mm", 0, "mm alone")]
            if args.only in (None, "model"):
                cases += [("model", 24, "model L24"), ("model", 256, "model L256")]
            for case, tokens, name in cases:
                variants = VARIANTS if case == "model" else VARIANTS[:2]
                t = measure(args, case, tokens, variants)
                ours, own = t["torch-pool"] * 1e6, t["openmp-pool"] * 1e6
                ref = t.get("torch-sdpa")
                cells = [f"{ours:.0f}", f"{own:.0f}",
                         f"{ref * 1e6:.0f}" if ref else "-", f"{own / ours:.2f}",
                         f"{ref * 1e6 / ours:.2f}" if ref else "-"]
                print(f"| {n} | {name} | " + " | ".join(cells) + " |", flush=True)
        finally:
            for proc in others:
                proc.terminate()
                proc.join()


if __name__ == "__main__":
    main()
