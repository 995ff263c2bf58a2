#!/usr/bin/env python3
# ===- run.py - attention benchmark: attn-mlir against its peers -----------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# One command, after the README build, that builds nothing of the project:
#
#   build/venv/bin/python3 benchmarks/run.py [--quick] [--plot benchmarks/sweep.png]
#
# For every problem of the sweep it compiles the attention with attnc, runs
# it and every installed peer (NumPy, torch SDPA, ONNX Runtime, IREE) on the
# same float32 inputs in the same process, checks each peer's output against
# attn-mlir's, and prints a Markdown table of min time, GFLOP/s and the
# ratio to attn-mlir; the machine's fp32 FMA peak (build/bin/attn-fma-peak)
# is measured before and after the sweep, and its memory read bandwidth
# (build/bin/attn-mem-bandwidth) once: decode rows also say how close
# attn-mlir comes to the time of reading Q, K, V and the output once at that
# bandwidth (the "floor"). Times are the minimum over
# --repeat calls after one warm-up call; peers run interleaved, call by
# call, so that a noisy neighbour slows all of them alike, and each call
# starts 0.25 s after the previous one so that no peer's OpenMP threads are
# still spinning on the cores (time_interleaved). GFLOP/s count
# the multiply-adds of Q K^T and P V over the (query, key) pairs that take
# part (causal counts half), 2 FLOP each.
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import DEFAULT_PEERS, PEERS, AttnMlir, Config, Unavailable  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sweep(args):
    """The problems: per S, full and causal self-attention at each D, GQA
    (Llama-3 style, Hq=32 over Hkv=8, causal) and single-query decode
    against an S-long cache for each of --decode-batches."""
    configs = []
    for s in args.seq:
        for d in args.dims:
            for causal in (False, True):
                configs.append(Config(1, args.heads, args.heads, s, s, d, causal))
        configs.append(Config(1, 32, 8, s, s, 128, True))
        for batch in args.decode_batches:
            configs.append(Config(batch, 32, 8, 1, s, 128, False))
    return configs


def cpu_model(build):
    """The CPU every number of a run is measured on, as attnc's target model
    names it (the OS's model name and LLVM's CPU), plus its core count."""
    attnc = os.path.join(build, "bin", "attnc")
    out = subprocess.run([attnc, "--print-target"], capture_output=True,
                         text=True, check=True).stderr
    target = out.splitlines()[0].removeprefix("target: ")
    return f"{target}, {os.cpu_count()} CPUs"


def fma_peak(build):
    probe = os.path.join(build, "bin", "attn-fma-peak")
    if not os.path.exists(probe):
        return None, "attn-fma-peak not built"
    out = subprocess.run([probe], capture_output=True, text=True, check=True).stdout
    return float(out.split()[-2]), out.strip()


def mem_bandwidth(build, mib=512):
    """(GB/s of every thread reading memory no cache holds, the probe's
    line), or (None, why not) where the probe is not built."""
    probe = os.path.join(build, "bin", "attn-mem-bandwidth")
    if not os.path.exists(probe):
        return None, "attn-mem-bandwidth not built"
    out = subprocess.run([probe, str(os.cpu_count()), str(mib)], capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[-2]), out.strip()


# OpenMP runtimes keep their threads spinning after a parallel region
# (LLVM's libomp for 200 ms, KMP_BLOCKTIME; torch's own runtime likewise):
# a peer called right after another one shares the cores with its spinning
# threads. Measured on a 2-core Zen 5: the same attn-mlir library ran 1.6x
# slower when called right after torch. Every timed call therefore starts
# after the others' threads have gone to sleep.
SETTLE_SECONDS = 0.25


def time_interleaved(runs, repeat, settle=SETTLE_SECONDS, burst=1):
    """Min seconds per peer; one warm-up call each, then `repeat` rounds in
    which every peer runs `burst` calls back to back, each burst `settle`
    seconds after the last call ended. A round's time is its one call, or
    with burst > 1 the mean of its calls after the first: the steady state
    of a loop of calls (the first call after an idle spell also wakes the
    peer's threads and caches, which costs a short call up to a half)."""
    for run in runs.values():
        run()
    best = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            time.sleep(settle)
            start = time.perf_counter()
            run()
            if burst > 1:
                start = time.perf_counter()
                for _ in range(burst - 1):
                    run()
            best[name] = min(best[name], (time.perf_counter() - start) / max(burst - 1, 1))
    return best


def relative_error(x, reference):
    return float(np.linalg.norm(x - reference) / np.linalg.norm(reference))


