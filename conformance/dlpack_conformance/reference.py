"""The kit's reference producer and consumer: reads any DLPack capsule field by
field and element by element, and makes any managed tensor, well formed or
malformed, whose deleter calls are counted. It uses ctypes and the generated
declarations (dlpack_ctypes, beside this file) only, never the library under
test, so what it reports is what is in the capsule.

Every check raises Violation, whose spec names the text it comes from
(spec.py); a reproducer calls these functions as the kit does."""

import atexit
import ctypes
import enum
import gc
import math
import mmap
import struct
import sys
import time
import traceback

from . import dlpack_ctypes as dl

# The elements are part of this module's API, which the cases' scripts and
# the reproducers call (reference.read_elements, reference.minifloat, ...).
from .elements import (  # noqa: F401
    _FORMATS,
    MINIFLOAT_CODES,
    SUBBYTE_PADDED,
    _empty,
    _flat,
    _memmove,
    _minifloat_width,
    _offsets,
    _put_subbyte,
    _string_at,
    _subbyte_bits,
    decodable,
    map_nested,
    minifloat,
    minifloat_word,
    read_elements,
    row_major,
    same_values,
    small_float,
    subbyte,
)
from .spec import PROTOCOL_RFC, Refused, Skip, Violation

VERSION = dl._VERSION
READ_ONLY = dl.DLPACK_FLAG_BITMASK_READ_ONLY
IS_COPIED = dl.DLPACK_FLAG_BITMASK_IS_COPIED
HOST_READABLE = dl._HOST_READABLE
DTYPES = dl._DTYPES
CPU = (int(dl.DLDeviceType.kDLCPU), 0)
# A device type no array library implements (a Verilog simulator's memory):
# what the kit asks for, or hands over, as "a device the library lacks".
ABSENT_DEVICE = (int(dl.DLDeviceType.kDLVPI), 0)
# Memory the CPU reads that belongs to a device with streams: CUDA's pinned
# host memory and its managed memory (DLPack 0.6 and later).
CUDA_HOST = (int(dl.DLDeviceType.kDLCUDAHost), 0)
CUDA_MANAGED = (int(dl.DLDeviceType.kDLCUDAManaged), 0)
NULLABLE = dl._NULLABLE
EXCHANGE = hasattr(dl, "DLPackExchangeAPI")
POINTER_BITS = 8 * ctypes.sizeof(ctypes.c_void_p)



def _proto(name, restype, *argtypes):
    """The kit's own prototype of a C API function. The function objects of
    ctypes.pythonapi are shared with the library under test (Warp and jax.ffi
    set their argtypes and restype when they export), so the kit neither
    calls them nor sets anything on them."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_get_name = _proto("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_capsule_get_pointer = _proto(
    "PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p
)
_capsule_set_name = _proto("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_new = _proto(
    "PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
)
_capsule_get_destructor = _proto("PyCapsule_GetDestructor", ctypes.c_void_p, ctypes.py_object)
_capsule_set_destructor = _proto(
    "PyCapsule_SetDestructor", ctypes.c_int, ctypes.py_object, ctypes.c_void_p
)
_cast_function = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.py_object)(
    ctypes._cast_addr
)


def _cast(obj, typ):
    return _cast_function(obj, obj, typ)


# In a capsule's destructor the capsule is dying: it is passed by address.
_capsule_name_at = _proto("PyCapsule_GetName", ctypes.c_char_p, ctypes.c_void_p)
_incref = _proto("Py_IncRef", None, ctypes.py_object)

# Capsule names must outlive every capsule that carries them.
_NAMES = {
    name: ctypes.create_string_buffer(name.encode())
    for name in (
        dl.CAPSULE_NAME,
        dl.USED_CAPSULE_NAME,
        dl.VERSIONED_CAPSULE_NAME,
        dl.USED_VERSIONED_CAPSULE_NAME,
    )
}
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _name_ptr(name):
    return _cast(_NAMES[name], ctypes.c_char_p)


def capsule_name(capsule):
    """The capsule's name, or a Violation when capsule is no capsule."""
    if type(capsule).__name__ != "PyCapsule":
        raise Violation(
            "capsule-name", f"__dlpack__ returned {type(capsule).__name__}, not a PyCapsule"
        )
    name = _capsule_get_name(capsule)
    return None if name is None else name.decode(errors="replace")


class Capsule:
    """What a capsule holds, read field by field: name, the managed tensor's
    address, version and flags (None for a legacy capsule), device, dtype,
    shape, strides (None for NULL), byte_offset, data address."""

    def __init__(self, capsule):
        self.capsule = capsule
        self.name = capsule_name(capsule)
        if self.name not in (dl.CAPSULE_NAME, dl.VERSIONED_CAPSULE_NAME):
            raise Violation(
                "capsule-name",
                f"the capsule is named {self.name!r}; an unconsumed capsule is named "
                f"{dl.CAPSULE_NAME!r} or {dl.VERSIONED_CAPSULE_NAME!r}",
            )
        self.versioned = self.name == dl.VERSIONED_CAPSULE_NAME
        self.address = _capsule_get_pointer(capsule, self.name.encode())
        if not self.address:
            raise Violation("capsule-name", "the capsule holds a NULL pointer")
        struct = dl.DLManagedTensorVersioned if self.versioned else dl.DLManagedTensor
        self.managed = struct.from_address(self.address)
        m = self.managed
        self.version = (m.version.major, m.version.minor) if self.versioned else None
        self.flags = m.flags if self.versioned else 0
        t = m.dl_tensor
        self.ndim = t.ndim
        self.device = (int(t.device.device_type), t.device.device_id)
        self.dtype = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        self.byte_offset = t.byte_offset
        self.data = t.data or 0
        self.deleter = _cast(m.deleter, ctypes.c_void_p).value or 0
        if self.versioned and self.version[0] != VERSION[0]:
            # The layout past the version is unknown: read nothing more.
            self.shape = self.strides = None
            return
        if not 0 <= self.ndim <= dl._MAX_NDIM:
            _versioned_in_legacy(self)
            raise Violation("ndim", f"ndim is {self.ndim}")
        self.shape = None if not t.shape else tuple(t.shape[i] for i in range(self.ndim))
        self.strides = None if not t.strides else tuple(t.strides[i] for i in range(self.ndim))

    @property
    def first(self):
        """The address of the first element: data + byte_offset."""
        return self.data + self.byte_offset

    def describe(self):
        return (
            f"{self.name} version={self.version} flags={self.flags} device={self.device} dtype={self.dtype} "
            f"shape={self.shape} strides={self.strides} byte_offset={self.byte_offset}"
        )

    def consume(self):
        """Renames the capsule to used_..., as a consumer that takes the
        tensor over does; the deleter is then the caller's to call."""
        used = dl.USED_VERSIONED_CAPSULE_NAME if self.versioned else dl.USED_CAPSULE_NAME
        if _capsule_set_name(self.capsule, _name_ptr(used)) != 0:
            raise RuntimeError("PyCapsule_SetName failed")

    def call_deleter(self):
        """Calls the managed tensor's deleter once (after consume)."""
        deleter = _cast(self.managed.deleter, ctypes.c_void_p).value
        if deleter:
            _DELETER(deleter)(self.address)

    def count_deleter_calls(self):
        """Puts a counter in front of the managed tensor's deleter and returns
        it: counter.calls is how often the deleter ran since. The original
        deleter still runs, once per call."""
        return _Counter(self)

    def elements(self):
        """Every element, as nested lists of Python values, read from memory
        at data + byte_offset + strides (NULL strides: row-major)."""
        if self.device[0] not in HOST_READABLE:
            raise ValueError(f"device {self.device} is not readable by the CPU")
        return read_elements(
            self.data, self.byte_offset, self.shape or (), self.strides, self.dtype, self.flags
        )


def _versioned_in_legacy(cap):
    """A Violation when a capsule named 'dltensor' holds what reads as a
    DLManagedTensorVersioned (its version field this release's major, its
    ndim in range): the name and the struct do not fit."""
    if cap.versioned:
        return
    m = dl.DLManagedTensorVersioned.from_address(cap.address)
    version = (m.version.major, m.version.minor)
    if version[0] == VERSION[0] and 0 <= m.dl_tensor.ndim <= dl._MAX_NDIM:
        raise Violation(
            "capsule-name",
            f"the capsule is named {dl.CAPSULE_NAME!r} but holds a DLManagedTensorVersioned (version "
            f"{version[0]}.{version[1]}, ndim {m.dl_tensor.ndim}): read as the DLManagedTensor its name "
            f"says, its ndim is {cap.ndim}; a versioned tensor's capsule is named "
            f"{dl.VERSIONED_CAPSULE_NAME!r}",
        )


class _Counter:
    """Replaces the deleter field with a ctypes callback that counts, then
    forwards to the producer's deleter."""

    def __init__(self, cap):
        self.calls = 0
        self.original = cap.deleter
        self._forward = _DELETER(self.original) if self.original else None
        self._callback = _DELETER(self._called)
        _KEEP.append(self)  # the library may call it after this object is dropped
        cap.managed.deleter = _cast(self._callback, type(cap.managed.deleter))

    def _called(self, address):
        self.calls += 1
        if self._forward is not None:
            self._forward(address)


