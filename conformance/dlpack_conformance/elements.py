"""The elements of a tensor as the kit reads and writes them: each type code
and width decoded from its bytes (the release's small floats by the schema's
float facts, sub-byte types packed as the flags say), a tensor's values read
through its shape and strides as nested lists, and the comparison of two
such lists. It reads memory only through C functions bound here, before any
library under test loads; reference.py imports what it uses from here."""

import ctypes
import math
import struct

from . import dlpack_ctypes as dl

# How the kit reads and writes memory, bound now, before the library under
# test loads: ctypes.string_at and ctypes.memmove are attributes of the
# ctypes module every library shares (and string_at looks its C function up
# in that module at each call), so a library that replaced them would change
# what the kit reads; ctypes.cast, a Python function calling one, too.
_string_at = ctypes.PYFUNCTYPE(ctypes.py_object, *ctypes._string_at.argtypes)(ctypes._string_at_addr)
_memmove = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)(
    ctypes._memmove_addr
)


# ---- reading elements -------------------------------------------------------

_FORMATS = {
    (0, 8): "b",
    (0, 16): "h",
    (0, 32): "i",
    (0, 64): "q",
    (1, 8): "B",
    (1, 16): "H",
    (1, 32): "I",
    (1, 64): "Q",
    (2, 16): "e",
    (2, 32): "f",
    (2, 64): "d",
    (6, 8): "?",
}


def _decoder(dtype):
    code, bits, lanes = dtype
    if lanes != 1:
        return None, 0
    if (code, bits) in _FORMATS:
        fmt = struct.Struct("<" + _FORMATS[(code, bits)])
        if code == 6:
            return (lambda b: b[0] != 0), bits // 8
        return (lambda b: fmt.unpack(b)[0]), bits // 8
    if (code, bits) == (4, 16):
        return (lambda b: struct.unpack("<f", b"\0\0" + b)[0]), 2
    if code == 5 and bits in (64, 128):
        half = struct.Struct("<" + ("f" if bits == 64 else "d"))
        n = bits // 16
        return (lambda b: complex(half.unpack(b[:n])[0], half.unpack(b[n:])[0])), bits // 8
    if _minifloat_width(code) == bits == 8:
        return (lambda b: minifloat(code, b[0])), 1
    return None, 0


# ---- float8, float6, float4 --------------------------------------------------
# The small floats of the release, by type code, as the schema's float facts
# give them (the reference module's _FLOAT_FORMATS): (exponent bits, mantissa
# bits, exponent bias, what the special patterns mean). "ieee": an all-ones
# exponent is infinity (mantissa 0) or NaN; "fn": finite, all ones is NaN;
# "fnuz": finite, unsigned zero, the pattern of negative zero is NaN;
# "finite": every pattern is a number; "e8m0": unsigned, exponent only, all
# ones is NaN.
MINIFLOAT_CODES = frozenset(dl._FLOAT_FORMATS)
SUBBYTE_PADDED = getattr(dl, "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED", 0)


def _minifloat_width(code):
    """The bits of one element of a small-float code, or None."""
    if code not in MINIFLOAT_CODES:
        return None
    e, m, _, kind = dl._FLOAT_FORMATS[code]
    return e + m + (kind != "e8m0")


def minifloat(code, word):
    """The value of the small float of type code whose bits are word."""
    e, m, bias, kind = dl._FLOAT_FORMATS[code]
    if kind == "e8m0":
        return math.nan if word == 0xFF else math.ldexp(1.0, word - bias)
    sign = -1.0 if word >> (e + m) & 1 else 1.0
    exponent, mantissa = word >> m & ((1 << e) - 1), word & ((1 << m) - 1)
    top = (1 << e) - 1
    if kind == "fnuz" and word == 1 << (e + m):
        return math.nan
    if kind == "ieee" and exponent == top:
        return sign * math.inf if mantissa == 0 else math.nan
    if kind == "fn" and exponent == top and mantissa == (1 << m) - 1:
        return math.nan
    if exponent == 0:
        return sign * math.ldexp(mantissa, 1 - bias - m)
    return sign * math.ldexp((1 << m) + mantissa, exponent - bias - m)


_MINIFLOAT_WORDS = {}


def minifloat_word(code, value):
    """The bits of value as the small float of type code (exact values only:
    the kit writes values every format holds)."""
    words = _MINIFLOAT_WORDS.get(code)
    if words is None:
        words = {}
        for word in range(1 << _minifloat_width(code)):
            v = minifloat(code, word)
            if not math.isnan(v):
                words.setdefault(v, word)  # +0 before -0: 0.0 == -0.0
        _MINIFLOAT_WORDS[code] = words
    if value not in words:
        raise ValueError(f"{value!r} is not a value of type code {code}")
    return words[value]


