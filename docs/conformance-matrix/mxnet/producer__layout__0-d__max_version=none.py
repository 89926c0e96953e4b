# mxnet 1.9.1: producer/layout/0-d/max_version=none (fail)
# requires: None
# source: None
# got: a check could not run: AttributeError: 'NDArray' object has no attribute '__dlpack_device__'
# Run from a directory holding the kit (dlgen -lang conformance -out DIR; cd DIR/conformance).
import mxnet as xp
from dlpack_conformance import reference
x = xp.nd.array(-3.0, dtype='float32')
capsule = xp.nd.to_dlpack_for_read(x)
reference.check_export(x, capsule, expected=-3.0, shape=(), dtype='float32')