_KEEP = []

# ---- the producer's side: checking a capsule --------------------------------


def check_export(
    x,
    capsule,
    *,
    expected,
    shape,
    dtype,
    max_version=None,
    copy=None,
    readonly=False,
    dl_device=None,
    made=None,
):
    """Checks a capsule x.__dlpack__(...) returned: name against max_version,
    version, flags, dtype, device against x.__dlpack_device__(), shape, and
    every element against expected (nested lists) when the CPU can read
    them. Returns the Capsule. With made (x -> its values, read by the
    library itself), the array is checked first: where the library made
    another array than the case asked for (the adapter's spelling of the
    layout, or the library's own indexing, differs from the case's), the
    capsule is judged against the array as it is, and the verdict says so."""
    differs = _made_otherwise(x, made, expected, shape)
    if differs:
        expected, shape = differs[0], differs[1]
        try:
            check_export(
                x, capsule, expected=expected, shape=shape, dtype=dtype, max_version=max_version,
                copy=copy, readonly=readonly, dl_device=dl_device,
            )
        except Violation as v:
            raise Violation(v.spec, f"{v} ({differs[2]})") from None
        raise Refused(f"the capsule describes the array exactly ({differs[2]})")
    cap = check_capsule(x, capsule, max_version=max_version, dl_device=dl_device)
    want_dtype = (*DTYPES[dtype], 1)
    if cap.dtype != want_dtype:
        raise Violation(
            "dtype",
            f"the capsule's dtype is (code, bits, lanes) = {cap.dtype}; {dtype} is {want_dtype}",
        )
    shape = tuple(shape)
    if cap.ndim != len(shape):
        raise Violation(
            "shape", f"the capsule's ndim is {cap.ndim}; the array has {len(shape)} dimensions"
        )
    got_shape = cap.shape if cap.shape is not None else ()
    if cap.ndim and cap.shape is None:
        raise Violation("shape", f"shape is NULL with ndim {cap.ndim}")
    if tuple(got_shape) != shape:
        raise Violation("shape", f"the capsule's shape is {got_shape}; the array's is {shape}")
    check_strides_and_flags(cap, copy=copy, readonly=readonly)
    if cap.device[0] in HOST_READABLE and decodable(cap.dtype) and math.prod(shape):
        if not cap.data:
            raise Violation("data-null", f"data is NULL for {math.prod(shape)} elements")
        got = cap.elements()
        if not same_values(got, expected) and subbyte(cap.dtype):
            _subbyte_layout(cap, expected)
        if not same_values(got, expected):
            raise Violation(
                "elements",
                f"the elements at data + byte_offset + strides are {got}; the array holds "
                f"{expected} ({cap.describe()})",
            )
    return cap


def check_capsule(x, capsule, *, max_version=None, dl_device=None):
    """Checks what any capsule x.__dlpack__(max_version=..., dl_device=...)
    returned says of itself: its name against max_version, its version, its
    device against x.__dlpack_device__() (or dl_device). Returns the Capsule."""
    cap = Capsule(capsule)
    if max_version is None and cap.versioned:
        raise Violation(
            "legacy-when-no-max-version",
            "called without max_version, __dlpack__ returned a versioned capsule, which a consumer "
            "of DLPack 0.x cannot read",
        )
    if max_version is not None and max_version[0] < 1 and cap.versioned:
        raise Violation(
            "legacy-for-old-consumer",
            f"called with max_version={max_version}, __dlpack__ returned a versioned capsule "
            f"(version {cap.version})",
        )
    if cap.versioned:
        if cap.version[0] != VERSION[0]:
            raise Violation(
                "major-version",
                f"the capsule's version is {cap.version}; this kit reads major "
                f"version {VERSION[0]}",
            )
        if max_version is not None and cap.version[0] > max_version[0]:
            raise Violation(
                "major-version",
                f"the capsule's version {cap.version} has a major version above "
                f"max_version={max_version}",
            )
    # A missing or malformed __dlpack_device__ is producer/__dlpack_device__'s.
    want_device = tuple(dl_device) if dl_device is not None else _dlpack_device(x) or cap.device
    if cap.device != want_device:
        what = "__dlpack_device__() says" if dl_device is None else "dl_device asked for"
        raise Violation("device", f"the capsule's device is {cap.device}; {what} {want_device}")
    return cap


def check_strides_and_flags(cap, *, copy=None, readonly=False):
    """Checks a Capsule's strides (NULL only where its release allows) and
    its flags: READ_ONLY for a read-only array, IS_COPIED as copy says."""
    if (
        cap.ndim
        and cap.strides is None
        and not (NULLABLE.get("strides") and not cap.versioned)
        and not _nullable_strides(cap)
    ):
        raise Violation(
            "strides-null",
            f"strides is NULL with ndim {cap.ndim} in a capsule of version {cap.version}",
        )
    if cap.versioned:
        if readonly and not cap.flags & READ_ONLY:
            raise Violation(
                "read-only-flag", "the array is read-only, the capsule's flags lack READ_ONLY"
            )
        if copy is False and cap.flags & IS_COPIED:
            raise Violation("copy-false", "copy=False, yet the capsule's flags say IS_COPIED")
        if copy is True and not cap.flags & IS_COPIED:
            raise Violation("is-copied-flag", "copy=True, the capsule's flags lack IS_COPIED")


def _made_otherwise(x, made, expected, shape):
    """None when x is the array the case asked for (or the library cannot
    read it), else (its values, its shape, the difference in words)."""
    if made is None:
        return None
    try:
        values = python_values(made(x))
        own = tuple(int(n) for n in x.shape) if hasattr(x, "shape") else None
    except Exception:  # noqa: BLE001 - the library cannot read it: the case's intent stands
        return None
    shape = tuple(shape)
    if own is None:
        own = _shape_of(values) if math.prod(shape) else shape
    if own == shape and same_values(values, expected):
        return None
    what = f"shape {own}" if own != shape else f"{values}"
    asked = f"shape {shape}" if own != shape else f"{expected}"
    words = (
        f"the library made another array than the case asked for: it holds {what}, read by the library "
        f"itself, where the case asks for {asked}; the adapter's spelling of the layout or the library's own "
        "indexing makes it so, and the capsule was judged against the array as it is"
    )
    return values, own, words


def _shape_of(values):
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return tuple(shape)


def _subbyte_layout(cap, expected):
    """Sub-byte elements read wrong as DLPack lays them out: a Violation
    naming the layout they are in, where it is another the kit knows."""
    shape = cap.shape or ()
    padded = bool(cap.flags & SUBBYTE_PADDED)
    if not padded:
        as_padded = read_elements(
            cap.data, cap.byte_offset, shape, cap.strides, cap.dtype, SUBBYTE_PADDED
        )
        if same_values(as_padded, expected):
            raise Violation(
                "subbyte-padded",
                f"the {cap.dtype} elements are padded, one a byte, yet the capsule does not say "
                "IS_SUBBYTE_TYPE_PADDED"
                + ("" if cap.versioned else " (a legacy capsule has no flags: it cannot carry them)")
                + ": a consumer reads them packed, and reads other values",
            )
        as_msb = read_elements(
            cap.data, cap.byte_offset, shape, cap.strides, cap.dtype, 0, order="msb"
        )
        if same_values(as_msb, expected):
            raise Violation(
                "subbyte-order",
                f"the packed {cap.dtype} elements fill each byte from its high bits; the kit reads "
                "them from the low bits, as JAX packs them. The header does not say which order "
                "packed elements take: a warning, not a failure",
            )


def _subbyte_misread(producer, got, expected):
    """A consumer's wrong sub-byte values that are the kit's elements read
    in another layout: a Violation naming it (other wrong values are
    consumer-values)."""
    t = producer.managed.dl_tensor
    shape = producer.shape or ()
    if producer.versioned and producer.managed.flags & SUBBYTE_PADDED:
        as_packed = read_elements(t.data, t.byte_offset, shape, producer.strides, producer.dtype, 0)
        if same_values(got, as_packed):
            raise Violation(
                "subbyte-padded",
                f"the imported array holds {got}, the elements read packed; the tensor holds {expected} "
                f"({producer.about()}): sub-byte elements are packed unless IS_SUBBYTE_TYPE_PADDED says "
                "one a byte",
            )
        return
    # Read one a byte, a packed tensor of default strides stays inside the
    # buffer (its slack holds the rest), so that reading is compared too.
    room = ctypes.sizeof(producer.buffer) - _ALIGN - t.byte_offset
    row_major_layout = producer.strides is None or list(producer.strides) == list(row_major(shape))
    fits = row_major_layout and math.prod(shape) <= room
    if fits:
        as_padded = read_elements(t.data, t.byte_offset, shape, None, producer.dtype, SUBBYTE_PADDED)
        if same_values(got, as_padded):
            raise Violation(
                "subbyte-padded",
                f"the imported array holds {got}, the elements read one a byte; the tensor holds {expected} "
                f"({producer.about()}): sub-byte elements are packed unless IS_SUBBYTE_TYPE_PADDED says "
                "one a byte",
            )
    as_msb = read_elements(t.data, t.byte_offset, shape, producer.strides, producer.dtype, 0, "msb")
    if same_values(got, as_msb):
        raise Violation(
            "subbyte-order",
            f"the imported array holds {got}: the kit's packed elements read from the high "
            f"bits of each byte; the kit packs them from the low bits (the tensor holds "
            f"{expected}), as JAX does. The header does not say which order packed "
            "elements take: a warning, not a failure",
        )


