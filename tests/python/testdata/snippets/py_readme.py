# The harness of README.md's Python example: this session's dlpack_cython
# stands in for mypkg's vendored build (tests/python/test_vendoring.py
# follows the README's recipe to that), x is a NumPy array, and a MyArray
# lends a NumPy array's memory to NumPy.
import sys
import types

import numpy as np

import dlpack_cython

for name in ("mypkg", "mypkg._vendor", "mypkg._vendor.python"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["mypkg._vendor.python"].dlpack_cython = dlpack_cython
x = np.arange(6, dtype="float32")

# SNIPPET

memory = np.arange(4, dtype="float32")
lent = MyArray()
lent.address, lent.shape = memory.ctypes.data, memory.shape
assert np.from_dlpack(lent).tolist() == [0.0, 1.0, 2.0, 3.0]
