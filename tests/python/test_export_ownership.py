"""Who releases an export of either module: exactly one of its capsule's
destructor (the capsule dropped unconsumed) and the deleter call of the
consumer that took the tensor, whichever way the consumer took it: by
renaming the capsule, or (nanobind's __dlpack__ path) by clearing the
capsule's destructor without renaming it. And close() releases at once
what no live export holds."""
import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
import weakref

import numpy as np
import pytest
from harness import CYTHON_DIR, GENERATED, REQUIRED, ROOT

from harness import matrix  # noqa: E402

_py = ctypes.pythonapi
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", _py))
_set_destructor = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(
    ("PyCapsule_SetDestructor", _py))
_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Owner:
    """Memory a framework owns, six float32 values; released tells how often
    the owner itself was let go of (a weakref finalizer counts)."""

    def __init__(self, released):
        self.values = (ctypes.c_float * 6)(0.5, 1.5, 2.5, 3.5, 4.5, 5.5)
        weakref.finalize(self, released.append, 1)


def a_view(dl, released):
    owner = Owner(released)
    return dl.from_pointer(ctypes.addressof(owner.values), (2, 3), "float32", owner=owner)


def churn(dl, rounds=300):
    """Exports made and dropped, consumed by NumPy and dropped unconsumed,
    with garbage collections between: what reuses a freed export."""
    scratch = []
    for i in range(rounds):
        t = a_view(dl, scratch)
        np.from_dlpack(t)
        capsule = t.__dlpack__(max_version=(1, 0)) if i % 2 else t.__dlpack__()
        del capsule, t
        if i % 50 == 0:
            gc.collect()
    gc.collect()


