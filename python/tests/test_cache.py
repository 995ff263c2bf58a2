# ===- test_cache.py - compile once per configuration ----------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from conftest import TINY_SDPA, require


def test_same_configuration_compiles_once(rng):
    attn_mlir.clear_cache()
    before = attn_mlir.stats()
    q = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    first = attn_mlir.scaled_dot_product_attention(q, q, q, is_causal=True)
    mid = attn_mlir.stats()
    assert mid["compiles"] == before["compiles"] + 1
    assert mid["last_compile_seconds"] > 0
    second = attn_mlir.scaled_dot_product_attention(q * 2, q, q, is_causal=True)
    after = attn_mlir.stats()
    assert after["compiles"] == mid["compiles"]
    assert after["cache_hits"] == mid["cache_hits"] + 1
    assert not np.array_equal(first, second)


def test_new_shape_or_flag_compiles_again(rng):
    q = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    attn_mlir.scaled_dot_product_attention(q, q, q)
    before = attn_mlir.stats()["compiles"]
    attn_mlir.scaled_dot_product_attention(q[:, :, :5], q[:, :, :5], q[:, :, :5])
    attn_mlir.scaled_dot_product_attention(q, q, q, is_causal=True, scale=0.5)
    assert attn_mlir.stats()["compiles"] == before + 2


def test_compiled_function_reused(rng):
    ir = TINY_SDPA
    f = attn_mlir.compile(ir)
    assert attn_mlir.compile(ir) is f
    assert f.name == "f" and f.inputs == [("f32", [1, 1, 4, 8])]
    q = rng.standard_normal((1, 1, 4, 8)).astype(np.float32)
    from conftest import reference_sdpa, relative_error

    assert relative_error(f(q), reference_sdpa(q, q, q)) < 1e-5


SCRIPT = """
import json, time, numpy as np, attn_mlir
q = np.ones((1, 2, 33, 16), np.float32)
start = time.perf_counter()
attn_mlir.scaled_dot_product_attention(q, q, q, is_causal=True, scale=0.123)
print(json.dumps(dict(attn_mlir.stats(), first_call=time.perf_counter() - start)))
"""


def run_process(cache, disk="1"):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, ATTN_MLIR_CACHE_DIR=str(cache), ATTN_MLIR_DISK_CACHE=disk)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def test_disk_cache_makes_the_second_process_start_fast(tmp_path):
    first = run_process(tmp_path)
    assert first["compiles"] == 1 and first["disk_hits"] == 0
    assert len(list(tmp_path.glob("*.so"))) == 1
    second = run_process(tmp_path)
    assert second["compiles"] == 0 and second["disk_hits"] == 1
    assert second["first_call"] < first["first_call"]


def test_disk_cache_can_be_turned_off(tmp_path):
    stats = run_process(tmp_path, disk="0")
    assert stats["compiles"] == 1 and stats["cache_dir"] is None
    assert not list(tmp_path.glob("*.so"))


def test_repeated_call_does_not_write_the_function_again(rng, monkeypatch):
    # A call whose shapes, types and attributes were seen before takes the
    # function chosen then without writing its texts (most of a small
    # call's overhead); anything that changes the text writes it again.
    from attn_mlir import _plan

    written = []
    source = _plan.SdpaCall.source

    def counting(self, regions, dynamic):
        written.append(dynamic)
        return source(self, regions, dynamic)

    monkeypatch.setattr(_plan.SdpaCall, "source", counting)
    attn_mlir.clear_cache()
    q = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    first = attn_mlir.scaled_dot_product_attention(q, q, q)
    assert written
    count = len(written)
    second = attn_mlir.scaled_dot_product_attention(2 * q, q, q)
    assert len(written) == count
    assert not np.array_equal(first, second)
    reference = attn_mlir.scaled_dot_product_attention(2 * q, q, q, dynamic=False)
    np.testing.assert_allclose(second, reference, rtol=1e-6)
    attn_mlir.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert len(written) > count


CHAIN = """
func.func @chain(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %t = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%t, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
"""


