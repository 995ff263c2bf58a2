# ===- attn_mlir/functional.py - torch.nn.functional-style attention -------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np

from . import _arrays, _autograd, _ir, _linear, _plan, _varlen
from ._compile import checked_call, compile_shaped, remember_call

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False,
                                 window=None, alignment="top_left", softcap=None,
                                 target="cpu", dynamic=None, seed=None, out=None,
                                 return_lse=False):
    """torch.nn.functional.scaled_dot_product_attention, compiled.

    query (..., Hq, L, E), key (..., Hkv, S, E), value (..., Hkv, S, Ev) ->
    (..., Hq, L, Ev). `attn_mask`: bool (True takes part) or float (added),
    broadcastable to (..., Hq, L, S). `is_causal`: the top-left lower
    triangle (not together with attn_mask, as in PyTorch). `enable_gqa`:
    Hq may be a multiple of Hkv. Beyond PyTorch: `window=(left, right)`
    keeps keys i + off - left <= j <= i + off + right, and `alignment`
    ("top_left" or "bottom_right", off = S - L) places the diagonal of
    is_causal and window when L != S. `softcap` caps the scaled scores at
    softcap * tanh(s / softcap) before any key is left out (Gemma 2's
    logit soft-capping; a bool attn_mask only: a float mask would be added
    before the cap). Unlike PyTorch, a row with no visible
    key gives 0 rather than NaN, and dropout uses attn-mlir's counter-based
    generator (docs/Numerics.md), not torch's: with `seed=None` each call
    draws a fresh seed (from torch's generator for torch tensors, so
    torch.manual_seed makes runs repeat; NumPy's global one otherwise), an
    int `seed` drops the same elements every call. `out`: a view of the
    output's shape and dtype (e.g. the [B, H, L, Ev] transpose of a
    [B, L, H, Ev] tensor) that the call writes in place and returns, with
    no copy; its last dimension contiguous, overlapping no input, on the
    CPU, and not under autograd (as torch's out= arguments).
    `return_lse=True` returns (output, lse): lse (..., Hq, L) is each row's
    log-sum-exp (natural log) of its scaled, capped and masked scores over
    the keys that take part (before dropout; -inf for a row with none), in
    float32 (float64 for float64 inputs): what merges attentions over parts
    of the keys (FlashAttention's return_softmax_lse). Under autograd it
    carries no gradient (marked non-differentiable).

    Differentiable: with torch tensors that require grad (and grad mode
    on), the call is the custom op `torch.ops.attn_mlir.sdpa_forward`,
    whose backward is the compiled `attn.sdpa_grad`; under torch.compile
    it is traced as that op. Float masks get no gradient.

    `dynamic` (as torch.compile's): None compiles for the first call's
    shapes and, when a later call differs in batch size or sequence
    lengths, once more with those sizes dynamic, for every size after;
    True compiles the shape-generic function from the start; False
    compiles every new shape (attn_mlir.stats() counts the compiles).
    """
    # A call like one checked before (dropout draws a seed per call: not
    # these) runs the function chosen then on its arguments' views.
    grad = _arrays.is_torch(query) and _autograd.wanted(query, key, value, attn_mask)
    if out is not None:
        _plan.check_out_options(out, grad, target)
    arrays = (query, key, value, attn_mask, out)
    signature = None
    if dropout_p == 0 and not grad and not return_lse:
        signature = _signature(arrays, is_causal, scale, enable_gqa, window, alignment,
                               softcap, target, dynamic)
        entry = checked_call(signature)
        if entry is not None:
            if out is None:
                return _run_checked(entry, arrays)
            _plan.check_destination(out, _read(arrays))
            _run_checked(entry, arrays)
            return out
    regions, captures = _plan.softcap_region(softcap, attn_mask)
    if grad:
        # The seed is drawn here, once: the backward drops the same elements.
        if dropout_p > 0 and seed is None:
            seed = _plan.draw_seed(query)
        out, lse = _autograd.ops().sdpa(
            query, key, value, attn_mask, float(dropout_p), bool(is_causal),
            None if scale is None else float(scale), bool(enable_gqa),
            None if window is None else [int(w) for w in window], alignment, target,
            dynamic, regions, [_arrays._torch().tensor(x, dtype=_arrays._torch().float32)
                               for _, x in captures],
            ",".join(name for name, _ in captures), None if seed is None else int(seed))
        return (out, lse) if return_lse else out
    call = _plan.prepare(query, key, value, attn_mask, dropout_p, is_causal, scale,
                    enable_gqa, window, alignment, seed=seed)
    for name, x in captures:
        call.add_scalar(name, x, "f32")
    if out is not None:
        call.set_destination(out, _read(arrays))
    result = call.run(regions, target, dynamic, lse=return_lse)
    # (A mask of more than 4 dimensions is a broadcast copy, not a view.)
    if signature is not None and (attn_mask is None or len(_arrays.shape(attn_mask)) <= 4):
        remember_call(signature, (call.function,
                                  [(name, shape, name in call.views, call.bound.get(name))
                                   for name, shape, *_ in call.args],
                                  _arrays.shape(result)))
    return result