def _nullable_strides(cap):
    """Whether the capsule's release lets strides be NULL (before 1.2)."""
    return cap.version is None or cap.version < (1, 2)


def count_deleter(capsule):
    """Puts a counter in front of the capsule's deleter (None when the
    deleter is NULL, which DLPack allows)."""
    cap = Capsule(capsule)
    return cap.count_deleter_calls() if cap.deleter else None


def consume(capsule):
    """Takes the tensor over as a consumer does: renames the capsule, then
    calls the deleter once, as the consumer's array would when it dies."""
    cap = Capsule(capsule)
    cap.consume()
    cap.call_deleter()


def check_deleter_calls(counter, spec):
    """After the capsule is gone: the deleter ran exactly once."""
    if counter is None:
        return "the deleter is NULL, which DLPack allows: nothing to call"
    if counter.calls == 0:
        gc.collect()
    if counter.calls == 0 and spec == "deleter-unconsumed":
        raise Violation(
            "deleter-field-unused",
            "dropping an unconsumed capsule did not call the deleter its managed "
            "tensor names (the kit put a counter there)",
        )
    if counter.calls != 1:
        what = {
            "deleter-unconsumed": "dropping an unconsumed capsule called the deleter",
            "deleter-consumed": "the deleter of a consumed capsule (called once by the consumer) ran",
        }[spec]
        raise Violation(spec, f"{what} {counter.calls} times in all")
    return None


# ---- the consumer's side: making tensors ------------------------------------


