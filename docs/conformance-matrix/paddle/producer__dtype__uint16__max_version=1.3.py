# paddle 3.3.1: producer/dtype/uint16/max_version=1.3 (fail)
# requires: the capsule's (code, bits, lanes) is the array's element type.
# source: DLPack C header (dlpack.h), DLDataType
# got: the capsule's dtype is (code, bits, lanes) = (4, 16, 1); uint16 is (1, 16, 1)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import paddle as xp
from dlpack_conformance import reference
x = xp.to_tensor([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24]], dtype='uint16')
try:
    capsule = x.__dlpack__(max_version=(1, 3))
except Exception as error:
    reference.refused(error, 'export')
reference.check_export(x, capsule, expected=[[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24]], shape=(4, 6), dtype='uint16', max_version=(1, 3))
