# dlpack_nanobind 3.1.0: consumer/corpus/padded-float4 (fail)
# requires: sub-byte elements (float4, float6) are packed, DLPack's default, unless the flags say IS_SUBBYTE_TYPE_PADDED (one element a byte): a producer that stores them one a byte sets the flag (a legacy capsule, which has no flags, cannot carry them), and a consumer reads them as the flag says, or refuses the tensor.
# source: DLPack C header (dlpack.h), DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
# got: the imported array holds [[0.5, 0.0, 1.0], [0.0, 1.5, 0.0]], the elements read packed; the tensor holds [[0.5, 1.0, 1.5], [2.0, 3.0, 4.0]] (the tensor has (17, 4, 1) elements padded one a byte (IS_SUBBYTE_TYPE_PADDED)): sub-byte elements are packed unless IS_SUBBYTE_TYPE_PADDED says one a byte
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import numpy
import dlpack_nanobind as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=4, device=(1, 0), dtype=(17, 4, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=6, ndim=2, version=(1, 3))
expected = producer.fill()
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.check_values(producer, y, lambda y: reference.Capsule(y.__dlpack__(max_version=reference.VERSION)).elements(), expected)
del y
reference.check_released(producer)
