"""The list of skips each pytest run ends with: on a machine with less
installed (make check) a skip CI would fail on is information, marked as
one CI runs; under DLGEN_REQUIRE_TOOLS=1 (CI) it fails the run."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_skipping(tmp_path, required):
    (tmp_path / "test_lacking.py").write_text(
        'import pytest\n\n\ndef test_needs_a_tool():\n    pytest.skip("a tool is not installed")\n')
    env = dict(os.environ, PYTHONPATH=HERE, DLGEN_CYTHON_DIR=str(tmp_path))  # conftest builds nothing
    env.pop("DLGEN_REQUIRE_TOOLS", None)
    if required:
        env["DLGEN_REQUIRE_TOOLS"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                           "test_lacking.py"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)


def test_a_skip_ci_must_not_take_is_information_outside_ci(tmp_path):
    r = run_skipping(tmp_path, required=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_lacking.py::test_needs_a_tool: a tool is not installed  (CI runs this one)\n" in r.stdout
    assert "1 tests skipped for what this machine lacks; CI runs them" in r.stdout
    assert "<-" not in r.stdout and "FAIL" not in r.stdout


def test_a_skip_ci_must_not_take_fails_ci(tmp_path):
    r = run_skipping(tmp_path, required=True)
    assert r.returncode != 0, r.stdout + r.stderr
    assert ("test_lacking.py::test_needs_a_tool: a tool is not installed  "
            "<- not in tests/expected-skips.txt: a check CI must run did not\n") in r.stdout
    assert "FAIL: 1 tests skipped that CI must run" in r.stdout
