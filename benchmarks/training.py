#!/usr/bin/env python3
# ===- training.py - attention forward + backward against torch ------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/training.py [--seq 1024 2048 4096 8192] [--head-dim 64 128]
#                                  [--repeat 3] [--burst 2] [--mha [--only SUBSTRING] [--dynamic]]
#                                  [--linear]
#
# f32 scaled dot-product attention, B1 H8, as a training step runs it:
# forward, then backward for a random output gradient, through
# attn_mlir.scaled_dot_product_attention under torch autograd (the compiled
# attn.sdpa with its log-sum-exp and attn.sdpa_grad) against
# torch.nn.functional.scaled_dot_product_attention, same inputs, same run,
# causal and not; and our forward alone, for the backward / forward ratio.
# The gradients are checked against torch's before timing. Each step starts
# from no gradients (as after zero_grad()). Timing as in benchmarks/mha.py
# (bursts interleaved between peers, min over rounds).
#
# --mha: a training step of attn_mlir.nn.MultiheadAttention (torch's
# projections around the compiled attention, every parameter's gradient)
# against torch.nn.MultiheadAttention with the same weights, batch-first
# self-attention, need_weights=False (as nn.TransformerEncoderLayer calls
# it), forward + backward. Each layer is the build for its shapes
# (`dynamic=False`; left automatic, a configuration after another of the
# same widths and heads would time the shape-generic build); `--dynamic`
# times the shape-generic build of each.
#
# --linear: attn_mlir.functional.linear forward + backward (input, weight
# and bias gradients) against torch.nn.functional.linear on the
# projections' shapes (tokens x in -> out).
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model, time_interleaved  # noqa: E402


# name, N, L, E, H: issue 18's configurations, BERT-base, a long sequence.
MHAS = [("N32 L10 E512 H8", 32, 10, 512, 8), ("N8 L128 E512 H8", 8, 128, 512, 8),
        ("N4 L512 E768 H12", 4, 512, 768, 12), ("BERT-base N1 L512 E768 H12", 1, 512, 768, 12),
        ("N2 L2048 E512 H8", 2, 2048, 512, 8)]


def mha_steps(attn_mlir, torch, args):
    print("| config | ours fwd+bwd ms | torch fwd+bwd ms | torch / ours |")
    print("|---|---|---|---|", flush=True)
    for name, N, L, E, H in MHAS:
        if args.only and args.only not in name:
            continue
        torch.manual_seed(L + E)
        ref = torch.nn.MultiheadAttention(E, H, batch_first=True)
        mine = attn_mlir.nn.MultiheadAttention(E, H, batch_first=True,
                                               dynamic=args.dynamic)
        mine.load_state_dict(ref.state_dict())
        x = torch.randn(N, L, E, requires_grad=True)
        grad = torch.randn(N, L, E)

        def step(module):
            def run():
                module.zero_grad()
                x.grad = None
                module(x, x, x, need_weights=False)[0].backward(grad)
            return run

        ours, theirs = step(mine), step(ref)
        ours()
        mine_grads = [p.grad.clone() for p in mine.parameters()] + [x.grad.clone()]
        theirs()
        for a, b in zip(mine_grads, [p.grad for p in ref.parameters()] + [x.grad]):
            error = float((a - b).norm() / b.norm())
            if error > 1e-4:
                raise SystemExit(f"{name}: a gradient differs from torch's by {error:.1e}")
        best = time_interleaved({"ours": ours, "torch": theirs}, args.repeat,
                                burst=args.burst)
        print(f"| {name} | {best['ours'] * 1e3:.1f} | {best['torch'] * 1e3:.1f} | "
              f"{best['torch'] / best['ours']:.2f} |", flush=True)


# tokens, in_features, out_features: the in- and out-projections of N8 L128
# E512 and of BERT-base (N4 L512 E768), and N32 L10's in-projection.
LINEARS = [(1024, 512, 1536), (1024, 512, 512), (2048, 768, 2304), (2048, 768, 768),
           (320, 512, 1536)]


