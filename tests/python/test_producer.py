"""The producer API a framework uses: from_pointer over memory it owns,
from_buffer over any buffer-protocol object, dtype names. Every test runs
against both generated modules."""
import array
import ctypes
import gc
import mmap
import re
import sys
import weakref

import numpy as np
import pytest


class Owner:
    """Stands for a framework's array: owns memory, and is watched."""

    def __init__(self, a):
        self.a = a


def pointer(dl, a, **kw):
    owner = Owner(a)
    return dl.from_pointer(a.ctypes.data, a.shape, a.dtype.name, owner=owner, **kw), weakref.ref(owner)


def test_from_pointer_is_zero_copy_both_ways(dl):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t, _ = pointer(dl, a)
    assert (t.shape, t.strides, t.dtype.name, t.device, t.readonly) == ((2, 3), (3, 1), "float32", (1, 0), False)
    n = np.from_dlpack(t)
    n[1, 2] = 42
    assert a[1, 2] == 42
    a[0, 0] = 7
    assert n[0, 0] == 7


def test_from_pointer_strides_and_byte_offset(dl):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    t = dl.from_pointer(a.ctypes.data, (2, 2), "int16", strides=(-4, 2), byte_offset=2 * (8 + 1), owner=a)
    assert np.from_dlpack(t).tolist() == [[9, 11], [5, 7]]


@pytest.mark.parametrize("consumer_first", [True, False])
def test_owner_lives_until_tensor_and_exports_are_gone(dl, consumer_first):
    t, owner = pointer(dl, np.arange(4.0))
    capsule = t.__dlpack__(max_version=(1, 0))
    n = np.from_dlpack(t)
    if consumer_first:
        del capsule, n
        gc.collect()
        assert owner() is not None
        t.close()
    else:
        t.close()
        del t
        gc.collect()
        assert owner() is not None, "an unconsumed capsule and a NumPy array still use the memory"
        assert n.tolist() == [0.0, 1.0, 2.0, 3.0]
        del capsule
        gc.collect()
        assert owner() is not None
        del n
    gc.collect()
    assert owner() is None


def test_closed_tensor_refuses_new_exports_but_keeps_old_ones(dl):
    t, owner = pointer(dl, np.arange(3.0))
    n = np.from_dlpack(t)
    t.close()
    with pytest.raises(ValueError, match="closed"):
        t.__dlpack__()
    assert n.sum() == 3.0 and owner() is not None


LOG2 = 8 * ctypes.sizeof(ctypes.c_void_p) - 1  # every count, offset and extent stays below 2^LOG2
NOT_AN_INTEGER = "'float' object cannot be interpreted as an integer"


