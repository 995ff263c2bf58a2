#!/usr/bin/env python3
# ===- bf16.py - bf16 attention: attn-mlir against torch -------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/bf16.py [--seq 1024 2048 4096 8192] [--repeat 3] [--decode]
#
# bf16 inputs and outputs, the problems of run.py's sweep (full and causal
# at D = 64 and 128, Llama-3 GQA): attn-mlir's default pipeline (bf16 pairs
# on vdpbf16ps where the target model takes them: AVX512-BF16 without AMX,
# docs/CpuTargets.md), the same with the other choice (bf16-dot=false:
# bf16 widened to f32 for the contractions; or bf16-dot=true where the model
# widens on a CPU that has vdpbf16ps) and torch's
# scaled_dot_product_attention on bf16 CPU tensors, on the same inputs in
# the same process, interleaved call by call (run.py's time_interleaved).
# Each output is checked against torch's float32 result on the same bf16
# inputs. GFLOP/s count the multiply-adds of Q K^T and P V, 2 FLOP each.
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import AttnMlir, Config  # noqa: E402
from run import ROOT, cpu_model, fma_peak, mem_bandwidth, time_interleaved  # noqa: E402


def main():
    p = argparse.ArgumentParser(description="bf16 attention against torch")
    p.add_argument("--seq", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--decode", action="store_true",
                   help="single-query decode (B 1 and 8, Hq 32 over Hkv 8, D 128) against "
                   "an S-long cache instead, with each time's share of the "
                   "memory-bandwidth floor")
    args = p.parse_args()
    import torch

    torch.set_num_threads(os.cpu_count())
    attnc = os.path.join(args.build, "bin", "attnc")
    # The other path than the model's: what the choice is worth on this CPU.
    kernel = subprocess.run([attnc, "--print-target"], capture_output=True,
                            text=True, check=True).stderr
    default_dot = "bf16-dot=true" in kernel
    other = "bf16-dot=false" if default_dot else "bf16-dot=true"
    ours = {"attn-mlir": AttnMlir(attnc, dtype="bf16"),
            f"attn-mlir {other}": AttnMlir(attnc, other, dtype="bf16")}
    _, peak_text = fma_peak(args.build)
    print(f"# CPU: {cpu_model(args.build)}")
    print(f"# {peak_text}")
    print(f"# the target model's choice: bf16-dot={str(default_dot).lower()}")
    bandwidth = None
    if args.decode:
        bandwidth, bandwidth_text = mem_bandwidth(args.build)
        print(f"# {bandwidth_text}")
    names = list(ours) + ["torch"]
    print("| problem | " + " | ".join(f"{n} ms (GFLOP/s)" for n in names)
          + " | torch / attn-mlir | error vs f32 |")
    print("|---|" + "---|" * (len(names) + 2), flush=True)
    generator = torch.Generator().manual_seed(0)
    for s in args.seq:
        if args.decode:
            configs = [Config(b, 32, 8, 1, s, 128, False) for b in (1, 8)]
        else:
            configs = [Config(1, 8, 8, s, s, d, c) for d in (64, 128) for c in (False, True)]
            configs.append(Config(1, 32, 8, s, s, 128, True))
        for cfg in configs:
            q = torch.randn(cfg.B, cfg.Hq, cfg.Sq, cfg.D, generator=generator).bfloat16()
            k, v = (torch.randn(cfg.B, cfg.Hkv, cfg.Skv, cfg.D, generator=generator).bfloat16()
                    for _ in range(2))
            gqa = cfg.Hq != cfg.Hkv
            sdpa = torch.nn.functional.scaled_dot_product_attention
            with torch.no_grad():
                reference = sdpa(q.float(), k.float(), v.float(), is_causal=cfg.causal,
                                 enable_gqa=gqa)
            bits = [x.view(torch.int16).numpy().view(np.uint16) for x in (q, k, v)]
            runs = {name: peer.prepare(cfg, *bits) for name, peer in ours.items()}

            def run_torch(q=q, k=k, v=v, cfg=cfg, gqa=gqa):
                with torch.no_grad():
                    return sdpa(q, k, v, is_causal=cfg.causal, enable_gqa=gqa)

            runs["torch"] = run_torch
            errors = []
            for name, run in runs.items():
                out = run()
                out = (torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
                       if isinstance(out, np.ndarray) else out).float()
                errors.append(float((out - reference).norm() / reference.norm()))
            best = time_interleaved(runs, args.repeat)
            flops = cfg.flops()
            cells = [f"{best[n] * 1e3:.1f} ({flops / best[n] * 1e-9:.0f})" for n in names]
            if bandwidth:
                floor = cfg.bytes_read(element_size=2) / (bandwidth * 1e9)
                cells = [f"{c} {floor / best[n]:.0%} of floor"
                         for c, n in zip(cells, names)]
            print(f"| {cfg.label()} bf16 | " + " | ".join(cells)
                  + f" | {best['torch'] / best['attn-mlir']:.2f}× | "
                  + ", ".join(f"{e:.1e}" for e in errors) + " |", flush=True)


if __name__ == "__main__":
    main()
