"""Both generated modules against real device frameworks, both ways,
zero-copy: dpnp on a SYCL device (Intel's OpenCL runtime for CPUs, so every
machine has one: scripts/test.sh runs this file in .venv-dpnp with the ICD
set up by environment), and CuPy and PyTorch on CUDA where a GPU is present
(skipped otherwise, never passed). The frameworks' memory is device memory
to DLPack, which the CPU must not read: everything here is checked through
the frameworks' own operations and the tensors' addresses. A framework's
from_dlpack may put its array on another queue or stream than the
producer's: a write is waited for before the other side reads it, as two
SYCL queues or CUDA streams need."""
import contextlib
import gc
import os
import sys
import weakref

import numpy as np
import pytest

REQUIRED = os.environ.get("DLGEN_REQUIRE_TOOLS") == "1"
# Set by scripts/test.sh where .venv-dpnp runs this file: no dpnp is a failure there.
REQUIRE_DPNP = os.environ.get("DLGEN_REQUIRE_DPNP") == "1"
MAX_VERSION_1 = (1, 0)


class Owner:
    """Stands for a framework's buffer object, and can be watched."""

    def __init__(self, memory):
        self.memory = memory


class Dpnp:
    """dpnp arrays: USM device memory on a SYCL device, (kDLOneAPI, id)."""

    def __init__(self):
        import dpctl
        import dpctl.memory
        import dpnp
        self.dpctl, self.xp = dpctl, dpnp
        self.queue = dpctl.SyclQueue()
        self.device = dpnp.empty(1, sycl_queue=self.queue).__dlpack_device__()

    def array(self, values):
        return self.xp.asarray(values, sycl_queue=self.queue)

    def numpy(self, x):
        return self.xp.asnumpy(x)

    def address(self, x):
        iface = x.__sycl_usm_array_interface__
        return iface["data"][0] + iface["offset"] * x.itemsize

    def is_array(self, y):
        return isinstance(y, self.xp.ndarray)

    def from_dlpack(self, t, **kw):
        return self.xp.from_dlpack(t, **kw)

    def memory(self, n):
        """n float32 of raw device memory: (address, the memory, an array over it)."""
        mem = self.dpctl.memory.MemoryUSMDevice(4 * n, queue=self.queue)
        return mem._pointer, mem, self.xp.ndarray((n,), dtype="float32", buffer=mem)

    def holds(self, x):
        """References on x's memory: its capsules hold one until deleted."""
        return sys.getrefcount(x.get_array().usm_data)

    def stream(self):
        """A stream other than the arrays' own, which records how dpnp uses
        it: dpnp makes it wait for an array's queue with a barrier."""
        barriers = []

        class RecordingQueue(self.dpctl.SyclQueue):
            def submit_barrier(self, dependent_events=None):
                barriers.append(dependent_events)
                return super().submit_barrier(dependent_events)

        q = RecordingQueue(self.queue.sycl_device)
        q.barriers = barriers
        return q

    def synchronised_on(self, stream):
        """Whether the producer made stream wait for its work."""
        return len(stream.barriers) == 1 and len(stream.barriers[0]) == 1

    def using(self, stream):
        """Makes stream the one the framework's from_dlpack gives producers:
        dpnp gives none (no synchronisation asked), whatever its queue."""
        return contextlib.nullcontext()

    def copy(self, x):
        return x.copy()

    def sync(self, x):
        """Waits for the work on x's queue: dpnp.from_dlpack puts its array
        on the device's default queue, and two queues are not ordered."""
        x.sycl_queue.wait()


class Cuda:
    """CuPy or PyTorch CUDA tensors, (kDLCUDA, id); streams are integers."""

    def __init__(self, name):
        self.name, self.streams = name, {}
        if name == "cupy":
            import cupy
            self.xp = cupy
            if cupy.cuda.runtime.getDeviceCount() == 0:
                raise RuntimeError("no CUDA device")
        else:
            import torch
            self.xp = torch
            if not torch.cuda.is_available():
                raise RuntimeError("no CUDA device")
        self.device = self.array(np.zeros(1, np.float32)).__dlpack_device__()

    def array(self, values):
        if self.name == "cupy":
            return self.xp.asarray(values)
        return self.xp.as_tensor(np.ascontiguousarray(values), device="cuda")

    def numpy(self, x):
        return self.xp.asnumpy(x) if self.name == "cupy" else x.cpu().numpy()

    def address(self, x):
        return x.data.ptr if self.name == "cupy" else x.data_ptr()

    def is_array(self, y):
        return isinstance(y, self.xp.ndarray if self.name == "cupy" else self.xp.Tensor)

    def from_dlpack(self, t, **kw):
        return self.xp.from_dlpack(t, **kw)

    def memory(self, n):
        if self.name == "cupy":
            mem = self.xp.cuda.alloc(4 * n)
            return mem.ptr, mem, self.xp.ndarray((n,), dtype=np.float32, memptr=mem)
        mem = self.xp.empty(4 * n, dtype=self.xp.uint8, device="cuda")
        return mem.data_ptr(), mem, mem.view(self.xp.float32)

    def holds(self, x):
        if self.name == "cupy":
            return sys.getrefcount(x)
        return x._use_count()  # the capsule holds the tensor itself

    def stream(self):
        if self.name == "cupy":
            s = self.xp.cuda.Stream(non_blocking=True)
            self.streams[s.ptr] = s
            return s.ptr
        s = self.xp.cuda.Stream()
        self.streams[s.cuda_stream] = s
        return s.cuda_stream

    def synchronised_on(self, stream):
        return True  # a CUDA stream's waits are not observable from Python

    def using(self, stream):
        """Makes stream current: the framework's from_dlpack passes it on."""
        s = self.streams[stream]
        return s if self.name == "cupy" else self.xp.cuda.stream(s)

    def copy(self, x):
        return x.copy() if self.name == "cupy" else x.clone()

    def sync(self, x):
        if self.name == "cupy":
            self.xp.cuda.Device().synchronize()
        else:
            self.xp.cuda.synchronize()