@pytest.mark.parametrize("kwargs, error, message", [
    # The import rules, in the words of the message table (rules.md), as ValueError.
    (dict(shape=(2, -3)), ValueError, "negative extent -3 in dimension 1"),
    (dict(shape=(1,) * 65), ValueError, "ndim 65 is outside [0, 64]"),
    (dict(shape=(1 << 40, 1 << 40)), ValueError,
     f"the tensor holds too many elements: their count and bytes must stay below 2^{LOG2}"),
    (dict(dtype=(3, 64, 1)), ValueError, "kDLOpaqueHandle elements (code 3) cannot be addressed"),
    (dict(dtype=(99, 32, 1)), ValueError, "unknown DLDataTypeCode 99"),
    (dict(dtype=(2, 0, 1)), ValueError, "invalid dtype: 0 bits, 1 lanes"),
    (dict(dtype=(17, 8, 1)), ValueError, "kDLFloat4_e2m1fn elements have 4 bits, not 8"),
    (dict(address=0), ValueError, "data is NULL for a tensor with elements (6)"),
    (dict(strides=(1,)), ValueError, "1 strides for 2 dimensions"),
    (dict(strides=(1 << 62, 1)), ValueError,
     "stride 4611686018427387904 in dimension 0 is too large: strides in elements and in bytes "
     f"must stay below 2^{LOG2}"),
    (dict(shape=(2,), strides=((1 << (LOG2 - 2)) - 1,)), ValueError,
     f"the strides spread the elements too far: the span in elements and in bytes must stay below 2^{LOG2}"),
    (dict(byte_offset=(1 << LOG2) - 8), ValueError,
     f"byte_offset {(1 << LOG2) - 8} places the last element too far from data: every byte offset must "
     f"stay below 2^{LOG2}"),
    (dict(address=2 ** (LOG2 + 1) - 16, shape=(2,), byte_offset=32), ValueError,
     f"the elements lie outside the address space: data {2 ** (LOG2 + 1) - 16} with byte_offset 32"),
    # Beyond the C types' range: the rule the value breaks (Cython said OverflowError).
    (dict(shape=(1 << 64,)), ValueError,
     f"the tensor holds too many elements: their count and bytes must stay below 2^{LOG2}"),
    (dict(strides=(1 << 64, 1)), ValueError,
     f"stride 18446744073709551616 in dimension 0 is too large: strides in elements and in bytes "
     f"must stay below 2^{LOG2}"),
    (dict(byte_offset=1 << 64), ValueError, f"byte_offset 18446744073709551616 is not below 2^{LOG2}"),
    (dict(byte_offset=1 << LOG2), ValueError, f"byte_offset {1 << LOG2} is not below 2^{LOG2}"),
    # Arguments no tensor has.
    (dict(dtype=3.5), TypeError, "dtype must be a name such as 'float32', a DataType, or a dtype "
                                 "object named by one (a NumPy dtype, say), not 3.5"),
    (dict(dtype=(2, 256, 1)), ValueError,
     "dtype (2, 256, 1) does not fit DLDataType (uint8 code, uint8 bits, uint16 lanes)"),
    (dict(address=-8), ValueError, "address -8 is not a pointer"),
    (dict(address=1 << 64), ValueError, "address 18446744073709551616 is not a pointer"),
    (dict(device=1), TypeError, "device 1 is not a DLPack device: pass (device_type, device_id), such as "
                                "(DLDeviceType.kDLCUDA, 0), an object with __dlpack_device__(), or 'cpu'"),
    (dict(device=(1, 1 << 40)), ValueError, "device (1, 1099511627776) does not fit DLDevice's int32 fields"),
    (dict(byte_offset=-1), ValueError, "byte_offset -1 is negative"),
    (dict(on_stream=5), TypeError, "on_stream must be callable"),
    # Integers only, as operator.index says (Cython truncated floats).
    (dict(shape=(2.0, 3)), TypeError, NOT_AN_INTEGER),
    (dict(strides=(1, 2.0)), TypeError, NOT_AN_INTEGER),
    (dict(address=64.0), TypeError, "address must be an int, not float: pass the data's address as an int: "
                                    "ctypes.addressof(buf) for a ctypes array, p.value for a c_void_p, "
                                    "a.ctypes.data for a NumPy array; or pass a buffer to from_buffer"),
])
def test_from_pointer_checks_arguments_and_keeps_nothing(dl, kwargs, error, message):
    """from_pointer checks what it is given as an import checks a tensor:
    the same exception type and words from both modules."""
    owner = Owner(None)
    base = sys.getrefcount(owner)
    args = dict(address=64, shape=(2, 3), dtype="float32")
    args.update(kwargs)
    with pytest.raises(error) as caught:
        dl.from_pointer(args.pop("address"), args.pop("shape"), args.pop("dtype"), owner=owner, **args)
    assert type(caught.value) is error and str(caught.value) == message
    del caught  # its traceback holds from_pointer's frame
    gc.collect()
    assert sys.getrefcount(owner) == base


def test_an_unknown_dtype_name_lists_the_known_ones(dl):
    with pytest.raises(ValueError) as caught:
        dl.from_pointer(64, (2,), "float31")
    assert str(caught.value) == "unknown dtype name 'float31'; known: " + ", ".join(dl.DTYPE_NAMES)
    with pytest.raises(ValueError, match="unknown dtype name 'float32x0'"):
        dl.from_pointer(64, (2,), "float32x0")


def test_from_pointer_takes_any_device_type(dl):
    """A device type is never a reason to refuse: the tensor is held, never
    read, as an import of it is."""
    for device in [(99, 0), (-1, 3), (2, 1)]:
        t = dl.from_pointer(0x10000, (4,), "float32", device=device)
        assert t.device == device and t.__dlpack_device__() == device
        with pytest.raises(BufferError) as caught:
            t.tobytes()
        assert str(caught.value) == f"memory on device {device} cannot be read from the CPU"


def test_size_zero_may_have_a_null_address(dl):
    t = dl.from_pointer(0, (0, 3), "int8")
    assert np.from_dlpack(t).shape == (0, 3)


