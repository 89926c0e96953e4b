# tensorflow 2.21.0: consumer/legacy/dtype/int32 (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGABRT without an answer while running this case
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import tensorflow as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), dtype=(0, 32, 1), versioned=False, values=[[1, 2, 3], [4, 5, 6]])
try:
    y = xp.experimental.dlpack.from_dlpack(producer.__dlpack__())
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_usable(lambda: xp.reduce_sum(xp.cast(y, xp.float64)))
reference.check_values(producer, y, lambda y: y.numpy().tolist(), [[1, 2, 3], [4, 5, 6]])
del y
reference.check_released(producer)
