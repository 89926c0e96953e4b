"""Element types NumPy and the buffer protocol do not have: bfloat16, float8,
float6, float4, sub-byte integers, several lanes. tobytes() reads all of
them in both modules; np.asarray and memoryview refuse them with a clear
BufferError; sub-byte elements are packed unless the producer flags them
padded, and the flag travels on."""
import ctypes
import sys

import numpy as np
import pytest

import dlpack_ctypes as ct

C = ct.DLDataTypeCode
EXOTIC = {  # name: (code, bits, lanes)
    "bfloat16": (C.kDLBfloat, 16, 1),
    "float8_e4m3fn": (C.kDLFloat8_e4m3fn, 8, 1),
    "float8_e5m2": (C.kDLFloat8_e5m2, 8, 1),
    "float8_e8m0fnu": (C.kDLFloat8_e8m0fnu, 8, 1),
    "float6_e2m3fn": (C.kDLFloat6_e2m3fn, 6, 1),
    "float4_e2m1fn": (C.kDLFloat4_e2m1fn, 4, 1),
    "int4": (C.kDLInt, 4, 1),
    "uint1": (C.kDLUInt, 1, 1),
    "float32x4": (C.kDLFloat, 32, 4),
}
PADDED = ct.DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED


def filled(producer, n=3, **kwargs):
    """A capsule of n elements over storage holding bytes 0, 1, 2, ..."""
    cap = producer.capsule(shape=(n,), strides=(1,), **kwargs)
    storage = producer._keep[-1][0]
    ctypes.memmove(storage, bytes(range(64)), 64)
    return cap, bytes(storage)


@pytest.mark.parametrize("name", list(EXOTIC))
def test_tobytes_reads_every_dtype(dl, producer, name):
    code, bits, lanes = EXOTIC[name]
    cap, raw = filled(producer, code=code, bits=bits, lanes=lanes)
    t = dl.from_dlpack(cap)
    packed = (3 * bits * lanes + 7) // 8  # sub-byte elements are packed by default
    assert t.nbytes == packed
    assert t.tobytes() == raw[:packed]
    c = dl.from_dlpack(t, copy=True)
    assert c.copied and c.tobytes() == raw[:packed]


@pytest.mark.parametrize("name", list(EXOTIC))
def test_numpy_and_memoryview_refuse_what_they_cannot_describe(dl, producer, name):
    code, bits, lanes = EXOTIC[name]
    t = dl.from_dlpack(filled(producer, code=code, bits=bits, lanes=lanes)[0])
    with pytest.raises(BufferError, match="no buffer-protocol or NumPy equivalent"):
        np.asarray(t)  # not a 0-d object array
    if dl.__name__ == "dlpack_cython" or sys.version_info >= (3, 12):
        with pytest.raises(BufferError, match="no buffer-protocol or NumPy equivalent"):
            memoryview(t)


@pytest.mark.parametrize("name", ["float4_e2m1fn", "float6_e2m3fn", "int4"])
def test_padded_subbyte_elements_take_whole_bytes(dl, producer, name):
    code, bits, _ = EXOTIC[name]
    t = dl.from_dlpack(filled(producer, n=5, code=code, bits=bits, flags=PADDED)[0])
    assert t.nbytes == 5
    assert t.tobytes() == bytes(range(5))


def test_padded_flag_travels_on_export(dl, producer):
    t = dl.from_dlpack(filled(producer, n=5, code=C.kDLFloat4_e2m1fn, bits=4, flags=PADDED)[0])
    address, versioned = dl.to_managed(t)
    m = ct.DLManagedTensorVersioned.from_address(address)
    assert versioned and m.flags & PADDED
    back = dl.from_managed(address)
    assert back.nbytes == 5
    again = dl.from_dlpack(t)  # dlpack_cython: through its own C exchange API table
    assert again.nbytes == 5 and again.tobytes() == t.tobytes()
    with pytest.raises(BufferError, match="padded sub-byte"):
        t.__dlpack__()  # an unversioned capsule cannot say "padded"
    packed = dl.from_dlpack(filled(producer, code=C.kDLFloat4_e2m1fn, bits=4)[0])
    address, _ = dl.to_managed(packed)
    assert not ct.DLManagedTensorVersioned.from_address(address).flags & PADDED
    dl.from_managed(address).close()


def test_strided_subbyte_copies(dl, producer):
    cap = producer.capsule(shape=(3,), strides=(2,), code=C.kDLFloat4_e2m1fn, bits=4)
    t = dl.from_dlpack(cap)
    with pytest.raises(BufferError, match="contiguous"):
        t.tobytes()  # packed elements have no byte address of their own
    cap = producer.capsule(shape=(3,), strides=(2,), code=C.kDLFloat4_e2m1fn, bits=4, flags=PADDED)
    ctypes.memmove(producer._keep[-1][0], bytes(range(64)), 64)
    assert dl.from_dlpack(cap).tobytes() == bytes([0, 2, 4])
