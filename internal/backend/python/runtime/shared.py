# The rules of the Python DLPack protocol that both generated modules share,
# word for word: DataType and Device, the __dlpack__ keyword rules, the keyword
# negotiation of from_dlpack, stream and copy rules, sizes of sub-byte elements,
# dtype and device arguments, the argument checks of from_pointer and
# from_buffer, and the words of the errors the import rules (rules.py) do not
# cover.
#
# dlgen copies it into dlpack_ctypes.py and includes it in dlpack_cython.pyx
# (as dlpack_cython_shared.pxi, which Cython compiles), after the generated
# declarations it reads (dlgen's internal/backend/python/handover.go lists them) and
# rules.py, and before the module's own part, whose Tensor, from_dlpack and
# _private_copy it calls.
import datetime
import operator
import sys
import typing


class DataType(typing.NamedTuple):
    """An element type: DLDataTypeCode, bits per lane, lanes. It shows as its
    name: "float32", "float32x4" with lanes, "DataType(code=C, bits=B,
    lanes=L)" for a type without one, as every dlgen module shows it."""

    code: int
    bits: int
    lanes: int

    @property
    def itemsize(self):
        """Bytes one element occupies when elements are padded to whole bytes."""
        return (self.bits * self.lanes + 7) // 8

    @property
    def name(self):
        """"float32", "bfloat16", "float8_e4m3fn", "float32x4" (every name a
        dtype argument accepts); "DataType(code=C, bits=B, lanes=L)" for a
        type without one."""
        name = _NAME_BY_CODE_BITS.get((self.code, self.bits)) if self.lanes else None
        if name is None:
            return f"DataType(code={self.code}, bits={self.bits}, lanes={self.lanes})"
        return name if self.lanes == 1 else f"{name}x{self.lanes}"

    def __repr__(self):
        return self.name

    def __dlpack_data_type__(self):
        """(code, bits, lanes): the DLDataType this is, as the dtype exchange
        protocol asks of a dtype object (data-apis/array-api#972, an RFC:
        Paddle and tvm-ffi answer it too)."""
        return (self.code, self.bits, self.lanes)


class Device(typing.NamedTuple):
    """A device: DLDeviceType and index. It shows its type by name, as Go's
    dltensor shows it: Device(device_type=kDLCPU, device_id=0); a type code
    the release does not name shows as its number."""

    device_type: int
    device_id: int

    def __repr__(self):
        kind = DLDeviceType._value2member_map_.get(self.device_type)
        return (f"Device(device_type={self.device_type if kind is None else kind.name}, "
                f"device_id={self.device_id!r})")

    def __dlpack_device__(self):
        """(device_type, device_id), as the device exchange protocol asks of
        a device object (data-apis/array-api#972) and as arrays answer it."""
        return (self.device_type, self.device_id)


_CPU = Device(int(DLDeviceType.kDLCPU), 0)
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
# np.asarray(t) and memoryview(t) on an element type that neither the buffer
# protocol nor NumPy's array interface can describe (bfloat16, float8/6/4,
# sub-byte integers, several lanes): a BufferError, never a silent 0-d
# object array.
_NO_BUFFER = ("dtype %r has no buffer-protocol or NumPy equivalent: read its bytes with "
              "tobytes() (with ml_dtypes: np.frombuffer(t.tobytes(), ml_dtypes.bfloat16), ...)")
# What every property and method that reads a closed Tensor raises (ValueError).
_CLOSED = "the tensor is closed"
# Exports an unversioned capsule cannot carry (BufferError).
_LEGACY_READ_ONLY = ("a read-only tensor cannot be exported as an unversioned capsule, which has "
                     "no read-only flag")
_LEGACY_PADDED = ("padded sub-byte elements cannot be exported as an unversioned capsule, which "
                  "has no flag to say so")
_CapsuleType = type(datetime.datetime_CAPI)  # PyCapsule, which Python does not name


