# Causal self-attention of q with itself in float64, compared with the
# output attn-run wrote.
import sys

import numpy as np

q = np.load(sys.argv[1])
o = np.load(sys.argv[2])
x = q.astype(np.float32).astype(np.float64)
s = x @ x.transpose(0, 1, 3, 2) / np.sqrt(x.shape[-1])
s[..., np.triu(np.ones(s.shape[-2:], bool), 1)] = -np.inf
p = np.exp(s - s.max(-1, keepdims=True))
want = (p / p.sum(-1, keepdims=True)) @ x
err = np.linalg.norm(o - want) / np.linalg.norm(want)
print(o.dtype, o.shape, "ok" if err < 1e-5 else f"FAIL {err}")
