# jax-0.4 0.4.30: producer/keywords/dl_device=kdlvpi-copy=false (fail)
# requires: copy=False when a copy is needed (another device) raises BufferError.
# source: Python array API standard 2024.12, array.__dlpack__, copy
# got: raised KeyError: 9, not BufferError
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import jax
jax.config.update('jax_enable_x64', True)
import jax.numpy as xp
from dlpack_conformance import reference
x = xp.asarray([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype=xp.float32)
try:
    capsule = x.__dlpack__(max_version=(1, 3), dl_device=(9, 0), copy=False)
except Exception as error:
    reference.refused(error, ('raise', 'copy-needed'))
reference.exported_anyway(capsule, 'copy-needed', (9, 0))
