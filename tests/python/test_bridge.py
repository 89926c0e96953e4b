"""Go tensors in Python through the c-shared example bridge (examples/gobridge), with the
generated ctypes module and real NumPy: zero-copy both ways, both deletion
orders, every deleter once, flat memory over 100k exchanges."""
import ctypes
import gc
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from harness import MODULES, ROOT

import dlpack_ctypes as dl  # the bridge is driven through the ctypes module


@pytest.fixture(scope="session")
def lib(tmp_path_factory):
    if shutil.which("go") is None:
        if os.environ.get("DLGEN_REQUIRE_TOOLS") == "1":
            pytest.fail("go is not installed")
        pytest.skip("go is not installed")
    path = str(tmp_path_factory.mktemp("bridge") / "libdlgen.so")
    subprocess.run(["go", "build", "-buildmode=c-shared", "-o", path, "./examples/gobridge"], cwd=ROOT, check=True)
    return Bridge(ctypes.CDLL(path))


class Bridge:
    """The bridge's status-returning C functions as Python calls that
    return their result and raise on a non-zero status."""

    def __init__(self, lib):
        self.lib = lib
        h, p = ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p)
        lib.dlgen_arange_f32.argtypes = [ctypes.c_int64, h]
        lib.dlgen_export.argtypes = [ctypes.c_size_t, p]
        lib.dlgen_data.argtypes = [ctypes.c_size_t, p]
        lib.dlgen_import.argtypes = [ctypes.c_void_p, h, ctypes.c_char_p, ctypes.c_size_t]
        lib.dlgen_import_legacy.argtypes = [ctypes.c_void_p, h, ctypes.c_char_p, ctypes.c_size_t]
        lib.dlgen_scale_f32.argtypes = [ctypes.c_size_t, ctypes.c_float]
        lib.dlgen_close.argtypes = [ctypes.c_size_t]
        for name in ("dlgen_live_tensors", "dlgen_live_exports", "dlgen_leaked_imports"):
            getattr(lib, name).restype = ctypes.c_int64
        self.dlgen_scale_f32 = lib.dlgen_scale_f32
        self.dlgen_collect = lib.dlgen_collect
        for name in ("dlgen_live_tensors", "dlgen_live_exports", "dlgen_leaked_imports"):
            setattr(self, name, getattr(lib, name))

    @staticmethod
    def _out(fn, out_type, *args):
        out = out_type()
        status = fn(*args, ctypes.byref(out))
        if status != 0:
            raise RuntimeError("%s: status %d" % (fn.__name__, status))
        return out.value

    def dlgen_arange_f32(self, n):
        return self._out(self.lib.dlgen_arange_f32, ctypes.c_size_t, n)

    def dlgen_export(self, h):
        return self._out(self.lib.dlgen_export, ctypes.c_void_p, h)

    def dlgen_data(self, h):
        return self._out(self.lib.dlgen_data, ctypes.c_void_p, h)

    def dlgen_import(self, address, err, err_len):
        out = ctypes.c_size_t()
        status = self.lib.dlgen_import(address, ctypes.byref(out), err, err_len)
        return out.value if status == 0 else 0

    def dlgen_import_legacy(self, address):
        out = ctypes.c_size_t()
        status = self.lib.dlgen_import_legacy(address, ctypes.byref(out), None, 0)
        return out.value if status == 0 else 0

    def dlgen_close(self, h):
        assert self.lib.dlgen_close(h) == 0


def settle(lib):
    gc.collect()
    lib.dlgen_collect()


def go_array(lib, h, n):
    return (ctypes.c_float * n).from_address(lib.dlgen_data(h))


def test_numpy_sees_go_memory_and_back(lib):
    h = lib.dlgen_arange_f32(10)
    a = np.from_dlpack(dl.from_managed(lib.dlgen_export(h)))
    np.testing.assert_array_equal(a, np.arange(10, dtype=np.float32))
    a[3] = 42  # NumPy writes, Go sees
    assert go_array(lib, h, 10)[3] == 42
    assert lib.dlgen_scale_f32(h, 2.0) == 0  # Go writes, NumPy sees
    assert a[3] == 84 and a[9] == 18
    del a
    lib.dlgen_close(h)
    settle(lib)
    assert lib.dlgen_live_exports() == 0 and lib.dlgen_live_tensors() == 0


