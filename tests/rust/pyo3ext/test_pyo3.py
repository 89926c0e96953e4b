"""The generated crate's PyO3 glue against NumPy and PyTorch, both ways.

Run by tests/rust (pyo3_test.go) with the extension dlpack_pyo3_test, built
by maturin from this directory, on sys.path. Rust memory lent to NumPy and
PyTorch (RustArray) and their tensors taken by Rust (take): zero-copy shown
by writes on either side, both deletion orders, each owner released once,
reference counts back to where they were. PyTorch's C exchange API taken
only where it answers as __dlpack__ does, for every kind of tensor; the
consumer's stream passed to producers as given, and the exchange API used
with a stream only where nothing needs ordering (DeviceArray, a device
tensor whose table reports a current work stream); errors raised as the
exception their rule names.
"""
import gc
import re
import sys
import weakref

import dlpack_pyo3_test as ext
import numpy as np
import pytest
import torch
from torch_kinds import DTYPES, DUNDER_REFUSES, KINDS, cplx, grid, quietly


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


def test_errors_are_the_exception_their_rule_names():
    # Rule dtype_name and strides_count are ValueErrors, stride_limit a
    # BufferError, as the Python modules raise them.
    with pytest.raises(ValueError, match="unknown dtype name 'float31'"):
        ext.RustArray([1.0], dtype="float31")
    with pytest.raises(ValueError, match="^2 strides for 1 dimensions$"):
        ext.RustArray([1.0, 2.0], strides=[1, 1]).__dlpack__()
    with pytest.raises(BufferError, match="^stride 4611686018427387904 in dimension 0 is too large"):
        ext.RustArray([1.0, 2.0], strides=[2**62]).__dlpack__()
    with pytest.raises(BufferError, match=r"cannot be read from the CPU"):
        ext.take(ext.DeviceArray()).tolist()  # rule device_unreadable


def test_a_stream_is_refused_only_where_the_capsule_has_no_streams():
    # The schema's streamless device types (the CPU), in the words of rule
    # stream_refused; pinned host memory (kDLCUDAHost) has CUDA's streams.
    words = "^" + re.escape("stream must be None for a tensor on device (1, 0), which has no streams") + "$"
    with pytest.raises(ValueError, match=words):
        ext.RustArray([1.0, 2.0]).__dlpack__(stream=1)
    pinned = ext.DeviceArray(device_type=3)
    assert capsule_name(pinned.__dlpack__(stream=1, max_version=(1, 0))) == "dltensor_versioned"
    with pytest.raises(ValueError, match=words):
        pinned.__dlpack__(stream=1, dl_device=(1, 0))


def test_keywords():
    a = ext.RustArray([1.0, 2.0])
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
    with pytest.raises(RuntimeError, match=r"^Unsupported dtype in DLTensor\.$"):
        np.from_dlpack(a)
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
    t = ext.take_with(x, copy=False)  # the exchange API has no copy: __dlpack__
    assert t.version is not None
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


# --- PyTorch's exchange API answers as __dlpack__ does -----------------------------------


