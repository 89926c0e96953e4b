# torch 2.15.0: producer/keywords/copy=true (fail)
# requires: when the producer copies (copy=True always does), the capsule carries IS_COPIED.
# source: Python array API standard 2024.12, array.__dlpack__, copy; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst), Semantics
# got: copy=True, the capsule's flags lack IS_COPIED
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import torch as xp
from dlpack_conformance import reference
x = xp.tensor([[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], dtype=xp.float32)
try:
    capsule = x.__dlpack__(max_version=(1, 3), copy=True)
except Exception as error:
    reference.refused(error, 'export')
reference.check_export(x, capsule, expected=[[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5], [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], [3.0, 3.5, 4.0, 4.5, 5.0, 5.5], [6.0, 6.5, 7.0, 7.5, 8.0, 8.5]], shape=(4, 6), dtype='float32', max_version=(1, 3), copy=True, made=lambda y: y.tolist())
