#!/usr/bin/env python3
# ===- gqa_grad.py - the GQA backward's per-head sums: accuracy and cost ----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/gqa_grad.py [--groups 6 8 1] [--batch 2]
#                                  [--rows 1024] [--keys 1023] [--head-dim 128]
#                                  [--repeat 5] [--burst 2]
#
# attn.sdpa_grad (causal, f32, B x Hq query heads on B x Hkv = 1 key/value
# head per group of G, issue 57's shape by default) compiled twice in one
# process: as the CPU pipeline builds it (each query head of a group sums
# its dK and dV in accumulators of its own, then the heads:
# `grad-head-sums=true`) and with one running sum over the group
# (`grad-head-sums=false`, the accumulation before session 42). The two
# builds and torch's SDPA backward run interleaved on the same inputs (the
# forward's output and log-sum-exp from our compiled forward), so their
# ratio is one run's; and each build's dK / dV relative error against a
# float64 autograd reference, beside torch's float32 error. Timing as in
# benchmarks/mha.py (bursts interleaved between peers, min over rounds).
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model, relative_error, time_interleaved  # noqa: E402


def tensor(shape, elem="f32"):
    return f"tensor<{'x'.join(map(str, shape))}x{elem}>"


def sources(B, Hq, Hkv, L, S, D):
    """The forward (output and log-sum-exp) and the backward, as MLIR."""
    q, k, o = tensor((B, Hq, L, D)), tensor((B, Hkv, S, D)), tensor((B, Hq, L, D))
    lse = tensor((B, Hq, L))
    forward = f"""
func.func @forward(%q: {q}, %k: {k}, %v: {k}) -> ({o}, {lse}) {{
  %e = tensor.empty() : {o}
  %l = tensor.empty() : {lse}
  %o, %lse = attn.sdpa %q, %k, %v outs(%e) lse(%l : {lse}) causal
      : {q}, {k}, {k} -> {o}, {lse}
  return %o, %lse : {o}, {lse}
}}"""
    backward = f"""
func.func @backward(%q: {q}, %k: {k}, %v: {k}, %o: {o}, %do: {o}, %lse: {lse})
    -> ({q}, {k}, {k}) {{
  %gq = tensor.empty() : {q}
  %gk = tensor.empty() : {k}
  %gv = tensor.empty() : {k}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse outs(%gq, %gk, %gv) causal
      : {q}, {k}, {k}, {o}, {lse}
  return %dq, %dk, %dv : {q}, {k}, {k}
}}"""
    return forward, backward


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--groups", type=int, nargs="+", default=[6, 8, 1],
                   help="query heads per key/value head (one key/value head)")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--rows", type=int, default=1024)
    p.add_argument("--keys", type=int, default=1023)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--burst", type=int, default=2)
    args = p.parse_args()

    import torch
    import attn_mlir

    print(f"CPU: {cpu_model(os.path.join(ROOT, 'build'))}")
    print(f"threads: torch {torch.get_num_threads()}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print("| B Hq:Hkv L x S D | head sums ms | one sum ms | one sum / head sums "
          "| torch ms | dK err head sums / one sum / torch | dV err head sums / one sum "
          "/ torch |")
    print("|---|---|---|---|---|---|---|", flush=True)
    B, L, S, D = args.batch, args.rows, args.keys, args.head_dim
    for group in args.groups:
        Hq, Hkv = group, 1
        forward_ir, backward_ir = sources(B, Hq, Hkv, L, S, D)
        forward = attn_mlir.compile(forward_ir)
        builds = {"head sums": attn_mlir.compile(backward_ir),
                  "one sum": attn_mlir.compile(backward_ir, pipeline="grad-head-sums=false")}
        rng = np.random.default_rng(group)
        q = rng.standard_normal((B, Hq, L, D)).astype(np.float32)
        k, v = (rng.standard_normal((B, Hkv, S, D)).astype(np.float32) for _ in range(2))
        do = rng.standard_normal((B, Hq, L, D)).astype(np.float32)
        o, lse = forward(q, k, v)

        # float64 and float32 autograd through torch's SDPA (causal is
        # top-left there, as attn.sdpa's default alignment).
        def torch_grads(dtype, keep=False):
            leaves = [torch.from_numpy(x).to(dtype).requires_grad_() for x in (q, k, v)]
            out = torch.nn.functional.scaled_dot_product_attention(
                *leaves, is_causal=True, enable_gqa=True)
            grad = torch.from_numpy(do).to(dtype)
            if keep:
                return out, grad, leaves
            out.backward(grad)
            return [x.grad.numpy() for x in leaves]

        want = torch_grads(torch.float64)
        theirs = torch_grads(torch.float32)
        got = {name: build(q, k, v, o, do, lse) for name, build in builds.items()}
        for name, grads in got.items():
            # dQ checked loosely: both builds compute it alike.
            error = relative_error(grads[0], want[0])
            assert error < 1e-4, f"{name}: dQ relative error {error:.3g}"
        errors = {name: [relative_error(grads[i], want[i]) for i in (1, 2)]
                  for name, grads in got.items()}
        errors["torch"] = [relative_error(theirs[i], want[i]) for i in (1, 2)]

        def torch_backward():
            out, grad, _ = torch_grads(torch.float32, keep=True)
            out.backward(grad)

        # torch's time includes its forward (autograd needs one); ours are the
        # backward alone: the column is context, the ratio is ours to ours.
        runs = {name: (lambda build=build: build(q, k, v, o, do, lse))
                for name, build in builds.items()}
        runs["torch"] = torch_backward
        best = time_interleaved(runs, args.repeat, burst=args.burst)
        ms = {name: seconds * 1e3 for name, seconds in best.items()}
        print(f"| {B} {Hq}:{Hkv} {L} x {S} {D} | {ms['head sums']:.1f} | {ms['one sum']:.1f} | "
              f"{ms['one sum'] / ms['head sums']:.3f} | {ms['torch']:.1f} (fwd+bwd) | "
              + " | ".join(" / ".join(f"{errors[n][i]:.3g}" for n in ("head sums", "one sum",
                                                                    "torch"))
                           for i in (0, 1)) + " |", flush=True)


if __name__ == "__main__":
    main()
