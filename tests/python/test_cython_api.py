"""dlpack_cython.pxd as a third party uses it: an extension module compiled
separately, against the generated .pxd only, that calls every cdef function
and reads Tensor's C-level attributes."""
import gc
import importlib
import os
import subprocess
import sys
import sysconfig
import threading

import numpy as np
import pytest
import required

from harness import CYTHON_DIR, cython_warnings

pytestmark = pytest.mark.skipif(not CYTHON_DIR, reason="dlpack_cython is not built")

THIRD_PARTY = r'''# cython: language_level=3, freethreading_compatible=True
# distutils: include_dirs = {include}
cimport dlpack_cython as dl
from cpython.ref cimport Py_INCREF
from dlpack_cython cimport Tensor
from dlpack cimport (DLDataType, DLDevice, DLManagedTensorVersioned, kDLCPU, kDLFloat, kDLInt,
                     DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_READ_ONLY)
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

cdef int freed = 0


cdef void free_counted(void* context) noexcept nogil:
    global freed
    free(context)
    freed += 1


def c_freed():
    return freed


def owned_by_c(int n):
    """float32 memory that C owns, freed by free_counted exactly once."""
    cdef float* data = <float*>malloc(n * sizeof(float))
    cdef int64_t shape[1]
    for i in range(n):
        data[i] = i
    shape[0] = n
    return dl.tensor_from_c(data, 1, shape, NULL, DLDataType(kDLFloat, 32, 1), DLDevice(kDLCPU, 0),
                            free_counted, data)


def refused_by_c():
    """Refused arguments (a negative extent): the deleter still runs."""
    cdef int64_t shape[1]
    shape[0] = -1
    return dl.tensor_from_c(malloc(4), 1, shape, NULL, DLDataType(kDLFloat, 32, 1), DLDevice(kDLCPU, 0),
                            free_counted, NULL)


def over_pointer(object owner, size_t address, rows, cols, bint readonly):
    """int32 memory that owner keeps alive, transposed through strides."""
    cdef int64_t shape[2]
    cdef int64_t strides[2]
    shape[0], shape[1] = cols, rows
    strides[0], strides[1] = 1, cols
    return dl.tensor_from_pointer(<void*>address, 2, shape, strides, DLDataType(kDLInt, 32, 1),
                                  DLDevice(kDLCPU, 0), owner, readonly)


def describe(Tensor t):
    """What a framework reads from the C-level attributes."""
    return {{"data": <size_t>t.dltensor.data, "ndim": t.dltensor.ndim,
            "shape": [t.dltensor.shape[i] for i in range(t.dltensor.ndim)],
            "strides": [t.dltensor.strides[i] for i in range(t.dltensor.ndim)],
            "dtype": (t.dltensor.dtype.code, t.dltensor.dtype.bits, t.dltensor.dtype.lanes),
            "device": (t.dltensor.device.device_type, t.dltensor.device.device_id),
            "byte_offset": t.dltensor.byte_offset,
            "readonly": (t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0}}


def take(x, bint readonly=False):
    """managed_from_object: a validated managed tensor, no Python object;
    returns what it holds and deletes it without the GIL."""
    cdef DLManagedTensorVersioned* m = dl.managed_from_object(x, readonly)
    cdef double first = (<double*>m.dl_tensor.data)[0] if m.dl_tensor.dtype.bits == 64 else -1
    facts = (m.dl_tensor.ndim, m.dl_tensor.shape[0], first, (m.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0)
    with nogil:
        m.deleter(m)
    return facts


def take_placed(x, device, copy):
    """managed_from_object with from_dlpack's device and copy: where the
    tensor is, whether it is a copy, its first float64; then deleted."""
    cdef DLManagedTensorVersioned* m = dl.managed_from_object(x, False, None, device, copy)
    facts = (<size_t>m.dl_tensor.data, (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id),
             (m.flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0,
             (<double*>m.dl_tensor.data)[0] if m.dl_tensor.device.device_type == kDLCPU else None)
    m.deleter(m)
    return facts


def round_trip(x):
    """managed_from_object, then tensor_from_managed: a Tensor that owns it."""
    return dl.tensor_from_managed(dl.managed_from_object(x))


def capsule(Tensor t, bint versioned):
    return dl.tensor_to_capsule(t, versioned)


cdef DLManagedTensorVersioned* exported


def export(Tensor t):
    global exported
    exported = dl.tensor_to_managed(t)
    return <size_t>exported


def delete_export_without_gil():
    """The export's deleter, called by a thread that does not hold the GIL."""
    global exported
    cdef DLManagedTensorVersioned* m = exported
    exported = NULL
    with nogil:
        m.deleter(m)


cdef int wrapped_from(void* obj, DLManagedTensorVersioned** out) except -1 with gil:
    out[0] = dl.tensor_to_managed((<Wrapped>obj).tensor)
    return 0


cdef int wrapped_to(DLManagedTensorVersioned* m, void** out) except -1 with gil:
    cdef Wrapped w = Wrapped.__new__(Wrapped)
    w.tensor = dl.tensor_from_managed(m)
    Py_INCREF(w)
    out[0] = <void*>w
    return 0


cdef class Wrapped:
    """A third party's array type with its own exchange-API table."""
    cdef public Tensor tensor
    __dlpack_c_exchange_api__ = dl.exchange_api(<void*>wrapped_from, <void*>wrapped_to)
    __c_dlpack_exchange_api__ = __dlpack_c_exchange_api__

    def __dlpack__(self, **kwargs):
        raise AssertionError("the table, not __dlpack__, must be used")

    def __dlpack_device__(self):
        return (1, 0)
'''


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    build = tmp_path_factory.mktemp("third_party")
    (build / "third_party.pyx").write_text(THIRD_PARTY.format(include=CYTHON_DIR))
    cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
    env = dict(os.environ, PYTHONPATH=CYTHON_DIR)  # where Cython finds dlpack_cython.pxd and dlpack.pxd
    r = subprocess.run([cythonize, "-i", "third_party.pyx"], cwd=build, capture_output=True, text=True, env=env)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert not cython_warnings(log), log
    sys.path.insert(0, str(build))
    try:
        module = importlib.import_module("third_party")
        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            assert not sys._is_gil_enabled(), "importing a module built as the docs say turned the GIL on"
        yield module
    finally:
        sys.path.remove(str(build))


