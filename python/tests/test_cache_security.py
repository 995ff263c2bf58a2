# ===- test_cache_security.py - a disk cache nobody else can poison --------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The disk cache holds shared libraries the package loads, so it is used
# only in a directory private to this user, and a library is loaded only
# when its content matches the hash recorded when it was written; several
# threads and processes filling it at once all get correct results. A
# "planted" library here is a real one compiled from other IR (a different
# scale): loading it instead of the right one gives wrong numbers, which
# the tests would see.
#
# ===----------------------------------------------------------------------=== #

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import attn_mlir
from conftest import TINY_SDPA, reference_sdpa, relative_error

PLANTED = TINY_SDPA.replace("outs(%e)", "outs(%e) scale = 3.0")


@pytest.fixture
def q(rng):
    return rng.standard_normal((1, 1, 4, 8)).astype(np.float32)


def compile_in(directory, ir=TINY_SDPA, monkeypatch=None):
    """attn_mlir.compile(ir) with `directory` as the disk cache, after
    forgetting the functions of this process."""
    monkeypatch.setenv("ATTN_MLIR_CACHE_DIR", str(directory))
    attn_mlir.clear_cache()
    return attn_mlir.compile(ir)


def library_of(directory):
    """The one library in `directory` (and no leftover temporary file)."""
    names = sorted(os.listdir(directory))
    libraries = [n for n in names if n.endswith(".so")]
    assert len(libraries) == 1 and names == [libraries[0], libraries[0] + ".sha256"], names
    return os.path.join(directory, libraries[0])


def plant(directory, tmp_path, monkeypatch):
    """Puts, under the name TINY_SDPA's library has, a library compiled from
    PLANTED with its own correct hash next to it (what someone who can
    write the directory could do); returns the name."""
    right, other = tmp_path / "right", tmp_path / "other"
    compile_in(right, TINY_SDPA, monkeypatch)
    compile_in(other, PLANTED, monkeypatch)
    name = os.path.basename(library_of(right))
    for suffix in ("", ".sha256"):
        shutil.copy(library_of(other) + suffix, os.path.join(directory, name + suffix))
    return name


def test_the_directory_is_created_private_and_entries_carry_their_hash(tmp_path, monkeypatch, q):
    directory = tmp_path / "a" / "cache"
    f = compile_in(directory, monkeypatch=monkeypatch)
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    library = library_of(directory)
    with open(library, "rb") as lib, open(library + ".sha256") as recorded:
        assert recorded.read().strip() == hashlib.sha256(lib.read()).hexdigest()
    assert relative_error(f(q), reference_sdpa(q, q, q)) < 1e-5
    before = attn_mlir.stats()
    compile_in(directory, monkeypatch=monkeypatch)
    assert attn_mlir.stats()["disk_hits"] == before["disk_hits"] + 1


def test_a_directory_others_can_write_is_not_used(tmp_path, monkeypatch, q):
    shared = tmp_path / "shared"
    shared.mkdir()
    name = plant(shared, tmp_path, monkeypatch)
    os.chmod(shared, 0o777)
    before = attn_mlir.stats()
    with pytest.warns(attn_mlir.CacheWarning, match=r"other users can write to it "
                                                     r"\(mode 777\)"):
        f = compile_in(shared, monkeypatch=monkeypatch)
    after = attn_mlir.stats()
    assert after["disk_hits"] == before["disk_hits"]  # the planted library was not loaded
    assert after["compiles"] == before["compiles"] + 1
    assert sorted(os.listdir(shared)) == [name, name + ".sha256"]  # nothing written there
    assert relative_error(f(q), reference_sdpa(q, q, q)) < 1e-5
    # One warning per directory and process.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_in(shared, monkeypatch=monkeypatch)


def test_a_directory_of_another_user_is_not_used(tmp_path, monkeypatch, q):
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        plant(theirs, tmp_path, monkeypatch)
        os.chown(theirs, 65534, 65534)
    else:
        theirs = "/"  # root's: a directory this user does not own
    with pytest.warns(attn_mlir.CacheWarning, match=r"it belongs to user id \d+, not to "
                                                     rf"this process's \({os.geteuid()}\)"):
        f = compile_in(theirs, monkeypatch=monkeypatch)
    assert relative_error(f(q), reference_sdpa(q, q, q)) < 1e-5


@pytest.mark.parametrize("damage", ["truncated", "swapped", "no hash", "group-writable"])
def test_a_damaged_entry_is_compiled_again(tmp_path, monkeypatch, q, damage):
    directory = tmp_path / "cache"
    compile_in(directory, monkeypatch=monkeypatch)
    library = library_of(directory)
    # New files put in place (this process has the library mapped: changing
    # that file in place would change the code it runs).
    damaged = tmp_path / "damaged.so"
    if damage == "truncated":  # as a copy cut short would leave it
        with open(library, "rb") as f, open(damaged, "wb") as out:
            out.write(f.read()[:os.path.getsize(library) // 2])
        os.replace(damaged, library)
    elif damage == "swapped":  # another library, the old hash
        other = tmp_path / "other"
        compile_in(other, PLANTED, monkeypatch)
        shutil.copy(library_of(other), damaged)
        os.replace(damaged, library)
    elif damage == "no hash":
        os.unlink(library + ".sha256")
    else:
        os.chmod(library, 0o664)
    before = attn_mlir.stats()
    f = compile_in(directory, monkeypatch=monkeypatch)
    after = attn_mlir.stats()
    assert after["disk_rejects"] == before["disk_rejects"] + 1
    assert after["compiles"] == before["compiles"] + 1
    assert relative_error(f(q), reference_sdpa(q, q, q)) < 1e-5
    library_of(directory)  # rewritten whole, with its hash
    compile_in(directory, monkeypatch=monkeypatch)
    assert attn_mlir.stats()["disk_hits"] == after["disk_hits"] + 1


def test_many_threads_at_once(rng):
    """One configuration called from 8 threads at once, the first calls
    racing to compile it: every result right."""
    attn_mlir.clear_cache()
    inputs = [rng.standard_normal((2, 3, 37, 16)).astype(np.float32) for _ in range(32)]

    def call(x):
        return x, attn_mlir.scaled_dot_product_attention(x, x, x, is_causal=True, scale=0.31)

    with ThreadPoolExecutor(8) as pool:
        for x, out in pool.map(call, inputs):
            want = reference_sdpa(x, x, x, causal=True, scale=0.31)
            assert relative_error(out, want) < 1e-5


SCRIPT = """
import numpy as np, attn_mlir
q = np.linspace(-1, 1, 2 * 3 * 29 * 16, dtype=np.float32).reshape(2, 3, 29, 16)
np.save(__import__("sys").argv[1], attn_mlir.scaled_dot_product_attention(q, q, q, scale=0.47))
"""


def test_many_processes_fill_one_cache(tmp_path):
    """Six processes compiling the same function into one new cache at
    once: all get the right result, and the cache ends with one whole
    library and its hash (no temporary file left)."""
    directory = tmp_path / "cache"
    env = dict(os.environ, ATTN_MLIR_CACHE_DIR=str(directory))
    outs = [tmp_path / f"out{i}.npy" for i in range(6)]
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(out)], env=env)
             for out in outs]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    q = np.linspace(-1, 1, 2 * 3 * 29 * 16, dtype=np.float32).reshape(2, 3, 29, 16)
    want = reference_sdpa(q, q, q, scale=0.47)
    for out in outs:
        assert relative_error(np.load(out), want) < 1e-5
    library_of(directory)
