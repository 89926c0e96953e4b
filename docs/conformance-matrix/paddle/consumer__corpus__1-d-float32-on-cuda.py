# paddle 3.3.1: consumer/corpus/1-d-float32-on-cuda (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV without an answer while running this case
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(2, 0), dtype=(2, 32, 1), shape=(4,), strides=(1,), byte_offset=0, data='buffer', buffer_bytes=64, ndim=1, version=(1, 3))
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
del y
reference.check_released(producer)
