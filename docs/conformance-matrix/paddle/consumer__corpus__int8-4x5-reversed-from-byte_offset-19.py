# paddle 3.3.1: consumer/corpus/int8-4x5-reversed-from-byte_offset-19 (fail)
# requires: None
# source: None
# got: a check could not run: MemoryError: (ResourceExhausted) Fail to alloc memory of 18446744073709551598 size, error code is 12.
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=1, device=(1, 0), dtype=(0, 8, 1), shape=(4, 5), strides=(-5, -1), byte_offset=19, data='buffer', buffer_bytes=20, ndim=2, version=(1, 3))
expected = producer.fill()
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.check_values(producer, y, lambda y: (y.astype('float32') if y.dtype == xp.bfloat16 else y).tolist(), expected)
del y
reference.check_released(producer)
