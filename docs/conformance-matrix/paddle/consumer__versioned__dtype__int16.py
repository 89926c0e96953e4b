# paddle 3.3.1: consumer/versioned/dtype/int16 (fail)
# requires: a consumer that renamed the capsule calls the deleter exactly once, when it no longer needs the tensor.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: the consumer renamed the capsule (took the tensor), and the deleter ran never after its array was dropped
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), dtype=(0, 16, 1), versioned=True, values=[[1, 2, 3], [4, 5, 6]])
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-refused-valid', producer)
reference.check_values(producer, y, lambda y: y.tolist(), [[1, 2, 3], [4, 5, 6]])
del y
reference.check_released(producer)
