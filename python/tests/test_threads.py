# ===- test_threads.py - compiled loops on torch's threads -----------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Compiled CPU code runs its parallel loops on torch's OpenMP team when torch
# is loaded (one pool in the process), on its own OpenMP runtime otherwise
# or when asked: same results either way, no second team started while on
# torch's, both pools from several Python threads at once. Each case runs in
# a fresh process: which runtimes have started threads is process state.
#
# ===----------------------------------------------------------------------=== #

import json
import os
import subprocess
import sys

import pytest

from conftest import require

# Prints, as JSON: the pool in use, the process's thread count after torch's
# team has run (a matmul) and after compiled calls, and whether the results
# of both pools equal torch's attention and each other.
SCRIPT = r"""
import json, os, sys, threading
import torch
import attn_mlir

def threads():
    # Compiling starts MLIR's own workers (llvm-worker-N): not a team.
    tasks = os.listdir("/proc/self/task")
    return sum(not open(f"/proc/self/task/{t}/comm").read().startswith("llvm-worker")
               for t in tasks)

pool = sys.argv[1]
if pool != "auto":
    attn_mlir.set_thread_pool(pool)
torch.manual_seed(0)
a = torch.randn(512, 512)
for _ in range(3):
    torch.mm(a, a)
before = threads()
q, k, v = (torch.randn(2, 4, 200, 32) for _ in range(3))
out = [attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=True) for _ in range(3)]
x = torch.randn(3, 50, 64)
mha = attn_mlir.nn.MultiheadAttention(64, 4, batch_first=True)
with torch.no_grad():
    mha(x, x, x, need_weights=False)
after = threads()
ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                       is_causal=True).float()
error = float((out[0] - ref).norm() / ref.norm())
# Several Python threads calling at once, each its own problem.
results = {}
def work(i):
    qi = torch.randn(1, 4, 100 + 10 * i, 32)
    got = attn_mlir.scaled_dot_product_attention(qi, qi, qi)
    want = torch.nn.functional.scaled_dot_product_attention(qi, qi, qi)
    results[i] = float((got - want).abs().max())
workers = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for w in workers: w.start()
for w in workers: w.join()
torch.save(out[0], sys.argv[2])
print(json.dumps({"pool": attn_mlir.thread_pool(), "before": before, "after": after,
                  "error": error, "same": all(torch.equal(out[0], o) for o in out),
                  "threaded": max(results.values()), "torch_threads": torch.get_num_threads(),
                  "openmp_backend": "parallel backend: OpenMP" in
                                    torch.__config__.parallel_info()}))
"""


def run(script, *args):
    out = subprocess.run([sys.executable, "-c", script, *args], env=dict(os.environ),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    require("torch")
    directory = tmp_path_factory.mktemp("pools")
    return {pool: (run(SCRIPT, pool, str(directory / pool)), directory / pool)
            for pool in ("auto", "openmp")}


def test_torch_loaded_means_torchs_team(pools):
    auto, _ = pools["auto"]
    # The PyPI wheels run ATen on OpenMP; a build on another backend keeps
    # the library's own runtime.
    assert auto["pool"] == ("torch" if auto["openmp_backend"] else "openmp")
    assert pools["openmp"][0]["pool"] == "openmp"


def test_no_second_team_on_torchs_pool(pools):
    auto, _ = pools["auto"]
    if auto["pool"] != "torch":
        # torch's ATen backend is not OpenMP: the library's own runtime.
        assert auto["pool"] == "openmp"
        return
    # The compiled calls ran on the threads torch's matmul started.
    assert auto["after"] == auto["before"]
    own, _ = pools["openmp"]
    if own["torch_threads"] > 1:
        # The library's own OpenMP starts a team of its own: the check
        # above would see it.
        assert own["after"] > own["before"]


def test_same_results_on_either_pool(pools):
    torch = require("torch")
    for pool, (result, path) in pools.items():
        assert result["error"] < 1e-5, pool
        assert result["same"], pool
        assert result["threaded"] < 1e-5, pool
    # Iterations compute the same values whoever runs them.
    assert torch.equal(torch.load(pools["auto"][1]), torch.load(pools["openmp"][1]))


def test_set_thread_pool_checks_its_argument():
    import attn_mlir
    with pytest.raises(ValueError, match="one of auto, torch, openmp, not 'gomp'"):
        attn_mlir.set_thread_pool("gomp")
    previous = attn_mlir.set_thread_pool("openmp")
    try:
        assert attn_mlir.thread_pool() == "openmp"
    finally:
        attn_mlir.set_thread_pool(previous)


def test_without_torch_the_librarys_own_runtime():
    script = r"""
import json, sys
import numpy as np
import attn_mlir
q = np.random.rand(1, 2, 64, 16).astype(np.float32)
attn_mlir.scaled_dot_product_attention(q, q, q)
try:
    attn_mlir.set_thread_pool("torch")
    refused = None
except RuntimeError as error:
    refused = str(error)
print(json.dumps({"pool": attn_mlir.thread_pool(), "torch": "torch" in sys.modules,
                  "refused": refused}))
"""
    result = run(script)
    assert not result["torch"]
    assert result["pool"] == "openmp"
    assert "torch is not loaded" in result["refused"]


def test_small_loops_run_on_the_calling_thread():
    # A loop whose iterations cost less than waking the team runs on the
    # calling thread once its body's cost is known (its first call is
    # measured on the team); a large one keeps the team.
    script = r"""
import json, torch, attn_mlir
small = torch.randn(1, 2, 16, 16)
large = torch.randn(1, 8, 512, 64)
for q in (small, large):
    attn_mlir.scaled_dot_product_attention(q, q, q)
before = attn_mlir.stats()
for _ in range(10):
    out = attn_mlir.scaled_dot_product_attention(small, small, small)
middle = attn_mlir.stats()
attn_mlir.scaled_dot_product_attention(large, large, large)
after = attn_mlir.stats()
want = torch.nn.functional.scaled_dot_product_attention(small, small, small)
print(json.dumps({"threads": torch.get_num_threads(), "pool": attn_mlir.thread_pool(),
                  "small_inline": middle["parallel_inline_loops"] - before["parallel_inline_loops"],
                  "small_team": middle["parallel_team_loops"] - before["parallel_team_loops"],
                  "large_team": after["parallel_team_loops"] - middle["parallel_team_loops"],
                  "error": float((out - want).abs().max())}))
"""
    require("torch")
    result = run(script)
    assert result["error"] < 1e-5
    if result["pool"] != "torch":
        # Not on torch's team (its backend is not OpenMP): the hook declines
        # every loop, which the library's own OpenMP runs.
        assert result["small_inline"] == result["small_team"] == result["large_team"] == 0
        return
    assert result["small_inline"] >= 10 and result["small_team"] == 0
    # With one thread every loop runs on the calling thread.
    assert result["large_team"] >= (1 if result["threads"] > 1 else 0)
