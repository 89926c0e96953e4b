# paddle 3.3.1: consumer/corpus/another-major-with-garbage-elsewhere-nothing-else-is-read (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV without an answer while running this case
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(2, 0), dtype=(5, 64, 1), shape=None, strides=None, byte_offset=9223372036854775808, data='buffer', buffer_bytes=24, ndim=-1, version=(0, 0))
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-major-version')