def test_tensor_from_c_runs_the_c_deleter_once_in_either_order(ext):
    import dlpack_cython as dl
    before = ext.c_freed()
    t = ext.owned_by_c(4)
    n = np.from_dlpack(t)
    del t
    gc.collect()
    assert ext.c_freed() == before and n.tolist() == [0, 1, 2, 3]
    del n
    gc.collect()
    assert ext.c_freed() == before + 1
    t = ext.owned_by_c(2)
    n = np.from_dlpack(t)
    del n
    gc.collect()
    assert ext.c_freed() == before + 1
    t.close()
    assert ext.c_freed() == before + 2
    with pytest.raises(ValueError, match="negative"):
        ext.refused_by_c()
    assert ext.c_freed() == before + 3
    assert isinstance(ext.owned_by_c(1), dl.Tensor)
    gc.collect()


def test_tensor_from_pointer_and_c_attributes(ext):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ext.over_pointer(a, a.ctypes.data, 2, 3, False)
    facts = ext.describe(t)
    assert facts == {"data": a.ctypes.data, "ndim": 2, "shape": [3, 2], "strides": [1, 3], "dtype": (0, 32, 1),
                     "device": (1, 0), "byte_offset": 0, "readonly": False}
    np.testing.assert_array_equal(np.from_dlpack(t), a.T)
    base = sys.getrefcount(a)
    ro = ext.over_pointer(a, a.ctypes.data, 2, 3, True)
    assert sys.getrefcount(a) == base + 1 and ext.describe(ro)["readonly"]
    del ro
    assert sys.getrefcount(a) == base


def test_managed_from_object_consumes_once_and_validates(ext, producer):
    import dlpack_cython as dl
    a = np.arange(3.0)
    assert ext.take(a) == (1, 3, 0.0, False)
    legacy = a.__dlpack__()
    assert ext.take(legacy, True) == (1, 3, 0.0, True)  # wrapped in a versioned tensor, read-only on request
    with pytest.raises(ValueError, match="consumed"):
        ext.take(legacy)
    assert ext.take(dl.from_dlpack(a)) == (1, 3, 0.0, False)  # through dlpack_cython.Tensor's table
    with pytest.raises(BufferError, match="negative"):
        ext.take(producer.capsule(shape=(-2,)))
    assert producer.deleted == 1
    t = ext.round_trip(a)
    np.from_dlpack(t)[0] = 5
    assert a[0] == 5
    base = sys.getrefcount(a)
    for _ in range(1000):
        ext.take(a)
    assert sys.getrefcount(a) == base