def test_every_dtype_name_of_the_release(dl):
    assert "float32" in dl.DTYPE_NAMES and "bool" in dl.DTYPE_NAMES and "bfloat16" in dl.DTYPE_NAMES
    buf = bytearray(16)
    for name in dl.DTYPE_NAMES:
        t = dl.from_pointer(ctypes.addressof(ctypes.c_char.from_buffer(buf)), (1,), name, owner=buf)
        assert t.dtype.name == name
        assert t.dtype == dl.from_pointer(64, (1,), t.dtype).dtype  # a DataType works as well
        code = dl.DLDataTypeCode(t.dtype.code).name
        assert code.lower().startswith("kdl" + name.rstrip("0123456789").split("_")[0][:4].rstrip("0123456789"))
    expected = {"int8": (0, 8), "uint64": (1, 64), "float16": (2, 16), "bfloat16": (4, 16), "complex128": (5, 128),
                "bool": (6, 8)}
    for name, (code, bits) in expected.items():
        assert tuple(dl.from_pointer(64, (1,), name).dtype) == (code, bits, 1)
    if hasattr(dl.DLDataTypeCode, "kDLFloat8_e4m3fn"):  # DLPack >= 1.1
        fp8 = dl.from_pointer(64, (1,), "float8_e4m3fn").dtype
        assert (fp8.code, fp8.bits) == (dl.DLDataTypeCode.kDLFloat8_e4m3fn, 8)
        assert dl.from_pointer(64, (1,), "float4_e2m1fn").dtype.bits == 4


def test_read_only_pointer(dl):
    a = np.arange(3.0)
    t = dl.from_pointer(a.ctypes.data, (3,), "float64", owner=a, readonly=True)
    assert not np.from_dlpack(t).flags.writeable
    with pytest.raises(BufferError):
        t.__dlpack__()  # no legacy export for read-only memory


def test_device_memory_with_a_stream_callback(dl):
    seen = []
    t = dl.from_pointer(0x10000, (4,), "float32", device=(2, 1), on_stream=seen.append)
    assert t.__dlpack_device__() == (2, 1)
    capsule = t.__dlpack__(stream=7, max_version=(1, 0))
    assert seen == [7] and "dltensor_versioned" in repr(capsule)
    held = dl.from_dlpack(capsule, copy=False)  # held as it is, never read
    assert (held.device, held.data_ptr, held.copied) == ((2, 1), 0x10000, False)
    with pytest.raises(BufferError, match="on_copy"):
        t.__dlpack__(dl_device=(1, 0))  # no copy of device memory without the owner's hook
    cpu = dl.from_pointer(64, (1,), "int8")
    with pytest.raises(ValueError, match=_NO_STREAMS_ON_THE_CPU):
        cpu.__dlpack__(stream=1)


# Rule stream_refused, for the schema's streamless device types (the CPU).
_NO_STREAMS_ON_THE_CPU = "^" + re.escape("stream must be None for a tensor on device (1, 0), which has no streams") + "$"


def test_a_stream_is_refused_only_where_the_capsule_has_no_streams(dl):
    assert dl._STREAMLESS == {1}
    pinned = dl.from_pointer(64, (1,), "int8", device=(3, 0))  # kDLCUDAHost: CUDA's streams
    assert "dltensor_versioned" in repr(pinned.__dlpack__(stream=1, max_version=(1, 0)))
    with pytest.raises(ValueError, match=_NO_STREAMS_ON_THE_CPU):
        pinned.__dlpack__(stream=1, dl_device=(1, 0))


# --- from_buffer ---------------------------------------------------------------

def test_from_buffer_bytearray_is_zero_copy_and_held(dl):
    b = bytearray(b"abcd")
    t = dl.from_buffer(b)
    assert (t.shape, t.dtype.name, t.readonly) == ((4,), "uint8", False)
    np.from_dlpack(t)[0] = ord("z")
    assert b == b"zbcd"
    with pytest.raises(BufferError):
        b.append(1)  # exported: cannot be resized under the tensor
    n = np.from_dlpack(t)
    t.close()
    with pytest.raises(BufferError):
        b.append(1)  # NumPy still uses it
    del n
    gc.collect()
    b.append(1)


@pytest.mark.parametrize("make, name, shape", [
    (lambda: array.array("d", [1.0, 2.0, 3.0]), "float64", (3,)),
    (lambda: array.array("h", [1, -2]), "int16", (2,)),
    (lambda: (ctypes.c_int32 * 4)(1, 2, 3, 4), "int32", (4,)),
    (lambda: np.zeros((2, 3), np.complex64), "complex64", (2, 3)),
    (lambda: np.zeros(5, np.bool_), "bool", (5,)),
    (lambda: np.zeros(2, np.float16), "float16", (2,)),
])
def test_from_buffer_formats(dl, make, name, shape):
    obj = make()
    t = dl.from_buffer(obj)
    assert (t.dtype.name, t.shape) == (name, shape)
    np.testing.assert_array_equal(np.from_dlpack(t), np.asarray(obj))


