# ===- test_viz.py - attention maps and block-sparsity pictures ------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from attn_mlir import viz
from conftest import require


def test_block_classes():
    keep = np.tril(np.ones((256, 256), bool))
    classes = viz.block_classes(keep, 128, 64)
    assert classes.tolist() == [[1, 1, 0, 0], [2, 2, 1, 1]]


def test_explanations_come_from_the_compiler():
    ir = viz._mask_ir(64, 64, lambda b, h, i, j: (j < 8) | (j <= i), False, None, "top_left")
    (remark,) = attn_mlir._native.explain_sparsity(ir)
    assert remark == "keys of row i: [0, max(8, i + 1)); classified statically"
    docs = np.repeat(np.arange(4), 16)
    ir = viz._mask_ir(64, 64, lambda b, h, i, j: docs[i] == docs[j], True, None, "top_left")
    (remark,) = attn_mlir._native.explain_sparsity(ir)
    assert "run-time block classes" in remark and "tensor.extract" in remark


def test_pictures(tmp_path):
    require("matplotlib")
    docs = np.repeat(np.arange(4), 64)
    classes, explanation = viz.block_sparsity(
        256, 256, tmp_path / "docs.png", mask_mod=lambda b, h, i, j: docs[i] == docs[j],
        is_causal=True, q_tile=64, kv_tile=64)
    assert np.array_equal(classes, np.eye(4, dtype=np.int8))
    assert "run-time block classes" in explanation
    assert (tmp_path / "docs.png").stat().st_size > 1000
    mha = attn_mlir.nn.MultiheadAttention(8, 2).eval()
    x = np.random.default_rng().standard_normal((6, 1, 8)).astype(np.float32)
    _, weights = mha(x, x, x, average_attn_weights=False)
    viz.attention_map(weights, tmp_path / "map.png")
    assert (tmp_path / "map.png").stat().st_size > 1000


def test_benchmark_pictures(tmp_path):
    require("matplotlib")
    viz.line_panels({"full, H=8, D=64": {"attn-mlir": [(512, 100.0), (1024, 150.0)],
                                         "torch": [(512, 90.0)]},
                     "causal, H=8, D=64": {"attn-mlir": [(512, 80.0)]}},
                    tmp_path / "sweep.png", reference=300.0, reference_label="peak")
    viz.ratio_bars({"dense": 1.0, "causal": 0.5}, tmp_path / "ratios.png", "ratios")
    assert (tmp_path / "sweep.png").stat().st_size > 1000
    assert (tmp_path / "ratios.png").stat().st_size > 1000