def test_managed_from_object_takes_device_and_copy_as_from_dlpack_does(ext, producer):
    import dlpack_cython as dl
    a = np.arange(3.0) + 7
    assert ext.take_placed(a, None, None) == (a.ctypes.data, (1, 0), False, 7.0)
    assert ext.take_placed(a, (1, 0), False) == (a.ctypes.data, (1, 0), False, 7.0)
    for x in (a, a.__dlpack__(max_version=(1, 0)), a.__dlpack__(), dl.from_dlpack(a)):  # __dlpack__, capsules, table
        data, device, copied, first = ext.take_placed(x, None, True)
        assert data != a.ctypes.data and device == (1, 0) and copied and first == 7.0, type(x)
    base = sys.getrefcount(a)
    for _ in range(100):
        ext.take_placed(a, (1, 0), True)
    assert sys.getrefcount(a) == base
    # The same refusals, in the same words, the producer's deleter run once.
    refusals = [(a, (2, 0), None),                                                 # the producer cannot
                (lambda: producer.capsule(device_type=2, address=16), (1, 0), None),  # a tensor elsewhere
                (lambda: producer.capsule(device_type=2, address=16), None, True)]    # no copy engine for it
    for x, device, copy in refusals:
        with pytest.raises(BufferError) as by_dlpack:
            dl.from_dlpack(x() if callable(x) else x, device=device, copy=copy)
        with pytest.raises(BufferError) as by_cython_api:
            ext.take_placed(x() if callable(x) else x, device, copy)
        assert str(by_cython_api.value) == str(by_dlpack.value)
    assert producer.deleted == 4


def test_exports_as_capsule_and_managed_pointer(ext):
    import dlpack_cython as dl
    a = np.arange(4.0)
    t = dl.from_dlpack(a)
    for versioned in (True, False):
        cap = ext.capsule(t, versioned)
        assert ("dltensor_versioned" in repr(cap)) == versioned
        np.testing.assert_array_equal(dl.from_dlpack(cap), a)
    with pytest.raises(BufferError):
        ext.capsule(dl.from_dlpack(a, readonly=True), False)
    address = ext.export(t)
    t.close()  # the export keeps the memory
    assert dl.from_managed(address).shape == (4,)  # adopted: its deleter runs with that Tensor
    ext.export(dl.from_dlpack(a))
    base = sys.getrefcount(a)
    thread = threading.Thread(target=ext.delete_export_without_gil)
    thread.start()
    thread.join()
    gc.collect()
    assert sys.getrefcount(a) == base - 1


def test_exports_keep_the_padded_flag(ext, producer):
    """Padded sub-byte elements stay padded in every export of the Cython
    API (a consumer would otherwise read them packed), and an unversioned
    capsule, which cannot say so, is refused."""
    import dlpack_cython as dl
    padded = dl.DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
    t = dl.from_dlpack(producer.capsule(shape=(5,), code=dl.DLDataTypeCode.kDLFloat4_e2m1fn, bits=4, flags=padded))
    address = ext.export(t)
    assert producer.dl.DLManagedTensorVersioned.from_address(address).flags & padded
    assert dl.from_managed(address).nbytes == 5
    assert dl.from_dlpack(ext.capsule(t, True)).nbytes == 5
    with pytest.raises(BufferError) as caught:
        ext.capsule(t, False)
    assert str(caught.value) == ("padded sub-byte elements cannot be exported as an unversioned capsule, which "
                                 "has no flag to say so")


def test_exchange_api_of_a_third_party_type(ext):
    import dlpack_cython as dl
    tvm_ffi = required.module("tvm_ffi")
    w = ext.Wrapped()
    a = np.arange(5, dtype=np.float32)
    w.tensor = dl.from_dlpack(a)
    t = dl.from_dlpack(w)  # dlpack_cython consumes through Wrapped's table
    np.from_dlpack(t)[0] = 9
    assert a[0] == 9
    x = tvm_ffi.from_dlpack(w)  # so does tvm-ffi
    assert tuple(x.shape) == (5,)
    back = dl.to_type(a, ext.Wrapped)  # and Wrapped's managed_tensor_to_py_object makes a Wrapped
    assert type(back) is ext.Wrapped and np.from_dlpack(back.tensor)[0] == 9
