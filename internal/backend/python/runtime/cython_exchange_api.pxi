# The C exchange API of the Cython module, in releases that have it (DLPack
# 1.2 and later; older ones include cython_no_exchange_api.pxi instead): the
# producer's table on Tensor, and the consumer's lookup of a producer's table.
# dlgen ships it as dlpack_cython_exchange_api.pxi, included after
# dlpack_cython_tensor.pxi. The generated declarations name the type
# attribute (_EXCHANGE_API_ATTRIBUTE, and the previous release's spelling in
# _PREVIOUS_EXCHANGE_API_ATTRIBUTE or None) and the capsule
# (_EXCHANGE_API_CAPSULE_NAME, NULL while the table was an integer address).
from cpython.object cimport PyTypeObject
from libc.stdint cimport int32_t, uint8_t
from cpython.exc cimport PyErr_Clear, PyErr_NormalizeException, PyErr_SetObject
from cpython.ref cimport Py_XDECREF
from libc.stdlib cimport calloc

cdef extern from "Python.h":
    void* PyLong_AsVoidPtr(object) except? NULL
    object PyLong_FromVoidPtr(void*)
    void PyType_Modified(PyTypeObject*)
    ctypedef struct _TypeDict "PyTypeObject":
        PyObject* tp_dict
    void PyException_SetTraceback(PyObject* ex, PyObject* tb)


# --- The C exchange API: producer ----------------------------------------------

# Each entry is called from C, maybe with the caller's own exception pending
# (Paddle does that): it sets that exception aside, does its work, and gives
# it back; if the entry fails, its error carries it as __context__.

cdef struct _Pending:
    PyObject* type
    PyObject* value
    PyObject* traceback


cdef inline void _set_aside(_Pending* pending) noexcept:
    PyErr_Fetch(&pending.type, &pending.value, &pending.traceback)


cdef int _give_back(_Pending* pending, object error) noexcept:
    """Ends an entry: 0 with the caller's exception restored, or -1 with
    error set and the caller's exception as its context."""
    if error is None:
        PyErr_Restore(pending.type, pending.value, pending.traceback)
        return 0
    if pending.type != NULL:
        PyErr_NormalizeException(&pending.type, &pending.value, &pending.traceback)
        if pending.traceback != NULL:
            PyException_SetTraceback(pending.value, pending.traceback)
        error.__context__ = <object>pending.value
        Py_XDECREF(pending.type)
        Py_XDECREF(pending.value)
        Py_XDECREF(pending.traceback)
    PyErr_SetObject(type(error), error)
    return -1


cdef int _api_allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                        void (*SetError)(void* error_ctx, const char* kind, const char* message) noexcept nogil) noexcept with gil:
    cdef _Pending pending
    cdef int status = 0
    _set_aside(&pending)
    try:
        _allocate(prototype, out)
    except BaseException as e:
        SetError(error_ctx, type(e).__name__.encode(), str(e).encode())
        status = -1
    _give_back(&pending, None)  # the error went to SetError
    return status


cdef int _allocate(DLTensor* prototype, DLManagedTensorVersioned** out) except -1:
    cdef Tensor c = _new_tensor()
    cdef int64_t n = 1
    cdef int i
    if prototype.ndim < 0 or prototype.ndim > _C_MAX_NDIM or (prototype.ndim and prototype.shape == NULL):
        raise BufferError("invalid prototype shape")
    for i in range(prototype.ndim):
        if prototype.shape[i] < 0:
            raise BufferError("negative extent in prototype")
        n *= prototype.shape[i]
    if not _host_readable(prototype.device.device_type):
        raise BufferError("this producer allocates CPU memory only")
    c.dltensor.dtype = prototype.dtype
    c.dltensor.device = prototype.device
    c._itemsize = (prototype.dtype.bits * prototype.dtype.lanes + 7) // 8
    c._owned = calloc(n * c._itemsize if n else 1, 1)
    if c._owned == NULL:
        raise MemoryError()
    c.dltensor.data = c._owned
    _set_dims(c, prototype.ndim, prototype.shape, NULL)
    out[0] = _export_versioned(c, 0)
    return 0