# Values every small float holds exactly (float4_e2m1fn's, which the wider
# formats all have); float8_e8m0fnu holds powers of two only.
_SMALL_VALUES = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0, 0.0)


def small_float(code, i):
    """The i-th of distinct values (they repeat after 15; 24 for e8m0fnu)
    that the small float of type code holds exactly."""
    if dl._FLOAT_FORMATS[code][3] == "e8m0":
        return math.ldexp(1.0, i % 24 - 12)
    return _SMALL_VALUES[i % len(_SMALL_VALUES)]


def _flat(nested):
    if not isinstance(nested, list):
        return [nested]
    return [v for item in nested for v in _flat(item)]


def subbyte(dtype):
    """Whether elements of dtype are narrower than a byte (float4, float6)."""
    return dtype[1] * dtype[2] < 8


def _subbyte_word(base, index, bits, padded, order):
    """The bits of element index (counted in elements from base): one a byte
    when padded (in its low bits), else packed one after the other, from the
    low bits of each byte up ("lsb") or from the high bits down ("msb")."""
    if padded:
        return _string_at(base + index, 1)[0] & ((1 << bits) - 1)
    word = 0
    for k in range(bits):
        at = index * bits + k
        byte = _string_at(base + at // 8, 1)[0]
        shift = at % 8 if order == "lsb" else 7 - at % 8
        bit = byte >> shift & 1
        word |= bit << (k if order == "lsb" else bits - 1 - k)
    return word


def _put_subbyte(base, index, bits, word, padded):
    """Writes element index as _subbyte_word reads it ("lsb" when packed)."""
    if padded:
        _memmove(base + index, bytes([word]), 1)
        return
    for k in range(bits):
        at = index * bits + k
        cell = (ctypes.c_ubyte * 1).from_address(base + at // 8)
        mask = 1 << (at % 8)
        cell[0] = cell[0] | mask if word >> k & 1 else cell[0] & ~mask & 0xFF


def _subbyte_bits(code, bits, value):
    """The bits of a sub-byte element: a small float's word, or an integer's
    (bool, int4, uint2, ...) low bits, two's complement."""
    if code in MINIFLOAT_CODES:
        return minifloat_word(code, value)
    return int(value) & ((1 << bits) - 1)


def decodable(dtype):
    """Whether the kit can read elements of dtype as Python values."""
    if dtype[2] == 1 and _minifloat_width(dtype[0]) == dtype[1]:
        return True
    return _decoder(dtype)[0] is not None


def _offsets(shape, strides):
    """Each element's offset in elements (nested lists), for shape and
    strides (NULL strides: row-major)."""
    strides = row_major(shape) if strides is None else strides

    def at(dim, offset):
        if dim == len(shape):
            return offset
        return [at(dim + 1, offset + i * strides[dim]) for i in range(shape[dim])]

    return at(0, 0)


def map_nested(f, nested):
    """f of every leaf of nested lists, nested the same."""
    return [map_nested(f, v) for v in nested] if isinstance(nested, list) else f(nested)


def read_elements(data, byte_offset, shape, strides, dtype, flags=0, order="lsb"):
    """Every element, nested as shape, at data + byte_offset + strides. Sub-
    byte elements are packed (in order, "lsb" or "msb" first) unless flags
    says IS_SUBBYTE_TYPE_PADDED: DLPack's default is packed."""
    if math.prod(shape) == 0:
        return _empty(shape)
    if subbyte(dtype) and decodable(dtype):
        code, bits = dtype[0], dtype[1]
        padded = bool(flags & SUBBYTE_PADDED)
        base = data + byte_offset
        return map_nested(
            lambda i: minifloat(code, _subbyte_word(base, i, bits, padded, order)),
            _offsets(shape, strides),
        )
    decode, size = _decoder(dtype)
    if decode is None:
        raise ValueError(f"the kit does not read elements of dtype {dtype}")
    base = data + byte_offset
    return map_nested(lambda i: decode(_string_at(base + i * size, size)), _offsets(shape, strides))


def _empty(shape):
    if not shape:
        return []
    if shape[0] == 0:
        return []
    return [_empty(shape[1:]) for _ in range(shape[0])]


# ---- comparing --------------------------------------------------------------


def same_values(got, want):
    """Whether two nested lists hold the same values (NaN equals NaN)."""
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same_values, got, want))
    if isinstance(want, float) and isinstance(got, float) and math.isnan(want):
        return math.isnan(got)
    return got == want and type(got) is not list


def row_major(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return tuple(strides)
