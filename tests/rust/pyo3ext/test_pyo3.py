"""The generated crate's PyO3 glue against NumPy and PyTorch, both ways.

Run by tests/rust (pyo3_test.go) with the extension dlpack_pyo3_test, built
by maturin from this directory, on sys.path. Rust memory lent to NumPy and
PyTorch (RustArray) and their tensors taken by Rust (take): zero-copy shown
by writes on either side, both deletion orders, each owner released once,
reference counts back to where they were.
"""
import gc
import sys
import weakref

import dlpack_pyo3_test as ext
import numpy as np
import pytest
import torch


def settled():
    gc.collect()
    return ext.exported() - ext.released()


@pytest.fixture(autouse=True)
def no_exports_left():
    before = settled()
    yield
    assert settled() == before, "every export made in the test was released once"


def capsule_name(capsule):
    return repr(capsule).split('"')[1]


# --- Rust memory lent to NumPy and PyTorch ----------------------------------------------


def test_numpy_sees_and_makes_writes_zero_copy():
    a = ext.RustArray([1.0, 2.0, 3.0, 4.0])
    n = np.from_dlpack(a)
    assert n.dtype == np.float32 and n.flags.writeable
    n[1] = 20.0
    assert a.tolist() == [1.0, 20.0, 3.0, 4.0]
    a.fill(7.0)
    assert n.tolist() == [7.0] * 4


@pytest.mark.parametrize("consumer_first", [True, False])
def test_numpy_deletion_orders(consumer_first):
    a = ext.RustArray([1.0, 2.0])
    baseline = sys.getrefcount(a)
    made, released = ext.exported(), ext.released()
    n = np.from_dlpack(a)
    assert ext.exported() == made + 1
    assert sys.getrefcount(a) == baseline + 1, "the export keeps the producer alive"
    if consumer_first:
        del n
        assert ext.released() == released + 1
        assert sys.getrefcount(a) == baseline
    else:
        alive = weakref.ref(a)
        del a
        gc.collect()
        assert alive() is not None, "NumPy's array keeps the Rust memory alive"
        assert n.tolist() == [1.0, 2.0]
        del n
        gc.collect()
        assert alive() is None
        assert ext.released() == released + 1


