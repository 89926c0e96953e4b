# paddle 3.3.1: producer/dtype/bool/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
x = xp.to_tensor([[True, False, True, True, False, True], [True, False, True, True, False, True], [True, False, True, True, False, True], [True, False, True, True, False, True]], dtype='bool')
capsule = x.__dlpack__()
reference.check_export(x, capsule, expected=[[True, False, True, True, False, True], [True, False, True, True, False, True], [True, False, True, True, False, True], [True, False, True, True, False, True]], shape=(4, 6), dtype='bool')
