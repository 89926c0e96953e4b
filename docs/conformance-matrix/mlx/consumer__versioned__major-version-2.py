# mlx 0.32.4: consumer/versioned/major-version-2 (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV while running this case; its last words: (none)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import mlx.core as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), version=(2, 0), data=4096, versioned=True, dtype=(2, 32, 1))
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-major-version')
