"""A DLPack producer written by hand with ctypes, as a user hands a C
library's buffer to a framework: the managed tensor and the element buffer
come from malloc and the deleter frees both, so a second call of the
deleter is a real double free (glibc aborts). Only ctypes, no dlgen."""
import ctypes
import ctypes.util

libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]


class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32), ("dtype", DType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Managed(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", Deleter), ("flags", ctypes.c_uint64), ("dl_tensor", Tensor),
                # the shape and strides live in the same allocation
                ("dims", ctypes.c_int64 * 8)]


class LegacyManaged(ctypes.Structure):
    """DLPack 0.x's DLManagedTensor (a legacy 'dltensor' capsule)."""
    _fields_ = [("dl_tensor", Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter),
                ("dims", ctypes.c_int64 * 8)]


@Deleter
def free_tensor(address):
    libc.free(Managed.from_address(address).dl_tensor.data)
    libc.free(address)


@Deleter
def free_legacy_tensor(address):
    libc.free(LegacyManaged.from_address(address).dl_tensor.data)
    libc.free(address)


_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(("PyCapsule_GetName", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def capsule_destructor(capsule):
    # The Python specification's destructor: an unconsumed capsule frees its tensor.
    name = _get_name(capsule)
    if name in (b"dltensor_versioned", b"dltensor"):
        m = (Managed if name == b"dltensor_versioned" else LegacyManaged).from_address(_get_pointer(capsule, name))
        m.deleter(ctypes.addressof(m))


class Buffer:
    """float32 values (or dtype's) in a malloc'd buffer, exported as DLPack
    1.x (version, or a legacy capsule to a consumer that asks for no
    max_version) with the layout asked for."""

    def __init__(self, values, shape=None, strides=None, byte_offset=0, version=(1, 1), room=0,
                 dtype=(2, 32, 1)):
        self.values, self.version, self.dtype = list(values), version, dtype
        self.shape = tuple(shape or (len(self.values),))
        self.strides, self.byte_offset, self.room = strides, byte_offset, room

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        size = 4 * len(self.values) + self.byte_offset + self.room
        data = libc.malloc(max(size, 1))
        ctypes.memmove(data + self.byte_offset, (ctypes.c_float * len(self.values))(*self.values),
                       4 * len(self.values))
        legacy = max_version is None
        kind = LegacyManaged if legacy else Managed
        address = libc.malloc(ctypes.sizeof(kind))
        ctypes.memset(address, 0, ctypes.sizeof(kind))
        m = kind.from_address(address)
        if legacy:
            m.deleter = free_legacy_tensor
        else:
            m.major, m.minor = self.version
            m.deleter = free_tensor
        t = m.dl_tensor
        t.data, t.device, t.ndim, t.dtype = data, Device(1, 0), len(self.shape), DType(*self.dtype)
        t.byte_offset = self.byte_offset
        dims = ctypes.cast(ctypes.addressof(m.dims), ctypes.POINTER(ctypes.c_int64))
        strides = self.strides or [1] * len(self.shape)
        if self.strides is None:
            for k in range(len(self.shape) - 2, -1, -1):
                strides[k] = strides[k + 1] * self.shape[k + 1]
        for k, (n, s) in enumerate(zip(self.shape, strides)):
            m.dims[k], m.dims[4 + k] = n, s
        t.shape = dims
        t.strides = ctypes.cast(ctypes.addressof(m.dims) + 32, ctypes.POINTER(ctypes.c_int64))
        name = b"dltensor" if legacy else b"dltensor_versioned"
        return _new(address, name, ctypes.cast(capsule_destructor, ctypes.c_void_p))
