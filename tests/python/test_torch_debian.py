"""PyTorch CPU from Debian's python3-torch (1.13, legacy capsules only),
driving the stdlib-only ctypes module under Debian's own /usr/bin/python3."""
import os
import subprocess

import pytest

from harness import GENERATED, REQUIRED

DEBIAN_PYTHON = "/usr/bin/python3"

SCRIPT = r"""
import gc, sys
import numpy as np
import torch
import dlpack_ctypes as dl

x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
t = dl.from_dlpack(x)                       # torch 1.13: no max_version, so a legacy capsule
assert t.shape == (2, 3) and t.strides == (3, 1), t
assert not t.readonly, "legacy imports are writable, as torch itself imports them"
x[0, 0] = 5
assert np.asarray(t)[0, 0] == 5, "zero-copy from torch"
np.asarray(t)[0, 1] = 6
assert x[0, 1] == 6, "and torch sees our writes"

tt = dl.from_dlpack(x.t())                  # a transposed view keeps its strides
assert tt.shape == (3, 2) and tt.strides == (1, 3), tt
assert np.array_equal(np.asarray(tt), x.t().numpy())

c = dl.from_dlpack(x, copy=True)            # a private, writable copy...
assert c.copied and not c.readonly
y = torch.from_dlpack(c)                    # ...that torch takes zero-copy
y[1, 1] = 9
assert np.asarray(c)[1, 1] == 9 and x[1, 1] == 4

for dtype in (torch.int8, torch.int32, torch.int64, torch.uint8, torch.float16, torch.float64, torch.complex64):  # 1.13 cannot export bool
    v = torch.ones(4, dtype=dtype)
    back = torch.from_dlpack(dl.from_dlpack(v, copy=True))
    assert back.dtype == dtype and torch.equal(back, v), dtype

base = sys.getrefcount(x)
for _ in range(2000):
    u = dl.from_dlpack(x)
    u.close()
gc.collect()
assert sys.getrefcount(x) == base, "every torch deleter ran"
print("ok", torch.__version__)
"""


def test_torch_from_debian():
    ok = subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0 \
        if os.path.exists(DEBIAN_PYTHON) else False
    if not ok:
        if REQUIRED:
            pytest.fail("Debian's python3-torch is not installed (run scripts/deps.sh)")
        pytest.skip("Debian's python3-torch is not installed")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": GENERATED, "HOME": os.environ.get("HOME", "/tmp")}
    r = subprocess.run([DEBIAN_PYTHON, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok 1."), r.stdout
