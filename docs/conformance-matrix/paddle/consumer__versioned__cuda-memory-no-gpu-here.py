# paddle 3.3.1: consumer/versioned/cuda-memory-no-gpu-here (crash)
# requires: a library reports what it cannot do with an exception; it does not kill the process.
# source: Python array API standard 2024.12, array.__dlpack__ and from_dlpack (Raises)
# got: the process died of SIGSEGV while running this case; its last words: ---------------------- | Error Message Summary: | ---------------------- | FatalError: `Segmentation fault` is detected by the operating system. |   [TimeInfo: *** Aborted at 1795638023 (unix time) try "date -d @1795638023" if you are using GNU date ***] |   [SignalInfo: *** SIGSEGV (@0x0) received by PID 25221 (TID 0x7fa27ac01b80) from PID 0 ***]
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), device=(2, 0), data=4096, versioned=True, dtype=(2, 32, 1))
y = xp.utils.dlpack.from_dlpack(producer)
reference.accepted(producer, y, 'consumer-unsupported-device')
