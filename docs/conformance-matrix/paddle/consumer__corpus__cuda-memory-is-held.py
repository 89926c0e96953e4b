# paddle 3.3.1: consumer/corpus/cuda-memory-is-held (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV while running this case; its last words: ---------------------- | Error Message Summary: | ---------------------- | FatalError: `Segmentation fault` is detected by the operating system. |   [TimeInfo: *** Aborted at 1795856480 (unix time) try "date -d @1795856480" if you are using GNU date ***] |   [SignalInfo: *** SIGSEGV (@0x0) received by PID 23580 (TID 0x7f0c7efc9b80) from PID 0 ***]
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(2, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=2, version=(1, 3))
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
del y
reference.check_released(producer)