def _transpose_heads(x):
    """[B, L, H, E] <-> [B, H, L, E], contiguous (NumPy or torch): a view
    where L or H is 1 (decode), else a copy."""
    s = _arrays.shape(x)
    if s[1] == 1 or s[2] == 1:
        return _arrays.reshape(x, (s[0], s[2], s[1], s[3]))
    if _arrays.is_torch(x):
        return x.transpose(1, 2).contiguous()
    return np.ascontiguousarray(np.swapaxes(x, 1, 2))


def _host_ints(x):
    """An integer array of paged_attention (block_table, cache_seqlens) as
    a NumPy int64 array on the host."""
    return np.asarray(x.cpu() if _arrays.is_torch(x) else x).astype(np.int64)


def _check_serving(cache, block_table, cache_seqlens, appended, layout):
    """paged_attention's checks of what its integer arrays say against each
    other, before anything is written: every sequence's keys (its
    cache_seqlens plus the `appended` rows) fit in its row of the block
    table, the pages holding them are pages of the cache, and no page is
    written by two sequences. An error names the sequence and the numbers
    (FlashAttention's flash_attn_with_kvcache refuses the same calls).
    Returns (table, lengths before the append) as host int64 arrays."""
    table, lens = _host_ints(block_table), _host_ints(cache_seqlens)
    num_pages = _arrays.shape(cache)[0]
    page_size = _arrays.shape(cache)[1 if layout == "nhd" else 2]
    max_pages = table.shape[1]
    negative = np.flatnonzero(lens < 0)
    if negative.size:
        b = negative[0]
        raise ValueError(f"cache_seqlens[{b}] is {lens[b]}: a sequence's length must be >= 0")
    total = lens + appended
    over = np.flatnonzero(total > max_pages * page_size)
    if over.size:
        b = over[0]
        with_rows = f" + {appended} appended rows = {total[b]}" if appended else ""
        raise ValueError(
            f"sequence {b} has {lens[b]} keys in the cache{with_rows}, more than its "
            f"block_table row holds ({max_pages} pages of {page_size} = "
            f"{max_pages * page_size} keys)")
    # The pages each sequence's keys are in; other entries are never read.
    used = np.arange(max_pages)[None, :] < -(-total[:, None] // page_size)
    outside = used & ((table < 0) | (table >= num_pages))
    if outside.any():
        b, j = (int(i[0]) for i in np.nonzero(outside))
        raise ValueError(f"block_table[{b}, {j}] is {table[b, j]}, holding keys of sequence "
                         f"{b}, but the cache has {num_pages} pages (0 to {num_pages - 1})")
    if appended and len(lens) > 1:
        # Pages the append writes: those of positions lens[b] .. total[b] - 1.
        first, last = lens // page_size, (total - 1) // page_size
        written = (np.arange(max_pages)[None, :] >= first[:, None]) & (
            np.arange(max_pages)[None, :] <= last[:, None])
        sequence, column = np.nonzero(written)
        pages = table[sequence, column]
        order = np.argsort(pages, kind="stable")
        pages, sequence = pages[order], sequence[order]
        shared = np.flatnonzero((pages[1:] == pages[:-1]) & (sequence[1:] != sequence[:-1]))
        if shared.size:
            i = shared[0]
            raise ValueError(f"sequences {sequence[i]} and {sequence[i + 1]} both append "
                             f"rows into page {pages[i]}: sequences must not share the "
                             "pages they write")
    return table, lens


def _append_rows(cache, rows, table, positions, layout):
    """Writes rows [B, T, Hkv, D] into the paged `cache` in place at
    positions[b] + t through `table` (host int64 arrays that
    _check_serving passed: every row has its place)."""
    page_size = cache.shape[1] if layout == "nhd" else cache.shape[2]
    B, T = rows.shape[0], rows.shape[1]
    b, t = np.repeat(np.arange(B), T), np.tile(np.arange(T), B)
    position = positions[b] + t
    page, slot = table[b, position // page_size], position % page_size
    if _arrays.is_torch(cache):
        torch = _arrays._torch()
        b, t, page, slot = (torch.from_numpy(x) for x in (b, t, page, slot))
    if layout == "nhd":
        cache[page, slot] = rows[b, t]
    else:
        cache[page, :, slot] = rows[b, t]


def _check_operands(ranked, data, floats=("f32", "f16", "bf16")):
    """The argument checks paged_attention and varlen_attention share: each
    (name, array, rank) of `ranked` has that rank, and the (name, array) of
    `data` share the first one's element type, one of `floats`, which is
    returned."""
    for name, x, rank in ranked:
        if len(_arrays.shape(x)) != rank:
            raise ValueError(f"{name} must have {rank} dimensions, got shape "
                             f"{list(_arrays.shape(x))}")
    (first, x), *others = data
    elem = _arrays.element(x)
    if elem not in floats:
        names = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64"}
        raise TypeError(f"{first} must be {', '.join(names[f] for f in floats)}, got {elem}")
    for name, x in others:
        if _arrays.element(x) != elem:
            raise TypeError(f"{name} ({_arrays.element(x)}) must have {first}'s element "
                            f"type ({elem})")
    return elem


def _paged_source(shapes, elems, layout, softmax_scale, causal, lse, window, dropout_p,
                  regions, captures):
    """The text of paged_attention's function for these shapes ((q,
    k_cache, v_cache, block_table, lens)), element types ((data, table,
    lens)) and options: attn.gather_pages of both caches into attn.sdpa
    (which also returns the rows' log-sum-exp with `lse`), with dropout
    (`dropout_p` > 0: its seed the parameter %ds after %lens), the
    modifier `regions` and the parameters of the arrays they capture,
    `captures` ((name, shape, element type))."""
    (B, Sq, Hq, D), cache_shape, v_shape, table_shape, lens_shape = shapes
    elem, table_elem, lens_elem = elems
    page_size, Hkv = (cache_shape[1], cache_shape[2]) if layout == "nhd" else (
        cache_shape[2], cache_shape[1])
    keys = table_shape[1] * page_size
    types = {"q": _ir.tensor_type((B, Hq, Sq, D), elem),
             "kc": _ir.tensor_type(cache_shape, elem), "vc": _ir.tensor_type(v_shape, elem),
             "pt": _ir.tensor_type(table_shape, table_elem),
             "lens": _ir.tensor_type(lens_shape, lens_elem),
             "o": _ir.tensor_type((B, Hq, Sq, v_shape[3]), elem),
             "ds": _ir.tensor_type((), "i64")}
    types.update((name, _ir.tensor_type(shape, e)) for name, shape, e in captures)
    k_type = _ir.tensor_type((B, Hkv, keys, cache_shape[3]), elem)
    v_type = _ir.tensor_type((B, Hkv, keys, v_shape[3]), elem)
    layout_clause = "" if layout == "nhd" else f" layout = <{layout}>"
    attrs = []
    if softmax_scale is not None:
        attrs.append(f"scale = {_ir.float_literal(softmax_scale)}")
    if causal:
        attrs.append("causal")
    if window is not None:
        attrs.append(f"window = [{window[0]}, {window[1]}]")
    if causal or window is not None:
        attrs.append("align = <bottom_right>")
    seed_clause, seed_param = "", ()
    if dropout_p > 0:
        attrs.append(f"dropout = {_ir.float_literal(dropout_p)}")
        seed_clause, seed_param = f"dropout_seed(%ds : {types['ds']}) ", ("ds",)
    body = [f"%k = attn.gather_pages %kc[%pt]{layout_clause} : {types['kc']}, "
            f"{types['pt']} -> {k_type}",
            f"%v = attn.gather_pages %vc[%pt]{layout_clause} : {types['vc']}, "
            f"{types['pt']} -> {v_type}",
            f"%e = tensor.empty() : {types['o']}"]
    results, lse_clause, lse_type = [("%o", types["o"])], "", ""
    if lse:
        stat = _ir.tensor_type((B, Hq, Sq), "f32")
        body.append(f"%l = tensor.empty() : {stat}")
        results.append(("%lse", stat))
        lse_clause, lse_type = f" lse(%l : {stat})", f", {stat}"
    body.append(f"{', '.join(v for v, _ in results)} = attn.sdpa %q, %k, %v "
                f"kv_lens(%lens : {types['lens']}) {seed_clause}outs(%e){lse_clause} "
                f"{' '.join(attrs)} : "
                f"{types['q']}, {k_type}, {v_type} -> {types['o']}{lse_type}"
                f"{_ir.bind_parameter_types(regions, types)}")
    params = ("q", "kc", "vc", "pt", "lens") + seed_param + tuple(
        name for name, *_ in captures)
    return _ir.function("paged", [(n, types[n]) for n in params], results, body)


def _compile_paged(q, k_cache, v_cache, block_table, cache_seqlens, k, v, softmax_scale,
                   causal, layout, target, lse, window_size, softcap, alibi_slopes, score_mod,
                   mask_mod, dropout_p):
    """paged_attention's checks of its arguments, then its compiled
    function for their shapes (one compile per shape and options) and the
    arrays its modifiers capture, [(name, array)]: the function's last
    parameters."""
    if layout not in ("nhd", "hnd"):
        raise ValueError(f"layout must be 'nhd' or 'hnd', got {layout!r}")
    elem = _check_operands(
        (("q", q, 4), ("k_cache", k_cache, 4), ("v_cache", v_cache, 4),
         ("block_table", block_table, 2), ("cache_seqlens", cache_seqlens, 1)),
        (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)) + (
            () if k is None or v is None else (("k", k), ("v", v))))
    for name, x in (("block_table", block_table), ("cache_seqlens", cache_seqlens)):
        if _arrays.element(x) not in ("i32", "i64"):
            raise TypeError(f"{name} must be int32 or int64, got {_arrays.element(x)}")
        if _arrays.shape(x)[0] != _arrays.shape(q)[0]:
            raise ValueError(f"{name} has {_arrays.shape(x)[0]} rows for the "
                             f"{_arrays.shape(q)[0]} sequences of q: one per sequence")
    if (k is None) != (v is None):
        raise ValueError("k and v are appended together: give both or neither")
    cache_shapes = {"k_cache": _arrays.shape(k_cache), "v_cache": _arrays.shape(v_cache)}
    if cache_shapes["k_cache"][:3] != cache_shapes["v_cache"][:3]:
        raise ValueError(f"k_cache {list(cache_shapes['k_cache'])} and v_cache "
                         f"{list(cache_shapes['v_cache'])} must have the same pages, page "
                         "size and heads (only the head size may differ)")
    if k is not None:
        for name, rows, cache in (("k", k, "k_cache"), ("v", v, "v_cache")):
            shape = cache_shapes[cache]
            heads = shape[2] if layout == "nhd" else shape[1]
            want = (_arrays.shape(q)[0], _arrays.shape(k)[1], heads, shape[3])
            if len(_arrays.shape(rows)) != 4 or tuple(_arrays.shape(rows)) != want:
                raise ValueError(f"{name} must be (B, Sk, Hkv, head size) = {list(want)} "
                                 f"(q's batch, k's rows, {cache}'s heads and head size), "
                                 f"got {list(_arrays.shape(rows))}")
    B, Sq, Hq = _arrays.shape(q)[:3]
    _plan.check_flash_modifiers(dropout_p, softcap, alibi_slopes, B, Hq)
    lens_elem = _arrays.element(cache_seqlens)
    regions, captures = _plan.flash_modifiers(float(softcap), alibi_slopes, score_mod,
                                              mask_mod, B, lens_elem, Sq, "lens")
    window = None
    left, right = (int(w) for w in window_size)
    if (left, right) != (-1, -1):
        page_size = cache_shapes["k_cache"][1 if layout == "nhd" else 2]
        unbounded = _arrays.shape(block_table)[1] * page_size + Sq
        window = (unbounded if left < 0 else left, unbounded if right < 0 else right)
    shapes = tuple(_arrays.shape(x) for x in (q, k_cache, v_cache, block_table, cache_seqlens))
    elems = (elem, _arrays.element(block_table), lens_elem)
    params = tuple((name, tuple(_arrays.shape(x)), _arrays.element(x)) for name, x in captures)
    key = ("paged", shapes, elems, layout, softmax_scale, bool(causal), bool(lse), window,
           float(dropout_p), regions, params)
    return compile_shaped(
        lambda dynamic: _paged_source(shapes, elems, layout, softmax_scale, causal, lse, window,
                                      float(dropout_p), regions, params),
        False, target, key=key), captures


def paged_attention(q, k_cache, v_cache, block_table, cache_seqlens, k=None, v=None,
                    softmax_scale=None, causal=True, layout="nhd", target="cpu",
                    return_lse=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    score_mod=None, mask_mod=None, dropout_p=0.0, seed=None):
    """Attention over a paged KV cache with the conventions of
    FlashAttention's `flash_attn_with_kvcache` (its paged form, with
    `block_table`), compiled: attn.gather_pages feeding attn.sdpa.

    q (B, Sq, Hq, D); k_cache (num_pages, page_size, Hkv, D) and v_cache
    (num_pages, page_size, Hkv, Dv) (`layout="nhd"`, FlashAttention's and
    vLLM's) or (num_pages, Hkv, page_size, D or Dv) (`layout="hnd"`,
    FlashInfer's other layout, faster on
    CPUs); block_table (B, max_pages) int32, the pages of each sequence in
    order; cache_seqlens (B,) int32, the keys each sequence has in the
    cache. With `k`, `v` (B, Sk, Hkv, D), those rows are first written into
    the caches in place at positions cache_seqlens[b] ... (as
    flash_attn_with_kvcache does) and attention covers cache_seqlens + Sk
    keys. Inconsistent serving inputs are a ValueError naming the sequence,
    raised before anything is written: a negative length, more keys than a
    sequence's block_table row holds, a page index (of a page holding keys)
    outside the cache, two sequences appending into one page.
    `causal` aligns the last query row with the last key (bottom-right).
    Hq must be a multiple of Hkv (GQA/MQA). Returns (B, Sq, Hq, Dv), NumPy
    or torch like `q`; with `return_lse=True`, (output, lse), lse (B, Hq, Sq)
    float32 the rows' log-sum-exp (natural log), as FlashAttention's
    return_softmax_lse. Keys past each sequence's length must be finite
    (docs/Serving.md).

    As flash_attn_with_kvcache, `window_size=(left, right)` (-1:
    unbounded, aligned bottom-right like `causal`), `softcap` > 0 and
    `alibi_slopes` (Hq,) or (B, Hq) float32 (-slope * |i + len_k - Sq - j|,
    after the cap); then `score_mod` / `mask_mod` as flex_attention's,
    with q_idx the query's row (0 to Sq - 1) and kv_idx the key's position
    in its sequence. `dropout_p` drops probabilities as
    scaled_dot_product_attention does (attn-mlir's generator, keyed by the
    sequence, head, query row and key position; `seed` as there, drawn per
    call when None); flash_attn_with_kvcache has none.
    """
    _autograd.refuse_gradients("paged_attention", q, k_cache, v_cache, k, v)
    # A call like one checked before runs the function chosen then (not
    # one with modifiers: what they capture is read anew each call).
    modified = score_mod is not None or mask_mod is not None or alibi_slopes is not None
    signature = None if modified else _signature(
        (q, k_cache, v_cache, block_table, cache_seqlens, k, v), "paged", softmax_scale,
        causal, layout, target, return_lse, tuple(window_size), softcap, dropout_p)
    entry = None if signature is None else checked_call(signature)
    if entry is None:
        entry = _compile_paged(q, k_cache, v_cache, block_table, cache_seqlens, k, v,
                               softmax_scale, causal, layout, target, return_lse, window_size,
                               softcap, alibi_slopes, score_mod, mask_mod, dropout_p)
        if signature is not None:
            remember_call(signature, entry)
    function, captures = entry
    appended = 0 if k is None else _arrays.shape(k)[1]
    table, positions = _check_serving(k_cache, block_table, cache_seqlens, appended, layout)
    lens = cache_seqlens
    if appended:
        _append_rows(k_cache, k, table, positions, layout)
        _append_rows(v_cache, v, table, positions, layout)
        lens = cache_seqlens + appended
    inputs = [_arrays.as_array(_transpose_heads(q), "q")] + [
        _arrays.as_array(x, name) for name, x in (("k_cache", k_cache), ("v_cache", v_cache),
                                                  ("block_table", block_table),
                                                  ("cache_seqlens", lens))]
    if dropout_p > 0:  # the %ds parameter, after %lens
        inputs.append(np.array(_plan.draw_seed(q) if seed is None else int(seed), np.int64))
    inputs += [_arrays.as_array(x, name) for name, x in captures]
    out = function.run_arrays(inputs, q if _arrays.is_torch(q) else None)
    if return_lse:
        return _transpose_heads(out[0]), out[1]
    return _transpose_heads(out)


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None,
                     max_seqlen_k=None, dropout_p=0.0, softmax_scale=None, causal=False,
                     window_size=(-1, -1), softcap=0.0, alibi_slopes=None, score_mod=None,
                     mask_mod=None, seed=None, return_lse=False, target="cpu"):
    """Attention over a batch of sequences of different lengths packed
    without padding, with the conventions (and positional arguments) of
    FlashAttention's `flash_attn_varlen_func`, compiled: attn.pad_sequences
    around attn.sdpa.

    q (total_q, Hq, D), k (total_k, Hkv, D), v (total_k, Hkv, Dv): the
    sequences one after another; cu_seqlens_q (B + 1,) and cu_seqlens_k
    (B + 1,), int32 or int64: sequence b's rows are
    [cu_seqlens[b], cu_seqlens[b + 1]). Hq must be a multiple of Hkv
    (GQA/MQA). `causal` and `window_size=(left, right)` (-1: unbounded)
    align each sequence's last query with its last key (bottom-right), as
    FlashAttention >= 2.1 does; a query row that sees no key gets zeros.
    `max_seqlen_q`/`max_seqlen_k`, when given, are checked against the
    offsets. Returns (total_q, Hq, Dv), NumPy or torch like `q`.

    Scores, in this order (FlashAttention's): scaled; `softcap` > 0 caps
    them at softcap * tanh(s / softcap); `alibi_slopes` (Hq,) or (B, Hq)
    float32 adds -slope * |i + len_k - len_q - j|; then
    `score_mod(score, b, h, q_idx, kv_idx)` and `mask_mod(b, h, q_idx,
    kv_idx)` as flex_attention's, where b is the sequence and q_idx, kv_idx
    count from its first query and key. `dropout_p` drops probabilities as
    scaled_dot_product_attention does (attn-mlir's generator; `seed` as
    there). `return_lse=True` returns (output, lse), lse (Hq, total_q)
    float32 each query's log-sum-exp (natural log; -inf for rows no
    sequence covers or that see no key), as FlashAttention's varlen
    softmax_lse.

    Differentiable: with torch tensors that require grad, the call is the
    custom op `torch.ops.attn_mlir.varlen_forward`, whose backward is the
    compiled attn.sdpa_grad on the padded sequences (float64 inputs compute
    in float64, for gradcheck). Lengths vary from call to call without
    recompiling: the function is compiled for the packed rows and the batch
    given at run time and for padded lengths rounded up (docs/Serving.md).
    """
    elem = _check_operands((("q", q, 3), ("k", k, 3), ("v", v, 3)),
                           (("q", q), ("k", k), ("v", v)), floats=_plan._FLOATS)
    cu_elem = _arrays.element(cu_seqlens_q)
    if cu_elem not in ("i32", "i64") or _arrays.element(cu_seqlens_k) != cu_elem:
        raise TypeError(f"cu_seqlens_q and cu_seqlens_k must both be int32 or both int64, "
                        f"got {cu_elem} and {_arrays.element(cu_seqlens_k)}")
    (total_q, hq, d), (total_k, hkv, dk), (total_v, hv, _) = (
        _arrays.shape(x) for x in (q, k, v))
    if dk != d or (total_v, hv) != (total_k, hkv):
        raise ValueError(f"k {list(_arrays.shape(k))} must have q's head size {d} and v "
                         f"{list(_arrays.shape(v))} k's rows and heads")
    if hq % hkv:
        raise ValueError(f"query heads ({hq}) must be a multiple of key/value heads ({hkv})")
    q_lens = _varlen.sequence_lengths(cu_seqlens_q, total_q, "cu_seqlens_q")
    k_lens = _varlen.sequence_lengths(cu_seqlens_k, total_k, "cu_seqlens_k")
    if len(q_lens) != len(k_lens):
        raise ValueError(f"cu_seqlens_q ({len(q_lens) + 1} entries) and cu_seqlens_k "
                         f"({len(k_lens) + 1}) must describe the same sequences")
    longest = []
    for name, lens, given in (("max_seqlen_q", q_lens, max_seqlen_q),
                              ("max_seqlen_k", k_lens, max_seqlen_k)):
        actual = int(lens.max()) if lens.size else 0
        if given is not None and given < actual:
            raise ValueError(f"{name} ({given}) is shorter than the longest sequence ({actual})")
        longest.append(actual)
    padded = [_varlen.padded_length(n) for n in longest]
    left, right = (int(w) for w in window_size)
    window = None
    if (left, right) != (-1, -1):
        unbounded = padded[0] + padded[1]
        window = [unbounded if left < 0 else left, unbounded if right < 0 else right]
    _plan.check_flash_modifiers(dropout_p, softcap, alibi_slopes, len(q_lens), hq)
    if dropout_p > 0 and seed is None:
        # Drawn here: the forward and the backward must drop the same ones.
        seed = _plan.draw_seed(q)
    scale = None if softmax_scale is None else float(softmax_scale)
    regions, captures = _plan.flash_modifiers(float(softcap), alibi_slopes, score_mod,
                                              mask_mod, len(q_lens), cu_elem, padded[0],
                                              "kl", "ql")
    if _arrays.is_torch(q) and _autograd.wanted(q, k, v, None):
        torch = _arrays._torch()
        out, lse = _autograd.ops().varlen(
            q, k, v, cu_seqlens_q, cu_seqlens_k, padded, float(dropout_p), scale,
            bool(causal), window, regions,
            [x if _arrays.is_torch(x) else torch.as_tensor(x) for _, x in captures],
            ",".join(name for name, _ in captures), seed, target)
    else:
        call = _varlen.prepare(q, k, v, cu_seqlens_q, cu_seqlens_k, elem, cu_elem, padded,
                               dropout_p, scale, causal, window, seed)
        call.add_captures(captures)
        result = call.run(regions, target, lse=return_lse)
        out, lse = result if return_lse else (result, None)
    if not return_lse:
        return out
    cu = np.asarray(cu_seqlens_q.cpu() if _arrays.is_torch(cu_seqlens_q) else cu_seqlens_q)
    return out, _varlen.packed_lse(lse, cu, padded[0], total_q)