cdef Tensor _our_tensor(object obj):
    if type(obj) is not Tensor:
        raise TypeError("expected a dlpack_cython.Tensor, got %s" % type(obj).__name__)
    (<Tensor>obj)._check_open()
    return <Tensor>obj


cdef int _api_from_py_object(void* py_object, DLManagedTensorVersioned** out) noexcept with gil:
    cdef _Pending pending
    cdef Tensor t
    _set_aside(&pending)
    try:
        t = _our_tensor(<object>py_object)
        out[0] = _export_versioned(t, t.flags & (_C_READ_ONLY | _C_SUBBYTE_PADDED))
    except BaseException as e:
        return _give_back(&pending, e)
    return _give_back(&pending, None)


cdef int _api_to_py_object(DLManagedTensorVersioned* tensor, void** out_py_object) noexcept with gil:
    cdef _Pending pending
    cdef Tensor t
    _set_aside(&pending)
    try:
        t = _adopt(<void*>tensor, True, None)
        Py_INCREF(t)
        out_py_object[0] = <void*>t
    except BaseException as e:
        return _give_back(&pending, e)
    return _give_back(&pending, None)


cdef int _api_dltensor_from_py_object(void* py_object, DLTensor* out) noexcept with gil:
    cdef _Pending pending
    cdef Tensor t
    _set_aside(&pending)
    try:
        t = _our_tensor(<object>py_object)
        _fill(out, t, t._dims)  # borrows the tensor's own shape and strides
    except BaseException as e:
        return _give_back(&pending, e)
    return _give_back(&pending, None)


cdef int _api_current_work_stream(dlpack.DLDeviceType device_type, int32_t device_id, void** out_current_stream) noexcept nogil:
    """NULL on the CPU, which has no stream. A Tensor on another device is
    ready on the stream it was imported with, which is the Tensor's, not
    the device's: there is no current work stream to give, and a consumer
    must take device tensors through __dlpack__(stream=...)."""
    out_current_stream[0] = NULL
    if device_type == dlpack.kDLCPU:
        return 0
    with gil:
        return _no_current_stream(device_type, device_id)


cdef int _no_current_stream(int device_type, int32_t device_id) noexcept:
    cdef _Pending pending
    _set_aside(&pending)
    return _give_back(&pending, BufferError(
        "dlpack_cython keeps no current work stream for device (%d, %d): take its tensors there "
        "through __dlpack__(stream=...)" % (device_type, device_id)))


cdef DLPackExchangeAPI _exchange_api


cdef DLPackExchangeAPI* _init_exchange_api() noexcept:
    _exchange_api.header.version.major = _C_MAJOR
    _exchange_api.header.version.minor = _C_MINOR
    _exchange_api.header.prev_api = NULL
    _exchange_api.managed_tensor_allocator = <DLPackManagedTensorAllocator>_api_allocator
    _exchange_api.managed_tensor_from_py_object_no_sync = <DLPackManagedTensorFromPyObjectNoSync>_api_from_py_object
    _exchange_api.managed_tensor_to_py_object_no_sync = <DLPackManagedTensorToPyObjectNoSync>_api_to_py_object
    _exchange_api.dltensor_from_py_object_no_sync = <DLPackDLTensorFromPyObjectNoSync>_api_dltensor_from_py_object
    _exchange_api.current_work_stream = <DLPackCurrentWorkStream>_api_current_work_stream
    return &_exchange_api


