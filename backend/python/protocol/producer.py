# The producer API's rules, shared word for word by both generated modules:
# dtype names derived from this release's DLDataTypeCode enum, and the
# argument checks of from_pointer and from_buffer. dlgen places it after
# protocol.py. Its import lines join the module's import block.
import operator
import re
import sys

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
__all__ += ["DTYPE_NAMES"]


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
