# cython: language_level=3
# The harness of docs/python-vendoring.md's cimports: mylib/_ext.pyx, which
# uses each name.
# SNIPPET


def describe(Tensor t):
    cdef dl.Tensor same = t
    cdef DLDataType dtype
    cdef DLDevice device
    dtype.code, dtype.bits, dtype.lanes = kDLFloat, 32, 1
    device.device_type, device.device_id = kDLCPU, 0
    return same is t, dtype.bits, device.device_id
