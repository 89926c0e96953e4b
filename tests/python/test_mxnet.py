"""MXNet 1.9.1 (legacy capsules only) with NumPy 1.23.5, in their own venv
(.venv-mxnet, built by scripts/deps.sh), driving the stdlib-only ctypes
module both ways: the seed system DLPack was first written for."""
import os
import subprocess

import pytest

from harness import GENERATED, REQUIRED, ROOT

MXNET_PYTHON = os.path.join(ROOT, ".venv-mxnet", "bin", "python")

SCRIPT = r"""
import gc, sys
import numpy as np
import mxnet as mx
import dlpack_ctypes as dl

# MXNet -> dlgen: to_dlpack_for_write gives a legacy capsule, imported
# writable by default; writes through the view are MXNet's.
a = mx.nd.arange(6, dtype="float32").reshape((2, 3))
t = dl.from_dlpack(mx.nd.to_dlpack_for_write(a))
assert not t.readonly and t.shape == (2, 3) and t.strides == (3, 1), t
view = np.asarray(t)
view[0, 1] = 42
assert a.asnumpy()[0, 1] == 42, "MXNet sees the write"
a[1, 2] = 7
mx.nd.waitall()
assert view[1, 2] == 7, "and we see MXNet's"
r = dl.from_dlpack(mx.nd.to_dlpack_for_read(a), readonly=True)   # the explicit read-only import
assert r.readonly and not np.asarray(r).flags.writeable
del view, r
t.close()

# NumPy 1.x -> dlgen -> MXNet: NumPy 1.23 exports legacy capsules only; the
# tensor stays writable, so it may go on as a legacy capsule.
n = np.arange(4, dtype=np.float32)
base = sys.getrefcount(n)
t = dl.from_dlpack(n)
assert not t.readonly
m = mx.nd.from_dlpack(t.__dlpack__())
n[2] = 9
assert m.asnumpy()[2] == 9, "zero-copy NumPy -> dlgen -> MXNet"
m[1] = 5
mx.nd.waitall()
assert n[1] == 5, "MXNet writes NumPy's memory"
# Both deletion orders: the tensor first here, MXNet's array after.
t.close()
assert m.asnumpy()[2] == 9
del m
mx.nd.waitall()
gc.collect()
assert sys.getrefcount(n) == base, "every deleter ran"

# dlgen memory (a private copy) into MXNet, MXNet dropping it first.
c = dl.from_dlpack(np.arange(3, dtype=np.float64), copy=True)
m = mx.nd.from_dlpack(c.__dlpack__())
assert m.asnumpy().tolist() == [0.0, 1.0, 2.0]
del m
mx.nd.waitall()
gc.collect()
assert np.asarray(c).tolist() == [0.0, 1.0, 2.0]

for _ in range(1000):
    dl.from_dlpack(mx.nd.to_dlpack_for_write(a)).close()
gc.collect()
print("ok", mx.__version__, np.__version__)
"""


def test_mxnet_both_ways():
    if not os.path.exists(MXNET_PYTHON):
        if REQUIRED:
            pytest.fail(".venv-mxnet is missing (run scripts/deps.sh)")
        pytest.skip(".venv-mxnet is missing")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": GENERATED, "HOME": os.environ.get("HOME", "/tmp")}
    r = subprocess.run([MXNET_PYTHON, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok 1.9.1 1.23.5"), r.stdout
