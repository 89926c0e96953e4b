"""The C exchange API (__dlpack_c_exchange_api__) of the Cython module, as
producer and consumer, and against apache-tvm-ffi."""
import ctypes
import os
import subprocess
import sys

import dlpack_ctypes as ct
import numpy as np
import pytest
import required
from harness import CYTHON_DIR, GENERATED, MODULES

pytestmark = pytest.mark.skipif("dlpack_cython" not in MODULES, reason="dlpack_cython is not built")

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


@pytest.fixture
def cy():
    import dlpack_cython
    return dlpack_cython


def table(cls):
    """The producer's table, through the ctypes module's struct."""
    capsule = cls.__dlpack_c_exchange_api__
    return ct.DLPackExchangeAPI.from_address(_get_pointer(capsule, b"dlpack_exchange_api"))


def test_table_is_complete(cy):
    api = table(cy.Tensor)
    assert (api.header.version.major, api.header.version.minor) == (cy.DLPACK_MAJOR_VERSION, cy.DLPACK_MINOR_VERSION)
    assert not api.header.prev_api
    for name, _ in ct.DLPackExchangeAPI._fields_[1:]:
        assert getattr(api, name), name + " is NULL"


def test_from_py_object_and_back(cy):
    api = table(cy.Tensor)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = cy.from_dlpack(a)
    out = ctypes.POINTER(ct.DLManagedTensorVersioned)()
    assert api.managed_tensor_from_py_object_no_sync(id(t), ctypes.byref(out)) == 0
    assert out.contents.dl_tensor.ndim == 2 and out.contents.dl_tensor.data == a.ctypes.data
    obj = ctypes.c_void_p()
    assert api.managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)) == 0
    back = ctypes.cast(obj, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(ctypes.py_object(back))  # the new reference the call returned
    assert type(back) is cy.Tensor and back.shape == (2, 3)
    np.from_dlpack(back)[1, 2] = 7
    assert a[1, 2] == 7


def test_from_py_object_refuses_foreign_objects(cy):
    api = table(cy.Tensor)
    out = ctypes.POINTER(ct.DLManagedTensorVersioned)()
    with pytest.raises(TypeError):
        # ctypes turns the -1 with an exception set into this exception
        ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(
            ctypes.cast(api.managed_tensor_from_py_object_no_sync, ctypes.c_void_p).value)(
            np.arange(3), ctypes.addressof(out))


def test_dltensor_from_py_object_borrows(cy):
    api = table(cy.Tensor)
    t = cy.from_dlpack(np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2])
    dl = ct.DLTensor()
    assert api.dltensor_from_py_object_no_sync(id(t), ctypes.byref(dl)) == 0
    assert [dl.shape[i] for i in range(2)] == [3, 2]
    assert [dl.strides[i] for i in range(2)] == [4, 2]
    assert (dl.dtype.code, dl.dtype.bits) == (ct.DLDataTypeCode.kDLInt, 16)


def test_allocator(cy):
    api = table(cy.Tensor)
    proto = ct.DLTensor()
    shape = (ctypes.c_int64 * 2)(4, 5)
    proto.ndim, proto.shape = 2, ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = ct.DLDataTypeCode.kDLFloat, 64, 1
    proto.device.device_type = ct.DLDeviceType.kDLCPU
    errors = []
    set_error = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)(
        lambda ctx, kind, msg: errors.append((kind, msg)))
    out = ctypes.POINTER(ct.DLManagedTensorVersioned)()
    assert api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, set_error) == 0
    t = cy.from_managed(ctypes.cast(out, ctypes.c_void_p).value)
    assert t.shape == (4, 5) and not np.from_dlpack(t).any()
    proto.device.device_type = ct.DLDeviceType.kDLCUDA
    assert api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, set_error) == -1
    assert errors and errors[0][0] == b"BufferError"


def test_current_work_stream_is_null_on_cpu(cy):
    stream = ctypes.c_void_p(1)
    assert table(cy.Tensor).current_work_stream(ct.DLDeviceType.kDLCPU, 0, ctypes.byref(stream)) == 0
    assert not stream.value


def test_consumer_uses_the_table_not_dunder_dlpack(cy):
    tvm_ffi = required.module("tvm_ffi")
    wrapper_type = tvm_ffi.core.DLTensorTestWrapper

    class NoDunder(wrapper_type):
        # A subclass vouches for its parent's table by publishing it too.
        __dlpack_c_exchange_api__ = wrapper_type.__dlpack_c_exchange_api__

        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ must not be called when the exchange API exists")

    a = np.arange(5, dtype=np.float32)
    t = cy.from_dlpack(NoDunder(tvm_ffi.from_dlpack(a)))
    np.from_dlpack(t)[2] = 9
    assert a[2] == 9


def test_a_subclass_that_publishes_no_table_goes_through_dunder_dlpack(cy):
    """Its __dlpack__ may refuse what the parent's table would export."""
    tvm_ffi = required.module("tvm_ffi")

    class Refusing(tvm_ffi.core.DLTensorTestWrapper):
        def __dlpack__(self, **kwargs):
            raise BufferError("this subclass exports nothing")

    with pytest.raises(BufferError, match="exports nothing"):
        cy.from_dlpack(Refusing(tvm_ffi.from_dlpack(np.arange(3.0))))


