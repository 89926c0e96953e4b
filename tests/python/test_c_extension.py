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

from conftest import REQUIRED, ROOT

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
    with pytest.raises(BufferError, match="no stream"):
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
