# paddle 3.3.1: producer/layout/stepped/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
x = xp.to_tensor([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype='float32')
x = x[::2, 1::3]
capsule = x.__dlpack__()
reference.check_export(x, capsule, expected=[[-2.5, -1.0], [3.5, 5.0]], shape=(2, 2), dtype='float32')