def test_go_released_first(lib):
    h = lib.dlgen_arange_f32(1000)
    a = np.from_dlpack(dl.from_managed(lib.dlgen_export(h)))
    lib.dlgen_close(h)
    settle(lib)
    assert a[999] == 999  # NumPy's export keeps the Go memory alive
    assert lib.dlgen_live_exports() == 1
    del a
    settle(lib)
    assert lib.dlgen_live_exports() == 0 and lib.dlgen_live_tensors() == 0


def test_numpy_released_first(lib):
    h = lib.dlgen_arange_f32(5)
    a = np.from_dlpack(dl.from_managed(lib.dlgen_export(h)))
    del a
    settle(lib)
    assert lib.dlgen_live_exports() == 0
    assert go_array(lib, h, 5)[4] == 4
    lib.dlgen_close(h)
    assert lib.dlgen_live_tensors() == 0


def test_numpy_array_imported_into_go(lib):
    a = np.arange(8, dtype=np.float32)
    base = sys.getrefcount(a)
    address, versioned = dl.to_managed(a)
    assert versioned
    err = ctypes.create_string_buffer(256)
    g = lib.dlgen_import(address, err, len(err))
    assert g, err.value
    assert lib.dlgen_scale_f32(g, 3.0) == 0  # Go modifies NumPy's memory
    np.testing.assert_array_equal(a, np.arange(8, dtype=np.float32) * 3)
    assert sys.getrefcount(a) > base  # NumPy's deleter has not run yet
    lib.dlgen_close(g)
    assert sys.getrefcount(a) == base  # ... and now it has, once
    assert lib.dlgen_live_tensors() == 0


def test_read_only_numpy_array_is_read_only_in_go(lib):
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    address, _ = dl.to_managed(a)
    g = lib.dlgen_import(address, None, 0)
    assert lib.dlgen_scale_f32(g, 2.0) == -3  # DLGEN_EREFUSED: no writable view of a read-only import
    lib.dlgen_close(g)
    np.testing.assert_array_equal(a, np.arange(4))


def test_legacy_numpy_array_is_writable_in_go(lib):
    # A legacy capsule cannot say read-only; dltensor reads it as writable,
    # as PyTorch and CuPy do (NumPy would read it as read-only).
    a = np.arange(4, dtype=np.float32)
    address, versioned = dl.to_managed(a, versioned=False)
    assert not versioned
    g = lib.dlgen_import_legacy(address)
    assert g
    assert lib.dlgen_scale_f32(g, 2.0) == 0
    lib.dlgen_close(g)
    np.testing.assert_array_equal(a, np.arange(4) * 2)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_stays_flat_over_100k_exchanges(lib):
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("needs /proc")

    def exchange(n):
        for _ in range(n):
            h = lib.dlgen_arange_f32(16)
            a = np.from_dlpack(dl.from_managed(lib.dlgen_export(h)))
            lib.dlgen_close(h)
            del a

    exchange(10000)
    settle(lib)
    before = rss_bytes()
    exchange(100000)
    settle(lib)
    growth = rss_bytes() - before
    assert lib.dlgen_live_exports() == 0 and lib.dlgen_live_tensors() == 0
    assert lib.dlgen_leaked_imports() == 0
    assert growth < 16 << 20, "RSS grew by %d bytes over 100k exchanges" % growth


@pytest.fixture(params=MODULES)
def module(request):
    import importlib
    return importlib.import_module(request.param)


def test_our_deleters_run_without_the_gil(lib, module):
    dl = module
    # ctypes releases the GIL around dlgen_close, so Go calls the module's
    # deleter on a thread that does not hold it.
    import weakref
    a = np.arange(5, dtype=np.float32)
    base = sys.getrefcount(a)
    t = dl.from_dlpack(a)
    ref = weakref.ref(t)
    address, _ = dl.to_managed(t)
    del t
    g = lib.dlgen_import(address, None, 0)
    assert g
    assert lib.dlgen_scale_f32(g, 2.0) == 0
    assert a[4] == 8
    gc.collect()
    assert ref() is not None, "Go's import keeps our tensor alive"
    lib.dlgen_close(g)
    gc.collect()
    assert ref() is None
    assert sys.getrefcount(a) == base
