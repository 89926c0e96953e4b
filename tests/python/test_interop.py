"""Exchanges with real peers: JAX (CPU), apache-tvm-ffi, array-api-strict."""
import numpy as np
import pytest


def test_tvm_ffi_both_directions(dl):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tvm_ffi.from_dlpack(dl.from_dlpack(a))
    assert tuple(x.shape) == (2, 3)
    back = dl.from_dlpack(x)
    np.from_dlpack(back)[1, 2] = 42
    assert a[1, 2] == 42, "tvm-ffi round trip must be zero-copy"


def test_jax_both_directions(dl):
    jnp = pytest.importorskip("jax.numpy")
    j = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    t = dl.from_dlpack(j, readonly=True)  # JAX arrays are immutable, but its legacy capsules cannot say so
    assert t.shape == (2, 3) and t.readonly
    assert not dl.from_dlpack(j).readonly  # a legacy import is writable by default
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    back = jnp.from_dlpack(dl.from_dlpack(np.arange(4, dtype=np.int32)))
    np.testing.assert_array_equal(np.asarray(back), np.arange(4))


def test_array_api_strict(dl):
    xp = pytest.importorskip("array_api_strict")
    x = xp.from_dlpack(dl.from_dlpack(np.arange(4.0)))
    assert x.shape == (4,)
    t = dl.from_dlpack(xp.asarray([1.0, 2.0]))
    np.testing.assert_array_equal(np.from_dlpack(t), [1.0, 2.0])
