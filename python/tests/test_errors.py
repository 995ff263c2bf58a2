# ===- test_errors.py - bad arguments give Python exceptions ---------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# ===----------------------------------------------------------------------=== #

import numpy as np
import pytest

import attn_mlir
from conftest import TINY_SDPA


def arrays(*shapes, dtype=np.float32):
    return [np.ones(s, dtype) for s in shapes]


def test_head_dim_mismatch():
    q, k, v = arrays((1, 2, 4, 16), (1, 2, 4, 15), (1, 2, 4, 8))
    with pytest.raises(ValueError, match=r"key's last dimension \(15\) must equal query's embedding size E \(16\)"):
        attn_mlir.scaled_dot_product_attention(q, k, v)


def test_gqa_needs_flag_and_divisibility():
    q, k, v = arrays((1, 6, 4, 8), (1, 4, 4, 8), (1, 4, 4, 8))
    with pytest.raises(ValueError, match=r"query heads \(6\) and key/value heads \(4\) differ"):
        attn_mlir.scaled_dot_product_attention(q, k, v)
    with pytest.raises(ValueError, match=r"query heads \(6\) must be a multiple of key/value heads \(4\)"):
        attn_mlir.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def test_mask_shape():
    q, k, v = arrays((1, 2, 4, 8), (1, 2, 5, 8), (1, 2, 5, 8))
    mask = np.ones((4, 4), bool)
    with pytest.raises(ValueError, match=r"attn_mask of shape \[4, 4\] does not broadcast to \(\.\.\., Hq, L, S\) = \[1, 2, 4, 5\]"):
        attn_mlir.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_mask_and_causal():
    q, = arrays((1, 1, 4, 8))
    with pytest.raises(ValueError, match="attn_mask and is_causal cannot both be set"):
        attn_mlir.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((4, 4), bool),
                                               is_causal=True)


def test_dtypes():
    q, = arrays((1, 1, 4, 8))
    with pytest.raises(TypeError, match="query, key and value must have the same dtype: query is f32, key is f16"):
        attn_mlir.scaled_dot_product_attention(q, q.astype(np.float16), q)
    with pytest.raises(TypeError, match="query must be float32, float16, bfloat16 or float64, got i32"):
        attn_mlir.scaled_dot_product_attention(*arrays((1, 1, 4, 8), (1, 1, 4, 8), (1, 1, 4, 8), dtype=np.int32))


def test_dropout_and_scale_ranges():
    q, = arrays((1, 1, 4, 8))
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.5"):
        attn_mlir.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(ValueError, match="scale must be finite and non-zero, got 0"):
        attn_mlir.scaled_dot_product_attention(q, q, q, scale=0)


MULTIHEAD_FORMS = ["MultiheadAttention", "NumpyMultiheadAttention"]


@pytest.mark.parametrize("form", MULTIHEAD_FORMS)
def test_multihead_constructor(form):
    with pytest.raises(ValueError, match=r"embed_dim \(510\) must be divisible by num_heads \(8\)"):
        getattr(attn_mlir.nn, form)(510, 8)


@pytest.mark.parametrize("form", MULTIHEAD_FORMS)
def test_multihead_inputs(form):
    mha = getattr(attn_mlir.nn, form)(16, 4)
    x = np.ones((5, 2, 12), np.float32)
    with pytest.raises(ValueError, match=r"query's last dimension \(12\) must be embed_dim \(16\)"):
        mha(x, x, x)
    with pytest.raises(ValueError, match="attn_mask is required"):
        y = np.ones((5, 2, 16), np.float32)
        mha(y, y, y, is_causal=True)


def test_load_state_dict_shapes_and_names():
    # The NumPy form's own checks (the torch module's are torch's).
    mha = attn_mlir.nn.NumpyMultiheadAttention(16, 4)
    state = mha.state_dict()
    state["in_proj_weight"] = np.ones((48, 15), np.float32)
    with pytest.raises(ValueError, match=r"in_proj_weight has shape \[48, 15\], expected \[48, 16\]"):
        mha.load_state_dict(state)
    with pytest.raises(KeyError, match="missing keys"):
        mha.load_state_dict({})


