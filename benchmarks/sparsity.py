#!/usr/bin/env python3
# ===- sparsity.py - sparse and efficient attention against dense ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/sparsity.py [--seq 8192] [--heads 8] [--dim 64]
#                                  [--plot benchmarks/sparsity.png]
#
# Compiles one attn.sdpa per mask variant with attnc (the default CPU
# pipeline, so attn-sparsify and attn-tile decide what to skip), runs every
# variant and the dense attention of the same shape on the same inputs,
# interleaved call by call in one process, and prints each variant's min
# time and its ratio to the dense time. Every variant's output is checked
# against a NumPy float64 evaluation of the same mask on a sample of query
# rows. The variants:
#   causal            the diagonal mask (statically classified)
#   window-256        each query sees itself and the 255 keys before it
#   all-visible       window wider than S: every tile full; a full tile must
#                     cost what an unmasked one does (ratio ~1)
#   prefix-lm         mask_mod `kv < S/8 or kv <= q`, analysed to a band
#   documents-8       mask_mod comparing per-token document ids read from a
#                     tensor argument (8 equal documents): run-time classes
#   block-sparse-10%  a CSR layout listing 10% of the 128 x 64 blocks
#   logsparse         LogSparse-style CSR: each query block sees its own and
#                     the previous block and blocks 2^k back
#   linformer-RANK    K and V projected along the sequence to --rank rows
#                     (E K, F V; a composition of linalg and attn.sdpa)
#
# ===----------------------------------------------------------------------=== #

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import memref  # noqa: E402
from run import cpu_model, time_interleaved  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QB, KB = 128, 64  # the default tiles of attn-cpu-pipeline


