"""The generated Python is code people read and vendor: for every release it
passes ruff with ruff's default rules and a 100-column limit, and so do the
hand-written protocol sources it is made of (with their ruff.toml: the names
the generated declarations give them aside). The stubs of the default build
match both modules (mypy's stubtest; test_releases.py checks every release)."""
import os
import subprocess

import pytest

from conftest import CYTHON_DIR, GENERATED, MODULES, RELEASES, ROOT, stubtest, tool

RUFF_OUTPUT = ["check", "--no-cache", "--isolated", "--line-length", "100", "--extend-select", "E501"]


def ruff(*args, cwd=ROOT):
    r = subprocess.run(tool("ruff") + list(args), cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("package", [None, "mylib._vendor.python"])
@pytest.mark.parametrize("release", RELEASES)
def test_generated_python_passes_ruff(dlgen, tmp_path, release, package):
    vendored = ["-python-package", package] if package else []
    subprocess.run([dlgen, "-lang", "python", "-dlpack-version", release, *vendored, "-out", str(tmp_path)],
                   check=True)
    pydir = tmp_path / "python"
    files = sorted(str(p) for p in pydir.iterdir() if p.suffix in (".py", ".pyi"))
    assert files
    status, report = ruff(*RUFF_OUTPUT, *files)
    assert status == 0, report


def test_protocol_sources_pass_ruff():
    status, report = ruff("check", "--no-cache", os.path.join("backend", "python", "protocol"))
    assert status == 0, report


def test_stubs_match_the_modules():
    assert stubtest(GENERATED, "dlpack_ctypes") == ""
    if "dlpack_cython" in MODULES:
        assert stubtest(CYTHON_DIR, "dlpack_cython") == ""
