# The Cython module's own part: the DLPack protocol in Cython (the import rules
# in C, Tensor, imports, copies, exports, from_dlpack, from_managed,
# to_managed). dlgen ships it as dlpack_cython_tensor.pxi, which
# dlpack_cython.pyx includes after the generated declarations (dlgen's
# internal/backend/python/handover.go lists what it reads), the import rules
# (dlpack_cython_rules.pxi) and the shared protocol (dlpack_cython_shared.pxi);
# the exchange API and the producer API follow. The C declarations come from the .pyx's cimports of
# dlpack.pxd (`dlpack.X` where the module defines a Python name of the same
# spelling).
cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES, PyBUF_WRITABLE, PyBuffer_Release
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pycapsule cimport (PyCapsule_CheckExact, PyCapsule_GetName, PyCapsule_GetPointer, PyCapsule_IsValid,
                                PyCapsule_New, PyCapsule_SetName)
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    int Py_IsInitialized() nogil
    PyObject* PyErr_Occurred() nogil
    void PyErr_Fetch(PyObject** ptype, PyObject** pvalue, PyObject** ptraceback) nogil
    void PyErr_Restore(PyObject* ptype, PyObject* pvalue, PyObject* ptraceback) nogil


# --- The import rules in C ---------------------------------------------------
#
# rules.py has the checks of docs/rules.md and the words of every refusal, for
# both modules. The C paths decide in C, with the generated C checker of
# dlpack/dlpack_helpers.h (the same tables, order and words: the conformance
# corpus runs through it), whether a tensor passes them all; when it does
# not, rules.py is asked, and raises the first check that fails with its
# words, of the exception class the caller gives. So the two differ in speed
# only (tests/python/test_corpus.py runs the corpus against both).

cdef extern from "dlpack/dlpack_helpers.h" nogil:
    ctypedef enum dlgen_rule:
        DLGEN_OK
    ctypedef struct dlgen_error:
        pass
    dlgen_rule dlgen_check_dltensor(const DLTensor* t, int versioned, uint32_t major, uint32_t minor,
                                    int padded, int producer, dlgen_error* err)
    int dlgen_host_readable(int32_t device_type)

cdef uint32_t _C_MAJOR = _VERSION[0]
cdef uint32_t _C_MINOR = _VERSION[1]
cdef uint64_t _C_READ_ONLY = _READ_ONLY
cdef uint64_t _C_IS_COPIED = _IS_COPIED
cdef uint64_t _C_SUBBYTE_PADDED = _SUBBYTE_PADDED
cdef int _C_MAX_NDIM = _MAX_NDIM


cdef inline bint _host_readable(int device_type) noexcept nogil:
    return dlgen_host_readable(device_type)


cdef inline bint _c_passes(const DLTensor* dl, bint versioned, uint32_t major, uint32_t minor, bint padded,
                           bint producer) noexcept nogil:
    """Whether dl, of version major.minor (legacy unless versioned), passes
    every check of rules.py after the version's (producer: NULL strides mean
    row-major, as the producer APIs take them)."""
    return dlgen_check_dltensor(dl, versioned, major, minor, padded, producer, NULL) == DLGEN_OK


cdef int _check(const DLTensor* dl, bint versioned, uint32_t major, uint32_t minor, bint padded,
                bint producer, object error) except -1:
    """Every check of rules.py on dl, a tensor of version major.minor (legacy
    unless versioned); elements packed unless padded; producer: see
    _c_passes. A refusal is rules.py's, of error's class if given."""
    if not versioned:
        major = minor = 0  # rules.py's _LEGACY_VERSION
    elif major != _C_MAJOR:
        _check_version(major, minor)
    if not _c_passes(dl, versioned, major, minor, padded, producer):
        _refuse(dl, (major, minor), padded, producer, error)
    return 0


