# The import rules of dlgen's docs/rules.md in Python: the checks a consumer
# makes before it touches a foreign tensor, in their order, and the words of
# every refusal. They read the tables the generated declarations give, so that
# a rule changes in one place, the schema. Both modules share this checker:
# dlgen copies it into dlpack_ctypes.py and includes it in dlpack_cython.pyx
# (as dlpack_cython_rules.pxi), where a C fast path accepts what these checks
# accept and leaves every refusal, and its words, to them.
#
# Names this file reads and never defines: the generated declarations' tables
# (dlgen's internal/backend/python/handover.go says what each holds; its test
# keeps this line true, and test_lint.py lints the file with them as builtins):
#   _VERSION _MAX_NDIM _NULLABLE _TYPE_CODES _HOST_READABLE _RULES
# dlgen:checker python-import (docs/rules.md lists every checker)
import math
import struct

# P, the width of a pointer in bits: every element count, byte offset and byte
# extent stays below 2^(P-1), every address (the end of the last element's
# included) below 2^P.
_POINTER_BITS = 8 * struct.calcsize("P")
_LOG2_BOUND = _POINTER_BITS - 1
_BOUND = 1 << _LOG2_BOUND
_ADDRESSES = 1 << _POINTER_BITS
# The version a legacy DLManagedTensor is judged as: older than every
# versioned release.
_LEGACY_VERSION = (0, 0)


def _broken(rule, *args, error=None):
    """The exception of a tensor that breaks rule: the table's exception
    class (or error: the producer APIs raise ValueError) with the rule's
    words, args being its parameters in the order of the table."""
    kind, text, params = _RULES[rule]
    return (error or kind)(text.format_map(dict(zip(params, args, strict=True))))


def _null_allowed(field, version, ndim, empty):
    """Whether the pointer field ("DLTensor.data") may be NULL in a tensor of
    version (major, minor) with ndim dimensions, empty if it has no
    elements. Versions compare as versions: (2, 0) is not older than (1, 2)."""
    when, changed, before = _NULLABLE[field]
    if changed is not None and version < changed:
        when = before
    return (when == "always" or (when == "ndim_zero" and ndim == 0)
            or (when == "no_elements" and empty))


def _check_version(major, minor):
    """The first check of a versioned tensor: nothing else is read when it
    fails."""
    if major != _VERSION[0]:
        raise _broken("version_major", major, minor, *_VERSION)


def _check_pointers(version, ndim, shape_null, strides_null, error=None):
    """What a consumer checks before it reads shape and strides: ndim, and
    whether the pointers may be NULL in a tensor of version. error: see
    _broken."""
    if not 0 <= ndim <= _MAX_NDIM:
        raise _broken("ndim_range", ndim, _MAX_NDIM, error=error)
    if shape_null and not _null_allowed("DLTensor.shape", version, ndim, False):
        raise _broken("shape_null", ndim, error=error)
    if strides_null and not _null_allowed("DLTensor.strides", version, ndim, False):
        since = _NULLABLE["DLTensor.strides"][1] or (0, 0)
        raise _broken("strides_null", ndim, *version, *since, error=error)


def _check_layout(version, shape, strides, code, bits, lanes, byte_offset, data, padded,
                  error=None):
    """The checks that follow the pointers', in their order, on a tensor of
    version (its shape and strides as sequences of ints, strides in elements;
    for NULL strides, the row-major ones) whose elements are packed unless
    padded. Integers of any size are judged exactly. error: see _broken."""
    ndim = len(shape)
    if ndim > _MAX_NDIM:
        raise _broken("ndim_range", ndim, _MAX_NDIM, error=error)
    if len(strides) != ndim:
        raise _broken("strides_count", len(strides), ndim, error=error)
    facts = _TYPE_CODES.get(code)
    if facts is None:
        raise _broken("dtype_unknown", code, error=error)
    name, opaque, fixed = facts
    if opaque:
        raise _broken("dtype_opaque", code, name, error=error)
    if not bits or not lanes:
        raise _broken("dtype_zero", bits, lanes, error=error)
    if fixed and bits != fixed:
        raise _broken("dtype_bits", code, name, bits, fixed, error=error)
    for dim, extent in enumerate(shape):
        if extent < 0:
            raise _broken("shape_negative", extent, dim, error=error)
    width = bits * lanes
    packed = width < 8 and not padded
    item = (width + 7) >> 3

    def nbytes(n):  # the bytes n consecutive elements occupy
        return (n * width + 7) >> 3 if packed else n * item

    def fits(n):
        return n < _BOUND and nbytes(n) < _BOUND

    if byte_offset >= _BOUND:
        raise _broken("byte_offset_limit", byte_offset, _LOG2_BOUND, error=error)
    # Every 0 extent counts as 1: the verdict never depends on where a 0 sits.
    if not fits(math.prod(max(extent, 1) for extent in shape)):
        raise _broken("size_limit", _LOG2_BOUND, error=error)
    for dim, stride in enumerate(strides):
        if not fits(abs(stride)):
            raise _broken("stride_limit", stride, dim, _LOG2_BOUND, error=error)
    count = math.prod(shape)
    if count:  # how far the elements reach below the first one and above it
        dims = list(zip(shape, strides, strict=True))
        low = sum((extent - 1) * -stride for extent, stride in dims if stride < 0)
        high = sum((extent - 1) * stride for extent, stride in dims if stride > 0)
        if not fits(low + high + 1):
            raise _broken("span_limit", _LOG2_BOUND, error=error)
        end = byte_offset + nbytes(high + 1)
        if end >= _BOUND:
            raise _broken("offset_limit", byte_offset, _LOG2_BOUND, error=error)
    if not data and not _null_allowed("DLTensor.data", version, ndim, count == 0):
        raise _broken("data_null", count, error=error)
    if count and (data + byte_offset - nbytes(low) < 0 or data + end >= _ADDRESSES):
        raise _broken("address_limit", data, byte_offset, error=error)


def _contiguous_strides(shape):
    """Row-major strides, in elements, of shape (what NULL strides meant)."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _check_host_readable(device_type, device_id):
    """Before the CPU reads a tensor's memory."""
    if device_type not in _HOST_READABLE:
        raise _broken("device_unreadable", device_type, device_id)
