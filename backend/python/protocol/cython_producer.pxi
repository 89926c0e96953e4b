# The producer API of the Cython module: Tensors over memory that a framework,
# C code or a buffer-protocol object owns, and the cdef functions declared in
# dlpack_cython.pxd for other extension modules. dlgen ships it as
# dlpack_cython_producer.pxi, included last.
from cpython.buffer cimport PyBUF_RECORDS_RO, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
import operator
import sys


cdef Tensor _new_view(void* data, int ndim, const int64_t* shape, const int64_t* strides, DLDataType dtype,
                      DLDevice device, uint64_t byte_offset, bint readonly):
    """A Tensor over memory someone else owns (the caller says who), after
    the checks an import makes (ValueError)."""
    cdef DLTensor dl
    cdef Tensor t
    dl.data = data
    dl.device = device
    dl.ndim = ndim
    dl.dtype = dtype
    dl.shape = <int64_t*>shape
    dl.strides = <int64_t*>strides
    dl.byte_offset = byte_offset
    _check_layout(&dl, True, ValueError)
    if not _member(device.device_type, _DEVICE_TYPE_VALUES):
        raise ValueError("unknown DLDeviceType %d" % device.device_type)
    t = _new_tensor()
    t.dltensor.data = data
    t.dltensor.device = device
    t.dltensor.dtype = dtype
    t.dltensor.byte_offset = byte_offset
    t.flags = dlpack.DLPACK_FLAG_BITMASK_READ_ONLY if readonly else 0
    t._itemsize = (dtype.bits * dtype.lanes + 7) // 8
    _set_dims(t, ndim, shape, strides)
    return t


cdef Tensor tensor_from_pointer(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                                DLDataType dtype, DLDevice device, object owner, bint readonly=False):
    cdef Tensor t = _new_view(data, ndim, shape, strides, dtype, device, 0, readonly)
    t._owner = owner
    return t


cdef Tensor tensor_from_c(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                          DLDataType dtype, DLDevice device, c_deleter deleter, void* context, bint readonly=False):
    cdef Tensor t
    try:
        t = _new_view(data, ndim, shape, strides, dtype, device, 0, readonly)
    except BaseException:
        if deleter != NULL:
            deleter(context)
        raise
    t._c_deleter = deleter
    t._c_context = context
    return t


cdef object tensor_to_capsule(Tensor t, bint versioned=True):
    t._check_open()
    if versioned:
        return PyCapsule_New(_export_versioned(t, t.flags & dlpack.DLPACK_FLAG_BITMASK_READ_ONLY), _VNAME,
                             _capsule_destructor)
    if _readonly(t):
        raise BufferError("a read-only tensor cannot be exported as an unversioned capsule")
    return PyCapsule_New(_export_legacy(t), _NAME, _capsule_destructor)


cdef DLManagedTensorVersioned* tensor_to_managed(Tensor t) except NULL:
    t._check_open()
    return _export_versioned(t, t.flags & dlpack.DLPACK_FLAG_BITMASK_READ_ONLY)


cdef Tensor tensor_from_managed(DLManagedTensorVersioned* managed):
    return _adopt(managed, True, None)


cdef void _legacy_wrapper_deleter(DLManagedTensorVersioned* self) noexcept nogil:
    cdef DLManagedTensor* legacy = <DLManagedTensor*>self.manager_ctx
    free(self)
    if legacy.deleter != NULL:
        legacy.deleter(legacy)


cdef DLManagedTensorVersioned* _versioned_from_legacy(DLManagedTensor* legacy) except NULL:
    """A versioned managed tensor owning a legacy one: same DLTensor, no
    flags (writable), deleted through the legacy deleter."""
    cdef DLManagedTensorVersioned* m = <DLManagedTensorVersioned*>malloc(sizeof(DLManagedTensorVersioned))
    if m == NULL:
        if legacy.deleter != NULL:
            legacy.deleter(legacy)
        raise MemoryError()
    m.version.major = dlpack.DLPACK_MAJOR_VERSION
    m.version.minor = 1  # NULL strides stay allowed, as they were before DLPack 1.2
    m.manager_ctx = legacy
    m.deleter = _legacy_wrapper_deleter
    m.flags = 0
    m.dl_tensor = legacy.dl_tensor
    return m


