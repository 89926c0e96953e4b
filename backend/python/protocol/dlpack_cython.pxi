# The hand-written part of the generated dlpack_cython module: the DLPack
# protocol in Cython. dlgen places it after the generated declarations (the
# Python-level enums and constants, the capsule names as C strings) and the
# shared rules of protocol.py, which it uses; exchange_api.pxi (DLPack 1.2 and
# later) or no_exchange_api.pxi follows it. C names come from dlpack.pxd,
# qualified where the module defines a Python name of the same spelling.
# Its import lines join the module's import block; the rest is copied verbatim.
cimport cython
cimport dlpack
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES, PyBUF_WRITABLE
from cpython.pycapsule cimport PyCapsule_CheckExact, PyCapsule_GetPointer, PyCapsule_IsValid, PyCapsule_New, PyCapsule_SetName
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from dlpack cimport DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLTensor
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    int Py_IsInitialized() nogil
    void PyErr_Fetch(PyObject** ptype, PyObject** pvalue, PyObject** ptraceback) nogil
    void PyErr_Restore(PyObject* ptype, PyObject* pvalue, PyObject* ptraceback) nogil


# --- Deleters and the capsule destructor -------------------------------------

cdef void _drop_owner(void* owner) noexcept nogil:
    """Releases the reference an export held, from any thread."""
    cdef PyObject* exc_type
    cdef PyObject* exc_value
    cdef PyObject* exc_tb
    if owner == NULL or not Py_IsInitialized():
        return  # after finalisation nothing may be touched: leak instead
    with gil:
        PyErr_Fetch(&exc_type, &exc_value, &exc_tb)
        Py_DECREF(<object>owner)
        PyErr_Restore(exc_type, exc_value, exc_tb)


cdef void _versioned_deleter(DLManagedTensorVersioned* self) noexcept nogil:
    cdef void* owner = self.manager_ctx
    free(self)
    _drop_owner(owner)


cdef void _legacy_deleter(DLManagedTensor* self) noexcept nogil:
    cdef void* owner = self.manager_ctx
    free(self)
    _drop_owner(owner)


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


cdef bint _host_accessible(int device_type) noexcept:
    return device_type == dlpack.kDLCPU or device_type == dlpack.kDLCUDAHost or device_type == dlpack.kDLROCMHost or device_type == dlpack.kDLCUDAManaged




