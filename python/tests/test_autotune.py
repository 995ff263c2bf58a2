# ===- test_autotune.py - compile(..., autotune=True) ---------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The sizes autotuning picks are timed once per (CPU, problem class, dtype)
# and reused; the tuned function computes the same attention; a corrupt or
# foreign tuning cache warns and is replaced. The tests fix some sizes in
# `pipeline` so that only two candidates (the query tiles) are timed.
#
# ===----------------------------------------------------------------------=== #

import json

import numpy as np
import pytest

import attn_mlir
from conftest import reference_sdpa, relative_error

IR = """
func.func @attn(%q: tensor<1x2x72x16xf32>, %k: tensor<1x2x72x16xf32>, %v: tensor<1x2x72x16xf32>)
    -> tensor<1x2x72x16xf32> {
  %e = tensor.empty() : tensor<1x2x72x16xf32>
  %o = attn.sdpa %q, %k, %v outs(%e) {causal}
     : tensor<1x2x72x16xf32>, tensor<1x2x72x16xf32>, tensor<1x2x72x16xf32> -> tensor<1x2x72x16xf32>
  return %o : tensor<1x2x72x16xf32>
}"""
FIXED = "kv-tile=32 m-block=2 n-block=16"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A tuning cache of the test's own; compiled functions stay in memory."""
    monkeypatch.setenv("ATTN_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ATTN_MLIR_DISK_CACHE", "0")
    attn_mlir.clear_cache()
    yield tmp_path / "tuning.json"
    attn_mlir.clear_cache()


def check(function, rng):
    q, k, v = (rng.standard_normal((1, 2, 72, 16)).astype(np.float32) for _ in range(3))
    got = function(q, k, v)
    assert relative_error(got, reference_sdpa(q, k, v, causal=True)) < 1e-5


def test_autotune_times_once_then_reuses_the_cache(cache, rng):
    assert attn_mlir.tuning_cache_path() == str(cache)
    before = attn_mlir.stats()
    tuned = attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    mid = attn_mlir.stats()
    assert mid["autotune_runs"] == before["autotune_runs"] + 1
    check(tuned, rng)

    entries = json.loads(cache.read_text())["entries"]
    assert len(entries) == 1
    entry = entries[0]
    assert entry["dtype"] == "f32"
    # 72 rounds up to 128; the head size and the fixed sizes are kept.
    assert entry["problem"].startswith("sdpa(1x2x128x16, 1x2x128x16")
    assert entry["problem"].endswith("[kv-tile=32 m-block=2 n-block=16]")
    assert entry["sizes"]["m-block"] == 2 and entry["sizes"]["kv-tile"] == 32

    # A new compile (the in-process cache forgotten) takes the entry.
    attn_mlir.clear_cache()
    again = attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    after = attn_mlir.stats()
    assert after["autotune_runs"] == mid["autotune_runs"]
    assert after["tuning_cache_hits"] == mid["tuning_cache_hits"] + 1
    check(again, rng)


def test_sizes_from_the_cache_are_the_ones_compiled_with(cache, rng):
    attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    cache_data = json.loads(cache.read_text())
    # Sizes no candidate has, and that every x86-64 and AArch64 target can
    # use: if they are compiled with, the function still computes the
    # attention (72 is no multiple of 48, so the remainder tiles run too).
    cache_data["entries"][0]["sizes"]["q-tile"] = 48
    cache.write_text(json.dumps(cache_data))
    attn_mlir.clear_cache()
    before = attn_mlir.stats()
    function = attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    assert attn_mlir.stats()["tuning_cache_hits"] == before["tuning_cache_hits"] + 1
    check(function, rng)


def test_corrupt_cache_warns_and_is_replaced(cache, rng):
    cache.write_text("{ not json")
    with pytest.warns(attn_mlir.TuningWarning, match="is not valid JSON"):
        function = attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    check(function, rng)
    assert json.loads(cache.read_text())["format"] == 1


def test_foreign_entry_warns_and_is_retuned(cache):
    attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    data = json.loads(cache.read_text())
    data["entries"][0]["target"] = "x86_64-pc-linux-gnu some-other-cpu 0"
    cache.write_text(json.dumps(data))
    attn_mlir.clear_cache()
    before = attn_mlir.stats()["autotune_runs"]
    with pytest.warns(attn_mlir.TuningWarning, match="measured for another target"):
        attn_mlir.compile(IR, pipeline=FIXED, autotune=True)
    assert attn_mlir.stats()["autotune_runs"] == before + 1
    entries = json.loads(cache.read_text())["entries"]
    assert len(entries) == 1 and entries[0]["target"] != "x86_64-pc-linux-gnu some-other-cpu 0"


def test_autotune_is_for_the_cpu(cache):
    with pytest.raises(ValueError, match="tunes the CPU pipeline"):
        attn_mlir.compile(IR, target="cuda", autotune=True)


def test_autotune_is_off_by_default(cache):
    attn_mlir.compile(IR, pipeline=FIXED)
    assert not cache.exists()
