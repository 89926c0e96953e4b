# dpnp 0.20.0: producer/keywords/dl_device=cpu-copy=false (fail)
# requires: a library offers a way to export an array to the CPU, (kDLCPU, 0): a CPU array exports with dl_device=(kDLCPU, 0), with or without copy.
# source: Python array API standard 2024.12, array.__dlpack__, dl_device
# got: raised BufferError: array cannot be placed on the requested device without a copy
# Run from a directory holding the kit (dlgen -lang conformance -out DIR; cd DIR/conformance).
import dpnp as xp
from dlpack_conformance import reference
x = xp.asarray([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype=xp.float32)
capsule = x.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
reference.check_export(x, capsule, expected=[[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], shape=(4, 6), dtype='float32', max_version=(1, 3), copy=False, dl_device=(1, 0))
