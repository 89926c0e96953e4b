# paddle 3.3.1: producer/dtype/complex64/max_version=1.3 (fail)
# requires: None
# source: None
# got: a check could not run: TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import paddle as xp
from dlpack_conformance import reference
x = xp.to_tensor([[(-3+1j), (-2.5+0.75j), (-2+0.5j), (-1.5+0.25j), (-1+0j), (-0.5-0.25j)], [-0.5j, (0.5-0.75j), (1-1j), (1.5-1.25j), (2-1.5j), (2.5-1.75j)], [(3-2j), (3.5-2.25j), (4-2.5j), (4.5-2.75j), (5-3j), (5.5-3.25j)], [(6-3.5j), (6.5-3.75j), (7-4j), (7.5-4.25j), (8-4.5j), (8.5-4.75j)]], dtype='complex64')
capsule = x.__dlpack__(max_version=(1, 3))
reference.check_export(x, capsule, expected=[[(-3+1j), (-2.5+0.75j), (-2+0.5j), (-1.5+0.25j), (-1+0j), (-0.5-0.25j)], [-0.5j, (0.5-0.75j), (1-1j), (1.5-1.25j), (2-1.5j), (2.5-1.75j)], [(3-2j), (3.5-2.25j), (4-2.5j), (4.5-2.75j), (5-3j), (5.5-3.25j)], [(6-3.5j), (6.5-3.75j), (7-4j), (7.5-4.25j), (8-4.5j), (8.5-4.75j)]], shape=(4, 6), dtype='complex64', max_version=(1, 3))
