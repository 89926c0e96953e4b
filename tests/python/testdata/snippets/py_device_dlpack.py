# The harness of docs/devices.md's __dlpack__ body: a framework's array on
# CUDA device 0 whose address nothing maps (a read would crash), held
# zero-copy by a consumer and never read.
import dlpack_ctypes as dl


class CudaArray:
    def __init__(self):
        self.address, self.shape, self.strides = 0x10000, (2, 3), (3, 1)
        self.waited = []

    def wait_on(self, stream):
        self.waited.append(stream)

    def copy_for(self, device, stream):
        raise BufferError("no copies here")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        array, address, shape, strides = self, self.address, self.shape, self.strides
        # SNIPPET

    def __dlpack_device__(self):
        return (dl.DLDeviceType.kDLCUDA, 0)


array = CudaArray()
t = dl.from_dlpack(array, stream=7)
assert t.device == (dl.DLDeviceType.kDLCUDA, 0) and t.shape == (2, 3) and array.waited == [7], (t.device, array.waited)
t.close()