def make_framework(name):
    if name == "dpnp":
        try:
            import dpctl
            import dpnp  # noqa: F401
        except ImportError:
            if REQUIRE_DPNP:
                pytest.fail("dpnp is not installed (scripts/deps.sh makes .venv-dpnp)")
            pytest.skip("dpnp is not installed here (scripts/test.sh runs this file in .venv-dpnp)")
        try:
            devices = dpctl.get_devices()
        except Exception:
            devices = []
        if not devices:
            message = ("dpnp sees no SYCL device: set OCL_ICD_FILENAMES and OCL_ICD_VENDORS "
                       "as scripts/test.sh does")
            if REQUIRED or REQUIRE_DPNP:
                pytest.fail(message)
            pytest.skip(message)
        return Dpnp()
    # GPU-only: where no GPU is, scripts/deps.sh installs no CuPy (and no
    # PyTorch in .venv-dpnp), and PyTorch sees no CUDA device.
    pytest.importorskip(name, reason=f"GPU only: {name} is not installed here")
    try:
        return Cuda(name)
    except RuntimeError as e:
        pytest.skip(f"GPU only: {name}: {e}")


_frameworks = {}


@pytest.fixture(params=["dpnp", "cupy", "torch"])
def fw(request):
    if request.param not in _frameworks:
        _frameworks[request.param] = make_framework(request.param)
    return _frameworks[request.param]


def collect(dl):
    """Lets every released export go: a collection, and the ctypes module's
    sweep, which gives back what consumers deleted."""
    gc.collect()
    if hasattr(dl, "_sweep"):
        dl._sweep()


VIEWS = {
    "contiguous": lambda a: a,
    "negative strides": lambda a: a[::-1, ::-2],
    "offset": lambda a: a[1:, 2:],
    "transposed offset": lambda a: a.T[1:],
}


