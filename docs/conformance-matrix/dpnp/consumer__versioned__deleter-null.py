# dpnp 0.20.0: consumer/versioned/deleter-null (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV while running this case; its last words: PLEASE submit a bug report to https://software.intel.com/en-us/support/priority-support and include the crash backtrace and instructions to reproduce the bug.
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import dpnp as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), deleter=False, versioned=True, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_usable(lambda: y.sum())
reference.check_values(producer, y, lambda y: xp.asnumpy(y).tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
del y
reference.check_released(producer)
