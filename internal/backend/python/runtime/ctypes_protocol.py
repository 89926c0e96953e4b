# The ctypes module's own part: the DLPack protocol in pure ctypes. dlgen
# copies it into dlpack_ctypes.py after the generated declarations (the
# ctypes.Structure classes, _LEAVES, the enums, constants and capsule names:
# dlgen's internal/backend/python/handover.go lists what it reads) and shared.py,
# whose rules it uses.
import ctypes
import gc
import math
import os
import struct
import sys
import threading

# The hot paths read and write a whole managed struct with one precompiled
# struct.Struct (built from the ctypes offsets) rather than field by field:
# ctypes attribute access costs more than everything else together.

_py = ctypes.pythonapi
_P = "Q" if _POINTER_SIZE == 8 else "I"


def _api(name, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, _py))


_sum = sum
_raw_malloc = _api("PyMem_RawMalloc", ctypes.c_void_p, ctypes.c_size_t)
_raw_free = _api("PyMem_RawFree", None, ctypes.c_void_p)


def _permanent_cstring(text):
    """A NUL-terminated copy of text that is never freed: capsules keep a
    pointer to their name, and may outlive this module's globals. A ctypes
    pointer, which a foreign call passes without converting it."""
    raw = text.encode() + b"\0"
    addr = _raw_malloc(len(raw))
    if not addr:
        raise MemoryError
    ctypes.memmove(addr, raw, len(raw))
    return ctypes.c_void_p(addr)


_NAME = _permanent_cstring(CAPSULE_NAME)
_USED_NAME = _permanent_cstring(USED_CAPSULE_NAME)
_VNAME = _permanent_cstring(VERSIONED_CAPSULE_NAME)
_USED_VNAME = _permanent_cstring(USED_VERSIONED_CAPSULE_NAME)
_NAMES = {CAPSULE_NAME.encode(): (_NAME, _USED_NAME, False),
          VERSIONED_CAPSULE_NAME.encode(): (_VNAME, _USED_VNAME, True)}

_capsule_new = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p,
                    ctypes.c_void_p)