def struct_of(versioned):
    import dlpack_ctypes as ct
    return ct.DLManagedTensorVersioned if versioned else ct.DLManagedTensor


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_a_consumer_that_clears_the_destructor_owns_the_tensor(dl, versioned):
    """A pure-ctypes consumer takes the tensor as nanobind does: it clears
    the capsule's destructor and does not rename it, holds the managed
    tensor while other exports come and go, then calls its deleter."""
    released = []
    t = a_view(dl, released)
    capsule = t.__dlpack__(max_version=(1, 0)) if versioned else t.__dlpack__()
    address = _get_pointer(capsule, b"dltensor_versioned" if versioned else b"dltensor")
    assert _set_destructor(capsule, None) == 0
    del capsule, t
    churn(dl)
    m = struct_of(versioned).from_address(address)
    if versioned:
        assert m.version.major == dl.DLPACK_MAJOR_VERSION
    tensor = m.dl_tensor
    assert tensor.ndim == 2 and tuple(tensor.shape[i] for i in range(2)) == (2, 3)
    assert tuple(tensor.strides[i] for i in range(2)) == (3, 1)
    values = (ctypes.c_float * 6).from_address(tensor.data + tensor.byte_offset)
    assert list(values) == [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    assert released == [], "the owner was let go of while the consumer held the tensor"
    _Deleter(ctypes.cast(m.deleter, ctypes.c_void_p).value)(address)
    churn(dl, 20)
    assert released == [1], "the consumer's one deleter call releases the owner, once"


def nanobind_module():
    """The directory holding tests/nanobind's extension, built for its venv's
    Python (conformance/matrix.py's build), or a skip."""
    if not os.path.exists(matrix.python_of("dlpack_nanobind")) or shutil.which("g++") is None:
        if REQUIRED:
            pytest.fail("no .venv-libs (nanobind) or no g++: run scripts/deps.sh")
        pytest.skip("no .venv-libs (nanobind) or no g++")
    return matrix.build_nanobind()


# Runs in .venv-libs, where nanobind is: an nb::ndarray holds a dlpack_ctypes
# export while other exports are made and collected.
NANOBIND_HOLDS = r"""
import ctypes, gc, json, sys, weakref
import numpy as np
import dlpack_ctypes as dl
import dlpack_nanobind as nb

released = []

class Owner:
    def __init__(self):
        self.values = (ctypes.c_float * 6)(0.5, 1.5, 2.5, 3.5, 4.5, 5.5)
        weakref.finalize(self, released.append, 1)

owner = Owner()
t = dl.from_pointer(ctypes.addressof(owner.values), (2, 3), "float32", owner=owner)
del owner
held = nb.from_dlpack(t)  # nanobind clears the capsule's destructor, keeps the name
t.close()
scratch = []
for i in range(300):
    u = dl.from_pointer(ctypes.addressof((ctypes.c_float * 6)()), (6,), "float32")
    np.from_dlpack(u)
    capsule = u.__dlpack__(max_version=(1, 0)) if i % 2 else u.__dlpack__()
    del capsule, u
    if i % 50 == 0:
        gc.collect()
gc.collect()
seen = np.from_dlpack(held)
out = {"shape": list(seen.shape), "values": seen.ravel().tolist(), "early": len(released)}
del seen, held  # nanobind calls the deleter once
for i in range(20):
    np.from_dlpack(dl.from_pointer(ctypes.addressof((ctypes.c_float * 2)()), (2,), "float32"))
gc.collect()
out["released"] = len(released)
print(json.dumps(out))
"""


def test_a_nanobind_ndarray_holds_an_export_while_others_come_and_go():
    directory = nanobind_module()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([directory, GENERATED]))
    r = subprocess.run([matrix.python_of("dlpack_nanobind"), "-c", NANOBIND_HOLDS], env=env, capture_output=True,
                       text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["early"] == 0, "the owner was let go of while nanobind held the tensor"
    assert got["shape"] == [2, 3] and got["values"] == [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    assert got["released"] == 1, "nanobind's one deleter call releases the owner, once"
    assert "Exception ignored" not in r.stderr, r.stderr


def test_close_releases_at_once_whatever_exports_were_consumed(dl, producer):
    """README: t.close() and the producer's deleter runs exactly once, now,
    when every export of t is done: consumed by NumPy and deleted, dropped
    unconsumed, or taken by a consumer that cleared the destructor and has
    called the deleter. No garbage collection helps."""
    gc.disable()
    try:
        t = dl.from_dlpack(producer.capsule(flags=0))
        a = np.from_dlpack(t)
        del a
        capsule = t.__dlpack__(max_version=(1, 0))
        del capsule
        capsule = t.__dlpack__(max_version=(1, 0))
        address = _get_pointer(capsule, b"dltensor_versioned")
        _set_destructor(capsule, None)
        del capsule
        m = struct_of(True).from_address(address)
        _Deleter(ctypes.cast(m.deleter, ctypes.c_void_p).value)(address)
        a = np.from_dlpack(t)
        del a
        assert producer.deleted == 0
        t.close()
        assert producer.deleted == 1
    finally:
        gc.enable()


@pytest.mark.parametrize("module", ["dlpack_ctypes", "dlpack_cython"])
def test_the_kit_sees_the_deleter_the_tensor_names_called(tmp_path, module):
    """The conformance kit's deleter cases: dropping an unconsumed capsule
    calls the deleter its managed tensor names (the kit puts a counter
    there), so nothing warns deleter-field-unused."""
    if module == "dlpack_cython" and CYTHON_DIR is None:
        pytest.skip("dlpack_cython is not built")
    if shutil.which("go") is None:
        if REQUIRED:
            pytest.fail("go is not installed")
        pytest.skip("go is not installed")
    kit = matrix.make_kit(str(tmp_path))
    out = str(tmp_path / "results.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(matrix.pythonpath_for(module, CYTHON_DIR)))
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", module, "--case", "producer/deleter/",
                        "--json", out, "-q"], cwd=kit, env=env, capture_output=True, text=True, timeout=300,
                       check=False)
    with open(out) as f:
        results = json.load(f)
    assert len(results) >= 6, r.stdout + r.stderr
    bad = [f"{x['case']}: {x['verdict']}: {x['message']}" for x in results if x["verdict"] != "pass"]
    assert not bad, "\n".join(bad)
    assert r.returncode == 0, r.stdout + r.stderr