class Producer:
    """A managed tensor made by the kit, in memory the kit owns, with a
    counted deleter, and the object a consumer's from_dlpack is handed: its
    __dlpack__ returns the tensor's capsule (versioned when the consumer asks
    for one and the tensor is versioned), its __dlpack_device__ the device.

    By default the tensor has the traits of what real producers (NumPy,
    PyTorch) export, so that a consumer meets what it meets in use: a
    non-NULL manager_ctx (this object's address, as NumPy's is its array's),
    data 16-byte aligned and no more (as NumPy's small arrays: malloc's), a
    capsule destructor that calls the deleter when the
    capsule dies unconsumed, NULL capsule context, strides set whenever ndim
    is. Each trait the text allows that real producers rarely have is asked
    for by a keyword, and a case of its own: manager_ctx=None,
    destructor=False, align="element" (data aligned to the element size
    only), align=64 (aligned to 64 bytes, as large arrays are), deleter=False (a NULL deleter), data=None.

    The kit keeps the capsule until the case's checks release it
    (check_released), so its destructor runs in the kit's own code, never
    while a consumer's exception is pending."""

    def __init__(
        self,
        *,
        versioned=True,
        version=VERSION,
        flags=0,
        device=CPU,
        dtype=(2, 32, 1),
        shape=(2, 3),
        strides="row-major",
        byte_offset=0,
        data="buffer",
        buffer_bytes=None,
        ndim=None,
        values=None,
        keywords=True,
        manager_ctx="object",
        destructor=True,
        align=16,
        deleter=True,
    ):
        self.calls = 0
        self.destructor_calls = 0
        self.keywords = keywords
        self.versioned = versioned
        self.managed = dl.DLManagedTensorVersioned() if versioned else dl.DLManagedTensor()
        m = self.managed
        self._callback = dict(type(m)._fields_)["deleter"](self._count)
        if deleter:
            m.deleter = self._callback
        m.manager_ctx = id(self) if manager_ctx == "object" else manager_ctx
        if versioned:
            m.version.major, m.version.minor = version
            m.flags = flags
        t = m.dl_tensor
        t.device.device_type, t.device.device_id = device
        t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype
        shape = None if shape is None else tuple(shape)
        if strides == "row-major":
            strides = None if shape is None else row_major(shape)
        t.ndim = len(shape or ()) if ndim is None else ndim
        t.byte_offset = byte_offset
        self._dims = []
        # A library that reads as many entries as a too-large ndim says
        # reads the kit's own values (1 for an extent, 0 for a stride) up to
        # _PADDED_DIMS entries, then an unmapped page, never whatever memory
        # follows: its verdict on such a tensor is the same on every run.
        padded = min(max(t.ndim, 0), _PADDED_DIMS)
        for field, dims, pad in (("shape", shape, 1), ("strides", strides, 0)):
            if dims is not None:
                entries = list(dims) + [pad] * max(padded - len(dims), 0)
                array = _guarded_int64s(entries) if t.ndim > len(dims) else None
                if array is None:
                    array = (ctypes.c_int64 * max(len(entries), 1))(*entries)
                self._dims.append(array)
                setattr(t, field, _cast(array, ctypes.POINTER(ctypes.c_int64)))
        self.buffer = None
        self.align = align
        if data == "buffer":
            itemsize = max(dtype[1] * dtype[2] // 8, 1)
            if buffer_bytes is None:
                buffer_bytes = byte_offset + _reach(shape or (), strides, itemsize)
            self.buffer = ctypes.create_string_buffer(max(buffer_bytes, 1) + 2 * _ALIGN)
            address = -(-ctypes.addressof(self.buffer) // _ALIGN) * _ALIGN
            if align == "element":  # aligned to the element size, and to nothing larger
                address += itemsize if itemsize < _ALIGN else 0
            elif align < _ALIGN:  # aligned to align, and to nothing larger (NumPy's small arrays: 16)
                address += align
            t.data = address
        elif data is not None:
            t.data = data
        self.shape, self.strides, self.dtype = shape, strides, dtype
        self.version = version if versioned else None
        if values is not None:
            self.write(values)
        name = dl.VERSIONED_CAPSULE_NAME if versioned else dl.CAPSULE_NAME
        self._destructor = _DESTRUCTOR(self._destroyed) if destructor else None
        if destructor:
            # Never freed: a capsule a consumer keeps may die at interpreter
            # exit, after the kit's objects; its destructor must still be code.
            _incref(self._destructor)
        self.capsule = _capsule_new(
            ctypes.addressof(m),
            _name_ptr(name),
            _cast(self._destructor, ctypes.c_void_p) if destructor else None,
        )
        self._consumed = None  # the capsule's fate, once the kit has let it go
        self.requests = []
        self.refused_request = None  # what this producer refused to make, last request
        # A consumer may call the deleter long after the case (a deferred
        # free): the memory and the callbacks live as long as the process.
        _KEEP.append(self)

    def _count(self, _):
        self.calls += 1

    def _destroyed(self, address):
        """The capsule's destructor: calls the deleter (through the field,
        where a counter may sit) when the capsule dies unconsumed."""
        if _EXITING:
            return
        name = _capsule_name_at(address)
        used = dl.USED_VERSIONED_CAPSULE_NAME if self.versioned else dl.USED_CAPSULE_NAME
        self._consumed = name is not None and name.decode(errors="replace") == used
        if self._consumed:
            return
        deleter = _cast(self.managed.deleter, ctypes.c_void_p).value
        if deleter:
            self.destructor_calls += 1
            _DELETER(deleter)(ctypes.addressof(self.managed))

    def traits(self):
        """The traits of this tensor that real producers' tensors lack, in
        words (empty for a tensor like NumPy's)."""
        m, t = self.managed, self.managed.dl_tensor
        out = []
        if not m.manager_ctx:
            out.append("manager_ctx NULL")
        if self._destructor is None:
            out.append("a capsule without destructor")
        if not m.deleter:
            out.append("deleter NULL")
        if self.buffer is not None and self.align != 16:
            only = " only" if self.align == "element" else ""
            out.append(f"data aligned to {t.data & -t.data} bytes{only}")
        if not t.data:
            out.append("data NULL")
        if t.byte_offset:
            out.append(f"byte_offset {t.byte_offset}")
        if subbyte(self.dtype):
            padded = self.versioned and m.flags & SUBBYTE_PADDED
            out.append(
                f"{self.dtype} elements "
                + ("padded one a byte (IS_SUBBYTE_TYPE_PADDED)" if padded else "packed, low bits first")
            )
        if t.ndim and not t.shape:
            out.append("shape NULL")
        if t.ndim and not t.strides:
            out.append("strides NULL")
        elif self.strides is not None and self.shape and tuple(self.strides) != row_major(self.shape):
            out.append(f"strides {tuple(self.strides)}")
        if not t.ndim and t.shape:
            out.append("0-d with non-NULL shape")
        return out

    def about(self):
        """The input in words, for a message: its traits, or that it has
        those of a real producer's."""
        traits = self.traits()
        if not traits:
            return "the tensor has the traits of NumPy's (manager_ctx set, capsule destructor, aligned data)"
        return "the tensor has " + ", ".join(traits)

    def write(self, values):
        """Writes values (nested lists) at the tensor's element addresses
        (sub-byte elements packed, low bits first, or padded as the flags say)."""
        shape = self.shape or ()
        if self.shape is not None and not math.prod(shape):
            return
        t = self.managed.dl_tensor
        base = t.data + t.byte_offset
        offsets = _offsets(shape, self.strides)
        if subbyte(self.dtype):
            padded = bool(self.versioned and self.managed.flags & SUBBYTE_PADDED)
            code, bits = self.dtype[0], self.dtype[1]
            for i, v in zip(_flat(offsets), _flat(values), strict=True):
                _put_subbyte(base, i, bits, _subbyte_bits(code, bits, v), padded)
            return
        size = self.dtype[1] // 8
        for i, v in zip(_flat(offsets), _flat(values), strict=True):
            _memmove(base + i * size, encode(v, self.dtype), size)

    def fill(self):
        """Writes distinct values at every element (aliased ones end up
        with one of them) and returns what a reader finds there."""
        shape = self.shape or ()
        if math.prod(shape):
            kind = {0: 1, 1: 1, 2: 0.5, 4: 0.5, 5: 0.5 + 0.25j, 6: True}.get(self.dtype[0], 0.5)
            flat = [
                (i % 2 == 0)
                if kind is True
                else small_float(self.dtype[0], i)
                if self.dtype[0] in MINIFLOAT_CODES
                else (i % 100 + 1) * kind
                for i in range(math.prod(shape))
            ]
            self.write(_nest(flat, shape))
        return self.elements()

    def elements(self):
        t = self.managed.dl_tensor
        if self.shape and not math.prod(self.shape):
            return _empty(self.shape)
        flags = self.managed.flags if self.versioned else 0
        return read_elements(
            t.data, t.byte_offset, self.shape or (), self.strides, self.dtype, flags
        )

    def __dlpack__(self, *args, **kwargs):
        # Each request is judged alone: a consumer that retries (mlx asks
        # __dlpack__() and then __dlpack__(max_version=...)) got what it
        # asked for last.
        self.refused_request = None
        if not self.keywords and kwargs.keys() - {"stream"}:
            raise TypeError(
                f"__dlpack__() got unexpected keyword arguments {sorted(kwargs.keys() - {'stream'})}"
            )
        self.requests.append(kwargs)
        if self.versioned:
            max_version = kwargs.get("max_version")
            if max_version is None or max_version[0] < 1:
                made = [*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())]
                self.refused_request = f"__dlpack__({', '.join(made)})"
                raise BufferError(
                    "this producer exports versioned capsules only: pass max_version=(1, x)"
                )
        if self.capsule is None:
            raise BufferError("this producer's tensor was handed over already")
        return self.capsule

    def __dlpack_device__(self):
        t = self.managed.dl_tensor
        return (int(t.device.device_type), t.device.device_id)

    @property
    def consumed(self):
        """Whether a consumer renamed the capsule (took the tensor over)."""
        if self.capsule is None:
            return bool(self._consumed)
        used = dl.USED_VERSIONED_CAPSULE_NAME if self.versioned else dl.USED_CAPSULE_NAME
        return capsule_name(self.capsule) == used

    def release(self):
        """Lets the capsule go, as a real producer does once it returned it:
        when the consumer holds it no more, its destructor runs now. Returns
        (consumed, whether the capsule still has the kit's destructor,
        whether something besides the kit still holds it)."""
        if self.capsule is None:
            return bool(self._consumed), False, False
        consumed = self.consumed
        ours = self._destructor is not None and _capsule_get_destructor(self.capsule) == _cast(
            self._destructor, ctypes.c_void_p
        ).value
        held = sys.getrefcount(self.capsule) > 2  # the attribute, getrefcount's argument
        self._consumed = consumed
        self.capsule = None
        return consumed, ours, held


_ALIGN = 64
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_EXITING = []


@atexit.register
def _exiting():
    """At exit the capsules the kit still holds die without calling back
    into Python that is being torn down."""
    _EXITING.append(True)
    for p in _KEEP:
        if isinstance(p, Producer) and p.capsule is not None and p._destructor is not None:
            _capsule_set_destructor(p.capsule, None)


_PADDED_DIMS = 1 << 17
_PAGE = 4096


def _guarded_int64s(entries):
    """entries as int64s that end where an unmapped page begins (Linux), so
    that a reader past them faults at once; None where that cannot be had."""
    if not hasattr(mmap, "MAP_ANONYMOUS") or not hasattr(_libc, "mprotect"):
        return None
    size = 8 * len(entries)
    pages = (size + _PAGE - 1) // _PAGE
    region = mmap.mmap(-1, (pages + 1) * _PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    guard = base + pages * _PAGE
    if _libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(_PAGE), 0) != 0:  # PROT_NONE
        return None
    array = (ctypes.c_int64 * len(entries)).from_address(guard - size)
    array[:] = entries
    _KEEP.append(region)
    return array


_libc = ctypes.CDLL(None)


def _nest(flat, shape):
    if not shape:
        return flat[0]
    step = math.prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _reach(shape, strides, itemsize):
    if not shape or math.prod(shape) == 0:
        return itemsize if not shape else 0
    strides = row_major(shape) if strides is None else strides
    top = sum((n - 1) * s for n, s in zip(shape, strides, strict=False) if s > 0)
    return (top + 1) * itemsize


def encode(value, dtype):
    code, bits, _ = dtype
    if (code, bits) in _FORMATS:
        return struct.pack("<" + _FORMATS[(code, bits)], value)
    if (code, bits) == (4, 16):
        return struct.pack("<f", value)[2:]
    if code == 5:
        half = "<f" if bits == 64 else "<d"
        return struct.pack(half, value.real) + struct.pack(half, value.imag)
    if _minifloat_width(code) == bits == 8:
        return bytes([minifloat_word(code, value)])
    raise ValueError(f"the kit does not write elements of dtype {dtype}")


# ---- the consumer's side: checking an import --------------------------------


def check_usable(operate):
    """Runs the adapter's operation on an imported tensor (a sum): a consumer
    that imports a tensor it cannot compute on (one whose alignment it
    relies on) breaks consumer-usable; one that dies there crashes."""
    try:
        operate()
    except Exception as e:  # noqa: BLE001 - the library's answer
        raise Violation(
            "consumer-usable",
            f"the imported array cannot be computed on: the adapter's operation raised "
            f"{type(e).__name__}: {_first_line(e)}",
        ) from None


def check_values(producer, y, read, expected):
    """Checks what a consumer imported: its values (read(y), nested lists)
    equal the producer's, and the deleter has not run while y still views
    the producer's memory."""
    got = python_values(read(y))
    if not same_values(got, expected) and subbyte(producer.dtype) and producer.buffer is not None:
        _subbyte_misread(producer, got, expected)
    if not same_values(got, expected):
        raise Violation(
            "consumer-values",
            f"the imported array holds {got}; the tensor holds {expected} ({producer.about()})",
        )
    if producer.calls > 1:
        raise Violation(
            "consumer-deleter-once", f"the deleter ran {producer.calls} times while the array lives"
        )
    view = _views(producer, y, read, expected)
    if view and producer.calls:
        raise Violation(
            "consumer-deleter-early",
            "the deleter ran while the imported array still views the producer's memory",
        )
    return view


def _views(producer, y, read, expected):
    """Whether y reads the producer's memory (a write there shows in y)."""
    if producer.buffer is None or not producer.shape or not math.prod(producer.shape):
        return False
    if not decodable(producer.dtype):
        return False
    first = expected
    while isinstance(first, list):
        first = first[0]
    other = _other_value(first, producer.dtype)
    changed = _set_first(expected, other)
    producer.write(changed)
    try:
        return not same_values(read(y), expected)
    finally:
        producer.write(expected)


def _other_value(v, dtype):
    if isinstance(v, bool):
        return not v
    if dtype[0] in MINIFLOAT_CODES:  # another value the format holds
        return next(w for w in map(small_float, [dtype[0]] * 24, range(24)) if w != v)
    if isinstance(v, complex):
        return v + 1
    if dtype[0] == 1 and v >= 100:
        return v - 1
    return v + 1


def _set_first(values, v):
    if not isinstance(values, list):
        return v
    return [_set_first(values[0], v), *values[1:]]


def check_released(producer, *, settle=0.2):
    """After the consumer's array is gone: a consumer that took the tensor
    (renamed the capsule) called the deleter exactly once; one that did not
    take it left the deleter to the capsule's destructor (the kit's, which
    runs when the kit lets the capsule go here), or, where it cleared that
    destructor, called the deleter once itself."""
    # Reference counting usually frees the array at `del`; garbage collection
    # and a short wait are for consumers that free later (cycles, threads).
    deadline = time.monotonic() + settle if producer.managed.deleter else 0
    while producer.consumed and not producer.calls and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    had_destructor = producer._destructor is not None
    consumed, ours, _held = producer.release()
    if not producer.managed.deleter:
        return "the deleter is NULL, which DLPack allows: nothing to count"
    judge_release(
        consumed=consumed,
        by_consumer=producer.calls - producer.destructor_calls,
        destructor_calls=producer.destructor_calls,
        had_destructor=had_destructor,
        ours=ours,
        versioned=producer.versioned,
        about=producer.about(),
    )


def _times(n):
    """n calls in words: "once", "2 times"."""
    return "once" if n == 1 else f"{n} times"


def judge_release(*, consumed, by_consumer, destructor_calls, had_destructor, ours, versioned, about):
    """The deleter rule, once the consumer is done with a tensor: consumed
    (the capsule was renamed), the deleter calls by the consumer and by the
    capsule's destructor, whether the capsule had a destructor and whether it
    is still alive to run it (ours), about: the tensor in words."""
    if consumed and by_consumer != 1:
        what = "never" if by_consumer == 0 else f"{by_consumer} times"
        raise Violation(
            "consumer-deleter-once",
            f"the consumer renamed the capsule (took the tensor), and the "
            f"deleter ran {what} after its array was dropped ({about})",
        )
    if consumed or not by_consumer:
        return
    if ours:
        when = "ran it again" if destructor_calls else "runs it again when the capsule dies"
        raise Violation(
            "consumer-deleter-once",
            f"the consumer never renamed the capsule, yet called the deleter {_times(by_consumer)}"
            f"; the capsule's destructor, which calls the deleter of an unrenamed "
            f"capsule, {when} ({about})",
        )
    if not had_destructor and by_consumer != 1:
        raise Violation(
            "consumer-deleter-once",
            f"the consumer never renamed the capsule, yet called the deleter {_times(by_consumer)}"
            f": to the producer the tensor is still its own ({about})",
        )
    if not had_destructor:
        # Once, without a rename, of a capsule that has no destructor: what a
        # consumer that takes a tensor by clearing the destructor does (there
        # was none to clear), so the same open point as below, not a failure.
        name = dl.VERSIONED_CAPSULE_NAME if versioned else dl.CAPSULE_NAME
        raise Violation(
            "consumer-rename",
            f"the consumer called the deleter once but left the capsule named {name!r}, which "
            "had no destructor: it took the tensor without renaming the capsule, so to a producer "
            "that frees an unrenamed capsule's tensor itself the tensor is still its own, and a "
            f"second from_dlpack of the capsule would take a freed tensor ({about})",
        )
    if by_consumer != 1:
        raise Violation(
            "consumer-deleter-once",
            f"the consumer cleared the capsule's destructor without renaming the capsule, and "
            f"called the deleter {_times(by_consumer)} ({about})",
        )
    # The consumer alone called the deleter, once, and cleared (or replaced)
    # the capsule's destructor: it took the tensor without renaming it.
    name = dl.VERSIONED_CAPSULE_NAME if versioned else dl.CAPSULE_NAME
    raise Violation(
        "consumer-rename",
        f"the consumer called the deleter once but left the capsule named {name!r}: it "
        "took the tensor without renaming the capsule (it cleared the capsule's destructor), so "
        "the capsule still reads as unconsumed: a second from_dlpack of it would take a freed "
        "tensor, and a producer that tells a consumed capsule by its name frees the tensor while "
        f"this consumer uses it ({about})",
    )


# ---- the C exchange API -----------------------------------------------------


def exchange_api(x):
    """The DLPackExchangeAPI a type publishes, or None."""
    name = "__dlpack_c_exchange_api__"
    table = getattr(type(x), name, None)
    if table is None:
        return None
    if isinstance(table, int):
        address = table
    else:
        got = capsule_name(table)
        if got != "dlpack_exchange_api":
            raise Violation(
                "exchange-api", f"{name} is a capsule named {got!r}, not 'dlpack_exchange_api'"
            )
        address = _capsule_get_pointer(table, b"dlpack_exchange_api")
    api = dl.DLPackExchangeAPI.from_address(address)
    if api.header.version.major != VERSION[0]:
        raise Violation(
            "exchange-api",
            f"the exchange API's version is {api.header.version.major}.{api.header.version.minor}",
        )
    return api


_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))


