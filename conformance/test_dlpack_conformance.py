"""The kit's cases under pytest: one test per case and library, each run
isolated as `python -m dlpack_conformance` runs it (a crash fails that test
only). Name the libraries in DLPACK_CONFORMANCE_LIBRARIES (comma-separated
modules or adapter files), and optionally an xfail file in
DLPACK_CONFORMANCE_XFAIL:

    DLPACK_CONFORMANCE_LIBRARIES=mylib python -m pytest test_dlpack_conformance.py

Warnings (requirements the specification only recommends) pass with a
warning; skips skip; expected failures xfail. The kit's pytest plugin does
the same with options instead of variables (dlpack_conformance/pytest_plugin.py):

    pytest -p dlpack_conformance --dlpack-library mylib"""

import atexit
import os

import pytest

from dlpack_conformance import runner
from dlpack_conformance.pytest_plugin import judge

LIBRARIES = [
    name.strip()
    for name in os.environ.get("DLPACK_CONFORMANCE_LIBRARIES", "").split(",")
    if name.strip()
]
XFAIL = (
    runner.read_xfail(os.environ["DLPACK_CONFORMANCE_XFAIL"])
    if os.environ.get("DLPACK_CONFORMANCE_XFAIL")
    else []
)
_SESSIONS = {}


@atexit.register
def _close_sessions():
    for session in _SESSIONS.values():
        session.close()


def _params():
    for library in LIBRARIES:
        _, cases = runner.select_cases(library)
        for case in cases:
            yield pytest.param(library, case, id=f"{library}:{case.id}")


@pytest.mark.parametrize(("library", "case"), list(_params()))
def test_case(library, case):
    session = _SESSIONS.get(library)
    if session is None:
        session = _SESSIONS[library] = runner.Session(library)
    judge(runner.apply_xfail([session.run(case)], XFAIL, library)[0])


def test_libraries_are_named():
    if not LIBRARIES:
        pytest.skip("name the libraries to test in DLPACK_CONFORMANCE_LIBRARIES")
