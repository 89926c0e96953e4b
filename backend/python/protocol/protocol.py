# The rules of the Python DLPack protocol, shared word for word by both
# generated modules: dlgen places this code in dlpack_ctypes.py and in
# dlpack_cython.pyx (which Cython compiles), after the generated declarations
# it uses (DLDeviceType, DLPACK_MAJOR_VERSION, the flag constants, and
# _SUBBYTE_PADDED: the padded flag, or 0 in releases without it). Its import
# lines join the module's import block; the rest is copied verbatim.
from typing import NamedTuple

__all__ += ["DataType", "Device"]


class DataType(NamedTuple):
    """An element type: DLDataTypeCode, bits per lane, lanes."""

    code: int
    bits: int
    lanes: int

    @property
    def itemsize(self):
        """Bytes one element occupies when elements are padded to whole bytes."""
        return (self.bits * self.lanes + 7) // 8

    @property
    def name(self):
        """"float32", "bfloat16", "float8_e4m3fn", ... (every name a dtype
        argument accepts); "code:bits:lanes" for a type without one."""
        return _NAME_BY_DTYPE.get(self) or "{}:{}:{}".format(*self)


class Device(NamedTuple):
    """A device: DLDeviceType and index."""

    device_type: int
    device_id: int


class _Inaccessible(BufferError):
    """The tensor lives where the CPU cannot read it."""


_CPU = Device(int(DLDeviceType.kDLCPU), 0)
# Devices whose memory the CPU can read directly.
_HOST_ACCESSIBLE = frozenset({int(DLDeviceType.kDLCPU), int(DLDeviceType.kDLCUDAHost),
                              int(DLDeviceType.kDLROCMHost), int(DLDeviceType.kDLCUDAManaged)})
_MAX_NDIM = 64
# np.asarray(t) and memoryview(t) on an element type that neither the buffer
# protocol nor NumPy's array interface can describe (bfloat16, float8/6/4,
# sub-byte integers, several lanes): a BufferError, never a silent 0-d
# object array.
_NO_BUFFER = ("dtype %r has no buffer-protocol or NumPy equivalent: read its bytes with "
              "tobytes() (with ml_dtypes: np.frombuffer(t.tobytes(), ml_dtypes.bfloat16), ...)")
_MAX_VERSION = (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION)


def _nbytes(size, bits, lanes, padded):
    """Bytes that size elements of bits x lanes occupy. Sub-byte elements
    (float4, float6, int4, ...) are packed, as DLPack says, unless the
    producer set DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: then each takes
    whole bytes, like every other element."""
    width = bits * lanes
    if padded or width % 8 == 0:
        return size * ((width + 7) // 8)
    return (size * width + 7) // 8


def _export_flags(device, readonly, padded, stream, max_version, dl_device, copy):
    """The __dlpack__ keyword rules for a tensor on device: returns
    (versioned, flags) of the capsule to make. flags is IS_COPIED when a
    private copy must be exported, READ_ONLY for read-only data, else 0,
    plus IS_SUBBYTE_TYPE_PADDED for padded sub-byte elements. A stream is
    for devices that have streams; the tensor's on_stream callback, if any,
    honours it."""
    if stream is not None and device[0] in _HOST_ACCESSIBLE:
        raise ValueError("stream must be None for a CPU tensor")
    if dl_device is not None:
        if type(dl_device) is not tuple or len(dl_device) != 2:
            raise TypeError("dl_device must be a (device_type, device_id) tuple")
        if dl_device != device and (dl_device != _CPU or device[0] not in _HOST_ACCESSIBLE):
            raise BufferError(f"cannot export to device {dl_device!r}")
    versioned = max_version is not None and max_version[0] >= 1
    if not versioned and readonly:
        raise BufferError("a read-only tensor cannot be exported as an unversioned capsule, "
                          "which has no read-only flag")
    if padded and not versioned:
        raise BufferError("padded sub-byte elements cannot be exported as an unversioned capsule, "
                          "which has no flag to say so")
    flags = _SUBBYTE_PADDED if padded else 0
    if copy:
        return versioned, flags | DLPACK_FLAG_BITMASK_IS_COPIED
    return versioned, flags | (DLPACK_FLAG_BITMASK_READ_ONLY if readonly else 0)


def _readonly_import(flags, readonly):
    """Whether an import is read-only: readonly=None takes the producer's
    READ_ONLY flag (a legacy tensor has none: writable, as PyTorch, CuPy,
    TensorFlow and MXNet import it; NumPy alone says read-only), True makes
    it read-only, False refuses a read-only tensor."""
    flagged = bool(flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    if readonly is None or readonly:
        return flagged or bool(readonly)
    if flagged:
        raise BufferError("the producer marked the tensor read-only, and readonly=False was asked")
    return False


def _check_placement(device):
    """from_dlpack(device=...) may only name the CPU."""
    if device is not None and tuple(device) != _CPU:
        raise BufferError(f"from_dlpack can only place tensors on the CPU, not {device!r}")


def _request_capsule(x, copy, device):
    """Asks x.__dlpack__ for a versioned capsule with the consumer's
    keywords, and for a plain one from producers that do not know them."""
    try:
        dlpack = x.__dlpack__
    except AttributeError:
        raise TypeError(f"{type(x).__name__} does not support the DLPack protocol") from None
    try:
        if copy is None and device is None:
            return dlpack(max_version=_MAX_VERSION)
        kwargs = {"max_version": _MAX_VERSION}
        if copy is not None:
            kwargs["copy"] = copy
        if device is not None:
            kwargs["dl_device"] = tuple(device)
        return dlpack(**kwargs)
    except TypeError:
        return dlpack()


def _request_host_copy(x, copy):
    """Asks x's producer for its tensor on the CPU (the array API's
    dl_device): the tensor it gave first lives where the CPU cannot read."""
    kwargs = {"max_version": _MAX_VERSION, "dl_device": _CPU}
    if copy is not None:
        kwargs["copy"] = copy
    try:
        return x.__dlpack__(**kwargs)
    except (TypeError, BufferError, ValueError, NotImplementedError) as e:
        raise BufferError("the tensor lives on a device the CPU cannot read, and its producer "
                          f"cannot copy it to the CPU: {e}") from e


def _request_managed(x, versioned):
    """to_managed's request: a capsule as it is, else x.__dlpack__, versioned
    if asked for and the producer knows max_version."""
    if not versioned:
        return x.__dlpack__()
    try:
        return x.__dlpack__(max_version=_MAX_VERSION)
    except TypeError:
        return x.__dlpack__()
