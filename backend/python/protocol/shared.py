# The rules of the Python DLPack protocol that both generated modules share,
# word for word: DataType and Device, the __dlpack__ keyword rules, the keyword
# negotiation of from_dlpack, stream and copy rules, sizes of sub-byte elements,
# dtype names and the argument checks of from_pointer and from_buffer.
#
# dlgen copies it into dlpack_ctypes.py and includes it in dlpack_cython.pyx
# (as dlpack_cython_shared.pxi, which Cython compiles), after the generated
# declarations it reads (dlgen's backend/python/handover.go lists them) and
# before the module's own part, whose Tensor, from_dlpack and _private_copy
# it calls.
import datetime
import operator
import re
import sys
import typing


class DataType(typing.NamedTuple):
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


class Device(typing.NamedTuple):
    """A device: DLDeviceType and index."""

    device_type: int
    device_id: int


_CPU = Device(int(DLDeviceType.kDLCPU), 0)
# Devices whose memory the CPU can read directly. A tensor on any other
# device type, of this release or a newer one, is held and handed on: its
# data is never read.
_HOST_ACCESSIBLE = frozenset({int(DLDeviceType.kDLCPU), int(DLDeviceType.kDLCUDAHost),
                              int(DLDeviceType.kDLROCMHost), int(DLDeviceType.kDLCUDAManaged)})
# The stream stream=None stands for where the array API's streams are
# integers: CUDA's legacy default stream (1), ROCm's default stream (0).
# Elsewhere None asks for no synchronisation (oneAPI, whose streams are SYCL
# queues) or is the only stream there is.
_DEFAULT_STREAM = {int(DLDeviceType.kDLCUDA): 1, int(DLDeviceType.kDLCUDAHost): 1,
                   int(DLDeviceType.kDLCUDAManaged): 1, int(DLDeviceType.kDLROCM): 0,
                   int(DLDeviceType.kDLROCMHost): 0}
# An import's stream as Tensor._stream keeps it, when the consumer gave none.
# Tensors over memory a framework owns keep None there.
_NO_STREAM = (None,)
_MAX_NDIM = 64
# np.asarray(t) and memoryview(t) on an element type that neither the buffer
# protocol nor NumPy's array interface can describe (bfloat16, float8/6/4,
# sub-byte integers, several lanes): a BufferError, never a silent 0-d
# object array.
_NO_BUFFER = ("dtype %r has no buffer-protocol or NumPy equivalent: read its bytes with "
              "tobytes() (with ml_dtypes: np.frombuffer(t.tobytes(), ml_dtypes.bfloat16), ...)")
