# mxnet 1.9.1: producer/dtype/float64/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: AttributeError: 'NDArray' object has no attribute '__dlpack_device__'
# Run from a directory holding the kit (dlgen -lang conformance -out DIR; cd DIR/conformance).
import mxnet as xp
from dlpack_conformance import reference
x = xp.nd.array([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype='float64')
capsule = xp.nd.to_dlpack_for_read(x)
reference.check_export(x, capsule, expected=[[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], shape=(4, 6), dtype='float64')
