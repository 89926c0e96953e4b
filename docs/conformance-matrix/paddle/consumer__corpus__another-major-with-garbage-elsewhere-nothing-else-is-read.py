# paddle 3.3.1: consumer/corpus/another-major-with-garbage-elsewhere-nothing-else-is-read (crash)
# requires: a library answers every input, malformed ones too, with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV while running this case; its last words: ---------------------- | Error Message Summary: | ---------------------- | FatalError: `Segmentation fault` is detected by the operating system. |   [TimeInfo: *** Aborted at 1795806671 (unix time) try "date -d @1795806671" if you are using GNU date ***] |   [SignalInfo: *** SIGSEGV (@0x0) received by PID 12220 (TID 0x7fd77e5dfb80) from PID 0 ***]
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(2, 0), dtype=(5, 64, 1), shape=None, strides=None, byte_offset=9223372036854775808, data='buffer', buffer_bytes=24, ndim=-1, version=(0, 0))
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-major-version')
