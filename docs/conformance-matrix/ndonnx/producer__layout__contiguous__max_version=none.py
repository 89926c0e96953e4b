# ndonnx 0.23.0: producer/layout/contiguous/max_version=none (fail)
# requires: a library's arrays export: they have __dlpack__ (and __dlpack_device__), which exports a plain array (one that refuses every plain array has the name, not the side). A library that only imports declares it in its adapter (sides = ('consumer',)).
# source: Python array API standard 2024.12, array.__dlpack__ and array.__dlpack_device__
# got: ndonnx has no producer: it refuses even the plainest input: `x.__dlpack__()` raised BufferError: ndonnx does not support the export of array data; `x.__dlpack__(max_version=(1, 3))` raised BufferError: ndonnx does not support the export of array data. If it has none by design, say so in its adapter: sides = ('consumer',)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import ndonnx as xp
from dlpack_conformance import reference
x = xp.asarray([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype=xp.float32)
try:
    capsule = x.__dlpack__()
except Exception as error:
    reference.refused(error, 'export-legacy')
reference.check_export(x, capsule, expected=[[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], shape=(4, 6), dtype='float32', made=lambda y: reference.values_of(y))