# The capsule is passed as its address, id(capsule), while a local name
# holds it: a py_object made for the calls costs a third of one call.
_capsule_get_name = _api("PyCapsule_GetName", ctypes.c_char_p, ctypes.c_void_p)
_capsule_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)
_capsule_set_name = _api("PyCapsule_SetName", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_capsule_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_capsule_get_destructor = _api("PyCapsule_GetDestructor", ctypes.c_void_p, ctypes.py_object)
_id = id
_string_at = ctypes.string_at
_memmove = ctypes.memmove
_refcount = sys.getrefcount
_prod = math.prod


def _at(ctype, path):
    """The offset and ctypes type of the field at path ("dl_tensor.dtype")."""
    offset, t = 0, ctype
    for name in path.split("."):
        offset += getattr(t, name).offset
        t = dict(t._fields_)[name]
    return offset, t


# A DLDataType is read and written as one word, its code, bits and lanes as
# the C struct lays them out: an import looks it up whole in _WHOLE_BYTES.
_DTYPE_LAYOUT = struct.Struct("=" + "".join(code for _, code in _LEAVES["DLDataType"]))
_DTYPE_WORD = struct.Struct("=I")
assert _DTYPE_LAYOUT.size == _DTYPE_WORD.size == ctypes.sizeof(DLDataType)


def _dtype_word(code, bits, lanes):
    return _DTYPE_WORD.unpack(_DTYPE_LAYOUT.pack(code, bits, lanes))[0]


def _dtype_fields(word):
    """(code, bits, lanes) of a dtype word."""
    return _DTYPE_LAYOUT.unpack(_DTYPE_WORD.pack(word))


def _leaves_of(ctype):
    """ctype's generated _LEAVES entry with each DLDataType as one word."""
    leaves = []
    for path, code in _LEAVES[ctype.__name__]:
        parent = path.rpartition(".")[0]
        if parent and _at(ctype, parent)[1] is DLDataType:
            if (parent, "I") not in leaves:
                leaves.append((parent, "I"))
        else:
            leaves.append((path, code))
    return leaves


# The fields of a managed tensor the protocol reads and writes. A field a
# later release adds is neither read nor set: an export writes it as zero.
_PROTOCOL_FIELDS = frozenset(("version", "manager_ctx", "deleter", "flags", "dl_tensor"))


def _protocol_leaves(ctype):
    """_leaves_of a managed tensor's ctype, those of _PROTOCOL_FIELDS."""
    return [(path, code) for path, code in _leaves_of(ctype)
            if path.partition(".")[0] in _PROTOCOL_FIELDS]


def _struct_of(ctype):
    """A struct.Struct reading the protocol's scalar fields of a managed
    tensor's ctype (_protocol_leaves) at this machine's C offsets."""
    fmt, pos = "=", 0
    for path, code in _protocol_leaves(ctype):
        code = _P if code == "P" else code
        offset = _at(ctype, path)[0]
        if offset > pos:
            fmt += f"{offset - pos}x"
        fmt += code
        pos = offset + struct.calcsize("=" + code)
    return struct.Struct(fmt)


_VERSIONED = _struct_of(DLManagedTensorVersioned)
_LEGACY = _struct_of(DLManagedTensor)
# A Tensor's data, device, dtype and byte_offset are one tuple, _head,
# laid out as _VERSIONED reads a managed tensor: an import keeps what it
# read (one store where seven would cost a tenth of an import), and every
# other Tensor gets one from _head_of. These index it.
_HEAD_INDEX = {path: i for i, (path, _) in enumerate(_protocol_leaves(DLManagedTensorVersioned))}
_DATA, _DEV_TYPE, _DEV_ID, _DTYPE, _BYTE_OFFSET = (
    _HEAD_INDEX["dl_tensor." + name] for name in
    ("data", "device.device_type", "device.device_id", "dtype", "byte_offset"))


def _head_of(data, device, dtype, byte_offset):
    """A Tensor's _head: data, device (type, id), dtype (code, bits,
    lanes) and byte_offset where _VERSIONED puts them, 0 elsewhere."""
    head = [0] * len(_HEAD_INDEX)
    head[_DATA], (head[_DEV_TYPE], head[_DEV_ID]) = data, device
    head[_DTYPE], head[_BYTE_OFFSET] = _dtype_word(*dtype), byte_offset
    return tuple(head)


_VSIZE = ctypes.sizeof(DLManagedTensorVersioned)
_LSIZE = ctypes.sizeof(DLManagedTensor)
# Memory is read in place, by struct.unpack_from over _MEMORY, a byte view
# of a ctypes array laid over the address space from 0: a read makes no
# object but its values (a ctypes array laid over each struct would cost a
# tenth of an import, and struct reads a memoryview faster than the ctypes
# array itself). An address past its end (2^63 - 1, or 2^31 - 1 with 32-bit
# pointers) is read through a ctypes array laid over it (from_address).
# _WORDS is the same memory as pointer-sized words, _WORDS[address >>
# _WORD_SHIFT], for one aligned word read or written in place.
_MEMORY = memoryview((ctypes.c_char * (sys.maxsize & -_POINTER_SIZE)).from_address(0)).cast("B")
_WORDS = _MEMORY.cast(_P)
_WORD_SHIFT = _POINTER_SIZE.bit_length() - 1
_PAST_MEMORY = (struct.error, OverflowError, IndexError)


def _read(unpack_from, size, address):
    """unpack_from (a Struct's) of the size bytes at address."""
    try:
        return unpack_from(_MEMORY, address)
    except _PAST_MEMORY:
        return unpack_from((ctypes.c_char * size).from_address(address))


# --- Taking a capsule ----------------------------------------------------------
#
# A consumer takes a capsule by reading its name, checking it and writing
# used_... over it, and only one may: a second one would own the tensor too,
# and the producer's deleter would run twice. In C under the GIL those steps
# are one step; here they are several Python steps, between which another
# thread may run (on a free-threaded build, at the same time). So every path
# that takes a capsule (the in-place one in from_dlpack, _take) does all of
# its reading, checking and renaming holding _taking, and nothing else
# renames a capsule: tests/python/test_thread_stress.py has threads race for
# one capsule, and tests/python/test_lint.py checks that every rename is
# made holding _taking. The lock makes this module's consumers take turns;
# a capsule handed to two different consumers at once (this module and
# NumPy's C, say) is as safe as the other one makes it. It is taken as
# _take_turn(), then try: ... finally: _end_turn() (a `with` costs several
# times as much on 3.11).
_taking = threading.Lock()
_take_turn, _end_turn = _taking.acquire, _taking.release

# A capsule taken in place: on CPython a PyCapsule is the object's head and
# then its pointer and its name, which PyCapsule_GetPointer reads and
# PyCapsule_SetName writes, and nothing else. Reading and writing them
# through _WORDS and _NAME_STRINGS spares an import two of its three
# foreign calls (each costs more than NumPy's whole exchange). The layout is
# private to CPython, so _capsule_layout_holds tries it on a capsule
# PyCapsule_New made, and anywhere it does not hold (another interpreter,
# another layout) the foreign calls (_take) take over; so they do when
# DLGEN_CTYPES_IN_PLACE=0 is set at import. The name is read as
# PyCapsule_GetName and strcmp would: _NAME_STRINGS[i] is the C string the
# word _WORDS[i] points to, read by the c_char_p getter (strlen, then a
# copy), so no byte past its terminating NUL is read, whatever its length.
_CAPSULE_AT = object.__basicsize__  # PyObject_HEAD, whatever the build
_NAME_AT = _CAPSULE_AT + _POINTER_SIZE  # _WORDS[(id(capsule) + _NAME_AT) >> _WORD_SHIFT]
_NAME_STRINGS = (ctypes.c_char_p * (sys.maxsize // _POINTER_SIZE)).from_address(0)
_VNAME_TEXT = VERSIONED_CAPSULE_NAME.encode()
_USED_VNAME_ADDRESS = _USED_VNAME.value


def _capsule_layout_holds():
    """Whether capsules are laid out as the in-place path reads them here: a
    capsule made with a known pointer and name reads back as such, and a
    name written in place (in _WORDS) is the one PyCapsule_GetName gives."""
    if sys.implementation.name != "cpython":
        return False
    probe = _capsule_new(_NAME.value, _VNAME, None)  # any non-NULL pointer but the name
    at = (_id(probe) + _NAME_AT) >> _WORD_SHIFT
    try:
        if (_id(probe) + _NAME_AT) % _POINTER_SIZE or _WORDS[at - 1] != _NAME.value:
            return False
        if _WORDS[at] != _VNAME.value or _NAME_STRINGS[at] != _VNAME_TEXT:
            return False
        _WORDS[at] = _USED_VNAME_ADDRESS  # a probe of this module's own: no one else takes it
        return _capsule_get_name(_id(probe)) == USED_VERSIONED_CAPSULE_NAME.encode()
    except _PAST_MEMORY:
        return False


# DLGEN_CTYPES_IN_PLACE=0 at import turns the in-place path off.
_CAPSULE_IN_PLACE = os.environ.get("DLGEN_CTYPES_IN_PLACE") != "0" and _capsule_layout_holds()


# Bound once for the import path, where each attribute lookup shows.
_read_versioned = _VERSIONED.unpack_from
_dims_structs = {}


def _dims(n):
    """A struct.Struct of n int64, and the unpack_from of n uint64."""
    s = _dims_structs.get(n)
    if s is None:
        s = _dims_structs[n] = (struct.Struct(f"={n}q"), struct.Struct(f"={n}Q").unpack_from)
    return s


# The unpack_from of n uint64, by n, for the import path (a tuple index
# costs less than a dict lookup there).
_read_unsigned_dims = tuple(_dims(n)[1] for n in range(_MAX_NDIM + 1))


def _read_dims(n, address):
    s = _dims(n)[0]
    return _read(s.unpack_from, s.size, address)


# Calling a producer's deleter: a ctypes prototype per function address. It
# keeps the GIL, as NumPy and PyTorch call deleters (releasing and taking it
# back costs a tenth of an import).
_Deleter = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
_deleters = {}


def _deleter(fn):
    """The callable ctypes function at address fn, None for NULL."""
    if not fn:
        return None
    call = _deleters.get(fn)
    if call is None:
        call = _Deleter(fn)
        if len(_deleters) < 256:
            _deleters[fn] = call
    return call


# --- Exports without callbacks --------------------------------------------------
#
# A Python function behind a ctypes callback cannot keep a foreign exception:
# consumers drop capsules and call deleters with their own error set (NumPy
# refusing a dtype, Paddle), and CPython turns any Python code run then into a
# SystemError and loses that error (a debug build aborts). So no Python code
# runs when a consumer is done with an export. Its deleter is the C library's
# time(): a C function that needs no GIL, cannot fail, and writes the clock
# over the first word of the managed struct, which this module owns. Its
# capsule's destructor is PyCapsule_GetContext, C that reads the dying
# capsule and changes nothing: it is there to be seen, not to run. The
# structs live in slots of raw memory that is never given back to the
# system, so a late deleter call is harmless, even after the interpreter has
# gone.
#
# Ownership follows the capsule's destructor. A consumer takes the tensor by
# renaming the capsule used_... or by clearing (or replacing) its destructor,
# as nanobind does, and then calls the deleter once. What consumers are done
# with is taken back by this module's own code, never theirs: an export whose
# first word changed (deleted), or whose capsule only this module still
# holds, still named as made and still with this module's destructor
# (dropped unconsumed). Taking the latter back does what a capsule destructor
# does: it calls the deleter its managed tensor names (a consumer, or the
# conformance kit, may have put its own there).
#
# Each export is looked at by this module's next export, then after 2, 4,
# 8, ... more exports: an export released soon comes back at once (a loop
# handing each buffer to NumPy keeps two or three alive, however many other
# exports consumers hold), one released after n exports within about n more,
# and one a consumer holds long costs ever less to watch. After each garbage
# collection, and at Tensor.close() while exports hold the tensor, _sweep()
# looks at them all.

_libc = ctypes.CDLL(None) if os.name != "nt" else ctypes.cdll.msvcrt
_EXPORT_DELETER = ctypes.cast(_libc.time, ctypes.c_void_p).value
_EXPORT_DESTRUCTOR = ctypes.cast(_py.PyCapsule_GetContext, ctypes.c_void_p).value
# Where a managed struct names its deleter, by the capsule's unused name.
_DELETER_AT = {_VNAME.value: _at(DLManagedTensorVersioned, "deleter")[0],
               _NAME.value: _at(DLManagedTensor, "deleter")[0]}
# A slot holds a managed struct with shape and strides of up to _SLOT_NDIM
# dimensions; larger exports get raw memory of their own.
_SLOT_NDIM = 8
_SLOT = (max(_VSIZE, _LSIZE) + 16 * _SLOT_NDIM + 7) // 8 * 8
_ARENA_SLOTS = 128
# Unused slots, as (address, bytes view, words view, offset, offset in words).
_free_slots = []
# An export is a list: [(tensor, its lease) kept alive (None once given back),
# capsule (None once consumed), the struct's first word as written, the
# capsule's unused name, slot or None, the struct's address, exports to wait
# before the next look]. _fresh has those not looked at yet; _due, by export
# count, those to look at then: every export not given back is in one of
# them (with some a sweep gave back, which a look skips).
_fresh = []
_due = {}
_exports_made = 0
# One looker at a time, never reentered (a collection's sweep during a look
# skips): the token is taken by list.pop, atomic, cheaper than a Lock.
_look_token = [None]


def _refs_of_one_name():
    held = object()
    return _refcount(held)


# What sys.getrefcount says of an object that one local name holds, as _done
# asks it: 2 through CPython 3.13 (the name and the call's argument).
# Measured only where that is not known (3.14 and later count no argument
# they borrow), since a tracer reading frame locals meanwhile adds one.
_ONE_NAME = 2 if sys.version_info < (3, 14) else _refs_of_one_name()


def _new_arena():
    size = _SLOT * _ARENA_SLOTS
    base = _raw_malloc(size)
    if not base:
        raise MemoryError
    view = (ctypes.c_char * size).from_address(base)
    words = memoryview(view).cast("B").cast("Q")
    _free_slots.extend((base + offset, view, words, offset, offset >> 3)
                       for offset in range(0, size, _SLOT))


def _new_slot():
    """A free slot, from a new arena if need be: other threads may take the
    slots of one meanwhile."""
    while True:
        try:
            return _free_slots.pop()
        except IndexError:
            _new_arena()


def _first_word(address, slot):
    if slot is not None:
        return slot[2][slot[4]]
    return int.from_bytes(_string_at(address, 8), sys.byteorder)  # as the slots' words view


def _give_back(entry):
    entry[0] = entry[1] = None
    if entry[4] is not None:
        _free_slots.append(entry[4])
    else:
        _raw_free(entry[5])


def _done(entry, word):
    """Whether the consumer is done with an export whose first word is now
    word (see above)."""
    if word != entry[2]:
        return True  # deleted
    capsule = entry[1]
    if capsule is None or _refcount(capsule) > _ONE_NAME + 1:  # held besides entry and here
        return False
    if (_capsule_is_valid(capsule, entry[3])
            and _capsule_get_destructor(capsule) == _EXPORT_DESTRUCTOR):
        _delete_unconsumed(entry)
        return True  # dropped unconsumed
    entry[1] = None  # consumed: its consumer calls the deleter
    return False


def _delete_unconsumed(entry):
    """What the capsule's destructor does for a capsule dropped unconsumed:
    calls the deleter its managed tensor names, unless that is still this
    module's own (which only marks the struct given back next)."""
    address = entry[5]
    at = address + _DELETER_AT[entry[3].value]
    fn = int.from_bytes(_string_at(at, _POINTER_SIZE), sys.byteorder)
    if fn != _EXPORT_DELETER and fn:
        _deleter(fn)(address)


def _look_at(batch, now):
    """Looks at the exports of batch, emptying it (see above)."""
    while batch:
        entry = batch.pop()
        if entry[0] is None:
            continue  # a sweep gave it back
        slot = entry[4]
        word = slot[2][slot[4]] if slot is not None else _first_word(entry[5], None)
        if word != entry[2] or _done(entry, word):  # _done's first test inline: deleted
            _give_back(entry)
            continue
        wait = entry[6] = 2 * entry[6]
        later = _due.get(now + wait)
        if later is None:
            _due[now + wait] = [entry]
        else:
            later.append(entry)


def _look_at_due():
    """At each export: looks at the exports due (see above)."""
    global _exports_made
    try:
        _look_token.pop()
    except IndexError:
        return  # another thread is at it: the next export looks
    try:
        _exports_made = now = _exports_made + 1
        due = _due.pop(now, None)
        if due is not None:
            _look_at(due, now)
        _look_at(_fresh, now)  # popped one by one: what another thread appends meanwhile stays
    finally:
        _look_token.append(None)


def _sweep():
    """Takes back every export consumers are done with (see above)."""
    try:
        _look_token.pop()
    except IndexError:
        return  # a collection while exports are looked at: the next sweep
    try:
        for entry in _live_exports():
            if _done(entry, _first_word(entry[5], entry[4])):
                _give_back(entry)
    finally:
        _look_token.append(None)


def _live_exports():
    """The exports not given back yet."""
    return [entry for batch in [_fresh, *_due.values()] for entry in batch if entry[0] is not None]


def _sweep_after_collection(phase, info):
    if phase == "stop" and (_fresh or _due):
        _sweep()


gc.callbacks.append(_sweep_after_collection)


_TYPESTR = {int(DLDataTypeCode.kDLInt): "i", int(DLDataTypeCode.kDLUInt): "u",
            int(DLDataTypeCode.kDLFloat): "f", int(DLDataTypeCode.kDLComplex): "c",
            int(DLDataTypeCode.kDLBool): "b"}
_FORMAT = {("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q", ("u", 1): "B",
           ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q", ("f", 2): "e", ("f", 4): "f",
           ("f", 8): "d", ("c", 8): "Zf", ("c", 16): "Zd", ("b", 1): "?"}


class _Lease:
    """What keeps a tensor's memory valid: release(held) runs once, when the
    last holder lets go. A producer's managed tensor is (its deleter, its
    address), a buffer-protocol view (PyBuffer_Release, the view). The
    Tensor holds it in _keep until close(), and each live export of the
    Tensor holds it too, so either may finish first. Memory an owner object
    keeps valid has (None, owner) in _keep instead: nothing to run. It has
    no __init__: _Lease() runs no Python code."""

    __slots__ = ("held", "release")

    def __del__(self):
        self.release(self.held)


_NO_HOOKS = (None, None)  # a Tensor's _hooks without from_pointer's


class Tensor:
    """A DLPack tensor: imported from a producer (owning the producer's
    managed tensor until close()), a private copy, or a view of memory a
    framework owns (from_pointer, from_buffer). Once closed, whatever reads
    it raises ValueError."""

    # _flags: the tensor's flag bits as this module keeps them: READ_ONLY for
    # a read-only tensor (a producer's or the user's word), IS_COPIED,
    # IS_SUBBYTE_TYPE_PADDED. _hooks: from_pointer's (on_stream, on_copy).
    __slots__ = ("__weakref__", "_flags", "_head", "_hooks", "_keep", "_shape",
                 "_stream", "_strides")

    def __init__(self):
        raise TypeError("use from_dlpack() to make a Tensor")

    # -- properties: each one of a closed tensor raises ----------------------

    def _open(self):
        """Returns self, or raises ValueError for a closed tensor."""
        if self._keep is None:
            raise ValueError(_CLOSED)
        return self

    @property
    def shape(self):
        return self._open()._shape

    @property
    def strides(self):
        """In elements."""
        return self._open()._strides

    @property
    def byte_offset(self):
        return self._open()._head[_BYTE_OFFSET]

    @property
    def readonly(self):
        return self._open()._flags & _READ_ONLY != 0

    @property
    def copied(self):
        return self._open()._flags & _IS_COPIED != 0

    @property
    def dtype(self):
        self._open()
        return DataType(*_dtype_fields(self._head[_DTYPE]))

    @property
    def device(self):
        self._open()
        return Device(self._head[_DEV_TYPE], self._head[_DEV_ID])

    @property
    def ndim(self):
        return len(self._open()._shape)

    @property
    def size(self):
        return math.prod(self._open()._shape)

    @property
    def _itemsize(self):
        _, bits, lanes = _dtype_fields(self._head[_DTYPE])
        return (bits * lanes + 7) // 8

    @property
    def nbytes(self):
        """Bytes the elements occupy; sub-byte elements are packed unless the
        producer flagged them padded."""
        _, bits, lanes = _dtype_fields(self._head[_DTYPE])
        return _nbytes(self.size, bits, lanes, self._flags & _SUBBYTE_PADDED)

    @property
    def data_ptr(self):
        """Address of the first element (data + byte_offset)."""
        h = self._open()._head
        return h[_DATA] + h[_BYTE_OFFSET]

    @property
    def closed(self):
        return self._keep is None

    def is_contiguous(self):
        return _contiguous(self._open()._shape, self._strides)

    def close(self):
        """Gives the tensor back to its producer (calls the deleter once), or
        lets go of its owner: now, unless an export of it is still held
        (then when the last consumer is done with its export, at this
        module's next look: docs/python.md)."""
        keep, self._keep = self._keep, None
        if keep is not None and (_fresh or _due) and _refcount(keep) > _ONE_NAME:
            _sweep()  # exports hold it: those consumers are done with go now

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self._keep is None:
            return "Tensor(closed)"
        return (f"Tensor(shape={self._shape!r}, strides={self._strides!r}, dtype={self.dtype!r}, "
                f"device={self.device!r}, readonly={self.readonly!r})")

    def _check_readable(self):
        """Before the CPU reads the memory: open, and not a device's. Returns
        the lease, read once: while the caller holds it, a close() by
        another thread gives nothing back. It is read after the checks, so
        that a refusal's traceback holds no lease and close() still gives
        the memory back."""
        if self._keep is None:
            raise ValueError(_CLOSED)
        _check_host_readable(self._head[_DEV_TYPE], self._head[_DEV_ID])
        keep = self._keep
        if keep is None:  # closed by another thread meanwhile
            raise ValueError(_CLOSED)
        return keep

    # -- consumers ------------------------------------------------------------

    @property
    def __array_interface__(self):
        self._check_readable()  # the refusals first: the lease is read after them
        code, bits, lanes = _dtype_fields(self._head[_DTYPE])
        kind = _TYPESTR.get(code)
        if kind is None or lanes != 1 or bits % 8:
            raise BufferError(_NO_BUFFER % (self.dtype,))
        keep = self._check_readable()
        itemsize = bits // 8
        order = "|" if itemsize == 1 else "<" if sys.byteorder == "little" else ">"  # native
        strides = tuple(s * itemsize for s in self._strides)
        # The data as a buffer that holds the tensor's lease, so that the
        # array outlives close() as an export does; it spans the elements
        # from the lowest address, and offset finds the first one.
        low = high = 0
        if self.size:
            for extent, stride in zip(self._shape, strides, strict=True):
                reach = (extent - 1) * stride
                low, high = (low + reach, high) if reach < 0 else (low, high + reach)
            high += itemsize
        memory = (ctypes.c_char * (high - low)).from_address(self.data_ptr + low)
        memory.lease = keep
        return {
            "version": 3,
            "shape": self._shape,
            "typestr": f"{order}{kind}{itemsize}",
            "data": memoryview(memory).toreadonly() if self._flags & _READ_ONLY else memory,
            "offset": -low,
            "strides": strides,
        }

    def __buffer__(self, flags):
        """memoryview(t) on Python 3.12+, zero-copy for contiguous tensors."""
        self._check_readable()  # the refusals first: the lease is read after them
        code, bits, lanes = _dtype_fields(self._head[_DTYPE])
        fmt = _FORMAT.get((_TYPESTR.get(code), self._itemsize))
        if fmt is None or lanes != 1 or bits % 8:
            raise BufferError(_NO_BUFFER % (self.dtype,))
        if not self.is_contiguous():
            raise BufferError("only contiguous tensors export a buffer")
        nbytes = self.size * self._itemsize
        if not nbytes:  # memoryview cannot take a shape with a zero in it
            raise BufferError(f"an empty tensor of shape {self._shape} has no buffer")
        keep = self._check_readable()
        memory = (ctypes.c_char * nbytes).from_address(self.data_ptr)
        memory.lease = keep  # the view is an export: it outlives close()
        view = memoryview(memory)
        if self._flags & _READ_ONLY:
            view = view.toreadonly()
        return view.cast("B").cast(fmt, self._shape)

    def tobytes(self):
        """The elements in C order, as bytes (a copy)."""
        lease = self._check_readable()  # held while copying
        out = bytes(_copy_contiguous(self))
        del lease
        return out

    # -- producers ------------------------------------------------------------

    def __dlpack_device__(self):
        if self._keep is None:
            raise ValueError(_CLOSED)
        return (self._head[_DEV_TYPE], self._head[_DEV_ID])

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._keep is None:
            raise ValueError(_CLOSED)
        if (stream is None and dl_device is None and copy is None and type(max_version) is tuple
                and len(max_version) == 2 and max_version[0] == _MAJOR
                and (self._stream is None or self._stream[0] is None)):
            # The common request inline (_export_flags has the full rules).
            return _export(self, True, self._flags & _EXPORTED_FLAGS)
        device = (self._head[_DEV_TYPE], self._head[_DEV_ID])
        versioned, flags, target = _export_flags(device, self._flags & _READ_ONLY,
                                                 self._flags & _SUBBYTE_PADDED, stream, max_version,
                                                 dl_device, copy)
        on_stream, on_copy = self._hooks
        if target is not None:
            return _export(_export_copy(self, on_copy, target, stream), versioned, flags)
        if on_stream is not None:
            if stream is not None:
                on_stream(stream)
        elif self._stream is not None:
            _check_stream(device, stream, self._stream)
        return _export(self, versioned, flags)


_new_tensor = Tensor.__new__  # bound once, as above


def _contiguous(shape, strides):
    """Whether elements of shape with strides lie in C order, one after the
    other (a dimension of one may have any stride)."""
    rows = zip(strides, _contiguous_strides(shape), shape, strict=True)
    return 0 in shape or all(s == c for s, c, n in rows if n != 1)


_MAJOR, _MINOR = _VERSION
_KEPT_FLAGS = _READ_ONLY | _IS_COPIED | _SUBBYTE_PADDED
_EXPORTED_FLAGS = _READ_ONLY | _SUBBYTE_PADDED  # what an export of the tensor itself says
# The dtype words whose tensors the fast path of _adopt takes, with their
# bytes per element: codes known, addressable and of any width, in whole
# bytes of up to 255 bits, of 1 to 4, 8 or 16 lanes. Others take the checks
# in order (_checked).
_WHOLE_BYTES = {_dtype_word(code, bits, lanes): bits // 8 * lanes
                for code, (_, opaque, fixed) in _TYPE_CODES.items() if not opaque and not fixed
                for bits in range(8, 256, 8) for lanes in (1, 2, 3, 4, 8, 16)}


def _adopt(address, versioned, readonly):
    """Takes ownership of a managed tensor: validates it before use and
    calls its deleter (exactly once) if it is refused. readonly: None takes
    the producer's word (a legacy tensor is writable), True makes a
    read-only view, False refuses a read-only tensor."""
    if versioned:
        try:  # _read, inline
            head = _read_versioned(_MEMORY, address)
        except _PAST_MEMORY:
            head = _read(_read_versioned, _VSIZE, address)
        (major, minor, _, deleter, flags, data, dev_type, dev_id, ndim, dtype, shape_p, strides_p,
         byte_offset) = head
    else:  # no version and no flags
        (data, dev_type, dev_id, ndim, dtype, shape_p, strides_p, byte_offset, _,
         deleter) = _read(_LEGACY.unpack_from, _LSIZE, address)
        major, minor, flags = _MAJOR, None, 0
        head = _head_of(data, (dev_type, dev_id), _dtype_fields(dtype), byte_offset)
    t = _new_tensor(Tensor)
    if deleter:
        t._keep = lease = _Lease()
        lease.release, lease.held = _deleters.get(deleter) or _deleter(deleter), address
        # A refusal's traceback would keep the lease, and the deleter, past
        # close().
        del lease
    else:  # nothing to call when done
        t._keep = (None, address)
    t._stream = _NO_STREAM
    try:
        # The common tensor passes every check of rules.py at once: with its
        # dimensions read as unsigned (a negative one is then 2^63 or more),
        # some elements, data, a dtype of _WHOLE_BYTES and strides s_k >= 0,
        # the elements reach at most
        # (sum(s) + 1) * size elements from the first one, which bounds every
        # count, stride, span, offset and address the checks bound
        # (sum(s) * size >= the span, as size >= each extent).
        # Anything else is checked in order by _checked, which says why.
        # dlgen:checker ctypes-fast-path (docs/rules.md lists every checker)
        shape = None
        if major == _MAJOR and 0 < ndim <= _MAX_NDIM and shape_p and strides_p:
            dims = _read_unsigned_dims[ndim]
            try:
                shape, strides = dims(_MEMORY, shape_p), dims(_MEMORY, strides_p)
            except _PAST_MEMORY:
                pass  # _checked reads them
            else:
                size, itemsize = _prod(shape), _WHOLE_BYTES.get(dtype)
                if not (size and data and itemsize and data
                        + byte_offset + (_sum(strides) + 1) * size * itemsize < _BOUND):
                    shape = None
        if shape is None:
            code, bits, lanes = _dtype_fields(dtype)
            shape, strides = _checked(major, minor, ndim, shape_p, strides_p, code, bits, lanes,
                                      byte_offset, data, flags)
        t._flags = flags & _KEPT_FLAGS
        if readonly is not None and _readonly_import(flags, readonly):  # else the producer's word
            t._flags |= _READ_ONLY
    except BaseException:
        t.close()
        raise
    t._hooks = _NO_HOOKS
    t._shape, t._strides, t._head = shape, strides, head
    return t


def _checked(major, minor, ndim, shape_p, strides_p, code, bits, lanes, byte_offset, data, flags):
    """Every check of rules.py, in order, on an import (of version (major,
    minor), or legacy when minor is None): raises the first that fails, else
    returns the shape and strides."""
    if minor is None:
        version = _LEGACY_VERSION
    else:
        _check_version(major, minor)
        version = (major, minor)
    _check_pointers(version, ndim, not shape_p, not strides_p)
    shape = _read_dims(ndim, shape_p) if ndim and shape_p else ()
    strides = _read_dims(ndim, strides_p) if ndim and strides_p else _contiguous_strides(shape)
    _check_layout(version, shape, strides, code, bits, lanes, byte_offset, data,
                  flags & _SUBBYTE_PADDED != 0)
    return shape, strides


def _copy_contiguous(t):
    """A bytearray holding t's elements in C order."""
    itemsize = t._itemsize
    out = bytearray(t.nbytes)
    if not out:
        return out
    dst = (ctypes.c_char * len(out)).from_buffer(out)
    if t.is_contiguous():
        ctypes.memmove(dst, t.data_ptr, len(out))
        return out
    _, bits, lanes = _dtype_fields(t._head[_DTYPE])
    if bits * lanes < 8 and not t._flags & _SUBBYTE_PADDED:
        raise BufferError("packed sub-byte elements can only be copied from a contiguous tensor")
    # Strided: copy one innermost run at a time.
    inner = t._shape[-1]
    inner_stride = t._strides[-1] * itemsize
    pos = 0
    for index in _outer_indices(t._shape[:-1]):  # every dimension but the innermost
        base = t.data_ptr + sum(i * s for i, s in zip(index, t._strides, strict=False)) * itemsize
        if inner_stride == itemsize:
            ctypes.memmove(ctypes.addressof(dst) + pos, base, inner * itemsize)
            pos += inner * itemsize
        else:
            for k in range(inner):
                ctypes.memmove(ctypes.addressof(dst) + pos, base + k * inner_stride, itemsize)
                pos += itemsize
    return out


def _outer_indices(shape):
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in _outer_indices(shape[1:]):
            yield (i, *rest)


def _private_copy(t):
    """A writable, contiguous copy of t that owns its memory."""
    lease = t._check_readable()  # held while copying
    buf = _copy_contiguous(t)
    del lease
    c = _new_tensor(Tensor)
    storage = (ctypes.c_char * len(buf)).from_buffer(buf) if buf else None
    c._keep, c._hooks, c._stream = (None, (buf, storage)), _NO_HOOKS, None
    c._shape, c._strides = t._shape, _contiguous_strides(t._shape)
    c._head = _head_of(ctypes.addressof(storage) if storage is not None else 0, _CPU,
                       t.dtype, 0)
    c._flags = _IS_COPIED | t._flags & _SUBBYTE_PADDED
    return c


def _with_dims(head, size, ndim):
    """head (a managed struct's Struct, of size bytes in C), then the shape
    and strides of ndim dimensions: an export's memory in one pack."""
    return struct.Struct(f"{head.format}{size - head.size}x{2 * ndim}q")


# By ndim: a Tensor has at most _MAX_NDIM dimensions.
_VERSIONED_WITH_DIMS = tuple(_with_dims(_VERSIONED, _VSIZE, n) for n in range(_MAX_NDIM + 1))
_LEGACY_WITH_DIMS = tuple(_with_dims(_LEGACY, _LSIZE, n) for n in range(_MAX_NDIM + 1))
_pack_versioned = tuple(s.pack_into for s in _VERSIONED_WITH_DIMS)
_pack_legacy = tuple(s.pack_into for s in _LEGACY_WITH_DIMS)
# A versioned export's first word as written, its version (major, minor):
# the deleter writes over it.
_VERSION_WORD = int.from_bytes(struct.pack("=II", _MAJOR, _MINOR), sys.byteorder)


def _export(t, versioned, flags):
    """Wraps t in a new capsule; the struct lives in memory this module owns,
    and t stays alive until a look finds the export done (see above)."""
    keep = t._keep  # read once: a close() by another thread meanwhile finds it held
    if keep is None:
        raise ValueError(_CLOSED)
    _look_at_due()  # first: what it gives back, this export may reuse
    ndim = len(t._shape)
    head = _VSIZE if versioned else _LSIZE
    if ndim <= _SLOT_NDIM:
        try:
            slot = _free_slots.pop()
        except IndexError:
            slot = _new_slot()
        address, view, offset = slot[0], slot[1], slot[3]
    else:
        slot, offset = None, 0
        address = _raw_malloc(head + 16 * ndim)
        if not address:
            raise MemoryError
        view = (ctypes.c_char * (head + 16 * ndim)).from_address(address)
    shape_p = address + head if ndim else 0
    strides_p = shape_p + 8 * ndim if ndim else 0
    h = t._head
    if versioned:
        _pack_versioned[ndim](
            view, offset, _MAJOR, _MINOR, address, _EXPORT_DELETER, flags, h[_DATA], h[_DEV_TYPE],
            h[_DEV_ID], ndim, h[_DTYPE], shape_p, strides_p, h[_BYTE_OFFSET],
            *t._shape, *t._strides)
        name, first = _VNAME, _VERSION_WORD
    else:
        _pack_legacy[ndim](
            view, offset, h[_DATA], h[_DEV_TYPE], h[_DEV_ID], ndim, h[_DTYPE], shape_p, strides_p,
            h[_BYTE_OFFSET], address, _EXPORT_DELETER, *t._shape, *t._strides)
        name, first = _NAME, _first_word(address, slot)
    # The tensor's lease too: it must outlive the export even if t is closed first.
    entry = [(t, keep), None, first, name, slot, address, 1]
    try:
        entry[1] = capsule = _capsule_new(address, name, _EXPORT_DESTRUCTOR)
    except BaseException:
        _give_back(entry)
        raise
    _fresh.append(entry)
    return capsule


# --- Producers: memory a framework owns ----------------------------------------

class _PyBuffer(ctypes.Structure):
    """CPython's Py_buffer."""

    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
                ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)), ("internal", ctypes.c_void_p)]


_PyBUF_WRITABLE, _PyBUF_RECORDS_RO = 0x0001, 0x001C  # RECORDS_RO: STRIDES | FORMAT
_buffer_get = _api("PyObject_GetBuffer", ctypes.c_int, ctypes.py_object, ctypes.POINTER(_PyBuffer),
                   ctypes.c_int)
_buffer_release = _api("PyBuffer_Release", None, ctypes.POINTER(_PyBuffer))


def _new_view(lease, data, shape, strides, byte_offset, dtype, device, readonly, on_stream=None,
              on_copy=None):
    t = _new_tensor(Tensor)
    t._keep, t._hooks, t._stream = lease, (on_stream, on_copy), None
    t._shape, t._strides, t._head = shape, strides, _head_of(data, device, dtype, byte_offset)
    t._flags = _READ_ONLY if readonly else 0
    return t


def from_pointer(address, shape, dtype, /, *, strides=None, byte_offset=0, device=(1, 0),
                 owner=None, readonly=False, on_stream=None, on_copy=None, byte_strides=None):
    """A Tensor over memory the caller owns, zero-copy: the address of the
    data, shape, dtype (a name such as "float32", or a DataType), strides in
    elements (None: C-contiguous) or byte_strides in bytes (NumPy's
    .strides), device as (device_type, device_id).

    owner (any object) stays alive until the Tensor is closed or collected
    and every capsule exported from it has been deleted by its consumer, in
    either order. On a device with streams, __dlpack__(stream=s) calls
    on_stream(s) first, for the framework to make stream s wait for its
    work; a CPU tensor refuses a stream. An export that needs a copy this
    module cannot make (copy=True or a dl_device off the CPU for memory the
    CPU cannot read) calls on_copy(device, stream), which returns a Tensor, a
    capsule or any DLPack object holding a new copy on device, ready for
    work on stream; without on_copy, such an export is a BufferError.
    Arguments are checked as an import is: ValueError or TypeError, and
    nothing is kept.

    JAX (jnp.from_dlpack) shares memory only when the first element
    (data_ptr) is 64-byte aligned; it copies otherwise, and copy=False is
    then a ValueError. To share with JAX, allocate 63 bytes more and start
    at the next multiple of 64: address = (base + 63) & ~63."""
    dtype, device = _data_type(dtype), _device(device)
    address, byte_offset = _pointer_address(address, _DATA_ADDRESS), _byte_offset(byte_offset)
    if on_stream is not None and not callable(on_stream):
        raise TypeError("on_stream must be callable")
    if on_copy is not None and not callable(on_copy):
        raise TypeError("on_copy must be callable")
    shape = _dims_arg(shape, "shape")
    strides = _strides_arg(shape, strides, byte_strides, dtype)
    if strides is None:
        strides = _contiguous_strides(shape)
    _check_layout(_VERSION, shape, strides, *dtype, byte_offset, address, False, error=ValueError)
    return _new_view((None, owner), address, shape, strides, byte_offset, dtype, device,
                     bool(readonly), on_stream, on_copy)


def from_buffer(obj, /, *, readonly=None):
    """A CPU Tensor over any buffer-protocol object (bytearray, array.array,
    mmap, memoryview, ctypes arrays, ...), zero-copy: dtype from the buffer's
    format, shape and strides from the buffer. Read-only when the buffer is
    or readonly=True; readonly=False insists on a writable buffer. The
    buffer is held until the Tensor and every export of it are done.

    JAX shares memory only when the first element is 64-byte aligned (see
    from_pointer): an mmap.mmap(-1, size) is page-aligned, a bytearray or a
    NumPy array need not be."""
    view = _PyBuffer()
    flags = _PyBUF_RECORDS_RO | (_PyBUF_WRITABLE if readonly is False else 0)
    _buffer_get(obj, ctypes.byref(view), flags)
    lease = _Lease()  # gives the buffer back, whatever happens next
    lease.release, lease.held = _buffer_release, view
    if view.ndim > _MAX_NDIM:
        raise _broken("ndim_range", view.ndim, _MAX_NDIM)
    dtype = _format_dtype((view.format or b"B").decode("ascii"), view.itemsize)
    shape = tuple(view.shape[i] for i in range(view.ndim))
    if view.strides:
        strides = _element_strides([view.strides[i] for i in range(view.ndim)], view.itemsize)
    else:  # ctypes arrays give none: C-contiguous
        strides = _contiguous_strides(shape)
    return _new_view(lease, view.buf or 0, shape, strides, 0, dtype, _CPU,
                     bool(view.readonly) or bool(readonly))


def from_dlpack(x, /, *, device=None, copy=None, readonly=None, stream=None):
    """Imports x (an object with __dlpack__, or a DLPack capsule) as a Tensor,
    zero-copy, on whatever device it lives: memory the CPU cannot read is
    held and handed on, never read.

    Asks x.__dlpack__ once for a versioned capsule with the keywords given,
    and once more for a legacy one if that raises TypeError. stream (the
    array API's: an integer for CUDA and ROCm, a SYCL queue for oneAPI) goes
    to the producer as it is, to make its work visible on that stream; the
    Tensor then hands its data on to consumers on that stream only (or to
    ones asking for no synchronisation). device=(kDLCPU, 0) asks the
    producer for a copy on the host if it must (any other device likewise);
    a tensor elsewhere is a BufferError. copy=True returns a copy (the
    producer's, or a private one of memory the CPU reads); copy=False
    forbids one. readonly=None takes the producer's word (its READ_ONLY
    flag; a legacy capsule carries none and imports writable, as PyTorch,
    CuPy and MXNet import it), True gives a read-only view, False refuses a
    read-only tensor.

    A legacy capsule cannot say that its memory must not be written: JAX
    exports only legacy capsules, of immutable arrays. A consumer that
    writes should not trust one: pass readonly=True, or take NumPy's policy
    (legacy means read-only) with address, versioned = to_managed(x), then
    from_managed(address, versioned=versioned, readonly=None if versioned
    else True)."""
    if device is None and copy is None and stream is None and type(x) is not _CapsuleType:
        # The common request inline, with no bound method made (_request_capsule
        # has the full rules), and a versioned capsule taken inline (_take has
        # them).
        try:
            capsule = x.__dlpack__(max_version=_VERSION)
        except TypeError:
            capsule = x.__dlpack__()
        except AttributeError:
            if getattr(x, "__dlpack__", None) is not None:
                raise
            capsule = _request_capsule(x, None, None, None)  # says what is missing
        if _CAPSULE_IN_PLACE and type(capsule) is _CapsuleType:
            # A versioned capsule taken in place, as _take would with two
            # foreign calls (see "Taking a capsule"); capsule stays alive
            # meanwhile.
            at = (_id(capsule) + _NAME_AT) >> _WORD_SHIFT
            _take_turn()
            try:
                address = _WORDS[at - 1]
                taken = address and _NAME_STRINGS[at] == _VNAME_TEXT
                if taken:
                    _WORDS[at] = _USED_VNAME_ADDRESS
            except _PAST_MEMORY:  # an object above 2^31 - 1, with 32-bit pointers
                taken = False
            finally:
                _end_turn()
            if taken:
                return _adopt(address, True, readonly)
        return _adopt(*_take(capsule), readonly)
    if device is not None:
        device = _device(device)
    if type(x) is _CapsuleType:
        _check_capsule_stream(stream)
        t = _adopt(*_take(x), readonly)
    else:
        t = _adopt(*_take(_request_capsule(x, copy, device, stream)), readonly)
        if stream is not None:
            t._stream = (stream,)
    if device is not None and not _on_device(t.device, device):
        have = tuple(t.device)
        t.close()
        raise BufferError(f"the producer gave its tensor on device {have!r}, not {tuple(device)!r}")
    if not copy or t._flags & _IS_COPIED:
        return t
    try:
        c = _private_copy(t)
    finally:
        t.close()
    if readonly:
        c._flags |= _READ_ONLY
    return c


def from_managed(address, /, *, versioned=True, readonly=None):
    """Adopts a managed tensor that C code handed over, such as a c-shared
    library's export or what to_managed returned: a DLManagedTensorVersioned*,
    or with versioned=False a legacy DLManagedTensor*. The Tensor owns it,
    validates it and calls its deleter exactly once. readonly as in
    from_dlpack."""
    address = _pointer_address(address, _MANAGED_ADDRESS)
    if not address:
        raise ValueError("from_managed of a NULL pointer")
    return _adopt(address, versioned, readonly)


def to_managed(x, /, *, versioned=True):
    """Consumes x (an object with __dlpack__, or a capsule) and returns
    (address, versioned): the managed tensor it held, and whether that is a
    DLManagedTensorVersioned* or, when False, a legacy DLManagedTensor*
    (what versioned=False asks for, and what JAX and other producers of
    legacy capsules give). The caller owns it and must see its deleter
    called exactly once: from_managed(address, versioned=versioned), or a C
    or Go importer."""
    capsule = x if type(x) is _CapsuleType else _request_managed(x, versioned)
    return _take(capsule)


def _take(capsule):
    """Takes the managed tensor out of a capsule, renaming it used_*."""
    if type(capsule) is not _CapsuleType:
        raise TypeError(f"__dlpack__ returned {type(capsule).__name__}, not a capsule")
    held = _id(capsule)  # capsule stays alive: the calls take its address
    _take_turn()  # one taker at a time (see "Taking a capsule")
    try:
        try:  # the common case first: one call instead of asking for the name
            address = _capsule_get_pointer(held, _VNAME)
        except ValueError:  # another name: CPython says so with a ValueError
            address = None
        if address:
            _capsule_set_name(held, _USED_VNAME)
            return address, True
        name = _capsule_get_name(held)
        entry = _NAMES.get(name)
        if entry is None:
            raise _not_a_capsule(name)
        cname, used, versioned = entry
        address = _capsule_get_pointer(held, cname)
        if not address:
            raise BufferError("the capsule holds a NULL tensor")
        _capsule_set_name(held, used)
    finally:
        _end_turn()
    return address, versioned


