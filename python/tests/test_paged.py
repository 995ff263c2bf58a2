# ===- test_paged.py - paged_attention (flash_attn_with_kvcache-style) ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir.functional import paged_attention
from conftest import alibi, modified_reference, reference_sdpa, relative_error, require


def make_cache(rng, lengths, page_size, hkv, d, layout, spare=3, dv=None):
    """Sequences of `lengths` keys (head size d; values dv, default d)
    written into pages of a fresh cache at random places; returns
    (contiguous K, V per sequence, caches, table)."""
    dv = dv or d
    pages = [-(-n // page_size) + 1 for n in lengths]  # room to append
    max_pages = max(pages)
    num_pages = sum(pages) + spare
    order = rng.permutation(num_pages)
    table = np.zeros((len(lengths), max_pages), np.int32)
    def shape(size):
        return ((num_pages, page_size, hkv, size) if layout == "nhd"
                else (num_pages, hkv, page_size, size))

    k_cache = rng.uniform(-2, 2, shape(d)).astype(np.float32)
    v_cache = rng.uniform(-2, 2, shape(dv)).astype(np.float32)
    start = 0
    keys, values = [], []
    for b, n in enumerate(lengths):
        table[b, :pages[b]] = order[start:start + pages[b]]
        # Unused entries: out of range on purpose (clamped, masked by length).
        table[b, pages[b]:] = num_pages + 7
        start += pages[b]
        k = rng.standard_normal((n, hkv, d)).astype(np.float32)
        v = rng.standard_normal((n, hkv, dv)).astype(np.float32)
        for p in range(n):
            page, slot = table[b, p // page_size], p % page_size
            if layout == "nhd":
                k_cache[page, slot], v_cache[page, slot] = k[p], v[p]
            else:
                k_cache[page, :, slot], v_cache[page, :, slot] = k[p], v[p]
        keys.append(k)
        values.append(v)
    return keys, values, k_cache, v_cache, table


def reference(q, keys, values, causal=True):
    """Per sequence, bottom-right causal attention of q [Sq, Hq, D] over its
    keys [n, Hkv, D] in float64: [Sq, Hq, D]."""
    out = []
    for b, (k, v) in enumerate(zip(keys, values)):
        got = reference_sdpa(np.swapaxes(q[b], 0, 1), np.swapaxes(k, 0, 1),
                             np.swapaxes(v, 0, 1), causal=causal, align="bottom_right")
        out.append(np.swapaxes(got, 0, 1))
    return np.stack(out)


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
@pytest.mark.parametrize("page_size", [16, 64])
def test_decode_against_contiguous(rng, layout, page_size):
    lengths = [300, 77, 1]
    keys, values, kc, vc, table = make_cache(rng, lengths, page_size, 2, 64, layout)
    q = rng.standard_normal((3, 1, 8, 64)).astype(np.float32)
    got = paged_attention(q, kc, vc, table, np.array(lengths, np.int32), layout=layout)
    assert got.shape == (3, 1, 8, 64) and got.dtype == np.float32
    assert relative_error(got.astype(np.float64), reference(q, keys, values)) < 1e-5


def test_append_then_attend(rng):
    """k, v given: written into the caches in place at cache_seqlens, then
    attended over with them (what flash_attn_with_kvcache does)."""
    lengths = [40, 17]
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, 2, 32, "nhd")
    q = rng.standard_normal((2, 3, 4, 32)).astype(np.float32)
    k_new = rng.standard_normal((2, 3, 2, 32)).astype(np.float32)
    v_new = rng.standard_normal((2, 3, 2, 32)).astype(np.float32)
    seqlens = np.array(lengths, np.int32)
    got = paged_attention(q, kc, vc, table, seqlens, k=k_new, v=v_new)
    keys = [np.concatenate([k, k_new[b]]) for b, k in enumerate(keys)]
    values = [np.concatenate([v, v_new[b]]) for b, v in enumerate(values)]
    assert relative_error(got.astype(np.float64), reference(q, keys, values)) < 1e-5
    # The rows are in the cache now: a second call without them agrees.
    again = paged_attention(q, kc, vc, table, seqlens + 3)
    np.testing.assert_array_equal(again, got)


def test_torch_tensors_and_scale(rng):
    torch = require("torch")
    lengths = [100, 64]
    keys, values, kc, vc, table = make_cache(rng, lengths, 32, 1, 16, "hnd")
    q = rng.standard_normal((2, 1, 4, 16)).astype(np.float32)
    got = paged_attention(torch.from_numpy(q), torch.from_numpy(kc), torch.from_numpy(vc),
                          torch.from_numpy(table), torch.tensor(lengths, dtype=torch.int32),
                          softmax_scale=0.3, causal=False, layout="hnd")
    assert isinstance(got, torch.Tensor) and got.shape == (2, 1, 4, 16)
    want = []
    for b, (k, v) in enumerate(zip(keys, values)):
        want.append(np.swapaxes(reference_sdpa(np.swapaxes(q[b], 0, 1), np.swapaxes(k, 0, 1),
                                               np.swapaxes(v, 0, 1), scale=0.3), 0, 1))
    assert relative_error(got.double().numpy(), np.stack(want)) < 1e-5


def test_value_head_size_and_mismatched_caches(rng):
    """v_cache may have another head size than k_cache (Dv != D); caches
    whose heads disagree are the compiler's error, with the shapes."""
    lengths = [30, 9]
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, 2, 16, "nhd", dv=32)
    q = rng.standard_normal((2, 1, 4, 16)).astype(np.float32)
    got = paged_attention(q, kc, vc, table, np.array(lengths, np.int32))
    assert got.shape == (2, 1, 4, 32)
    assert relative_error(got.astype(np.float64), reference(q, keys, values)) < 1e-5
    with pytest.raises(ValueError, match=r"k_cache \[.*\] and v_cache \[.*\] must have the "
                       "same pages, page size and heads"):
        paged_attention(q, kc[:, :, :1], vc, table, np.array(lengths, np.int32))


def test_bad_arguments(rng):
    keys, values, kc, vc, table = make_cache(rng, [20], 16, 1, 16, "nhd")
    q = rng.standard_normal((1, 1, 2, 16)).astype(np.float32)
    lens = np.array([20], np.int32)
    with pytest.raises(ValueError, match="layout must be 'nhd' or 'hnd', got 'bhd'"):
        paged_attention(q, kc, vc, table, lens, layout="bhd")
    with pytest.raises(ValueError, match="block_table must have 2 dimensions, got shape"):
        paged_attention(q, kc, vc, table[0], lens)
    with pytest.raises(TypeError, match="cache_seqlens must be int32 or int64, got f32"):
        paged_attention(q, kc, vc, table, lens.astype(np.float32))
    with pytest.raises(TypeError, match=r"k_cache \(f16\) must have q's element type \(f32\)"):
        paged_attention(q, kc.astype(np.float16), vc, table, lens)
    with pytest.raises(ValueError, match="give both or neither"):
        paged_attention(q, kc, vc, table, lens, k=q)


def serving_case(rng, lengths, page_size=16, hkv=1, d=16):
    """A cache for `lengths` (make_cache) with a decode query and one new
    key and value row per sequence."""
    keys, values, kc, vc, table = make_cache(rng, lengths, page_size, hkv, d, "nhd")
    B = len(lengths)
    q = rng.standard_normal((B, 1, 2 * hkv, d)).astype(np.float32)
    k_new = rng.standard_normal((B, 1, hkv, d)).astype(np.float32)
    v_new = rng.standard_normal((B, 1, hkv, d)).astype(np.float32)
    return q, kc, vc, table, k_new, v_new


def refused(call, caches, match):
    """`call` raises ValueError matching `match` and leaves `caches` as
    they were: nothing is written on a refused call."""
    before = [c.copy() for c in caches]
    with pytest.raises(ValueError, match=match):
        call()
    for c, b in zip(caches, before):
        np.testing.assert_array_equal(c, b)


def test_lengths_past_the_table_are_an_error(rng):
    """257 keys asked of one 256-key page: FlashAttention refuses it, and so
    does paged_attention (it used to attend over the 256 keys it had)."""
    _, _, kc, vc, table = make_cache(rng, [200], 256, 1, 16, "nhd", spare=0)
    table = table[:, :1]
    q = rng.standard_normal((1, 1, 2, 16)).astype(np.float32)
    refused(lambda: paged_attention(q, kc, vc, table, np.array([257], np.int32)), (kc, vc),
            r"sequence 0 has 257 keys in the cache, more than its block_table row holds "
            r"\(1 pages of 256 = 256 keys\)")
    # The full table still takes its 256 keys.
    assert np.isfinite(paged_attention(q, kc, vc, table, np.array([256], np.int32))).all()


def test_append_into_a_full_table_is_an_error(rng):
    """Appending a row past a sequence's pages used to drop the row without
    a word; now the call is refused and the caches are left untouched."""
    q, kc, vc, table, k_new, v_new = serving_case(rng, [20, 5])
    capacity = table.shape[1] * 16
    full = np.array([capacity, 5], np.int32)
    refused(lambda: paged_attention(q, kc, vc, table, full, k=k_new, v=v_new), (kc, vc),
            rf"sequence 0 has {capacity} keys in the cache \+ 1 appended rows = "
            rf"{capacity + 1}, more than its block_table row holds \({table.shape[1]} pages "
            rf"of 16 = {capacity} keys\)")


def test_negative_length_is_an_error(rng):
    q, kc, vc, table, k_new, v_new = serving_case(rng, [20, 5])
    refused(lambda: paged_attention(q, kc, vc, table, np.array([20, -1], np.int32),
                                    k=k_new, v=v_new), (kc, vc),
            r"cache_seqlens\[1\] is -1: a sequence's length must be >= 0")


def test_page_outside_the_pool_is_an_error(rng):
    """A page that holds keys must be a page of the cache; entries past a
    sequence's keys are never read and may hold anything (make_cache puts
    out-of-range entries there)."""
    q, kc, vc, table, k_new, v_new = serving_case(rng, [20, 5])
    num_pages = kc.shape[0]
    bad = table.copy()
    bad[1, 0] = num_pages
    refused(lambda: paged_attention(q, kc, vc, bad, np.array([20, 5], np.int32)), (kc, vc),
            rf"block_table\[1, 0\] is {num_pages}, holding keys of sequence 1, but the "
            rf"cache has {num_pages} pages \(0 to {num_pages - 1}\)")
    bad[1, 0] = -2
    refused(lambda: paged_attention(q, kc, vc, bad, np.array([20, 5], np.int32),
                                    k=k_new, v=v_new), (kc, vc), r"block_table\[1, 0\] is -2")
    # The appended row's page is checked too: 16 keys fill page 0 of
    # sequence 1, the row goes to its page 1.
    bad = table.copy()
    bad[1, 1] = num_pages + 3
    refused(lambda: paged_attention(q, kc, vc, bad, np.array([20, 16], np.int32),
                                    k=k_new, v=v_new), (kc, vc), r"block_table\[1, 1\] is")


def test_two_sequences_appending_into_one_page_is_an_error(rng):
    q, kc, vc, table, k_new, v_new = serving_case(rng, [20, 5])
    shared = table.copy()
    shared[1, 0] = table[0, 1]  # sequence 1's page is sequence 0's second
    refused(lambda: paged_attention(q, kc, vc, shared, np.array([20, 5], np.int32),
                                    k=k_new, v=v_new), (kc, vc),
            rf"sequences 0 and 1 both append rows into page {table[0, 1]}")
    # Reading a shared page (a common prefix) is fine.
    assert np.isfinite(paged_attention(q, kc, vc, shared, np.array([20, 5], np.int32))).all()


def test_serving_errors_with_torch_tensors(rng):
    torch = require("torch")
    q, kc, vc, table, k_new, v_new = (torch.from_numpy(x) for x in serving_case(rng, [20, 5]))
    full = torch.tensor([table.shape[1] * 16, 5], dtype=torch.int32)
    before = kc.clone()
    with pytest.raises(ValueError, match=f"sequence 0 has {table.shape[1] * 16} keys in the"):
        paged_attention(q, kc, vc, table, full, k=k_new, v=v_new)
    assert torch.equal(kc, before)


def test_appended_rows_must_fit_the_caches(rng):
    q, kc, vc, table, k_new, v_new = serving_case(rng, [20, 5])
    lens = np.array([20, 5], np.int32)
    with pytest.raises(ValueError, match=r"k must be \(B, Sk, Hkv, head size\) = \[2, 1, 1, 16\]"):
        paged_attention(q, kc, vc, table, lens, k=k_new[:1], v=v_new)
    with pytest.raises(ValueError, match=r"v must be \(B, Sk, Hkv, head size\) = \[2, 1, 1, 16\]"):
        paged_attention(q, kc, vc, table, lens, k=k_new, v=v_new[:, :, :, :8])
    with pytest.raises(ValueError, match=r"block_table has 1 rows for the 2 sequences of q"):
        paged_attention(q, kc, vc, table[:1], lens)
    with pytest.raises(ValueError, match=r"and v_cache .* must have the same pages"):
        paged_attention(q, kc, vc[:-1], table, lens)


@pytest.mark.parametrize("options", [
    dict(window_size=(20, 0), softcap=3.0, alibi="heads"),
    dict(causal=False, alibi="batch", window_size=(-1, 4)),
    dict(score_mod=lambda s, b, h, i, j: s - 0.01 * (h + 1) * (i - j),
         mask_mod=lambda b, h, i, j: (j < 4) | (j % 3 != 0)),
], ids=["window-softcap-alibi", "alibi-per-sequence-right-window", "score-and-mask-mod"])
def test_modifiers_match_float64(rng, options):
    """flash_attn_with_kvcache's window_size, softcap and alibi_slopes, and
    flex's score_mod / mask_mod, over pages with appended rows, against
    float64 on the contiguous keys."""
    torch = require("torch")
    lengths, sq, hq, hkv, d = [70, 5, 33], 3, 4, 2, 16
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, hkv, d, "nhd")
    q = rng.standard_normal((3, sq, hq, d)).astype(np.float32)
    k_new, v_new = (rng.standard_normal((3, sq, hkv, d)).astype(np.float32) for _ in range(2))
    slopes = {"heads": alibi(hq), "batch": rng.uniform(0.1, 1, (3, hq)).astype(np.float32),
              None: None}[options.pop("alibi", None)]
    got = paged_attention(q, kc, vc, table, np.array(lengths, np.int32), k=k_new, v=v_new,
                          alibi_slopes=slopes, **options)
    keys = [np.concatenate([k, k_new[b]]) for b, k in enumerate(keys)]
    values = [np.concatenate([v, v_new[b]]) for b, v in enumerate(values)]
    window = options.get("window_size")
    big = 10 ** 6
    want, _ = modified_reference(
        torch.from_numpy(q.reshape(-1, hq, d)).double(),
        *(torch.from_numpy(np.concatenate(x)).double() for x in (keys, values)),
        np.arange(0, 3 * sq + 1, sq), np.concatenate([[0], np.cumsum([len(k) for k in keys])]),
        causal=options.get("causal", True),
        window=None if window is None else [big if w < 0 else w for w in window],
        softcap=options.get("softcap", 0.0),
        slopes=None if slopes is None else torch.from_numpy(slopes).double(),
        score_mod=options.get("score_mod"), mask_mod=options.get("mask_mod"))
    assert relative_error(got.reshape(-1, hq, d), want.numpy()) < 1e-5


