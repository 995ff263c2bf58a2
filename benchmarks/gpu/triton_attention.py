"""A fused attention forward kernel in Triton (FlashAttention-2: one program
per (query block, batch x head), online softmax over key blocks in
registers), the Triton peer of bench.py. Written for this project from the
algorithm; it plays the role of Triton's fused-attention tutorial kernel
(which the triton wheel does not ship), with the same structure: Q block in
registers, K/V blocks streamed, exp2 with log2(e) folded into the scale,
causal blocks past the diagonal skipped."""

import math

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
    ],
    key=["S", "D", "CAUSAL"],
)
@triton.jit
def _forward(Q, K, V, O, scale_log2, S, D: tl.constexpr, CAUSAL: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * D
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * D + dims[None, :], mask=rows[:, None] < S, other=0.0)
    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    end = tl.minimum((block + 1) * BLOCK_M, S) if CAUSAL else S
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k_t = tl.load(K + base + keys[None, :] * D + dims[:, None], mask=keys[None, :] < S, other=0.0)
        scores = tl.dot(q, k_t) * scale_log2
        visible = keys[None, :] < S
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        scores = tl.where(visible, scores, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(scores, 1))
        safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)
        p = tl.math.exp2(scores - safe_max[:, None])
        alpha = tl.math.exp2(row_max - safe_max)
        row_sum = row_sum * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * D + dims[None, :], mask=keys[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        row_max = new_max
    acc = acc / tl.where(row_sum == 0.0, 1.0, row_sum)[:, None]
    tl.store(O + base + rows[:, None] * D + dims[None, :], acc.to(O.dtype.element_ty),
             mask=rows[:, None] < S)


def attention(q, k, v, causal):
    """softmax(q k^T / sqrt(D)) v for contiguous [B, H, S, D] tensors."""
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(S, meta["BLOCK_M"]), B * H)  # noqa: E731
    _forward[grid](q, k, v, out, (1.0 / math.sqrt(D)) * 1.4426950408889634, S, D, causal)
    return out
