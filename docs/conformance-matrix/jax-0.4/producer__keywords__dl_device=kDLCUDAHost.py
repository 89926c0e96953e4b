# jax-0.4 0.4.30: producer/keywords/dl_device=kDLCUDAHost (fail)
# requires: a dl_device the producer cannot handle raises BufferError.
# source: Python array API standard 2024.12, array.__dlpack__, dl_device
# got: __dlpack__(dl_device=(3, 0)) raised KeyError: 3, not BufferError
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import jax
jax.config.update('jax_enable_x64', True)
import jax.numpy as xp
from dlpack_conformance import reference
x = xp.asarray([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype=xp.float32)
reference.check_to_device(x, lambda: x.__dlpack__(max_version=(1, 3), dl_device=(3, 0)), device=(3, 0), declared=False, expected=[[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], shape=(4, 6), dtype='float32')