def check_exchange_api(x, export, expected=None):
    """Checks that the exchange API's managed_tensor_from_py_object_no_sync
    answers as export() (x.__dlpack__ with the release's max_version) does:
    it refuses what __dlpack__ refuses, and exports the same tensor (version,
    flags, device, dtype, shape, strides, first element's address, every
    element); with expected (the array's values as nested lists), what it
    exports holds them, refused by __dlpack__ or not."""
    api = exchange_api(x)
    if api is None:
        raise Skip(f"{type(x).__name__} publishes no __dlpack_c_exchange_api__")
    entry = _cast(api.managed_tensor_from_py_object_no_sync, ctypes.c_void_p).value
    if not entry:
        raise Violation("exchange-api", "managed_tensor_from_py_object_no_sync is NULL")
    try:
        want = Capsule(export())
    except Violation:
        raise
    except Exception as e:  # noqa: BLE001 - __dlpack__ refused: the table must too
        out = ctypes.c_void_p()
        try:
            status = _FROM_PY(entry)(x, ctypes.byref(out))
        except Exception:  # noqa: BLE001 - the entry refused too, with an exception
            return
        if status == 0 and out.value:
            got = _Managed(out.value)
            try:
                if expected is not None and decodable(got.dtype) and got.data:
                    values = got.elements()
                    if not same_values(values, expected):
                        raise Violation(
                            "exchange-api",
                            f"managed_tensor_from_py_object_no_sync exported {values}; the array holds "
                            f"{expected} (__dlpack__ refused: {type(e).__name__}: {e})",
                        ) from None
            finally:
                got.call_deleter()
            raise Violation(
                "exchange-api-refusal",
                f"__dlpack__ refused ({type(e).__name__}: {e}), managed_tensor_from_py_object_no_sync "
                "exported",
            ) from None
        return
    out = ctypes.c_void_p()
    if _FROM_PY(entry)(x, ctypes.byref(out)) != 0 or not out.value:
        raise Violation(
            "exchange-api", "managed_tensor_from_py_object_no_sync failed where __dlpack__ exported"
        )
    got = _Managed(out.value)
    try:
        for field in ("version", "flags", "device", "dtype", "shape", "strides", "first"):
            a, b = getattr(got, field), getattr(want, field)
            if field == "flags":
                a, b = a & ~IS_COPIED, b & ~IS_COPIED
            if a != b:
                raise Violation(
                    "exchange-api", f"the exchange API's {field} is {a}, __dlpack__'s is {b}"
                )
        readable = want.device[0] in HOST_READABLE and decodable(want.dtype) and want.data
        if readable and expected is not None and not same_values(got.elements(), expected):
            raise Violation(
                "exchange-api",
                f"the exchange API's elements are {got.elements()}; the array holds {expected}",
            )
        if readable and not same_values(got.elements(), want.elements()):
            raise Violation(
                "exchange-api",
                f"the exchange API's elements are {got.elements()}, __dlpack__'s "
                f"are {want.elements()}",
            )
    finally:
        got.call_deleter()
    return


# The table's other entries, called as a consumer calls them: with the GIL
# held (a failure sets a Python exception, which ctypes then raises).
_ALLOCATE = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p
)
_SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
_TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_DLTENSOR_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_STREAM = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)
)
_decref = _proto("Py_DecRef", None, ctypes.c_void_p)
# The entries the header says are never NULL, and the one it lets be NULL.
_EXCHANGE_ENTRIES = (
    "managed_tensor_allocator",
    "managed_tensor_from_py_object_no_sync",
    "managed_tensor_to_py_object_no_sync",
    "current_work_stream",
)


def _entry(x, name):
    """The address of entry name of x's table; Skip without a table."""
    api = exchange_api(x)
    if api is None:
        raise Skip(f"{type(x).__name__} publishes no __dlpack_c_exchange_api__")
    return _cast(getattr(api, name), ctypes.c_void_p).value


def check_exchange_table(x):
    """The table's entries: every one the header says is never NULL is set
    (dltensor_from_py_object_no_sync may be NULL)."""
    missing = [name for name in _EXCHANGE_ENTRIES if not _entry(x, name)]
    if missing:
        raise Violation("exchange-api-table", f"the table's {', '.join(missing)} is NULL")
    if not _entry(x, "dltensor_from_py_object_no_sync"):
        return "dltensor_from_py_object_no_sync is NULL, which the header allows"
    return None


