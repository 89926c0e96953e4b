# torch 2.15.0: producer/keywords/dl_device=cuda-copy=false (fail)
# requires: copy=False when a copy is needed (another device) raises BufferError.
# source: Python array API standard 2024.12, array.__dlpack__, copy
# got: raised ValueError: cannot move (i.e. copy=False) tensor from cpu to cuda:0 without copying., not BufferError
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import torch as xp
from dlpack_conformance import reference
x = xp.tensor([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype=xp.float32)
capsule = x.__dlpack__(max_version=(1, 3), dl_device=(2, 0), copy=False)
reference.exported_anyway(capsule, 'copy-needed', (2, 0))
