# The producer API of the Cython module: Tensors over memory that a framework,
# C code or a buffer-protocol object owns, and the cdef functions declared in
# dlpack_cython.pxd for other extension modules. dlgen ships it as
# dlpack_cython_producer.pxi, included last.
from cpython.buffer cimport PyBUF_RECORDS_RO, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.long cimport PyLong_AsLongLongAndOverflow
from libc.stdint cimport INT32_MAX, INT32_MIN
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
    if not _c_passes(&dl, True, _C_MAJOR, _C_MINOR, False, True):
        _refuse(&dl, _VERSION, False, True, ValueError)
    t = _new_tensor()
    t.dltensor.data = data
    t.dltensor.device = device
    t.dltensor.dtype = dtype
    t.dltensor.byte_offset = byte_offset
    t.flags = _C_READ_ONLY if readonly else 0
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
        return PyCapsule_New(_export_versioned(t, t.flags & (_C_READ_ONLY | _C_SUBBYTE_PADDED)), _VNAME,
                             _capsule_destructor)
    if _readonly(t):
        raise BufferError(_LEGACY_READ_ONLY)
    if _padded(t):
        raise BufferError(_LEGACY_PADDED)
    return PyCapsule_New(_export_legacy(t), _NAME, _capsule_destructor)


cdef DLManagedTensorVersioned* tensor_to_managed(Tensor t) except NULL:
    t._check_open()
    return _export_versioned(t, t.flags & (_C_READ_ONLY | _C_SUBBYTE_PADDED))


cdef Tensor tensor_from_managed(DLManagedTensorVersioned* managed):
    return _adopt(managed, True, None)


cdef void _legacy_wrapper_deleter(DLManagedTensorVersioned* self) noexcept nogil:
    cdef DLManagedTensor* legacy = <DLManagedTensor*>self.manager_ctx
    free(self)
    if legacy.deleter != NULL:
        legacy.deleter(legacy)


cdef DLManagedTensorVersioned* _versioned_from_legacy(DLManagedTensor* legacy) except NULL:
    """A versioned managed tensor of this release owning a legacy one, which
    passed the checks: the same DLTensor, with strides of its own where the
    legacy tensor's are NULL (row-major), no flags (writable), deleted
    through the legacy deleter."""
    cdef int ndim = legacy.dl_tensor.ndim
    cdef bint row_major = legacy.dl_tensor.strides == NULL and ndim > 0
    cdef DLManagedTensorVersioned* m = <DLManagedTensorVersioned*>malloc(
        sizeof(DLManagedTensorVersioned) + (ndim * sizeof(int64_t) if row_major else 0))
    cdef int64_t step = 1
    cdef int i
    if m == NULL:
        if legacy.deleter != NULL:
            legacy.deleter(legacy)
        raise MemoryError()
    m.version.major = _C_MAJOR
    m.version.minor = _C_MINOR
    m.manager_ctx = legacy
    m.deleter = _legacy_wrapper_deleter
    m.flags = 0
    m.dl_tensor = legacy.dl_tensor
    if row_major:
        m.dl_tensor.strides = <int64_t*>(m + 1)
        for i in range(ndim - 1, -1, -1):
            m.dl_tensor.strides[i] = step
            step *= legacy.dl_tensor.shape[i] if legacy.dl_tensor.shape[i] > 0 else 1
    return m


cdef DLManagedTensorVersioned* managed_from_object(object x, bint readonly=False, object stream=None,
                                                   object device=None, object copy=None) except NULL:
    cdef DLManagedTensorVersioned* m = NULL
    cdef DLManagedTensor* legacy
    cdef void* address
    cdef bint versioned = True
    cdef Tensor t
    cdef Tensor c
    if device is not None:
        device = _device(device)
    if PyCapsule_CheckExact(x):
        _check_capsule_stream(stream)
    else:
        m = _managed_from_exchange_api(x, device, copy, stream)
    if m == NULL:
        address = _take(x if PyCapsule_CheckExact(x) else _request_capsule(x, copy, device, stream), &versioned)
        if versioned:
            m = <DLManagedTensorVersioned*>address
        else:  # checked as a legacy tensor, then wrapped
            legacy = <DLManagedTensor*>address
            try:
                _check(&legacy.dl_tensor, False, 0, 0, False, False, None)
            except BaseException:
                if legacy.deleter != NULL:
                    legacy.deleter(legacy)
                raise
            m = _versioned_from_legacy(legacy)
    try:
        if versioned:
            _check(&m.dl_tensor, True, m.version.major, m.version.minor, m.flags & _C_SUBBYTE_PADDED, False, None)
        if device is not None and not _on_device((<int32_t>m.dl_tensor.device.device_type, m.dl_tensor.device.device_id),
                                                 device):
            raise BufferError("the producer gave its tensor on device %r, not %r"
                              % ((<int32_t>m.dl_tensor.device.device_type, m.dl_tensor.device.device_id), tuple(device)))
    except BaseException:
        if m.deleter != NULL:
            m.deleter(m)
        raise
    if copy and not (m.flags & _C_IS_COPIED):
        # A private copy, as from_dlpack makes it, exported as a managed tensor.
        t = _adopt(m, True, None)
        try:
            c = _private_copy(t)
        finally:
            t._release()
        m = _export_versioned(c, c.flags & (_C_IS_COPIED | _C_SUBBYTE_PADDED))
    if readonly:
        m.flags |= _C_READ_ONLY
    return m


