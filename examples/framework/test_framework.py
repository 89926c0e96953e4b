"""The example framework's own tests: both Array types (Cython and pure
ctypes) against NumPy, PyTorch, JAX and tvm-ffi, both ways. Run with
fillarray built as its README says and this directory on the path
(tests/python/test_example_framework.py does that): zero-copy shown by writes seen on the other side, owner lifetime
in both deletion orders, every libfill buffer freed exactly once, refcounts
back to baseline."""
import gc
import sys

import numpy as np
import pytest

from fillarray import cyarray, pyarray

VARIANTS = {"cython": cyarray, "ctypes": pyarray}


@pytest.fixture(params=list(VARIANTS))
def fw(request):
    gc.collect()
    before = VARIANTS[request.param].live_buffers()
    yield VARIANTS[request.param]
    gc.collect()
    assert VARIANTS[request.param].live_buffers() == before, "every libfill buffer freed exactly once"


def test_cyarray_refuses_too_many_dimensions():
    before = cyarray.live_buffers()
    with pytest.raises(ValueError, match="at most 64 dimensions"):
        cyarray.Array((1,) * 65)  # it wrote past its 64 extents before any check
    assert cyarray.live_buffers() == before


def test_numpy_reads_and_writes_the_arrays_memory(fw):
    a = fw.Array.ramp((4,), 1.0, 1.0)
    n = np.from_dlpack(a)
    assert n.tolist() == [1.0, 2.0, 3.0, 4.0]
    n[0] = 100.0
    assert a.sum() == 109.0, "libfill reads NumPy's write"


def test_the_array_adopts_numpy_memory(fw):
    n = np.arange(4, dtype=np.float32)
    base = sys.getrefcount(n)
    b = fw.Array.from_dlpack(n)
    n[1] = 10.0
    assert b.sum() == 0 + 10 + 2 + 3
    np.from_dlpack(b)[2] = 20.0  # re-exported: a write through the Array's export
    assert n[2] == 20.0
    assert not b.readonly
    del b
    gc.collect()
    assert sys.getrefcount(n) == base


def test_read_only_numpy_stays_read_only(fw):
    n = np.arange(3, dtype=np.float32)
    n.flags.writeable = False
    b = fw.Array.from_dlpack(n)
    assert b.readonly
    assert not np.from_dlpack(b).flags.writeable


def test_other_dtypes_are_refused(fw):
    with pytest.raises(TypeError, match="float32"):
        fw.Array.from_dlpack(np.arange(3, dtype=np.int16))


@pytest.mark.parametrize("consumer_first", [True, False])
def test_owner_lives_until_both_sides_are_done(fw, consumer_first):
    a = fw.Array.ramp((3,), 0.0, 2.0)
    before = fw.live_buffers()
    n = np.from_dlpack(a)
    if consumer_first:
        del n
        gc.collect()
        assert fw.live_buffers() == before and a.sum() == 6.0
        del a
    else:
        del a
        gc.collect()
        assert fw.live_buffers() == before, "the export keeps libfill's buffer"
        assert n.tolist() == [0.0, 2.0, 4.0]
        del n
    gc.collect()
    assert fw.live_buffers() == before - 1


def test_every_keyword_of_dlpack(fw):
    a = fw.Array.ramp((2,))
    assert type(a.__dlpack__(max_version=(1, 0))).__name__ == "PyCapsule"
    with pytest.raises(ValueError):
        a.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))
    c = np.from_dlpack(a, copy=True)
    c[0] = 50.0
    assert a.sum() == 1.0, "copy=True gave a private copy"
    assert np.from_dlpack(a, device="cpu").tolist() == [0.0, 1.0]


def test_many_exchanges_keep_refcounts(fw):
    a = fw.Array.ramp((8,))
    n = np.arange(8, dtype=np.float32)
    base_a, base_n = sys.getrefcount(a), sys.getrefcount(n)
    for _ in range(2000):
        np.from_dlpack(a)
        fw.Array.from_dlpack(n)
    gc.collect()
    assert (sys.getrefcount(a), sys.getrefcount(n)) == (base_a, base_n)


# --- PyTorch (2.10+: the C exchange API) ---------------------------------------

def test_torch_both_ways(fw):
    torch = pytest.importorskip("torch")
    a = fw.Array.ramp((4,))
    t = torch.from_dlpack(a)
    t[3] = 30.0
    assert a.sum() == 0 + 1 + 2 + 30
    x = torch.arange(4, dtype=torch.float32)
    b = fw.Array.from_dlpack(x)
    x[0] = 7.0
    assert b.sum() == 7 + 1 + 2 + 3


def test_torch_exchange_api_both_directions():
    """The Cython Array through tables only: a subclass whose __dlpack__
    fails still reaches PyTorch, and a torch.Tensor subclass whose
    __dlpack__ fails still reaches the Array."""
    torch = pytest.importorskip("torch")
    from fillarray._vendor.python import dlpack_cython as dl

    # A subclass's instances go through a table only where the subclass
    # publishes one (its __dlpack__ may differ): these vouch for the parent's.
    class NoDunderArray(cyarray.Array):
        __dlpack_c_exchange_api__ = cyarray.Array.__dlpack_c_exchange_api__

        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ called")

    class NoDunderTensor(torch.Tensor):
        __dlpack_c_exchange_api__ = torch.Tensor.__dlpack_c_exchange_api__

        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ called")

    a = NoDunderArray.ramp((3,))
    t = dl.to_type(a, torch.Tensor)  # our managed tensor through torch's managed_tensor_to_py_object
    assert type(t) is torch.Tensor and t.tolist() == [0.0, 1.0, 2.0]
    t[0] = 5.0
    assert a.sum() == 8.0
    x = torch.arange(3, dtype=torch.float32).as_subclass(NoDunderTensor)
    b = cyarray.Array.from_dlpack(x)  # torch's managed_tensor_from_py_object
    x[2] = 9.0
    assert b.sum() == 10.0
    del t, b
    gc.collect()


# --- JAX and tvm-ffi -------------------------------------------------------------

def test_jax_both_ways(fw):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a = fw.Array.ramp((4,))
    j = jnp.from_dlpack(a)
    assert j.tolist() == [0.0, 1.0, 2.0, 3.0]
    x = jnp.arange(4, dtype=jnp.float32)
    b = fw.Array.from_dlpack(x)
    assert b.sum() == 6.0
    # JAX arrays are immutable: the zero-copy proof is the same address.
    assert np.from_dlpack(b).ctypes.data == x.unsafe_buffer_pointer()


def test_tvm_ffi_both_ways(fw):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    a = fw.Array.ramp((4,))
    t = tvm_ffi.from_dlpack(a)
    np.from_dlpack(t)[1] = 11.0
    assert a.sum() == 0 + 11 + 2 + 3
    n = np.arange(4, dtype=np.float32)
    b = fw.Array.from_dlpack(tvm_ffi.from_dlpack(n))
    n[3] = 13.0
    assert b.sum() == 0 + 1 + 2 + 13
