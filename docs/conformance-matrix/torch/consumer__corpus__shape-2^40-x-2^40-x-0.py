# torch 2.15.0: consumer/corpus/shape-2^40-x-2^40-x-0 (fail)
# requires: a consumer that took the tensor (renamed the capsule) calls the deleter exactly once, when it no longer needs the tensor; one that leaves the capsule owning the tensor (its name and destructor as they were) does not call it, as the capsule's destructor will.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: from_dlpack raised RuntimeError: numel: integer multiplication overflow; then: the consumer never renamed the capsule, yet called the deleter 1 times; the capsule's destructor, which calls the deleter of an unrenamed capsule, ran it again (the tensor has strides (1, 1, 1))
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import torch as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(1099511627776, 1099511627776, 0), strides=(1, 1, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=3, version=(1, 3))
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-malformed')