# --- Python entry points ------------------------------------------------------

cdef bint _int64_dims(object values, int64_t* out, Py_ssize_t ndim) except -1:
    """Converts ndim integers (operator.index) into out; False where there
    are not ndim of them or one does not fit int64 (rules.py then says
    which rule the tensor breaks)."""
    cdef Py_ssize_t i
    cdef tuple items
    if len(values) != ndim:
        return False
    try:
        if type(values) is tuple:
            items = <tuple>values
            for i in range(ndim):
                out[i] = items[i] if type(items[i]) is int else operator.index(items[i])
        else:
            for i in range(ndim):
                out[i] = operator.index(values[i])
    except OverflowError:
        return False
    return True


cdef bint _c_device(object device, DLDevice* out) except -1:
    """device into out where it is a (device_type, device_id) tuple of two
    ints that fit int32, the common argument, taken with no Python call;
    False otherwise (_device then reads or refuses it)."""
    cdef tuple pair
    cdef int overflow = 0
    cdef long long kind, index
    if type(device) is not tuple or len(<tuple>device) != 2:
        return False
    pair = <tuple>device
    if type(pair[0]) is not int or type(pair[1]) is not int:
        return False
    kind = PyLong_AsLongLongAndOverflow(pair[0], &overflow)
    if overflow or not INT32_MIN <= kind <= INT32_MAX:
        return False
    index = PyLong_AsLongLongAndOverflow(pair[1], &overflow)
    if overflow or not INT32_MIN <= index <= INT32_MAX:
        return False
    out.device_type = <dlpack.DLDeviceType><int32_t>kind
    out.device_id = <int32_t>index
    return True


cdef int _refuse_arguments(object shape, object strides, DLDataType dt, object address,
                           object byte_offset) except -1:
    """rules.py's verdict on from_pointer's arguments where C cannot hold
    them: raises its first failing check (ValueError)."""
    shape = _dims_arg(shape, "shape")
    strides = _contiguous_strides(shape) if strides is None else _dims_arg(strides, "strides")
    _check_layout(_VERSION, shape, strides, dt.code, dt.bits, dt.lanes, byte_offset, address, False, ValueError)
    raise SystemError("dlpack_cython: from_pointer refused arguments that rules.py accepts")


# Each dtype name's (code, bits, lanes) packed in one integer, for from_pointer.
cdef dict _PACKED_DTYPES = {name: code | bits << 8 | 1 << 16 for name, (code, bits) in _DTYPES.items()}


def from_pointer(address, shape, dtype, /, *, strides=None, byte_offset=0, device=(1, 0), owner=None,
                 readonly=False, on_stream=None, on_copy=None, byte_strides=None):
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
    cdef int64_t small[128]  # shape, then strides, of up to 64 dimensions; more go on the heap
    cdef int64_t* dims = small
    cdef DLDataType dt
    cdef DLDevice dev
    cdef Tensor t
    cdef Py_ssize_t ndim
    cdef uint64_t packed
    found = _PACKED_DTYPES.get(dtype) if type(dtype) is str else None
    if found is not None:
        packed = found
        dt.code, dt.bits, dt.lanes = packed & 0xFF, (packed >> 8) & 0xFF, packed >> 16
    else:
        dt.code, dt.bits, dt.lanes = _data_type(dtype)
    if not _c_device(device, &dev):
        device_type, dev.device_id = _device(device)
        dev.device_type = <dlpack.DLDeviceType><int32_t>device_type
    if type(address) is not int or not 0 <= address < _ADDRESSES:
        address = _pointer_address(address, _DATA_ADDRESS)
    if type(byte_offset) is not int or byte_offset < 0:
        byte_offset = _byte_offset(byte_offset)
    if on_stream is not None and not callable(on_stream):
        raise TypeError("on_stream must be callable")
    if on_copy is not None and not callable(on_copy):
        raise TypeError("on_copy must be callable")
    if type(shape) is not tuple:
        shape = _dims_arg(shape, "shape")
    if strides is not None or byte_strides is not None:
        shape = _dims_arg(shape, "shape")
        strides = _strides_arg(shape, strides, byte_strides, DataType(dt.code, dt.bits, dt.lanes))
    ndim = len(<tuple>shape)
    if 2 * ndim > <Py_ssize_t>(sizeof(small) // sizeof(small[0])):
        dims = <int64_t*>malloc(2 * ndim * sizeof(int64_t))
        if dims == NULL:
            raise MemoryError()
    try:
        if (ndim > _C_MAX_NDIM or byte_offset >= 1 << 64 or not _int64_dims(shape, dims, ndim)
                or (strides is not None and not _int64_dims(strides, dims + ndim, ndim))):
            _refuse_arguments(shape, strides, dt, address, byte_offset)
        t = _new_view(<void*><uintptr_t>address, ndim, dims, dims + ndim if strides is not None else NULL, dt,
                      dev, byte_offset, readonly)
    finally:
        if dims != small:
            free(dims)
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
    cdef int64_t dims[128]  # shape, then strides: a buffer has at most 64 dimensions (PyBUF_MAX_NDIM)
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
    if view.ndim > _C_MAX_NDIM:
        raise _broken("ndim_range", view.ndim, _MAX_NDIM)
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
    t.flags = _C_READ_ONLY if view.readonly or readonly else 0
    _set_dims(t, view.ndim, dims, dims + view.ndim if view.strides != NULL else NULL)  # ctypes arrays give no strides
    return t

