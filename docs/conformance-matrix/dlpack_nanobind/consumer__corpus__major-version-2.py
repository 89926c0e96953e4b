# dlpack_nanobind 3.1.0: consumer/corpus/major-version-2 (fail)
# requires: a tensor whose major version differs from the consumer's is not read: the consumer calls its deleter and refuses it.
# source: DLPack C header (dlpack.h), DLPackVersion
# got: from_dlpack accepted a tensor of version (2, 0) (a major version whose fields this consumer cannot know) and returned nb_ndarray
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import numpy
import dlpack_nanobind as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=2, version=(2, 0))
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-major-version')