def sample(fw, view):
    """A float32 view of a 3x4 framework array (which the view keeps), and
    the same view in NumPy."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    if fw.__class__ is Cuda and fw.name == "torch" and view == "negative strides":
        pytest.skip("PyTorch has no negative strides")
    return VIEWS[view](fw.array(base)), VIEWS[view](base)


def cpu_reads_refused(t):
    for read in (np.asarray, lambda t: t.tobytes(), lambda t: t.__array_interface__):
        with pytest.raises(BufferError, match="device") as e:
            read(t)
        assert type(e.value) is BufferError


# --- Framework -> dlgen ------------------------------------------------------------------

@pytest.mark.parametrize("view", list(VIEWS))
def test_framework_to_dlgen_keeps_device_pointer_and_layout(dl, fw, view):
    x, expected = sample(fw, view)
    before = fw.holds(x)
    t = dl.from_dlpack(x)
    assert t.device == fw.device == x.__dlpack_device__()
    assert t.data_ptr == fw.address(x)
    assert (t.shape, t.strides) == (expected.shape, tuple(s // 4 for s in expected.strides))
    assert t.dtype.name == "float32" and not t.copied and not t.readonly
    cpu_reads_refused(t)
    assert fw.holds(x) == before + 1, "the tensor holds the producer's memory"
    t.close()
    assert fw.holds(x) == before, "the producer's deleter ran once"


def test_copy_false_holds_the_device_tensor(dl, fw):
    x = fw.array(np.arange(4, dtype=np.float32))
    t = dl.from_dlpack(x, copy=False)
    assert (t.device, t.data_ptr, t.copied) == (fw.device, fw.address(x), False)


def test_host_copy_only_when_asked(dl, fw):
    x = fw.array(np.arange(6, dtype=np.float32) * 3)
    held = dl.from_dlpack(x)
    assert held.device == fw.device and not held.copied
    host = dl.from_dlpack(x, device=(1, 0))
    assert host.device == (1, 0) and host.copied
    assert np.asarray(host).tolist() == fw.numpy(x).tolist()
    copied = dl.from_dlpack(x, copy=True)  # the framework's own copy, on its device
    assert copied.device == fw.device and copied.copied and copied.data_ptr != fw.address(x)
    with pytest.raises(BufferError):
        dl.from_dlpack(x, device=(1, 0), copy=False)


# --- dlgen -> framework --------------------------------------------------------------------

@pytest.mark.parametrize("consumer_first", [True, False])
@pytest.mark.parametrize("view", list(VIEWS))
def test_dlgen_to_framework_same_memory_both_ways(dl, fw, view, consumer_first):
    x, _ = sample(fw, view)
    before = fw.holds(x)
    t = dl.from_dlpack(x)
    y = fw.from_dlpack(t)
    assert fw.is_array(y) and y.__dlpack_device__() == fw.device
    assert fw.address(y) == fw.address(x) and y.shape == x.shape
    y[0, 0] = 42  # the framework writes on its device; the other side sees it
    fw.sync(y)
    assert fw.numpy(x)[0, 0] == 42
    x[0, 1] = -7
    fw.sync(x)
    assert fw.numpy(y)[0, 1] == -7
    if consumer_first:
        del y
        collect(dl)
        assert fw.holds(x) == before + 1
        t.close()
    else:
        t.close()
        collect(dl)
        assert fw.holds(x) == before + 1, "the framework's array still uses the memory"
        assert fw.numpy(y)[0, 0] == 42
        del y
        collect(dl)
    assert fw.holds(x) == before, "the producer's deleter ran once"


@pytest.mark.parametrize("consumer_first", [True, False])
def test_from_pointer_over_framework_memory(dl, fw, consumer_first):
    address, memory, x = fw.memory(8)
    x[:] = fw.array(np.arange(8, dtype=np.float32))
    fw.sync(x)
    owner = Owner(memory)
    watch = weakref.ref(owner)
    t = dl.from_pointer(address, (2, 4), "float32", device=fw.device, owner=owner)
    del owner, memory
    y = fw.from_dlpack(t)
    assert fw.is_array(y) and y.__dlpack_device__() == fw.device and fw.address(y) == address
    y[1, 3] = 99
    fw.sync(y)
    assert fw.numpy(x)[7] == 99
    x[0] = -1
    fw.sync(x)
    assert fw.numpy(y)[0, 0] == -1
    del x
    if consumer_first:
        del y
        collect(dl)
        assert watch() is not None
        t.close()
    else:
        t.close()
        del t
        collect(dl)
        assert watch() is not None, "the framework's array still uses the memory"
        assert fw.numpy(y).sum() == -1 + sum(range(1, 7)) + 99
        del y
    collect(dl)
    assert watch() is None


def test_on_copy_with_the_framework(dl, fw):
    """The owner's hook makes the copies an export of device memory needs:
    onto the host for NumPy, on the device for copy=True."""
    x = fw.array(np.arange(4, dtype=np.float32) + 1)
    t = dl.from_pointer(fw.address(x), (4,), "float32", device=fw.device, owner=x,
                        on_copy=lambda device, stream: fw.numpy(x) if device == (1, 0) else fw.copy(x))
    assert np.from_dlpack(t, device="cpu").tolist() == [1, 2, 3, 4]
    y = fw.from_dlpack(t, copy=True)
    assert fw.address(y) != fw.address(x) and fw.numpy(y).tolist() == [1, 2, 3, 4]
    with pytest.raises(BufferError, match="on_copy"):
        dl.from_dlpack(x).__dlpack__(max_version=MAX_VERSION_1, dl_device=(1, 0))


# --- Streams -------------------------------------------------------------------------------

class Proxy:
    """Forwards __dlpack__ to a framework array, recording its keywords."""

    def __init__(self, x):
        self.x, self.calls = x, []

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.x.__dlpack__(**kwargs)


def test_stream_reaches_the_framework(dl, fw):
    x = fw.array(np.arange(4, dtype=np.float32))
    stream = fw.stream()
    proxy = Proxy(x)
    t = dl.from_dlpack(proxy, stream=stream)
    assert len(proxy.calls) == 1 and proxy.calls[0]["stream"] is stream
    assert t.device == fw.device and t.data_ptr == fw.address(x)
    other = fw.stream()
    dl.from_dlpack(x, stream=other)  # straight to the framework
    assert fw.synchronised_on(other), "the framework made the consumer's stream wait for its work"


def test_dpnp_checks_the_stream_it_is_given(dl):
    """dpnp's own word that the stream reached it: it refuses one that is
    not a SYCL queue, naming its type."""
    fw = make_framework("dpnp")
    with pytest.raises(TypeError, match="dpctl.SyclQueue"):
        dl.from_dlpack(fw.array(np.arange(3.0, dtype=np.float32)), stream=5)


def test_re_export_follows_the_import_stream(dl, fw):
    x = fw.array(np.arange(4, dtype=np.float32))
    stream = fw.stream()
    t = dl.from_dlpack(x, stream=stream)
    with fw.using(stream):
        y = fw.from_dlpack(t)  # the framework asks on its current stream
    assert fw.address(y) == fw.address(x)
    assert t.__dlpack__(stream=stream, max_version=MAX_VERSION_1)
    with pytest.raises(BufferError, match="race"):
        t.__dlpack__(stream=fw.stream(), max_version=MAX_VERSION_1)