def _nbytes(size, bits, lanes, padded):
    """Bytes that size elements of bits x lanes occupy. Elements narrower
    than a byte (float4, float6, int4, ...) are packed, as DLPack says,
    unless the producer set DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: then
    each takes a byte, as every other element takes whole bytes."""
    width = bits * lanes
    if width < 8 and not padded:
        return (size * width + 7) // 8
    return size * ((width + 7) // 8)


def _not_a_capsule(name):
    """The error of a capsule whose name (bytes, or None) is no DLPack one."""
    if name in (USED_CAPSULE_NAME.encode(), USED_VERSIONED_CAPSULE_NAME.encode()):
        return ValueError("this DLPack capsule was already consumed")
    shown = name.decode("utf-8", "replace") if name is not None else None
    return ValueError(f"a capsule named {shown!r} is not a DLPack capsule "
                      f"({VERSIONED_CAPSULE_NAME!r} or {CAPSULE_NAME!r})")


# dlgen:checker python-stream (docs/rules.md lists every checker)
def _export_flags(device, readonly, padded, stream, max_version, dl_device, copy):
    """The __dlpack__ keyword rules for a tensor on device: returns
    (versioned, flags, target) of the capsule to make. target is None to
    export the tensor as it is, else the Device a copy must be made on (for
    copy=True, or a dl_device the tensor cannot be handed to as it is);
    flags is then IS_COPIED, else READ_ONLY for read-only data, or 0; plus
    IS_SUBBYTE_TYPE_PADDED for padded sub-byte elements. A stream for a
    capsule on a device without streams (_STREAMLESS: the CPU) is a
    ValueError."""
    if max_version is not None and (type(max_version) is not tuple or len(max_version) != 2):
        raise TypeError(f"max_version must be a (major, minor) tuple, not {max_version!r}")
    target = device
    if dl_device is not None:
        if not isinstance(dl_device, tuple) or len(dl_device) != 2:
            raise TypeError("dl_device must be a (device_type, device_id) tuple")
        target = Device(*dl_device)
    if stream is not None and target[0] in _STREAMLESS:
        raise _broken("stream_refused", target[0], target[1])
    here = target == device or (target == _CPU and device[0] in _HOST_READABLE)
    if not here and copy is False:
        raise BufferError(f"a tensor on device {tuple(device)!r} cannot be exported to device "
                          f"{tuple(target)!r} without a copy, and copy=False was asked")
    versioned = max_version is not None and max_version[0] >= 1
    if not versioned and readonly:
        raise BufferError(_LEGACY_READ_ONLY)
    if padded and not versioned:
        raise BufferError(_LEGACY_PADDED)
    flags = _SUBBYTE_PADDED if padded else 0
    if copy or not here:
        return versioned, flags | _IS_COPIED, target
    return versioned, flags | (_READ_ONLY if readonly else 0), None


def _check_stream(device, stream, imported):
    """Before an imported tensor is handed on to a consumer on stream: its
    data is ready for work on the stream it was imported with (the 1-tuple
    imported), and this module has no device runtime to make another stream
    wait for that one. So the consumer's stream must be the same, or ask for
    no synchronisation (-1; None where None means none); else BufferError,
    never a silent race."""
    if device[0] in _STREAMLESS or (type(stream) is int and stream == -1):
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
    if t.device[0] in _HOST_READABLE and (target == _CPU or target == t.device):
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
    device, dtype, shape = c.device, c.dtype, c.shape
    c.close()  # not what was asked for: given back now
    if not _on_device(device, target):
        raise BufferError(f"on_copy returned a tensor on device {tuple(device)!r}, "
                          f"not {tuple(target)!r}")
    raise BufferError(f"on_copy returned a {dtype.name} tensor of shape {shape!r}, "
                      f"not a {t.dtype.name} one of shape {t.shape!r}")


def _readonly_import(flags, readonly):
    """Whether an import is read-only: readonly=None takes the producer's
    READ_ONLY flag (a legacy tensor has none: writable, as PyTorch, CuPy,
    TensorFlow and MXNet import it; NumPy alone says read-only), True makes
    it read-only, False refuses a read-only tensor."""
    flagged = bool(flags & _READ_ONLY)
    if readonly is None or readonly:
        return flagged or bool(readonly)
    if flagged:
        raise BufferError("the producer marked the tensor read-only, and readonly=False was asked")
    return False


def _check_capsule_stream(stream):
    """A stream goes to a producer; a capsule has been made already."""
    if stream is not None:
        raise ValueError("a stream cannot go with a capsule, whose producer has made it already: "
                         "pass the producer's object")


def _dlpack_method(x, caller):
    """x.__dlpack__, or the TypeError that says x is no DLPack object and
    what caller (from_dlpack, to_managed) takes instead."""
    try:
        return x.__dlpack__
    except AttributeError:
        raise TypeError(f"{caller}(x): {type(x).__name__} does not support the DLPack protocol: "
                        "pass an object with __dlpack__() (a NumPy, PyTorch, JAX or CuPy array) or "
                        "a DLPack capsule; from_buffer takes buffer-protocol objects (bytearray, "
                        "array.array, memoryview), and a list needs an array first "
                        "(numpy.asarray(x))") from None


def _request_capsule(x, copy, device, stream):
    """Asks x.__dlpack__ for a versioned capsule with the consumer's
    keywords, once; on a TypeError (a producer older than max_version), once
    more for a legacy capsule, with the stream alone. from_dlpack checks
    what comes back: a legacy producer cannot honour copy or dl_device."""
    dlpack = _dlpack_method(x, "from_dlpack")
    kwargs = {"max_version": _VERSION}
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
    return have == want or (want == _CPU and have[0] in _HOST_READABLE)


def _request_managed(x, versioned):
    """to_managed's request: a capsule as it is, else x.__dlpack__, versioned
    if asked for and the producer knows max_version."""
    dlpack = _dlpack_method(x, "to_managed")
    if not versioned:
        return dlpack()
    try:
        return dlpack(max_version=_VERSION)
    except TypeError:
        return dlpack()


# --- Arguments: devices, dtype names, from_pointer's ------------------------------

_INT32 = 1 << 31
_NO_DEVICE = ("device {!r} is not a DLPack device: pass (device_type, device_id), such as "
              "(DLDeviceType.kDLCUDA, 0), an object with __dlpack_device__(), or 'cpu'")


def _device(device):
    """A device argument as a Device: a (device_type, device_id) tuple of any
    device type, newer ones included; an object that says which DLPack
    device it is (__dlpack_device__(), as arrays do); or the CPU, however a
    framework names it ('cpu', torch.device('cpu'), a JAX CPU device).
    Nothing else is guessed: a torch.device('cuda') may be CUDA or ROCm."""
    if type(device) is not tuple:
        said = getattr(device, "__dlpack_device__", None)
        if said is not None:
            device = said()
        elif ((type(device) is str and device == "cpu") or getattr(device, "type", None) == "cpu"
              or getattr(device, "platform", None) == "cpu"):
            return _CPU
        if not isinstance(device, tuple):
            raise TypeError(_NO_DEVICE.format(device))
    if len(device) != 2:
        raise TypeError(_NO_DEVICE.format(device))
    device_type, device_id = operator.index(device[0]), operator.index(device[1])
    if not -_INT32 <= device_type < _INT32 or not -_INT32 <= device_id < _INT32:
        raise ValueError(f"device {(device_type, device_id)!r} does not fit DLDevice's int32 "
                         "fields")
    return Device(device_type, device_id)


# Each dtype name's code and bits; the name a (code, bits) shows as.
DTYPE_NAMES = tuple(_DTYPES)
_NAME_BY_CODE_BITS = {}
for _name, _code_bits in _DTYPES.items():
    _NAME_BY_CODE_BITS.setdefault(_code_bits, _name)
del _name, _code_bits
_DTYPE_FIELDS = (256, 256, 65536)  # DLDataType's uint8 code, uint8 bits, uint16 lanes
# A NumPy dtype's byteorder when it is not this machine's.
_FOREIGN_ORDER = (">",) if sys.byteorder == "little" else ("<",)


def _parse_dtype(name):
    """The DataType a name stands for: one of DTYPE_NAMES, optionally followed
    by x and a lane count ("float32x4"), as DataType shows it."""
    found = _DTYPES.get(name)
    if found is not None:
        return DataType(found[0], found[1], 1)
    base, x, lanes = name.rpartition("x")
    found = _DTYPES.get(base) if x else None
    if (found is not None and lanes.isascii() and lanes.isdigit() and lanes[0] != "0"
            and int(lanes) < _DTYPE_FIELDS[2]):
        return DataType(found[0], found[1], int(lanes))
    raise _broken("dtype_name", name, ", ".join(DTYPE_NAMES))


def _data_type(dtype):
    """A dtype argument as a DataType: a name of DTYPE_NAMES (with lanes:
    "float32x4"), a DataType or (code, bits, lanes), or anything named by
    such a name: a NumPy dtype (its .name), a type such as numpy.float32
    (its __name__), torch.float32 (its str, module prefix aside). The rules
    of the element type are checked with the tensor's."""
    if type(dtype) is str:
        return _parse_dtype(dtype)
    if isinstance(dtype, tuple):
        if len(dtype) != 3:
            raise TypeError(f"dtype must be (code, bits, lanes), not {dtype!r}")
        fields = tuple(operator.index(v) for v in dtype)
        if not all(0 <= v < limit for v, limit in zip(fields, _DTYPE_FIELDS, strict=True)):
            raise ValueError(f"dtype {fields!r} does not fit DLDataType (uint8 code, uint8 bits, "
                             "uint16 lanes)")
        return DataType(*fields)
    if dtype is None or isinstance(dtype, (int, float, complex, bytes)):
        raise TypeError(f"dtype must be a name such as 'float32', a DataType, or a dtype object "
                        f"named by one (a NumPy dtype, say), not {dtype!r}")
    if getattr(dtype, "byteorder", None) in _FOREIGN_ORDER:
        raise ValueError(f"dtype {dtype!r} is not in this machine's byte order")
    name = getattr(dtype, "name", None)
    if type(name) is not str:
        name = getattr(dtype, "__name__", None)
    if type(name) is not str:
        name = str(dtype).rpartition(".")[2]
    return _parse_dtype(name)


# What from_pointer and from_managed take as an address, when it is no int.
_DATA_ADDRESS = ("the data's address as an int: ctypes.addressof(buf) for a ctypes array, p.value "
                 "for a c_void_p, a.ctypes.data for a NumPy array; or pass a buffer to from_buffer")
_MANAGED_ADDRESS = ("the address of a DLManagedTensorVersioned (a DLManagedTensor with "
                    "versioned=False) as an int, such as to_managed returns")


def _pointer_address(address, wanted):
    """An address argument (from_pointer's, from_managed's) as an int: a
    pointer of this machine. wanted says what to pass instead of a value
    that is no integer."""
    try:
        address = operator.index(address)
    except TypeError:
        shown = "None" if address is None else type(address).__name__
        raise TypeError(f"address must be an int, not {shown}: pass {wanted}") from None
    if not 0 <= address < _ADDRESSES:
        raise ValueError(f"address {address} is not a pointer")
    return address


def _dims_arg(values, name):
    """from_pointer's shape or strides (name) as a tuple of ints."""
    try:
        len(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, not {type(values).__name__}") from None
    return tuple([operator.index(n) for n in values])


def _strides_arg(shape, strides, byte_strides, dtype):
    """from_pointer's strides, in elements, as a tuple of ints, from strides
    (in elements) or byte_strides (in bytes, as NumPy's .strides); None for
    C order. strides that are a contiguous array's byte strides are NumPy's
    .strides passed by mistake: reading them as elements would reach
    itemsize times too far."""
    itemsize = dtype.bits * dtype.lanes // 8
    if byte_strides is not None:
        if strides is not None:
            raise TypeError("pass strides (in elements) or byte_strides (in bytes), not both")
        byte_strides = _dims_arg(byte_strides, "byte_strides")
        if not itemsize or dtype.bits * dtype.lanes % 8:
            raise ValueError(f"byte_strides cannot place {dtype.name} elements, which are not "
                             "whole bytes: pass strides, in elements")
        for s in byte_strides:
            if s % itemsize:
                raise ValueError(f"byte_strides {byte_strides!r}: {s} bytes is not a whole "
                                 f"number of {itemsize}-byte {dtype.name} elements")
        return tuple([s // itemsize for s in byte_strides])
    if strides is None:
        return None
    strides = _dims_arg(strides, "strides")
    if itemsize > 1 and len(strides) == len(shape) and _contiguous_bytes(shape, strides, itemsize):
        elements = tuple([s // itemsize for s in strides])
        raise ValueError(f"strides {strides!r} are a contiguous {dtype.name} array's strides in "
                         "bytes (NumPy's .strides), and strides count elements: pass "
                         f"byte_strides={strides!r}, or strides={elements!r}")
    return strides


def _contiguous_bytes(shape, strides, itemsize):
    """Whether strides are those of C- or Fortran-ordered elements of
    itemsize bytes over shape, counted in bytes, in some dimension longer
    than 1 (only such dimensions have a stride that matters)."""
    if 0 in shape or all(n == 1 for n in shape):
        return False
    return (_packed_steps(shape[::-1], strides[::-1], itemsize)
            or _packed_steps(shape, strides, itemsize))


def _packed_steps(shape, strides, step):
    """Whether each dimension longer than 1 steps over all before it, from
    step bytes for the first."""
    for n, s in zip(shape, strides, strict=True):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def _byte_offset(byte_offset):
    """from_pointer's byte_offset as an int; the rules bound it above."""
    byte_offset = operator.index(byte_offset)
    if byte_offset < 0:
        raise ValueError(f"byte_offset {byte_offset} is negative")
    return byte_offset


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
