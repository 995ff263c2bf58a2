"""Run by test/Python/skip-policy.test next to python/tests/conftest.py:
only a missing GPU or CUDA toolkit may skip a test."""

import pytest

from conftest import GPU_SKIP, TOOLKIT_SKIP, require


def test_gpu_skip_stays_a_skip():
    pytest.skip(f"{GPU_SKIP}: none here")


@pytest.mark.skipif(True, reason=f"{TOOLKIT_SKIP}: not built")
def test_toolkit_skip_stays_a_skip():
    pass


def test_other_skip_fails():
    pytest.skip("torch is not installed")


@pytest.mark.skipif(True, reason="flaky")
def test_other_skip_mark_fails():
    pass


def test_missing_module_fails():
    require("attn_mlir_no_such_module")