def test_temporaries_reuse_the_previous_calls_blocks(rng, monkeypatch):
    # The 256 KiB product between the two matmuls is a temporary: compiled
    # code takes it from the caching allocator, whose block the next call
    # gets again (no fresh pages), in a library loaded from the disk cache
    # and in the JIT alike; empty_cache gives the free blocks back.
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32) / 16
    want = (a.astype(np.float64) @ b) @ b
    for disk in ("1", "0"):
        monkeypatch.setenv("ATTN_MLIR_DISK_CACHE", disk)
        attn_mlir.clear_cache()
        f = attn_mlir.compile(CHAIN)
        np.testing.assert_allclose(f(a, b), want, rtol=1e-4, atol=1e-4)
        first = attn_mlir.stats()
        assert first["allocator_cached_bytes"] >= 256 * 256 * 4
        for _ in range(3):
            np.testing.assert_allclose(f(a, b), want, rtol=1e-4, atol=1e-4)
        after = attn_mlir.stats()
        assert after["allocator_fresh"] == first["allocator_fresh"], disk
        assert after["allocator_reused"] >= first["allocator_reused"] + 3, disk
        attn_mlir.empty_cache()
        assert attn_mlir.stats()["allocator_cached_bytes"] == 0


def test_large_results_are_cached_blocks(rng):
    # A result of 64 KiB or more (here 256 KiB) is a block of the caching
    # allocator: once the previous call's result is freed, the next call
    # reuses it and takes nothing fresh from the system. A result still
    # held keeps its block: the next call writes another one.
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32) / 16
    want = (a.astype(np.float64) @ b) @ b
    f = attn_mlir.compile(CHAIN)
    held = f(a, b)
    assert held.flags.writeable and held.flags.c_contiguous
    assert held.ctypes.data % 64 == 0
    kept = held.copy()
    first = attn_mlir.stats()
    for _ in range(3):
        np.testing.assert_allclose(f(a, b), want, rtol=1e-4, atol=1e-4)
    after = attn_mlir.stats()
    assert after["allocator_fresh"] <= first["allocator_fresh"] + 1
    # Each call: its temporary and its result from the cache.
    assert after["allocator_reused"] >= first["allocator_reused"] + 5
    other = f(2 * a, b)
    np.testing.assert_array_equal(held, kept)
    np.testing.assert_allclose(other, 2 * want, rtol=1e-4, atol=1e-4)
    before = attn_mlir.stats()["allocator_cached_bytes"]
    del held, other
    assert attn_mlir.stats()["allocator_cached_bytes"] >= before + 2 * 256 * 256 * 4


def test_large_torch_results_are_cached_blocks(rng):
    # The same through torch: the tensor owns the block.
    torch = require("torch")
    a = torch.from_numpy(rng.standard_normal((256, 256)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((256, 256)).astype(np.float32) / 16)
    want = (a.double() @ b.double()) @ b.double()
    f = attn_mlir.compile(CHAIN)
    out = f(a, b)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)
    before = attn_mlir.stats()["allocator_cached_bytes"]
    del out
    assert attn_mlir.stats()["allocator_cached_bytes"] >= before + 256 * 256 * 4
    fresh = attn_mlir.stats()["allocator_fresh"]
    torch.testing.assert_close(f(a, b).double(), want, rtol=1e-4, atol=1e-4)
    assert attn_mlir.stats()["allocator_fresh"] == fresh


@pytest.mark.parametrize("value, poisoned", [(None, False), ("", False), ("0", False),
                                             ("1", True), ("yes", True)])
def test_poison_variable_rule(monkeypatch, value, poisoned):
    """ATTN_MLIR_ALLOCATOR_POISON is read by one rule in the package, the
    rule of the runtime's allocator and of the CPU pipeline (set, and not
    0), and the disk cache's identity follows it (a pipeline built with it
    poisons its stack tiles, one built without does not)."""
    from attn_mlir import _arrays, _compile
    if value is None:
        monkeypatch.delenv("ATTN_MLIR_ALLOCATOR_POISON", raising=False)
    else:
        monkeypatch.setenv("ATTN_MLIR_ALLOCATOR_POISON", value)
    assert _arrays.poison_requested() is poisoned
    assert _compile._compiler_identity().endswith(f":{int(poisoned)}")
