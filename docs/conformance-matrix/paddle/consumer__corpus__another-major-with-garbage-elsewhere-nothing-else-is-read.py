# paddle 3.3.1: consumer/corpus/another-major-with-garbage-elsewhere-nothing-else-is-read (crash)
# requires: a library reports what it cannot do with an exception; it does not kill the process.
# source: Python array API standard 2024.12, array.__dlpack__ and from_dlpack (Raises)
# got: the process died of SIGSEGV while running this case; its last words: ---------------------- | Error Message Summary: | ---------------------- | FatalError: `Segmentation fault` is detected by the operating system. |   [TimeInfo: *** Aborted at 1795638089 (unix time) try "date -d @1795638089" if you are using GNU date ***] |   [SignalInfo: *** SIGSEGV (@0x0) received by PID 27949 (TID 0x7f014080cb80) from PID 0 ***]
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(2, 0), dtype=(5, 64, 1), shape=None, strides=None, byte_offset=9223372036854775808, data='buffer', buffer_bytes=24, ndim=-1, version=(0, 0))
y = xp.utils.dlpack.from_dlpack(producer)
reference.accepted(producer, y, 'consumer-major-version')
