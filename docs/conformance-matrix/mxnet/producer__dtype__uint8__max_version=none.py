# mxnet 1.9.1: producer/dtype/uint8/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: AttributeError: 'NDArray' object has no attribute '__dlpack_device__'
# Run from a directory holding the kit (dlgen -lang conformance -out DIR; cd DIR/conformance).
import mxnet as xp
from dlpack_conformance import reference
x = xp.nd.array([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24]], dtype='uint8')
capsule = xp.nd.to_dlpack_for_read(x)
reference.check_export(x, capsule, expected=[[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18], [19, 20, 21, 22, 23, 24]], shape=(4, 6), dtype='uint8')