def linear_steps(attn_mlir, torch, args):
    print("| tokens x in -> out | ours fwd+bwd ms | torch fwd+bwd ms | torch / ours |")
    print("|---|---|---|---|", flush=True)
    for M, K, N in LINEARS:
        torch.manual_seed(M + K + N)
        mine = [torch.randn(s, requires_grad=True) for s in ((M, K), (N, K), (N,))]
        theirs = [t.detach().clone().requires_grad_() for t in mine]
        grad = torch.randn(M, N)

        def step(fn, leaves):
            def run():
                for t in leaves:
                    t.grad = None
                fn(*leaves).backward(grad)
            return run

        ours = step(attn_mlir.functional.linear, mine)
        ref = step(torch.nn.functional.linear, theirs)
        ours()
        ref()
        for a, b in zip(mine, theirs):
            error = float((a.grad - b.grad).norm() / b.grad.norm())
            if error > 1e-4:
                raise SystemExit(f"{M}x{K}->{N}: a gradient differs from torch's by {error:.1e}")
        best = time_interleaved({"ours": ours, "torch": ref}, args.repeat, burst=args.burst)
        print(f"| {M} x {K} -> {N} | {best['ours'] * 1e3:.1f} | {best['torch'] * 1e3:.1f} | "
              f"{best['torch'] / best['ours']:.2f} |", flush=True)


def main():
    p = argparse.ArgumentParser(description="attention forward + backward")
    p.add_argument("--seq", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--head-dim", type=int, nargs="+", default=[64, 128])
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--burst", type=int, default=2)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--mha", action="store_true",
                   help="nn.MultiheadAttention training steps instead of SDPA")
    p.add_argument("--only", help="with --mha, run only the configs whose name contains "
                   "this string")
    p.add_argument("--dynamic", action="store_true",
                   help="with --mha, time attn_mlir's shape-generic build of each layer")
    p.add_argument("--linear", action="store_true",
                   help="functional.linear forward + backward instead of SDPA")
    args = p.parse_args()
    os.environ["ATTN_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-training-bench-")
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir
    import torch

    print(f"# CPU: {cpu_model(args.build)}; torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads; f32; bursts of {args.burst}"
          + ("; attn-mlir shape-generic (dynamic=True)" if args.mha and args.dynamic else ""))
    if args.mha:
        return mha_steps(attn_mlir, torch, args)
    if args.linear:
        return linear_steps(attn_mlir, torch, args)
    print(f"B1 H{args.heads}")
    print("| S | D | causal | ours fwd+bwd ms | torch fwd+bwd ms | torch / ours | "
          "ours fwd ms | ours bwd / fwd |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    F = torch.nn.functional
    for d in args.head_dim:
        for s in args.seq:
            for causal in (False, True):
                torch.manual_seed(s + d)
                q, k, v = (torch.randn(1, args.heads, s, d, requires_grad=True)
                           for _ in range(3))
                grad = torch.randn(1, args.heads, s, d)

                # Each step starts from no gradients, as after an optimizer's
                # zero_grad() (set_to_none): the backward assigns them.
                def ours():
                    for x in (q, k, v):
                        x.grad = None
                    attn_mlir.scaled_dot_product_attention(
                        q, k, v, is_causal=causal).backward(grad)

                def theirs():
                    for x in (q, k, v):
                        x.grad = None
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(grad)

                def forward():
                    with torch.no_grad():
                        attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal)

                ours()
                mine = [x.grad for x in (q, k, v)]
                theirs()
                for name, a, b in zip("qkv", mine, (q.grad, k.grad, v.grad)):
                    error = float((a - b).norm() / b.norm())
                    if error > 1e-4:
                        raise SystemExit(f"S={s} D={d} causal={causal}: d{name} differs "
                                         f"from torch's by {error:.1e}")
                best = time_interleaved({"ours": ours, "torch": theirs, "forward": forward},
                                        args.repeat, burst=args.burst)
                backward = best["ours"] - best["forward"]
                print(f"| {s} | {d} | {causal} | {best['ours'] * 1e3:.1f} | "
                      f"{best['torch'] * 1e3:.1f} | {best['torch'] / best['ours']:.2f} | "
                      f"{best['forward'] * 1e3:.1f} | {backward / best['forward']:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
