# paddle 3.3.1: consumer/legacy/byte_offset (fail)
# requires: an imported array holds the values at data + byte_offset + strides, for every layout the release allows (negative, zero and odd strides; size-1 and size-0 dimensions; 0-d).
# source: DLPack C header (dlpack.h), DLTensor data, byte_offset and strides
# got: the imported array holds [[0.0, 0.0, 0.0], [0.0, -3.0, -2.5]]; the tensor holds [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]] (the tensor has byte_offset 16)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), byte_offset=16, versioned=False, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_usable(lambda: xp.sum(y.astype('complex128')))
reference.check_values(producer, y, lambda y: (y.astype('float32') if y.dtype in (xp.bfloat16, xp.float8_e4m3fn, xp.float8_e5m2) else y).tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
del y
reference.check_released(producer)
