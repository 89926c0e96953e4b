"""The worked example under examples/framework: it builds as its README says
(its vendored dlgen output written by the README's command, libfill with gcc,
the Cython modules with cythonize, no warnings), and its own tests pass."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from harness import REQUIRED, ROOT, cython_warnings

EXAMPLE = os.path.join(ROOT, "examples", "framework")


def need(tool):
    if shutil.which(tool) is None:
        if REQUIRED:
            pytest.fail(tool + " is not installed")
        pytest.skip(tool + " is not installed")


def readme_command(prefix):
    """The command of the example's README that starts with prefix."""
    with open(os.path.join(EXAMPLE, "README.md")) as f:
        for line in f:
            if line.startswith(prefix):
                return line.split()
    raise AssertionError("examples/framework/README.md has no command " + prefix)


def test_example_framework(tmp_path, dlgen):
    need("gcc")
    build = tmp_path / "framework"
    # A vendored copy left in the checkout by an earlier run stays behind.
    shutil.copytree(EXAMPLE, build, ignore=lambda d, names: ["python"] if os.path.basename(d) == "_vendor" else [])
    command = readme_command("dlgen -lang python")
    subprocess.run([dlgen, *command[1:]], cwd=build, check=True)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-shared", "-fPIC",
                    "-o", "fillarray/libfill.so", "csrc/fill.c"], cwd=build, check=True)
    cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
    # As a user builds it: from the project's root, nothing of this checkout on the path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([cythonize, "-i", "fillarray/_vendor/python/dlpack_cython.pyx", "fillarray/cyarray.pyx"],
                       cwd=build, capture_output=True, text=True, env=env)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert not cython_warnings(log), log
    env["PYTHONPATH"] = str(build)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_framework.py"],
                       cwd=build, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-4000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-2000:]


def test_line_counts_the_readme_quotes_are_true():
    """Each "# --- DLPack ...: N lines ---" marker counts the code lines
    (neither blank nor comment) up to the next marker."""
    counted = {}
    for name in ("fillarray/pyarray.py", "fillarray/cyarray.pyx"):
        section = None
        with open(os.path.join(EXAMPLE, name)) as f:
            for line in f:
                marker = re.match(r"\s*# --- ([^:]*)(?:: (\d+) lines)? ---$", line)  # or "end of DLPack"
                if marker:
                    section = (name, marker.group(1), int(marker.group(2) or 0)) if marker.group(2) else None
                    counted[section] = 0
                elif section and line.strip() and not line.strip().startswith("#"):
                    counted[section] += 1
    counted.pop(None, None)
    assert len(counted) == 5
    for (name, what, claimed), lines in counted.items():
        assert lines == claimed, (name, what)
    with open(os.path.join(EXAMPLE, "README.md")) as f:
        readme = f.read()
    for (name, what, claimed) in counted:
        assert "| %s | %s | %d |" % (name, what, claimed) in readme, (name, what)
