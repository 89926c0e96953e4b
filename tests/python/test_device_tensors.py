"""Tensors on devices the CPU cannot read, against hand-made producers (no
device needed; test_devices.py does the same against real device
frameworks): held zero-copy on any device type, newer ones included, never
read; handed on as they are; copied only where asked, by the producer or
by the owner's on_copy hook; streams passed to producers as given, once per
capsule form, and honoured on re-export; the Cython consumer's
exchange-API fast path against a table whose entries the test controls.
Every device address here is 0x10000, which nothing maps: a read of it
would crash the test."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import dlpack_ctypes as ct
from harness import MODULES

CPU, CUDA, CUDA_HOST, OPENCL, VULKAN, ROCM, ROCM_HOST, CUDA_MANAGED, ONEAPI = 1, 2, 3, 4, 7, 10, 11, 13, 14
# Upstream's device types after DLPack 1.3 (kDLTPU, kDLTPUHost, kDLAscend),
# newer than every release dlgen knows.
NEWER = [19, 20, 21]
UNREADABLE = [CUDA, OPENCL, VULKAN, ROCM, ONEAPI] + NEWER
HOST_ACCESSIBLE = [CUDA_HOST, ROCM_HOST, CUDA_MANAGED]
DEVICE_ADDRESS = 0x10000
READ_ONLY = ct.DLPACK_FLAG_BITMASK_READ_ONLY
IS_COPIED = ct.DLPACK_FLAG_BITMASK_IS_COPIED
MAX_VERSION = (ct.DLPACK_MAJOR_VERSION, ct.DLPACK_MINOR_VERSION)


def cpu_readers(dl):
    readers = {"np.asarray": np.asarray, "tobytes": lambda t: t.tobytes(),
               "__array_interface__": lambda t: t.__array_interface__}
    if dl.__name__ != "dlpack_ctypes" or sys.version_info >= (3, 12):
        readers["memoryview"] = memoryview
    return readers


class Recorder:
    """A producer that records the keywords of every __dlpack__ call and
    answers each with answer(**kwargs): a capsule, or an exception to raise."""

    def __init__(self, answer, device=(CUDA, 0)):
        self.answer, self.device, self.calls = answer, device, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        result = self.answer(**kwargs)
        if isinstance(result, BaseException):
            raise result
        return result


class LegacyRecorder:
    """A producer from before max_version: __dlpack__(stream=None) only."""

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def __dlpack__(self, stream=None):
        self.calls.append({} if stream is None else {"stream": stream})
        return self.answer()


def device_capsule(producer, device_type=CUDA, device_id=0, **kw):
    return producer.capsule(device_type=device_type, device_id=device_id, address=DEVICE_ADDRESS, **kw)


def managed_fields(capsule):
    """(data, byte_offset, device, shape, strides, flags) of a capsule's
    tensor, read through the ctypes structs, then given back."""
    address, versioned = ct.to_managed(capsule)
    m = (ct.DLManagedTensorVersioned if versioned else ct.DLManagedTensor).from_address(address)
    d = m.dl_tensor
    fields = (d.data, d.byte_offset, (d.device.device_type, d.device.device_id),
              tuple(d.shape[i] for i in range(d.ndim)), tuple(d.strides[i] for i in range(d.ndim)),
              m.flags if versioned else None)
    ct.from_managed(address, versioned=versioned).close()
    return fields


# --- Held zero-copy, never read --------------------------------------------------

@pytest.mark.parametrize("copy", [None, False])
@pytest.mark.parametrize("device_type", UNREADABLE)
def test_device_tensor_is_held_zero_copy(dl, producer, device_type, copy):
    cap = device_capsule(producer, device_type, 3, ndim=2, shape=(2, 3), strides=(1, 2), byte_offset=16,
                         flags=READ_ONLY)
    t = dl.from_dlpack(cap, copy=copy)
    assert (t.device, t.data_ptr, t.byte_offset, t.shape, t.strides, t.dtype.name, t.readonly, t.copied) == (
        (device_type, 3), DEVICE_ADDRESS + 16, 16, (2, 3), (1, 2), "float32", True, False)
    assert producer.deleted == 0
    for name, read in cpu_readers(dl).items():
        with pytest.raises(BufferError, match="device") as e:
            read(t)
        assert type(e.value) is BufferError, name
    t.close()
    assert producer.deleted == 1


@pytest.mark.parametrize("device_type", HOST_ACCESSIBLE)
def test_host_accessible_kinds_stay_readable(dl, producer, device_type):
    cap = producer.capsule(device_type=device_type, code=ct.DLDataTypeCode.kDLInt, shape=(4,))
    np.frombuffer(producer._keep[-1][0], dtype=np.int32)[:4] = [5, 6, 7, 8]
    t = dl.from_dlpack(cap)
    assert t.device == (device_type, 0)
    assert np.asarray(t).tolist() == [5, 6, 7, 8]
    assert np.frombuffer(t.tobytes(), np.int32).tolist() == [5, 6, 7, 8]
    assert t.__array_interface__["shape"] == (4,)


def test_no_private_exception_type_is_left(dl):
    assert not [name for name in vars(dl) if "Inaccessible" in name]


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("device_type", [CUDA, ONEAPI] + NEWER)
def test_re_export_hands_on_the_same_memory_and_device(dl, producer, device_type, versioned):
    t = dl.from_dlpack(device_capsule(producer, device_type, 1, ndim=2, shape=(3, 2), strides=(-2, 1),
                                      byte_offset=8))
    assert t.__dlpack_device__() == (device_type, 1)
    data, byte_offset, device, shape, strides, flags = managed_fields(
        t.__dlpack__(max_version=MAX_VERSION) if versioned else t.__dlpack__())
    assert (data, byte_offset, device, shape, strides) == (DEVICE_ADDRESS, 8, (device_type, 1), (3, 2), (-2, 1))
    assert flags in (0, None)  # neither copied nor read-only
    again = dl.from_dlpack(t.__dlpack__(max_version=MAX_VERSION))  # and into this module again
    assert (again.device, again.data_ptr, again.strides) == ((device_type, 1), DEVICE_ADDRESS + 8, (-2, 1))
    t.close()
    assert producer.deleted == 0, "the re-exports still hold the producer's tensor"
    again.close()
    gc.collect()
    if hasattr(dl, "_sweep"):
        dl._sweep()
    assert producer.deleted == 1


# --- Requests: device, copy, once per capsule form ---------------------------------------

def test_device_cpu_asks_the_producer_for_a_host_copy(dl, producer):
    host = np.arange(4.0)

    def answer(**kw):
        if kw.get("dl_device") == (CPU, 0):
            return host.__dlpack__(max_version=kw["max_version"], copy=True)
        return device_capsule(producer)

    x = Recorder(answer)
    t = dl.from_dlpack(x, device=(CPU, 0))
    assert x.calls == [{"max_version": MAX_VERSION, "dl_device": (CPU, 0)}]
    assert t.device == (CPU, 0) and t.copied and np.asarray(t).tolist() == host.tolist()
    held = dl.from_dlpack(x)  # without device=, the device tensor itself
    assert held.device == (CUDA, 0) and x.calls[-1] == {"max_version": MAX_VERSION}


def test_device_argument_between_dlgen_tensors(dl):
    a = np.arange(3.0)
    source = dl.from_pointer(a.ctypes.data, (3,), "float64", owner=a)
    t = dl.from_dlpack(source, device=dl.Device(CPU, 0))  # a plain tuple goes to __dlpack__
    assert t.device == (CPU, 0) and t.data_ptr == a.ctypes.data
    assert source.__dlpack__(dl_device=dl.Device(CPU, 0), max_version=MAX_VERSION)


def test_device_elsewhere_than_asked_is_refused_and_deleted(dl, producer):
    x = Recorder(lambda **kw: device_capsule(producer))  # ignores dl_device
    with pytest.raises(BufferError, match=r"device \(2, 0\), not \(1, 0\)") as e:
        dl.from_dlpack(x, device=(CPU, 0))
    assert type(e.value) is BufferError
    assert producer.deleted == 1


def test_producer_that_cannot_place_the_tensor(dl, producer):
    x = Recorder(lambda **kw: BufferError("no host copy here"))
    with pytest.raises(BufferError, match=r"cannot give its tensor on device \(1, 0\): no host copy"):
        dl.from_dlpack(x, device=(CPU, 0))
    assert len(x.calls) == 1


def test_device_argument_may_name_any_device(dl, producer):
    x = Recorder(lambda **kw: device_capsule(producer, ONEAPI, 2), device=(ONEAPI, 2))
    t = dl.from_dlpack(x, device=(ONEAPI, 2))
    assert x.calls == [{"max_version": MAX_VERSION, "dl_device": (ONEAPI, 2)}] and t.device == (ONEAPI, 2)
    with pytest.raises(TypeError, match="is not a DLPack device"):
        dl.from_dlpack(x, device="cuda")  # CUDA or ROCm? Nothing is guessed


def test_copy_true_takes_the_producers_device_copy(dl, producer):
    x = Recorder(lambda **kw: device_capsule(producer, flags=IS_COPIED if kw.get("copy") else 0))
    t = dl.from_dlpack(x, copy=True)
    assert x.calls == [{"max_version": MAX_VERSION, "copy": True}]
    assert t.copied and t.device == (CUDA, 0) and t.data_ptr == DEVICE_ADDRESS


def test_copy_true_without_a_producer_copy_is_refused_and_deleted(dl, producer):
    x = LegacyRecorder(lambda: device_capsule(producer, versioned=False))  # cannot hear copy=True
    with pytest.raises(BufferError, match=r"memory on device \(2, 0\) cannot be read from the CPU") as e:
        dl.from_dlpack(x, copy=True)
    assert type(e.value) is BufferError
    assert producer.deleted == 1


@pytest.mark.parametrize("stream", [None, 5])
def test_type_error_means_one_call_per_capsule_form(dl, stream):
    """A producer whose __dlpack__ raises TypeError is asked once with
    max_version, once without (the legacy form), never more."""
    x = Recorder(lambda **kw: TypeError("not today"))
    with_stream = {} if stream is None else {"stream": stream}
    with pytest.raises(TypeError, match="not today"):
        dl.from_dlpack(x, **with_stream)
    assert x.calls == [{"max_version": MAX_VERSION, **with_stream}, with_stream]


def test_missing_dunder_dlpack(dl):
    with pytest.raises(TypeError, match="does not support the DLPack protocol"):
        dl.from_dlpack(object(), stream=5)


# --- Streams ---------------------------------------------------------------------------

class Queue:
    """Stands for a dpctl.SyclQueue: any object may be a stream."""


@pytest.mark.parametrize("stream", [5, 2, Queue()])
def test_stream_reaches_the_producer_as_given(dl, producer, stream):
    x = Recorder(lambda **kw: device_capsule(producer))
    t = dl.from_dlpack(x, stream=stream)
    assert len(x.calls) == 1 and x.calls[0]["stream"] is stream
    assert x.calls == [{"max_version": MAX_VERSION, "stream": stream}]
    assert t.device == (CUDA, 0)


def test_stream_reaches_a_legacy_producer(dl, producer):
    x = LegacyRecorder(lambda: device_capsule(producer, versioned=False))
    dl.from_dlpack(x, stream=7)
    assert x.calls == [{"stream": 7}]


def test_a_stream_with_a_capsule_is_refused(dl, producer):
    cap = device_capsule(producer)
    with pytest.raises(ValueError, match="stream"):
        dl.from_dlpack(cap, stream=5)
    assert '"dltensor_versioned"' in repr(cap) and producer.deleted == 0  # nothing taken
    assert dl.from_dlpack(cap).device == (CUDA, 0)


def imported(dl, producer, device_type, stream):
    return dl.from_dlpack(Recorder(lambda **kw: device_capsule(producer, device_type)), stream=stream)


@pytest.mark.parametrize("device_type, stream, allowed, refused", [
    (CUDA, 5, [5, -1], [7, None, 1]),
    (CUDA, None, [None, 1, -1], [2, 5]),          # None is CUDA's legacy default stream, 1
    (ROCM, None, [None, 0, -1], [3]),             # and ROCm's default stream, 0
    (CUDA_MANAGED, 9, [9, -1], [None, 1]),
    (19, None, [None, -1], [5]),                  # a device type newer than the release
])
def test_re_export_stream_rules(dl, producer, device_type, stream, allowed, refused):
    """An imported device tensor is ready on the stream it was imported on;
    the module has no device runtime to order it for another, so a consumer
    on another stream is refused (BufferError) rather than left to race."""
    t = imported(dl, producer, device_type, stream)
    for s in allowed:
        assert managed_fields(t.__dlpack__(stream=s, max_version=MAX_VERSION))[0] == DEVICE_ADDRESS
    for s in refused:
        with pytest.raises(BufferError, match="race") as e:
            t.__dlpack__(stream=s, max_version=MAX_VERSION)
        assert type(e.value) is BufferError


def test_re_export_on_a_sycl_queue(dl, producer):
    q, other = Queue(), Queue()
    t = imported(dl, producer, ONEAPI, q)
    assert t.__dlpack__(stream=q, max_version=MAX_VERSION)
    assert t.__dlpack__(max_version=MAX_VERSION)  # oneAPI: None asks for no synchronisation
    with pytest.raises(BufferError, match="race"):
        t.__dlpack__(stream=other, max_version=MAX_VERSION)


def test_from_pointer_stream_hook_still_decides(dl):
    seen = []
    t = dl.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0), on_stream=seen.append)
    t.__dlpack__(stream=11, max_version=MAX_VERSION)
    t.__dlpack__(stream=12, max_version=MAX_VERSION)
    assert seen == [11, 12]


# --- Copies on export: the owner's on_copy hook -------------------------------------------

def test_device_export_copy_without_a_hook_is_a_buffer_error(dl, producer):
    for t in (dl.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0)),
              dl.from_dlpack(device_capsule(producer))):
        for kwargs in (dict(dl_device=(CPU, 0)), dict(copy=True), dict(dl_device=(ONEAPI, 0))):
            with pytest.raises(BufferError, match="on_copy") as e:
                t.__dlpack__(max_version=MAX_VERSION, **kwargs)
            assert type(e.value) is BufferError
        with pytest.raises(BufferError, match="copy=False"):
            t.__dlpack__(max_version=MAX_VERSION, dl_device=(CPU, 0), copy=False)


def test_on_copy_makes_the_host_copy(dl):
    host = np.arange(4, dtype=np.float32) * 10
    calls = []

    def on_copy(device, stream):
        calls.append((device, stream))
        return dl.from_pointer(host.ctypes.data, (4,), "float32", owner=host)

    t = dl.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0), on_copy=on_copy)
    c = dl.from_dlpack(t.__dlpack__(max_version=MAX_VERSION, dl_device=(CPU, 0)))
    assert calls == [((CPU, 0), None)] and type(calls[0][0]) is dl.Device
    assert c.copied and c.device == (CPU, 0) and np.asarray(c).tolist() == [0, 10, 20, 30]
    assert np.from_dlpack(t, device="cpu").tolist() == [0, 10, 20, 30]  # NumPy asks the same way


def test_on_copy_on_the_device_with_the_consumers_stream(dl):
    seen = []

    def on_copy(device, stream):
        seen.append((device, stream))
        return dl.from_pointer(0x20000, (2, 2), "int16", device=device)

    t = dl.from_pointer(DEVICE_ADDRESS, (2, 2), "int16", strides=(1, 2), device=(CUDA, 1), on_copy=on_copy)
    data, _, device, shape, strides, flags = managed_fields(t.__dlpack__(max_version=MAX_VERSION, copy=True,
                                                                         stream=9))
    assert seen == [((CUDA, 1), 9)]
    assert (data, device, shape, strides, flags) == (0x20000, (CUDA, 1), (2, 2), (2, 1), IS_COPIED)


def test_on_copy_may_return_any_dlpack_object(dl):
    t = dl.from_pointer(DEVICE_ADDRESS, (3,), "float64", device=(ROCM, 0),
                        on_copy=lambda device, stream: np.array([1.0, 2.0, 3.0]))
    c = dl.from_dlpack(t.__dlpack__(max_version=MAX_VERSION, dl_device=(CPU, 0)))
    assert c.copied and np.asarray(c).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("wrong, match", [
    (lambda dl: dl.from_pointer(0x20000, (4,), "float32", device=(CUDA, 0)), r"device \(2, 0\), not \(1, 0\)"),
    (lambda dl: np.zeros(5, np.float32), "shape"),
    (lambda dl: np.zeros(4, np.float64), "float64"),
])
def test_on_copy_result_is_checked(dl, wrong, match):
    t = dl.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0), on_copy=lambda d, s: wrong(dl))
    with pytest.raises(BufferError, match=match):
        t.__dlpack__(max_version=MAX_VERSION, dl_device=(CPU, 0))


def test_on_copy_result_refused_is_given_back(dl, producer):
    t = dl.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0),
                        on_copy=lambda d, s: device_capsule(producer, ROCM))
    with pytest.raises(BufferError, match="on_copy returned"):
        t.__dlpack__(max_version=MAX_VERSION, dl_device=(CPU, 0))
    assert producer.deleted == 1


def test_on_copy_must_be_callable(dl):
    with pytest.raises(TypeError, match="on_copy"):
        dl.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0), on_copy=5)


def test_host_memory_is_still_copied_by_the_module(dl):
    a = np.arange(3.0)
    t = dl.from_pointer(a.ctypes.data, (3,), "float64", device=(CUDA_HOST, 0), owner=a,
                        on_copy=lambda d, s: pytest.fail("the module copies what the CPU reads"))
    c = dl.from_dlpack(t.__dlpack__(max_version=MAX_VERSION, dl_device=(CPU, 0), copy=True))
    assert c.copied and np.asarray(c).tolist() == [0.0, 1.0, 2.0]


# --- The Cython module's C exchange API with device tensors ----------------------------------

cython_only = pytest.mark.skipif("dlpack_cython" not in MODULES, reason="dlpack_cython is not built")
_keep = []  # tables and callbacks: consumers cache a type's table for the process


def exchange_producer(producer, device_type, current_stream=None):
    """A producer type with a C exchange API whose no-sync entry hands out
    device_type tensors and whose current_work_stream answers
    current_stream; __dlpack__ records its calls and answers like it."""
    entries = {"no_sync": 0, "current_work_stream": []}

    def from_py(obj, out):
        entries["no_sync"] += 1
        device_capsule(producer, device_type)
        out[0] = ctypes.pointer(producer._keep[-1][3])
        return 0

    def work_stream(device_type, device_id, out):
        entries["current_work_stream"].append((device_type, device_id))
        out[0] = current_stream
        return 0

    api = ct.DLPackExchangeAPI()
    api.header.version.major, api.header.version.minor = MAX_VERSION
    callbacks = (ct.DLPackManagedTensorFromPyObjectNoSync(from_py), ct.DLPackCurrentWorkStream(work_stream))
    api.managed_tensor_from_py_object_no_sync, api.current_work_stream = callbacks
    capsule = ctypes.pythonapi.PyCapsule_New
    capsule.restype, capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    _keep.append((api, callbacks))

    class Producer(Recorder):
        __dlpack_c_exchange_api__ = capsule(ctypes.addressof(api), b"dlpack_exchange_api", None)

    x = Producer(lambda **kw: device_capsule(producer, device_type), device=(device_type, 0))
    return x, entries


@cython_only
@pytest.mark.parametrize("device_type, stream, current, fast", [
    (CPU, None, None, True),        # the CPU has no stream
    (CPU, 5, None, False),          # __dlpack__ says what a stream for the CPU means
    (CUDA, None, None, False),      # the producer's __dlpack__ synchronises as it takes None
    (CUDA, -1, None, True),         # the consumer asks for no synchronisation
    (CUDA, 7, 7, True),             # the consumer is on the producer's current work stream
    (CUDA, 7, 8, False),            # another stream: __dlpack__(stream=7) orders it
    (ONEAPI, Queue(), None, False),  # a queue object: only __dlpack__ can take it
])
def test_exchange_api_fast_path_only_without_a_race(producer, device_type, stream, current, fast):
    import dlpack_cython as cy
    x, entries = exchange_producer(producer, device_type, current)
    t = cy.from_dlpack(x, stream=stream)
    assert entries["no_sync"] == 1
    if fast:
        assert x.calls == [] and producer.deleted == 0
    else:
        expected = {"max_version": MAX_VERSION} if stream is None else {"max_version": MAX_VERSION, "stream": stream}
        assert x.calls == [expected]
        assert producer.deleted == 1, "the no-sync export was given back"
    if device_type != CPU and type(stream) is int and stream != -1:
        assert entries["current_work_stream"] == [(device_type, 0)]
    assert t.device == (device_type, 0)


@cython_only
@pytest.mark.parametrize("kwargs", [dict(device=(CPU, 0)), dict(copy=True)])
def test_exchange_api_tensor_that_does_not_fit_goes_back(producer, kwargs):
    import dlpack_cython as cy
    x, entries = exchange_producer(producer, CUDA)
    with pytest.raises(BufferError):  # the recorder ignores dl_device and copy: refused as above
        cy.from_dlpack(x, stream=-1, **kwargs)
    assert entries["no_sync"] == 1
    asked = {"dl_device": kwargs["device"]} if "device" in kwargs else kwargs
    assert x.calls == [{"max_version": MAX_VERSION, "stream": -1, **asked}]
    gc.collect()
    assert producer.deleted == 2


@cython_only
def test_own_table_current_work_stream(producer):
    """dlpack_cython's own table has no current work stream off the CPU:
    its entry fails (BufferError), and from_dlpack then takes the tensor
    through __dlpack__, whose on_stream hook sees the consumer's stream."""
    import dlpack_cython as cy
    capsule = cy.Tensor.__dlpack_c_exchange_api__
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = ct.DLPackExchangeAPI.from_address(get(capsule, b"dlpack_exchange_api"))
    entry = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(
        ctypes.cast(api.current_work_stream, ctypes.c_void_p).value)
    stream = ctypes.c_void_p(1)
    assert entry(CPU, 0, ctypes.addressof(stream)) == 0 and not stream.value
    with pytest.raises(BufferError, match="__dlpack__"):
        entry(CUDA, 0, ctypes.addressof(stream))
    seen = []
    src = cy.from_pointer(DEVICE_ADDRESS, (4,), "float32", device=(CUDA, 0), on_stream=seen.append)
    t = cy.from_dlpack(src, stream=5)
    assert seen == [5] and t.device == (CUDA, 0) and t.data_ptr == DEVICE_ADDRESS
    out = ctypes.POINTER(ct.DLManagedTensorVersioned)()  # the producer entry hands device tensors on
    assert api.managed_tensor_from_py_object_no_sync(id(t), ctypes.byref(out)) == 0
    d = out.contents.dl_tensor
    assert (d.data, d.device.device_type, d.device.device_id) == (DEVICE_ADDRESS, CUDA, 0)
    cy.from_managed(ctypes.cast(out, ctypes.c_void_p).value).close()
