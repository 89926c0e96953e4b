# paddle 3.3.1: consumer/corpus/reversed-rows-and-columns (fail)
# requires: None
# source: None
# got: a check could not run: MemoryError: (ResourceExhausted) Fail to alloc memory of 18446744073709551600 size, error code is 12.
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(-3, -1), byte_offset=20, data='buffer', buffer_bytes=24, ndim=2, version=(1, 3))
expected = producer.fill()
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.check_values(producer, y, lambda y: (y.astype('float32') if y.dtype == xp.bfloat16 else y).tolist(), expected)
del y
reference.check_released(producer)