class DunderOnly:
    """x as a consumer without the exchange API reaches it: __dlpack__ only."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kwargs):
        return self.x.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def answer(take, x):
    """What a consumer gets: the tensor's description and bytes, or the
    exception type (the words are the producer's)."""
    try:
        t = take(x)
    except Exception as e:
        return type(e)
    try:
        data = t.tobytes()
    except BufferError as e:  # memory the CPU cannot read, packed and strided
        data = str(e)
    return t.dtype, t.shape, t.strides, t.byte_offset, t.data_ptr, t.device, t.flags, data


def fast_and_dunder_agree(x):
    """from_dlpack (the exchange API where it fits) gives what __dlpack__
    alone gives; so does take (from_exchange_api, then __dlpack__)."""
    want = answer(ext.take_with, DunderOnly(x))
    assert answer(ext.take_with, x) == want, "the exchange API answers differently from __dlpack__"
    assert answer(ext.take, x) == want, "from_exchange_api answers differently from __dlpack__"
    return want


@pytest.mark.parametrize("kind", KINDS)
def test_exchange_api_answers_as_dunder_dlpack(kind):
    want = fast_and_dunder_agree(quietly(KINDS[kind]))
    if kind in DUNDER_REFUSES:
        assert want is BufferError, "PyTorch's __dlpack__ refuses " + kind


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_answers_as_dunder_dlpack(dtype):
    def make():
        try:
            return torch.zeros(3, dtype=dtype)
        except Exception:
            return torch.empty(3, dtype=dtype)  # no zeros kernel: bits, shell dtypes
    fast_and_dunder_agree(quietly(make))


def test_no_wrong_values_and_no_grad():
    zc = cplx().conj()
    with pytest.raises(BufferError):
        ext.take_with(zc)
    with pytest.raises(BufferError):
        ext.take_with(grid().requires_grad_())
    resolved = zc.resolve_conj()
    t = ext.take(resolved)
    assert t.via == "exchange_api"
    assert t.tobytes() == resolved.numpy().tobytes()


class Vouched(torch.Tensor):
    """A subclass whose __dlpack__ means its parent's says so by publishing
    the table again; this one's __dlpack__ must not be reached."""
    __dlpack_c_exchange_api__ = torch.Tensor.__dlpack_c_exchange_api__

    def __dlpack__(self, **kwargs):
        raise AssertionError("__dlpack__ was called")


class Recorded(torch.Tensor):
    """A subclass with a __dlpack__ of its own and no table of its own."""
    calls = []

    def __dlpack__(self, **kwargs):
        Recorded.calls.append(kwargs)
        return super().__dlpack__(**kwargs)


def test_ordinary_tensors_take_the_table():
    for x in (grid(), torch.arange(5), cplx(), grid().t()[1:]):
        t = ext.take_with(x.as_subclass(Vouched))
        assert t.data_ptr == x.data_ptr() and t.shape == list(x.shape)
        assert t.tobytes() == x.contiguous().numpy().tobytes()


def test_a_subclass_without_a_table_of_its_own_gets_dunder_dlpack():
    Recorded.calls.clear()
    x = grid().as_subclass(Recorded)
    assert ext.take(x).via == "__dlpack__"
    ext.take_with(x)
    assert Recorded.calls == [{"max_version": ext.MAX_VERSION}] * 2


# --- Streams ---------------------------------------------------------------------------


class Recorder:
    """A CPU producer recording the keywords of each __dlpack__ call; with
    legacy=True one from before DLPack 1.0, refusing max_version with a
    TypeError. It ignores the stream: this is about what reaches it."""

    def __init__(self, legacy=False):
        self.calls = []
        self.legacy = legacy

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if self.legacy and "max_version" in kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        n = np.arange(3, dtype=np.float32)
        return n.__dlpack__(max_version=kwargs["max_version"]) if "max_version" in kwargs else n.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


class Queue:
    """A stream object, as a SYCL queue is one."""


@pytest.mark.parametrize("stream", [7, 0, -1, 2**64 - 1, Queue()], ids=repr)
def test_stream_reaches_dunder_dlpack_as_given_once_per_form(stream):
    r = Recorder()
    assert ext.take_with(r, stream=stream).version is not None
    assert r.calls == [{"max_version": ext.MAX_VERSION, "stream": stream}]
    assert r.calls[0]["stream"] is stream
    old = Recorder(legacy=True)
    assert ext.take_with(old, stream=stream).version is None
    assert old.calls == [{"max_version": ext.MAX_VERSION, "stream": stream}, {"stream": stream}]
    assert old.calls[1]["stream"] is stream


def test_no_stream_asks_without_one():
    r, old = Recorder(), Recorder(legacy=True)
    ext.take_with(r, stream=None)
    ext.take_with(old)
    assert r.calls == [{"max_version": ext.MAX_VERSION}]
    assert old.calls == [{"max_version": ext.MAX_VERSION}, {}]


def test_a_capsule_takes_no_stream():
    capsule = np.arange(2.0).__dlpack__(max_version=(1, 0))
    with pytest.raises(ValueError, match="a stream cannot go with a capsule"):
        ext.take_with(capsule, stream=1)
    assert capsule_name(capsule) == "dltensor_versioned", "not consumed"
    assert ext.take_with(capsule, stream=None).tolist() == [0.0, 1.0]


def took_table(a, stream):
    """Whether from_dlpack took a's tensor through its table: one table
    export and no __dlpack__ call, or one __dlpack__ call with the stream
    as given (and the table's export given back)."""
    before, calls = ext.table_exports(), len(a.calls)
    t = ext.take_with(a, stream=stream)
    assert t.device == a.__dlpack_device__() and t.data_ptr == 0x10000
    if len(a.calls) == calls:
        assert ext.table_exports() == before + 1
        return True
    want = {"max_version": ext.MAX_VERSION} if stream is None else {"max_version": ext.MAX_VERSION, "stream": stream}
    assert a.calls[calls:] == [want]
    return False


def test_device_tensors_take_the_table_only_where_nothing_needs_ordering():
    a = ext.DeviceArray()
    assert took_table(a, ext.CURRENT_STREAM), "the producer's current work stream"
    assert took_table(a, -1), "no synchronisation asked for"
    assert not took_table(a, None), "None: __dlpack__ synchronises as the producer takes None"
    assert not took_table(a, 5), "another stream"
    assert not took_table(a, Queue()), "a stream object"
    assert not took_table(a, True), "not an integer"
    other = ext.DeviceArray(1)  # its table has no current work stream for (2, 1)
    assert took_table(other, -1)
    assert not took_table(other, ext.CURRENT_STREAM), "current_work_stream failed: __dlpack__"


def test_cpu_tensors_take_the_table_only_without_a_stream():
    x = grid()
    assert ext.take_with(x.as_subclass(Vouched)).data_ptr == x.data_ptr()
    Recorded.calls.clear()
    watched = type("Watched", (Recorded,), {"__dlpack_c_exchange_api__": torch.Tensor.__dlpack_c_exchange_api__})
    answer(lambda y: ext.take_with(y, stream=1), x.as_subclass(watched))
    assert Recorded.calls == [{"max_version": ext.MAX_VERSION, "stream": 1}]


def test_a_failing_entry_leaves_the_answer_to_dunder_dlpack():
    a = ext.DeviceArray(refuse=True)
    t = ext.take_with(a, stream=-1)
    assert t.device == (2, 0)
    assert a.calls == [{"max_version": ext.MAX_VERSION, "stream": -1}]


def test_the_table_serves_the_type_that_publishes_it():
    class Inherits(ext.DeviceArray):
        pass

    class Publishes(ext.DeviceArray):
        __dlpack_c_exchange_api__ = ext.DeviceArray.__dlpack_c_exchange_api__

    assert not took_table(Inherits(), -1)
    assert took_table(Publishes(), -1)


def test_legacy_device_producer_gets_the_stream_in_both_calls():
    a = ext.DeviceArray(legacy_only=True)
    t = ext.take_with(a, stream=5)
    assert t.version is None
    assert a.calls == [{"max_version": ext.MAX_VERSION, "stream": 5}, {"stream": 5}]
