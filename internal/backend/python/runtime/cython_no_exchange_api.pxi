# The Cython module in releases without the C exchange API (before DLPack
# 1.2), in place of cython_exchange_api.pxi: from_dlpack always goes through
# __dlpack__. dlgen ships it as dlpack_cython_no_exchange_api.pxi.


cdef inline DLManagedTensorVersioned* _managed_from_exchange_api(object x, object device, object copy,
                                                                  object stream) except? NULL:
    return NULL


cdef inline Tensor _from_exchange_api(object x, object readonly, object device, object copy, object stream):
    return None


cdef object exchange_api(void* managed_tensor_from_py_object, void* managed_tensor_to_py_object):
    raise NotImplementedError("the C exchange API arrived in DLPack 1.2")


def to_type(x, cls, /):
    """Needs the C exchange API, which arrived in DLPack 1.2."""
    raise NotImplementedError("the C exchange API arrived in DLPack 1.2")
