"""Callbacks of both modules run while a foreign exception is pending, as
NumPy 2.4 (it drops a capsule it refuses with its RuntimeError set) and
Paddle (it calls deleters with its MemoryError set) make them: the callback
must do its work, free exactly once, and leave the consumer's exception as
it was. pending_error.c plays the consumer; it is compiled here."""
import ctypes
import gc
import os
import shutil
import subprocess
import sysconfig

import numpy as np
import pytest

import dlpack_ctypes as ct
from harness import MODULES, REQUIRED

HERE = os.path.dirname(os.path.abspath(__file__))
MESSAGE = "the consumer's own error"


@pytest.fixture(scope="session")
def consumer(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        if REQUIRED:
            pytest.fail("no C compiler")
        pytest.skip("no C compiler")
    lib = str(tmp_path_factory.mktemp("pending") / "libpending.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-I", sysconfig.get_paths()["include"],
                    os.path.join(HERE, "pending_error.c"), "-o", lib], check=True)
    c = ctypes.PyDLL(lib)
    P = ctypes.c_void_p
    c.drop_with_error.argtypes = [ctypes.py_object]
    c.delete_with_error.argtypes = [P, P]
    c.call2_with_error.argtypes = [P, P, P, ctypes.POINTER(ctypes.c_int)]
    c.allocate_with_error.argtypes = [P, P, P, P, ctypes.POINTER(ctypes.c_int)]
    c.stream_with_error.argtypes = [P, ctypes.c_int32, ctypes.c_int32, P, ctypes.POINTER(ctypes.c_int)]
    for f in (c.drop_with_error, c.delete_with_error, c.call2_with_error, c.allocate_with_error,
              c.stream_with_error):
        f.restype = ctypes.py_object
    return c


def struct_of(versioned):
    return ct.DLManagedTensorVersioned if versioned else ct.DLManagedTensor


@pytest.mark.parametrize("versioned", [True, False])
def test_capsule_dropped_with_an_error_pending(dl, producer, consumer, capfd, versioned):
    t = dl.from_dlpack(producer.capsule(flags=0))
    holder = [t.__dlpack__(max_version=(1, 0) if versioned else None)]
    del t
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.drop_with_error(holder)
    gc.collect()
    assert producer.deleted == 1, "the export was freed, and once"
    assert "Exception ignored" not in capfd.readouterr().err


@pytest.mark.parametrize("versioned", [True, False])
def test_deleter_called_with_an_error_pending(dl, producer, consumer, capfd, versioned):
    t = dl.from_dlpack(producer.capsule(flags=0))
    address, got_versioned = dl.to_managed(t, versioned=versioned)
    assert got_versioned == versioned
    del t
    deleter = ctypes.cast(struct_of(versioned).from_address(address).deleter, ctypes.c_void_p).value
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.delete_with_error(deleter, address)
    gc.collect()
    assert producer.deleted == 1, "the export was freed, and once"
    assert "Exception ignored" not in capfd.readouterr().err


def test_numpy_keeps_its_error_when_refusing_our_capsule(dl, producer):
    # NumPy refuses bfloat16 and drops the capsule with its RuntimeError set.
    t = dl.from_dlpack(producer.capsule(code=ct.DLDataTypeCode.kDLBfloat, bits=16))
    with pytest.raises(RuntimeError, match=r"^Unsupported dtype in DLTensor\.$"):
        np.from_dlpack(t)
    del t
    gc.collect()
    assert producer.deleted == 1


# --- the exchange API's entries (dlpack_cython) -------------------------------

cython_only = pytest.mark.skipif("dlpack_cython" not in MODULES, reason="dlpack_cython is not built")


@pytest.fixture
def api():
    import dlpack_cython as cy
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ct.DLPackExchangeAPI.from_address(get(cy.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api"))


def entry(api, name):
    return ctypes.cast(getattr(api, name), ctypes.c_void_p).value


@cython_only
def test_exchange_api_round_trip_with_an_error_pending(api, consumer):
    import dlpack_cython as cy
    a = np.arange(6, dtype=np.float32)
    t = cy.from_dlpack(a)
    rc = ctypes.c_int(-7)
    out = ctypes.c_void_p()
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.call2_with_error(entry(api, "managed_tensor_from_py_object_no_sync"), id(t),
                                  ctypes.addressof(out), ctypes.byref(rc))
    assert rc.value == 0 and out.value
    obj = ctypes.c_void_p()
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.call2_with_error(entry(api, "managed_tensor_to_py_object_no_sync"), out.value,
                                  ctypes.addressof(obj), ctypes.byref(rc))
    assert rc.value == 0 and obj.value
    back = ctypes.cast(obj, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(ctypes.py_object(back))
    assert back.shape == (6,)
    dlt = ct.DLTensor()
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.call2_with_error(entry(api, "dltensor_from_py_object_no_sync"), id(t),
                                  ctypes.addressof(dlt), ctypes.byref(rc))
    assert rc.value == 0 and dlt.ndim == 1 and dlt.data == a.ctypes.data
    stream = ctypes.c_void_p(1)
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.stream_with_error(entry(api, "current_work_stream"), ct.DLDeviceType.kDLCPU, 0,
                                   ctypes.addressof(stream), ctypes.byref(rc))
    assert rc.value == 0 and not stream.value


@cython_only
def test_exchange_api_allocator_with_an_error_pending(api, consumer):
    import dlpack_cython as cy
    proto = ct.DLTensor()
    shape = (ctypes.c_int64 * 1)(3)
    proto.ndim, proto.shape = 1, ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = ct.DLDataTypeCode.kDLFloat, 32, 1
    proto.device.device_type = ct.DLDeviceType.kDLCPU
    errors = []
    set_error = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)(
        lambda ctx, kind, msg: errors.append(kind))
    out = ctypes.c_void_p()
    rc = ctypes.c_int(-7)
    with pytest.raises(RuntimeError, match=MESSAGE):
        consumer.allocate_with_error(entry(api, "managed_tensor_allocator"), ctypes.addressof(proto),
                                     ctypes.addressof(out), ctypes.cast(set_error, ctypes.c_void_p),
                                     ctypes.byref(rc))
    assert rc.value == 0 and out.value and not errors
    assert cy.from_managed(out.value).shape == (3,)


@cython_only
def test_exchange_api_failure_keeps_the_pending_error_as_context(api, consumer):
    rc = ctypes.c_int(-7)
    out = ctypes.c_void_p()
    thing = object()
    with pytest.raises(TypeError, match="dlpack_cython.Tensor") as e:
        consumer.call2_with_error(entry(api, "managed_tensor_from_py_object_no_sync"), id(thing),
                                  ctypes.addressof(out), ctypes.byref(rc))
    assert rc.value == -1 and not out.value
    assert isinstance(e.value.__context__, RuntimeError), "the consumer's error is kept as the context"
