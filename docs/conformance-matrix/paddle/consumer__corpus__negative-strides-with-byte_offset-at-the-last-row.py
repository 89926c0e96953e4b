# paddle 3.3.1: consumer/corpus/negative-strides-with-byte_offset-at-the-last-row (fail)
# requires: an imported array holds the values at data + byte_offset + strides, for every layout the release allows (negative, zero and odd strides; size-1 and size-0 dimensions; 0-d).
# source: DLPack C header (dlpack.h), DLTensor data, byte_offset and strides
# got: the imported array holds [[1.539989614439558e-36, 4.063216068939723e-34, 1.0711190335780294e-31], [0.0, 4.484155085839415e-44, 0.0]]; the tensor holds [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]] (the tensor has byte_offset 12, strides (-3, 1))
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(-3, 1), byte_offset=12, data='buffer', buffer_bytes=24, ndim=2, version=(1, 3))
expected = producer.fill()
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.check_usable(lambda: xp.sum(y.astype('complex128')))
reference.check_values(producer, y, lambda y: (y.astype('float32') if y.dtype in (xp.bfloat16, xp.float8_e4m3fn, xp.float8_e5m2) else y).tolist(), expected)
del y
reference.check_released(producer)
