# paddle 3.3.1: consumer/versioned/manager_ctx-null (fail)
# requires: a consumer that took the tensor (renamed the capsule) calls the deleter exactly once, when it no longer needs the tensor; one that leaves the capsule owning the tensor (its name and destructor as they were) does not call it, as the capsule's destructor will.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: the consumer renamed the capsule (took the tensor), and the deleter ran never after its array was dropped (the tensor has manager_ctx NULL)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), manager_ctx=None, versioned=True, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_usable(lambda: xp.sum(y.astype('complex128')))
reference.check_values(producer, y, lambda y: (y.astype('float32') if y.dtype in (xp.bfloat16, xp.float8_e4m3fn, xp.float8_e5m2) else y).tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
del y
reference.check_released(producer)