cdef int _refuse(const DLTensor* dl, tuple version, bint padded, bint producer, object error) except -1:
    """rules.py's verdict on a tensor the C checks refused: raises its first
    failing check."""
    cdef int i
    cdef int ndim = dl.ndim
    _check_pointers(version, ndim, dl.shape == NULL, dl.strides == NULL and not producer, error)
    shape = tuple([dl.shape[i] for i in range(ndim)]) if ndim and dl.shape != NULL else ()
    if ndim and dl.strides != NULL:
        strides = tuple([dl.strides[i] for i in range(ndim)])
    else:
        strides = _contiguous_strides(shape)
    _check_layout(version, shape, strides, dl.dtype.code, dl.dtype.bits, dl.dtype.lanes, dl.byte_offset,
                  <uintptr_t>dl.data, padded, error)
    raise SystemError("dlpack_cython: its C checks refused a tensor that rules.py accepts")


# --- Deleters and the capsule destructor -------------------------------------

cdef void _drop_owner(void* owner, void* block) noexcept nogil:
    """Frees an export's block (PyMem, as NumPy's: it is taken with the GIL)
    and releases the reference it held on its Tensor, from any thread; the
    last export of a closed Tensor frees its memory."""
    cdef PyObject* exc_type
    cdef PyObject* exc_value
    cdef PyObject* exc_tb
    if not Py_IsInitialized():
        return  # after finalisation nothing may be touched: leak instead
    with gil:
        PyMem_Free(block)
        if owner == NULL:
            return
        if PyErr_Occurred() == NULL:  # the common case: no exception to keep
            (<Tensor>owner)._unhold()
            Py_DECREF(<object>owner)
            return
        PyErr_Fetch(&exc_type, &exc_value, &exc_tb)
        (<Tensor>owner)._unhold()
        Py_DECREF(<object>owner)
        PyErr_Restore(exc_type, exc_value, exc_tb)


cdef void _versioned_deleter(DLManagedTensorVersioned* self) noexcept nogil:
    _drop_owner(self.manager_ctx, self)


cdef void _legacy_deleter(DLManagedTensor* self) noexcept nogil:
    _drop_owner(self.manager_ctx, self)


cdef void _capsule_destructor(object capsule) noexcept:
    """Deletes the tensor of a capsule nobody consumed (still named dltensor*)."""
    cdef PyObject* exc_type
    cdef PyObject* exc_value
    cdef PyObject* exc_tb
    cdef DLManagedTensorVersioned* mv
    cdef DLManagedTensor* ml
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb)
    if PyCapsule_IsValid(capsule, _VNAME):
        mv = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, _VNAME)
        if mv.deleter != NULL:
            mv.deleter(mv)
    elif PyCapsule_IsValid(capsule, _NAME):
        ml = <DLManagedTensor*>PyCapsule_GetPointer(capsule, _NAME)
        if ml.deleter != NULL:
            ml.deleter(ml)
    PyErr_Restore(exc_type, exc_value, exc_tb)


# --- Tensor --------------------------------------------------------------------

cdef const char* _buffer_format(int code, Py_ssize_t itemsize) noexcept:
    """The struct-module format of an element, or NULL."""
    if code == dlpack.kDLInt:
        if itemsize == 1:
            return "b"
        if itemsize == 2:
            return "h"
        if itemsize == 4:
            return "i"
        if itemsize == 8:
            return "q"
    elif code == dlpack.kDLUInt:
        if itemsize == 1:
            return "B"
        if itemsize == 2:
            return "H"
        if itemsize == 4:
            return "I"
        if itemsize == 8:
            return "Q"
    elif code == dlpack.kDLFloat:
        if itemsize == 2:
            return "e"
        if itemsize == 4:
            return "f"
        if itemsize == 8:
            return "d"
    elif code == dlpack.kDLComplex:
        if itemsize == 8:
            return "Zf"
        if itemsize == 16:
            return "Zd"
    elif code == dlpack.kDLBool and itemsize == 1:
        return "?"
    return NULL


cdef inline bint _readonly(Tensor t) noexcept:
    return (t.flags & _C_READ_ONLY) != 0


cdef inline bint _padded(Tensor t) noexcept:
    """Sub-byte elements padded to whole bytes (DLPack >= 1.1's flag)."""
    return (t.flags & _C_SUBBYTE_PADDED) != 0