# --- The C exchange API: consumer ----------------------------------------------
#
# A producer's table is a faster road to what its __dlpack__ gives, and
# from_dlpack takes it only where it cannot answer differently, by three
# rules. The first two hold for any producer:
#   - The table serves instances of the type that publishes it (in the
#     type's own __dict__) only. A subclass may change what __dlpack__ does
#     (or refuses) without publishing a table of its own: its instances go
#     through __dlpack__.
#   - When the table's entry fails, its error is dropped and __dlpack__
#     answers: the producer's refusal is the one __dlpack__ makes, with the
#     exception type __dlpack__ raises (PyTorch's entry raises RuntimeError
#     for sparse, quantized and meta tensors where __dlpack__ raises
#     BufferError).
#   - Where a producer's entry is known to export what its __dlpack__
#     refuses, the consumer asks first what __dlpack__ would have asked, and
#     hands those tensors to __dlpack__. Only PyTorch is known to (2.10 to
#     2.15 at least): its entry exports tensors that require grad, and
#     conjugate views with the bit not applied (silently wrong values).
#     Instances of torch.Tensor and its subclasses are checked after the
#     entry: requires_grad for element types that can have gradients (not
#     integers or bool), is_conj() for complex ones, so that an ordinary
#     integer tensor costs nothing more and a float one one attribute read.
#     A check that raises (a subclass that allows only DLPack calls) also
#     hands the tensor to __dlpack__.
# PyTorch's __dlpack__ itself exports negative-bit views (torch._neg_view,
# z.conj().imag) with the bit not applied; the table does the same, so the
# two agree, and that one is PyTorch's to fix (call resolve_neg() first).

# Per type: the address of the table from_dlpack uses, 0 for none, with
# _CHECK_TORCH or'ed in (tables are pointer-aligned) for PyTorch's types.
cdef dict _api_by_type = {}
cdef size_t _CHECK_TORCH = 1


# The last type asked about and its answer: a loop over one type's
# instances costs one comparison (the reference keeps the type alive). Two
# globals that another thread could change between their reads: used under
# the GIL only, and a free-threaded build asks _api_by_type (a dict, safe
# to share) every time.
cdef object _last_type = None
cdef size_t _last_tagged = 0

cdef extern from *:
    """
    #ifdef Py_GIL_DISABLED
    #define DLGEN_FREE_THREADED 1
    #else
    #define DLGEN_FREE_THREADED 0
    #endif
    """
    const bint DLGEN_FREE_THREADED


cdef size_t _consumer_table(object cls) except? 0:
    """The table from_dlpack uses for instances of cls (see the rules above),
    tagged; 0 if none. Cached per type, as the protocol allows."""
    global _last_type, _last_tagged
    if not DLGEN_FREE_THREADED and cls is _last_type:
        return _last_tagged
    cached = _api_by_type.get(cls)
    if cached is not None:
        if not DLGEN_FREE_THREADED:
            _last_type, _last_tagged = cls, <size_t>cached
        return <size_t>cached
    cdef size_t tagged = 0
    own = getattr(cls, "__dict__", {})
    if _EXCHANGE_API_ATTRIBUTE in own or (_PREVIOUS_EXCHANGE_API_ATTRIBUTE is not None
                                          and _PREVIOUS_EXCHANGE_API_ATTRIBUTE in own):
        tagged = <size_t>_lookup_exchange_api(cls)
        if tagged and any(getattr(base, "__module__", None) == "torch" and getattr(base, "__qualname__", None) == "Tensor"
                          for base in cls.__mro__):
            tagged |= _CHECK_TORCH
    if len(_api_by_type) < 1024:
        _api_by_type[cls] = tagged
    return tagged


# A real prev_api chain holds a table per major version: one this long loops.
cdef int _MAX_TABLES = 64


cdef DLPackExchangeAPI* _lookup_exchange_api(object cls) except? NULL:
    """cls's table of this major version, NULL if it has none. The attribute
    must have its release's form and the chain must end (a TypeError or a
    ValueError otherwise): what a hostile one would make C read or loop on."""
    cdef DLPackExchangeAPIHeader* header = _table_of(cls, _EXCHANGE_API_ATTRIBUTE,
                                                     _EXCHANGE_API_CAPSULE_NAME == NULL)
    cdef str attribute = _EXCHANGE_API_ATTRIBUTE
    if header == NULL and _PREVIOUS_EXCHANGE_API_ATTRIBUTE is not None:  # producers of an older release
        attribute = _PREVIOUS_EXCHANGE_API_ATTRIBUTE
        header = _table_of(cls, attribute, True)
    cdef int tables = 0
    while header != NULL and header.version.major != _C_MAJOR:
        tables += 1
        if tables == _MAX_TABLES:
            raise ValueError("%s.%s: its prev_api chain does not end within %d tables"
                             % (getattr(cls, "__name__", cls), attribute, _MAX_TABLES))
        header = header.prev_api
    return <DLPackExchangeAPI*>header