def test_versioned_and_legacy_capsules():
    a = ext.RustArray([1.0])
    assert capsule_name(a.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(a.__dlpack__()) == "dltensor"
    assert capsule_name(a.__dlpack__(max_version=(0, 8))) == "dltensor"


def test_unconsumed_capsule_releases_on_collection():
    a = ext.RustArray([1.0])
    released = ext.released()
    c = a.__dlpack__(max_version=(1, 0))
    del c
    assert ext.released() == released + 1


def test_read_only_memory_is_read_only_in_numpy_and_never_legacy():
    a = ext.RustArray([1.0, 2.0], readonly=True)
    n = np.from_dlpack(a)
    assert not n.flags.writeable
    with pytest.raises(ValueError):
        n[0] = 5.0
    with pytest.raises(BufferError, match="unversioned capsule"):
        a.__dlpack__()


def test_keywords():
    a = ext.RustArray([1.0, 2.0])
    with pytest.raises(ValueError, match="stream must be None"):
        a.__dlpack__(stream=1)
    with pytest.raises(TypeError, match="dl_device"):
        a.__dlpack__(dl_device="cpu")
    with pytest.raises(BufferError, match="cannot export to device"):
        a.__dlpack__(dl_device=(2, 0))
    assert capsule_name(a.__dlpack__(max_version=(1, 0), dl_device=(1, 0))) == "dltensor_versioned"


def test_copy_keyword_gives_numpy_a_copy_of_its_own():
    a = ext.RustArray([1.0, 2.0])
    n = np.from_dlpack(a, copy=True)
    n[0] = 9.0
    assert a.tolist() == [1.0, 2.0]
    t = ext.take_with(a, copy=True)
    assert t.copied and t.tolist() == [1.0, 2.0]


def test_refused_capsule_keeps_the_consumers_error():
    # NumPy refuses bfloat16 and drops the capsule with its error set: the
    # capsule's destructor releases the export and leaves that error alone.
    a = ext.RustArray([1.0, 2.0], dtype="bfloat16")
    released = ext.released()
    with pytest.raises((BufferError, RuntimeError, TypeError)) as e:
        np.from_dlpack(a)
    assert not isinstance(e.value, SystemError)
    gc.collect()
    assert ext.released() == released + 1


def test_torch_sees_and_makes_writes_zero_copy():
    a = ext.RustArray([1.0, 2.0, 3.0])
    t = torch.from_dlpack(a)
    t[2] = 30.0
    assert a.tolist() == [1.0, 2.0, 30.0]
    a.fill(4.0)
    assert t.tolist() == [4.0] * 3


@pytest.mark.parametrize("consumer_first", [True, False])
def test_torch_deletion_orders(consumer_first):
    a = ext.RustArray([1.0, 2.0])
    baseline = sys.getrefcount(a)
    released = ext.released()
    t = torch.from_dlpack(a)
    assert sys.getrefcount(a) == baseline + 1
    if consumer_first:
        del t
        assert sys.getrefcount(a) == baseline
        assert ext.released() == released + 1
    else:
        alive = weakref.ref(a)
        del a
        gc.collect()
        assert alive() is not None
        assert t.tolist() == [1.0, 2.0]
        del t
        assert ext.released() == released + 1
        gc.collect()
        assert alive() is None


# --- NumPy's and PyTorch's tensors taken by Rust ---------------------------------------


def test_rust_writes_into_numpy_memory():
    n = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ext.take(n)
    assert t.via == "__dlpack__", "NumPy has no exchange API"
    assert t.shape == [2, 3] and t.strides == [3, 1]
    assert t.version is not None and t.version[0] == 1
    assert t.data_ptr == n.ctypes.data
    t.fill(5.0)
    assert n.tolist() == [[5.0] * 3] * 2
    n[0, 0] = -1.0
    assert t.tolist()[0] == -1.0


@pytest.mark.parametrize("consumer_first", [True, False])
def test_numpy_export_deleted_once_in_either_order(consumer_first):
    n = np.arange(4, dtype=np.float64)
    baseline = sys.getrefcount(n)
    t = ext.take(n)
    assert sys.getrefcount(n) == baseline + 1, "NumPy's export holds the array"
    if consumer_first:
        del t
        assert sys.getrefcount(n) == baseline, "the deleter ran once"
    else:
        alive = weakref.ref(n)
        del n
        gc.collect()
        assert alive() is not None
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
        del t
        gc.collect()
        assert alive() is None


def test_read_only_numpy_array_is_read_only_in_rust():
    n = np.arange(3, dtype=np.float32)
    n.flags.writeable = False
    t = ext.take(n)
    assert t.read_only
    with pytest.raises(BufferError, match="read-only"):
        t.fill(1.0)
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_legacy_capsule_and_consume_once():
    n = np.arange(3, dtype=np.float32)
    baseline = sys.getrefcount(n)
    legacy = n.__dlpack__()
    t = ext.take(legacy)
    assert t.via == "capsule" and t.version is None
    assert capsule_name(legacy) == "used_dltensor"
    with pytest.raises(ValueError, match="already consumed"):
        ext.take(legacy)
    del t, legacy
    assert sys.getrefcount(n) == baseline
    versioned = n.__dlpack__(max_version=(1, 0))
    ext.take(versioned).close()
    assert capsule_name(versioned) == "used_dltensor_versioned"
    with pytest.raises(ValueError, match="already consumed"):
        ext.take(versioned)
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        ext.take(torch.Tensor.__dlpack_c_exchange_api__)  # a capsule of another name
    with pytest.raises(TypeError, match="does not support the DLPack protocol"):
        ext.take(object())
    assert sys.getrefcount(n) == baseline


class OldProducer:
    """A producer from before DLPack 1.0: __dlpack__ takes no keywords."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_producer_without_keywords_gets_a_plain_call():
    n = np.arange(2, dtype=np.float32)
    t = ext.take(OldProducer(n))
    assert t.version is None and t.tolist() == [0.0, 1.0]


def test_malformed_tensor_is_a_buffer_error_and_deleted_once():
    n = np.zeros((2, 2), dtype=np.complex64)  # complex: no slice type here, but valid
    t = ext.take(n)
    with pytest.raises(ValueError, match="dtype"):
        t.tolist()
    del t
    s = np.zeros(3, dtype=np.float32)[::-1]  # negative strides: valid DLPack
    t = ext.take(s)
    with pytest.raises(BufferError, match="contiguous"):
        t.tolist()


def test_torch_exchange_api_path():
    x = torch.arange(6, dtype=torch.float32)
    assert x._use_count() == 1
    t = ext.take(x)
    assert t.via == "exchange_api", "torch.Tensor publishes __dlpack_c_exchange_api__"
    assert x._use_count() == 2, "the export holds the tensor"
    t.fill(3.0)
    assert x.tolist() == [3.0] * 6
    del t
    assert x._use_count() == 1, "the deleter ran once"


def test_torch_dlpack_path_and_deletion_after_the_tensor():
    x = torch.arange(4, dtype=torch.int64)
    t = ext.take_with(x, copy=False)
    assert t.via == "__dlpack__" and t.version is not None
    t.fill(8.0)
    assert x.tolist() == [8] * 4
    alive = weakref.ref(x)
    del x
    gc.collect()
    assert t.tolist() == [8.0] * 4, "Rust still holds the memory"
    del t
    assert alive() is None


def test_hand_numpy_memory_on_to_torch_through_rust():
    n = np.arange(3, dtype=np.float32)
    baseline = sys.getrefcount(n)
    capsule = ext.take(n).hand_on()
    y = torch.from_dlpack(capsule)
    y[0] = 42.0
    assert n[0] == 42.0
    del y, capsule
    gc.collect()
    assert sys.getrefcount(n) == baseline
