"""Optional Python modules under scripts/test.sh's switch.

module(name) imports name or skips the test, as pytest.importorskip does;
under DLGEN_REQUIRE_TOOLS=1 (CI) a missing module fails the test instead,
unless the venv is known to lack it: DLGEN_ABSENT_MODULES lists those
(comma-separated; scripts/test.sh's runs on other Pythons name tvm_ffi).
"""
import importlib
import os

import pytest

REQUIRED = os.environ.get("DLGEN_REQUIRE_TOOLS") == "1"
ABSENT = frozenset(filter(None, os.environ.get("DLGEN_ABSENT_MODULES", "").split(",")))


def module(name):
    """The module called name, or a skip (a failure under DLGEN_REQUIRE_TOOLS=1)."""
    if not REQUIRED or name.partition(".")[0] in ABSENT:
        return pytest.importorskip(name)
    try:
        return importlib.import_module(name)
    except ImportError as e:
        pytest.fail(f"{name} is not installed (DLGEN_REQUIRE_TOOLS=1; run scripts/deps.sh): {e}")
