"""Two packages vendor dlgen's Python output, of different releases, and
live in one process: each builds its copy as a subpackage (dlgen
-python-package, cythonize run from the project root), has an extension
module of its own that cimports its copy by the full dotted name, and gets
its own copy at run time; no copy claims a top-level name."""
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import REQUIRED, cython_warnings

VENDORS = {"liba": "1.2", "libb": "1.3"}

EXTENSION = """# cython: language_level=3
cimport {pkg}._vendor.python.dlpack_cython as dl
from {pkg}._vendor.python.dlpack cimport DLPACK_MINOR_VERSION, DLTensor
from {pkg}._vendor.python.dlpack_cython cimport Tensor


def facts(x):
    cdef Tensor t = dl.tensor_from_managed(dl.managed_from_object(x))
    cdef DLTensor* d = &t.dltensor
    return DLPACK_MINOR_VERSION, type(dl.exchange_api(NULL, NULL)).__name__, type(t), d.ndim
"""

CHECK = """
import importlib, importlib.util, sys
import numpy as np
import liba.ext, libb.ext
from liba._vendor.python import dlpack_ctypes as cta, dlpack_cython as cya
from libb._vendor.python import dlpack_ctypes as ctb, dlpack_cython as cyb

a = np.arange(6.0).reshape(2, 3)
# Each extension got its own release's copy: v1.2 publishes the exchange API
# as an integer, v1.3 as a capsule.
assert liba.ext.facts(a) == (2, "int", cya.Tensor, 2), liba.ext.facts(a)
assert libb.ext.facts(a) == (3, "PyCapsule", cyb.Tensor, 2), libb.ext.facts(a)
assert cya.Tensor is not cyb.Tensor
assert (cya.DLPACK_VERSION_STRING, cyb.DLPACK_VERSION_STRING) == ("1.2", "1.3")
assert cya.Tensor.__module__ == "liba._vendor.python.dlpack_cython"
assert (cta.DLPACK_VERSION_STRING, ctb.DLPACK_VERSION_STRING) == ("1.2", "1.3")
# The copies exchange with each other and with NumPy, both ways.
t = cyb.from_dlpack(cta.from_dlpack(cya.from_dlpack(ctb.from_dlpack(a))))
np.from_dlpack(t)[1, 2] = 42
assert a[1, 2] == 42
# Nothing top-level: a plain import finds none of them.
for name in ("dlpack_cython", "dlpack_ctypes", "dlpack"):
    assert importlib.util.find_spec(name) is None, name
    assert name not in sys.modules, name
print("ok")
"""


def need_tools():
    for tool in ("gcc",):
        if shutil.which(tool) is None:
            if REQUIRED:
                pytest.fail(tool + " is not installed")
            pytest.skip(tool + " is not installed")
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "cythonize")):
        if REQUIRED:
            pytest.fail("Cython is not installed")
        pytest.skip("Cython is not installed")


def vendor(dlgen, root, pkg, release):
    """pkg's project at root: dlgen's output as pkg._vendor.python, built
    from the root, and an extension module pkg.ext cimporting it."""
    vendored = root / pkg / "_vendor"
    vendored.mkdir(parents=True)
    for d in (root / pkg, vendored):
        (d / "__init__.py").write_text("")
    subprocess.run([dlgen, "-lang", "python", "-dlpack-version", release, "-python-package", pkg + "._vendor.python",
                    "-out", str(vendored)], check=True, capture_output=True, text=True)
    (root / pkg / "ext.pyx").write_text(EXTENSION.format(pkg=pkg))
    cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
    # The environment of a user's build: none of this checkout's modules on the path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([cythonize, "-i", f"{pkg}/_vendor/python/dlpack_cython.pyx", f"{pkg}/ext.pyx"], cwd=root,
                       capture_output=True, text=True, env=env)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert not cython_warnings(log), log


def test_two_vendored_releases_in_one_process(dlgen, tmp_path):
    need_tools()
    roots = {pkg: tmp_path / pkg for pkg in VENDORS}
    with ThreadPoolExecutor(len(VENDORS)) as pool:
        for f in [pool.submit(vendor, dlgen, roots[pkg], pkg, release) for pkg, release in VENDORS.items()]:
            f.result()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(str(r) for r in roots.values())
    r = subprocess.run([sys.executable, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
