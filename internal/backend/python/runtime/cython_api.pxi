# The Cython API of dlpack_cython, for other extension modules: dlgen ships it
# as dlpack_cython_api.pxi, which dlpack_cython.pxd includes after cimporting
# the header's structs (DLTensor, DLManagedTensorVersioned, ...) from
# dlpack.pxd.
cimport cython
from libc.stdint cimport int64_t, uint64_t

# Frees memory owned by C code, given the context it was registered with.
ctypedef void (*c_deleter)(void* context) noexcept nogil


@cython.final
cdef class Tensor:
    cdef DLTensor dltensor
    cdef uint64_t flags
    # The rest is dlpack_cython's own.
    cdef DLManagedTensorVersioned* _mv   # an imported tensor, deleted when done
    cdef DLManagedTensor* _ml
    cdef void* _owned                    # a private copy's memory
    cdef c_deleter _c_deleter            # memory owned by C code
    cdef void* _c_context
    cdef object _owner                   # the object that owns the memory
    cdef object _on_stream               # called by __dlpack__(stream=...)
    cdef object _on_copy                 # called for copies this module cannot make
    cdef tuple _stream                   # an import's stream, as a 1-tuple; None for others
    cdef void* _view                     # a Py_buffer, from from_buffer
    cdef int64_t* _dims                  # shape then strides (elements)
    cdef Py_ssize_t* _bdims              # shape then strides (bytes), for buffers
    cdef int64_t _inline_dims[18]        # _dims and _bdims up to 4 dimensions (no malloc)
    cdef Py_ssize_t _itemsize
    cdef Py_ssize_t _exports             # live exports, each holding a reference
    cdef bint _closed
    cdef object __weakref__
    cdef void _release(self) noexcept
    cdef void _free(self) noexcept
    cdef int _check_open(self) except -1
    cdef int64_t _size(self) noexcept
    cdef int64_t _nbytes(self) noexcept
    cdef bint _contiguous(self) noexcept
    cdef int _hold(self) except -1
    cdef void _unhold(self) noexcept


# A Tensor over memory that owner keeps alive: owner is held until the
# Tensor and every export of it are done, in either order. shape and strides
# (elements; NULL strides: C-contiguous) are copied. ValueError for what an
# import would refuse.
cdef Tensor tensor_from_pointer(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                                DLDataType dtype, DLDevice device, object owner, bint readonly=*)

# A Tensor over memory that C code owns: deleter(context) runs exactly once,
# when the Tensor and every export of it are done, on whichever thread the
# last consumer is, without needing the GIL; also when the arguments are
# refused (ValueError).
cdef Tensor tensor_from_c(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                          DLDataType dtype, DLDevice device, c_deleter deleter, void* context, bint readonly=*)

# Takes x's tensor, once, as a validated DLManagedTensorVersioned* that the
# caller owns and must delete exactly once; no Python object is made (but for
# a copy). x is any DLPack object (through its type's C exchange API when it
# has one and its tensor fits the request, as from_dlpack decides) or a
# capsule (then stream must be None). stream, device and copy mean what they
# mean to from_dlpack: stream goes to the producer; device=(device_type,
# device_id) asks the producer for the tensor there (a copy if it must) and
# refuses it elsewhere (BufferError); copy=True returns a copy (the
# producer's, or a private one of memory the CPU reads, flagged IS_COPIED),
# copy=False forbids one. Without device, the tensor may be on any device:
# check m.dl_tensor.device before reading its data. A legacy tensor comes
# wrapped in a versioned one, writable unless readonly is true (which also
# marks a versioned one read-only): a legacy capsule cannot say that its
# producer's memory must not be written (JAX's arrays are immutable).
cdef DLManagedTensorVersioned* managed_from_object(object x, bint readonly=*, object stream=*, object device=*,
                                                   object copy=*) except NULL

# A Tensor that owns a managed tensor (validated first; if it is refused,
# its deleter has run).
cdef Tensor tensor_from_managed(DLManagedTensorVersioned* managed)

# Exports of a Tensor: it (and its memory) lives until the consumer deletes
# them. A read-only Tensor has no legacy (unversioned) export.
cdef object tensor_to_capsule(Tensor t, bint versioned=*)
cdef DLManagedTensorVersioned* tensor_to_managed(Tensor t) except NULL

# A C exchange API table for a framework's own type, published the way this
# release does (a capsule from DLPack 1.3, an integer in 1.2): the framework
# gives the table's managed_tensor_from_py_object_no_sync and
# managed_tensor_to_py_object_no_sync for its type; the allocator and
# current_work_stream are dlpack_cython's. NotImplementedError before 1.2.
# The entries are called from C, maybe with the caller's exception pending:
# they should set it aside (PyErr_Fetch) and give it back (PyErr_Restore).
cdef object exchange_api(void* managed_tensor_from_py_object, void* managed_tensor_to_py_object)
