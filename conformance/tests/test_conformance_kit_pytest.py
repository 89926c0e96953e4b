"""The conformance kit's pytest entry points where the kit is not installed
(a directory dlgen wrote, vendored): the plugin loaded by its module name,
and test_dlpack_conformance.py with its variables. tests/dist installs the
kit and runs the plugin from its entry point."""
import os
import subprocess
import sys

import pytest
from harness import ROOT

from harness import matrix  # noqa: E402

pytest.importorskip("numpy")

CASES = ["consumer/versioned/1-d", "major-version-0", "producer/exchange-api/contiguous"]


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return matrix.make_kit(str(tmp_path_factory.mktemp("kit")))


def outcomes(r):
    """-rA's outcome per case id (the last part of its node id)."""
    got = {}
    for line in r.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "XFAIL", "SKIPPED") and rest:
            if word == "SKIPPED":  # SKIPPED [1] path:line: case: reason
                rest = rest.split(": ", 1)[1]
            got[rest.split(" ")[0].rstrip(":").split("::")[-1].split("[")[-1].rstrip("]")] = word
    return got


def run_pytest(kit, *args, env=None):
    return subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *args],
                          check=False, cwd=kit, capture_output=True, text=True, env=dict(os.environ, **(env or {})))


def test_the_plugin_by_its_module_name(kit, tmp_path):
    xfail = tmp_path / "xfail.txt"
    xfail.write_text("numpy: consumer/corpus/major-version-0\n")
    cases = [a for c in CASES for a in ("--dlpack-case", c)]
    r = run_pytest(kit, "-p", "dlpack_conformance.pytest_plugin", "--dlpack-library", "numpy",
                   "--dlpack-xfail", str(xfail), *cases, "--ignore", "test_dlpack_conformance.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert outcomes(r) == {"consumer/versioned/1-d": "PASSED", "consumer/corpus/major-version-0": "XFAIL",
                           "producer/exchange-api/contiguous": "SKIPPED"}, r.stdout


def test_the_test_file_with_its_variables(kit):
    r = run_pytest(kit, "test_dlpack_conformance.py", "-k", "1-d or major-version-0",
                   env={"DLPACK_CONFORMANCE_LIBRARIES": "numpy"})
    got = {case: o for case, o in outcomes(r).items() if case.startswith("numpy:")}
    assert got["numpy:consumer/versioned/1-d"] == "PASSED", r.stdout
    assert got["numpy:consumer/corpus/major-version-0"] == "FAILED", r.stdout
    assert "reproducer:\nimport numpy as xp" in r.stdout
    assert r.returncode == 1


def test_a_library_or_case_the_kit_cannot_run_is_a_collection_error(kit, tmp_path):
    r = run_pytest(kit, "-p", "dlpack_conformance.pytest_plugin", "--dlpack-library", "numpy",
                   "--dlpack-case", "no-such-case", "--ignore", "test_dlpack_conformance.py")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no case of numpy matches --dlpack-case no-such-case" in r.stdout
    r = run_pytest(kit, "-p", "dlpack_conformance.pytest_plugin", "--dlpack-library", str(tmp_path / "none.py"),
                   "--ignore", "test_dlpack_conformance.py")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no adapter file" in r.stdout
    r = run_pytest(kit, "-p", "dlpack_conformance.pytest_plugin", "--dlpack-library", "no_such_library_here",
                   "--dlpack-case", "consumer/versioned/1-d", "--ignore", "test_dlpack_conformance.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cannot run against no_such_library_here" in r.stdout


def test_malformed_crashes_fail_unless_reported(kit):
    """NumPy crashes on a NULL shape (a malformed tensor): the test fails by
    default and passes with a DLPackWarning under --dlpack-malformed-crashes
    report, as the command's --malformed-crashes."""
    args = ["-p", "dlpack_conformance.pytest_plugin", "--dlpack-library", "numpy",
            "--dlpack-case", "consumer/corpus/null-shape-one-dimension", "--ignore", "test_dlpack_conformance.py"]
    r = run_pytest(kit, *args)
    assert outcomes(r) == {"consumer/corpus/null-shape-one-dimension": "FAILED"}, r.stdout
    assert "crash-malformed" in r.stdout or "malformed" in r.stdout, r.stdout
    r = run_pytest(kit, *args, "--dlpack-malformed-crashes", "report")
    assert r.returncode == 0, r.stdout + r.stderr
    assert outcomes(r) == {"consumer/corpus/null-shape-one-dimension": "PASSED"}, r.stdout
    assert "DLPackWarning" in r.stdout, r.stdout