cdef DLManagedTensorVersioned* managed_from_object(object x, bint readonly=False, object stream=None,
                                                   object device=None, object copy=None) except NULL:
    cdef DLManagedTensorVersioned* m = NULL
    cdef void* address
    cdef bint versioned = True
    cdef Tensor t
    cdef Tensor c
    if device is not None:
        device = _placement(device)
    if PyCapsule_CheckExact(x):
        _check_capsule_stream(stream)
    else:
        m = _managed_from_exchange_api(x, device, copy, stream)
    if m == NULL:
        address = _take(x if PyCapsule_CheckExact(x) else _request_capsule(x, copy, device, stream), &versioned)
        m = <DLManagedTensorVersioned*>address if versioned else _versioned_from_legacy(<DLManagedTensor*>address)
    try:
        if m.version.major != dlpack.DLPACK_MAJOR_VERSION:
            raise BufferError("DLPack major version %d is not supported (this module speaks %d.%d)"
                              % (m.version.major, dlpack.DLPACK_MAJOR_VERSION, dlpack.DLPACK_MINOR_VERSION))
        _check_layout(&m.dl_tensor, m.version.minor < 2, BufferError)
        if device is not None and not _on_device((m.dl_tensor.device.device_type, m.dl_tensor.device.device_id),
                                                 device):
            raise BufferError("the producer gave its tensor on device %r, not %r"
                              % ((m.dl_tensor.device.device_type, m.dl_tensor.device.device_id), tuple(device)))
    except BaseException:
        if m.deleter != NULL:
            m.deleter(m)
        raise
    if copy and not (m.flags & dlpack.DLPACK_FLAG_BITMASK_IS_COPIED):
        # A private copy, as from_dlpack makes it, exported as a managed tensor.
        t = _adopt(m, True, None)
        try:
            c = _private_copy(t)
        finally:
            t._release()
        m = _export_versioned(c, c.flags & (dlpack.DLPACK_FLAG_BITMASK_IS_COPIED | _C_SUBBYTE_PADDED))
    if readonly:
        m.flags |= dlpack.DLPACK_FLAG_BITMASK_READ_ONLY
    return m


# --- Python entry points ------------------------------------------------------

cdef int _int64_dims(object values, int64_t* out, int ndim, str what) except -1:
    cdef int i
    cdef tuple items
    if len(values) != ndim:
        raise ValueError("%d %s for %d dimensions" % (len(values), what, ndim))
    if type(values) is tuple:
        items = <tuple>values
        for i in range(ndim):
            out[i] = items[i] if type(items[i]) is int else operator.index(items[i])
    else:
        for i in range(ndim):
            out[i] = operator.index(values[i])
    return 0


# Each dtype name's (code, bits, lanes) packed in one integer, for from_pointer.
cdef dict _PACKED_DTYPES = {name: dt.code | dt.bits << 8 | dt.lanes << 16 for name, dt in _DTYPE_BY_NAME.items()}


