# tensorflow 2.21.0: consumer/corpus/legacy-dlmanagedtensor (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGABRT without an answer while running this case
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import tensorflow as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=False, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=2)
expected = producer.fill()
try:
    y = xp.experimental.dlpack.from_dlpack(producer.__dlpack__())
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.check_usable(lambda: xp.reduce_sum(xp.cast(y, xp.float64)))
reference.check_values(producer, y, lambda y: y.numpy().tolist(), expected)
del y
reference.check_released(producer)
