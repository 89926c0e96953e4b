# tensorflow 2.21.0: consumer/legacy/contiguous (crash)
# requires: a library answers every input with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGABRT while running this case; its last words:     @     0x7fa2cc49b395  TFE_Execute |     @     0x7fa2aecbea37  TFE_Py_FastPathExecute_C() |     @     0x7fa2ae8dc113  pybind11::detail::argument_loader<>::call<>() |     @     0x7fa2ae8dc04c  pybind11::cpp_function::initialize<>()::{lambda()#1}::__invoke() |     @     0x7fa2ae8b34ad  pybind11::cpp_function::dispatcher() |     @     0x7fa2d63a6ce3  cfunction_call
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import tensorflow as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), versioned=False, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.experimental.dlpack.from_dlpack(producer.__dlpack__())
except Exception as error:
    reference.refused(error, 'consumer-basic', producer)
reference.check_usable(lambda: xp.reduce_sum(xp.cast(y, xp.float64)))
reference.check_values(producer, y, lambda y: y.numpy().tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
reference.check_requests(producer)
del y
reference.check_released(producer)