def csr(listed):
    """CSR offsets and indices of a [query blocks, key blocks] bool table."""
    offsets = np.concatenate([[0], np.cumsum(listed.sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(listed)[1].astype(np.int32)
    return offsets, indices


def dense_of_blocks(listed, S):
    return np.repeat(np.repeat(listed, QB, axis=0), KB, axis=1)[:S, :S]


def logsparse_blocks(S):
    """Query block r (QB rows) sees the key blocks (KB keys) of its own
    diagonal, the one before, and those 2^k query blocks back."""
    nq, nk = -(-S // QB), -(-S // KB)
    listed = np.zeros((nq, nk), bool)
    for r in range(nq):
        back = [0, 1] + [2 ** k for k in range(1, 32) if 2 ** k <= r]
        for d in back:
            if r - d < 0:
                continue
            first = (r - d) * QB // KB
            listed[r, first:min(nk, ((r - d + 1) * QB + KB - 1) // KB)] = True
    return listed


def variants(S, rank, rng):
    """name -> (attributes, regions, extra args [(name, array, type)],
    keep(rows, cols) -> bool array, or None for Linformer)."""
    i32 = lambda n: f"tensor<{n}xi32>"
    docs = (np.arange(S) // (S // 8)).astype(np.int32)
    random = rng.random((-(-S // QB), -(-S // KB))) < 0.10
    logsparse = logsparse_blocks(S)
    out = {
        "dense": ("", "", [], lambda i, j: np.ones((len(i), len(j)), bool)),
        "causal": ("causal", "", [], lambda i, j: j[None] <= i[:, None]),
        "window-256": ("window = [255, 0]", "", [],
                       lambda i, j: (j[None] <= i[:, None]) & (j[None] >= i[:, None] - 255)),
        "all-visible": (f"window = [{S}, {S}]", "", [],
                        lambda i, j: np.ones((len(i), len(j)), bool)),
        "prefix-lm": ("", f"""mask_mod {{
       ^bb0(%b: index, %h: index, %i: index, %j: index):
         %p = arith.constant {S // 8} : index
         %in_prefix = arith.cmpi slt, %j, %p : index
         %past = arith.cmpi sle, %j, %i : index
         %keep = arith.ori %in_prefix, %past : i1
         attn.yield %keep : i1
       }}""", [], lambda i, j: (j[None] < S // 8) | (j[None] <= i[:, None])),
        "documents-8": ("", f"""mask_mod {{
       ^bb0(%b: index, %h: index, %i: index, %j: index):
         %di = tensor.extract %docs[%i] : {i32(S)}
         %dj = tensor.extract %docs[%j] : {i32(S)}
         %same = arith.cmpi eq, %di, %dj : i32
         attn.yield %same : i1
       }}""", [("docs", docs, i32(S))], lambda i, j: docs[i][:, None] == docs[j][None]),
    }
    for name, listed in (("block-sparse-10%", random), ("logsparse", logsparse)):
        offsets, indices = csr(listed)
        table = dense_of_blocks(listed, S)
        out[name] = (f"block_size = [{QB}, {KB}]", "",
                     [("offsets", offsets, i32(len(offsets))),
                      ("indices", indices, i32(len(indices)))],
                     lambda i, j, t=table: t[i][:, j])
    out[f"linformer-{rank}"] = ("", "", [], None)
    return out


def source(name, spec, B, H, S, D, rank):
    attrs, regions, extra, _ = spec
    t = f"tensor<{B}x{H}x{S}x{D}xf32>"
    args = [f"%q: {t}", f"%k: {t}", f"%v: {t}"] + [f"%{n}: {ty}" for n, _, ty in extra]
    blocks = ""
    if any(n == "offsets" for n, _, _ in extra):
        ty = {n: ty for n, _, ty in extra}
        blocks = f"blocks(%offsets, %indices : {ty['offsets']}, {ty['indices']}) "
    if name.startswith("linformer"):
        # K and V projected along the sequence: K' = E K, V' = F V with
        # E, F : [rank, S] (Linformer's shared projection), then attention
        # over `rank` keys: O(S * rank).
        tp = f"tensor<{B}x{H}x{rank}x{D}xf32>"
        args += [f"%e: tensor<{rank}x{S}xf32>", f"%f: tensor<{rank}x{S}xf32>"]
        project = lambda x, w, r: f"""
  %{r}0 = tensor.empty() : {tp}
  %{r}z = arith.constant 0.0 : f32
  %{r}i = linalg.fill ins(%{r}z : f32) outs(%{r}0 : {tp}) -> {tp}
  %{r} = linalg.generic {{indexing_maps = [affine_map<(b, h, r, d, s) -> (r, s)>,
      affine_map<(b, h, r, d, s) -> (b, h, s, d)>, affine_map<(b, h, r, d, s) -> (b, h, r, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}}
      ins(%{w}, %{x} : tensor<{rank}x{S}xf32>, {t}) outs(%{r}i : {tp}) {{
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %m = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  }} -> {tp}"""
        body = project("k", "e", "kp") + project("v", "f", "vp") + f"""
  %init = tensor.empty() : {t}
  %o = attn.sdpa %q, %kp, %vp outs(%init) : {t}, {tp}, {tp} -> {t}"""
    else:
        body = f"""
  %init = tensor.empty() : {t}
  %o = attn.sdpa %q, %k, %v {blocks}outs(%init) {attrs} : {t}, {t}, {t} -> {t} {regions}"""
    return f"func.func @sdpa({', '.join(args)}) -> {t} {{{body}\n  return %o : {t}\n}}\n"


def reference_rows(q, k, v, keep, rows):
    """O for `rows` of head 0 in float64 with the boolean `keep`."""
    qs = q[0, 0, rows].astype(np.float64)
    s = qs @ k[0, 0].astype(np.float64).T / np.sqrt(q.shape[-1])
    mask = keep(rows, np.arange(k.shape[2]))
    s = np.where(mask, s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    total = e.sum(axis=1, keepdims=True)
    p = np.where(total > 0, e / np.where(total > 0, total, 1), 0)
    return p @ v[0, 0].astype(np.float64)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seq", type=int, default=8192)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--rank", type=int, default=256, help="Linformer's k")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--only", nargs="*", help="variants to run (dense always runs)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--plot", help="write the ratios as a PNG (attn_mlir.viz, matplotlib)")
    a = p.parse_args()
    B, H, S, D = 1, a.heads, a.seq, a.dim
    print(f"# CPU: {cpu_model(a.build)}", flush=True)
    rng = np.random.default_rng()
    q, k, v = (rng.standard_normal((B, H, S, D)).astype(np.float32) for _ in range(3))
    e = (rng.standard_normal((a.rank, S)) / np.sqrt(S)).astype(np.float32)
    f = (rng.standard_normal((a.rank, S)) / np.sqrt(S)).astype(np.float32)
    work = tempfile.mkdtemp(prefix="attn-sparsity-")
    specs = variants(S, a.rank, rng)
    if a.only:
        specs = {n: s for n, s in specs.items() if n == "dense" or n in a.only}
    runs, outputs, failures = {}, {}, []
    for name, spec in specs.items():
        stem = os.path.join(work, name.replace("%", ""))
        with open(stem + ".mlir", "w") as fh:
            fh.write(source(name, spec, B, H, S, D, a.rank))
        subprocess.run([os.path.join(a.build, "bin", "attnc"), stem + ".mlir",
                        "--emit=shared", "-o", stem + ".so"], check=True)
        function = ctypes.CDLL(stem + ".so")._mlir_ciface_sdpa
        out = np.full((B, H, S, D), np.nan, np.float32)
        operands = [q, k, v] + [x for _, x, _ in spec[2]]
        if name.startswith("linformer"):
            operands += [e, f]
        descriptors = [memref(np.ascontiguousarray(x)) for x in operands + [out]]
        pointers = [ctypes.byref(d) for d in descriptors]
        runs[name] = (lambda fn=function, ps=pointers: fn(*ps))
        outputs[name] = out
    best = time_interleaved(runs, a.repeat)

    sample = np.sort(rng.choice(S, size=min(S, 48), replace=False))
    print(f"B={B} H={H} S={S} D={D} f32, min of {a.repeat} calls, same process\n")
    print("| variant | time (ms) | / dense | output check |")
    print("|---|---:|---:|---|")
    for name, spec in specs.items():
        if spec[3] is None:
            kp = np.einsum("rs,bhsd->bhrd", e.astype(np.float64), k)
            vp = np.einsum("rs,bhsd->bhrd", f.astype(np.float64), v)
            want = reference_rows(q, kp, vp, lambda i, j: np.ones((len(i), len(j)), bool), sample)
        else:
            want = reference_rows(q, k, v, spec[3], sample)
        got = outputs[name][0, 0, sample].astype(np.float64)
        err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
        ok = np.all(np.isfinite(got)) and err < 1e-4
        if not ok:
            failures.append(name)
        print(f"| {name} | {best[name] * 1e3:.1f} | {best[name] / best['dense']:.3f} | "
              f"{'ok' if ok else 'WRONG'} ({err:.1e}) |")
    if a.plot:
        sys.path.insert(0, os.path.join(a.build, "python_packages"))
        from attn_mlir import viz

        viz.ratio_bars({n: best[n] / best["dense"] for n in specs}, a.plot,
                       f"attn-mlir, B={B} H={H} S={S} D={D} f32: time / dense")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
