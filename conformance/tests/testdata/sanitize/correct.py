"""Correct exchanges between NumPy, PyTorch (where installed) and a
hand-written producer; prints what it got and its arguments, and exits 3."""
import sys

import numpy as np
from handmade import Buffer

a = np.arange(12, dtype=np.float32).reshape(3, 4)
print(np.from_dlpack(a[::2, 1:]).tolist())
print(np.from_dlpack(Buffer([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=(2, 3), byte_offset=8)).tolist())
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    t = torch.from_dlpack(a.T)
    print(t.tolist(), np.from_dlpack(t * 2).sum())
try:
    np.from_dlpack([1, 2])  # no __dlpack__: NumPy's own error, unchanged
except (TypeError, AttributeError) as e:
    print(type(e).__name__)
print("args", sys.argv[1:])
sys.exit(3)
