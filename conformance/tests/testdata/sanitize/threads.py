"""Four threads exchanging arrays between NumPy and a second library
(PyTorch, or dlgen's dlpack_ctypes where PyTorch is not installed), a
thousand times each; prints one checksum per thread."""
import sys
import threading

import numpy as np

try:
    import torch

    other = torch.from_dlpack
except ImportError:
    import dlpack_ctypes

    other = dlpack_ctypes.from_dlpack
sums = [0.0] * 4


def work(k):
    total = 0.0
    for i in range(1000):
        a = np.full((8, 8), float(k + i), dtype=np.float64)[:, ::2]
        b = np.from_dlpack(other(a))
        total += float(b.sum())
    sums[k] = total


threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sums, "gil" if getattr(sys, "_is_gil_enabled", lambda: True)() else "nogil")
