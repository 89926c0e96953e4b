# torch 2.15.0: producer/exchange-api/requires_grad (fail)
# requires: managed_tensor_from_py_object_no_sync exports the same tensor as __dlpack__ (same version, flags, dtype, device, shape, elements), holding the array's values.
# source: DLPack C header (dlpack.h), DLPackExchangeAPI
# got: __dlpack__ refused (BufferError: Can't export tensors that require gradient, use tensor.detach()), managed_tensor_from_py_object_no_sync exported
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import torch as xp
from dlpack_conformance import reference
x = xp.ones((2, 3), requires_grad=True)
reference.check_exchange_api(x, lambda: x.__dlpack__(max_version=(1, 3)))