def check_exchange_allocator(x, device=CPU):
    """managed_tensor_allocator of a 2x3 float32 prototype on device: 0 and a
    tensor like the prototype (dtype, ndim, shape, device), SetError never
    called; or -1 with SetError called exactly once. On a device the library
    lacks it must fail so."""
    entry = _entry(x, "managed_tensor_allocator")
    if not entry:
        raise Violation("exchange-api-table", "managed_tensor_allocator is NULL")
    errors = []
    set_error = _SET_ERROR(lambda _ctx, kind, message: errors.append((kind, message)))
    proto = dl.DLTensor()
    proto.device.device_type, proto.device.device_id = device
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = 2, 32, 1
    dims = (ctypes.c_int64 * 2)(2, 3)
    proto.ndim, proto.shape = 2, _cast(dims, ctypes.POINTER(ctypes.c_int64))
    out = ctypes.c_void_p()
    asked = f"a 2x3 float32 prototype on {device}"
    try:
        status = _ALLOCATE(entry)(
            ctypes.addressof(proto), ctypes.byref(out), None, _cast(set_error, ctypes.c_void_p)
        )
    except Exception as e:  # noqa: BLE001 - a Python exception instead of SetError
        words = f"{type(e).__name__}: {_first_line(e)}"
        if len(errors) == 1:
            _allocator_failed(asked, device, f"SetError{errors[0]} (and raised {words})")
            return f"failed, calling SetError {errors[0]} (and raising {words})"
        raise Violation(
            "exchange-api-allocator",
            f"managed_tensor_allocator of {asked} raised {words} and called SetError "
            f"{len(errors)} times (the header: it returns -1 after calling SetError, exactly once)",
        ) from None
    if status != 0:
        if len(errors) != 1:
            raise Violation(
                "exchange-api-allocator",
                f"managed_tensor_allocator of {asked} returned {status} and called SetError "
                f"{len(errors)} times; a failure calls it exactly once",
            )
        _allocator_failed(asked, device, f"SetError{errors[0]}")
        return f"refused: SetError{errors[0]}"
    if errors:
        raise Violation(
            "exchange-api-allocator",
            f"managed_tensor_allocator of {asked} returned 0, yet called SetError {errors[0]}",
        )
    if not out.value:
        raise Violation(
            "exchange-api-allocator", f"managed_tensor_allocator of {asked} returned 0 and no tensor"
        )
    got = _Managed(out.value)
    try:
        if got.version[0] != VERSION[0]:
            raise Violation(
                "exchange-api-allocator", f"the allocated tensor's version is {got.version}"
            )
        want = (device, (2, 32, 1), 2, (2, 3))
        have = (got.device, got.dtype, got.ndim, got.shape)
        if have != want:
            raise Violation(
                "exchange-api-allocator",
                f"managed_tensor_allocator of {asked} made (device, dtype, ndim, shape) = {have}",
            )
        if got.strides is None and not _nullable_strides(got):
            raise Violation(
                "strides-null", f"the allocated 2x3 tensor's strides are NULL (version {got.version})"
            )
        if not got.data:
            raise Violation("data-null", "the allocated 2x3 tensor's data is NULL")
        if device == ABSENT_DEVICE:
            raise Violation(
                "exchange-api-allocator",
                f"managed_tensor_allocator of {asked}, a device no library has, returned 0 and a tensor "
                "there: an allocation it cannot make fails, returning -1 after SetError",
            )
    finally:
        got.call_deleter()
    return None


def _allocator_failed(asked, device, how):
    """A failed allocation on the CPU, which every library can allocate on."""
    if device == CPU:
        raise Violation("exchange-api-allocate-cpu", f"managed_tensor_allocator of {asked} failed: {how}")


def check_exchange_to_py(x, values):
    """managed_tensor_to_py_object_no_sync of a 2x3 float32 tensor the kit
    made: an object of x's type holding its values, which owns the tensor:
    the deleter runs once, when the object is gone, not before."""
    entry = _entry(x, "managed_tensor_to_py_object_no_sync")
    if not entry:
        raise Violation("exchange-api-table", "managed_tensor_to_py_object_no_sync is NULL")
    producer = Producer(versioned=True, dtype=(2, 32, 1), shape=(2, 3), values=values)
    Capsule(producer.capsule).consume()  # the tensor is the callee's: not the capsule's
    out = ctypes.c_void_p()
    try:
        status = _TO_PY(entry)(ctypes.addressof(producer.managed), ctypes.byref(out))
    except Exception as e:  # noqa: BLE001 - a refusal, with its exception
        raise Violation(
            "exchange-api-to-py-refused",
            f"managed_tensor_to_py_object_no_sync refused a 2x3 float32 CPU tensor: "
            f"{type(e).__name__}: {_first_line(e)}",
        ) from None
    if status != 0 or not out.value:
        raise Violation(
            "exchange-api-to-py-object",
            f"managed_tensor_to_py_object_no_sync returned {status} and object {out.value} without "
            "raising (the header: 0, or -1 with a Python exception set)",
        )
    y = _cast(out, ctypes.py_object).value
    _decref(out.value)  # the entry's own reference: y holds one now
    if not isinstance(y, type(x)):
        raise Violation(
            "exchange-api-to-py-object",
            f"managed_tensor_to_py_object_no_sync made a {type(y).__name__}, not a "
            f"{type(x).__name__} (the type whose table it is)",
        )
    got = Capsule(y.__dlpack__(max_version=VERSION)).elements()
    if not same_values(got, values):
        raise Violation(
            "exchange-api-to-py-object",
            f"the object managed_tensor_to_py_object_no_sync made holds {got}; the tensor holds {values}",
        )
    if producer.calls:
        raise Violation(
            "exchange-api-to-py-object",
            "the tensor's deleter ran while the object made of it lives",
        )
    del y
    deadline = time.monotonic() + 0.2
    while not producer.calls and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    producer.release()
    if producer.calls != 1:
        raise Violation(
            "exchange-api-to-py-object",
            f"the object made of the tensor is gone, and its deleter ran {producer.calls} times; "
            "the callee took ownership: it runs the deleter once",
        )


def check_exchange_dltensor(x, export):
    """dltensor_from_py_object_no_sync (where the table has it) fills a
    DLTensor viewing what export() (__dlpack__) exports: the same device,
    dtype, shape, strides, first element and elements."""
    entry = _entry(x, "dltensor_from_py_object_no_sync")
    if not entry:
        raise Skip("dltensor_from_py_object_no_sync is NULL, which the header allows")
    try:
        want = Capsule(export())
    except Violation:
        raise
    except Exception as e:  # noqa: BLE001 - __dlpack__ refused: the entry must too
        keyword_precondition(e)
        _refuses_too(entry, x, e)
        return f"both refused: {type(e).__name__}: {_first_line(e)}"
    t = dl.DLTensor()
    try:
        status = _DLTENSOR_FROM_PY(entry)(x, ctypes.addressof(t))
    except Exception as e:  # noqa: BLE001 - refused where __dlpack__ exported
        raise Violation(
            "exchange-api-refusal",
            f"dltensor_from_py_object_no_sync raised {type(e).__name__}: {_first_line(e)}, where "
            "__dlpack__ exported",
        ) from None
    if status != 0:
        raise Violation(
            "exchange-api-dltensor",
            f"dltensor_from_py_object_no_sync returned {status} without raising",
        )
    shape = None if not t.shape else tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] for i in range(t.ndim))
    got = {
        "device": (int(t.device.device_type), t.device.device_id),
        "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        "shape": shape,
        "strides": strides,
        "first": (t.data or 0) + t.byte_offset,
    }
    for field, value in got.items():
        if value != getattr(want, field):
            raise Violation(
                "exchange-api-dltensor",
                f"dltensor_from_py_object_no_sync's {field} is {value}, __dlpack__'s is "
                f"{getattr(want, field)}",
            )
    readable = want.device[0] in HOST_READABLE and decodable(want.dtype) and want.data
    if readable:
        elements = read_elements(t.data or 0, t.byte_offset, shape or (), strides, got["dtype"])
        if not same_values(elements, want.elements()):
            raise Violation(
                "exchange-api-dltensor",
                f"dltensor_from_py_object_no_sync's elements are {elements}, __dlpack__'s are "
                f"{want.elements()}",
            )


def _refuses_too(entry, x, refusal):
    """dltensor_from_py_object_no_sync refuses what __dlpack__ refused."""
    t = dl.DLTensor()
    try:
        status = _DLTENSOR_FROM_PY(entry)(x, ctypes.addressof(t))
    except Exception:  # noqa: BLE001 - it refused too
        return
    if status == 0:
        raise Violation(
            "exchange-api-refusal",
            f"__dlpack__ refused ({type(refusal).__name__}: {_first_line(refusal)}), "
            "dltensor_from_py_object_no_sync filled a DLTensor",
        )