_MAX_VERSION = (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION)
_CapsuleType = type(datetime.datetime_CAPI)  # PyCapsule, which Python does not name


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
    (versioned, flags, target) of the capsule to make. target is None to
    export the tensor as it is, else the Device a copy must be made on (for
    copy=True, or a dl_device the tensor cannot be handed to as it is);
    flags is then IS_COPIED, else READ_ONLY for read-only data, or 0; plus
    IS_SUBBYTE_TYPE_PADDED for padded sub-byte elements. The CPU has no
    streams: a stream for a capsule on the CPU is a ValueError."""
    target = device
    if dl_device is not None:
        if not isinstance(dl_device, tuple) or len(dl_device) != 2:
            raise TypeError("dl_device must be a (device_type, device_id) tuple")
        target = Device(*dl_device)
    if stream is not None and target[0] == _CPU[0]:
        raise ValueError("stream must be None for a CPU tensor")
    here = target == device or (target == _CPU and device[0] in _HOST_ACCESSIBLE)
    if not here and copy is False:
        raise BufferError(f"a tensor on device {tuple(device)!r} cannot be exported to device "
                          f"{tuple(target)!r} without a copy, and copy=False was asked")
    versioned = max_version is not None and max_version[0] >= 1
    if not versioned and readonly:
        raise BufferError("a read-only tensor cannot be exported as an unversioned capsule, "
                          "which has no read-only flag")
    if padded and not versioned:
        raise BufferError("padded sub-byte elements cannot be exported as an unversioned capsule, "
                          "which has no flag to say so")
    flags = _SUBBYTE_PADDED if padded else 0
    if copy or not here:
        return versioned, flags | DLPACK_FLAG_BITMASK_IS_COPIED, target
    return versioned, flags | (DLPACK_FLAG_BITMASK_READ_ONLY if readonly else 0), None


def _check_stream(device, stream, imported):
    """Before an imported tensor is handed on to a consumer on stream: its
    data is ready for work on the stream it was imported with (the 1-tuple
    imported), and this module has no device runtime to make another stream
    wait for that one. So the consumer's stream must be the same, or ask for
    no synchronisation (-1; None where None means none); else BufferError,
    never a silent race."""
    if device[0] == _CPU[0] or (type(stream) is int and stream == -1):
        return
    default = _DEFAULT_STREAM.get(device[0])
    if stream is None and default is None:
        return
    want = default if stream is None else stream
    have = default if imported[0] is None else imported[0]
    if want is have or (type(want) is type(have) and want == have):
        return
    raise BufferError(f"the tensor on device {tuple(device)!r} was imported on stream {have!r}, "
                      f"and a consumer on stream {want!r} would race with its producer's work: "
                      f"import it with from_dlpack(x, stream={want!r}), or synchronise and "
                      "pass stream=-1")


def _export_copy(t, on_copy, target, stream):
    """The copy of Tensor t on target that an export needs (copy=True, or a
    dl_device elsewhere): made here from memory the CPU reads, onto the CPU
    or t's own device; else by the owner's on_copy hook (from_pointer), which
    on_copy(target, stream) calls for a Tensor, a capsule or any DLPack
    object holding a new copy on target, ready for work on stream."""
    if t.device[0] in _HOST_ACCESSIBLE and (target == _CPU or target == t.device):
        return _private_copy(t)
    if on_copy is None:
        raise BufferError(f"cannot copy a tensor on device {tuple(t.device)!r} to device "
                          f"{tuple(target)!r}: this module copies only memory the CPU can read, "
                          "and the tensor's owner gave from_pointer no on_copy")
    c = on_copy(target, stream)
    if type(c) is not Tensor:
        c = from_dlpack(c, stream=None if type(c) is _CapsuleType else stream)
    if _on_device(c.device, target) and c.shape == t.shape and c.dtype == t.dtype:
        return c
    c.close()  # not what was asked for: given back now
    if not _on_device(c.device, target):
        raise BufferError(f"on_copy returned a tensor on device {tuple(c.device)!r}, "
                          f"not {tuple(target)!r}")
    raise BufferError(f"on_copy returned a {c.dtype.name} tensor of shape {c.shape!r}, "
                      f"not a {t.dtype.name} one of shape {t.shape!r}")


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


def _placement(device):
    """from_dlpack's device argument: None, or (device_type, device_id) of
    any device type, newer ones included."""
    if device is None:
        return None
    if not isinstance(device, tuple) or len(device) != 2:
        raise TypeError(f"device must be a (device_type, device_id) tuple, not {device!r}")
    return Device(operator.index(device[0]), operator.index(device[1]))


def _check_capsule_stream(stream):
    """A stream goes to a producer; a capsule has been made already."""
    if stream is not None:
        raise ValueError("a stream cannot go with a capsule, whose producer has made it already: "
                         "pass the producer's object")


def _request_capsule(x, copy, device, stream):
    """Asks x.__dlpack__ for a versioned capsule with the consumer's
    keywords, once; on a TypeError (a producer older than max_version), once
    more for a legacy capsule, with the stream alone. from_dlpack checks
    what comes back: a legacy producer cannot honour copy or dl_device."""
    try:
        dlpack = x.__dlpack__
    except AttributeError:
        raise TypeError(f"{type(x).__name__} does not support the DLPack protocol") from None
    kwargs = {"max_version": _MAX_VERSION}
    if stream is not None:
        kwargs["stream"] = stream
    if copy is not None:
        kwargs["copy"] = copy
    if device is not None:
        kwargs["dl_device"] = tuple(device)
    try:
        try:
            return dlpack(**kwargs)
        except TypeError:
            pass
        return dlpack() if stream is None else dlpack(stream=stream)
    except (BufferError, ValueError, NotImplementedError) as e:
        if device is None:
            raise
        raise BufferError(f"the producer cannot give its tensor on device {tuple(device)!r}: "
                          f"{e}") from e


def _on_device(have, want):
    """Whether a tensor on device have is what from_dlpack(device=want)
    asked for: that device, or memory the CPU reads when the CPU was asked."""
    return have == want or (want == _CPU and have[0] in _HOST_ACCESSIBLE)


def _request_managed(x, versioned):
    """to_managed's request: a capsule as it is, else x.__dlpack__, versioned
    if asked for and the producer knows max_version."""
    if not versioned:
        return x.__dlpack__()
    try:
        return x.__dlpack__(max_version=_MAX_VERSION)
    except TypeError:
        return x.__dlpack__()


# --- Producer API: dtype names and argument checks ----------------------------

# Widths for the codes whose names do not carry one (kDLFloat: float16,
# float32, float64); codes such as kDLFloat8_e4m3fn carry theirs.
_WIDTHS = {"int": (8, 16, 32, 64), "uint": (8, 16, 32, 64), "float": (16, 32, 64), "bfloat": (16,),
           "complex": (64, 128), "bcomplex": (32,), "bool": (8,)}


def _dtype_names():
    """Every name a dtype argument accepts, for the codes of this release:
    kDLInt -> int8 ... int64, kDLFloat8_e4m3fn -> float8_e4m3fn, ..."""
    names = {}
    for member in DLDataTypeCode:
        base = member.name[len("kDL"):].lower()
        if base in _WIDTHS:
            for bits in _WIDTHS[base]:
                names[base if base == "bool" else base + str(bits)] = DataType(int(member), bits, 1)
        else:
            width = re.match(r"[a-z]+(\d+)_", base)
            if width:  # kDLOpaqueHandle has no width and no name
                names[base] = DataType(int(member), int(width.group(1)), 1)
    return names


_DTYPE_BY_NAME = _dtype_names()
_NAMED_CODES = frozenset(dtype.code for dtype in _DTYPE_BY_NAME.values())
_KNOWN_DEVICES = frozenset(int(d) for d in DLDeviceType)
_NAME_BY_DTYPE = {dtype: name for name, dtype in _DTYPE_BY_NAME.items()}
DTYPE_NAMES = tuple(_DTYPE_BY_NAME)


def _data_type(dtype):
    """A dtype argument, a name or a (code, bits, lanes) DataType, checked."""
    if type(dtype) is str:
        found = _DTYPE_BY_NAME.get(dtype)
        if found is None:
            known = ", ".join(DTYPE_NAMES)
            raise ValueError(f"unknown dtype name {dtype!r}; known: {known}")
        return found
    if not isinstance(dtype, tuple) or len(dtype) != 3:
        raise TypeError(f"dtype must be a name such as 'float32' or a DataType, not {dtype!r}")
    code, bits, lanes = (operator.index(v) for v in dtype)
    if code not in _NAMED_CODES:
        raise ValueError(f"unknown or opaque DLDataTypeCode {code}")
    if not 0 < bits < 256 or not 0 < lanes < 65536:
        raise ValueError(f"invalid dtype: {bits} bits, {lanes} lanes")
    return DataType(code, bits, lanes)


def _device_arg(device):
    """A device argument: (device_type, device_id) of a known type."""
    if not isinstance(device, tuple) or len(device) != 2:
        raise TypeError(f"device must be a (device_type, device_id) tuple, not {device!r}")
    device_type, device_id = operator.index(device[0]), operator.index(device[1])
    if device_type not in _KNOWN_DEVICES:
        raise ValueError(f"unknown DLDeviceType {device_type}")
    if not -(1 << 31) <= device_id < 1 << 31:
        raise ValueError(f"device_id {device_id} does not fit int32")
    return Device(device_type, device_id)


# Buffer-protocol formats (struct module syntax) DLPack can carry.
_FORMAT_CODES = dict.fromkeys("bhilqn", int(DLDataTypeCode.kDLInt))
_FORMAT_CODES.update(dict.fromkeys("BHILQN", int(DLDataTypeCode.kDLUInt)))
_FORMAT_CODES.update(dict.fromkeys("efd", int(DLDataTypeCode.kDLFloat)))
_FORMAT_CODES.update({"?": int(DLDataTypeCode.kDLBool), "Zf": int(DLDataTypeCode.kDLComplex),
                      "Zd": int(DLDataTypeCode.kDLComplex)})
_NATIVE_ORDER = "@=<" if sys.byteorder == "little" else "@=>!"


def _format_dtype(fmt, itemsize):
    """The DataType of a buffer's elements, from its format and itemsize."""
    kind = fmt[1:] if fmt[:1] in "@=<>!" else fmt
    if fmt[:1] in "<>!" and fmt[:1] not in _NATIVE_ORDER and itemsize > 1:
        raise BufferError(f"buffer format {fmt!r} is not in this machine's byte order")
    code = _FORMAT_CODES.get(kind)
    if code is None:
        raise BufferError(f"buffer format {fmt!r} has no DLPack dtype")
    return DataType(code, 8 * itemsize, 1)


def _element_strides(byte_strides, itemsize):
    """A buffer's byte strides in elements; a stride that is not a whole
    number of elements cannot be said in DLPack."""
    strides = []
    for s in byte_strides:
        if s % itemsize:
            raise BufferError(f"stride of {s} bytes is not a whole number of "
                              f"{itemsize}-byte elements")
        strides.append(s // itemsize)
    return tuple(strides)
