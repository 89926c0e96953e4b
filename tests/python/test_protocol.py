"""The DLPack protocol of the generated Python modules, against NumPy 2.x."""
import ctypes
import gc
import importlib
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128, np.bool_]


def sample(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return (a % 2 == 1) if dtype == np.bool_ else a.astype(dtype)


def views():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    return {
        "contiguous": a,
        "transposed": a.T,
        "negative": a[::-1, :, ::-1],
        "stepped": a[:, ::2, 1::2],
        "size0": a[:, :0],
        "scalar": np.array(3.5),
        "broadcast": np.broadcast_to(np.arange(4.0), (3, 4)),
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_numpy_dtype_round_trips(dl, dtype):
    a = sample(dtype)
    t = dl.from_dlpack(a)
    assert t.shape == a.shape
    assert t.dtype.itemsize == a.itemsize
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    assert np.shares_memory(back, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_and_device_objects_speak_the_exchange_protocol(dl, dtype):
    """A Tensor's dtype answers __dlpack_data_type__() and its device
    __dlpack_device__() (the dtype and device exchange protocol of
    data-apis/array-api#972) with what its capsule carries."""
    t = dl.from_dlpack(sample(dtype))
    capsule = t.__dlpack__(max_version=(1, 0))
    structs = importlib.import_module("dlpack_ctypes")
    m = structs.DLManagedTensorVersioned.from_address(pointer_in(capsule, b"dltensor_versioned"))
    d = m.dl_tensor
    assert t.dtype.__dlpack_data_type__() == (d.dtype.code, d.dtype.bits, d.dtype.lanes)
    assert type(t.dtype.__dlpack_data_type__()) is tuple
    assert t.device.__dlpack_device__() == (int(d.device.device_type), d.device.device_id) == t.__dlpack_device__()
    assert dl.DataType(10, 8, 1).__dlpack_data_type__() == (10, 8, 1)  # float8_e4m3fn
    del m, d, capsule


# A prototype of the test's own: the shared ctypes.pythonapi function objects
# are left as they are.
pointer_in = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


@pytest.mark.parametrize("name", list(views()))
def test_views_keep_their_strides(dl, name):
    a = views()[name]
    t = dl.from_dlpack(a)
    assert t.shape == a.shape
    if a.size:  # an empty array's strides are arbitrary: NumPy 2.2 exports others than it reports
        assert t.strides == tuple(s // a.itemsize for s in a.strides)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    np.testing.assert_array_equal(np.asarray(t), a)
    np.testing.assert_array_equal(np.frombuffer(t.tobytes(), a.dtype).reshape(a.shape), a)


@pytest.mark.parametrize("ndim", [0, 1, 2, 5, 16, 32])
def test_ndim_0_to_32(dl, ndim):
    a = np.arange(2 ** min(ndim, 4), dtype=np.int32).reshape((2,) * min(ndim, 4) + (1,) * (ndim - min(ndim, 4)))
    t = dl.from_dlpack(a)
    assert t.ndim == ndim
    np.testing.assert_array_equal(np.from_dlpack(t), a)


def test_writes_go_through_both_ways(dl):
    a = np.zeros(6, dtype=np.float32)
    t = dl.from_dlpack(a)
    np.from_dlpack(t)[2] = 7
    assert a[2] == 7
    np.asarray(t)[3] = 8
    assert a[3] == 8
    a[4] = 9
    assert np.from_dlpack(t)[4] == 9


def test_tensor_keeps_producer_alive(dl):
    t = dl.from_dlpack(np.arange(5.0))
    gc.collect()
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(5.0))


def test_refcounts_return_to_baseline(dl):
    a = np.arange(10.0)
    base = sys.getrefcount(a)
    for _ in range(3000):
        t = dl.from_dlpack(a)
        b = np.from_dlpack(t)
        del t, b
    gc.collect()
    assert sys.getrefcount(a) == base
    if hasattr(dl, "_live_exports"):  # the ctypes module's exports, all given back
        assert not dl._live_exports()


def test_capsule_names_follow_max_version(dl):
    t = dl.from_dlpack(np.arange(3.0))
    assert '"dltensor_versioned"' in repr(t.__dlpack__(max_version=(1, 0)))
    assert '"dltensor_versioned"' in repr(t.__dlpack__(max_version=(dl.DLPACK_MAJOR_VERSION, 99)))
    assert '"dltensor"' in repr(t.__dlpack__())
    assert '"dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))


def test_consumer_renames_capsule_and_refuses_it_twice(dl):
    cap = np.arange(3.0).__dlpack__(max_version=(1, 0))
    t = dl.from_dlpack(cap)
    assert '"used_dltensor_versioned"' in repr(cap)
    with pytest.raises(ValueError, match="consumed"):
        dl.from_dlpack(cap)
    t.close()


def test_legacy_import_is_writable_by_default(dl):
    a = np.arange(4.0)
    t = dl.from_dlpack(a.__dlpack__())  # a legacy capsule carries no read-only bit
    assert not t.readonly
    np.asarray(t)[1] = 7
    assert a[1] == 7
    legacy = t.__dlpack__()  # so it may travel on as a legacy capsule
    assert '"dltensor"' in repr(legacy)
    assert dl.from_dlpack(legacy).shape == (4,)


def test_legacy_import_read_only_on_request(dl):
    a = np.arange(4.0)
    t = dl.from_dlpack(a.__dlpack__(), readonly=True)
    assert t.readonly
    assert not np.asarray(t).flags.writeable
    with pytest.raises(BufferError):
        t.__dlpack__()  # read-only data cannot travel in a legacy capsule


def test_readonly_false_refuses_a_read_only_tensor(dl, producer):
    cap = producer.capsule(flags=producer.dl.DLPACK_FLAG_BITMASK_READ_ONLY)
    with pytest.raises(BufferError, match="read-only"):
        dl.from_dlpack(cap, readonly=False)
    assert producer.deleted == 1


def test_read_only_array_stays_read_only(dl):
    a = np.arange(4.0)
    a.flags.writeable = False
    t = dl.from_dlpack(a)
    assert t.readonly
    assert not np.from_dlpack(t).flags.writeable


def test_copy_true_makes_a_private_flagged_copy(dl):
    a = np.arange(4.0)
    t = dl.from_dlpack(a, copy=True)
    assert t.copied and not t.readonly
    np.asarray(t)[0] = 99
    assert a[0] == 0
    exported = np.from_dlpack(dl.from_dlpack(a), copy=True)
    assert not np.shares_memory(exported, a)


def test_export_copy_sets_is_copied(dl, producer):
    t = dl.from_dlpack(np.arange(4.0)[::2])
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    c = dl.from_dlpack(cap)
    assert c.copied and c.strides == (1,)
    np.testing.assert_array_equal(np.from_dlpack(c), [0.0, 2.0])


def test_keyword_errors(dl):
    t = dl.from_dlpack(np.arange(3.0))
    with pytest.raises(ValueError):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError):
        t.__dlpack__(dl_device=[1, 0])
    assert t.__dlpack__(dl_device=(1, 0), max_version=(1, 0))
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        dl.from_dlpack(np.arange(3.0), device=(2, 0))


def test_close_is_idempotent_and_deleter_runs_once(dl, producer):
    t = dl.from_dlpack(producer.capsule())
    t.close()
    t.close()
    del t
    gc.collect()
    assert producer.deleted == 1


def test_unconsumed_export_is_released_on_collection(dl, producer):
    import weakref
    t = dl.from_dlpack(producer.capsule())
    caps = [t.__dlpack__(max_version=(1, 0)) for _ in range(3)]
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is not None, "an unconsumed capsule keeps its tensor alive"
    del caps
    gc.collect()
    assert ref() is None
    assert producer.deleted == 1


def test_deleter_from_another_thread(dl, producer):
    t = dl.from_dlpack(producer.capsule())
    th = threading.Thread(target=t.close)
    th.start()
    th.join()
    assert producer.deleted == 1


def test_racing_closes_and_exports_run_the_deleter_once(dl, producer):
    # close() from three threads while three others export to NumPy: whoever
    # comes first, the producer's deleter runs once, and not before the last
    # export is released.
    for _ in range(20):
        before = producer.deleted
        t = dl.from_dlpack(producer.capsule())
        start = threading.Barrier(6)
        arrays = []

        def close():
            start.wait()
            t.close()

        def export():
            start.wait()
            try:
                arrays.append(np.from_dlpack(t))
            except ValueError:  # closed first
                pass

        threads = [threading.Thread(target=f) for f in (close, export) * 3]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        del t
        gc.collect()
        assert producer.deleted == before + (not arrays)
        for array in arrays:
            array[:] = 1.5  # the memory is still the producer's
        arrays.clear()
        array = None
        gc.collect()
        assert producer.deleted == before + 1


def test_byte_offset_is_honoured(dl, producer):
    cap = producer.capsule(shape=(2,), strides=(1,), byte_offset=8, code=0, bits=32)  # int32
    storage = producer._keep[-1][0]
    np.frombuffer(storage, dtype=np.int32)[:] = np.arange(16, dtype=np.int32)
    t = dl.from_dlpack(cap)
    assert t.byte_offset == 8
    np.testing.assert_array_equal(np.from_dlpack(t), [2, 3])  # the first element is 8 bytes in
    np.testing.assert_array_equal(np.asarray(t), [2, 3])


# Malformed tensors: the conformance corpus (test_corpus.py) has every
# refusal, in the words of every dlgen module, the deleter counted.


def test_shutdown_with_live_capsules_and_tensors(dl):
    script = f"""
import sys
sys.path.insert(0, {repr(os.path.dirname(dl.__file__))})
import numpy as np, {dl.__name__} as dl
keep = []
for i in range(50):
    a = np.arange(100.0)
    t = dl.from_dlpack(a)
    keep.append((t, t.__dlpack__(max_version=(1, 0)), t.__dlpack__(max_version=(1, 0)) if i % 2 else None))
    keep.append(np.from_dlpack(t))
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    assert "Fatal" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr


def test_memoryview_is_zero_copy(dl):
    if dl.__name__ == "dlpack_ctypes" and sys.version_info < (3, 12):
        pytest.skip("pure ctypes can only offer __buffer__, which memoryview uses from Python 3.12")
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = dl.from_dlpack(a)
    m = memoryview(t)
    assert m.shape == (2, 3) and m.format == "i" and not m.readonly
    m[1, 2] = 42
    assert a[1, 2] == 42
    view = dl.from_dlpack(a[:, ::-2])
    if dl.__name__ == "dlpack_cython":  # strides are offered to consumers that take them
        strided = memoryview(view)
        assert strided.strides == (12, -8) and strided.tolist() == [[2, 0], [42, 3]]
        del strided
    else:  # Python code cannot give a memoryview strides of its own choosing
        with pytest.raises(BufferError, match="contiguous"):
            memoryview(view)
    np.testing.assert_array_equal(np.asarray(view), a[:, ::-2])  # NumPy then takes __array_interface__
    ro = dl.from_dlpack(a.__dlpack__(), readonly=True)  # a read-only view, on request
    assert memoryview(ro).readonly
    empty = dl.from_dlpack(a[:0])
    if dl.__name__ == "dlpack_cython":
        assert memoryview(empty).shape == (0, 3)
    else:  # nor a shape with a zero in it
        with pytest.raises(BufferError, match="empty"):
            memoryview(empty)
    assert np.asarray(empty).shape == (0, 3)
    del m