def check_exchange_stream(x):
    """current_work_stream on the CPU: 0 (any stream, NULL included), or
    -1 with a Python exception set."""
    entry = _entry(x, "current_work_stream")
    if not entry:
        raise Violation("exchange-api-table", "current_work_stream is NULL")
    out = ctypes.c_void_p(12345)
    try:
        status = _STREAM(entry)(CPU[0], CPU[1], ctypes.byref(out))
    except Exception as e:  # noqa: BLE001 - failed on the CPU, with an exception
        raise Violation(
            "exchange-api-stream-cpu",
            f"current_work_stream(kDLCPU, 0) raised {type(e).__name__}: {_first_line(e)}",
        ) from None
    if status != 0:
        raise Violation(
            "exchange-api-stream",
            f"current_work_stream(kDLCPU, 0) returned {status} without a Python exception",
        )
    return f"the CPU's stream is {out.value}"


class _Managed(Capsule):
    """A DLManagedTensorVersioned* handed over outside a capsule."""

    def __init__(self, address):
        self.capsule, self.name, self.versioned, self.address = (
            None,
            dl.VERSIONED_CAPSULE_NAME,
            True,
            address,
        )
        m = self.managed = dl.DLManagedTensorVersioned.from_address(address)
        self.version, self.flags = (m.version.major, m.version.minor), m.flags
        t = m.dl_tensor
        self.ndim, self.device = t.ndim, (int(t.device.device_type), t.device.device_id)
        self.dtype = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        self.byte_offset, self.data = t.byte_offset, t.data or 0
        self.deleter = _cast(m.deleter, ctypes.c_void_p).value or 0
        self.shape = None if not t.shape else tuple(t.shape[i] for i in range(self.ndim))
        self.strides = None if not t.strides else tuple(t.strides[i] for i in range(self.ndim))


# ---- checks the scripts call by name ----------------------------------------


def exported_anyway(capsule, spec, dl_device):
    """__dlpack__ returned where it had to raise BufferError."""
    cap = Capsule(capsule)
    raise Violation(
        spec,
        f"asked for dl_device={dl_device}, which this process has no device for, __dlpack__ "
        f"returned a capsule on {cap.device} instead of raising BufferError",
    )


def check_copied_flag(capsule, capsule2):
    """Two exports of one array share memory unless the producer copies:
    IS_COPIED says which."""
    a, b = Capsule(capsule), Capsule(capsule2)
    if not a.versioned:
        return "legacy capsules carry no flags"
    copied = a.data + a.byte_offset != b.data + b.byte_offset
    if copied and not a.flags & IS_COPIED:
        raise Violation(
            "is-copied-flag",
            "two exports of one array point to different memory (copies), "
            "yet the capsule lacks IS_COPIED",
        )
    if not copied and a.flags & IS_COPIED:
        raise Violation(
            "copied-when-not",
            "two exports of one array share memory, yet the capsule says IS_COPIED",
        )
    return None


def accepted_stream_on_cpu(x):
    raise Violation(
        "stream-cpu",
        "__dlpack__(stream=1) of a CPU array returned a capsule; on the CPU only "
        "stream=None is accepted",
    )


def exported_read_only_legacy(capsule):
    Capsule(capsule)
    raise Violation(
        "read-only-legacy",
        "a read-only array was exported as a legacy capsule, which cannot carry "
        "READ_ONLY: a consumer may write to it",
    )


def accepted(producer, y, spec):
    """The consumer returned an array for a tensor it had to refuse."""
    what = {
        "consumer-major-version": f"a tensor of version {producer.version} (a major version whose fields this "
        "consumer cannot know)",
        "consumer-unknown-dtype": f"a tensor of dtype {producer.dtype}, which no release of DLPack defines",
        "consumer-unsupported-device": f"a tensor on device {producer.__dlpack_device__()}",
        "consumer-malformed": "a tensor dlgen's rules refuse",
    }[spec]
    raise Violation(spec, f"from_dlpack accepted {what} and returned {type(y).__name__}")


def check_held(producer, y, read):
    """A consumer that accepts a tensor it cannot read as plain host elements
    (another device, vector lanes) holds it: reading its values raises, or
    gives one value per element of the right shape; it never reads the data
    pointer as host memory (the kit's pointer is unmapped: that crashes)."""
    try:
        got = read(y)
    except Exception as e:  # noqa: BLE001 - held and not readable: what it should do
        return f"held; reading it raised {type(e).__name__}"
    if producer.__dlpack_device__()[0] not in HOST_READABLE:
        raise Violation(
            "consumer-unsupported-device",
            f"from_dlpack accepted a tensor on device {producer.__dlpack_device__()} and read {got} from it",
        )
    return None


def check_read_only(producer, write, expected):
    """A write to the import of a READ_ONLY tensor is refused or goes to a copy."""
    try:
        write()
    except Exception as e:  # noqa: BLE001 - any refusal will do
        return f"the write was refused: {type(e).__name__}"
    if not same_values(producer.elements(), expected):
        raise Violation(
            "consumer-read-only",
            "a write to the import of a READ_ONLY tensor changed the producer's memory",
        )
    return None


def check_requests(producer):
    """A consumer passes no stream to a CPU producer, and never stream 0
    (ambiguous, so disallowed, for CUDA) to one on CUDA host or managed memory."""
    device = producer.__dlpack_device__()
    for kw in producer.requests:
        if kw.get("stream") is not None and device[0] == CPU[0]:
            raise Violation(
                "consumer-stream-cpu",
                f"from_dlpack passed stream={kw['stream']!r} to a producer on the CPU",
            )
        if kw.get("stream") == 0 and device in (CUDA_HOST, CUDA_MANAGED):
            raise Violation(
                "consumer-stream-zero",
                f"from_dlpack passed stream=0 to a producer on {device}",
            )


def check_stream_passed(producer, stream):
    """A consumer asked to import on stream passes that stream to the
    producer's __dlpack__ (its last request, the one it took)."""
    if not producer.requests:
        raise Violation("consumer-stream-passed", "from_dlpack never called __dlpack__")
    got = producer.requests[-1].get("stream")
    if got != stream:
        raise Violation(
            "consumer-stream-passed",
            f"asked to import on stream {stream!r}, from_dlpack called __dlpack__(stream={got!r}) "
            f"of a producer on {producer.__dlpack_device__()}",
        )


def check_to_device(x, export, *, device, declared, expected, shape, dtype):
    """__dlpack__(dl_device=device) of a CPU array, device memory the CPU
    reads (CUDA host or managed): a capsule on that device holding the
    array's values, or BufferError (a refusal the adapter's host_devices
    says the library would not make is a warning)."""
    try:
        capsule = export()
    except BufferError as e:
        if declared:
            raise Violation(
                "export-refused",
                f"__dlpack__(dl_device={device}) raised BufferError: {_first_line(e)}; the adapter "
                "says the library exports there",
            ) from None
        return f"refused: BufferError: {_first_line(e)}"
    except Exception as e:  # noqa: BLE001 - the wrong kind of refusal
        keyword_precondition(e)
        raise Violation(
            "dl-device-unsupported",
            f"__dlpack__(dl_device={device}) raised {type(e).__name__}: {_first_line(e)}, not BufferError",
        ) from None
    check_export(
        x,
        capsule,
        expected=expected,
        shape=shape,
        dtype=dtype,
        max_version=VERSION,
        dl_device=device,
    )
    return None


def python_values(v):
    """An adapter's read() as nested lists of Python values: a library's own
    array (anything with tolist()) and scalars (with item()) are converted."""
    if isinstance(v, (list, tuple)):
        return [python_values(e) for e in v]
    if isinstance(v, (bool, int, float, complex)):
        return v
    for method in ("tolist", "item"):
        if callable(getattr(v, method, None)):
            got = getattr(v, method)()
            return python_values(got) if isinstance(got, (list, tuple)) else got
    return v


def values_of(y):
    """The values of an array-API array as nested lists, element by element
    through indexing and Python's conversions (bool, int, float, complex)."""
    kind = str(y.dtype)
    convert = (
        bool
        if "bool" in kind
        else complex
        if "complex" in kind
        else float
        if "float" in kind
        else int
    )

    def at(index):
        if len(index) == y.ndim:
            return convert(y[index] if index else y)
        return [at((*index, i)) for i in range(y.shape[len(index)])]

    return at(())


def _dlpack_device(x):
    """x.__dlpack_device__() as a pair of ints, or None when x has no such
    method or it returns something else."""
    try:
        got = x.__dlpack_device__()
        pair = tuple(int(_enum_value(v)) for v in got)
    except Exception:  # noqa: BLE001 - any failure is producer/__dlpack_device__'s to judge
        return None
    return pair if len(pair) == 2 else None


def check_dlpack_device(x):
    """x.__dlpack_device__() is a (device_type, device_id) pair of ints (the
    device type may be an Enum member whose value is one)."""
    method = getattr(x, "__dlpack_device__", None)
    if method is None:
        raise Violation("dlpack-device", f"{type(x).__name__} has no __dlpack_device__ method")
    try:
        got = method()
    except Exception as e:  # noqa: BLE001 - the library's answer, judged
        raise Violation(
            "dlpack-device", f"__dlpack_device__() raised {type(e).__name__}: {_first_line(e)}"
        ) from None
    if not (
        isinstance(got, tuple)
        and len(got) == 2
        and _is_int(_enum_value(got[0]))
        and _is_int(got[1])
    ):
        raise Violation(
            "dlpack-device", f"__dlpack_device__() returned {got!r}, not (device_type, device_id)"
        )




