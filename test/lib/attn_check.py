#!/usr/bin/env python3
# ===- attn_check.py - run attn ops on the CPU and compare with float64 ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Builds a small module around one attn op from command-line options, runs
# it with `attn-run` (the CPU pipeline, JIT) on fresh random inputs passed as
# .npy files, with a NaN destination and NaN-poisoned outputs, and compares
# every output with a float64 NumPy implementation of the op's documented
# semantics: an oracle independent of the compiler, where `attn-run --check`
# compares with the compiler's own float64 lowering. Prints the relative
# error and exits 1 above tolerance.
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}
# Any one row's (attn-run --check's per-row tolerances).
ROW_TOL = {"f32": 1e-4, "f16": 2e-2, "bf16": 2e-2}
MASK64 = (1 << 64) - 1

# --------------------------------------------------------------------------- #
# Element types
# --------------------------------------------------------------------------- #


def round_to(x, dtype):
    """Rounds float64 data to what `dtype` can hold (bf16: nearest even)."""
    if dtype == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def tensor_type(shape, dtype, dynamic=False):
    dims = "x".join("?" if dynamic else str(d) for d in shape)
    return f"tensor<{dims}x{dtype}>" if shape else f"tensor<{dtype}>"


# --------------------------------------------------------------------------- #
# Reference semantics (docs/Numerics.md)
# --------------------------------------------------------------------------- #


def mix64(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def dropout_uniform(seed, shape):
    u = np.empty(shape)
    for idx in np.ndindex(*shape):
        h = seed & MASK64
        for i in idx:
            h = mix64(h ^ i)
        u[idx] = np.float32(h >> 40) * np.float32(1.0 / (1 << 24))
    return u


# Modifier regions: MLIR text, the NumPy function they compute and, for
# score_mod, its derivative with respect to the score (for attn.sdpa_grad).
SCORE_MODS = {
    # ALiBi-like relative bias: s + 0.25 * (j - i) * (h + 1).
    "alibi": ("""
       ^bb0(%r_s: f32, %r_b: index, %r_h: index, %r_i: index, %r_j: index):
         %r_d = arith.subi %r_j, %r_i : index
         %r_c1 = arith.constant 1 : index
         %r_h1 = arith.addi %r_h, %r_c1 : index
         %r_p = arith.muli %r_d, %r_h1 : index
         %r_pi = arith.index_cast %r_p : index to i64
         %r_pf = arith.sitofp %r_pi : i64 to f32
         %r_q = arith.constant 0.25 : f32
         %r_bias = arith.mulf %r_pf, %r_q : f32
         %r_r = arith.addf %r_s, %r_bias : f32
         attn.yield %r_r : f32""",
              lambda s, b, h, i, j: s + 0.25 * (j - i) * (h + 1),
              lambda s, b, h, i, j: np.ones_like(s)),
    # Soft-capping as in Gemma 2: 2 * tanh(s / 2).
    "softcap": ("""
       ^bb0(%r_s: f32, %r_b: index, %r_h: index, %r_i: index, %r_j: index):
         %r_c = arith.constant 2.0 : f32
         %r_x = arith.divf %r_s, %r_c : f32
         %r_t = math.tanh %r_x : f32
         %r_r = arith.mulf %r_t, %r_c : f32
         attn.yield %r_r : f32""",
                lambda s, b, h, i, j: 2.0 * np.tanh(s / 2.0),
                lambda s, b, h, i, j: 1.0 - np.tanh(s / 2.0) ** 2),
}
MASK_MODS = {
    # Keys with an index of the same parity as the batch.
    "parity": ("""
       ^bb0(%r_b: index, %r_h: index, %r_i: index, %r_j: index):
         %r_c2 = arith.constant 2 : index
         %r_x = arith.addi %r_b, %r_j : index
         %r_r = arith.remui %r_x, %r_c2 : index
         %r_c0 = arith.constant 0 : index
         %r_k = arith.cmpi eq, %r_r, %r_c0 : index
         attn.yield %r_k : i1""",
               lambda b, h, i, j: (b + j) % 2 == 0),
    # Nothing is kept: every row is fully masked and must give zeros.
    "none": ("""
       ^bb0(%r_b: index, %r_h: index, %r_i: index, %r_j: index):
         %r_f = arith.constant false
         attn.yield %r_f : i1""",
             lambda b, h, i, j: np.zeros(np.broadcast(b, h, i, j).shape, bool)),
}


def softmax(s):
    """Max-subtracted softmax over the last axis (fully masked rows give 0)."""
    m = s.max(axis=-1, keepdims=True)
    m = np.where(m == -np.inf, 0.0, m)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total == 0, 0.0, e / np.where(total == 0, 1.0, total))


def dropout_factor(a, shape):
    """What dropout multiplies each probability by: 0 where the documented
    hash drops it, 1 / (1 - p) elsewhere (1 without dropout)."""
    if a.dropout <= 0:
        return np.ones(shape)
    u = dropout_uniform(a.seed, shape)
    return np.where(u >= np.float32(a.dropout), 1 / (1 - a.dropout), 0.0)


def softmax_dropout(s, a):
    """softmax, then dropout by the documented hash."""
    p = softmax(s)
    return p * dropout_factor(a, p.shape)


def reference_probs(a, q, k, mask, kv_lens):
    """P = dropout(softmax(mask(scale * Q K^T))), float64."""
    return softmax_dropout(reference_scores(a, q, k, mask, kv_lens)[0], a)


