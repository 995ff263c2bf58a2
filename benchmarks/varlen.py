#!/usr/bin/env python3
# ===- varlen.py - ragged (varlen) prefill against torch ------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/varlen.py [--repeat 5] [--heads 12] [--head-dim 64]
#                                               [--backward]
#
# Prefill of a batch of prompts of different lengths packed without padding
# (FlashAttention's varlen layout), causal and not, f32: attn_mlir's
# varlen_attention against what a CPU user of torch has, on the same
# inputs in the same process: torch's SDPA called once per sequence, and
# torch's SDPA on the batch padded to its longest prompt with a boolean
# mask (a padded query row that sees no key is NaN in torch, so causal
# padding is on the right there). Each figure is the best of --repeat
# rounds in which the three run in turn (run.py's time_interleaved), after
# a warm-up that compiles; outputs are checked against torch's
# per-sequence result first. The ratio is torch's time / ours (higher is
# better for us). The work column is the attention FLOPs the sequences
# really need (4 * Hq * sum(lq * lk) * D, halved for causal). With
# --backward each call is a training step's attention: the forward and the
# gradients of q, k and v for a random output gradient (autograd through
# our custom op; through torch's SDPA for the peers), gradients checked
# against torch's per-sequence ones first; the work column then counts the
# backward's 2.5x the forward's FLOPs too.
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import cpu_model, time_interleaved  # noqa: E402

BATCHES = {
    "4 prompts, 100-1000 tokens": [1000, 517, 100, 333],
    "16 prompts, 16-512 tokens": [512, 16, 200, 77, 300, 64, 128, 480, 33, 250, 90, 411, 17, 160, 256, 99],
    "2 prompts, 2048 and 64": [2048, 64],
}


def main():
    p = argparse.ArgumentParser(description="varlen prefill against torch")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--backward", action="store_true",
                   help="time forward + backward (training) instead of the forward")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    os.environ["ATTN_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-varlen-")
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir
    import torch
    F = torch.nn.functional

    H, D = args.heads, args.head_dim
    print(f"# CPU: {cpu_model(args.build)}; torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads; H{H} D{D} f32, best of {args.repeat}"
          f"{', forward + backward' if args.backward else ''}")
    print("| batch | causal | GFLOP | attn-mlir ms | torch per sequence ms | ratio | "
          "torch padded + mask ms | ratio |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    rng = np.random.default_rng(0)
    for name, lengths in BATCHES.items():
        total, longest = sum(lengths), max(lengths)
        q, k, v = (torch.from_numpy(rng.standard_normal((total, H, D)).astype(np.float32))
                   for _ in range(3))
        cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
        spans = list(zip(cu[:-1].tolist(), cu[1:].tolist()))
        # The padded batch [B, H, longest, D] and its key-padding mask.
        padded = [torch.zeros(len(lengths), H, longest, D) for _ in range(3)]
        for b, (s, e) in enumerate(spans):
            for src, dst in zip((q, k, v), padded):
                dst[b, :, :e - s] = src[s:e].transpose(0, 1)
        valid = torch.arange(longest)[None, :] < torch.tensor(lengths)[:, None]
        for causal in (True, False):
            def per_sequence():
                return torch.cat([F.scaled_dot_product_attention(
                    *(x[s:e].transpose(0, 1) for x in (q, k, v)),
                    is_causal=causal).transpose(0, 1) for s, e in spans])

            mask = valid[:, None, None, :]
            if causal:
                mask = mask & torch.ones(longest, longest, dtype=torch.bool).tril()

            def padded_call():
                return F.scaled_dot_product_attention(*padded, attn_mask=mask)

            def ours():
                return attn_mlir.varlen_attention(q, k, v, cu, cu, causal=causal)

            if args.backward:
                runs = {name: training_step(run, leaves, torch)
                        for name, run, leaves in (("ours", ours, (q, k, v)),
                                                  ("sequences", per_sequence, (q, k, v)),
                                                  ("padded", padded_call, padded))}
                for x in (q, k, v, *padded):
                    x.requires_grad_()
                got, want = runs["ours"](), runs["sequences"]()
                err = max(float((a - b).norm() / b.norm()) for a, b in zip(got, want))
                if err > 1e-4:
                    raise SystemExit(f"{name}: attn-mlir's gradients differ from torch's "
                                     f"({err:.2e})")
                best = time_interleaved(runs, args.repeat)
                for x in (q, k, v, *padded):
                    x.requires_grad_(False)
            else:
                with torch.no_grad():
                    want = per_sequence()
                    err = (ours() - want).norm() / want.norm()
                    if err > 1e-5:
                        raise SystemExit(f"{name}: attn-mlir differs from torch ({err:.2e})")
                    best = time_interleaved({"ours": ours, "sequences": per_sequence,
                                             "padded": padded_call}, args.repeat)
            t_ours, t_seq, t_pad = best["ours"], best["sequences"], best["padded"]
            flops = 4 * H * D * sum(n * n for n in lengths) / (2 if causal else 1)
            flops *= 3.5 if args.backward else 1
            print(f"| {name} | {causal} | {flops / 1e9:.1f} | {t_ours * 1e3:.1f} | "
                  f"{t_seq * 1e3:.1f} | {t_seq / t_ours:.2f} | {t_pad * 1e3:.1f} | "
                  f"{t_pad / t_ours:.2f} |", flush=True)


def training_step(run, leaves, torch):
    """`run`'s attention forward and the gradients of `leaves` for a fixed
    random output gradient: what one training step's attention costs."""
    grads = {}

    def step():
        out = run()
        grad = grads.get(out.shape)
        if grad is None:
            seeded = torch.Generator().manual_seed(1)
            grad = grads[out.shape] = torch.randn(out.shape, generator=seeded)
        return torch.autograd.grad(out, leaves, grad)
    return step


if __name__ == "__main__":
    main()