def _read(arrays):
    """The arrays scaled_dot_product_attention reads, by name (out=)."""
    return list(zip(("query", "key", "value", "attn_mask"), arrays))


def _signature(arrays, *options):
    """What decides a call's checks, function and views: the arrays' types,
    shapes, element types (and devices), and the options."""
    return tuple((type(x), tuple(x.shape), x.dtype, getattr(x, "device", None))
                 if x is not None else None for x in arrays) + tuple(
                     tuple(o) if isinstance(o, list) else o for o in options)


def _run_checked(entry, arrays):
    """Runs a remembered call (see remember_call) on `arrays`: its
    parameters are (name, shape, view, bound), bound the input the call's
    options fixed (SdpaCall.bound), else taken from the next of `arrays`."""
    function, params, out_shape = entry
    given = iter(x for x in arrays if x is not None)
    inputs = []
    for name, shape, view, bound in params:
        if bound is not None:
            inputs.append(bound)
            continue
        x = next(given)
        if name == _plan.DESTINATION:
            # Written in place: the caller's memory or an error, no copy.
            inputs.append(_arrays.reshape_view(_arrays.as_destination(x, name), shape, name))
            continue
        x = _arrays.as_view(x, name) if view else _arrays.as_array(x, name)
        inputs.append(x if x.shape == shape else _arrays.reshape(x, shape))
    like = _arrays.first_torch(arrays)
    out = function.run_arrays(inputs, like)
    if isinstance(out, tuple) and not out:  # a destination took the output
        return None
    return out if out.shape == out_shape else _arrays.reshape(out, out_shape)


def linear(input, weight, bias=None, target="cpu", dynamic=None):
    """torch.nn.functional.linear, compiled: input (..., K) times weight
    (N, K) transposed, plus bias (N), -> (..., N); float32 or float64.

    Differentiable: with torch tensors that require grad, the call is the
    custom op `torch.ops.attn_mlir.linear_forward`, whose backward computes
    the gradients asked for (input's dY W, weight's dY^T X, bias's column
    sums) in one compiled function. What it is for: a training step whose
    products all run in the compiled code's threads does not hand the cores
    back and forth between two OpenMP runtimes (attn_mlir.nn's modules use
    it). `dynamic` as scaled_dot_product_attention's (the varying size is
    the product of input's leading dimensions)."""
    if _arrays.is_torch(input) and _autograd.wanted_linear(input, weight, bias):
        return _autograd.ops().linear(input, weight, bias, target, dynamic)
    return _linear.forward(input, weight, bias, target, dynamic)