cdef DLPackExchangeAPIHeader* _table_of(object cls, str attribute, bint address_allowed) except? NULL:
    """The table cls's attribute points to: a capsule named
    dlpack_exchange_api (DLPack 1.3), or, where address_allowed (the 1.2
    spelling), an integer address, which nothing can check but that it is
    one a table could have (aligned, past the first 64 KiB, which no
    system maps). NULL if the attribute is None or missing."""
    attr = getattr(cls, attribute, None)
    if attr is None:
        return NULL
    if _EXCHANGE_API_CAPSULE_NAME != NULL and PyCapsule_IsValid(attr, _EXCHANGE_API_CAPSULE_NAME):
        return <DLPackExchangeAPIHeader*>PyCapsule_GetPointer(attr, _EXCHANGE_API_CAPSULE_NAME)
    if address_allowed and type(attr) is int:
        if attr < 65536 or attr % sizeof(void*) or attr >> (8 * sizeof(void*)):
            raise ValueError("%s.%s is %d, not the address of a table"
                             % (getattr(cls, "__name__", cls), attribute, attr))
        return <DLPackExchangeAPIHeader*>PyLong_AsVoidPtr(attr)
    forms = []
    if _EXCHANGE_API_CAPSULE_NAME != NULL:
        forms.append("a capsule named %r" % (<bytes>_EXCHANGE_API_CAPSULE_NAME).decode())
    if address_allowed:
        forms.append("an integer address")
    raise TypeError("%s.%s is %s, not %s" % (getattr(cls, "__name__", cls), attribute, type(attr).__name__,
                                               " or ".join(forms)))


cdef bint _torch_would_refuse(object x, DLManagedTensorVersioned* m):
    """What PyTorch's __dlpack__ checks and its table does not (see above)."""
    cdef uint8_t code = m.dl_tensor.dtype.code
    if code == dlpack.kDLInt or code == dlpack.kDLUInt or code == dlpack.kDLBool:
        return False  # no gradient, no conjugate bit
    return x.requires_grad or (code == dlpack.kDLComplex and x.is_conj())


cdef DLManagedTensorVersioned* _managed_from_exchange_api(object x, object device, object copy,
                                                           object stream) except? NULL:
    """x's managed tensor through its type's exchange API (not validated
    yet), or NULL where from_dlpack must ask __dlpack__: the rules above,
    and from_dlpack's keywords (_fits)."""
    cdef DLManagedTensorVersioned* out = NULL
    cdef size_t tagged = _consumer_table(type(x))
    cdef DLPackExchangeAPI* api = <DLPackExchangeAPI*>(tagged & ~_CHECK_TORCH)
    if api == NULL:
        return NULL
    if api.managed_tensor_from_py_object_no_sync(<void*>x, &out) != 0 or out == NULL:
        PyErr_Clear()  # __dlpack__ makes the producer's refusal
        return NULL
    if tagged & _CHECK_TORCH:
        try:
            refused = _torch_would_refuse(x, out)
        except Exception:
            refused = True
        if refused:
            if out.deleter != NULL:
                out.deleter(out)
            return NULL
    if not _fits(api, out, device, copy, stream):
        if out.deleter != NULL:
            out.deleter(out)
        return NULL
    return out


