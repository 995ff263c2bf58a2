# ===- attn_mlir/viz.py - pictures of attention maps and block sparsity ----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# PNG pictures through matplotlib (imported only when drawing):
#   attention_map(weights, path)    the probabilities `need_weights` returns
#   block_sparsity(..., path)       the (query tile, key tile) classes of a
#                                   mask (empty / partial / full) at the CPU
#                                   pipeline's tile sizes, titled with what
#                                   attn-sparsify decided for it
#
# ===----------------------------------------------------------------------=== #

import textwrap

import numpy as np

from . import _arrays, _ir
from ._native import explain_sparsity
from ._trace import _INDEX_ARGS, _Tracer

EMPTY, PARTIAL, FULL = 0, 1, 2


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("attn_mlir.viz draws with matplotlib: pip install matplotlib") from e
    return plt


def _numpy(x):
    if _arrays.is_torch(x):
        return x.detach().cpu().float().numpy()
    return np.asarray(x, np.float64)


def attention_map(weights, path, title=None, query_labels=None, key_labels=None):
    """Draws attention weights: [L, S], or [H, L, S] / [N, H, L, S] as one
    panel per head (of the first batch element). Returns the path."""
    w = _numpy(weights)
    if w.ndim == 4:
        w = w[0]
    if w.ndim == 2:
        w = w[None]
    if w.ndim != 3:
        raise ValueError(f"weights must be [L, S], [H, L, S] or [N, H, L, S], got {list(w.shape)}")
    plt = _pyplot()
    heads = w.shape[0]
    fig, axes = plt.subplots(1, heads, figsize=(3.2 * heads + 1, 3.4), squeeze=False)
    for h, ax in enumerate(axes[0]):
        image = ax.imshow(w[h], cmap="viridis", vmin=0, aspect="auto")
        ax.set_title(f"head {h}" if heads > 1 else (title or "attention"))
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        if key_labels is not None:
            ax.set_xticks(range(len(key_labels)), key_labels, rotation=90)
        if query_labels is not None:
            ax.set_yticks(range(len(query_labels)), query_labels)
    fig.colorbar(image, ax=axes[0].tolist())
    if title and heads > 1:
        fig.suptitle(title)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def block_classes(keep, q_tile=128, kv_tile=64):
    """The class of every (query tile, key tile) of the [L, S] boolean
    `keep`: EMPTY (no key visible), FULL (every key visible) or PARTIAL,
    the classification the compiled code's loops follow."""
    keep = np.asarray(keep, bool)
    L, S = keep.shape
    rows, cols = -(-L // q_tile), -(-S // kv_tile)
    classes = np.empty((rows, cols), np.int8)
    for r in range(rows):
        for c in range(cols):
            tile = keep[r * q_tile:(r + 1) * q_tile, c * kv_tile:(c + 1) * kv_tile]
            classes[r, c] = EMPTY if not tile.any() else FULL if tile.all() else PARTIAL
    return classes


def _mask_ir(L, S, mask_mod, is_causal, window, alignment):
    """A one-op module with this mask, for attn-sparsify to explain."""
    t = _ir.tensor_type((1, 1, L, 8), "f32")
    tk = _ir.tensor_type((1, 1, S, 8), "f32")
    attrs = []
    if is_causal:
        attrs.append("causal")
    if window is not None:
        attrs.append(f"window = [{window[0]}, {window[1]}]")
    if alignment != "top_left":
        attrs.append(f"align = <{alignment}>")
    args = [("q", t), ("k", tk)]
    regions = ""
    if mask_mod is not None:
        tracer = _Tracer()
        regions = " mask_mod " + tracer.trace(mask_mod, "m", _INDEX_ARGS, "i1")
        for name, array in tracer.captures:
            args.append((name, _ir.tensor_type(_arrays.shape(array), _arrays.element(array))))
        regions = _ir.bind_parameter_types(regions, dict(args))
    body = ["%e = tensor.empty() : " + t,
            f"%o = attn.sdpa %q, %k, %k outs(%e) {' '.join(attrs)} : {t}, {tk}, {tk} -> {t}{regions}"]
    return _ir.function("f", args, [("%o", t)], body)


def _dense_keep(L, S, mask_mod, is_causal, window, alignment):
    i, j = np.arange(L)[:, None], np.arange(S)[None, :]
    keep = np.ones((L, S), bool)
    diag = i + (S - L if alignment == "bottom_right" else 0)
    if is_causal:
        keep &= j <= diag
    if window is not None:
        keep &= (j >= diag - window[0]) & (j <= diag + window[1])
    if mask_mod is not None:
        keep &= np.broadcast_to(np.asarray(mask_mod(0, 0, i, j), bool), (L, S))
    return keep


def block_sparsity(query_len, key_len, path, mask_mod=None, is_causal=False, window=None,
                   alignment="top_left", q_tile=128, kv_tile=64):
    """Draws the tile classes of a mask (causal / window / a FlexAttention
    `mask_mod`, evaluated for b = h = 0) at the given tile sizes, with
    attn-sparsify's explanation (static band or run-time classes, and why)
    as the title. Returns (classes, explanation)."""
    keep = _dense_keep(query_len, key_len, mask_mod, is_causal, window, alignment)
    classes = block_classes(keep, q_tile, kv_tile)
    remarks = explain_sparsity(_mask_ir(query_len, key_len, mask_mod, is_causal, window,
                                        alignment), q_tile, kv_tile)
    explanation = remarks[0] if remarks else ""
    plt = _pyplot()
    from matplotlib.colors import ListedColormap

    fig, ax = plt.subplots(figsize=(6, 6 * classes.shape[0] / max(classes.shape[1], 1) + 1))
    ax.imshow(classes, cmap=ListedColormap(["#f4f4f4", "#f2a541", "#3465a4"]),
              vmin=0, vmax=2, aspect="auto", interpolation="nearest")
    counts = [(classes == c).sum() for c in (EMPTY, PARTIAL, FULL)]
    wrapped = "\n".join(textwrap.wrap(explanation, 70))
    ax.set_title(f"{wrapped}\nempty {counts[0]}, partial {counts[1]}, full {counts[2]} "
                 f"tiles of {q_tile} x {kv_tile}", fontsize=8)
    ax.set_xlabel("key tile")
    ax.set_ylabel("query tile")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return classes, explanation


def line_panels(panels, path, xlabel="S (keys)", ylabel="GFLOP/s", reference=None,
                reference_label=None, columns=3):
    """Benchmark curves: `panels` maps a panel title to {series name: [(x,
    y), ...]}; x on a log2 axis; an optional horizontal `reference` line
    (a measured peak). Panels are laid out `columns` to a row."""
    plt = _pyplot()
    titles = list(panels)
    cols = min(columns, max(len(titles), 1))
    rows = -(-len(titles) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[len(titles):]:
        ax.set_visible(False)
    for ax, title in zip(axes.flat, titles):
        for name, points in panels[title].items():
            if points:
                xs, ys = zip(*sorted(points))
                ax.plot(xs, ys, marker="o", label=name)
        if reference:
            ax.axhline(reference, color="grey", linestyle="--", linewidth=1,
                       label=reference_label)
        ax.set_title(title, fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def ratio_bars(ratios, path, title, reference=1.0, xlabel="time / dense"):
    """Horizontal bars of `ratios` ({name: ratio}) with a line at
    `reference`: the sparsity benchmark's picture."""
    plt = _pyplot()
    names = list(ratios)
    fig, ax = plt.subplots(figsize=(6.5, 0.45 * len(names) + 1.2))
    ax.barh(names[::-1], [ratios[n] for n in names[::-1]], color="#3465a4")
    ax.axvline(reference, color="grey", linestyle="--", linewidth=1)
    for i, n in enumerate(names[::-1]):
        ax.text(ratios[n], i, f" {ratios[n]:.3f}", va="center", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
