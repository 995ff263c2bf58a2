#!/usr/bin/env python3
"""attn-mlir's CUDA kernels against PyTorch's scaled_dot_product_attention
(flash and cuDNN backends) and a Triton fused-attention kernel, in one run on
the same inputs: bf16, B=4 H=16 D=128, S = 1k..16k, causal and not
(issue 6). Times are medians of triton.testing.do_bench (CUDA events,
warm-up first); each library call also synchronises its stream, which the
attn-mlir column pays and the others do not. Every kernel is checked against
a float64 reference of one head before it is timed.

  python3 benchmarks/gpu/bench.py --bundle build/gpu-bundle [--out DIR]
"""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernel import Kernel, Runtime  # noqa: E402


def reference_head(q, k, v, causal):
    """float64 attention of batch 0, head 0."""
    q, k, v = (t[0, 0].double() for t in (q, k, v))
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def relative_error(out, ref):
    return float((out[0, 0].double() - ref).norm() / ref.norm())


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default="build/gpu-bundle")
    parser.add_argument("--out")
    parser.add_argument("--lengths", default="")
    args = parser.parse_args()
    import triton.testing
    from triton_attention import attention as triton_attention

    manifest = json.load(open(os.path.join(args.bundle, "manifest.json")))
    runtime = Runtime(args.bundle)
    runtime.use_stream(torch.cuda.current_stream())
    lengths = {int(s) for s in args.lengths.split(",") if s}
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}")

    rows = []
    for cfg in manifest["bench"]:
        if lengths and cfg["S"] not in lengths:
            continue
        B, H, S, D, causal = cfg["B"], cfg["H"], cfg["S"], cfg["D"], cfg["causal"]
        q, k, v = (torch.randn(B, H, S, D, dtype=torch.bfloat16, device="cuda") for _ in range(3))
        ours = Kernel(runtime, os.path.join(args.bundle, cfg["library"]), cfg["symbol"])
        out = torch.full_like(q, float("nan"))

        def attn_mlir():
            ours(q, k, v, out)
            return out

        def torch_backend(backend):
            def call():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return call

        peers = {"attn-mlir": attn_mlir,
                 "torch flash": torch_backend(SDPBackend.FLASH_ATTENTION),
                 "torch cuDNN": torch_backend(SDPBackend.CUDNN_ATTENTION),
                 "triton": lambda: triton_attention(q, k, v, causal)}
        ref = reference_head(q, k, v, causal)
        flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
        row = {"S": S, "causal": causal}
        for name, fn in peers.items():
            try:
                error = relative_error(fn(), ref)
                ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
                row[name] = {"ms": ms, "tflops": flops / ms * 1e-9, "rel_error": error}
            except Exception as e:  # a backend this machine lacks
                row[name] = {"error": str(e).splitlines()[0][:120]}
        rows.append(row)
        cells = []
        for name in peers:
            r = row[name]
            cells.append(f"{name} {r['ms']:.3f} ms {r['tflops']:.0f} TF/s err {r['rel_error']:.1e}"
                         if "ms" in r else f"{name} n/a ({r['error']})")
        flash = row["torch flash"].get("ms")
        ratio = f" | attn-mlir/flash speed {flash / row['attn-mlir']['ms']:.2f}" \
            if flash and "ms" in row["attn-mlir"] else ""
        print(f"S={S:5d} {'causal' if causal else 'full  '} | " + " | ".join(cells) + ratio,
              flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        json.dump(rows, open(os.path.join(args.out, "bench.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
