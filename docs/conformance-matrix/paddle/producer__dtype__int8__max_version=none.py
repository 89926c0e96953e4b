# paddle 3.3.1: producer/dtype/int8/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
x = xp.to_tensor([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24]], dtype='int8')
capsule = x.__dlpack__()
reference.check_export(x, capsule, expected=[[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24]], shape=(4, 6), dtype='int8')
