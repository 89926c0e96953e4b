"""pyarray: a pure-Python array type over libfill (ctypes), speaking DLPack
both ways through the vendored dlpack_ctypes module.

    a = Array.ramp((2, 3))           # libfill allocates and fills
    np.from_dlpack(a)                # zero-copy into NumPy, PyTorch, JAX, ...
    b = Array.from_dlpack(torch_t)   # zero-copy from any DLPack producer
"""
import ctypes
import math
import os

from ._vendor.python import dlpack_ctypes as dl  # vendored: dlgen -python-package fillarray._vendor.python

lib = ctypes.CDLL(os.environ.get("LIBFILL", os.path.join(os.path.dirname(__file__), "libfill.so")))
lib.fill_alloc.restype = ctypes.c_void_p
lib.fill_alloc.argtypes = [ctypes.c_int64]
lib.fill_free.argtypes = [ctypes.c_void_p]
lib.fill_ramp.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_float]
lib.fill_sum.restype = ctypes.c_double
lib.fill_sum.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
lib.fill_live.restype = ctypes.c_int64


def live_buffers():
    """How many libfill buffers are allocated now."""
    return lib.fill_live()


class Memory:
    """A libfill buffer, freed when the last holder lets go."""

    def __init__(self, n):
        self.address = lib.fill_alloc(n)
        if not self.address:
            raise MemoryError

    def __del__(self):
        lib.fill_free(self.address)


class Array:
    """A float32 array: an address, a shape, strides (elements) and the
    object that keeps the memory alive (a Memory, or a dlpack Tensor)."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.strides = tuple(math.prod(self.shape[i + 1:]) for i in range(len(self.shape)))
        self.memory = Memory(math.prod(self.shape))
        self.address = self.memory.address
        self.readonly = False

    @classmethod
    def ramp(cls, shape, start=0.0, step=1.0):
        a = cls(shape)
        lib.fill_ramp(a.address, math.prod(a.shape), start, step)
        return a

    def sum(self):
        """libfill reads the memory, whoever wrote it (1-d arrays)."""
        return lib.fill_sum(self.address, self.shape[0], self.strides[0])

    # --- DLPack producer: 6 lines ---
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        t = dl.from_pointer(self.address, self.shape, "float32", strides=self.strides, owner=self.memory,
                            readonly=self.readonly)
        return t.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return (dl.DLDeviceType.kDLCPU, 0)

    # --- DLPack consumer: 9 lines ---
    @classmethod
    def from_dlpack(cls, x, /, *, copy=None):
        t = dl.from_dlpack(x, copy=copy)  # validated; t owns the producer's tensor
        if t.dtype.name != "float32":
            raise TypeError("Array holds float32, not %s" % t.dtype.name)
        a = cls.__new__(cls)
        a.memory = t  # the producer's memory lives as long as a (and a's own exports)
        a.address, a.shape, a.strides, a.readonly = t.data_ptr, t.shape, t.strides, t.readonly
        return a
    # --- end of DLPack ---
