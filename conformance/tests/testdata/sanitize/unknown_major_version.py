"""A tensor that says it is DLPack 0.9 in a versioned capsule (a major
version no consumer of DLPack 1 may read past): NumPy reads it anyway."""
import numpy as np
from handmade import Buffer

y = np.from_dlpack(Buffer([1.0, 2.0, 3.0], version=(0, 9)))
print(y.tolist())
print("last line")
