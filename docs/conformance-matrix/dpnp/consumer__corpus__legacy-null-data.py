# dpnp 0.20.0: consumer/corpus/legacy-null-data (fail)
# requires: a consumer that took the tensor (renamed the capsule) calls the deleter exactly once, when it no longer needs the tensor; one that leaves the capsule owning the tensor (its name and destructor as they were) does not call it, as the capsule's destructor will.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: from_dlpack raised ValueError: data is NULL but array contains data, in older versions of NumPy this may have used the scalar path.  To get the scalar path you must leave the data field undefined.; then: the consumer renamed the capsule (took the tensor), and the deleter ran never after its array was dropped (the tensor has data NULL)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import dpnp as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=False, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data=None, buffer_bytes=24, ndim=2)
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-malformed')
