# cython: language_level=3
# The harness of docs/python.md's cimports: a module that uses each name.
# SNIPPET


def describe(Tensor t):
    cdef dl.Tensor same = t
    cdef DLManagedTensorVersioned* m = NULL
    cdef DLDataType dtype
    cdef DLDevice device
    dtype.code, dtype.bits, dtype.lanes = kDLFloat, 32, 1
    device.device_type, device.device_id = kDLCPU, 0
    return same is t, m == NULL, dtype.bits, device.device_id
