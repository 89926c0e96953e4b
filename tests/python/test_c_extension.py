"""The worked C extension (examples/cextension): a float32 array type in plain
C that speaks DLPack both ways with dlgen's helper header alone, exchanged with
NumPy and PyTorch: zero-copy both ways, strides of every sign, read-only flags,
refusals in dlgen's words, every deleter once (references back to baseline)."""
import gc
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest
import required

from harness import REQUIRED, ROOT

EXAMPLE = os.path.join(ROOT, "examples", "cextension")


def need(tool):
    if shutil.which(tool) is None:
        if REQUIRED:
            pytest.fail(tool + " is not installed")
        pytest.skip(tool + " is not installed")


@pytest.fixture(scope="module")
def carray(tmp_path_factory):
    need("gcc")
    out = tmp_path_factory.mktemp("carray") / ("carray" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
                    "-I", sysconfig.get_paths()["include"], "-I", os.path.join(ROOT, "generated", "c"),
                    os.path.join(EXAMPLE, "carray.c"), "-o", str(out)], check=True)
    spec = importlib.util.spec_from_file_location("carray", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_numpy_reads_and_writes_the_array(carray):
    a = carray.Array((2, 3))
    n = np.from_dlpack(a)
    assert n.tolist() == [[0, 1, 2], [3, 4, 5]]
    n[1, 2] = 50
    assert a.sum() == 60
    assert np.from_dlpack(a)[1, 2] == 50


@pytest.mark.parametrize("view", [
    lambda x: x, lambda x: x[:, ::-2], lambda x: x.T, lambda x: x[1:, 1:], lambda x: x[:0],
    lambda x: x.reshape(-1)[::3], lambda x: np.broadcast_to(x[0], (3, 4)),
], ids=["compact", "negative", "transposed", "offset", "empty", "stepped", "broadcast"])
def test_numpy_views_come_in(carray, view):
    n = view(np.arange(12, dtype=np.float32).reshape(3, 4))
    a = carray.Array.from_dlpack(n)
    assert a.sum() == n.sum()
    assert np.from_dlpack(a).tolist() == n.tolist()


def test_read_only_stays_read_only(carray):
    n = np.arange(4, dtype=np.float32)
    n.flags.writeable = False
    a = carray.Array.from_dlpack(n)
    assert a.readonly
    assert not np.from_dlpack(a).flags.writeable


def test_refusals_are_dlgens(carray):
    with pytest.raises(TypeError, match="^carray holds float32 CPU memory$"):
        carray.Array.from_dlpack(np.arange(3))

    class Used:
        def __init__(self):
            self.capsule = np.arange(3, dtype=np.float32).__dlpack__()
            np.from_dlpack(_Capsule(self.capsule))

        def __dlpack__(self, **kwargs):
            return self.capsule

    with pytest.raises(ValueError, match="^this DLPack capsule was already consumed$"):
        carray.Array.from_dlpack(Used())
    with pytest.raises(ValueError, match="^stream must be None for a tensor on device"):
        carray.Array((2,)).__dlpack__(stream=1)


class _Capsule:
    """Hands a capsule to np.from_dlpack, which wants __dlpack__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_capsule_names_follow_max_version(carray):
    a = carray.Array((2,))
    assert "dltensor_versioned" in repr(a.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(a.__dlpack__())
    assert '"dltensor"' in repr(a.__dlpack__(max_version=(0, 8)))


def test_every_export_and_import_is_released(carray):
    torch = required.module("torch")
    a = carray.Array((64,))
    n = np.arange(8, dtype=np.float32)
    before = sys.getrefcount(a), sys.getrefcount(n)
    for _ in range(2000):
        np.from_dlpack(a)
        torch.from_dlpack(a)
        a.__dlpack__()  # dropped unconsumed: the capsule runs the deleter
        carray.Array.from_dlpack(n)
    gc.collect()
    assert (sys.getrefcount(a), sys.getrefcount(n)) == before


def test_pytorch_both_ways(carray):
    torch = required.module("torch")
    a = carray.Array((3, 2))
    t = torch.from_dlpack(a)
    assert t.tolist() == [[0, 1], [2, 3], [4, 5]]
    t[0, 0] = 10
    assert a.sum() == 25
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).T[1:]
    b = carray.Array.from_dlpack(x)
    assert b.sum() == x.sum().item()
    assert torch.from_dlpack(b).tolist() == x.tolist()
    assert carray.Array.from_dlpack(torch.zeros(0, 3)).sum() == 0


# --- dlgen_py_dlpack, dlgen_py_from_dlpack: the words of dlgen's modules ---

def ctypes_tensor(dl, readonly=False):
    """A float32 Tensor of dlgen's ctypes module over 8 bytes of its own."""
    import ctypes
    memory = (ctypes.c_float * 2)()
    return dl.from_pointer(ctypes.addressof(memory), (2,), "float32", owner=memory, readonly=readonly)


def message(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type is compared too
        return type(e), str(e)
    raise AssertionError("no exception")


@pytest.mark.parametrize("max_version, name", [
    (None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"), ((2, 0), "dltensor_versioned"),
])
def test_max_version_picks_the_capsule(carray, max_version, name):
    capsule = carray.Array((2,)).__dlpack__(max_version=max_version)
    assert f'"{name}"' in repr(capsule)
    assert np.from_dlpack(_Capsule(capsule)).tolist() == [0, 1]


@pytest.mark.parametrize("kwargs", [
    {"stream": 1}, {"stream": 1, "dl_device": (1, 0)}, {"dl_device": (2, 0)},
    {"dl_device": (2, 0), "copy": False}, {"dl_device": "cpu"}, {"max_version": [1, 0]},
], ids=["stream", "stream-cpu", "other-device", "other-device-no-copy", "bad-device", "bad-version"])
def test_export_refusals_in_the_words_of_dlgen_ctypes(carray, kwargs):
    dl = importlib.import_module("dlpack_ctypes")
    kind, words = message(lambda: carray.Array((2,)).__dlpack__(**kwargs))
    want_kind, want = message(lambda: ctypes_tensor(dl).__dlpack__(**kwargs))
    assert kind is want_kind
    if kwargs == {"dl_device": (2, 0)}:
        # the reason differs: dlgen_ctypes copies what the CPU reads, the
        # helpers lend memory as it is and copy none
        assert words.startswith(want.split(":")[0] + ": ")
    else:
        assert words == want


def test_copy_is_refused(carray):
    """dlgen_ctypes copies memory the CPU reads; dlgen_py_dlpack lends memory
    as it is, and refuses a copy as dlgen_ctypes refuses one it cannot make."""
    with pytest.raises(BufferError) as refused:
        carray.Array((2,)).__dlpack__(copy=True)
    # one device, named once: the copy asked for, not a move to where it is
    assert str(refused.value) == ("cannot copy a tensor on device (1, 0), as copy=True asks: its producer lends "
                                  "its memory as it is (dlgen_py_dlpack) and makes no copy")


def test_export_takes_keywords_only(carray):
    with pytest.raises(TypeError, match="__dlpack__"):
        carray.Array((2,)).__dlpack__(None)
    assert carray.Array((2,)).__dlpack_device__() == (1, 0)
    assert carray.Array((2,)).__dlpack__(dl_device=(1, 0), copy=False) is not None


def test_legacy_capsule_of_read_only_memory_is_refused(carray):
    dl = importlib.import_module("dlpack_ctypes")
    n = np.arange(2, dtype=np.float32)
    n.flags.writeable = False
    a = carray.Array.from_dlpack(n)
    assert message(lambda: a.__dlpack__()) == message(lambda: ctypes_tensor(dl, readonly=True).__dlpack__())
    assert "dltensor_versioned" in repr(a.__dlpack__(max_version=(1, 0)))


def test_a_non_dlpack_object_gets_dlgens_words(carray):
    dl = importlib.import_module("dlpack_ctypes")
    kind, words = message(lambda: carray.Array.from_dlpack([1.0]))
    want_kind, want = message(lambda: dl.from_dlpack([1.0]))
    assert kind is want_kind is TypeError
    assert words.startswith(want.split("; ")[0] + "; ")


def test_a_refused_tensor_is_released_once(carray, producer):
    dl = importlib.import_module("dlpack_ctypes")
    kind, words = message(lambda: dl.from_dlpack(producer.capsule(ndim=-1)))
    assert producer.deleted == 1
    assert message(lambda: carray.Array.from_dlpack(producer.capsule(ndim=-1))) == (kind, words)
    assert producer.deleted == 2
    with pytest.raises(TypeError, match="^carray holds float32 CPU memory$"):
        carray.Array.from_dlpack(producer.capsule(code=0))  # int32: DLPack's, not carray's
    assert producer.deleted == 3
    a = carray.Array.from_dlpack(producer.capsule(versioned=False, shape=(4,), strides=None))
    assert a.sum() == 0 and not a.readonly and producer.deleted == 3
    del a
    gc.collect()
    assert producer.deleted == 4


def test_deleters_from_another_thread(carray):
    import ctypes
    import threading
    dl = importlib.import_module("dlpack_ctypes")
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.restype, rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    a = carray.Array((8,))
    before = sys.getrefcount(a)
    managed = []
    for versioned, kind in ((True, dl.DLManagedTensorVersioned), (False, dl.DLManagedTensor)):
        for _ in range(50):
            capsule = a.__dlpack__(max_version=(1, 0) if versioned else None)
            name = b"dltensor_versioned" if versioned else b"dltensor"
            pointer = get(capsule, name)
            assert rename(capsule, b"used_" + name) == 0  # taken: the deleter is ours to call
            managed.append((kind.from_address(pointer).deleter, ctypes.cast(pointer, ctypes.POINTER(kind))))
    assert sys.getrefcount(a) == before + 100
    # ctypes calls a C function without the GIL: each deleter takes it
    threads = [threading.Thread(target=lambda d=d, p=p: d(p)) for d, p in managed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sys.getrefcount(a) == before


def test_no_leaks_over_many_exchanges(carray):
    n = np.arange(8, dtype=np.float32)
    a = carray.Array((4,))
    before = sys.getrefcount(a), sys.getrefcount(n)
    for i in range(3000):
        np.from_dlpack(a)
        carray.Array.from_dlpack(n).__dlpack__(max_version=(1, 0) if i % 2 else None)
        a.__dlpack__(max_version=(1, 0))
        carray.Array.from_dlpack(a.__dlpack__(max_version=(1, 0)))  # a capsule as it is
    gc.collect()
    assert (sys.getrefcount(a), sys.getrefcount(n)) == before


def test_the_c_extension_takes_fewer_dlpack_lines_than_the_ctypes_example():
    """Every line that exists because of DLPack, between the markers (code
    lines: neither blank nor comment): C's must be fewer than pyarray.py's,
    and the README quotes both counts."""
    def count(path, comment):
        n, inside = 0, False
        with open(path) as f:
            for line in f:
                text = line.strip()
                if text.startswith(comment + " --- "):
                    inside = "end of DLPack" not in text
                elif inside and text and not text.startswith(comment):
                    n += 1
        return n
    c = count(os.path.join(EXAMPLE, "carray.c"), "/*")
    python = count(os.path.join(ROOT, "examples", "framework", "fillarray", "pyarray.py"), "#")
    assert python == 15
    assert c < python
    with open(os.path.join(EXAMPLE, "README.md")) as f:
        readme = f.read()
    assert f"are {c} code lines" in readme and f"takes {python}" in readme


PROBE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "dlpack/dlpack_helpers.h"

/* take(x, copy): dlgen_py_from_dlpack(x, copy, ...) as (data, flags, owner). */
static PyObject *take(PyObject *self, PyObject *args) {
  PyObject *x, *copy, *owner;
  DLTensor view;
  uint64_t flags;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO", &x, &copy) || (owner = dlgen_py_from_dlpack(x, copy, &view, &flags)) == NULL) {
    return NULL;
  }
  return Py_BuildValue("(KKN)", (unsigned long long)(uintptr_t)view.data, (unsigned long long)flags, owner);
}

static PyMethodDef methods[] = {{"take", take, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef probe_module = {PyModuleDef_HEAD_INIT, "probe", NULL, -1, methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit_probe(void) { return PyModule_Create(&probe_module); }
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """dlgen_py_from_dlpack with its copy argument, which carray does not pass."""
    need("gcc")
    tmp = tmp_path_factory.mktemp("probe")
    (tmp / "probe.c").write_text(PROBE)
    out = tmp / ("probe" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
                    "-I", sysconfig.get_paths()["include"], "-I", os.path.join(ROOT, "generated", "c"),
                    str(tmp / "probe.c"), "-o", str(out)], check=True)
    spec = importlib.util.spec_from_file_location("probe", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Lends:
    """A producer whose __dlpack__ takes no keywords and lends n (legacy)."""

    def __init__(self, n):
        self.n = n

    def __dlpack__(self):
        return self.n.__dlpack__()


def test_copy_true_takes_only_a_copy(probe):
    n = np.arange(4, dtype=np.float32)
    data, flags, owner = probe.take(n, True)  # NumPy copies on request, and says so
    assert data != n.ctypes.data
    assert flags & 2  # IS_COPIED
    del owner
    before = sys.getrefcount(n)
    # A legacy producer cannot say it copied; a capsule was made already.
    for x in (_Lends(n), n.__dlpack__(max_version=(1, 0))):
        with pytest.raises(BufferError, match=r"^copy=True was asked, and the producer lent its memory without a copy"):
            probe.take(x, True)
    gc.collect()
    assert sys.getrefcount(n) == before  # each refused tensor released
    assert probe.take(n, None)[0] == n.ctypes.data


def test_a_reexport_of_a_copy_is_no_copy(carray):
    n = np.arange(4, dtype=np.float32)

    class Copies:
        def __dlpack__(self, **kwargs):
            return n.__dlpack__(max_version=(1, 0), copy=True)

    a = carray.Array.from_dlpack(Copies())
    dl = importlib.import_module("dlpack_ctypes")
    t = dl.from_dlpack(a)
    assert not t._flags & dl.DLPACK_FLAG_BITMASK_IS_COPIED  # carray shares it with whoever imports it
    assert np.from_dlpack(t).tolist() == [0, 1, 2, 3]


def test_a_bad_pair_raises_its_own_error(carray):
    class Index:
        def __index__(self):
            return 1

    with pytest.raises(TypeError) as e:
        carray.Array((2,)).__dlpack__(max_version=("x", Index()))
    assert not isinstance(e.value.__context__, SystemError)
    assert "str" in str(e.value)


@pytest.mark.parametrize("shape", [(-1, -1), (3, 6148914691236517206), (2**62, 2**62)])
def test_a_shape_that_cannot_be_is_refused(carray, shape):
    with pytest.raises(ValueError, match="extents must be >= 0 and the array must fit in memory"):
        carray.Array(shape)
