# ndonnx 0.23.0: consumer/versioned/contiguous (fail)
# requires: a library imports DLPack tensors: it has from_dlpack, which imports a plain tensor (one that refuses every plain tensor has the name, not the side). A library that only exports declares it in its adapter (sides = ('producer',)).
# source: Python array API standard 2024.12, from_dlpack
# got: ndonnx has no consumer: it refuses even the plainest input: `xp.from_dlpack(producer)` raised BufferError: ndonnx does not (yet) support the export of array data. If it has none by design, say so in its adapter: sides = ('producer',)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import ndonnx as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), versioned=True, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-basic', producer)
reference.check_usable(lambda: xp.sum(y))
reference.check_values(producer, y, lambda y: reference.values_of(y), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
reference.check_requests(producer)
del y
reference.check_released(producer)
