"""The kit's cases under pytest: one test per case and library, each run
isolated as `python -m dlpack_conformance` runs it (a crash fails that test
only). Name the libraries in DLPACK_CONFORMANCE_LIBRARIES (comma-separated
modules or adapter files), and optionally an xfail file in
DLPACK_CONFORMANCE_XFAIL:

    DLPACK_CONFORMANCE_LIBRARIES=mylib python -m pytest test_dlpack_conformance.py

Warnings (requirements the specification only recommends) pass with a
warning; skips skip; expected failures xfail."""

import atexit
import os
import warnings

import pytest

from dlpack_conformance import runner

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
    r = runner.apply_xfail([session.run(case)], XFAIL, library)[0]
    verdict, message = r["verdict"], r["message"]
    if r["spec"]:
        message += f"\nrequires: {r['requirement']}\nsource: {r['source']} [{r['strength']}]"
    if verdict == "skip":
        pytest.skip(message)
    if verdict == "xfail":
        pytest.xfail(message)
    if verdict == "warn":
        warnings.warn(f"{case.id}: {message}", stacklevel=1)
    if verdict == "error":
        pytest.fail(
            f"the kit could not judge this case (the kit's fault, not the library's): {message}\n"
            f"{r['traceback']}\nreproducer:\n{r['reproducer']}",
            pytrace=False,
        )
    if verdict in ("fail", "crash"):
        pytest.fail(f"{verdict}: {message}\nreproducer:\n{r['reproducer']}", pytrace=False)


def test_libraries_are_named():
    if not LIBRARIES:
        pytest.skip("name the libraries to test in DLPACK_CONFORMANCE_LIBRARIES")