def test_from_buffer_strided_multidimensional(dl):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    v = a[::2, ::-3]
    t = dl.from_buffer(v)
    assert t.shape == (2, 2) and t.strides == (12, -3)
    np.testing.assert_array_equal(np.from_dlpack(t), v)
    np.from_dlpack(t)[1, 1] = -1
    assert v[1, 1] == -1


def test_from_buffer_read_only(dl):
    t = dl.from_buffer(b"xyz")
    assert t.readonly and not np.from_dlpack(t).flags.writeable
    assert dl.from_buffer(bytearray(2), readonly=True).readonly
    with pytest.raises(BufferError):
        dl.from_buffer(b"xyz", readonly=False)


def test_from_buffer_mmap(dl):
    m = mmap.mmap(-1, 16)
    t = dl.from_buffer(m)
    np.from_dlpack(t)[3] = 9
    assert m[3] == 9
    del t
    gc.collect()
    m.close()


@pytest.mark.parametrize("make, match", [
    (lambda: memoryview(b"ab").cast("c"), "format"),
    (lambda: np.zeros(2, dtype=">i4"), "byte order"),
    (lambda: np.zeros(2, dtype=[("a", "i4"), ("b", "i1")]), "format"),
    (lambda: np.lib.stride_tricks.as_strided(np.zeros(8, np.int32), shape=(3,), strides=(6,)), "whole number"),
])
def test_from_buffer_refuses_what_dlpack_cannot_say(dl, make, match):
    with pytest.raises(BufferError, match=match):
        dl.from_buffer(make())


def test_a_refused_buffer_is_given_back(dl):
    chars = array.array("w" if sys.version_info >= (3, 13) else "u", "ab")  # characters: no DLPack dtype
    with pytest.raises(BufferError, match="format"):
        dl.from_buffer(chars)
    chars.append("c")  # an array.array cannot grow while a buffer of it is held


def test_from_buffer_refcounts(dl):
    b = bytearray(8)
    base = sys.getrefcount(b)
    for _ in range(2000):
        np.from_dlpack(dl.from_buffer(b))
    gc.collect()
    assert sys.getrefcount(b) == base


@pytest.mark.parametrize("close_first", [True, False])
def test_a_buffer_view_keeps_the_memory_after_close(dl, close_first):
    """memoryview(t) and np.asarray(t) over the buffer protocol are exports
    too: close() gives the memory back when the last of them is released."""
    if dl.__name__ == "dlpack_ctypes" and sys.version_info < (3, 12):
        pytest.skip("the ctypes module has a buffer on Python 3.12+ (__buffer__)")
    t, owner = pointer(dl, np.arange(4.0))
    view = memoryview(t)
    array = np.asarray(t)
    if close_first:
        t.close()
    del t
    gc.collect()
    assert owner() is not None, "a buffer view still uses the memory"
    assert view.tolist() == array.tolist() == [0.0, 1.0, 2.0, 3.0]
    view.release()
    del view, array
    gc.collect()
    assert owner() is None



@pytest.mark.parametrize("shape, strides, offset, expected", [
    ((4,), (-1,), 3, [3.0, 2.0, 1.0, 0.0]),
    ((2,), (2,), 0, [0.0, 2.0]),
    ((0, 2), (2, 1), 0, []),
    ((2, 2), (-2, 1), 2, [[2.0, 3.0], [0.0, 1.0]]),
])
def test_an_array_interface_view_keeps_the_memory_after_close(dl, shape, strides, offset, expected):
    """np.asarray(t) of a strided or empty tensor goes through
    __array_interface__ in dlpack_ctypes (there is no buffer of it): that
    array keeps the memory after close() as well, and sees the right elements."""
    owner = Owner(np.arange(4.0))
    watch = weakref.ref(owner)
    t = dl.from_pointer(owner.a.ctypes.data, shape, "float64", strides=strides, byte_offset=8 * offset,
                        owner=owner, readonly=True)
    del owner
    a = np.asarray(t)
    t.close()
    del t
    gc.collect()
    assert watch() is not None
    assert a.tolist() == expected and not a.flags.writeable
    del a
    gc.collect()
    assert watch() is None


def test_device_memory_is_never_read_on_the_cpu(dl):
    """A from_pointer tensor on a device (its address is not the CPU's):
    every CPU reader refuses it with a BufferError (NumPy made an array over
    the device address, and the ctypes module's tobytes() read it)."""
    t = dl.from_pointer(0x10000, (4,), "float32", device=(2, 1))
    readers = [np.asarray, lambda t: t.tobytes(), lambda t: t.__array_interface__]
    if dl.__name__ != "dlpack_ctypes" or sys.version_info >= (3, 12):
        readers.append(memoryview)
    for read in readers:
        with pytest.raises(BufferError, match="device"):
            read(t)
