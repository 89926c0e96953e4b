# jax-0.4 0.4.30: consumer/legacy/deleter-null (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGABRT while running this case; its last words: terminate called after throwing an instance of 'std::bad_function_call' |   what():  bad_function_call
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import jax
jax.config.update('jax_enable_x64', True)
import jax.numpy as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), deleter=False, versioned=False, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_usable(lambda: xp.sum(y))
reference.check_values(producer, y, lambda y: y.tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
del y
reference.check_released(producer)
