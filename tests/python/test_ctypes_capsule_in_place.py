"""dlpack_ctypes takes a producer's versioned capsule in place on CPython:
it reads the capsule's pointer and name, and writes the used_ name, where
CPython keeps them, instead of calling PyCapsule_GetPointer and
PyCapsule_SetName. The result must be theirs exactly, and wherever reading
in place is not safe the foreign calls must decide. The name is read as
strcmp reads it, never past its NUL (valgrind checks), and
DLGEN_CTYPES_IN_PLACE=0 turns the in-place path off."""
import ctypes
import importlib
import mmap
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest
from harness import REQUIRED

ct = importlib.import_module("dlpack_ctypes")

# A prototype of its own: other tests set ctypes.pythonapi.PyCapsule_New's.
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))


class Lends:
    """A producer whose __dlpack__ returns the capsule it was given, as it is."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_):
        return self.capsule


def test_the_layout_holds_on_cpython():
    assert ct._CAPSULE_IN_PLACE is (sys.implementation.name == "cpython")


# Imports a producer's capsule with the in-place path's name reader broken:
# it fails where the path runs, and passes where the foreign calls take it.
_SWITCH_CHECK = """
import sys
sys.path.insert(0, {directory!r})
import numpy as np
import dlpack_ctypes as ct
ct._NAME_STRINGS = None
class Lends:
    def __dlpack__(self, **_):
        return np.arange(3.0).__dlpack__(max_version=(1, 0))
print(ct._CAPSULE_IN_PLACE, ct.from_dlpack(Lends()).shape)
"""


@pytest.mark.parametrize("value", ["0", "1", None])
def test_an_environment_variable_turns_the_in_place_path_off(value):
    env = {k: v for k, v in os.environ.items() if k != "DLGEN_CTYPES_IN_PLACE"}
    if value is not None:
        env["DLGEN_CTYPES_IN_PLACE"] = value
    script = _SWITCH_CHECK.format(directory=os.path.dirname(ct.__file__))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    if value == "0":
        assert r.stdout.split() == ["False", "(3,)"], r.stdout + r.stderr
    else:  # the in-place path runs, and reads the broken reader
        assert "TypeError" in r.stderr and "_NAME_STRINGS" not in r.stdout, r.stdout + r.stderr


# A capsule named "x" in a malloc block of 2 bytes, imported: valgrind
# reports any read past the block. CPython's own allocator is turned off
# where it can be (PYTHONMALLOC=malloc; a free-threaded build has only
# mimalloc), so that valgrind sees its blocks too.
_SHORT_NAME = """
import ctypes, sys
sys.path.insert(0, {directory!r})
import dlpack_ctypes as ct
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
name = libc.malloc(2)
ctypes.memmove(name, b"x\\0", 2)
data = (ctypes.c_double * 1)()
capsule = new(ctypes.addressof(data), name, None)
class Lends:
    def __dlpack__(self, **_):
        return capsule
assert ct._CAPSULE_IN_PLACE
try:
    ct.from_dlpack(Lends())
except ValueError as e:
    print(e)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="valgrind runs on Linux")
def test_a_short_name_is_never_read_past_its_end_under_valgrind(tmp_path):
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        if REQUIRED:
            pytest.fail("valgrind is not installed (run scripts/deps.sh)")
        pytest.skip("valgrind is not installed")
    script = tmp_path / "short_name.py"
    script.write_text(_SHORT_NAME.format(directory=os.path.dirname(ct.__file__)))
    # Addressability only: CPython's own start-up gives valgrind reports of
    # uninitialised values that say nothing of this module.
    env = dict(os.environ)
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        env["PYTHONMALLOC"] = "malloc"
    r = subprocess.run([valgrind, "-q", "--undef-value-errors=no", "--error-exitcode=99",
                        sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "a capsule named 'x' is not a DLPack capsule" in r.stdout, r.stdout + r.stderr


def test_an_import_renames_the_capsule_and_owns_its_tensor():
    a = np.arange(6.0)
    cap = a.__dlpack__(max_version=(1, 0))
    t = ct.from_dlpack(Lends(cap))
    assert '"used_dltensor_versioned"' in repr(cap)  # PyCapsule_GetName agrees with the write
    assert t.data_ptr == a.ctypes.data
    before = sys.getrefcount(a)
    t.close()  # NumPy's deleter runs, once: the array's reference goes back
    assert sys.getrefcount(a) == before - 1
    with pytest.raises(ValueError, match="consumed"):
        ct.from_dlpack(cap)  # used: PyCapsule_GetPointer refuses it too


def test_without_the_layout_the_foreign_calls_do_the_same(monkeypatch):
    monkeypatch.setattr(ct, "_CAPSULE_IN_PLACE", False)
    cap = np.arange(6.0).__dlpack__(max_version=(1, 0))
    t = ct.from_dlpack(Lends(cap))
    assert '"used_dltensor_versioned"' in repr(cap)
    assert t.shape == (6,)


def test_a_legacy_capsule_goes_to_the_foreign_calls():
    cap = np.arange(6.0).__dlpack__()
    t = ct.from_dlpack(Lends(cap))  # asked for max_version, given a legacy capsule
    assert '"used_dltensor"' in repr(cap)
    assert t.shape == (6,)


def _page_with(text, at_end):
    """A private page holding text (NUL-terminated) at its very end when
    at_end, followed by a page that cannot be read; the mapping, the page's
    address and the text's address."""
    size = mmap.PAGESIZE
    m = mmap.mmap(-1, 2 * size)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(base + size, size, 0) == 0, ctypes.get_errno()  # PROT_NONE
    raw = text + b"\0"
    start = size - len(raw) if at_end else 0
    m[start:start + len(raw)] = raw
    return m, base, base + start


@pytest.mark.skipif(not hasattr(mmap, "PAGESIZE") or sys.platform == "win32", reason="POSIX pages")
def test_a_name_at_a_page_end_is_never_read_past_it():
    # A short name as the last bytes before an unreadable page: comparing
    # len("dltensor_versioned") + 1 bytes in place would fault. The capsule
    # is refused in the words of a wrong name, by the foreign calls.
    m, _, name = _page_with(b"x", at_end=True)
    a = np.arange(3.0)
    cap = _new_capsule(a.ctypes.data, name, None)
    with pytest.raises(ValueError, match="a capsule named 'x' is not a DLPack capsule"):
        ct.from_dlpack(Lends(cap))
    # The right name at a page end is taken, by the foreign calls too.
    keep, element = ct.DLManagedTensorVersioned(), ctypes.c_double(2.5)
    m2, _, vname = _page_with(b"dltensor_versioned", at_end=True)
    cap2 = _new_capsule(ctypes.addressof(keep), vname, None)
    keep.version.major = ct.DLPACK_MAJOR_VERSION
    keep.dl_tensor.data = ctypes.addressof(element)
    keep.dl_tensor.device.device_type = ct.DLDeviceType.kDLCPU
    keep.dl_tensor.dtype.code, keep.dl_tensor.dtype.bits, keep.dl_tensor.dtype.lanes = 2, 64, 1
    t = ct.from_dlpack(Lends(cap2))
    assert t.shape == ()
    assert np.from_dlpack(t)[()] == 2.5
    assert '"used_dltensor_versioned"' in repr(cap2)
    t.close()
    del cap, cap2, m, m2