@cython.final
cdef class Tensor:
    """A DLPack tensor: imported from a producer (owning its managed tensor
    until close()), or a private copy."""

    cdef DLManagedTensorVersioned* _mv
    cdef DLManagedTensor* _ml
    cdef void* _owned            # memory of a private copy
    cdef char* _data
    cdef uint64_t _byte_offset
    cdef int _ndim
    cdef int64_t* _dims          # shape then strides (elements), ndim each
    cdef Py_ssize_t* _bdims      # shape then strides (bytes), for buffers
    cdef DLDataType _dtype
    cdef DLDevice _device
    cdef Py_ssize_t _itemsize
    cdef bint _readonly
    cdef bint _copied
    cdef bint _closed
    cdef object __weakref__


    def __init__(self):
        raise TypeError("use from_dlpack() to make a Tensor")

    def __dealloc__(self):
        self._release()
        free(self._dims)

    cdef void _release(self) noexcept:
        cdef DLManagedTensorVersioned* mv = self._mv
        cdef DLManagedTensor* ml = self._ml
        self._mv = NULL
        self._ml = NULL
        self._closed = True
        if mv != NULL and mv.deleter != NULL:
            mv.deleter(mv)
        if ml != NULL and ml.deleter != NULL:
            ml.deleter(ml)
        if self._owned != NULL:
            free(self._owned)
            self._owned = NULL

    def close(self):
        """Gives the tensor back to its producer (calls the deleter once)."""
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._release()

    cdef int _check_open(self) except -1:
        if self._closed:
            raise ValueError("the tensor is closed")
        return 0

    # -- properties ------------------------------------------------------------

    @property
    def shape(self):
        return tuple(self._dims[i] for i in range(self._ndim))

    @property
    def strides(self):
        return tuple(self._dims[self._ndim + i] for i in range(self._ndim))

    @property
    def dtype(self):
        return DataType(self._dtype.code, self._dtype.bits, self._dtype.lanes)

    @property
    def device(self):
        return Device(self._device.device_type, self._device.device_id)

    @property
    def readonly(self):
        return self._readonly

    @property
    def copied(self):
        return self._copied

    @property
    def byte_offset(self):
        return self._byte_offset

    @property
    def ndim(self):
        return self._ndim

    @property
    def size(self):
        return self._size()

    @property
    def data_ptr(self):
        """Address of the first element (data + byte_offset)."""
        return <size_t>(self._data + self._byte_offset)

    @property
    def closed(self):
        return self._closed

    cdef int64_t _size(self) noexcept:
        cdef int64_t n = 1
        cdef int i
        for i in range(self._ndim):
            n *= self._dims[i]
        return n

    cdef bint _contiguous(self) noexcept:
        cdef int64_t step = 1
        cdef int i
        if self._size() == 0:
            return True
        for i in range(self._ndim - 1, -1, -1):
            if self._dims[i] != 1 and self._dims[self._ndim + i] != step:
                return False
            step *= self._dims[i]
        return True

    def is_contiguous(self):
        return self._contiguous()

    def __repr__(self):
        return "Tensor(shape=%r, strides=%r, dtype=%r, device=%r, readonly=%r)" % (
            self.shape, self.strides, self.dtype, self.device, self._readonly)

    # -- consumers -------------------------------------------------------------

    def __getbuffer__(self, Py_buffer* buf, int flags):
        cdef const char* fmt
        self._check_open()
        if not _host_accessible(self._device.device_type):
            raise BufferError("memory on device %r is not addressable from the CPU" % (self.device,))
        fmt = _buffer_format(self._dtype.code, self._itemsize) if self._dtype.lanes == 1 else NULL
        if fmt == NULL:
            raise BufferError("dtype %r has no buffer format" % (self.dtype,))
        if flags & PyBUF_WRITABLE and self._readonly:
            raise BufferError("the tensor is read-only")
        if (flags & PyBUF_STRIDES) != PyBUF_STRIDES and not self._contiguous():
            raise BufferError("the consumer cannot take strides and the tensor is not contiguous")
        buf.buf = self._data + self._byte_offset
        buf.obj = self
        buf.len = self._size() * self._itemsize
        buf.readonly = self._readonly
        buf.itemsize = self._itemsize
        buf.format = <char*>fmt if flags & PyBUF_FORMAT else NULL
        buf.ndim = self._ndim
        buf.shape = self._bdims if flags & PyBUF_ND else NULL
        buf.strides = self._bdims + self._ndim if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
        buf.suboffsets = NULL
        buf.internal = NULL

    def __releasebuffer__(self, Py_buffer* buf):
        pass

    @property
    def __array_interface__(self):
        self._check_open()
        kinds = {dlpack.kDLInt: "i", dlpack.kDLUInt: "u", dlpack.kDLFloat: "f", dlpack.kDLComplex: "c", dlpack.kDLBool: "b"}
        kind = kinds.get(self._dtype.code)
        if kind is None or self._dtype.lanes != 1 or self._dtype.bits % 8:
            raise AttributeError("dtype %r has no NumPy equivalent" % (self.dtype,))
        order = "|" if self._itemsize == 1 else "<"
        return {"version": 3, "shape": self.shape, "typestr": "%s%s%d" % (order, kind, self._itemsize),
                "data": (self.data_ptr, bool(self._readonly)),
                "strides": tuple(s * self._itemsize for s in self.strides)}

    def tobytes(self):
        """The elements in C order, as bytes (a copy)."""
        self._check_open()
        return bytes(memoryview(_private_copy(self)))

    # -- producers -------------------------------------------------------------

    def __dlpack_device__(self):
        return (self._device.device_type, self._device.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        cdef Tensor source = self
        self._check_open()
        versioned, flags = _export_flags((self._device.device_type, self._device.device_id), self._readonly,
                                         stream, max_version, dl_device, copy)
        if copy:
            source = _private_copy(self)
        if versioned:
            return PyCapsule_New(_export_versioned(source, flags), _VNAME, _capsule_destructor)
        return PyCapsule_New(_export_legacy(source), _NAME, _capsule_destructor)


cdef Tensor _new_tensor():
    return Tensor.__new__(Tensor)


cdef int _set_dims(Tensor t, int ndim, const int64_t* shape, const int64_t* strides) except -1:
    """Copies shape and strides (NULL strides: contiguous) into t."""
    cdef int i
    cdef int64_t step = 1
    t._ndim = ndim
    # One block: int64 dims for DLPack, then Py_ssize_t dims for buffers.
    t._dims = <int64_t*>malloc((sizeof(int64_t) + sizeof(Py_ssize_t)) * (2 * ndim + 1))
    if t._dims == NULL:
        raise MemoryError()
    t._bdims = <Py_ssize_t*>(t._dims + 2 * ndim + 1)
    for i in range(ndim):
        t._dims[i] = shape[i]
    for i in range(ndim - 1, -1, -1):
        t._dims[ndim + i] = strides[i] if strides != NULL else step
        step *= shape[i] if shape[i] > 0 else 1
    for i in range(2 * ndim):
        t._bdims[i] = <Py_ssize_t>t._dims[i] * (t._itemsize if i >= ndim else 1)
    return 0


cdef int _describe(Tensor t, DLTensor* dl, bint null_strides_ok) except -1:
    """Validates a foreign DLTensor before anything reads its data."""
    cdef int ndim = dl.ndim
    cdef int i
    cdef int64_t size = 1
    if ndim < 0 or ndim > _MAX_NDIM:
        raise BufferError("ndim %d is outside [0, %d]" % (ndim, _MAX_NDIM))
    if ndim and dl.shape == NULL:
        raise BufferError("shape is NULL for a %d-dimensional tensor" % ndim)
    for i in range(ndim):
        if dl.shape[i] < 0:
            raise BufferError("negative extent %d in dimension %d" % (dl.shape[i], i))
        size *= dl.shape[i]
    if ndim and dl.strides == NULL and not null_strides_ok:
        raise BufferError("strides is NULL, which DLPack >= 1.2 forbids for ndim != 0")
    if not _known_DLDataTypeCode(dl.dtype.code):
        raise BufferError("unknown DLDataTypeCode %d" % dl.dtype.code)
    if dl.dtype.code == dlpack.kDLOpaqueHandle:
        raise BufferError("opaque-handle tensors cannot be read")
    if dl.dtype.bits == 0 or dl.dtype.lanes == 0:
        raise BufferError("invalid dtype: %d bits, %d lanes" % (dl.dtype.bits, dl.dtype.lanes))
    if not _known_DLDeviceType(dl.device.device_type) or not _host_accessible(dl.device.device_type):
        raise _Inaccessible("cannot access memory on device (%d, %d) from the CPU"
                            % (dl.device.device_type, dl.device.device_id))
    if size and dl.data == NULL:
        raise BufferError("data is NULL for a tensor of %d elements" % size)
    t._dtype = dl.dtype
    t._device = dl.device
    t._itemsize = (dl.dtype.bits * dl.dtype.lanes + 7) // 8
    if size > (<int64_t>1 << 62) // t._itemsize:
        raise BufferError("tensor of %d elements overflows the address space" % size)
    t._data = <char*>dl.data
    t._byte_offset = dl.byte_offset
    _set_dims(t, ndim, dl.shape, dl.strides)
    return 0


cdef Tensor _adopt(void* address, bint versioned):
    """Owns a managed tensor from now on; refuses it (after calling its
    deleter once) if it is malformed."""
    cdef Tensor t = _new_tensor()
    cdef DLManagedTensorVersioned* mv
    cdef DLManagedTensor* ml
    if versioned:
        mv = <DLManagedTensorVersioned*>address
        t._mv = mv
        if mv.version.major != dlpack.DLPACK_MAJOR_VERSION:
            major = mv.version.major
            t._release()
            raise BufferError("DLPack major version %d is not supported (this module speaks %d.%d)"
                              % (major, dlpack.DLPACK_MAJOR_VERSION, dlpack.DLPACK_MINOR_VERSION))
        t._readonly = (mv.flags & dlpack.DLPACK_FLAG_BITMASK_READ_ONLY) != 0
        t._copied = (mv.flags & dlpack.DLPACK_FLAG_BITMASK_IS_COPIED) != 0
        try:
            _describe(t, &mv.dl_tensor, mv.version.minor < 2)
        except BaseException:
            t._release()
            raise
    else:
        ml = <DLManagedTensor*>address
        t._ml = ml
        t._readonly = True  # legacy capsules carry no flag; NumPy treats them as read-only
        try:
            _describe(t, &ml.dl_tensor, True)
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
    cdef int64_t n = t._size()
    cdef Py_ssize_t pos = 0
    t._check_open()
    if not _host_accessible(t._device.device_type):
        raise BufferError("cannot copy memory on device %r" % (t.device,))
    c._dtype = t._dtype
    c._device.device_type = dlpack.kDLCPU
    c._device.device_id = 0
    c._itemsize = t._itemsize
    c._copied = True
    c._owned = malloc(n * t._itemsize if n else 1)
    if c._owned == NULL:
        raise MemoryError()
    c._data = <char*>c._owned
    if n:
        with nogil:
            _copy_strided(c._data, t._data + t._byte_offset, t._ndim, t._dims, t._dims + t._ndim, t._itemsize, &pos)
    _set_dims(c, t._ndim, t._dims, NULL)
    return c


cdef void _fill(DLTensor* dl, Tensor t, int64_t* dims) noexcept:
    cdef int i
    dl.data = t._data
    dl.device = t._device
    dl.ndim = t._ndim
    dl.dtype = t._dtype
    dl.byte_offset = t._byte_offset
    if t._ndim == 0:
        dl.shape = NULL
        dl.strides = NULL
        return
    if dims != t._dims:
        for i in range(2 * t._ndim):
            dims[i] = t._dims[i]
    dl.shape = dims
    dl.strides = dims + t._ndim


cdef DLManagedTensorVersioned* _export_versioned(Tensor t, uint64_t flags) except NULL:
    """One malloc block: the managed struct, then shape and strides. It holds
    a reference to t until the consumer calls the deleter."""
    cdef DLManagedTensorVersioned* m = <DLManagedTensorVersioned*>malloc(
        sizeof(DLManagedTensorVersioned) + 2 * t._ndim * sizeof(int64_t))
    if m == NULL:
        raise MemoryError()
    m.version.major = dlpack.DLPACK_MAJOR_VERSION
    m.version.minor = dlpack.DLPACK_MINOR_VERSION
    m.flags = flags
    m.deleter = _versioned_deleter
    _fill(&m.dl_tensor, t, <int64_t*>(m + 1))
    Py_INCREF(t)
    m.manager_ctx = <void*>t
    return m


cdef DLManagedTensor* _export_legacy(Tensor t) except NULL:
    cdef DLManagedTensor* m = <DLManagedTensor*>malloc(sizeof(DLManagedTensor) + 2 * t._ndim * sizeof(int64_t))
    if m == NULL:
        raise MemoryError()
    m.deleter = _legacy_deleter
    _fill(&m.dl_tensor, t, <int64_t*>(m + 1))
    Py_INCREF(t)
    m.manager_ctx = <void*>t
    return m


# --- Entry points ---------------------------------------------------------------

cdef void* _take(object capsule, bint* versioned) except NULL:
    """Takes the managed tensor out of a capsule, renaming it used_*."""
    cdef void* address
    if not PyCapsule_CheckExact(capsule):
        raise TypeError("__dlpack__ returned %s, not a capsule" % type(capsule).__name__)
    if PyCapsule_IsValid(capsule, _VNAME):
        address = PyCapsule_GetPointer(capsule, _VNAME)
        PyCapsule_SetName(capsule, _USED_VNAME)
        versioned[0] = True
    elif PyCapsule_IsValid(capsule, _NAME):
        address = PyCapsule_GetPointer(capsule, _NAME)
        PyCapsule_SetName(capsule, _USED_NAME)
        versioned[0] = False
    elif PyCapsule_IsValid(capsule, _USED_VNAME) or PyCapsule_IsValid(capsule, _USED_NAME):
        raise ValueError("this DLPack capsule was already consumed")
    else:
        raise ValueError("not a DLPack capsule")
    if address == NULL:
        raise BufferError("the capsule holds a NULL tensor")
    return address


def from_dlpack(x, /, *, device=None, copy=None):
    """Imports x (an object with __dlpack__, or a DLPack capsule) as a Tensor.

    Uses the producer's C exchange API when its type has one; otherwise asks
    __dlpack__ for a versioned capsule and falls back to a plain call on
    TypeError. copy=True returns a private copy; device may only be the CPU."""
    cdef Tensor t
    cdef void* address
    cdef bint versioned
    if device is not None:
        _check_placement(device)
    if PyCapsule_CheckExact(x):
        address = _take(x, &versioned)
        t = _adopt(address, versioned)
    else:
        try:
            t = _from_exchange_api(x)
            if t is None:
                address = _take(_request_capsule(x, copy, device), &versioned)
                t = _adopt(address, versioned)
        except _Inaccessible:
            if copy is False or not hasattr(x, "__dlpack__"):
                raise
            address = _take(_request_host_copy(x, copy), &versioned)
            t = _adopt(address, versioned)
    if copy and not t._copied:
        c = _private_copy(t)
        t._release()
        return c
    return t


def from_managed(address, /, *, versioned=True):
    """Adopts a DLManagedTensorVersioned* (a DLManagedTensor* when not
    versioned) that C code handed over: the Tensor owns it, validates it and
    calls its deleter exactly once."""
    if not address:
        raise ValueError("from_managed of a NULL pointer")
    return _adopt(<void*><size_t>address, versioned)


def to_managed(x, /, *, versioned=True):
    """Consumes x (an object with __dlpack__, or a capsule) and returns
    (address, is_versioned) of the managed tensor it held; the caller owns it
    and must see its deleter called exactly once."""
    cdef bint is_versioned
    cdef void* address
    capsule = x if PyCapsule_CheckExact(x) else _request_managed(x, versioned)
    address = _take(capsule, &is_versioned)
    return (<size_t>address, is_versioned)


__all__ = [name for name in dir() if not name.startswith("_")]
