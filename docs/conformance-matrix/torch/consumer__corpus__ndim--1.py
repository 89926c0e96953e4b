# torch 2.15.0: consumer/corpus/ndim--1 (crash)
# requires: a library reports what it cannot do with an exception; it does not kill the process.
# source: Python array API standard 2024.12, array.__dlpack__ and from_dlpack (Raises)
# got: the process died of SIGSEGV while running this case; its last words: (none)
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import torch as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=True, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=(2, 3), strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=-1, version=(1, 3))
y = xp.from_dlpack(producer)
reference.accepted(producer, y, 'consumer-malformed')