def test_bad_ir_reports_diagnostics():
    with pytest.raises(ValueError, match="expected SSA operand"):
        attn_mlir.compile("func.func @f() { %x = attn.sdpa }")


def test_verifier_message_reaches_python():
    ir = """
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x3x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %o = attn.sdpa %q, %k, %k outs(%e) : tensor<1x2x4x8xf32>, tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}"""
    with pytest.raises(ValueError, match=r"query heads \(2\) must be a multiple of key/value heads \(3\)"):
        attn_mlir.compile(ir)


def test_targets():
    with pytest.raises(ValueError, match="target must be one of cpu, cuda, got 'tpu'"):
        attn_mlir.compile("module {}", target="tpu")
    with pytest.raises(ValueError, match="the module has no public function"):
        attn_mlir.compile("module {}", target="cuda")


def test_call_checks_arguments():
    ir = TINY_SDPA
    f = attn_mlir.compile(ir)
    with pytest.raises(TypeError, match="takes 1 inputs, 2 were given"):
        f(np.ones((1, 1, 4, 8), np.float32), np.ones(1))
    with pytest.raises(TypeError, match="input #0 of @f has element type f16, the function takes f32"):
        f(np.ones((1, 1, 4, 8), np.float16))
    with pytest.raises(ValueError, match="input #0 of @f has shape 1x1x5x8, the function takes 1x1x4x8"):
        f(np.ones((1, 1, 5, 8), np.float32))


def test_compiled_code_refuses_buffers_it_was_not_compiled_for(monkeypatch, tmp_path):
    """Past the package's own checks, the compiled entry point checks its
    buffers (attn-check-abi): one of another size is refused, nothing is
    written, and the error gives the numbers."""
    monkeypatch.setenv("ATTN_MLIR_CACHE_DIR", str(tmp_path))  # a shared library
    attn_mlir.clear_cache()
    f = attn_mlir.compile(TINY_SDPA)
    out = np.full((1, 1, 4, 8), np.nan, np.float32)
    with pytest.raises(RuntimeError, match=r"@f refused its buffers: argument #0 \(shape "
                                           r"1x1x5x8\), dimension 2: size 5, expected 4"):
        f._backend.call([np.ones((1, 1, 5, 8), np.float32), out])
    assert np.isnan(out).all()
    f._backend.call([np.ones((1, 1, 4, 8), np.float32), out])  # the next call runs
    assert np.allclose(out, 1.0)


DYNAMIC_MASKED_SDPA = """
func.func @f(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>,
             %m: tensor<1x?x?x?xf32>) -> tensor<1x2x?x8xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<1x2x?x8xf32>
  %e = tensor.empty(%n) : tensor<1x2x?x8xf32>
  %o = attn.sdpa %q, %k, %v mask(%m : tensor<1x?x?x?xf32>) outs(%e)
     : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
"""


def test_compiled_code_refuses_sizes_that_disagree(monkeypatch, tmp_path):
    """Dynamic sizes the compiled code reads with one bound (the value's
    keys and the key's, a mask's `?` heads and the query's 2) must agree:
    otherwise the call is refused with both numbers, nothing written."""
    monkeypatch.setenv("ATTN_MLIR_CACHE_DIR", str(tmp_path))  # a shared library
    attn_mlir.clear_cache()
    f = attn_mlir.compile(DYNAMIC_MASKED_SDPA)
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((1, 2, n, 8)).astype(np.float32) for n in (3, 5))
    mask = np.zeros((1, 2, 3, 5), np.float32)
    out = np.full((1, 2, 3, 8), np.nan, np.float32)
    with pytest.raises(RuntimeError, match=r"argument #2 \(shape 1x2x4x8\), dimension 2: "
                                           r"size against another buffer's 4, expected 5"):
        f._backend.call([q, k, k[:, :, :4].copy(), mask, out])
    with pytest.raises(RuntimeError, match=r"argument #3 \(shape 1x1x3x5\), dimension 1: "
                                           r"size against another buffer's 1, expected 2"):
        f._backend.call([q, k, k, mask[:, :1].copy(), out])
    assert np.isnan(out).all()
    f._backend.call([q, k, k, mask, out])
    assert np.isfinite(out).all()
