# The harness of docs/python.md's two lines of a consumer that writes: x is
# a NumPy array (a versioned producer), then a legacy capsule of it.
import numpy as np

import dlpack_ctypes as dl

for x in (np.arange(6, dtype="float32"), np.arange(6, dtype="float32").__dlpack__()):
    # SNIPPET
    assert t.shape == (6,) and t.readonly == (not versioned)
    t.close()