def ctypes_table(entry, major):
    """A table of this major version whose from_py entry is entry(obj, out)."""
    api = ct.DLPackExchangeAPI()
    api.header.version.major = major
    fields = dict(ct.DLPackExchangeAPI._fields_)
    api.managed_tensor_from_py_object_no_sync = fields["managed_tensor_from_py_object_no_sync"](entry)
    return api


def test_consumer_walks_prev_api_to_its_major(cy):
    a = np.arange(3, dtype=np.float32)
    calls = []

    def entry(obj, out):
        calls.append(obj)
        out[0] = ctypes.cast(cy.to_managed(a)[0], ctypes.POINTER(ct.DLManagedTensorVersioned))
        return 0

    current = ctypes_table(entry, cy.DLPACK_MAJOR_VERSION)
    future = ct.DLPackExchangeAPI()
    future.header.version.major = cy.DLPACK_MAJOR_VERSION + 1
    future.header.prev_api = ctypes.pointer(current.header)

    class Future:
        __dlpack_c_exchange_api__ = _new_capsule(ctypes.addressof(future), b"dlpack_exchange_api", None)

    x = Future()
    t = cy.from_dlpack(x)
    assert calls == [id(x)], "the entry of the table reached through prev_api"
    np.from_dlpack(t)[1] = 7
    assert a[1] == 7


# A hostile table, made in a process of its own: it crashed or hung the
# consumer in C before the attribute was checked and the walk bounded.
HOSTILE = r"""
import ctypes, sys
import numpy as np
import dlpack_ctypes as ct
import dlpack_cython as cy

case = sys.argv[1]
api = ct.DLPackExchangeAPI()
api.header.version.major = cy.DLPACK_MAJOR_VERSION + 1
api.header.prev_api = ctypes.pointer(api.header)  # a loop: it never reaches this major
new = ctypes.pythonapi.PyCapsule_New
new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
attribute, value = {
    "int": ("__dlpack_c_exchange_api__", 4096),
    "int-1.2": ("__c_dlpack_exchange_api__", 4096),
    "str": ("__dlpack_c_exchange_api__", "table"),
    "loop": ("__dlpack_c_exchange_api__", new(ctypes.addressof(api), b"dlpack_exchange_api", None)),
}[case]

def dunder(self, **kwargs):
    return np.arange(3.0).__dlpack__(**kwargs)

Hostile = type("Hostile", (), {attribute: value, "__dlpack__": dunder, "__dlpack_device__": lambda self: (1, 0)})
for call in (lambda: cy.from_dlpack(Hostile()), lambda: cy.to_type(np.arange(3.0), Hostile)):
    try:
        call()
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
    else:
        print("no error")
"""


@pytest.mark.parametrize("case, error", [
    ("int", "TypeError: Hostile.__dlpack_c_exchange_api__ is int, not a capsule named 'dlpack_exchange_api'"),
    ("str", "TypeError: Hostile.__dlpack_c_exchange_api__ is str, not a capsule named 'dlpack_exchange_api'"),
    ("int-1.2", "ValueError: Hostile.__c_dlpack_exchange_api__ is 4096, not the address of a table"),
    ("loop", "ValueError: Hostile.__dlpack_c_exchange_api__: its prev_api chain does not end within 64 tables"),
])
def test_a_hostile_table_attribute_is_refused(case, error):
    """An int where DLPack 1.3 puts a capsule, an address no table can have,
    a prev_api chain that loops: a clear error from from_dlpack and to_type,
    not a crash or a hang in C."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([GENERATED, CYTHON_DIR]))
    r = subprocess.run([sys.executable, "-c", HOSTILE, case], env=env, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stdout}{r.stderr}"
    assert r.stdout.splitlines() == [error, error], r.stdout + r.stderr


def test_a_failing_entry_leaves_the_answer_to_dunder_dlpack(cy):
    """A table must not refuse differently from __dlpack__: its error is
    dropped, and __dlpack__ gives the tensor, or its own refusal."""
    # dlpack_cython's own table, whose entry raises TypeError for anything
    # but its Tensor: a table that fails with its error set.
    capsule = cy.Tensor.__dlpack_c_exchange_api__

    class Answering:
        __dlpack_c_exchange_api__ = capsule

        def __dlpack__(self, **kwargs):
            return a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    class Refusing(Answering):
        __dlpack_c_exchange_api__ = capsule

        def __dlpack__(self, **kwargs):
            raise BufferError("__dlpack__'s own refusal")

    a = np.arange(4.0)
    assert cy.from_dlpack(Answering()).data_ptr == a.ctypes.data
    with pytest.raises(BufferError, match="own refusal") as e:
        cy.from_dlpack(Refusing())
    assert e.value.__context__ is None, "the table's error is gone, not chained"


def test_tvm_ffi_consumes_through_our_table(cy):
    tvm_ffi = required.module("tvm_ffi")
    a = np.arange(4, dtype=np.int32)
    x = tvm_ffi.from_dlpack(cy.from_dlpack(a))
    back = np.from_dlpack(cy.from_dlpack(x))
    back[0] = 11
    assert a[0] == 11
