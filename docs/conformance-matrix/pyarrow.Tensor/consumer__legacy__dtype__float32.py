# pyarrow.Tensor 26.0.1: consumer/legacy/dtype/float32 (fail)
# requires: from_dlpack imports a contiguous CPU tensor of a dtype the library has.
# source: Python array API standard 2024.12, from_dlpack
# got: raised ValueError: PyCapsule_GetPointer called with incorrect name
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import numpy
import pyarrow as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), dtype=(2, 32, 1), versioned=False, values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.Tensor.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-basic', producer)
reference.check_values(producer, y, lambda y: y.to_numpy().tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
del y
reference.check_released(producer)
