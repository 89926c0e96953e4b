# cython: language_level=3
# distutils: sources = csrc/fill.c
# distutils: include_dirs = csrc
"""cyarray: a Cython array type over libfill, speaking DLPack both ways (and
the C exchange API) through its vendored dlpack_cython module.

    a = Array.ramp((2, 3))           # libfill allocates and fills
    torch.from_dlpack(a)             # zero-copy, through the C exchange API
    b = Array.from_dlpack(torch_t)   # zero-copy from any DLPack producer
"""
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int64_t

cimport fillarray._vendor.python.dlpack_cython as dl
from fillarray._vendor.python.dlpack cimport DLDataType, DLDevice, DLManagedTensorVersioned, DLTensor, kDLCPU, kDLFloat
from fillarray._vendor.python.dlpack_cython cimport Tensor

from fillarray._vendor.python.dlpack_cython import from_dlpack


cdef extern from "fill.h":
    float* fill_alloc(int64_t n)
    void fill_free(void* p) noexcept nogil
    void fill_ramp(float* out, int64_t n, float start, float step)
    double fill_sum(const float* data, int64_t n, int64_t stride)
    int64_t fill_live()


def live_buffers():
    """How many libfill buffers are allocated now."""
    return fill_live()


cdef void _free_fill(void* data) noexcept nogil:
    fill_free(data)


cdef class Array:
    """A float32 array; its memory and layout are a dlpack_cython Tensor,
    over libfill's memory or adopted from another framework."""

    cdef Tensor tensor

    def __init__(self, shape):
        cdef int64_t dims[64]
        cdef int64_t n = 1
        cdef DLDataType float32 = DLDataType(code=kDLFloat, bits=32, lanes=1)
        if len(shape) > 64:
            raise ValueError("an Array has at most 64 dimensions, not %d" % len(shape))
        for i, extent in enumerate(shape):
            dims[i] = extent
            n *= extent
        data = fill_alloc(n)
        if data == NULL:
            raise MemoryError
        # The Tensor owns libfill's buffer: fill_free runs once, when the
        # Array and every export of it are gone, on whatever thread.
        self.tensor = dl.tensor_from_c(data, len(shape), dims, NULL, float32, DLDevice(kDLCPU, 0), _free_fill, data)

    @classmethod
    def ramp(cls, shape, float start=0.0, float step=1.0):
        cdef Array a = cls(shape)
        fill_ramp(<float*>a.tensor.dltensor.data, a.tensor.size, start, step)
        return a

    @property
    def shape(self):
        return self.tensor.shape

    @property
    def readonly(self):
        return self.tensor.readonly

    def sum(self):
        """libfill reads the memory, whoever wrote it (1-d arrays)."""
        cdef DLTensor* dl_tensor = &self.tensor.dltensor
        return fill_sum(<float*>(<char*>dl_tensor.data + dl_tensor.byte_offset), dl_tensor.shape[0], dl_tensor.strides[0])

    # --- DLPack producer: 5 lines ---
    __dlpack_c_exchange_api__ = dl.exchange_api(<void*>_managed_from_array, <void*>_array_from_managed)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.tensor.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    # --- DLPack consumer: 7 lines ---
    @classmethod
    def from_dlpack(cls, x, /, *, copy=None):
        cdef Array a = cls.__new__(cls)
        a.tensor = from_dlpack(x, copy=copy)  # validated; owns the producer's tensor
        if a.tensor.dtype.name != "float32":
            raise TypeError("Array holds float32, not %s" % a.tensor.dtype.name)
        return a


# --- DLPack both ways, the C exchange API's entries: 9 lines ---
cdef int _managed_from_array(void* array, DLManagedTensorVersioned** out) except -1 with gil:
    out[0] = dl.tensor_to_managed((<Array>array).tensor)
    return 0


cdef int _array_from_managed(DLManagedTensorVersioned* managed, void** out) except -1 with gil:
    cdef Array a = Array.__new__(Array)
    a.tensor = dl.tensor_from_managed(managed)
    Py_INCREF(a)
    out[0] = <void*>a
    return 0
# --- end of DLPack ---