def test_dropout_with_window_softcap_alibi_matches_float64(rng):
    """Dropout's keep decisions, read from one call whose value cache holds
    one-hot rows (key j of its sequence -> column j, so O = dropout(P) /
    (1 - p)), are those of a call with the same seed on other values, with a
    window, softcap and ALiBi: the output is dropout(P) V against float64
    on the contiguous keys. Another seed drops others."""
    torch = require("torch")
    p, seed = 0.25, 11
    lengths, sq, hq, hkv, d, dv = [40, 9, 23], 3, 4, 2, 16, 48
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, hkv, d, "nhd", dv=dv)
    eye = np.zeros_like(vc)
    for b, n in enumerate(lengths):
        for j in range(n):
            eye[table[b, j // 16], j % 16, :, j] = 1
    q = rng.standard_normal((3, sq, hq, d)).astype(np.float32)
    seqlens = np.array(lengths, np.int32)
    slopes = alibi(hq)
    options = dict(window_size=(20, 0), softcap=3.0, alibi_slopes=slopes, dropout_p=p)
    dropped = paged_attention(q, kc, eye, table, seqlens, seed=seed, **options)
    keep = [torch.from_numpy(dropped[b, :, :, :n] != 0).transpose(0, 1).double()
            for b, n in enumerate(lengths)]
    # Among the keys the causal window leaves, about 1 - p are kept.
    kept = torch.cat([x[:, (np.arange(sq)[:, None] + n - sq >= np.arange(n)) &
                       (np.arange(sq)[:, None] + n - sq - 20 <= np.arange(n))].flatten()
                      for x, n in zip(keep, lengths)])
    assert 0.6 < kept.mean() < 0.9
    got = paged_attention(q, kc, vc, table, seqlens, seed=seed, **options)
    want, _ = modified_reference(
        torch.from_numpy(q.reshape(-1, hq, d)).double(),
        *(torch.from_numpy(np.concatenate(x)).double() for x in (keys, values)),
        np.arange(0, 3 * sq + 1, sq), np.concatenate([[0], np.cumsum(lengths)]),
        causal=True, window=[20, 0], softcap=3.0, slopes=torch.from_numpy(slopes).double(),
        keep=keep, dropout_p=p)
    assert relative_error(got.reshape(-1, hq, dv), want.numpy()) < 1e-5
    assert not np.array_equal(got, paged_attention(q, kc, vc, table, seqlens, seed=seed + 1,
                                                   **options))
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        paged_attention(q, kc, vc, table, seqlens, dropout_p=1.0)


def test_modifiers_read_new_captures_each_call(rng):
    """A captured array's new values (a per-step bias table) take effect
    without a recompile."""
    lengths = [40, 9]
    keys, values, kc, vc, table = make_cache(rng, lengths, 16, 1, 16, "nhd")
    q = rng.standard_normal((2, 1, 2, 16)).astype(np.float32)
    bias = np.zeros(64, np.float32)

    def score_mod(s, b, h, i, j):
        return s + bias[j]

    seqlens = np.array(lengths, np.int32)
    plain = paged_attention(q, kc, vc, table, seqlens)
    np.testing.assert_allclose(paged_attention(q, kc, vc, table, seqlens, score_mod=score_mod),
                               plain, rtol=1e-6, atol=1e-6)
    compiles = attn_mlir.stats()["compiles"]
    bias[:] = -1e4  # every key but the first hidden
    bias[0] = 0
    hidden = paged_attention(q, kc, vc, table, seqlens, score_mod=score_mod)
    assert attn_mlir.stats()["compiles"] == compiles
    np.testing.assert_allclose(hidden, np.broadcast_to(
        np.stack([v[0] for v in values])[:, None, :, :], hidden.shape), rtol=1e-5, atol=1e-6)


def test_compiled_entry_refuses_lengths_past_its_pages(rng):
    """The compiled function itself (attn-check-abi's status), called
    without paged_attention's checks: a length past the keys its block table
    holds, or a negative one, is refused naming the element, where the
    lowering would attend over fewer keys than asked."""
    ir = """
    func.func @paged(%q: tensor<2x4x1x16xf32>, %kc: tensor<9x16x4x16xf32>,
                     %pt: tensor<2x4xi32>, %lens: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
      %k = attn.gather_pages %kc[%pt] : tensor<9x16x4x16xf32>, tensor<2x4xi32>
           -> tensor<2x4x64x16xf32>
      %e = tensor.empty() : tensor<2x4x1x16xf32>
      %o = attn.sdpa %q, %k, %k kv_lens(%lens : tensor<2xi32>) outs(%e)
         : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>
           -> tensor<2x4x1x16xf32>
      return %o : tensor<2x4x1x16xf32>
    }
    """
    function = attn_mlir.compile(ir)
    q = rng.standard_normal((2, 4, 1, 16)).astype(np.float32)
    kc = rng.standard_normal((9, 16, 4, 16)).astype(np.float32)
    table = rng.permutation(9)[:8].reshape(2, 4).astype(np.int32)
    full = function(q, kc, table, np.array([64, 3], np.int32))
    assert np.isfinite(full).all()
    for lens, match in (([65, 3], r"element 0 is 65, outside \[0, 64\]"),
                        ([5, -1], r"element 1 is -1, outside \[0, 64\]")):
        with pytest.raises(ValueError, match=match):
            function(q, kc, table, np.array(lens, np.int32))



def test_compiled_entry_refuses_pages_outside_its_cache(rng):
    """The compiled function itself refuses a block table entry of a page
    holding keys (the first ceil(len / 16) of a row) outside the cache's 9
    pages, naming the entry, where gather_pages would read the nearest page
    (another sequence's keys); entries past a sequence's keys may hold
    anything (a padded table) and do not change the result."""
    ir = """
    func.func @paged(%q: tensor<2x4x1x16xf32>, %kc: tensor<9x4x16x16xf32>,
                     %pt: tensor<2x4xi64>, %lens: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
      %k = attn.gather_pages %kc[%pt] layout = <hnd> : tensor<9x4x16x16xf32>, tensor<2x4xi64>
           -> tensor<2x4x64x16xf32>
      %e = tensor.empty() : tensor<2x4x1x16xf32>
      %o = attn.sdpa %q, %k, %k kv_lens(%lens : tensor<2xi32>) outs(%e)
         : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>
           -> tensor<2x4x1x16xf32>
      return %o : tensor<2x4x1x16xf32>
    }
    """
    function = attn_mlir.compile(ir)
    q = rng.standard_normal((2, 4, 1, 16)).astype(np.float32)
    kc = rng.standard_normal((9, 4, 16, 16)).astype(np.float32)
    table = rng.permutation(9)[:8].reshape(2, 4).astype(np.int64)
    lens = np.array([64, 17], np.int32)  # sequence 1: pages [1, 0] and [1, 1]
    expected = function(q, kc, table, lens)
    padded = table.copy()
    padded[1, 2:] = (-1, 600)
    np.testing.assert_array_equal(function(q, kc, padded, lens), expected)
    for (b, j), page in (((0, 3), 9), ((1, 1), -1), ((0, 0), 1 << 40)):
        bad = table.copy()
        bad[b, j] = page
        with pytest.raises(ValueError, match=(
                rf"element \[{b}, {j}\] is {page}, a page sequence {b} reads keys from or "
                r"writes rows into, but the cache has 9 pages \(0 to 8\)")):
            function(q, kc, bad, lens)
    # The lengths are checked first: a length past the table is named as one.
    with pytest.raises(ValueError, match=r"element 1 is 65, outside \[0, 64\]"):
        function(q, kc, padded, np.array([64, 65], np.int32))


def test_compiled_append_refuses_rows_it_would_drop(rng):
    """A compiled attn.append_pages called without paged_attention's checks
    refuses what its lowering would silently skip or clobber: rows past a
    sequence's block table row, rows landing on a page outside the cache,
    two sequences writing one page. The caller's cache is untouched."""
    ir = """
    func.func @append(%rows: tensor<2x4x3x16xf32>, %kc: tensor<9x16x4x16xf32>,
                      %pt: tensor<2x4xi32>, %pos: tensor<2xi64>) -> tensor<9x16x4x16xf32> {
      %c = attn.append_pages %rows into %kc[%pt] at %pos
         : tensor<2x4x3x16xf32>, tensor<9x16x4x16xf32>, tensor<2x4xi32>, tensor<2xi64>
           -> tensor<9x16x4x16xf32>
      return %c : tensor<9x16x4x16xf32>
    }
    """
    function = attn_mlir.compile(ir)
    rows = rng.standard_normal((2, 4, 3, 16)).astype(np.float32)
    kc = rng.standard_normal((9, 16, 4, 16)).astype(np.float32)
    before = kc.copy()
    table = np.array([[3, 1, 4, 0], [2, 8, 6, 5]], np.int32)
    got = function(rows, kc, table, np.array([61, 15], np.int64))
    want = kc.copy()
    for b, start in enumerate((61, 15)):
        for t in range(3):
            want[table[b, (start + t) // 16], (start + t) % 16] = rows[b, :, t]
    np.testing.assert_array_equal(got, want)
    shared, outside = table.copy(), table.copy()
    shared[1, 2], outside[1, 2] = 1, 9
    for tab, pos, match in (
            (table, [3, 62], r"argument #3 \(positions\), element 1 is 62: sequence 1's "
                             r"appended rows must fit its block table row, so its position "
                             r"must be in \[0, 61\]"),
            (table, [-1, 0], r"element 0 is -1: sequence 0's"),
            (outside, [30, 33], r"element \[1, 2\] is 9, a page sequence 1 reads keys from "
                                r"or writes rows into, but the cache has 9 pages"),
            (shared, [30, 33], r"sequences 0 and 1 both append rows into page 1")):
        with pytest.raises(ValueError, match=match):
            function(rows, kc, tab, np.array(pos, np.int64))
    np.testing.assert_array_equal(kc, before)