def from_pointer(address, shape, dtype, /, *, strides=None, byte_offset=0, device=(1, 0), owner=None,
                 readonly=False, on_stream=None, on_copy=None):
    """A Tensor over memory the caller owns, zero-copy: the address of the
    data, shape, dtype (a name such as "float32", or a DataType), strides in
    elements (None: C-contiguous), device as (device_type, device_id).

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
    cdef int64_t dims[128]  # shape, then strides: 2 * _MAX_NDIM
    cdef DLDataType dt
    cdef DLDevice dev
    cdef Tensor t
    cdef Py_ssize_t ndim = len(shape)
    cdef uint64_t packed
    cdef uint64_t offset
    cdef void* data
    if ndim > _MAX_NDIM:
        raise ValueError("ndim %d is more than %d" % (ndim, _MAX_NDIM))
    found = _PACKED_DTYPES.get(dtype) if type(dtype) is str else None
    if found is not None:
        packed = found
        dt.code, dt.bits, dt.lanes = packed & 0xFF, (packed >> 8) & 0xFF, packed >> 16
    else:
        dt.code, dt.bits, dt.lanes = _data_type(dtype)
    if type(device) is not tuple or len(device) != 2:
        device = _device_arg(device)
    if type(address) is not int or type(byte_offset) is not int:
        address, byte_offset = operator.index(address), operator.index(byte_offset)
    if address < 0 or byte_offset < 0:
        raise ValueError("address and byte_offset must not be negative")
    if byte_offset >= 1 << 63:
        raise ValueError("byte_offset %d is out of range" % byte_offset)
    if on_stream is not None and not callable(on_stream):
        raise TypeError("on_stream must be callable")
    if on_copy is not None and not callable(on_copy):
        raise TypeError("on_copy must be callable")
    try:  # out of the C type's range: a ValueError, as in dlpack_ctypes
        dev.device_type, dev.device_id = device
        _int64_dims(shape, dims, ndim, "extents")
        if strides is not None:
            _int64_dims(strides, dims + ndim, ndim, "strides")
        data = <void*><size_t>address
        offset = byte_offset
    except OverflowError as e:
        raise ValueError("from_pointer argument out of range: %s" % e) from None
    t = _new_view(data, ndim, dims, dims + ndim if strides is not None else NULL, dt, dev, offset, readonly)
    t._owner = owner
    t._on_stream = on_stream
    t._on_copy = on_copy
    return t


cdef int _format_code(const char* fmt, Py_ssize_t itemsize) noexcept:
    """The DLDataTypeCode of a one-letter buffer format in this machine's
    byte order, or -1 (the shared _format_dtype then explains)."""
    cdef char c
    if fmt[0] == b"@" or fmt[0] == b"=" or (fmt[0] == b"<" and _LITTLE_ENDIAN):
        fmt += 1
    c = fmt[0]
    if c == 0 or (fmt[1] != 0 and c != b"Z"):
        return -1
    if c == b"b" or c == b"h" or c == b"i" or c == b"l" or c == b"q" or c == b"n":
        return dlpack.kDLInt
    if c == b"B" or c == b"H" or c == b"I" or c == b"L" or c == b"Q" or c == b"N":
        return dlpack.kDLUInt
    if c == b"e" or c == b"f" or c == b"d":
        return dlpack.kDLFloat
    if c == b"?":
        return dlpack.kDLBool
    if c == b"Z" and (fmt[1] == b"f" or fmt[1] == b"d") and fmt[2] == 0:
        return dlpack.kDLComplex
    return -1


cdef bint _LITTLE_ENDIAN = sys.byteorder == "little"


def from_buffer(obj, /, *, readonly=None):
    """A CPU Tensor over any buffer-protocol object (bytearray, array.array,
    mmap, memoryview, ctypes arrays, ...), zero-copy: dtype from the buffer's
    format, shape and strides from the buffer. Read-only when the buffer is
    or readonly=True; readonly=False insists on a writable buffer. The
    buffer is held until the Tensor and every export of it are done.

    JAX shares memory only when the first element is 64-byte aligned (see
    from_pointer): an mmap.mmap(-1, size) is page-aligned, a bytearray or a
    NumPy array need not be."""
    cdef Py_buffer* view = <Py_buffer*>malloc(sizeof(Py_buffer))
    cdef int64_t dims[128]  # shape, then strides: 2 * _MAX_NDIM
    cdef Tensor t = _new_tensor()
    cdef const char* fmt
    cdef int code
    cdef int i
    if view == NULL:
        raise MemoryError()
    try:
        PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO | (PyBUF_WRITABLE if readonly is False else 0))
    except BaseException:
        free(view)
        raise
    t._view = view  # given back with the Tensor, whatever happens next
    if view.ndim > _MAX_NDIM:
        raise BufferError("ndim %d is more than %d" % (view.ndim, _MAX_NDIM))
    fmt = view.format
    if fmt == NULL:
        fmt = "B"  # no format: unsigned bytes
    code = _format_code(fmt, view.itemsize)
    if code < 0:
        code = _format_dtype(fmt.decode("ascii"), view.itemsize).code
    for i in range(view.ndim):
        dims[i] = view.shape[i]
        if view.strides != NULL and view.strides[i] % view.itemsize:
            _element_strides([view.strides[i]], view.itemsize)  # raises, with the shared message
        if view.strides != NULL:
            dims[view.ndim + i] = view.strides[i] // view.itemsize
    t.dltensor.data = view.buf
    t.dltensor.device.device_type = dlpack.kDLCPU
    t.dltensor.device.device_id = 0
    t.dltensor.dtype.code = code
    t.dltensor.dtype.bits = 8 * view.itemsize
    t.dltensor.dtype.lanes = 1
    t._itemsize = view.itemsize
    t.flags = dlpack.DLPACK_FLAG_BITMASK_READ_ONLY if view.readonly or readonly else 0
    _set_dims(t, view.ndim, dims, dims + view.ndim if view.strides != NULL else NULL)  # ctypes arrays give no strides
    return t

