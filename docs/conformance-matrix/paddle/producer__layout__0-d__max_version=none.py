# paddle 3.3.1: producer/layout/0-d/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
x = xp.to_tensor(-3.0, dtype='float32')
capsule = x.__dlpack__()
reference.check_export(x, capsule, expected=-3.0, shape=(), dtype='float32')
