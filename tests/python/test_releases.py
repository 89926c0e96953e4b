"""Every release's Python output, not only the default one: dlgen generates
it, the ctypes module imports (its layout check passes) and, from DLPack 1.0,
both modules exchange with NumPy; the Cython module is built for each, and
the stubs of both match the modules (mypy's stubtest)."""
import os
import subprocess
import sys

import pytest

from harness import RELEASES, REQUIRED, cython_warnings, stubtest

SMOKE = r"""
import sys
import numpy as np
import dlpack_ctypes as ct
assert ct.DLPACK_VERSION_STRING == sys.argv[1]
if hasattr(ct.DLDataTypeCode, "kDLBcomplex"):  # upstream main: complex of two bfloat16
    assert ct.DataType(18, 32, 1) == ct.DataType(ct.DLDataTypeCode.kDLBcomplex, 32, 1)
    assert "bcomplex32" in ct.DTYPE_NAMES
modules = [ct]
if hasattr(ct, "from_dlpack"):
    if len(sys.argv) > 2:
        import dlpack_cython
        modules.append(dlpack_cython)
    for dl in modules:
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        t = dl.from_dlpack(a)
        np.from_dlpack(t)[1, 1] = 9
        assert a[1, 1] == 9, dl.__name__
        assert dl.from_dlpack(t).shape == (2, 3)  # one of ours, through the exchange API where it exists
    if len(sys.argv) > 2 and (ct.DLPACK_MAJOR_VERSION, ct.DLPACK_MINOR_VERSION) >= (1, 2):
        api = [v for k, v in vars(type(t)).items() if "exchange_api" in k]
        assert len(api) == 1, api
        assert isinstance(api[0], int) == (sys.argv[1] == "1.2"), "1.2 publishes an address, 1.3 a capsule"
print("ok", [m.__name__ for m in modules])
"""


@pytest.mark.parametrize("release", RELEASES)
def test_release(dlgen, tmp_path, release):
    subprocess.run([dlgen, "-lang", "python", "-dlpack-version", release, "-out", str(tmp_path)], check=True)
    pydir = tmp_path / "python"
    args = [sys.executable, "-c", SMOKE, release]
    if (pydir / "dlpack_cython.pyx").exists():
        cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
        if os.path.exists(cythonize):
            r = subprocess.run([cythonize, "-i", "dlpack_cython.pyx"], cwd=pydir, capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr
            assert not cython_warnings(r.stdout + r.stderr)
            args.append("cython")
        elif REQUIRED:
            pytest.fail("Cython is not installed")
    r = subprocess.run(args, cwd=pydir, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok"), r.stdout
    modules = ["dlpack_ctypes"] + (["dlpack_cython"] if "cython" in args else [])
    assert stubtest(str(pydir), *modules) == ""


PRE_1_0 = r"""
import dlpack_ctypes as ct
assert not hasattr(ct, "from_dlpack")
for name in ("from_dlpack", "Tensor", "bogus"):
    try:
        getattr(ct, name)
    except AttributeError as e:
        print(e)
"""


def test_a_release_before_1_0_says_why_it_has_no_protocol(dlgen, tmp_path):
    """The ctypes module of DLPack 0.8 declares the types only; asked for
    from_dlpack it says so and what to generate, not a bare AttributeError."""
    subprocess.run([dlgen, "-lang", "python", "-dlpack-version", "0.8", "-out", str(tmp_path)], check=True)
    r = subprocess.run([sys.executable, "-c", PRE_1_0], cwd=tmp_path / "python", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"module 'dlpack_ctypes' has no attribute '{name}': the modules of DLPack releases before 1.0 declare its "
        f"types only; {name} and the rest of the Python protocol come with DLPack 1.0: dlgen -lang python "
        "-dlpack-version 1.0 (or later)" for name in ("from_dlpack", "Tensor")
    ] + ["module 'dlpack_ctypes' has no attribute 'bogus'"], r.stdout
