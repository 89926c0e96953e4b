"""Exchanges with real peers: JAX (CPU), apache-tvm-ffi, array-api-strict;
and the recipes docs/python.md gives for JAX."""
import ctypes
import mmap

import numpy as np
import pytest
import required


def test_tvm_ffi_both_directions(dl):
    tvm_ffi = required.module("tvm_ffi")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tvm_ffi.from_dlpack(dl.from_dlpack(a))
    assert tuple(x.shape) == (2, 3)
    back = dl.from_dlpack(x)
    np.from_dlpack(back)[1, 2] = 42
    assert a[1, 2] == 42, "tvm-ffi round trip must be zero-copy"


def test_jax_both_directions(dl):
    jnp = required.module("jax.numpy")
    j = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    t = dl.from_dlpack(j, readonly=True)  # JAX arrays are immutable, but its legacy capsules cannot say so
    assert t.shape == (2, 3) and t.readonly
    assert not dl.from_dlpack(j).readonly  # a legacy import is writable by default
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    back = jnp.from_dlpack(dl.from_dlpack(np.arange(4, dtype=np.int32)))
    np.testing.assert_array_equal(np.asarray(back), np.arange(4))


def test_jax_shares_64_byte_aligned_memory_and_copies_the_rest(dl):
    """docs/python.md's recipe: allocate 63 bytes more, start at the next
    multiple of 64, and jnp.from_dlpack shares the memory; elsewhere it
    copies, and refuses copy=False."""
    jnp = required.module("jax.numpy")
    n = 8
    raw = ctypes.create_string_buffer(4 * n + 63)
    address = (ctypes.addressof(raw) + 63) & ~63
    ctypes.memmove(address, np.arange(n, dtype=np.float32).ctypes.data, 4 * n)
    x = jnp.from_dlpack(dl.from_pointer(address, (n,), "float32", owner=raw), copy=False)
    assert x.unsafe_buffer_pointer() == address
    np.testing.assert_array_equal(np.asarray(x), np.arange(n))
    shifted = dl.from_pointer(address + 4, (n - 1,), "float32", owner=raw)
    with pytest.raises(ValueError, match="aligned to 64 bytes"):
        jnp.from_dlpack(shifted, copy=False)
    copied = jnp.from_dlpack(dl.from_pointer(address + 4, (n - 1,), "float32", owner=raw))
    assert copied.unsafe_buffer_pointer() != address + 4
    np.testing.assert_array_equal(np.asarray(copied), np.arange(1, n))
    # Aligned through byte_offset: what counts is the first element.
    offset = dl.from_pointer(address - 60, (n,), "float32", byte_offset=60, owner=raw)
    assert jnp.from_dlpack(offset, copy=False).unsafe_buffer_pointer() == address
    # from_buffer over an anonymous mmap, which is page-aligned.
    m = mmap.mmap(-1, 4 * n)
    view = memoryview(m).cast("f")
    t = dl.from_buffer(view)
    assert jnp.from_dlpack(t, copy=False).unsafe_buffer_pointer() == t.data_ptr
    del t, view


def test_numpy_policy_for_legacy_producers(dl):
    """docs/python.md's recipe for a consumer that writes: a legacy capsule
    (all JAX gives, of immutable arrays) imports read-only, a versioned one
    as its producer says."""
    jnp = required.module("jax.numpy")

    def import_for_writing(x):
        address, versioned = dl.to_managed(x)
        return dl.from_managed(address, versioned=versioned, readonly=None if versioned else True)

    j = import_for_writing(jnp.arange(4.0))
    assert j.readonly and j.shape == (4,)
    with pytest.raises(ValueError, match="read-only"):
        np.from_dlpack(j)[0] = 1  # handed on read-only
    a = np.arange(4.0)
    t = import_for_writing(a)
    assert not t.readonly
    np.from_dlpack(t)[0] = 5
    assert a[0] == 5


def test_array_api_strict(dl):
    xp = required.module("array_api_strict")
    x = xp.from_dlpack(dl.from_dlpack(np.arange(4.0)))
    assert x.shape == (4,)
    t = dl.from_dlpack(xp.asarray([1.0, 2.0]))
    np.testing.assert_array_equal(np.from_dlpack(t), [1.0, 2.0])
