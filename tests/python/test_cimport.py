"""The generated .pxd serves maintainers' own Cython: conftest builds a
module that cimports it; what that module sees must be the C ABI."""
import ctypes
import importlib

import pytest

import dlpack_ctypes as ct
from harness import MODULES

pytestmark = pytest.mark.skipif("dlpack_cython" not in MODULES, reason="dlpack_cython is not built")


def test_cimported_declarations_are_the_c_abi():
    facts = importlib.import_module("cimport_check").facts()
    for name in ("DLManagedTensorVersioned", "DLManagedTensor", "DLTensor", "DLPackExchangeAPI"):
        assert facts[name] == ctypes.sizeof(getattr(ct, name)), name
    assert facts["version"] == (ct.DLPACK_MAJOR_VERSION, ct.DLPACK_MINOR_VERSION)
    assert facts["values"] == (ct.DLPACK_FLAG_BITMASK_READ_ONLY, ct.DLDeviceType.kDLCPU, ct.DLDataTypeCode.kDLBool)