def main():
    p = argparse.ArgumentParser(
        description="attn-mlir against NumPy, torch, ONNX Runtime and IREE")
    p.add_argument("--seq", type=int, nargs="+",
                   default=[512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--dims", type=int, nargs="+", default=[64, 128])
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--decode-batches", type=int, nargs="+", default=[1],
                   help="batch sizes of the decode problems")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--peers", nargs="+", default=DEFAULT_PEERS,
                   choices=list(PEERS), help="peers to run where installed")
    p.add_argument("--kinds", nargs="+", choices=["full", "causal", "gqa", "decode"],
                   default=["full", "causal", "gqa", "decode"])
    p.add_argument("--quick", action="store_true",
                   help="S = 512 ... 4096 and one repeat: a smoke run")
    p.add_argument("--pipeline", help="--cpu-pipeline options for attnc")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--plot", help="write a PNG of GFLOP/s against S here")
    args = p.parse_args()
    if args.quick:
        args.seq = [s for s in args.seq if s <= 4096]
        args.repeat = 1

    ours = AttnMlir(os.path.join(args.build, "bin", "attnc"), args.pipeline)
    peers = [PEERS[name](args.build) for name in args.peers]
    peak, peak_text = fma_peak(args.build)
    print(f"# CPU: {cpu_model(args.build)}")
    print(f"# {peak_text}", flush=True)
    bandwidth = None
    if "decode" in args.kinds:
        bandwidth, bandwidth_text = mem_bandwidth(args.build)
        print(f"# {bandwidth_text}", flush=True)
    print(f"| problem | {ours.name} ms (GFLOP/s) | "
          + " | ".join(f"{p.name} ms (GFLOP/s, ×)" for p in peers) + " |")
    print("|---|---|" + "---|" * len(peers), flush=True)

    rng = np.random.default_rng(0)
    rows = []
    for cfg in sweep(args):
        if cfg.kind not in args.kinds:
            continue
        q = rng.standard_normal((cfg.B, cfg.Hq, cfg.Sq, cfg.D), np.float32)
        k, v = (rng.standard_normal((cfg.B, cfg.Hkv, cfg.Skv, cfg.D), np.float32)
                for _ in range(2))
        runs, notes = {ours.name: ours.prepare(cfg, q, k, v)}, {}
        reference = runs[ours.name]().copy()
        for peer in peers:
            try:
                run = peer.prepare(cfg, q, k, v)
                error = relative_error(run(), reference)
                if error > 1e-3:
                    notes[peer.name] = f"disagrees (relative error {error:.1e})"
                    continue
                runs[peer.name] = run
            except Unavailable as reason:
                notes[peer.name] = str(reason)
            except Exception as failure:  # a peer's own error, reported
                notes[peer.name] = f"failed: {str(failure).splitlines()[0][:80]}"
        best = time_interleaved(runs, args.repeat)
        gflops = {name: cfg.flops() / t * 1e-9 for name, t in best.items()}
        mine = best[ours.name]
        cells = [f"{mine * 1e3:.1f} ({gflops[ours.name]:.1f})"]
        if cfg.kind == "decode" and bandwidth:
            floor = cfg.bytes_read() / (bandwidth * 1e9)
            cells[0] += f" {floor / mine:.0%} of floor"
        for peer in peers:
            if peer.name in best:
                t = best[peer.name]
                cells.append(f"{t * 1e3:.1f} ({gflops[peer.name]:.1f}, {t / mine:.2f}×)")
            else:
                cells.append(notes[peer.name])
        print(f"| {cfg.kind} {cfg.label()} | " + " | ".join(cells) + " |", flush=True)
        rows.append((cfg, gflops))

    after, after_text = fma_peak(args.build)
    print(f"# after the sweep: {after_text}")
    if peak and after:
        peak = max(peak, after)
        print(f"# best fp32 FMA peak {peak:.1f} GFLOP/s; × = peer time / "
              f"{ours.name} time (above 1: attn-mlir is faster)")
    if args.plot:
        plot(rows, [ours.name] + [p.name for p in peers], peak, args.plot, args.build)
        print(f"# plot: {args.plot}")


def plot(rows, names, peak, path, build):
    """The sweep as GFLOP/s curves, one panel per (kind, D), drawn by
    attn_mlir.viz (the package the build lays out)."""
    sys.path.insert(0, os.path.join(build, "python_packages"))
    from attn_mlir import viz

    panels = {}
    for kind, d in sorted({(c.kind, c.D) for c, _ in rows}, key=str):
        points = [(c, g) for c, g in rows if (c.kind, c.D) == (kind, d)]
        c = points[0][0]
        heads = f"H={c.Hq}" if c.Hq == c.Hkv else f"Hq={c.Hq}/Hkv={c.Hkv}"
        panels[f"{kind}, {heads}, D={d}"] = {
            name: [(c.Skv, g[name]) for c, g in points if name in g] for name in names}
    viz.line_panels(panels, path, reference=peak, reference_label="fp32 FMA peak")


if __name__ == "__main__":
    main()
