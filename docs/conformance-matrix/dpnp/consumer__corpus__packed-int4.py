# dpnp 0.20.0: consumer/corpus/packed-int4 (fail)
# requires: a consumer that took the tensor (renamed the capsule) calls the deleter exactly once, when it no longer needs the tensor; one that leaves the capsule owning the tensor (its name and destructor as they were) does not call it, as the capsule's destructor will.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: from_dlpack raised TypeError: data type '|i0' not understood; then: the consumer renamed the capsule (took the tensor), and the deleter ran never after its array was dropped (the tensor has the traits of NumPy's (manager_ctx set, capsule destructor, aligned data))
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import dpnp as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(0, 4, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=3, ndim=2, version=(1, 3))
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
del y
reference.check_released(producer)
