# dpnp 0.20.0: consumer/corpus/int8-4x5-reversed-from-byte_offset-19 (fail)
# requires: an imported array holds the values at data + byte_offset + strides, for every layout the release allows (negative, zero and odd strides; size-1 and size-0 dimensions; 0-d).
# source: DLPack C header (dlpack.h), DLTensor data, byte_offset and strides
# got: the imported array holds [[20, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]; the tensor holds [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15], [16, 17, 18, 19, 20]] (the tensor has byte_offset 19, strides (-5, -1))
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import dpnp as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=1, device=(1, 0), dtype=(0, 8, 1), shape=(4, 5), strides=(-5, -1), byte_offset=19, data='buffer', buffer_bytes=20, ndim=2, version=(1, 3))
expected = producer.fill()
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.check_usable(lambda: y.sum())
reference.check_values(producer, y, lambda y: xp.asnumpy(y).tolist(), expected)
del y
reference.check_released(producer)