# dlgen:checker cython-exchange-stream (docs/rules.md lists every checker)
cdef bint _fits(DLPackExchangeAPI* api, DLManagedTensorVersioned* m, object device, object copy,
                object stream) except -1:
    """Whether the tensor the no-sync entry gave is what from_dlpack's
    keywords ask for, as __dlpack__ would give it: on the device asked for,
    one this module can copy if copy=True, and ordered for the consumer's
    stream. The entry does not synchronise, so a tensor on a device with
    streams fits only a consumer on the producer's current work stream, or
    one asking for none (-1); else __dlpack__(stream=...) must make it."""
    cdef DLDevice dev = m.dl_tensor.device
    cdef void* current = NULL
    if m.version.major != _C_MAJOR:
        return True  # _adopt refuses it, and says why
    if device is not None and not _on_device((<int32_t>dev.device_type, dev.device_id), device):
        return False
    if copy and not _host_readable(dev.device_type):
        return False
    if dev.device_type in _STREAMLESS:
        return stream is None
    if type(stream) is not int:
        return False  # None: __dlpack__ synchronises as its producer takes None
    if stream == -1:
        return True
    if api.current_work_stream == NULL or api.current_work_stream(dev.device_type, dev.device_id, &current) != 0:
        PyErr_Clear()
        return False
    return PyLong_FromVoidPtr(current) == stream


cdef Tensor _from_exchange_api(object x, object readonly, object device, object copy, object stream):
    """x's tensor through its type's exchange API, or None (see above)."""
    cdef DLManagedTensorVersioned* out = _managed_from_exchange_api(x, device, copy, stream)
    if out == NULL:
        return None
    return _adopt(out, True, readonly)


cdef object _exchange_api_object():
    """The table as this release publishes it: a capsule, or (before DLPack
    1.3, which named no capsule) its integer address."""
    if _EXCHANGE_API_CAPSULE_NAME == NULL:
        return PyLong_FromVoidPtr(_init_exchange_api())
    return PyCapsule_New(_init_exchange_api(), _EXCHANGE_API_CAPSULE_NAME, NULL)


cdef object exchange_api(void* managed_tensor_from_py_object, void* managed_tensor_to_py_object):
    cdef DLPackExchangeAPI* api = <DLPackExchangeAPI*>calloc(1, sizeof(DLPackExchangeAPI))
    if api == NULL:  # never freed: consumers cache a type's table for the process
        raise MemoryError()
    api[0] = _init_exchange_api()[0]
    api.managed_tensor_from_py_object_no_sync = <DLPackManagedTensorFromPyObjectNoSync>managed_tensor_from_py_object
    api.managed_tensor_to_py_object_no_sync = <DLPackManagedTensorToPyObjectNoSync>managed_tensor_to_py_object
    api.dltensor_from_py_object_no_sync = NULL  # optional: consumers then use the managed entry
    if _EXCHANGE_API_CAPSULE_NAME == NULL:
        return PyLong_FromVoidPtr(api)
    return PyCapsule_New(api, _EXCHANGE_API_CAPSULE_NAME, NULL)


def to_type(x, cls, /):
    """x's tensor (a Tensor, any DLPack object or a capsule) as an instance
    of cls, a type with a C exchange API (torch.Tensor, say), made by cls's
    own managed_tensor_to_py_object_no_sync: no __dlpack__ call on the way."""
    cdef DLPackExchangeAPI* api = _lookup_exchange_api(cls)
    cdef DLManagedTensorVersioned* m
    cdef void* out = NULL
    if api == NULL or api.managed_tensor_to_py_object_no_sync == NULL:
        raise TypeError("%s has no DLPack C exchange API" % getattr(cls, "__name__", cls))
    m = tensor_to_managed(x) if type(x) is Tensor else managed_from_object(x)
    if api.managed_tensor_to_py_object_no_sync(m, &out) != 0 or out == NULL:
        # Who owns m after a failure is not said by the protocol: leaking it
        # is safe, deleting it could be a double free.
        raise BufferError("%s could not take the tensor" % getattr(cls, "__name__", cls))
    return <object>out


cdef void _publish_exchange_api() except *:
    """Sets Tensor.<this release's attribute> to the table. The attribute's
    name varies by release, and an extension type's body cannot compute a
    name, so it goes into the type's dict the way Cython stores class
    attributes: directly, then PyType_Modified."""
    (<dict>(<_TypeDict*><PyObject*>Tensor).tp_dict)[_EXCHANGE_API_ATTRIBUTE] = _exchange_api_object()
    PyType_Modified(<PyTypeObject*>Tensor)


_publish_exchange_api()
