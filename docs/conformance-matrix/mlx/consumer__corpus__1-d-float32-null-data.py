# mlx 0.32.4: consumer/corpus/1-d-float32-null-data (crash)
# requires: a library answers a malformed tensor with a result or an exception: it does not kill or hang the process. Reported on its own; --malformed-crashes report keeps these crashes from failing the run.
# source: the kit's policy (no DLPack text says what a consumer does with a malformed tensor)
# got: the process died of SIGSEGV without an answer while running this case
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import mlx.core as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(4,), strides=(1,), byte_offset=0, data=None, buffer_bytes=64, ndim=1, version=(1, 3))
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-malformed')
