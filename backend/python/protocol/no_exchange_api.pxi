# The dlpack_cython module of a release without the C exchange API (before
# DLPack 1.2): from_dlpack always goes through __dlpack__.


cdef inline DLManagedTensorVersioned* _managed_from_exchange_api(object x, object device, object copy,
                                                                  object stream) except? NULL:
    return NULL


cdef inline Tensor _from_exchange_api(object x, object readonly, object device, object copy, object stream):
    return None


cdef object exchange_api(void* managed_tensor_from_py_object, void* managed_tensor_to_py_object):
    raise NotImplementedError("the C exchange API arrived in DLPack 1.2")


__all__ += ["to_type"]


def to_type(x, cls, /):
    """Needs the C exchange API, which arrived in DLPack 1.2."""
    raise NotImplementedError("the C exchange API arrived in DLPack 1.2")
