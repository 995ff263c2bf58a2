"""Prints the function attn_mlir.nn.MultiheadAttention compiles for one
call (its pre-packed weights' panels and unpacks included)."""

import numpy as np

import attn_mlir
import attn_mlir.nn as nn

sources = []
compile_shaped = nn.compile_shaped


def spy(source, dynamic=None, target="cpu", key=None):
    sources.append(source(False))
    return compile_shaped(source, dynamic, target, key=key)


nn.compile_shaped = spy
module = attn_mlir.nn.MultiheadAttention(64, 4, kdim=96, vdim=96, batch_first=True)
module.eval()
rng = np.random.default_rng(0)
q = rng.standard_normal((2, 7, 64)).astype(np.float32)
kv = rng.standard_normal((2, 9, 96)).astype(np.float32)
module(q, kv, kv, need_weights=False)
print(sources[-1])
