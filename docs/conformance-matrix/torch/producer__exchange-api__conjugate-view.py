# torch 2.15.0: producer/exchange-api/conjugate-view (fail)
# requires: managed_tensor_from_py_object_no_sync exports the same tensor as __dlpack__ (same version, flags, dtype, device, shape, elements), holding the array's values.
# source: DLPack C header (dlpack.h), DLPackExchangeAPI
# got: managed_tensor_from_py_object_no_sync exported [[(1+2j), -3j, (0.5+0j)], [(2.5-1j), (4+0j), (-1+1j)]]; the array holds [[(1-2j), 3j, (0.5+0j)], [(2.5+1j), (4+0j), (-1-1j)]] (__dlpack__ refused: BufferError: Can't export tensors with the conjugate bit set)
# Runs from any directory with the kit installed (pip install dlpack-conformance, or DIR/conformance that dlgen -lang conformance -out DIR writes).
import torch as xp
from dlpack_conformance import reference
x = xp.tensor([[(1+2j), (-0-3j), (0.5+0j)], [(2.5-1j), (4+0j), (-1+1j)]], dtype=xp.complex64).conj()
reference.check_exchange_api(x, lambda: x.__dlpack__(max_version=(1, 3)), expected=[[(1-2j), (-0+3j), (0.5-0j)], [(2.5+1j), (4-0j), (-1-1j)]])