cdef inline char* _first(Tensor t) noexcept nogil:
    """The address of the first element: data + byte_offset."""
    return <char*>t.dltensor.data + t.dltensor.byte_offset


cdef int _check_readable(Tensor t) except -1:
    """Before the CPU reads a tensor's memory: open, and not a device's."""
    t._check_open()
    if not _host_readable(t.dltensor.device.device_type):
        _check_host_readable(<int32_t>t.dltensor.device.device_type, t.dltensor.device.device_id)
    return 0


@cython.final
@cython.freelist(16)
cdef class Tensor:
    """A DLPack tensor: imported from a producer (owning its managed tensor
    until close()), a private copy, or a view of memory a framework owns
    (from_pointer, from_buffer). Its C-level attributes are declared in
    dlpack_cython.pxd."""

    def __init__(self):
        raise TypeError("use from_dlpack(), from_pointer() or from_buffer() to make a Tensor")

    def __dealloc__(self):
        self._closed = True
        self._free()
        if self._dims != self._inline_dims:
            free(self._dims)

    # A Tensor's state (_closed, _exports, and what _free gives back) changes
    # only in _release, _hold and _unhold, each in a critical section on the
    # Tensor: on a free-threaded build two threads closing, exporting or
    # deleting exports of one Tensor take turns, and the memory goes back
    # exactly once (under the GIL the sections cost nothing).

    cdef void _release(self) noexcept:
        """close(): the memory goes back now, or when the last export of the
        tensor is deleted (each holds a reference and counts in _exports)."""
        with cython.critical_section(self):
            self._closed = True
            if self._exports == 0:
                self._free()

    cdef int _hold(self) except -1:
        """An export (or a copy being read) holds the memory until _unhold:
        ValueError if the Tensor is closed, checked in the same step."""
        cdef bint closed
        with cython.critical_section(self):
            closed = self._closed
            if not closed:
                self._exports += 1
        if closed:
            raise ValueError(_CLOSED)
        return 0

    cdef void _unhold(self) noexcept:
        """An export is done: the last one of a closed Tensor gives the
        memory back."""
        with cython.critical_section(self):
            self._exports -= 1
            if self._closed and self._exports == 0:
                self._free()

    cdef void _free(self) noexcept:
        # Called in a critical section on self, or by __dealloc__: the
        # pointers are taken before anything is called that could suspend it.
        cdef DLManagedTensorVersioned* mv = self._mv
        cdef DLManagedTensor* ml = self._ml
        cdef c_deleter deleter = self._c_deleter
        cdef Py_buffer* view = <Py_buffer*>self._view
        self._mv = NULL
        self._ml = NULL
        self._c_deleter = NULL
        self._view = NULL
        if mv != NULL and mv.deleter != NULL:
            mv.deleter(mv)
        if ml != NULL and ml.deleter != NULL:
            ml.deleter(ml)
        if self._owned != NULL:
            free(self._owned)
            self._owned = NULL
        if deleter != NULL:
            deleter(self._c_context)
        if view != NULL:
            PyBuffer_Release(view)
            free(view)
        self._owner = None
        self._on_stream = None
        self._on_copy = None

    def close(self):
        """Gives the tensor back to its producer (calls the deleter once), or
        lets go of its owner: now, or, while exports of it live, when the
        last consumer deletes its export."""
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._release()

    cdef int _check_open(self) except -1:
        if self._closed:
            raise ValueError(_CLOSED)
        return 0

    # -- properties: each one of a closed tensor raises --------------------------

    @property
    def shape(self):
        self._check_open()
        return tuple([self._dims[i] for i in range(self.dltensor.ndim)])

    @property
    def strides(self):
        """In elements."""
        self._check_open()
        return tuple([self._dims[self.dltensor.ndim + i] for i in range(self.dltensor.ndim)])

    @property
    def dtype(self):
        self._check_open()
        return DataType(self.dltensor.dtype.code, self.dltensor.dtype.bits, self.dltensor.dtype.lanes)

    @property
    def device(self):
        self._check_open()
        return Device(<int32_t>self.dltensor.device.device_type, self.dltensor.device.device_id)

    @property
    def readonly(self):
        self._check_open()
        return _readonly(self)

    @property
    def copied(self):
        self._check_open()
        return (self.flags & _C_IS_COPIED) != 0

    @property
    def byte_offset(self):
        self._check_open()
        return self.dltensor.byte_offset

    @property
    def ndim(self):
        self._check_open()
        return self.dltensor.ndim

    @property
    def size(self):
        self._check_open()
        return self._size()

    @property
    def data_ptr(self):
        """Address of the first element (data + byte_offset)."""
        self._check_open()
        return <size_t>_first(self)

    @property
    def closed(self):
        return self._closed

    cdef int64_t _size(self) noexcept:
        cdef int64_t n = 1
        cdef int i
        for i in range(self.dltensor.ndim):
            n *= self._dims[i]
        return n

    cdef bint _contiguous(self) noexcept:
        cdef int64_t step = 1
        cdef int i
        if self._size() == 0:
            return True
        for i in range(self.dltensor.ndim - 1, -1, -1):
            if self._dims[i] != 1 and self._dims[self.dltensor.ndim + i] != step:
                return False
            step *= self._dims[i]
        return True

    def is_contiguous(self):
        self._check_open()
        return self._contiguous()

    def __repr__(self):
        if self._closed:
            return "Tensor(closed)"
        return "Tensor(shape=%r, strides=%r, dtype=%r, device=%r, readonly=%r)" % (
            self.shape, self.strides, self.dtype, self.device, _readonly(self))

    # -- consumers -------------------------------------------------------------

    def __getbuffer__(self, Py_buffer* buf, int flags):
        cdef const char* fmt
        _check_readable(self)
        fmt = NULL
        if self.dltensor.dtype.lanes == 1 and self.dltensor.dtype.bits % 8 == 0:
            fmt = _buffer_format(self.dltensor.dtype.code, self._itemsize)
        if fmt == NULL:
            raise BufferError(_NO_BUFFER % (self.dtype,))
        if flags & PyBUF_WRITABLE and _readonly(self):
            raise BufferError("the tensor is read-only")
        if (flags & PyBUF_STRIDES) != PyBUF_STRIDES and not self._contiguous():
            raise BufferError("the consumer cannot take strides and the tensor is not contiguous")
        buf.buf = _first(self)
        buf.obj = self
        buf.len = self._size() * self._itemsize
        buf.readonly = _readonly(self)
        buf.itemsize = self._itemsize
        buf.format = <char*>fmt if flags & PyBUF_FORMAT else NULL
        buf.ndim = self.dltensor.ndim
        buf.shape = self._bdims if flags & PyBUF_ND else NULL
        buf.strides = self._bdims + self.dltensor.ndim if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
        buf.suboffsets = NULL
        buf.internal = NULL
        self._hold()  # a view is an export: close() waits for it

    def __releasebuffer__(self, Py_buffer* buf):
        self._unhold()

    @property
    def __array_interface__(self):
        _check_readable(self)
        kinds = {dlpack.kDLInt: "i", dlpack.kDLUInt: "u", dlpack.kDLFloat: "f", dlpack.kDLComplex: "c", dlpack.kDLBool: "b"}
        kind = kinds.get(self.dltensor.dtype.code)
        if kind is None or self.dltensor.dtype.lanes != 1 or self.dltensor.dtype.bits % 8:
            raise BufferError(_NO_BUFFER % (self.dtype,))
        order = "|" if self._itemsize == 1 else "<"
        return {"version": 3, "shape": self.shape, "typestr": "%s%s%d" % (order, kind, self._itemsize),
                "data": (self.data_ptr, _readonly(self)),
                "strides": tuple(s * self._itemsize for s in self.strides)}

    @property
    def nbytes(self):
        """Bytes the elements occupy; sub-byte elements are packed unless the
        producer flagged them padded."""
        self._check_open()
        return self._nbytes()

    cdef int64_t _nbytes(self) noexcept:
        cdef int64_t width = self.dltensor.dtype.bits * self.dltensor.dtype.lanes
        if width < 8 and not _padded(self):
            return (self._size() * width + 7) // 8
        return self._size() * self._itemsize

    def tobytes(self):
        """The elements in C order, as bytes (a copy), for every dtype."""
        cdef Tensor c
        _check_readable(self)
        self._hold()  # a close() by another thread meanwhile waits for the copy
        try:
            c = self if self._contiguous() else _private_copy(self)
            return PyBytes_FromStringAndSize(_first(c), c._nbytes())
        finally:
            self._unhold()

    # -- producers -------------------------------------------------------------

    def __dlpack_device__(self):
        self._check_open()
        return (<int32_t>self.dltensor.device.device_type, self.dltensor.device.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        cdef Tensor source = self
        cdef uint64_t bits
        self._check_open()
        if (stream is None and dl_device is None and copy is None and type(max_version) is tuple
                and len(<tuple>max_version) == 2 and max_version[0] == _C_MAJOR
                and (self._stream is None or self._stream[0] is None)):
            # The common request inline: a call to _export_flags, which has the
            # full rules, costs a third of NumPy's whole exchange.
            return PyCapsule_New(_export_versioned(self, self.flags & (_C_READ_ONLY | _C_SUBBYTE_PADDED)),
                                 _VNAME, _capsule_destructor)
        device = (<int32_t>self.dltensor.device.device_type, self.dltensor.device.device_id)
        versioned, flags, target = _export_flags(device, _readonly(self), _padded(self), stream, max_version,
                                                 dl_device, copy)
        if target is not None:
            source = _export_copy(self, self._on_copy, target, stream)
        elif self._on_stream is not None:
            if stream is not None:
                self._on_stream(stream)
        elif self._stream is not None:
            _check_stream(device, stream, self._stream)
        if versioned:
            return PyCapsule_New(_export_versioned(source, flags), _VNAME, _capsule_destructor)
        return PyCapsule_New(_export_legacy(source), _NAME, _capsule_destructor)


cdef Tensor _new_tensor():
    return Tensor.__new__(Tensor)


cdef int _set_dims(Tensor t, int ndim, const int64_t* shape, const int64_t* strides) except -1:
    """Copies shape and strides (NULL strides: contiguous) into t."""
    cdef int i
    cdef int64_t step = 1
    t.dltensor.ndim = ndim
    # One block: int64 dims for DLPack, then Py_ssize_t dims for buffers.
    # Up to 4 dimensions it is the Tensor's own (9 int64 and 9 Py_ssize_t).
    if ndim <= 4:
        t._dims = t._inline_dims
    else:
        t._dims = <int64_t*>malloc((sizeof(int64_t) + sizeof(Py_ssize_t)) * (2 * ndim + 1))
    if t._dims == NULL:
        raise MemoryError()
    t._bdims = <Py_ssize_t*>(t._dims + 2 * ndim + 1)
    t.dltensor.shape = t._dims
    t.dltensor.strides = t._dims + ndim
    for i in range(ndim):
        t._dims[i] = shape[i]
    for i in range(ndim - 1, -1, -1):
        t._dims[ndim + i] = strides[i] if strides != NULL else step
        step *= shape[i] if shape[i] > 0 else 1
    for i in range(2 * ndim):
        t._bdims[i] = <Py_ssize_t>t._dims[i] * (t._itemsize if i >= ndim else 1)
    return 0


cdef int _describe(Tensor t, DLTensor* dl) except -1:
    """Describes in t a foreign DLTensor that passed the checks. Any device
    is taken, newer types included: whatever reads the memory from the CPU
    checks that the CPU can."""
    t.dltensor.data = dl.data
    t.dltensor.device = dl.device
    t.dltensor.dtype = dl.dtype
    t.dltensor.byte_offset = dl.byte_offset
    t._itemsize = (dl.dtype.bits * dl.dtype.lanes + 7) // 8
    _set_dims(t, dl.ndim, dl.shape, dl.strides)
    return 0


cdef uint64_t _import_flags(uint64_t flags, object readonly) except? 1:
    """A managed tensor's flags as imported (see _readonly_import)."""
    if readonly is None:
        return flags
    if _readonly_import(flags, readonly):
        return flags | _C_READ_ONLY
    return flags


# Tensor._stream of an import: the stream it was imported on, as a 1-tuple.
cdef tuple _IMPORTED = _NO_STREAM


cdef Tensor _adopt(void* address, bint versioned, object readonly):
    """Owns a managed tensor from now on; refuses it (after calling its
    deleter once) if it is malformed. readonly as in from_dlpack."""
    cdef Tensor t = _new_tensor()
    cdef DLManagedTensorVersioned* mv
    cdef DLManagedTensor* ml
    cdef uint64_t flags
    t._stream = _IMPORTED
    try:
        if versioned:
            mv = <DLManagedTensorVersioned*>address
            t._mv = mv
            flags = mv.flags & (_C_READ_ONLY | _C_IS_COPIED | _C_SUBBYTE_PADDED)
            _check(&mv.dl_tensor, True, mv.version.major, mv.version.minor, flags & _C_SUBBYTE_PADDED, False, None)
            _describe(t, &mv.dl_tensor)
        else:
            ml = <DLManagedTensor*>address
            t._ml = ml
            flags = 0  # a legacy tensor carries no flag: writable
            _check(&ml.dl_tensor, False, 0, 0, False, False, None)
            _describe(t, &ml.dl_tensor)
        t.flags = _import_flags(flags, readonly)
    except BaseException:
        t._release()
        raise
    return t


cdef void _copy_strided(char* dst, const char* src, int ndim, const int64_t* shape,
                        const int64_t* strides, Py_ssize_t itemsize, Py_ssize_t* pos) noexcept nogil:
    cdef int64_t i
    if ndim == 0:
        memcpy(dst + pos[0], src, itemsize)
        pos[0] += itemsize
        return
    if ndim == 1 and strides[0] == 1:
        memcpy(dst + pos[0], src, shape[0] * itemsize)
        pos[0] += shape[0] * itemsize
        return
    for i in range(shape[0]):
        _copy_strided(dst, src + i * strides[0] * itemsize, ndim - 1, shape + 1, strides + 1, itemsize, pos)


cdef Tensor _private_copy(Tensor t):
    """A writable, contiguous CPU copy of t that owns its memory."""
    cdef Tensor c = _new_tensor()
    _check_readable(t)
    t._hold()  # a close() by another thread meanwhile waits for the copy
    try:
        _fill_copy(c, t)
    finally:
        t._unhold()
    return c


cdef int _fill_copy(Tensor c, Tensor t) except -1:
    """_private_copy's work, while t is held."""
    cdef int64_t n = t._size()
    cdef int64_t nbytes = t._nbytes()
    cdef Py_ssize_t pos = 0
    c.dltensor.dtype = t.dltensor.dtype
    c.dltensor.device.device_type = dlpack.kDLCPU
    c.dltensor.device.device_id = 0
    c._itemsize = t._itemsize
    c.flags = _C_IS_COPIED | (t.flags & _C_SUBBYTE_PADDED)
    c._owned = malloc(nbytes if nbytes else 1)
    if c._owned == NULL:
        raise MemoryError()
    c.dltensor.data = c._owned
    if n and t._contiguous():
        memcpy(c._owned, _first(t), nbytes)
    elif n:
        if t.dltensor.dtype.bits * t.dltensor.dtype.lanes < 8 and not _padded(t):
            raise BufferError("packed sub-byte elements can only be copied from a contiguous tensor")
        with nogil:
            _copy_strided(<char*>c._owned, _first(t), t.dltensor.ndim, t._dims, t._dims + t.dltensor.ndim, t._itemsize, &pos)
    _set_dims(c, t.dltensor.ndim, t._dims, NULL)
    return 0


cdef void _fill(DLTensor* dl, Tensor t, int64_t* dims) noexcept:
    cdef int i
    dl.data = t.dltensor.data
    dl.device = t.dltensor.device
    dl.ndim = t.dltensor.ndim
    dl.dtype = t.dltensor.dtype
    dl.byte_offset = t.dltensor.byte_offset
    if t.dltensor.ndim == 0:
        dl.shape = NULL
        dl.strides = NULL
        return
    if dims != t._dims:
        for i in range(2 * t.dltensor.ndim):
            dims[i] = t._dims[i]
    dl.shape = dims
    dl.strides = dims + t.dltensor.ndim


cdef DLManagedTensorVersioned* _export_versioned(Tensor t, uint64_t flags) except NULL:
    """One malloc block: the managed struct, then shape and strides. It holds
    a reference to t until the consumer calls the deleter; ValueError if t
    is closed, checked as the export is counted (_hold)."""
    cdef DLManagedTensorVersioned* m
    t._hold()
    m = <DLManagedTensorVersioned*>PyMem_Malloc(sizeof(DLManagedTensorVersioned) + 2 * t.dltensor.ndim * sizeof(int64_t))
    if m == NULL:
        t._unhold()
        raise MemoryError()
    m.version.major = _C_MAJOR
    m.version.minor = _C_MINOR
    m.flags = flags
    m.deleter = _versioned_deleter
    _fill(&m.dl_tensor, t, <int64_t*>(m + 1))
    Py_INCREF(t)
    m.manager_ctx = <void*>t
    return m


cdef DLManagedTensor* _export_legacy(Tensor t) except NULL:
    cdef DLManagedTensor* m
    t._hold()
    m = <DLManagedTensor*>PyMem_Malloc(sizeof(DLManagedTensor) + 2 * t.dltensor.ndim * sizeof(int64_t))
    if m == NULL:
        t._unhold()
        raise MemoryError()
    m.deleter = _legacy_deleter
    _fill(&m.dl_tensor, t, <int64_t*>(m + 1))
    Py_INCREF(t)
    m.manager_ctx = <void*>t
    return m


# --- Entry points ---------------------------------------------------------------

cdef extern from "Python.h":
    object PyObject_VectorcallMethod(PyObject* name, PyObject** args, size_t nargsf, PyObject* kwnames)


cdef str _DUNDER_DLPACK = "__dlpack__"
cdef tuple _MAX_VERSION_KEYWORD = ("max_version",)


cdef object _request_plain_capsule(object x):
    """_request_capsule's request without copy, device or stream, made with
    no bound method (which costs a quarter of NumPy's whole exchange):
    x.__dlpack__(max_version=...) once, and on a TypeError once more without
    max_version."""
    cdef PyObject* args[2]
    cdef object version = _VERSION
    args[0] = <PyObject*>x
    args[1] = <PyObject*>version
    try:
        return PyObject_VectorcallMethod(<PyObject*>_DUNDER_DLPACK, args, 1, <PyObject*>_MAX_VERSION_KEYWORD)
    except TypeError:
        return PyObject_VectorcallMethod(<PyObject*>_DUNDER_DLPACK, args, 1, NULL)
    except AttributeError:
        if getattr(x, "__dlpack__", None) is None:  # none at all: _request_capsule says so
            return _request_capsule(x, None, None, None)
        raise

cdef void* _take(object capsule, bint* versioned) except NULL:
    """Takes the managed tensor out of a capsule, renaming it used_*: the
    check and the rename are one step, in a critical section on the capsule
    (under the GIL, C code that calls nothing that could release it), so
    that of two threads handed one capsule exactly one takes it, on every
    build. Nothing else renames a capsule (tests/python/test_lint.py)."""
    cdef void* address = NULL
    cdef const char* name = NULL
    cdef bint named_otherwise = False
    if not PyCapsule_CheckExact(capsule):
        raise TypeError("__dlpack__ returned %s, not a capsule" % type(capsule).__name__)
    with cython.critical_section(capsule):
        if PyCapsule_IsValid(capsule, _VNAME):
            address = PyCapsule_GetPointer(capsule, _VNAME)
            PyCapsule_SetName(capsule, _USED_VNAME)
            versioned[0] = True
        elif PyCapsule_IsValid(capsule, _NAME):
            address = PyCapsule_GetPointer(capsule, _NAME)
            PyCapsule_SetName(capsule, _USED_NAME)
            versioned[0] = False
        else:
            named_otherwise = True
            name = PyCapsule_GetName(capsule)
    if named_otherwise:
        raise _not_a_capsule(<bytes>name if name != NULL else None)
    if address == NULL:
        raise BufferError("the capsule holds a NULL tensor")
    return address


def from_dlpack(x, /, *, device=None, copy=None, readonly=None, stream=None):
    """Imports x (an object with __dlpack__, or a DLPack capsule) as a Tensor,
    zero-copy, on whatever device it lives: memory the CPU cannot read is
    held and handed on, never read.

    Uses the producer's C exchange API when its type has one and the tensor
    it gives fits the request (on the CPU with no stream, else only with
    stream -1 or the producer's current work stream: its entry does not
    synchronise); otherwise asks x.__dlpack__ once for a versioned capsule
    with the keywords given, and once more for a legacy one if that raises
    TypeError. stream (the array API's: an integer for CUDA and ROCm, a SYCL
    queue for oneAPI) goes to the producer as it is; the Tensor then hands
    its data on to consumers on that stream only (or to ones asking for no
    synchronisation). device=(kDLCPU, 0) asks the producer for a copy on the
    host if it must (any other device likewise); a tensor elsewhere is a
    BufferError. copy=True returns a copy (the producer's, or a private one
    of memory the CPU reads); copy=False forbids one. readonly=None takes
    the producer's word (its READ_ONLY flag; a legacy capsule carries none
    and imports writable), True gives a read-only view, False refuses a
    read-only tensor.

    A legacy capsule cannot say that its memory must not be written: JAX
    exports only legacy capsules, of immutable arrays. A consumer that
    writes should not trust one: pass readonly=True, or take NumPy's policy
    (legacy means read-only) with address, versioned = to_managed(x), then
    from_managed(address, versioned=versioned, readonly=None if versioned
    else True)."""
    cdef Tensor t
    cdef Tensor c
    cdef void* address
    cdef bint versioned
    if device is not None:
        device = _device(device)
    if PyCapsule_CheckExact(x):
        _check_capsule_stream(stream)
        address = _take(x, &versioned)
        t = _adopt(address, versioned, readonly)
    else:
        t = _from_exchange_api(x, readonly, device, copy, stream)
        if t is None:
            if copy is None and device is None and stream is None:
                capsule = _request_plain_capsule(x)
            else:
                capsule = _request_capsule(x, copy, device, stream)
            address = _take(capsule, &versioned)
            t = _adopt(address, versioned, readonly)
        if stream is not None:
            t._stream = (stream,)
    if device is not None and not _on_device(t.device, device):
        have = tuple(t.device)
        t._release()
        raise BufferError("the producer gave its tensor on device %r, not %r" % (have, tuple(device)))
    if not copy or (t.flags & _C_IS_COPIED):
        return t
    try:
        c = _private_copy(t)
    finally:
        t._release()
    if readonly:
        c.flags |= _C_READ_ONLY
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
    return _adopt(<void*><size_t>address, versioned, readonly)


def to_managed(x, /, *, versioned=True):
    """Consumes x (an object with __dlpack__, or a capsule) and returns
    (address, versioned): the managed tensor it held, and whether that is a
    DLManagedTensorVersioned* or, when False, a legacy DLManagedTensor*
    (what versioned=False asks for, and what JAX and other producers of
    legacy capsules give). The caller owns it and must see its deleter
    called exactly once: from_managed(address, versioned=versioned), or a C
    or Go importer."""
    cdef bint is_versioned
    cdef void* address
    capsule = x if PyCapsule_CheckExact(x) else _request_managed(x, versioned)
    address = _take(capsule, &is_versioned)
    return (<size_t>address, is_versioned)