def _protocol_object(get, what):
    """The library's dtype or device object (get()), or a Skip."""
    try:
        return get()
    except Exception as e:  # noqa: BLE001 - the array has no such object: nothing to judge
        raise Skip(f"the array has no {what} object: {type(e).__name__}: {_first_line(e)}") from None


def _protocol_answer(obj, method, spec, size):
    """obj.method() as a tuple of size ints; Skip where obj has no method."""
    call = getattr(obj, method, None)
    if call is None:
        raise Skip(f"{type(obj).__name__} publishes no {method} ({PROTOCOL_RFC}: optional)")
    try:
        got = call()
    except Exception as e:  # noqa: BLE001 - the library's answer, judged
        raise Violation(
            spec, f"{type(obj).__name__}.{method}() raised {type(e).__name__}: {_first_line(e)}"
        ) from None
    if not (isinstance(got, tuple) and len(got) == size and all(_is_int(v) for v in got)):
        raise Violation(spec, f"{type(obj).__name__}.{method}() returned {got!r}, not a tuple of {size} ints")
    return tuple(int(v) for v in got)


def _check_protocol(capsule, get, what, method, spec):
    """The array's dtype or device object (get()), where it publishes method,
    answers what its capsule carries (Capsule.dtype or .device). Returns
    (the object, its answer)."""
    want = getattr(Capsule(capsule), what)
    obj = _protocol_object(get, what)
    got = _protocol_answer(obj, method, spec, len(want))
    if got != want:
        raise Violation(spec, f"{obj!r}.{method}() is {got}; the array's capsule carries {what} {want}")
    return obj, got


def check_dtype_protocol(capsule, get_dtype):
    """The dtype object, where it publishes __dlpack_data_type__, answers the
    (code, bits, lanes) the array's capsule carries."""
    _check_protocol(capsule, get_dtype, "dtype", "__dlpack_data_type__", "dtype-protocol")


def check_device_protocol(x, capsule, get_device):
    """The device object, where it publishes __dlpack_device__, answers the
    device the array's capsule carries, and the array's own
    __dlpack_device__()."""
    obj, got = _check_protocol(capsule, get_device, "device", "__dlpack_device__", "device-protocol")
    own = _dlpack_device(x)
    if own is not None and got != own:
        raise Violation(
            "device-protocol",
            f"{obj!r}.__dlpack_device__() is {got}; the array's __dlpack_device__() is {own}",
        )


def check_to_cpu(x, export, *, copy, expected, shape, dtype):
    """__dlpack__(dl_device=(kDLCPU, 0), copy=copy): a CPU array exports
    (copy=True may be refused with BufferError); an array elsewhere copies
    to the CPU, or raises BufferError under copy=False."""
    own = _dlpack_device(x) or CPU
    try:
        capsule = export()
    except BufferError as e:
        if own != CPU and copy is False:
            return f"refused: BufferError: {e}"
        if own == CPU and copy is True:
            return f"refused: BufferError: {e}"
        raise Violation(
            "dl-device-cpu",
            f"__dlpack__(dl_device=(kDLCPU, 0), copy={copy}) of an array on {own} raised BufferError: {e}",
        ) from None
    except Exception as e:  # noqa: BLE001 - the wrong kind of refusal
        keyword_precondition(e)
        spec = "copy-needed" if own != CPU and copy is False else "dl-device-cpu"
        raise Violation(
            spec, f"__dlpack__(dl_device=(kDLCPU, 0), copy={copy}) raised {type(e).__name__}: {e}"
        ) from None
    if own != CPU and copy is False:
        raise Violation("copy-needed", f"copy=False, yet an array on {own} was exported to the CPU")
    cap = check_export(
        x,
        capsule,
        expected=expected,
        shape=shape,
        dtype=dtype,
        max_version=VERSION,
        copy=copy,
        dl_device=CPU,
    )
    if own != CPU and cap.versioned and not cap.flags & IS_COPIED:
        raise Violation(
            "is-copied-flag", f"an array on {own} was copied to the CPU without IS_COPIED"
        )


def _is_int(v):
    """An int, or an int enum (IntEnum members are ints)."""
    return isinstance(v, int) and not isinstance(v, bool)


def _enum_value(v):
    """An Enum member's value (the array API's __dlpack_device__ returns
    Tuple[Enum, int]: an Enum that is not an int, such as Open3D's, is one),
    anything else as it is."""
    return v.value if isinstance(v, enum.Enum) and not isinstance(v, int) else v


# ---- refusals ---------------------------------------------------------------


# The keywords of __dlpack__ the array API added in 2023.12, in the order
# the kit's calls pass them.
KEYWORDS = ("max_version", "dl_device", "copy")


def rejected_keyword(error):
    """The keyword of __dlpack__ a TypeError says the producer does not
    take, or None. Python's words ("got an unexpected keyword argument 'k'",
    "'k' is an invalid keyword argument"); "takes no keyword arguments"
    rejects the first the kit passes, max_version."""
    if not isinstance(error, TypeError):
        return None
    text = str(error)
    if "takes no keyword arguments" in text:
        return KEYWORDS[0]
    if "keyword" not in text:
        return None
    return next((k for k in KEYWORDS if f"'{k}'" in text), None)


def keyword_precondition(error, own=None):
    """When error says the producer does not take a keyword of __dlpack__:
    the case judged nothing (a Skip naming the keyword and the one case that
    reports it), unless it is that case (own, the keyword it is about): then
    the one entry, export-keywords. Returns when error is something else."""
    keyword = rejected_keyword(error)
    if keyword is None:
        return
    words = f"{type(error).__name__}: {_first_line(error)}"
    if keyword == own:
        raise Violation("export-keywords", f"__dlpack__ does not take {keyword}: it raised {words}")
    raise Skip(
        f"__dlpack__ does not take {keyword} ({words}): not judged; reported once, by "
        f"producer/keywords/takes-{keyword}"
    )


def refused(error, policy, producer=None):
    """Judges an exception the library raised where a case called it, as the
    case's policy says; always raises: Refused (the case passes), Skip, or
    Violation. A consumer's refusal is first held to the deleter rule; a
    producer's to the keywords it takes (keyword_precondition)."""
    words = f"{type(error).__name__}: {_first_line(error)}"
    if producer is None:
        keyword_precondition(error, policy[1] if isinstance(policy, tuple) and policy[0] == "keyword" else None)
        if isinstance(policy, tuple) and policy[0] == "keyword":
            policy = "export"
        if policy == "precondition":  # the call only makes what the check reads
            raise Skip(f"the call the check needs was refused ({words}): not judged")
    if producer is not None:
        if producer.refused_request:
            if policy == "consumer-basic":
                raise Violation(
                    "consumer-max-version",
                    f"from_dlpack asked for a legacy capsule only ({producer.refused_request}): it "
                    "imports no versioned tensor",
                )
            raise Skip(
                f"the library asked for a legacy capsule only ({producer.refused_request}); the tensor "
                "is versioned: not judged; reported once, by consumer/versioned/contiguous"
            )
        # The exception's traceback keeps the library's frames, and what they
        # hold (an owner of the tensor, say), alive: a consumer frees those
        # once the exception is gone, so the deleter is judged after that.
        _drop_frames(error)
        try:
            check_released(producer)
        except Violation as v:
            raise Violation(v.spec, f"from_dlpack raised {words}; then: {v}") from None
    if isinstance(policy, tuple):  # ("raise", spec): BufferError is the one answer
        if isinstance(error, BufferError):
            raise Refused(f"raised {words}")
        raise Violation(policy[1], f"raised {words}, not BufferError")
    if policy == "ok":
        raise Refused(f"refused: {words}")
    if policy == "refuse-with-buffer-error":  # may refuse; BufferError is how
        if isinstance(error, BufferError):
            raise Refused(f"refused: {words}")
        raise Violation("consumer-refusal-type", f"raised {words}, not BufferError")
    if policy == "export-legacy":  # no max_version: a versioned-only producer may refuse
        if isinstance(error, BufferError):
            raise Refused(f"refused: {words}")
        raise Violation("export-error-type", f"__dlpack__() raised {words}, not BufferError")
    if policy == "export":
        if isinstance(error, BufferError):
            raise Violation("export-refused", f"__dlpack__ refused with {words}")
        raise Violation("export-error-type", f"__dlpack__ raised {words}, not BufferError")
    raise Violation(policy, f"raised {words}")


def _drop_frames(error):
    """Lets go of the frames error's traceback holds, and its context's."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error.__traceback__ = None
        error = error.__cause__ or error.__context__


def _first_line(error, limit=300):
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else ""
    return text if len(text) <= limit else text[:limit] + "..."
