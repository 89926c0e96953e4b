# paddle 3.3.1: consumer/corpus/null-shape (crash)
# requires: a library answers every input, malformed ones too, with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV while running this case; its last words: ---------------------- | Error Message Summary: | ---------------------- | FatalError: `Segmentation fault` is detected by the operating system. |   [TimeInfo: *** Aborted at 1795806684 (unix time) try "date -d @1795806684" if you are using GNU date ***] |   [SignalInfo: *** SIGSEGV (@0x0) received by PID 12362 (TID 0x7fcf4e618b80) from PID 0 ***]
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=None, strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=2, version=(1, 3))
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-malformed')
