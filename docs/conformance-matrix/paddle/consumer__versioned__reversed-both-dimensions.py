# paddle 3.3.1: consumer/versioned/reversed-both-dimensions (fail)
# requires: None
# source: None
# got: a check could not run: MemoryError: (ResourceExhausted) Fail to alloc memory of 18446744073709551600 size, error code is 12.
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), strides=(-3, -1), byte_offset=20, versioned=True, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_values(producer, y, lambda y: (y.astype('float32') if y.dtype == xp.bfloat16 else y).tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
del y
reference.check_released(producer)
