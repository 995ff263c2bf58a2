"""target="cuda": compiling works anywhere the build found the CUDA toolkit;
running needs a GPU (torch.cuda), where results are compared with PyTorch
and a float64 reference."""

import numpy as np
import pytest

import attn_mlir
from attn_mlir import _native
from conftest import GPU_SKIP, TOOLKIT_SKIP, require

needs_toolkit = pytest.mark.skipif(
    not _native.cuda_runtime_library(),
    reason=f"{TOOLKIT_SKIP}: attn-mlir was built without its driver library")

SDPA_F16 = """
func.func @f(%q: tensor<1x2x40x64xf16>) -> tensor<1x2x40x64xf16> {
  %e = tensor.empty() : tensor<1x2x40x64xf16>
  %o = attn.sdpa %q, %q, %q outs(%e) causal
     : tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16> -> tensor<1x2x40x64xf16>
  return %o : tensor<1x2x40x64xf16>
}"""


def _gpu_torch():
    torch = require("torch")
    if not torch.cuda.is_available():
        pytest.skip(f"{GPU_SKIP}: none is visible to PyTorch")
    return torch


@needs_toolkit
def test_compiles_for_cuda_and_wants_device_tensors():
    f = attn_mlir.compile(SDPA_F16, target="cuda", gpu_arch="sm_80")
    assert f.target == "cuda"
    q = np.random.default_rng(0).standard_normal((1, 2, 40, 64)).astype(np.float16)
    with pytest.raises(TypeError, match=r"input #0 of @f is a NumPy array; target='cuda' takes torch CUDA tensors"):
        f(q)


@needs_toolkit
def test_sdpa_cuda_rejects_host_arrays():
    q = np.random.default_rng(1).standard_normal((1, 2, 40, 64)).astype(np.float16)
    with pytest.raises(TypeError, match="target='cuda' takes torch CUDA tensors"):
        attn_mlir.scaled_dot_product_attention(q, q, q, is_causal=True, target="cuda")


def test_cpu_function_rejects_cuda_tensors():
    torch = _gpu_torch()
    q = torch.randn(1, 2, 40, 64, device="cuda")
    with pytest.raises(ValueError, match="is on cuda:0; this function was compiled for target='cpu'"):
        attn_mlir.scaled_dot_product_attention(q, q, q)


@needs_toolkit
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_cuda_matches_torch(dtype, causal):
    torch = _gpu_torch()
    import torch.nn.functional as F

    q, k, v = (torch.randn(2, 4, 100, 64, dtype=getattr(torch, dtype), device="cuda")
               for _ in range(3))
    out = attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=causal, target="cuda")
    assert out.device.type == "cuda" and out.dtype == q.dtype
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
    error = float((out.double() - ref).norm() / ref.norm())
    assert error < 1e-2, error
