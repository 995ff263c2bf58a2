# Writes the .npy files errors.test feeds attn-run into the directory argv[1].
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
np.save(os.path.join(out, "i32.npy"), np.zeros((1, 1, 4, 8), np.int32))
np.save(os.path.join(out, "short.npy"), np.zeros((1, 1, 3, 8), np.float32))
np.save(os.path.join(out, "rank1.npy"), np.zeros(3, np.float32))

# A header promising 10^14 floats, followed by no data.
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000000,), }"
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(os.path.join(out, "huge.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
