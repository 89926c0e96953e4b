# paddle 3.3.1: consumer/corpus/reversed-down-to-address-0 (fail)
# requires: a consumer that renamed the capsule calls the deleter exactly once, when it no longer needs the tensor.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: the consumer renamed the capsule (took the tensor), and the deleter ran never after its array was dropped
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2,), strides=(-1024,), byte_offset=0, data=4096, buffer_bytes=24, ndim=1, version=(1, 3))
try:
    y = xp.utils.dlpack.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
del y
reference.check_released(producer)