def reference_scores(a, q, k, mask, kv_lens):
    """The modified scores mask(scale * Q K^T) (-inf where a key takes no
    part) and, per element, the derivative of the score with respect to the
    raw product q.k (scale times score_mod's derivative), float64."""
    B, Hq, Sq, D = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    kr = np.repeat(k, Hq // Hkv, axis=1)
    scale = a.scale if a.scale is not None else 1.0 / np.sqrt(D)
    s = scale * np.einsum("bhid,bhjd->bhij", q, kr)
    b, h, i, j = np.meshgrid(np.arange(B), np.arange(Hq), np.arange(Sq),
                             np.arange(Skv), indexing="ij")
    keep = np.ones(s.shape, bool)
    if mask is not None:
        if mask.dtype == np.bool_:
            keep &= np.broadcast_to(mask, s.shape)
        else:
            s = s + mask
    derivative = np.full(s.shape, scale)
    if a.score_mod:
        derivative = derivative * SCORE_MODS[a.score_mod][2](s, b, h, i, j)
        s = SCORE_MODS[a.score_mod][1](s, b, h, i, j)
    if a.mask_mod:
        keep &= MASK_MODS[a.mask_mod][1](b, h, i, j)
    length = np.full(s.shape, Skv)
    if kv_lens is not None:
        length = kv_lens[b]
        keep &= j < length
    diag = i + (length - Sq if a.align == "bottom_right" else 0)
    if a.causal:
        keep &= j <= diag
    if a.window:
        left, right = a.window
        keep &= (j >= diag - left) & (j <= diag + right)
    return np.where(keep, s, -np.inf), derivative


# --------------------------------------------------------------------------- #
# Module construction and execution
# --------------------------------------------------------------------------- #


def score_attrs(a):
    parts = []
    if a.scale is not None and not a.runtime_scale:
        parts.append(f"scale = {a.scale!r}")
    if a.causal:
        parts.append("causal")
    if a.window:
        parts.append(f"window = [{a.window[0]}, {a.window[1]}]")
    if a.align != "top_left":
        parts.append(f"align = <{a.align}>")
    if a.dropout > 0:
        parts.append(f"dropout = {a.dropout!r}" +
                     ("" if a.runtime_seed else f" seed = {a.seed}"))
    return " ".join(parts)


def regions(a):
    text = ""
    if a.score_mod:
        text += " score_mod {" + SCORE_MODS[a.score_mod][0] + "\n       }"
    if a.mask_mod:
        text += " mask_mod {" + MASK_MODS[a.mask_mod][0] + "\n       }"
    return text


def wrap(entry_args, entry_body, entry_results):
    """A module with the single function @entry: the op under test, taking
    all inputs as arguments (possibly with dynamic shapes)."""
    sig = ", ".join(f"%{n}: {t}" for n, t in entry_args)
    res = ", ".join(t for t, _ in entry_results)
    lines = ["module {", f"  func.func @entry({sig}) -> ({res}) {{"]
    lines += ["    " + l for l in entry_body]
    lines += ["  }", "}"]
    return "\n".join(lines)


NUMPY_TYPE = {"f32": np.float32, "f16": np.float16, "bf16": np.float32,
              "i1": np.bool_, "i32": np.int32, "i64": np.int64}


def run_module(text, inputs, num_results, a):
    """Runs @entry with `attn-run` on `inputs` [(name, array, element type)],
    passed as .npy files; returns the results as float64 arrays. attn-run
    compiles for `--target` (the CPU or the CUDA pipeline) and poisons the
    outputs with NaN."""
    with tempfile.TemporaryDirectory() as tmp:
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
        path = os.path.join(a.keep or tmp, "entry.mlir")
        with open(path, "w") as f:
            f.write(text)
        files = []
        for name, value, et in inputs:
            files.append(os.path.join(tmp, f"{name}.npy"))
            # (np.ascontiguousarray would make a 0-D seed 1-D.)
            np.save(files[-1], np.array(value.astype(NUMPY_TYPE[et]), order="C"))
        outs = [os.path.join(tmp, f"out{i}.npy") for i in range(num_results)]
        command = [a.attn_run, path, "--entry=entry", "--inputs=" + ",".join(files),
                   "--outputs=" + ",".join(outs)]
        command.append("--target=" + a.target)
        if a.pipeline:
            command.append("--cpu-pipeline=" + a.pipeline)
        ran = subprocess.run(command, capture_output=True, text=True)
        if ran.returncode:
            sys.exit("attn-run failed:\n" + ran.stdout + ran.stderr)
        return [np.load(o).astype(np.float64) for o in outs]


def compare(name, got, want, dtype):
    """The whole output's relative error and the largest row error (rows of
    the last dimension), as `attn-run --check` computes them: both must be
    within tolerance. A row is compared relative to itself, or to a tenth of
    a typical (nonzero) row where it is smaller than that: a gradient row that cancels
    to 0 (the query gradient of a row with one visible key) is 0 up to the
    rounding of its terms, not up to its own rounding."""
    got = got.reshape(want.shape)
    if not np.all(np.isfinite(got)):
        print(f"{name}: FAIL, {np.sum(~np.isfinite(got))} non-finite values")
        return False
    denom = np.linalg.norm(want)
    err = np.linalg.norm(got - want) / (denom if denom > 0 else 1.0)
    rows_got = got.reshape(-1, want.shape[-1] if want.ndim else 1)
    rows_want = want.reshape(rows_got.shape)
    row_diff = np.linalg.norm(rows_got - rows_want, axis=1)
    row_norm = np.linalg.norm(rows_want, axis=1)
    typical = denom / np.sqrt(max(np.count_nonzero(row_norm), 1))
    floor = 0.1 * typical if typical > 0 else 1.0
    row_err = row_diff / np.maximum(row_norm, floor)
    worst = int(np.argmax(row_err)) if row_err.size else 0
    worst_index = list(np.unravel_index(worst, want.shape[:-1])) if want.ndim > 1 else []
    max_row = float(row_err.max()) if row_err.size else 0.0
    ok = err < TOL[dtype] and max_row < ROW_TOL[dtype]
    print(f"{name}: relative error {err:.3e}, largest row error {max_row:.3e} at "
          f"{[int(i) for i in worst_index]} (tolerance {TOL[dtype]:.0e}, per row "
          f"{ROW_TOL[dtype]:.0e}) {'ok' if ok else 'FAIL'}")
    return ok


# --------------------------------------------------------------------------- #
# attn.sdpa / attn.weights
# --------------------------------------------------------------------------- #


def check_score_op(a, rng):
    B, Hq, Hkv, Sq, Skv, D, Dv = a.B, a.Hq, a.Hkv, a.Sq, a.Skv, a.D, a.Dv
    dt = a.dtype
    q = round_to(rng.standard_normal((B, Hq, Sq, D)), dt)
    k = round_to(rng.standard_normal((B, Hkv, Skv, D)), dt)
    v = round_to(rng.standard_normal((B, Hkv, Skv, Dv)), dt)
    args = [("q", q, dt), ("k", k, dt)]
    if a.op != "weights":
        args.append(("v", v, dt))
    mask = kv_lens = None
    mask_clause = ""
    if a.mask:
        kind, shape = a.mask.split(":")
        shape = tuple(int(x) for x in shape.split("x"))
        if kind == "bool":
            mask = rng.random(shape) < 0.7
            mtype = "i1"
        else:
            mask = round_to(rng.standard_normal(shape), kind)
            mask[rng.random(shape) < 0.2] = -60000.0  # masked out in every float type
            mtype = kind
        args.append(("m", mask, mtype))
        mask_clause += f"mask(%m : {tensor_type(shape, mtype, a.dynamic)}) "
    if a.kv_lens:
        kv_lens = np.array([int(x) for x in a.kv_lens.split(",")],
                           dtype=NUMPY_TYPE[a.kv_lens_type])
        args.append(("l", kv_lens, a.kv_lens_type))
        mask_clause += (f"kv_lens(%l : "
                        f"{tensor_type(kv_lens.shape, a.kv_lens_type, a.dynamic)}) ")
    if a.runtime_seed:
        # The seed as an operand (its value a.seed) instead of the attribute.
        args.append(("ds", np.array(a.seed, np.int64), "i64"))
        mask_clause += "dropout_seed(%ds : tensor<i64>) "
    if a.runtime_scale:
        # The scale as an operand (its value a.scale) instead of the attribute.
        args.append(("sc", np.array(a.scale, np.float32), "f32"))
        mask_clause += "scale_value(%sc : tensor<f32>) "

    if a.op == "sdpa_grad":
        return check_grad(a, rng, args, mask_clause, q, k, v, mask, kv_lens)
    if a.page_size:
        return check_paged(a, rng, args, mask_clause, q, k, v, mask, kv_lens)
    p = reference_probs(a, q, k, mask, kv_lens)
    if a.op == "sdpa":
        out_shape = (B, Hq, Sq, Dv)
        want = np.einsum("bhij,bhjd->bhid", p, np.repeat(v, Hq // Hkv, axis=1))
    else:
        out_shape = (B, Hq, Sq, Skv)
        want = p

    # The destination: NaN, so any element the op fails to write shows up
    # as a non-finite result.
    args.append(("init", np.full(out_shape, np.nan), dt))
    entry_args = [(name, tensor_type(value.shape, et, a.dynamic)) for name, value, et in args]

    types = ", ".join(t for n, t in entry_args if n in ("q", "k", "v"))
    out_type = tensor_type(out_shape, dt, a.dynamic)
    operands = "%q, %k, %v" if a.op == "sdpa" else "%q, %k"
    body = [f"%o = attn.{a.op} {operands} {mask_clause}outs(%init) {score_attrs(a)} : "
            f"{types} -> {out_type}{regions(a)}",
            f"return %o : {out_type}"]
    text = wrap(entry_args, body, [(out_type, out_shape)])
    (got,) = run_module(text, args, 1, a)
    return compare(f"attn.{a.op}", got, want, dt)


def layout_clause(a):
    return "" if a.page_layout == "nhd" else f" layout = <{a.page_layout}>"


def to_layout(a, cache):
    """A cache built as [num_pages, P, H, D] in --page-layout."""
    return cache if a.page_layout == "nhd" else np.ascontiguousarray(
        np.swapaxes(cache, 1, 2))


def from_layout(a, cache):
    return cache if a.page_layout == "nhd" else np.swapaxes(cache, 1, 2)


def paginate(a, kv, num_pages, page_ids, garbage):
    """`kv` [B, H, Skv, D] written into the pages of a cache in
    attn.gather_pages' layout --page-layout ([num_pages, page_size, H, D]
    for nhd): sequence b's m-th page is page_ids[b, m]. Every other
    position holds `garbage`: finite values that the op's key lengths must
    keep out."""
    B, H, Skv, D = kv.shape
    pages = garbage((num_pages, a.page_size, H, D))
    # Every key appended from position 0, through the sequence's pages.
    return to_layout(a, append_rows(pages, kv, page_ids, np.zeros(B, np.int64)))


def check_paged(a, rng, args, mask_clause, q, k, v, mask, kv_lens):
    """attn.sdpa whose K and V are attn.gather_pages of a paged cache, the
    pages of each sequence scattered at random among spare ones, one more
    table entry per sequence than it uses, holding a page out of range
    (which the op clamps, and kv_lens masks): against the oracle on the
    contiguous K and V."""
    B, Hq, Hkv, Sq, Skv = a.B, a.Hq, a.Hkv, a.Sq, a.Skv
    dt, P = a.dtype, a.page_size
    used = -(-Skv // P)
    num_pages = B * used + 3
    page_ids = rng.permutation(num_pages)[:B * used].reshape(B, used)
    table = np.concatenate(
        [page_ids, rng.choice([-1, num_pages, num_pages + 5], (B, 1))], axis=1)

    def garbage(shape):
        return round_to(rng.uniform(-4, 4, shape), dt)

    kc = paginate(a, k, num_pages, page_ids, garbage)
    vc = paginate(a, v, num_pages, page_ids, garbage)
    # The keys past Skv (the rest of the last page, the extra entry) are
    # garbage: key lengths keep them out, Skv where none are given.
    if kv_lens is None:
        kv_lens = np.full(B, Skv, NUMPY_TYPE[a.kv_lens_type])
        args = args + [("l", kv_lens, a.kv_lens_type)]
        mask_clause += (f"kv_lens(%l : "
                        f"{tensor_type(kv_lens.shape, a.kv_lens_type, a.dynamic)}) ")
    p = reference_probs(a, q, k, mask, kv_lens)
    want = np.einsum("bhij,bhjd->bhid", p, np.repeat(v, Hq // Hkv, axis=1))
    out_shape = want.shape
    args = [x for x in args if x[0] not in ("k", "v")]
    args += [("kc", kc, dt), ("vc", vc, dt), ("pt", table, a.page_table_type),
             ("init", np.full(out_shape, np.nan), dt)]
    entry_args = [(name, tensor_type(value.shape, et, a.dynamic))
                  for name, value, et in args]
    t = dict(entry_args)
    gathered = (B, Hkv, table.shape[1] * P)
    kt = tensor_type(gathered + (a.D,), dt, a.dynamic)
    vt = tensor_type(gathered + (a.Dv,), dt, a.dynamic)
    out_type = t["init"]
    lc = layout_clause(a)
    body = [f"%k = attn.gather_pages %kc[%pt]{lc} : {t['kc']}, {t['pt']} -> {kt}",
            f"%v = attn.gather_pages %vc[%pt]{lc} : {t['vc']}, {t['pt']} -> {vt}",
            f"%o = attn.sdpa %q, %k, %v {mask_clause}outs(%init) {score_attrs(a)} : "
            f"{t['q']}, {kt}, {vt} -> {out_type}{regions(a)}",
            f"return %o : {out_type}"]
    (got,) = run_module(wrap(entry_args, body, [(out_type, out_shape)]), args, 1, a)
    return compare(f"attn.sdpa over {P}-key pages ({a.page_layout})", got, want, dt)


def append_rows(cache, rows, table, positions):
    """attn.append_pages' semantics: rows [B, H, T, D] written into the
    cache at positions[b] + t through the table, skipping rows outside the
    table or whose entry is outside the cache."""
    cache = cache.copy()
    num_pages, P = cache.shape[0], cache.shape[1]
    for b in range(rows.shape[0]):
        for t in range(rows.shape[2]):
            p = int(positions[b]) + t
            if not 0 <= p < table.shape[1] * P:
                continue
            page = int(table[b, p // P])
            if 0 <= page < num_pages:
                cache[page, p % P] = rows[b, :, t, :]
    return cache


def gather(cache, table):
    """attn.gather_pages' semantics (entries clamped to the cache)."""
    pages = np.clip(table, 0, cache.shape[0] - 1)
    # [B, M, P, H, D] -> [B, H, M * P, D]
    g = cache[pages]
    B, M, P, H, D = g.shape
    return np.transpose(g, (0, 3, 1, 2, 4)).reshape(B, H, M * P, D)


def check_append(a, rng):
    """attn.append_pages of T = Sq new rows per sequence into a paged cache
    (the pages of each sequence scattered among spare ones), checked against
    the NumPy scatter. The compiled entry refuses positions whose rows do
    not fit the table and pages outside the cache; with
    --unchecked-positions the positions are computed in the function (from
    the parameter, which the entry then does not check) and the op's own
    rule is shown: one sequence writing past the end of its table, one
    table entry out of range, those rows dropped. With --decode-step, a whole
    generation step in one function: the new keys and values appended,
    then attn.sdpa of the Sq new queries over the gathered caches, causal
    bottom-right with kv_lens = positions + T."""
    B, Hq, Hkv, T, D, P = a.B, a.Hq, a.Hkv, a.Sq, a.D, a.page_size
    dt = a.dtype
    used = -(-(a.Skv + T) // P)
    num_pages = B * used + 2
    table = rng.permutation(num_pages)[:B * used].reshape(B, used)
    if a.unchecked_positions:
        positions = rng.integers(0, a.Skv + 1, B)
        # The last sequence runs past its table: its last rows are dropped.
        positions[-1] = used * P - 1 if T > 1 else positions[-1]
        if B > 1:
            table[0, -1] = num_pages + 3  # rows landing there are dropped
    else:
        positions = rng.integers(0, used * P - T + 1, B)
    ltype = a.kv_lens_type
    positions = positions.astype(NUMPY_TYPE[ltype])

    def cache():
        return to_layout(a, round_to(rng.uniform(-2, 2, (num_pages, P, Hkv, D)), dt))

    k_rows = round_to(rng.standard_normal((B, Hkv, T, D)), dt)
    args = [("kr", k_rows, dt), ("kc", cache(), dt)]
    if a.decode_step:
        args += [("vr", round_to(rng.standard_normal((B, Hkv, T, D)), dt), dt),
                 ("vc", cache(), dt),
                 ("q", round_to(rng.standard_normal((B, Hq, T, D)), dt), dt)]
    lens = np.minimum(positions.astype(np.int64) + T, used * P).astype(positions.dtype)
    args += [("pt", table, a.page_table_type), ("pos", positions, ltype)]
    if a.decode_step:
        args += [("lens", lens, ltype), ("init", np.full((B, Hq, T, D), np.nan), dt)]
    entry_args = [(name, tensor_type(value.shape, et, a.dynamic))
                  for name, value, et in args]
    t = dict(entry_args)
    v = {name: value for name, value, _ in args}

    lc = layout_clause(a)

    def append(rows, c):
        return (f"%{c}2 = attn.append_pages %{rows} into %{c}[%pt] at %p{lc} : "
                f"{t[rows]}, {t[c]}, {t['pt']}, {t['pos']} -> {t[c]}")

    # pos + (pos - pos): a value the function computes, not a parameter.
    body = ([f"%pz = arith.subi %pos, %pos : {t['pos']}",
             f"%p = arith.addi %pos, %pz : {t['pos']}"] if a.unchecked_positions else
            [f"%p = tensor.cast %pos : {t['pos']} to {t['pos']}"])
    body.append(append("kr", "kc"))
    # The oracle works on [num_pages, P, H, D] caches.
    k_cache = to_layout(a, append_rows(from_layout(a, v["kc"]), k_rows, table, positions))
    if not a.decode_step:
        body.append(f"return %kc2 : {t['kc']}")
        text = wrap(entry_args, body, [(t["kc"], None)])
        (got,) = run_module(text, args, 1, a)
        return compare("attn.append_pages", got, k_cache, dt)
    v_cache = to_layout(a, append_rows(from_layout(a, v["vc"]), v["vr"], table, positions))
    gt = tensor_type((B, Hkv, used * P, D), dt, a.dynamic)
    out_type = t["init"]
    body += [append("vr", "vc"),
             f"%k = attn.gather_pages %kc2[%pt]{lc} : {t['kc']}, {t['pt']} -> {gt}",
             f"%v = attn.gather_pages %vc2[%pt]{lc} : {t['vc']}, {t['pt']} -> {gt}",
             f"%o = attn.sdpa %q, %k, %v kv_lens(%lens : {t['lens']}) outs(%init) "
             f"causal align = <bottom_right> : {t['q']}, {gt}, {gt} -> {out_type}",
             f"return %o : {out_type}"]
    a.causal, a.align = True, "bottom_right"
    k = gather(from_layout(a, k_cache), table)
    vv = gather(from_layout(a, v_cache), table)
    p = reference_probs(a, v["q"], k, None, lens)
    want = np.einsum("bhij,bhjd->bhid", p, np.repeat(vv, Hq // Hkv, axis=1))
    (got,) = run_module(wrap(entry_args, body, [(out_type, None)]), args, 1, a)
    return compare("decode step (append_pages, gather_pages, sdpa)", got, want, dt)


def check_varlen(a, rng):
    """Varlen attention as the Python API builds it: packed q [Tq, Hq, D]
    and k, v [Tk, Hkv, D] padded per sequence by cu_seqlens
    (attn.pad_sequences; queries at the end of their rows, keys at the
    start), attn.sdpa with the keys' lengths and bottom-right scores, and
    the output packed back (attn.unpad_sequences) into a destination of
    finite values whose --extra-rows rows no sequence covers: against
    attention computed on each sequence alone (causal and windows
    bottom-right, as FlashAttention's varlen API)."""
    Hq, Hkv, D, Dv, dt = a.Hq, a.Hkv, a.D, a.Dv, a.dtype
    q_lens = [int(x) for x in a.seqlens_q.split(",")]
    k_lens = [int(x) for x in a.seqlens_k.split(",")] if a.seqlens_k else q_lens
    B, Sq, Skv = len(q_lens), a.Sq, a.Skv
    if len(k_lens) != B or max(q_lens) > Sq or max(k_lens) > Skv:
        sys.exit("--seqlens-q/--seqlens-k: one length per sequence, at most --Sq/--Skv")
    if a.causal or a.window:
        a.align = "bottom_right"
    Tq, Tk = sum(q_lens) + a.extra_rows, sum(k_lens) + a.extra_rows
    q = round_to(rng.standard_normal((Tq, Hq, D)), dt)
    k = round_to(rng.standard_normal((Tk, Hkv, D)), dt)
    v = round_to(rng.standard_normal((Tk, Hkv, Dv)), dt)
    et = a.kv_lens_type
    cu_q = np.concatenate([[0], np.cumsum(q_lens)]).astype(NUMPY_TYPE[et])
    cu_k = np.concatenate([[0], np.cumsum(k_lens)]).astype(NUMPY_TYPE[et])
    init = round_to(rng.uniform(-3, 3, (Tq, Hq, Dv)), dt)

    want = init.copy()
    for b in range(B):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if k_lens[b] == 0:  # no key: rows of zeros
            want[qs] = 0.0
            continue
        heads = lambda x: x[None].transpose(0, 2, 1, 3)  # [1, H, len, D]
        p = reference_probs(a, heads(q[qs]), heads(k[ks]), None, None)
        o = np.einsum("bhij,bhjd->bhid", p, np.repeat(heads(v[ks]), Hq // Hkv, axis=1))
        want[qs] = o[0].transpose(1, 0, 2)

    args = [("q", q, dt), ("k", k, dt), ("v", v, dt), ("cuq", cu_q, et),
            ("cuk", cu_k, et), ("init", init, dt)]
    entry_args = [(name, tensor_type(value.shape, t, a.dynamic)) for name, value, t in args]
    t = dict(entry_args)
    # The padded length is static; with --dynamic the batch is not.
    def padded(heads, length, dim):
        return f"tensor<{'?' if a.dynamic else B}x{heads}x{length}x{dim}x{dt}>"
    lens = f"tensor<{'?' if a.dynamic else B}x{et}>"
    qp, kp, vp, op = padded(Hq, Sq, D), padded(Hkv, Skv, D), padded(Hkv, Skv, Dv), padded(Hq, Sq, Dv)
    body = [f"%qp, %ql = attn.pad_sequences %q[%cuq] align = <bottom_right> : "
            f"{t['q']}, {t['cuq']} -> {qp}, {lens}",
            f"%kp, %kl = attn.pad_sequences %k[%cuk] : {t['k']}, {t['cuk']} -> {kp}, {lens}",
            f"%vp, %vl = attn.pad_sequences %v[%cuk] : {t['v']}, {t['cuk']} -> {vp}, {lens}",
            f"%c0 = arith.constant 0 : index",
            f"%nb = tensor.dim %qp, %c0 : {qp}",
            f"%e = tensor.empty({'%nb' if a.dynamic else ''}) : {op}",
            f"%o = attn.sdpa %qp, %kp, %vp kv_lens(%kl : {lens}) outs(%e) {score_attrs(a)} : "
            f"{qp}, {kp}, {vp} -> {op}",
            f"%r = attn.unpad_sequences %o[%cuq] align = <bottom_right> outs(%init) : "
            f"{op}, {t['cuq']} -> {t['init']}",
            f"return %r : {t['init']}"]
    (got,) = run_module(wrap(entry_args, body, [(t["init"], want.shape)]), args, 1, a)
    return compare(f"varlen attention ({B} sequences, q {q_lens}, k {k_lens})", got, want, dt)


def reference_grads(a, q, k, v, mask, kv_lens, out_grad, given_out):
    """The forward's output and log-sum-exp and the gradients of
    sum(out * out_grad) with respect to q, k and v, float64, by the chain
    rule written out (attn.sdpa_grad's description), with `given_out` as
    the O that attn.sdpa_grad takes (rowsum(dO * O) is computed from it)."""
    groups = q.shape[1] // k.shape[1]
    kr, vr = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    s, derivative = reference_scores(a, q, k, mask, kv_lens)
    p = softmax(s)
    factor = dropout_factor(a, p.shape)
    out = (p * factor) @ vr
    m = s.max(axis=-1)
    with np.errstate(divide="ignore"):
        lse = np.where(m == -np.inf, -np.inf,
                       np.log(np.exp(s - np.where(m == -np.inf, 0, m)[..., None])
                              .sum(axis=-1)) + np.where(m == -np.inf, 0, m))
    dv = np.swapaxes(p * factor, -1, -2) @ out_grad
    dp = (out_grad @ np.swapaxes(vr, -1, -2)) * factor
    row = (out_grad * given_out).sum(axis=-1, keepdims=True)
    ds = np.where(p == 0, 0.0, p * (dp - row) * derivative)
    dq = ds @ kr
    dk = np.swapaxes(ds, -1, -2) @ q

    def group_sum(x):
        return x.reshape(x.shape[0], -1, groups, *x.shape[2:]).sum(axis=2)

    return out, lse, dq, group_sum(dk), group_sum(dv)


def check_grad(a, rng, args, mask_clause, q, k, v, mask, kv_lens):
    """attn.sdpa with its log-sum-exp, then attn.sdpa_grad of its output for
    a random output gradient, in one function: the output and the three
    gradients against reference_grads."""
    B, Hq, Sq, Dv = q.shape[0], q.shape[1], q.shape[2], v.shape[3]
    dt = a.dtype
    out_grad = round_to(rng.standard_normal((B, Hq, Sq, Dv)), dt)
    args = args + [("do", out_grad, dt), ("init", np.full((B, Hq, Sq, Dv), np.nan), dt),
                   ("linit", np.full((B, Hq, Sq), np.nan), "f32"),
                   ("gq", np.full(q.shape, np.nan), dt), ("gk", np.full(k.shape, np.nan), dt),
                   ("gv", np.full(v.shape, np.nan), dt)]
    entry_args = [(name, tensor_type(value.shape, et, a.dynamic)) for name, value, et in args]
    t = dict(entry_args)
    attrs = score_attrs(a)
    body = [f"%o, %lse = attn.sdpa %q, %k, %v {mask_clause}outs(%init) "
            f"lse(%linit : {t['linit']}) {attrs} : {t['q']}, {t['k']}, {t['v']} -> "
            f"{t['init']}, {t['linit']}{regions(a)}",
            f"%dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse {mask_clause}"
            f"outs(%gq, %gk, %gv) {attrs} : {t['q']}, {t['k']}, {t['v']}, {t['init']}, "
            f"{t['linit']}{regions(a)}",
            f"return %o, %lse, %dq, %dk, %dv : {t['init']}, {t['linit']}, {t['q']}, "
            f"{t['k']}, {t['v']}"]
    results = [(t[n], None) for n in ("init", "linit", "q", "k", "v")]
    got = run_module(wrap(entry_args, body, results), args, 5, a)
    # The gradients are those at the O the function computed (in the
    # element type; checked against the exact one as "out").
    want = reference_grads(a, q, k, v, mask, kv_lens, out_grad, got[0])
    ok = True
    for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        if name == "lse":
            # -inf for rows with no key: equal there, compared elsewhere.
            empty = w == -np.inf
            if not np.array_equal(g == -np.inf, empty):
                print(f"lse: FAIL, -inf at {np.argwhere((g == -np.inf) != empty)[:4].tolist()}")
                ok = False
                continue
            g, w = np.where(empty, 0, g), np.where(empty, 0, w)
            # The log-sum-exp is computed in f32 whatever the inputs' type.
            ok &= compare("attn.sdpa lse", g, w, "f32")
            continue
        ok &= compare(f"attn.sdpa_grad {name}" if name != "out" else "attn.sdpa out",
                      g, w, dt)
    return ok


# --------------------------------------------------------------------------- #
# attn.multihead, checked against PyTorch's algorithm in float64
# --------------------------------------------------------------------------- #


def reference_multihead(a, t):
    """multi_head_attention_forward in float64 (with 0 for fully masked rows)."""
    E, H = a.E, a.heads
    q, k, v = t["query"], t["key"], t["value"]
    if a.unbatched:
        q, k, v = q[:, None], k[:, None], v[:, None]
    elif a.batch_first:
        q, k, v = (x.transpose(1, 0, 2) for x in (q, k, v))
    L, N, _ = q.shape
    S = k.shape[0]
    if "in_proj" in t:
        wq, wk, wv = np.split(t["in_proj"], 3)
    else:
        wq, wk, wv = t["q_proj"], t["k_proj"], t["v_proj"]
    bq = bk = bv = 0.0
    if "in_proj_bias" in t:
        bq, bk, bv = np.split(t["in_proj_bias"], 3)
    qp, kp, vp = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    am = t.get("attn_mask")
    kpm = t.get("key_padding_mask")
    if a.unbatched and kpm is not None:
        kpm = kpm[None]

    def additive(m):
        if m is None:
            return 0.0
        return np.where(m, -np.inf, 0.0) if m.dtype == np.bool_ else m

    bias = np.zeros((N, H, L, S))
    if am is not None:
        bias = bias + (additive(am).reshape(N, H, L, S) if am.ndim == 3 else additive(am))
    if kpm is not None:
        bias = bias + additive(kpm)[:, None, None, :]
    if a.causal:
        bias = bias + np.where(np.triu(np.ones((L, S), bool), 1), -np.inf, 0.0)
    if "bias_k" in t:
        kp = np.concatenate([kp, np.broadcast_to(t["bias_k"], (1, N, E))])
        vp = np.concatenate([vp, np.broadcast_to(t["bias_v"], (1, N, E))])
        bias = np.concatenate([bias, np.zeros((N, H, L, 1))], axis=-1)
    if a.add_zero_attn:
        kp = np.concatenate([kp, np.zeros((1, N, E))])
        vp = np.concatenate([vp, np.zeros((1, N, E))])
        bias = np.concatenate([bias, np.zeros((N, H, L, 1))], axis=-1)
    D = E // H
    heads = lambda x: x.reshape(x.shape[0], N, H, D).transpose(1, 2, 0, 3)
    qh, kh, vh = heads(qp), heads(kp), heads(vp)
    s = np.einsum("nhld,nhsd->nhls", qh, kh) / np.sqrt(D) + bias
    p = softmax_dropout(s, a)
    o = np.einsum("nhls,nhsd->nhld", p, vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    o = o @ t["out_proj"].T + t.get("out_proj_bias", 0.0)
    w = p if a.per_head_weights else p.mean(axis=1)
    if a.unbatched:
        return o[:, 0], w[0]
    return (o.transpose(1, 0, 2) if a.batch_first else o), w


def check_multihead(a, rng):
    dt, E, H = a.dtype, a.E, a.heads
    N, L, S = a.B, a.Sq, a.Skv
    kdim, vdim = a.kdim or E, a.vdim or E

    def layout(T, dim):
        if a.unbatched:
            return (T, dim)
        return (N, T, dim) if a.batch_first else (T, N, dim)

    randn = lambda *shape: round_to(rng.standard_normal(shape) / np.sqrt(shape[-1]), dt)
    t = {"query": randn(*layout(L, E)), "key": randn(*layout(S, kdim)),
         "value": randn(*layout(S, vdim))}
    # One tensor for several inputs is passed once and named once in the
    # op (%query, %query, %query): what lets Q, K and V be projected
    # together.
    shared = {"query": "query", "key": "key", "value": "value"}
    if a.self_attention:
        if (S, kdim, vdim) != (L, E, E):
            raise SystemExit("--self-attention needs Skv = Sq and no kdim/vdim")
        t["key"] = t["value"] = t["query"]
        shared.update(key="query", value="query")
    elif a.shared_kv:
        if kdim != vdim:
            raise SystemExit("--shared-kv needs kdim = vdim")
        t["value"] = t["key"]
        shared["value"] = "key"
    clauses = []
    if a.kdim or a.vdim:
        t.update(q_proj=randn(E, E), k_proj=randn(E, kdim), v_proj=randn(E, vdim))
        clauses += [f"q_proj(%q_proj : {tensor_type((E, E), dt)})",
                    f"k_proj(%k_proj : {tensor_type((E, kdim), dt)})",
                    f"v_proj(%v_proj : {tensor_type((E, vdim), dt)})"]
    else:
        t["in_proj"] = randn(3 * E, E)
        clauses.append(f"in_proj(%in_proj : {tensor_type((3 * E, E), dt)})")
    if a.bias:
        t["in_proj_bias"] = round_to(rng.standard_normal(3 * E), dt)
        clauses.append(f"in_proj_bias(%in_proj_bias : {tensor_type((3 * E,), dt)})")
    if a.add_bias_kv:
        t["bias_k"], t["bias_v"] = randn(1, 1, E), randn(1, 1, E)
        clauses.append(f"bias_kv(%bias_k, %bias_v : {tensor_type((1, 1, E), dt)}, {tensor_type((1, 1, E), dt)})")
    t["out_proj"] = randn(E, E)
    clauses.append(f"out_proj(%out_proj : {tensor_type((E, E), dt)})")
    if a.bias:
        t["out_proj_bias"] = round_to(rng.standard_normal(E), dt)
        clauses.append(f"out_proj_bias(%out_proj_bias : {tensor_type((E,), dt)})")
    mask_types = {}
    for name, spec in (("key_padding_mask", a.key_padding_mask), ("attn_mask", a.attn_mask)):
        if not spec:
            continue
        kind, rank = spec.split(":")
        if name == "key_padding_mask":
            shape = (S,) if a.unbatched else (N, S)
        else:
            shape = (L, S) if rank == "2" else ((H if a.unbatched else N * H), L, S)
        if kind == "bool":
            # Keep the first key so PyTorch's conventions stay NaN-free here.
            m = rng.random(shape) < 0.3
            m[..., 0] = False
            mask_types[name] = "i1"
        else:
            m = round_to(rng.standard_normal(shape), dt)
            mask_types[name] = dt
        t[name] = m
        clauses.append(f"{name}(%{name} : {tensor_type(shape, mask_types[name])})")
    attrs = [f"num_heads = {H}"]
    for flag in ("batch_first", "add_zero_attn", "causal", "per_head_weights"):
        if getattr(a, flag):
            attrs.append(flag)
    if a.dropout > 0:
        attrs.append(f"dropout = {a.dropout!r}" +
                     ("" if a.runtime_seed else f" seed = {a.seed}"))
    if a.runtime_seed:
        t["dropout_seed"] = np.array(a.seed, np.int64)
        mask_types["dropout_seed"] = "i64"
        clauses.append("dropout_seed(%dropout_seed : tensor<i64>)")

    want_out, want_w = reference_multihead(a, {k: v.astype(np.float64) if v.dtype != np.bool_ else v
                                               for k, v in t.items()})
    inputs = [(name, value, mask_types.get(name, dt)) for name, value in t.items()
              if shared.get(name, name) == name]
    entry_args = [(name, tensor_type(value.shape, et)) for name, value, et in inputs]
    results = [(tensor_type(want_out.shape, dt), want_out.shape)]
    if a.need_weights:
        results.append((tensor_type(want_w.shape, dt), want_w.shape))
    res_types = ", ".join(r for r, _ in results)
    names = ", ".join(f"%r{i}" for i in range(len(results)))
    qkv = ", ".join(tensor_type(t[n].shape, dt) for n in ("query", "key", "value"))
    operands = ", ".join(f"%{shared[n]}" for n in ("query", "key", "value"))
    body = [f"{names} = attn.multihead {operands} {' '.join(clauses)} {' '.join(attrs)} "
            f": {qkv} -> {res_types}",
            f"return {names} : {res_types}"]
    text = wrap(entry_args, body, results)
    got = run_module(text, inputs, len(results), a)
    ok = compare("attn.multihead output", got[0], want_out, dt)
    if a.need_weights:
        ok &= compare("attn.multihead weights", got[1], want_w, dt)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--op", choices=["sdpa", "weights", "sdpa_grad", "multihead",
                                    "append", "varlen"],
                   default="sdpa", help="sdpa_grad: attn.sdpa with its log-sum-exp, then "
                   "attn.sdpa_grad of its output")
    p.add_argument("--dtype", choices=list(TOL), default="f32")
    p.add_argument("--B", type=int, default=2)
    p.add_argument("--Hq", type=int, default=2)
    p.add_argument("--Hkv", type=int, default=2)
    p.add_argument("--Sq", type=int, default=5)
    p.add_argument("--Skv", type=int, default=7)
    p.add_argument("--D", type=int, default=8)
    p.add_argument("--Dv", type=int, default=8)
    p.add_argument("--scale", type=float)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--window", type=lambda s: tuple(int(x) for x in s.split(",")))
    p.add_argument("--align", choices=["top_left", "bottom_right"], default="top_left")
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runtime-seed", action="store_true",
                   help="pass --seed as the dropout_seed operand, not the seed attribute")
    p.add_argument("--runtime-scale", action="store_true",
                   help="pass --scale as the scale_value operand, not the scale attribute")
    p.add_argument("--mask", help="bool:SHAPE or f32|f16|bf16:SHAPE, e.g. bool:2x1x5x7")
    p.add_argument("--kv-lens", help="comma-separated lengths, one per batch")
    p.add_argument("--kv-lens-type", choices=["i32", "i64"], default="i32")
    p.add_argument("--page-size", type=int,
                   help="sdpa: K and V gathered from a paged cache of pages this long")
    p.add_argument("--page-table-type", choices=["i32", "i64"], default="i32")
    p.add_argument("--page-layout", choices=["nhd", "hnd"], default="nhd",
                   help="the paged cache's layout (attn.gather_pages layout)")
    p.add_argument("--decode-step", action="store_true",
                   help="append: append K and V, then attend over the caches")
    p.add_argument("--unchecked-positions", action="store_true",
                   help="append: positions computed in the function, rows past the "
                   "table and pages outside the cache (dropped)")
    p.add_argument("--seqlens-q", help="varlen: comma-separated query lengths, one per "
                   "sequence (at most --Sq, the padded length)")
    p.add_argument("--seqlens-k", help="varlen: key lengths (default: --seqlens-q), at most --Skv")
    p.add_argument("--extra-rows", type=int, default=0,
                   help="varlen: packed rows past the last sequence (kept from the destination)")
    p.add_argument("--score-mod", choices=list(SCORE_MODS))
    p.add_argument("--mask-mod", choices=list(MASK_MODS))
    p.add_argument("--dynamic", action="store_true", help="all dims dynamic in @entry")
    # attn.multihead
    p.add_argument("--E", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kdim", type=int)
    p.add_argument("--vdim", type=int)
    p.add_argument("--batch-first", action="store_true")
    p.add_argument("--unbatched", action="store_true")
    p.add_argument("--bias", action="store_true")
    p.add_argument("--add-bias-kv", action="store_true")
    p.add_argument("--add-zero-attn", action="store_true")
    p.add_argument("--key-padding-mask", help="bool:2 or f32:2")
    p.add_argument("--attn-mask", help="bool:2, bool:3, f32:2, f32:3")
    p.add_argument("--need-weights", action="store_true")
    p.add_argument("--self-attention", action="store_true",
                   help="query, key and value one tensor (Q, K, V projected together)")
    p.add_argument("--shared-kv", action="store_true",
                   help="key and value one tensor (K, V projected together)")
    p.add_argument("--per-head-weights", action="store_true")
    # Tools
    p.add_argument("--attn-run", default="attn-run")
    p.add_argument("--target", choices=["cpu", "cuda"], default="cpu",
                   help="attn-run's --target: cuda runs on the GPU")
    p.add_argument("--pipeline", help="attn-run's --cpu-pipeline options, e.g. \"q-tile=3 kv-tile=4\"")
    p.add_argument("--keep", help="write the generated module into this directory")
    p.add_argument("--input-seed", type=int,
                   help="seed of the random inputs (default: fresh, printed) to replay a run")
    a = p.parse_args()
    if a.runtime_scale and a.scale is None:
        p.error("--runtime-scale passes --scale: give one")

    seed = (a.input_seed if a.input_seed is not None
            else int.from_bytes(os.urandom(4), "little"))
    print(f"input seed {seed} (replay with --input-seed {seed})")
    rng = np.random.default_rng(seed)
    if a.op == "multihead":
        ok = check_multihead(a, rng)
    elif a.op == "append":
        ok = check_append(a, rng)
    elif a.op == "varlen":
        ok = check_varlen(a, rng)
    else:
        ok = check_score_op(a, rng)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
